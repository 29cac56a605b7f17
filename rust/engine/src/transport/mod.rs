//! The stdio transport: newline-delimited JSON-RPC on the process's request
//! and response streams (RULES W1, S1–S5).
//!
//! * [`framer`]: bytes to lines (pure, fuzzed).
//! * [`reader`]: who reads the stream when — the serving thread while it
//!   waits, a reader thread while it is busy — and the queue of lines
//!   between them.
//! * [`stdio`]: the serve loop: a line from the reader, the dispatcher's
//!   [`crate::server::Reply`], the response line written.
//! * [`control`]: what is done with a line the moment it is read
//!   (cancellations, pings that overtake a running call), and the ticker
//!   thread that writes progress notifications while a tool runs.
//! * [`http`]: the Streamable HTTP transport (hyper on a small tokio
//!   runtime; tool calls handed to the serving thread), a folder with one
//!   module per job.
//! * `sys`: the platform-specific pieces (readiness of the stream, C stdio
//!   flushing), Unix today.
//!
//! The dispatcher ([`crate::server::Server`]) knows nothing of this module;
//! another transport drives it the same way [`serve`] does.

pub mod control;
pub mod framer;
#[cfg(feature = "net")]
pub mod http;
pub mod reader;
pub mod stdio;
mod sys;

pub use framer::Framer;
pub use reader::{Inbound, Reader, HANDOFF};
pub use stdio::{serve, serve_with_workers, ServeEnd, ServeOptions};

/// A host for messages that run no tool (never called): the stdio ticker's,
/// for the pings it answers, and the HTTP threads', for every request but
/// `tools/call`.
pub(crate) struct NoTools;

impl crate::host::Host for NoTools {
    fn tools(&mut self) -> Vec<crate::host::ToolSpec> {
        Vec::new()
    }
    fn call_tool(
        &mut self,
        _: usize,
        _: Option<&serde_json::Map<String, serde_json::Value>>,
        _: &crate::host::CallContext,
    ) -> Result<crate::host::ToolResult, crate::host::ToolFailure> {
        Err(crate::host::ToolFailure::Error("internal error".into()))
    }
}
