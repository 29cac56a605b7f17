//! One OpenTelemetry SERVER span per message (RULES T1–T7), recorded with
//! the SDK and exported through the batch span processor.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use opentelemetry::trace::{
    Link, Span as _, SpanContext, SpanKind, Status, TraceContextExt, Tracer as _, TracerProvider as _,
};
use opentelemetry::{Context, InstrumentationScope, KeyValue};
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::resource::TelemetryResourceDetector;
use opentelemetry_sdk::trace::{BatchConfigBuilder, BatchSpanProcessor, Sampler, SdkTracer, SdkTracerProvider, Span};
use opentelemetry_sdk::Resource;

use super::attrs::{claimed_modern_version, code_text, id_value, known_method, Cut, Session, OTHER_METHOD};
use super::config::{Config, ExporterKind, Limits, OtlpConfig, SamplerKind};
use super::export::{diag, masked, Counters, Gate, Reporting, StderrSpans, UreqClient};
use super::w3c::{baggage_from_meta, format_traceparent, remote_parent};
use super::{SpanEnd, SpanRecorder, SpanStart};
use crate::host::CallContext;
use crate::version::Version;

/// The instrumentation scope of mcplite's spans and metrics.
pub const SCOPE_NAME: &str = "r.package.mcplite";
/// The R package name (matched by the scope switches too).
pub(crate) const SCOPE_PACKAGE: &str = "mcplite";

/// Schema URL of the semantic conventions mcplite follows: the OpenTelemetry
/// MCP conventions, maintained with the GenAI conventions (development
/// channel).
pub const SCHEMA_URL: &str = "https://opentelemetry.io/schemas/gen-ai-dev/1.42.0-dev";

/// How long `shutdown()` may wait for the last spans to be exported.
const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(5);

/// The instrumentation scope, with version and schema URL.
pub(crate) fn scope() -> InstrumentationScope {
    InstrumentationScope::builder(SCOPE_NAME)
        .with_version(env!("CARGO_PKG_VERSION"))
        .with_schema_url(SCHEMA_URL)
        .build()
}

/// The span in progress and what its end needs to know.
struct Current {
    span: Span,
    method: &'static str,
    modern: bool,
    /// The version a modern notification claims.
    claim: Option<Version>,
}

/// Records one SERVER span per message through an SDK tracer provider.
pub struct OtelRecorder {
    provider: SdkTracerProvider,
    tracer: SdkTracer,
    current: Option<Current>,
    cut: Cut,
    ambient: Option<SpanContext>,
    session: Session,
    shutdown_timeout: Duration,
    done: bool,
}

impl OtelRecorder {
    /// Record through `provider` (any processors and exporters; tests use the
    /// SDK's in-memory exporter), with no attribute length limit and no
    /// ambient context.
    pub fn from_provider(provider: SdkTracerProvider) -> OtelRecorder {
        let tracer = provider.tracer_with_scope(scope());
        OtelRecorder {
            provider,
            tracer,
            current: None,
            cut: Cut(None),
            ambient: None,
            session: Session::default(),
            shutdown_timeout: SHUTDOWN_TIMEOUT,
            done: false,
        }
    }

    /// Cut attribute values to the span limit of `limits`.
    pub fn with_limits(mut self, limits: Limits) -> OtelRecorder {
        self.cut = Cut(limits.span_value_length);
        self
    }

    /// Link every span to `ambient` (the context of whoever started the
    /// server: `TRACEPARENT` in its environment).
    pub fn with_ambient(mut self, ambient: Option<SpanContext>) -> OtelRecorder {
        self.ambient = ambient;
        self
    }

    /// The provider behind the recorder.
    pub fn provider(&self) -> &SdkTracerProvider {
        &self.provider
    }
}

