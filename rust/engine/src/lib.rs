//! mcplite-engine: the protocol engine of the mcplite R package.
//!
//! Pure Rust, no R inside. It frames stdio lines, validates JSON-RPC
//! envelopes, dispatches legacy (initialize handshake) and modern
//! (stateless, per-request `_meta`) MCP requests, projects results per
//! protocol version and writes responses. Tools are run by a [`host::Host`],
//! which the R bridge implements with R closures and the tests implement
//! with fakes.
//!
//! # Modules
//!
//! * [`message`]: one line's bytes to a classified message (strict JSON,
//!   envelope rules, the engine's limits).
//! * [`server`]: the dispatcher. [`Server`] holds the shared state
//!   (registry, prepared listings, identity, span recorder);
//!   [`Server::handle`] takes one message and the caller's [`LegacyState`]
//!   and returns a [`Reply`] that ends the message's span when it is written
//!   or dropped. It knows nothing of stdio.
//! * [`codes`]: the JSON-RPC and MCP error codes, each spelled once.
//! * [`version`]: the protocol version registry: which versions exist, their
//!   order, what each can carry, the modern `_meta` keys, and how a
//!   message's era is read.
//! * [`projection`]: every envelope and result whose shape differs by
//!   version. Adding a protocol version touches only `version` and
//!   `projection`.
//! * [`transport`]: the stdio transport (framer, reader hand-off, serve
//!   loop; platform pieces in one private module).
//! * [`host`]: the boundary to whatever runs the tools.
//! * `output_schema`: structured content checked against the tool's
//!   output schema before it is sent.
//! * [`progress`]: calls that take time: progress notifications (tool
//!   reports and heartbeats) and cancellation, for every transport.
//! * [`json`], [`numfmt`]: JSON text writing shared with the R bridge.
//! * [`telemetry`]: OpenTelemetry spans per message.
//! * [`live`]: live R sessions (`mcp_session()`): the per-user socket
//!   directory, the session's listener and the server's connection (Unix).
//! * [`subscriptions`]: resources that tools change while the server runs,
//!   and the notifications their subscribers get (legacy sessions and
//!   2026-07-28 `subscriptions/listen` streams).
//! * [`workers`]: tool calls in worker processes (several at once, crash
//!   isolated): the pool, its queue, the frames, the worker side.
//!
//! # One request, stdin to stdout
//!
//! [`transport::Reader`] reads bytes and [`transport::Framer`] cuts them
//! into lines; [`transport::serve`] hands each line to [`Server::handle`],
//! which classifies it ([`message::parse_line`]), starts the span, reads the
//! era ([`version::era_of`]), routes it (legacy session or modern claim),
//! calls [`Host::call_tool`] for `tools/call`, and writes the answer with
//! [`projection`]; the serve loop writes the [`Reply`] as one line
//! ([`Reply::write_line`]), which ends the span.

pub mod ask_state;
pub mod asks;
pub mod catalog;
#[cfg(feature = "net")]
pub mod client;
pub mod codes;
pub mod completion;
pub mod confine;
pub mod host;
mod input_schema;
pub mod json;
#[cfg(unix)]
pub mod live;
pub mod logging;
pub mod message;
pub mod numfmt;
mod output_schema;
pub mod pagination;
pub mod private_files;
pub mod progress;
pub mod projection;
pub mod promotion;
pub mod prompts;
pub mod request_state;
pub mod resources;
mod schema_words;
pub mod server;
pub mod signals;
pub mod subscriptions;
pub mod tasks;
pub mod telemetry;
pub mod transport;
pub mod uri_template;
pub mod version;
pub mod workers;

pub use host::{Block, CallContext, CallOutcome, Content, Host, ToolFailure, ToolResult, ToolSpec, WorkerRun};
pub use server::{LegacyState, Reply, Server, ServerInfo};
pub use version::Version;
