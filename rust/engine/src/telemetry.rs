//! The seam between the dispatcher and telemetry (RULES section 8), and the
//! recorders behind it.
//!
//! The dispatcher describes each envelope-valid message to a
//! [`SpanRecorder`] when one is installed: [`SpanRecorder::start`] after
//! envelope validation returns the message's own [`Started`], which the
//! reply carries to [`SpanRecorder::end`] once the response is written
//! (after handling, for a notification). Legacy sessions report their end
//! ([`SpanRecorder::session_end`]); the HTTP transport opens one HTTP span
//! per request ([`SpanRecorder::http_start`]). With no recorder installed
//! (telemetry and logging off) no telemetry work happens at all.
//!
//! Three recorders derive everything from those two events:
//!
//! * [`OtelRecorder`]: one OpenTelemetry SERVER span per message, and one
//!   HTTP SERVER span per HTTP request that parents it;
//! * [`MetricsRecorder`]: the `mcp.server.operation.duration` and
//!   `mcp.server.session.duration` histograms;
//! * [`LogRecorder`]: `MCPLITE_LOG` diagnostics through the `tracing` crate.
//!
//! [`recorder_from_env`] reads the standard OpenTelemetry variables and
//! `MCPLITE_LOG` once and returns the recorders that are switched on, joined
//! by a [`Fanout`], or `None` when everything is off.
//!
//! Everything is built on maintained crates: the `opentelemetry` SDK records
//! (its batch span processor and periodic metric reader run on plain threads,
//! no async runtime), `opentelemetry-otlp` encodes and posts OTLP/HTTP
//! protobuf through a blocking `ureq` client, and the official OTLP types
//! with serde write the stderr JSON lines. Hand-written are only the strict
//! W3C parsing the SDK's propagator does not do (`w3c`), the bounded
//! attribute values (`attrs`), the configuration (`config`) and a small
//! admission gate that turns the batch processor's silent drops into the
//! diagnostics RULES T8 asks for (`export`).

use std::any::Any;
use std::net::SocketAddr;
use std::time::Duration;

use opentelemetry::trace::SpanContext;
use serde_json::{Map, Value};

use crate::host::{CallContext, CallOutcome, WorkerRun};
use crate::version::Version;

mod attrs;
mod config;
mod export;
mod log;
mod metrics;
mod otlp;
mod scope;
mod spans;
mod w3c;

// Threads a transport starts share the exporters' signal mask.
#[cfg(feature = "net")]
pub(crate) use export::between_tool_output;
pub(crate) use export::tool_output_gate;

pub use attrs::{known_method, CLIENT_STRING_LIMIT, ERROR_TYPES, OTHER_METHOD};
pub use config::{
    log_level_from_env, Config, ExporterKind, Limits, OtlpConfig, SamplerKind, SignalConfig, Temporality,
};
pub use log::LogRecorder;
pub use metrics::{
    MetricsRecorder, OPERATION_DURATION, OPERATION_DURATION_BOUNDARIES, QUEUE_DURATION, SESSION_DURATION,
    SESSION_DURATION_BOUNDARIES,
};
pub use scope::{SCHEMA_URL, SCOPE_NAME};
pub use spans::{recorder_from_config, HttpSpan, HttpStart, OtelRecorder};
pub use w3c::{baggage_from_meta, baggage_from_str, format_traceparent, parse_traceparent, parse_tracestate};

/// How a message reached the dispatcher: the transport-level facts the
/// recorders add to the message's span and metrics. The default is stdio
/// (or in-process): `network.transport` `"pipe"`.
#[derive(Debug, Clone, Default)]
pub struct Via {
    /// The message came in the body of an HTTP request.
    pub http: Option<HttpVia>,
}

/// The HTTP request a message came in.
#[derive(Debug, Clone, Default)]
pub struct HttpVia {
    /// The HTTP server span of the request, when one is recorded: it
    /// parents the message's span, or is linked from it when `_meta`
    /// carries a parent of its own (the MCP conventions' "ambient context").
    pub span: Option<SpanContext>,
    /// The legacy session (`MCP-Session-Id`, minted by this server).
    pub session_id: Option<String>,
    /// The client's address: the peer's, or the one a trusted proxy
    /// forwarded (port 0: not known).
    pub client: Option<SocketAddr>,
    /// The name of the request's bearer token (`enduser.id`).
    pub user: Option<String>,
    /// `network.protocol.version` (`"1.1"`).
    pub protocol_version: &'static str,
    /// The request's `baggage` header, handed to the tool when `_meta`
    /// carries no baggage.
    pub baggage: Option<String>,
}

