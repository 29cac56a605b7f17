//! The seam between the dispatcher and telemetry (RULES section 8), and the
//! recorders behind it.
//!
//! The dispatcher describes each envelope-valid message to a
//! [`SpanRecorder`] when one is installed: [`SpanRecorder::start`] after
//! envelope validation, [`SpanRecorder::end`] once the response is written
//! (after handling, for a notification). With none installed (telemetry and
//! logging off) it does no telemetry work at all.
//!
//! Three recorders derive everything from those two events:
//!
//! * [`OtelRecorder`]: one OpenTelemetry SERVER span per message;
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

use serde_json::{Map, Value};

use crate::host::CallContext;
use crate::version::Version;

mod attrs;
mod config;
mod export;
mod log;
mod metrics;
mod spans;
mod w3c;

pub use attrs::{known_method, CLIENT_STRING_LIMIT, ERROR_TYPES, OTHER_METHOD};
pub use config::{
    log_level_from_env, Config, ExporterKind, Limits, OtlpConfig, SamplerKind, SignalConfig, Temporality,
};
pub use log::LogRecorder;
pub use metrics::{
    MetricsRecorder, OPERATION_DURATION, OPERATION_DURATION_BOUNDARIES, SESSION_DURATION, SESSION_DURATION_BOUNDARIES,
};
pub use spans::{recorder_from_config, OtelRecorder, SCHEMA_URL, SCOPE_NAME};
pub use w3c::{baggage_from_meta, format_traceparent, parse_traceparent, parse_tracestate};

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
    /// Protocol version to record (requests only; the recorders work out
    /// the version of a notification themselves).
    pub protocol_version: Option<Version>,
    /// The message was a notification.
    pub notification: bool,
    /// The call was cancelled by the client while its tool ran, and was not
    /// answered (RULES C4).
    pub cancelled: bool,
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

/// Receives one start and one end per envelope-valid message. `Send`, so
/// that a [`crate::server::Server`] holding one can be shared between
/// threads. Spans are strictly sequential: `end` ends the span `start` began
/// last; the dispatcher's [`crate::server::Reply`] calls `end` when it is
/// written or dropped.
pub trait SpanRecorder: Send {
    /// A message starts. The returned context is exposed to the tool while it
    /// runs (`TRACEPARENT`, `TRACESTATE`, `BAGGAGE`).
    fn start(&mut self, start: &SpanStart) -> CallContext;
    /// The message started last has been answered (or handled).
    fn end(&mut self, end: &SpanEnd);
    /// Flush and stop (bounded time). Idempotent.
    fn shutdown(&mut self) {}
}

/// Several recorders as one. The first context that carries a
/// `traceparent` is the one handed to the tool.
pub struct Fanout(pub Vec<Box<dyn SpanRecorder>>);

impl SpanRecorder for Fanout {
    fn start(&mut self, start: &SpanStart) -> CallContext {
        let mut ctx = CallContext::default();
        for r in &mut self.0 {
            let c = r.start(start);
            if ctx.traceparent.is_none() && c.traceparent.is_some() {
                ctx = c;
            }
        }
        ctx
    }
    fn end(&mut self, end: &SpanEnd) {
        for r in &mut self.0 {
            r.end(end);
        }
    }
    fn shutdown(&mut self) {
        for r in &mut self.0 {
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
