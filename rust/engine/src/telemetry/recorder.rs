//! The OpenTelemetry span recorder (SPEC T1–T8).

use std::borrow::Cow;
use std::time::Duration;

use opentelemetry::trace::{Span as _, SpanKind, Status, TraceContextExt, Tracer as _, TracerProvider as _};
use opentelemetry::{Context, InstrumentationScope, KeyValue};
use opentelemetry_sdk::resource::TelemetryResourceDetector;
use opentelemetry_sdk::trace::{Sampler, SdkTracer, SdkTracerProvider, Span};
use opentelemetry_sdk::Resource;

use super::config::{Config, ExporterKind, SamplerKind};
use super::otlp::{Export, OtlpHttp, StderrLines};
use super::queue::{diag, QueueProcessor, QueueSettings};
use super::w3c::{format_traceparent, remote_parent};
use super::{SpanEnd, SpanRecorder, SpanStart};
use crate::host::CallContext;

/// The instrumentation scope of mcplite's spans.
pub const SCOPE_NAME: &str = "r.package.mcplite";
/// The R package name (matched by the scope switches too).
pub(crate) const SCOPE_PACKAGE: &str = "mcplite";

/// How long `shutdown()` may wait for the last spans to be exported.
const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(5);

/// The standard message of a JSON-RPC error code, used as the span status
/// description (T5). It never contains request data.
fn standard_message(code: i64) -> &'static str {
    match code {
        -32700 => "Parse error",
        -32600 => "Invalid Request",
        -32601 => "Method not found",
        -32602 => "Invalid params",
        -32022 => "Unsupported protocol version",
        _ => "Internal error",
    }
}

/// The method as a static string when it is a known one (no allocation).
fn known_method(m: &str) -> Option<&'static str> {
    const KNOWN: [&str; 9] = [
        "tools/call",
        "tools/list",
        "initialize",
        "notifications/initialized",
        "ping",
        "server/discover",
        "notifications/cancelled",
        "notifications/progress",
        "notifications/roots/list_changed",
    ];
    KNOWN.iter().find(|k| **k == m).copied()
}

/// Value of `jsonrpc.request.id`: a string id's value, else the token text.
fn id_value(token: &str) -> String {
    if token.starts_with('"') {
        serde_json::from_str::<String>(token).unwrap_or_else(|_| token.to_string())
    } else {
        token.to_string()
    }
}

/// Records one SERVER span per message through an SDK tracer provider.
pub struct OtelRecorder {
    provider: SdkTracerProvider,
    tracer: SdkTracer,
    current: Option<Span>,
    shutdown_timeout: Duration,
    done: bool,
}

impl OtelRecorder {
    /// Record through `provider` (any processors and exporters; tests use the
    /// SDK's in-memory exporter). The scope is `r.package.mcplite`.
    pub fn from_provider(provider: SdkTracerProvider) -> OtelRecorder {
        let scope = InstrumentationScope::builder(SCOPE_NAME).with_version(env!("CARGO_PKG_VERSION")).build();
        let tracer = provider.tracer_with_scope(scope);
        OtelRecorder { provider, tracer, current: None, shutdown_timeout: SHUTDOWN_TIMEOUT, done: false }
    }

    /// The provider behind the recorder.
    pub fn provider(&self) -> &SdkTracerProvider {
        &self.provider
    }
}