/// What is known when a span starts (after envelope validation).
#[derive(Debug, Default)]
pub struct SpanStart<'a> {
    pub method: &'a str,
    /// Raw id token for requests; `None` for notifications.
    pub id: Option<&'a str>,
    /// `params.name` of a `tools/call` when it is a string.
    pub tool_name: Option<&'a str>,
    /// `tool_name` names a tool in the registry. Only registered names reach
    /// span names and metric attributes (bounded cardinality).
    pub tool_registered: bool,
    /// The message is a modern one (its `params._meta` carries the
    /// protocol-version key).
    pub modern: bool,
    /// `params._meta` when it is an object (read for `traceparent`,
    /// `tracestate`, `baggage` and the modern protocol version only).
    pub meta: Option<&'a Map<String, Value>>,
    /// The transport the message came over.
    pub via: Option<&'a Via>,
}

/// The text of a JSON-RPC error message as sent: the standard message and,
/// for some errors, a fixed detail after `": "`. Both are fixed strings,
/// never request data.
pub type ErrorText = (&'static str, Option<&'static str>);

/// What is known when the span ends.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct SpanEnd {
    /// JSON-RPC error code of the response, if it was an error.
    pub error_code: Option<i64>,
    /// The error message sent with `error_code`.
    pub error_message: Option<ErrorText>,
    /// The response was a result with `isError: true`.
    pub tool_error: bool,
    /// Protocol version to record: the response's for a request; for a
    /// notification the modern claim, or the legacy session's version.
    pub protocol_version: Option<Version>,
    /// The message was a notification.
    pub notification: bool,
    /// The call was cancelled by the client while its tool ran, and was not
    /// answered (RULES C4).
    pub cancelled: bool,
    /// The worker process that ran the call, on a server with workers
    /// (RULES T5, K5).
    pub worker: Option<WorkerRun>,
    /// How a `tools/call` ended (the access log's `outcome`, RULES H7.1);
    /// `None` for other messages.
    pub call: Option<CallOutcome>,
}

impl SpanEnd {
    /// The full error message, as sent.
    pub fn message_text(&self) -> Option<String> {
        self.error_message.map(|(m, d)| match d {
            Some(d) => format!("{m}: {d}"),
            None => m.to_string(),
        })
    }
}

/// A legacy session that ended (`mcp.server.session.duration`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SessionEnd {
    /// The version the session negotiated.
    pub version: Version,
    /// From the `initialize` that opened it to its end.
    pub duration: Duration,
    /// The session was an HTTP one (`MCP-Session-Id`); otherwise stdio or
    /// in-process.
    pub http: bool,
}

/// One message's telemetry from its start to its end: the context handed
/// to the tool and whatever the recorder keeps for the end (its span, its
/// start time). Each message has its own, so messages answered at the same
/// time on several threads never share a span.
#[derive(Default)]
pub struct Started {
    /// Exposed to the tool while it runs (`TRACEPARENT`, `TRACESTATE`,
    /// `BAGGAGE`).
    pub context: CallContext,
    /// The recorder's own state, given back to [`SpanRecorder::end`].
    pub state: Option<Box<dyn Any + Send>>,
    /// The states of the recorders joined by a [`Fanout`] (one allocation
    /// for all of them, none of its own).
    pub parts: Vec<Started>,
}

impl Started {
    /// A context and a state.
    pub fn new(context: CallContext, state: impl Any + Send) -> Started {
        Started { context, state: Some(Box::new(state)), parts: Vec::new() }
    }

    /// The state, when it is a `T`.
    pub fn take<T: 'static>(&mut self) -> Option<T> {
        self.state.take()?.downcast::<T>().ok().map(|b| *b)
    }
}

impl std::fmt::Debug for Started {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Started").field("context", &self.context).finish_non_exhaustive()
    }
}

