//! MCP metrics (OpenTelemetry MCP semantic conventions):
//!
//! * `mcp.server.operation.duration`: one measurement per message, in
//!   seconds, from its arrival (after envelope validation) until its response
//!   is written (or it was handled, for a notification), with the span's
//!   attributes minus the per-request ones (`jsonrpc.request.id`) and minus
//!   anything a client chose (an unknown tool's name, an unknown method's
//!   text): every attribute value comes from a bounded set.
//! * `mcp.server.session.duration`: one measurement per legacy session, from
//!   the `initialize` that opened it until the next `initialize` on the same
//!   connection, the end of input or shutdown (stdio), or its `DELETE`, idle
//!   expiry, eviction or the server's shutdown (HTTP). The dispatcher keeps
//!   the start in [`crate::server::LegacyState`] and reports the end
//!   ([`crate::server::Server::end_session`]). Modern (2026-07-28) requests
//!   have no session.
//!
//! Recorded with the SDK's meter; a periodic reader exports them on its own
//! thread (`OTEL_METRIC_EXPORT_INTERVAL`), and once more at shutdown.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use opentelemetry::metrics::{Histogram, MeterProvider as _};
use opentelemetry::KeyValue;
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};

use super::attrs::{code_text, known_method, Cut, OTHER_METHOD};
use super::config::{Config, ExporterKind, Limits, Temporality};
use super::export::{Counters, Reporting, StderrMetrics};
use super::otlp;
use super::scope::{resource, scope};
use super::{SessionEnd, SpanEnd, SpanRecorder, SpanStart, Started};
use crate::host::CallContext;
use crate::signals::masked;

/// Name of the per-operation histogram.
pub const OPERATION_DURATION: &str = "mcp.server.operation.duration";
/// Name of the per-session histogram.
pub const SESSION_DURATION: &str = "mcp.server.session.duration";
/// Name of the histogram of the time tool calls waited for a worker process
/// (RULES N5.2).
pub const QUEUE_DURATION: &str = "mcplite.worker.queue.duration";

/// Bucket boundaries (seconds) the MCP conventions recommend for
/// `mcp.server.operation.duration`.
pub const OPERATION_DURATION_BOUNDARIES: [f64; 14] =
    [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0];
/// Bucket boundaries (seconds) for `mcp.server.session.duration` (the same
/// list, as the conventions give for the session histograms).
pub const SESSION_DURATION_BOUNDARIES: [f64; 14] = OPERATION_DURATION_BOUNDARIES;

/// The operation in progress, kept by [`Started`] until it is answered.
struct Op {
    start: Instant,
    method: &'static str,
    /// A registered tool's name (`tools/call` only).
    tool: Option<String>,
    is_call: bool,
    /// Over HTTP (`network.transport` `tcp`).
    http: bool,
}

/// Records the MCP duration histograms through an SDK meter provider.
pub struct MetricsRecorder {
    provider: SdkMeterProvider,
    operation: Histogram<f64>,
    session_duration: Histogram<f64>,
    queue_duration: Histogram<f64>,
    cut: Cut,
    done: AtomicBool,
}

impl MetricsRecorder {
    /// Record through `provider` (any readers; tests use the SDK's in-memory
    /// exporter behind a periodic reader), with no attribute length limit.
    pub fn from_provider(provider: SdkMeterProvider) -> MetricsRecorder {
        let meter = provider.meter_with_scope(scope());
        let operation = meter
            .f64_histogram(OPERATION_DURATION)
            .with_unit("s")
            .with_description(
                "MCP request or notification duration as observed on the receiver from the time it was received \
                 until the result or ack is sent.",
            )
            .with_boundaries(OPERATION_DURATION_BOUNDARIES.to_vec())
            .build();
        let session_duration = meter
            .f64_histogram(SESSION_DURATION)
            .with_unit("s")
            .with_description("The duration of the MCP session as observed on the MCP server.")
            .with_boundaries(SESSION_DURATION_BOUNDARIES.to_vec())
            .build();
        let queue_duration = meter
            .f64_histogram(QUEUE_DURATION)
            .with_unit("s")
            .with_description("How long a tool call waited for a free worker process.")
            .with_boundaries(OPERATION_DURATION_BOUNDARIES.to_vec())
            .build();
        MetricsRecorder {
            provider,
            operation,
            session_duration,
            queue_duration,
            cut: Cut(None),
            done: AtomicBool::new(false),
        }
    }

    /// Cut attribute values to `OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT`.
    pub fn with_limits(mut self, limits: Limits) -> MetricsRecorder {
        self.cut = Cut(limits.value_length);
        self
    }

