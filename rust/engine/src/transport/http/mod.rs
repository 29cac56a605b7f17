//! The Streamable HTTP transport (RULES H1–H5): one MCP endpoint (POST),
//! both protocol eras, on the same dispatcher as stdio
//! ([`Server::handle_parsed`]).
//!
//! HTTP is parsed by hyper 1 (HTTP/1.1, the most widely used Rust HTTP
//! implementation) on a small tokio runtime whose threads block every
//! signal. hyper enforces the header-size limit and the header read timeout
//! (slow clients), a semaphore bounds concurrent connections (a connection
//! over the limit is answered `503` with `Retry-After` and closed), and on
//! stop every open connection finishes its request in progress (one still
//! silent gets a moment to send its first) and the listen queue is served,
//! not reset, before the listener closes (`runtime`, RULES H4.2).
//!
//! # One request, from the socket to the answer
//!
//! 1. `runtime`: the accept loop takes a connection when one of the
//!    [`HttpOptions::max_connections`] places is free (or a place among those
//!    answered `503` by `too_busy`), and hyper reads its requests.
//! 2. `request`: `traced_request` opens the request's HTTP server span when
//!    telemetry is on (RULES T10); `handle_request` runs `preflight` on the
//!    request line and headers alone: `guard` (Host, Origin), `tokens` (the
//!    bearer token and its name, RULES H6), `/health`, the path, the HTTP
//!    method (`DELETE` of a legacy session), `Content-Type` and `Accept`. An answer given there is sent after the
//!    rest of the body is read (`after_draining`).
//! 3. The body is read up to [`HttpOptions::max_body`] and parsed as one
//!    JSON-RPC message ([`crate::message::parse_line`]).
//! 4. `era`: an `MCP-Protocol-Version` header naming no known version is
//!    answered with the unsupported-version error; otherwise the request is
//!    modern when its body claims a version ([`crate::version::era_of`]) or
//!    its header names the modern version.
//! 5. Modern: `mirrored` checks the mirrored headers; legacy: `sessions`
//!    finds the session named by `Mcp-Session-Id` (or mints one for
//!    `initialize`).
//! 6. A request that runs no tool is answered on this HTTP thread with
//!    [`Server::handle_parsed`]; `tools/call` goes through `queue` to the
//!    serving thread (R's), and its answer comes back as JSON or, with a
//!    progress token and a client that accepts it, as an `sse` stream.
//! 7. `response` turns the dispatcher's answer into the HTTP response
//!    (status by error code, legacy and modern differences).
//! 8. `access`: the request's line in the access log (RULES H7), from the
//!    `Facts` noted along the way and the `Reason` of a refusal, handed to
//!    the log's own writer thread.
//!
//! # Who runs what
//!
//! Requests that need no tool (`initialize`, `ping`, `server/discover`,
//! `tools/list`, notifications) are answered on the HTTP threads, so they
//! never wait behind a running tool. `tools/call` requests go over a channel
//! to the thread that called [`HttpServer::run`] (R's main thread in
//! production), which runs them one at a time in arrival order. A queued
//! call whose client has gone away is skipped. After a call that thread
//! looks for the next one for up to `JOB_SPIN` (500 µs) before it parks.
//! With worker processes (RULES section 14, [`HttpServer::bind_with_pool`])
//! the pool's drivers take the calls from that channel instead, as many at
//! once as there are workers, and a call the pool's bounded queue has no
//! room for is answered `503` at once.
//!
//! # Eras on one endpoint
//!
//! A request is modern when its body claims a version in `params._meta`
//! (RULES M1.1) or its `MCP-Protocol-Version` header names the modern
//! version. Modern requests need the mirrored headers (`MCP-Protocol-Version`
//! equal to the body's claim, `Mcp-Method` equal to `method`, `Mcp-Name`
//! equal to the tool name of `tools/call`, plain or `=?base64?…?=`): a
//! missing or different one is `400` with `-32020`. `Mcp-Session-Id` and
//! `Last-Event-ID` are ignored on modern requests. An unknown
//! `MCP-Protocol-Version` is `400` with the unsupported-version error
//! listing the supported versions; an unknown method is `404` with `-32601`.
//!
//! Legacy requests (2025-03-26 … 2025-11-25; an absent
//! `MCP-Protocol-Version` means [`crate::version::HTTP_HEADERLESS`]) use
//! sessions: `initialize` without a session id mints one (32 hex characters
//! from the OS random source, after `<replica>.` when
//! [`HttpOptions::replica`] is set, so a load balancer can route on it) and
//! returns it in `MCP-Session-Id`; every later request must carry it (`400`
//! without, `404` when unknown, ended or expired); `DELETE` with it ends the
//! session. An unknown method is `200` with `-32601` here, since a legacy
//! client reads `404` as the end of its session. Sessions are bounded in
//! number (the least recently used is dropped when full) and expire when
//! idle. `GET` is `405`, except with `Last-Event-ID` to resume a stream
//! (below) and, on a server with resources, a session's stream of
//! notifications (`listen`, RULES U3.1).
//!
//! # Notifications (RULES U3)
//!
//! A tool may change the server's resources. A legacy session hears what it
//! subscribed to on its `GET` stream; a 2026-07-28 `subscriptions/listen`
//! request is answered with a stream that starts with its acknowledgment,
//! lasts until the client closes it and, when the server stops, ends with
//! the request's response (`listen`).
//!
//! # Progress and cancellation (RULES C6)
//!
//! A `tools/call` that carries a valid `_meta.progressToken` from a client
//! that accepts `text/event-stream` is answered as an SSE stream
//! (`X-Accel-Buffering: no` for proxies): `notifications/progress` events
//! while the tool runs (the engine's heartbeats and the tool's reports, from
//! the call's [`crate::progress::Progress`]), then the response event, then
//! the stream ends. Other calls are answered with `application/json`. Each
//! call is scoped to its HTTP exchange (modern) or its session (legacy) in
//! the [`Inflight`]: a modern client that closes the connection of a running
//! call cancels it (a queued one is skipped), and a legacy client's
//! `notifications/cancelled` cancels a call of its own session only
//! (running or queued). A cancelled call gets no JSON-RPC response: its
//! stream ends without one, or a JSON exchange gets `202` with no body.
//!
//! # Resumable streams, SSE polling (RULES H8)
//!
//! With [`HttpOptions::stream_hold`], a 2025-11-25 session's call from a
//! client that accepts SSE is resumable (`resume`): its stream's events go
//! to a log with ids, a connection is held at most the hold time (then
//! `retry` and the connection closes), and `GET` with `Mcp-Session-Id` and
//! `Last-Event-ID` reads the rest; a call that would have been JSON and is
//! not answered within the hold time becomes such a stream.
//!
//! # Security
//!
//! `Host` must be a loopback name or the bound address when bound to
//! loopback (DNS rebinding), or one of the configured hosts; an `Origin`
//! that is present must be a loopback origin or a configured one (`403`
//! otherwise). With a token or a tokens file, every request to the endpoint
//! needs `Authorization: Bearer <token>` (compared in constant time; `401`
//! with `WWW-Authenticate: Bearer` otherwise, saying whether the token was
//! missing or wrong); `GET /health` stays open. A token's tool calls may be
//! limited per minute (`429` with `Retry-After`). Binding
//! a non-loopback address without a token is refused unless
//! [`HttpOptions::allow_public_without_token`] is set. Bodies over
//! [`HttpOptions::max_body`] are `413` (a declared length is refused before
//! reading), a wrong `Content-Type` `415`, an `Accept` without
//! `application/json` `406`, invalid JSON `400` with `-32700`.