/// Receives one start and one end per envelope-valid message. `Send + Sync`
/// and called through `&self`: a [`crate::server::Server`] shared between
/// threads starts and ends messages concurrently, each with its own
/// [`Started`]; the dispatcher's [`crate::server::Reply`] carries it and
/// calls `end` when it is written or dropped.
pub trait SpanRecorder: Send + Sync {
    /// A message starts.
    fn start(&self, start: &SpanStart) -> Started;
    /// The message `started` belongs to has been answered (or handled).
    fn end(&self, started: Started, end: &SpanEnd);
    /// A legacy session ended.
    fn session_end(&self, _end: &SessionEnd) {}
    /// An HTTP request arrived: its HTTP server span, when this recorder
    /// records spans.
    fn http_start(&self, _request: &HttpStart) -> Option<HttpSpan> {
        None
    }
    /// Flush and stop (bounded time). Idempotent.
    fn shutdown(&self) {}
}

/// Several recorders as one. The first context that carries a
/// `traceparent` is the one handed to the tool.
pub struct Fanout(pub Vec<Box<dyn SpanRecorder>>);

impl SpanRecorder for Fanout {
    fn start(&self, start: &SpanStart) -> Started {
        let mut context = CallContext::default();
        let mut parts: Vec<Started> = Vec::with_capacity(self.0.len());
        for r in &self.0 {
            let mut s = r.start(start);
            if context.traceparent.is_none() && s.context.traceparent.is_some() {
                context = std::mem::take(&mut s.context);
            }
            parts.push(s);
        }
        Started { context, state: None, parts }
    }
    fn end(&self, started: Started, end: &SpanEnd) {
        for (r, s) in self.0.iter().zip(started.parts) {
            r.end(s, end);
        }
    }
    fn session_end(&self, end: &SessionEnd) {
        for r in &self.0 {
            r.session_end(end);
        }
    }
    fn http_start(&self, request: &HttpStart) -> Option<HttpSpan> {
        self.0.iter().find_map(|r| r.http_start(request))
    }
    fn shutdown(&self) {
        for r in &self.0 {
            r.shutdown();
        }
    }
}

/// Read the telemetry configuration once from `env` (normally the process
/// environment) and build the recorders that are on: spans
/// (`OTEL_TRACES_EXPORTER`), metrics (`OTEL_METRICS_EXPORTER`) and the
/// `MCPLITE_LOG` diagnostics. `None` means all are off: install nothing, so
/// no telemetry work happens at all. Warnings about the configuration go to
/// stderr.
pub fn recorder_from_env(env: &dyn Fn(&str) -> Option<String>) -> Option<Box<dyn SpanRecorder>> {
    let mut warn = |w: String| export::diag(&w);
    let mut parts: Vec<Box<dyn SpanRecorder>> = Vec::new();
    let (mut spans, mut metrics) = ("off".to_string(), "off".to_string());
    if let Some(config) = Config::from_env(env, &mut warn) {
        if let Some(r) = recorder_from_config(&config) {
            spans = describe(config.traces.as_ref());
            parts.push(Box::new(r));
        }
        if let Some(m) = metrics::metrics_from_config(&config) {
            metrics = describe(config.metrics.as_ref());
            parts.push(Box::new(m));
        }
    }
    if let Some(level) = log_level_from_env(env, &mut warn) {
        let log = LogRecorder::stderr(level);
        log.note_telemetry(&spans, &metrics);
        parts.push(Box::new(log));
    }
    match parts.len() {
        0 => None,
        1 => parts.pop(),
        _ => Some(Box::new(Fanout(parts))),
    }
}

/// Where a signal goes, for the log: `stderr`, the OTLP URL, or both.
fn describe(sig: Option<&SignalConfig>) -> String {
    let Some(sig) = sig else { return "off".into() };
    let parts: Vec<String> = sig
        .exporters
        .iter()
        .map(|k| match (k, &sig.otlp) {
            (ExporterKind::Otlp, Some(o)) => o.url.clone(),
            (ExporterKind::Otlp, None) => "otlp".into(),
            (ExporterKind::Stderr, _) => "stderr".into(),
        })
        .collect();
    parts.join(",")
}