impl SpanRecorder for OtelRecorder {
    fn start(&mut self, s: &SpanStart) -> CallContext {
        if let Some(mut old) = self.current.take() {
            old.span.end();
        }
        let cut = self.cut;
        let known = known_method(s.method);
        let method = known.unwrap_or(OTHER_METHOD);
        let is_call = known == Some("tools/call");
        let name: Cow<'static, str> = match s.tool_name {
            Some(n) if is_call && s.tool_registered => {
                let mut x = String::with_capacity(11 + n.len());
                x.push_str("tools/call ");
                x.push_str(n);
                x.into()
            }
            _ => method.into(),
        };
        let mut attrs = Vec::with_capacity(8);
        attrs.push(cut.fixed("mcp.method.name", method));
        if known.is_none() {
            attrs.push(cut.owned("rpc.method_original", s.method, true));
        }
        attrs.push(cut.fixed("network.transport", "pipe"));
        if let Some(id) = s.id {
            attrs.push(cut.owned("jsonrpc.request.id", &id_value(id), true));
        }
        if is_call {
            attrs.push(cut.fixed("gen_ai.operation.name", "execute_tool"));
            if let Some(n) = s.tool_name {
                attrs.push(cut.owned("gen_ai.tool.name", n, !s.tool_registered));
            }
        }
        let parent = match s.meta.and_then(remote_parent) {
            Some(sc) => Context::current().with_remote_span_context(sc),
            None => Context::current(),
        };
        let mut builder = self.tracer.span_builder(name).with_kind(SpanKind::Server).with_attributes(attrs);
        if let Some(a) = &self.ambient {
            builder = builder.with_links(vec![Link::with_context(a.clone())]);
        }
        let span = builder.start_with_context(&self.tracer, &parent);
        let sc = span.span_context();
        let ctx = if sc.is_valid() {
            let ts = sc.trace_state().header();
            CallContext {
                traceparent: Some(format_traceparent(sc)),
                tracestate: if ts.is_empty() { None } else { Some(ts) },
                baggage: s.meta.and_then(baggage_from_meta),
            }
        } else {
            CallContext::default()
        };
        let claim = if s.id.is_none() && s.modern { claimed_modern_version(s.meta) } else { None };
        self.current = Some(Current { span, method, modern: s.modern, claim });
        ctx
    }

    fn end(&mut self, e: &SpanEnd) {
        let Some(Current { mut span, method, modern, claim }) = self.current.take() else { return };
        let cut = self.cut;
        if let Some(v) = self.session.version_for(claim, modern, e) {
            span.set_attribute(cut.fixed("mcp.protocol.version", v.as_str()));
        }
        if !e.notification {
            if let Some(code) = e.error_code {
                span.set_attribute(cut.cow("error.type", code_text(code)));
                span.set_attribute(cut.cow("rpc.response.status_code", code_text(code)));
                span.set_status(Status::error(e.message_text().unwrap_or_default()));
            } else if e.cancelled {
                // RULES C4: cancelled by the client, never answered.
                span.set_attribute(cut.fixed("error.type", "cancelled"));
                span.set_status(Status::error("cancelled by the client"));
            } else if e.tool_error {
                span.set_attribute(cut.fixed("error.type", "tool_error"));
                span.set_status(Status::error(""));
            }
        }
        self.session.observe(method, modern, e);
        span.end();
    }

    fn shutdown(&mut self) {
        if self.done {
            return;
        }
        self.done = true;
        if let Some(mut c) = self.current.take() {
            c.span.end();
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
pub(crate) fn resource(c: &Config) -> Resource {
    Resource::builder_empty()
        .with_detector(Box::new(TelemetryResourceDetector))
        .with_attributes(c.resource.iter().map(|(k, v)| KeyValue::new(k.clone(), v.clone())))
        .with_service_name(c.service_name.clone())
        .build()
}

/// Headers for `opentelemetry-otlp`, which percent-decodes header values
/// once more: the configuration has decoded them already, so a literal `%`
/// is escaped again.
pub(crate) fn otlp_headers(o: &OtlpConfig) -> HashMap<String, String> {
    o.headers.iter().map(|(k, v)| (k.clone(), v.replace('%', "%25"))).collect()
}

/// Build the span recorder for a resolved configuration: one batch span
/// processor (behind an admission gate) per exporter. `None` when spans are
/// off.
pub fn recorder_from_config(c: &Config) -> Option<OtelRecorder> {
    let sig = c.traces.as_ref()?;
    // stderr alone: write each span as soon as it ends.
    let immediate = sig.exporters == [ExporterKind::Stderr];
    let batch_size = if immediate { 1 } else { c.max_export_batch_size };
    let mut builder = SdkTracerProvider::builder().with_sampler(sampler(c.sampler)).with_resource(resource(c));
    let mut any = false;
    for k in &sig.exporters {
        let counters = Arc::new(Counters::default());
        let batch = BatchConfigBuilder::default()
            .with_max_queue_size(c.max_queue_size + batch_size)
            .with_max_export_batch_size(batch_size)
            .with_scheduled_delay(if immediate {
                Duration::from_millis(200)
            } else {
                c.schedule_delay.max(Duration::from_millis(1))
            })
            .build();
        let bsp = match k {
            ExporterKind::Stderr => {
                let e = Reporting::new(StderrSpans::default(), Arc::clone(&counters), "stderr".into(), "spans");
                masked(|| BatchSpanProcessor::builder(e).with_batch_config(batch).build())
            }
            ExporterKind::Otlp => {
                let Some(o) = sig.otlp.as_ref() else { continue };
                // One export may take the OTLP timeout, and no longer than
                // the batch export timeout.
                let timeout = o.timeout.min(c.export_timeout);
                let client = Arc::new(UreqClient::new(timeout));
                let built = opentelemetry_otlp::SpanExporter::builder()
                    .with_http()
                    .with_shared_http_client(client.clone())
                    .with_endpoint(o.url.clone())
                    .with_protocol(Protocol::HttpBinary)
                    .with_timeout(timeout)
                    .with_headers(otlp_headers(o))
                    .with_retry_policy(opentelemetry_otlp::RetryPolicy::disabled())
                    .build();
                let exporter = match built {
                    Ok(x) => x,
                    Err(e) => {
                        diag(&format!("cannot export spans to {} ({e}); that exporter is off", o.url));
                        continue;
                    }
                };
                let e = Reporting::new(exporter, Arc::clone(&counters), format!("OTLP endpoint {}", o.url), "spans")
                    .with_client(client);
                masked(|| BatchSpanProcessor::builder(e).with_batch_config(batch).build())
            }
        };
        builder = builder.with_span_processor(Gate::new(bsp, counters, c.max_queue_size));
        any = true;
    }
    if !any {
        return None;
    }
    Some(OtelRecorder::from_provider(builder.build()).with_limits(c.limits).with_ambient(c.ambient.clone()))
}
