//! mcplite-engine: the protocol engine of the mcplite R package.
//!
//! Pure Rust, no R inside. It frames stdio lines, validates JSON-RPC
//! envelopes, dispatches legacy (2024-11-05, 2025-06-18, 2025-11-25) and
//! modern (2026-07-28) MCP requests, projects results per protocol version
//! and writes responses. Tools are run by a [`host::Host`], which the R bridge
//! implements with R closures and the tests implement with fakes.

pub mod client;
pub mod host;
pub mod json;
pub mod message;
pub mod numfmt;
pub mod projection;
pub mod server;
pub mod telemetry;
pub mod transport;

pub use host::{Block, CallContext, Content, Host, ToolFailure, ToolResult, ToolSpec};
pub use projection::Version;
pub use server::{Server, ServerInfo};