impl SpanRecorder for OtelRecorder {
    fn start(&mut self, s: &SpanStart) -> CallContext {
        if let Some(mut old) = self.current.take() {
            old.end();
        }
        let is_call = s.method == "tools/call";
        let name: Cow<'static, str> = match (is_call, s.tool_name) {
            (true, Some(n)) => {
                let mut x = String::with_capacity(11 + n.len());
                x.push_str("tools/call ");
                x.push_str(n);
                x.into()
            }
            _ => match known_method(s.method) {
                Some(k) => Cow::Borrowed(k),
                None => Cow::Owned(s.method.to_string()),
            },
        };
        let mut attrs = Vec::with_capacity(8);
        let method_attr = match known_method(s.method) {
            Some(k) => KeyValue::new("mcp.method.name", k),
            None => KeyValue::new("mcp.method.name", s.method.to_string()),
        };
        attrs.push(method_attr);
        attrs.push(KeyValue::new("network.transport", "pipe"));
        if let Some(id) = s.id {
            attrs.push(KeyValue::new("jsonrpc.request.id", id_value(id)));
        }
        if is_call {
            attrs.push(KeyValue::new("gen_ai.operation.name", "execute_tool"));
            if let Some(n) = s.tool_name {
                attrs.push(KeyValue::new("gen_ai.tool.name", n.to_string()));
            }
        }
        let parent = match s.meta.and_then(remote_parent) {
            Some(sc) => Context::current().with_remote_span_context(sc),
            None => Context::current(),
        };
        let span = self
            .tracer
            .span_builder(name)
            .with_kind(SpanKind::Server)
            .with_attributes(attrs)
            .start_with_context(&self.tracer, &parent);
        let sc = span.span_context();
        let ctx = if sc.is_valid() {
            let ts = sc.trace_state().header();
            CallContext {
                traceparent: Some(format_traceparent(sc)),
                tracestate: if ts.is_empty() { None } else { Some(ts) },
            }
        } else {
            CallContext::default()
        };
        self.current = Some(span);
        ctx
    }

    fn end(&mut self, e: &SpanEnd) {
        let Some(mut span) = self.current.take() else { return };
        if !e.notification {
            if let Some(v) = e.protocol_version {
                span.set_attribute(KeyValue::new("mcp.protocol.version", v.as_str()));
            }
            if let Some(code) = e.error_code {
                let c = code.to_string();
                span.set_attribute(KeyValue::new("error.type", c.clone()));
                span.set_attribute(KeyValue::new("rpc.response.status_code", c));
                span.set_status(Status::error(standard_message(code)));
            } else if e.tool_error {
                span.set_attribute(KeyValue::new("error.type", "tool_error"));
                span.set_status(Status::error(""));
            }
        }
        span.end();
    }

    fn shutdown(&mut self) {
        if self.done {
            return;
        }
        self.done = true;
        if let Some(mut s) = self.current.take() {
            s.end();
        }
        let _ = self.provider.shutdown_with_timeout(self.shutdown_timeout);
    }
}

impl Drop for OtelRecorder {
    fn drop(&mut self) {
        self.shutdown();
    }
}

fn sampler(k: SamplerKind) -> Sampler {
    match k {
        SamplerKind::AlwaysOn => Sampler::AlwaysOn,
        SamplerKind::AlwaysOff => Sampler::AlwaysOff,
        SamplerKind::TraceIdRatio(r) => Sampler::TraceIdRatioBased(r),
        SamplerKind::ParentBasedAlwaysOn => Sampler::ParentBased(Box::new(Sampler::AlwaysOn)),
        SamplerKind::ParentBasedAlwaysOff => Sampler::ParentBased(Box::new(Sampler::AlwaysOff)),
        SamplerKind::ParentBasedTraceIdRatio(r) => Sampler::ParentBased(Box::new(Sampler::TraceIdRatioBased(r))),
    }
}

/// The resource: `service.name`, `OTEL_RESOURCE_ATTRIBUTES` and the SDK's
/// `telemetry.sdk.*` attributes.
fn resource(c: &Config) -> Resource {
    Resource::builder_empty()
        .with_detector(Box::new(TelemetryResourceDetector))
        .with_attributes(c.resource.iter().map(|(k, v)| KeyValue::new(k.clone(), v.clone())))
        .with_service_name(c.service_name.clone())
        .build()
}

/// Build a recorder for a resolved configuration.
pub fn recorder_from_config(c: &Config) -> Option<OtelRecorder> {
    let res = resource(c);
    let mut exporters: Vec<Box<dyn Export>> = Vec::new();
    for k in &c.exporters {
        match k {
            ExporterKind::Stderr => exporters.push(Box::new(StderrLines::new(&res))),
            ExporterKind::Otlp => {
                let o = c.otlp.clone()?;
                exporters.push(Box::new(OtlpHttp::new(o, &res)));
            }
        }
    }
    // stderr alone: write each span as soon as it ends.
    let schedule_delay = if c.exporters == [ExporterKind::Stderr] { Duration::ZERO } else { c.schedule_delay };
    let settings = QueueSettings {
        max_queue_size: c.max_queue_size,
        schedule_delay,
        max_export_batch_size: c.max_export_batch_size,
        export_timeout: c.export_timeout,
    };
    let processor = match QueueProcessor::new(exporters, settings) {
        Ok(p) => p,
        Err(e) => {
            diag(&format!("cannot start the tracing thread ({e}); tracing is off"));
            return None;
        }
    };
    let provider = SdkTracerProvider::builder()
        .with_span_processor(processor)
        .with_sampler(sampler(c.sampler))
        .with_resource(res)
        .build();
    Some(OtelRecorder::from_provider(provider))
}

/// Read the tracing configuration once from `env` (normally the process
/// environment) and build the recorder. `None` means tracing is off: install
/// nothing, so no span work happens at all. Warnings about the configuration
/// go to stderr.
pub fn recorder_from_env(env: &dyn Fn(&str) -> Option<String>) -> Option<Box<dyn SpanRecorder>> {
    let config = Config::from_env(env, &mut |w| diag(&w))?;
    recorder_from_config(&config).map(|r| Box::new(r) as Box<dyn SpanRecorder>)
}