    /// The provider behind the recorder.
    pub fn provider(&self) -> &SdkMeterProvider {
        &self.provider
    }

    fn transport(&self, http: bool, attrs: &mut Vec<KeyValue>) {
        if http {
            attrs.push(self.cut.fixed("network.transport", "tcp"));
            attrs.push(self.cut.fixed("network.protocol.name", "http"));
        } else {
            attrs.push(self.cut.fixed("network.transport", "pipe"));
        }
    }
}

impl SpanRecorder for MetricsRecorder {
    fn start(&self, s: &SpanStart) -> Started {
        let known = known_method(s.method);
        let is_call = known == Some("tools/call");
        let tool = match s.tool_name {
            Some(n) if is_call && s.tool_registered => Some(n.to_string()),
            _ => None,
        };
        let http = s.via.is_some_and(|v| v.http.is_some());
        let op = Op { start: Instant::now(), method: known.unwrap_or(OTHER_METHOD), tool, is_call, http };
        Started::new(CallContext::default(), op)
    }

    fn end(&self, mut started: Started, e: &SpanEnd) {
        let Some(op) = started.take::<Op>() else { return };
        let now = Instant::now();
        let cut = self.cut;
        let mut attrs: Vec<KeyValue> = Vec::with_capacity(8);
        attrs.push(cut.fixed("mcp.method.name", op.method));
        self.transport(op.http, &mut attrs);
        if op.is_call {
            attrs.push(cut.fixed("gen_ai.operation.name", "execute_tool"));
            if let Some(t) = &op.tool {
                attrs.push(cut.owned("gen_ai.tool.name", t, false));
            }
        }
        if let Some(v) = e.protocol_version {
            attrs.push(cut.fixed("mcp.protocol.version", v.as_str()));
        }
        if !e.notification {
            if let Some(code) = e.error_code {
                attrs.push(cut.cow("error.type", code_text(code)));
                attrs.push(cut.cow("rpc.response.status_code", code_text(code)));
            } else if e.cancelled {
                attrs.push(cut.fixed("error.type", "cancelled"));
            } else if e.tool_error {
                attrs.push(cut.fixed("error.type", "tool_error"));
            }
        }
        self.operation.record(now.saturating_duration_since(op.start).as_secs_f64(), &attrs);
        if let Some(w) = e.worker {
            self.queue_duration.record(w.queue_wait.as_secs_f64(), &[]);
        }
    }

    fn session_end(&self, end: &SessionEnd) {
        let mut attrs = vec![self.cut.fixed("mcp.protocol.version", end.version.as_str())];
        self.transport(end.http, &mut attrs);
        self.session_duration.record(end.duration.as_secs_f64(), &attrs);
    }

    fn shutdown(&self) {
        if self.done.swap(true, Ordering::SeqCst) {
            return;
        }
        // The final collection and export.
        let _ = self.provider.shutdown();
    }
}

impl Drop for MetricsRecorder {
    fn drop(&mut self) {
        self.shutdown();
    }
}

fn sdk_temporality(t: Temporality) -> opentelemetry_sdk::metrics::Temporality {
    match t {
        Temporality::Cumulative => opentelemetry_sdk::metrics::Temporality::Cumulative,
        Temporality::Delta => opentelemetry_sdk::metrics::Temporality::Delta,
        Temporality::LowMemory => opentelemetry_sdk::metrics::Temporality::LowMemory,
    }
}

/// Build the metrics recorder for a resolved configuration: one periodic
/// reader per exporter. `None` when metrics are off.
pub(crate) fn metrics_from_config(c: &Config) -> Option<MetricsRecorder> {
    let sig = c.metrics.as_ref()?;
    let temporality = sdk_temporality(c.temporality);
    let mut builder = SdkMeterProvider::builder().with_resource(resource(&c.service_name, &c.resource));
    let mut any = false;
    for k in &sig.exporters {
        let counters = Arc::new(Counters::default());
        match k {
            ExporterKind::Stderr => {
                let e = Reporting::new(StderrMetrics { temporality }, counters, "stderr".into(), "metrics");
                let reader = masked(|| PeriodicReader::builder(e).with_interval(c.metric_interval).build());
                builder = builder.with_reader(reader);
            }
            ExporterKind::Otlp => {
                let Some(o) = sig.otlp.as_ref() else { continue };
                let Some(e) = otlp::metrics(o, temporality, counters) else { continue };
                let reader = masked(|| PeriodicReader::builder(e).with_interval(c.metric_interval).build());
                builder = builder.with_reader(reader);
            }
        }
        any = true;
    }
    if !any {
        return None;
    }
    Some(MetricsRecorder::from_provider(builder.build()).with_limits(c.limits))
}
