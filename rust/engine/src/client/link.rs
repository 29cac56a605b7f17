//! The transport under a [`Connection`](super::Connection): the [`Link`] trait
//! that stdio and Streamable HTTP implement (`stdio_child.rs`, `http_link.rs`; the bridge's
//! in-memory link too), the [`Event`]s it delivers, what it is told about an
//! outgoing message, and the signal-free threads links start.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::ClientError;

/// Something a link delivers.
#[derive(Debug)]
pub enum Event {
    /// One JSON object from the server.
    Message(Value),
    /// A line that is not a JSON-RPC message (excerpt).
    Garbage(String),
    /// A line over the size limit was dropped (the limit, in bytes).
    Oversize(usize),
    /// The server closed its output (with the reason when reading failed).
    Closed(Option<String>),
    /// This request failed; the connection stays usable (HTTP).
    Failed(ClientError),
    /// A notification or response was accepted (HTTP 202).
    Accepted,
}

/// What the link may need to know about an outgoing message (HTTP mirrors
/// these in headers).
#[derive(Debug, Clone, Copy)]
pub struct Outgoing<'a> {
    pub id: Option<u64>,
    pub method: &'a str,
    /// `params.name` of a `tools/call`.
    pub name: Option<&'a str>,
    /// The protocol version a modern request claims in its `_meta`.
    pub version: Option<&'a str>,
    /// `Mcp-Param-*` headers of a `tools/call` (HTTP).
    pub headers: &'a [(String, String)],
}

/// What is known after a link failed.
#[derive(Debug, Default, Clone)]
pub struct FailureContext {
    /// How the server process ended ("exited with status 1").
    pub ended: Option<String>,
    /// Its exit status, when it exited with one.
    pub status: Option<i32>,
    /// The kept tail of its stderr.
    pub stderr: String,
}

/// A transport: stdio or Streamable HTTP.
pub trait Link: Send {
    /// Send one message; `line` ends with a newline.
    fn send(
        &mut self,
        line: &[u8],
        out: &Outgoing,
        deadline: Instant,
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<(), ClientError>;
    /// The next event concerning request `id` (stdio: any event), waiting at
    /// most `wait`.
    fn recv(&mut self, id: u64, wait: Duration) -> Option<Event>;
    /// Abandon request `id`.
    fn cancel(&mut self, id: u64, reason: &str);
    /// Request `id` is complete.
    fn finish(&mut self, id: u64);
    /// Answer a request the server sent (`line` without newline).
    fn respond(&mut self, line: &[u8]);
    /// Why the link failed, as far as known.
    fn context(&mut self) -> FailureContext;
    /// The kept tail of the server's stderr ("" for HTTP).
    fn stderr_text(&self) -> String;
    /// The negotiated protocol version (HTTP sends it as a header).
    fn set_version(&mut self, version: &str);
    /// Shut down; returns how the server ended.
    fn close(&mut self) -> String;
    /// Shut down after a failed handshake, without the grace period a
    /// server gets to exit on its own (RULES K2.7).
    fn abort(&mut self) -> String {
        self.close()
    }
    /// The server's process id (stdio).
    fn pid(&self) -> Option<i32> {
        None
    }
    /// Does this transport mirror `x-mcp-header` arguments (HTTP)?
    fn mirrors_params(&self) -> bool {
        false
    }
    /// The time spent at sign-in pages so far (HTTP; RULES K10.5), which
    /// the clocks of requests do not count.
    fn sign_in_time(&self) -> Duration {
        Duration::ZERO
    }
    /// Listen for what the server sends outside any request's answer (a
    /// legacy HTTP session's GET stream, where a server may send its
    /// questions, RULES K12.2); stdio reads everything anyway.
    fn listen(&mut self) {}
}
