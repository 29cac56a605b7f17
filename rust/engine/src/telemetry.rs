//! The seam between the dispatcher and span recording (SPEC section 8), and
//! the OpenTelemetry recorder behind it.
//!
//! The dispatcher describes each envelope-valid message to a
//! [`SpanRecorder`] when one is installed; with none installed (tracing off)
//! it does no span work at all.
//!
//! [`recorder_from_env`] reads the standard OpenTelemetry environment
//! variables once (T8) and returns an [`OtelRecorder`] built on the
//! `opentelemetry` SDK, or `None` when tracing is off. Finished spans go
//! through a bounded queue to a background thread (never blocking the
//! protocol) that writes them as OTLP/JSON lines on stderr or posts them as
//! OTLP/HTTP protobuf to a collector.

use serde_json::{Map, Value};

use crate::host::CallContext;
use crate::version::Version;

mod config;
mod http;
mod jsonline;
mod otlp;
mod queue;
mod recorder;
mod w3c;
mod wire;

pub use config::{Config, ExporterKind, OtlpConfig, SamplerKind};
pub use recorder::{recorder_from_config, recorder_from_env, OtelRecorder, SCOPE_NAME};
pub use w3c::{format_traceparent, parse_traceparent, parse_tracestate};

/// What is known when a span starts (after envelope validation).
#[derive(Debug)]
pub struct SpanStart<'a> {
    pub method: &'a str,
    /// Raw id token for requests; `None` for notifications.
    pub id: Option<&'a str>,
    /// `params.name` of a `tools/call` when it is a string.
    pub tool_name: Option<&'a str>,
    /// `params._meta` when it is an object (read for `traceparent` only).
    pub meta: Option<&'a Map<String, Value>>,
}

/// What is known when the span ends.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct SpanEnd {
    /// JSON-RPC error code of the response, if it was an error.
    pub error_code: Option<i64>,
    /// The response was a result with `isError: true`.
    pub tool_error: bool,
    /// Protocol version to record (requests only).
    pub protocol_version: Option<Version>,
    /// The message was a notification.
    pub notification: bool,
}

/// Records one SERVER span per envelope-valid message. `Send`, so that a
/// [`crate::server::Server`] holding one can be shared between threads.
/// Spans are strictly sequential: `end` ends the span `start` began last;
/// the dispatcher's [`crate::server::Reply`] calls `end` when it is written
/// or dropped.
pub trait SpanRecorder: Send {
    /// Start the span for a message. The returned context is exposed to the
    /// tool while it runs (`TRACEPARENT`).
    fn start(&mut self, start: &SpanStart) -> CallContext;
    /// End the span started last.
    fn end(&mut self, end: &SpanEnd);
    /// Flush and stop (bounded time).
    fn shutdown(&mut self) {}
}