use std::sync::Arc;

use crate::progress::Inflight;
use crate::server::Server;

mod access;
mod cancel;
mod era;
mod guard;
mod listen;
mod mirrored;
mod options;
mod promote;
mod queue;
mod request;
mod response;
mod resume;
mod runtime;
mod sessions;
mod sse;
mod tokens;

pub use access::LogFormat;
pub use options::{HttpError, HttpOptions};
pub use runtime::{HttpServer, Stopped};
pub use tokens::{check_token, MIN_TOKEN_LEN};

/// What every HTTP thread reads: the dispatcher, the endpoint and its
/// checks, the legacy sessions and the queue of tool calls.
struct Shared {
    server: Arc<Server>,
    /// Path of the MCP endpoint.
    path: String,
    /// Largest request body in bytes.
    max_body: usize,
    guard: guard::Guard,
    /// The accepted tokens (RULES H6).
    tokens: tokens::Tokens,
    limits: tokens::RateLimits,
    access_log: access::AccessLog,
    trusted_proxies: Vec<std::net::IpAddr>,
    sessions: sessions::Sessions,
    /// The logs of resumable streams (RULES H8).
    streams: resume::Streams,
    /// Streams of notifications (RULES U3).
    listens: listen::Listens,
    calls: queue::Calls,
}

impl Shared {
    /// The running call (progress, cancellation).
    fn inflight(&self) -> &Arc<Inflight> {
        self.calls.inflight()
    }
}
