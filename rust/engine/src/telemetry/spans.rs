//! One OpenTelemetry SERVER span per message (RULES T1–T7), and one HTTP
//! SERVER span per HTTP request that parents it (RULES T10), recorded with
//! the SDK and exported through the batch span processor.

use std::borrow::Cow;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use opentelemetry::trace::{
    Link, Span as _, SpanContext, SpanKind, Status, TraceContextExt, Tracer as _, TracerProvider as _,
};
use opentelemetry::{Context, KeyValue};
use opentelemetry_sdk::trace::{BatchConfigBuilder, BatchSpanProcessor, Sampler, SdkTracer, SdkTracerProvider, Span};

use super::attrs::{code_text, id_value, known_method, Cut, OTHER_METHOD};
use super::config::{Config, ExporterKind, Limits, SamplerKind};
use super::export::{Counters, Gate, Reporting, StderrSpans};
use super::otlp;
use super::scope::{resource, scope};
use super::w3c::{baggage_from_meta, baggage_from_str, context_from, format_traceparent, remote_parent};
use super::{SpanEnd, SpanRecorder, SpanStart, Started, Via};
use crate::host::CallContext;
use crate::signals::masked;

/// How long `shutdown()` may wait for the last spans to be exported.
const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(5);

/// Records one SERVER span per message through an SDK tracer provider, and
/// one HTTP SERVER span per HTTP request.
pub struct OtelRecorder {
    provider: SdkTracerProvider,
    tracer: SdkTracer,
    cut: Cut,
    ambient: Option<SpanContext>,
    shutdown_timeout: Duration,
    done: AtomicBool,
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
            cut: Cut(None),
            ambient: None,
            shutdown_timeout: SHUTDOWN_TIMEOUT,
            done: AtomicBool::new(false),
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

    fn links(&self, extra: Option<&SpanContext>) -> Vec<Link> {
        let mut links = Vec::new();
        if let Some(a) = &self.ambient {
            links.push(Link::with_context(a.clone()));
        }
        if let Some(x) = extra {
            links.push(Link::with_context(x.clone()));
        }
        links
    }
}

/// The message's span, kept by [`Started`] until the message is answered.
struct Open(Span);

/// Attributes of the transport a message came over (RULES T5).
fn transport_attrs(cut: Cut, via: Option<&Via>, attrs: &mut Vec<KeyValue>) {
    let Some(h) = via.and_then(|v| v.http.as_ref()) else {
        attrs.push(cut.fixed("network.transport", "pipe"));
        return;
    };
    attrs.push(cut.fixed("network.transport", "tcp"));
    attrs.push(cut.fixed("network.protocol.name", "http"));
    attrs.push(cut.fixed("network.protocol.version", h.protocol_version));
    if let Some(c) = h.client {
        attrs.push(cut.owned("client.address", &c.ip().to_string(), false));
        if c.port() != 0 {
            attrs.push(KeyValue::new("client.port", i64::from(c.port())));
        }
    }
    if let Some(user) = &h.user {
        attrs.push(cut.owned("enduser.id", user, false));
    }
    if let Some(sid) = &h.session_id {
        attrs.push(cut.owned("mcp.session.id", sid, true));
    }
}

impl SpanRecorder for OtelRecorder {
    fn start(&self, s: &SpanStart) -> Started {
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
        let mut attrs = Vec::with_capacity(12);
        attrs.push(cut.fixed("mcp.method.name", method));
        if known.is_none() {
            attrs.push(cut.owned("rpc.method_original", s.method, true));
        }
        transport_attrs(cut, s.via, &mut attrs);
        if let Some(id) = s.id {
            attrs.push(cut.owned("jsonrpc.request.id", &id_value(id), true));
        }
        if is_call {
            attrs.push(cut.fixed("gen_ai.operation.name", "execute_tool"));
            if let Some(n) = s.tool_name {
                attrs.push(cut.owned("gen_ai.tool.name", n, !s.tool_registered));
            }
        }
        let http = s.via.and_then(|v| v.http.as_ref());
        let http_span = http.and_then(|h| h.span.as_ref());
        // RULES T6/T10: the parent in `_meta` wins and the HTTP span is
        // linked (the conventions' ambient context); without one, the HTTP
        // span is the parent.
        let (parent, link) = match (s.meta.and_then(remote_parent), http_span) {
            (Some(sc), l) => (Context::new().with_remote_span_context(sc), l),
            (None, Some(h)) => (Context::new().with_remote_span_context(h.clone()), None),
            (None, None) => (Context::current(), None),
        };
        let mut builder = self.tracer.span_builder(name).with_kind(SpanKind::Server).with_attributes(attrs);
        if self.ambient.is_some() || link.is_some() {
            builder = builder.with_links(self.links(link));
        }
        let span = builder.start_with_context(&self.tracer, &parent);
        let sc = span.span_context();
        // Only a tool sees the context (RULES T9): other messages skip
        // formatting it.
        let ctx = if is_call && sc.is_valid() {
            let ts = sc.trace_state().header();
            let baggage = s
                .meta
                .and_then(baggage_from_meta)
                .or_else(|| http.and_then(|h| h.baggage.as_deref()).and_then(baggage_from_str));
            CallContext {
                traceparent: Some(format_traceparent(sc)),
                tracestate: if ts.is_empty() { None } else { Some(ts) },
                baggage,
            }
        } else {
            CallContext::default()
        };
        Started::new(ctx, Open(span))
    }

    fn end(&self, mut started: Started, e: &SpanEnd) {
        let Some(Open(mut span)) = started.take::<Open>() else { return };
        let cut = self.cut;
        if let Some(v) = e.protocol_version {
            span.set_attribute(cut.fixed("mcp.protocol.version", v.as_str()));
        }
        // RULES N5.2: which worker process ran the call.
        if let Some(w) = e.worker {
            span.set_attribute(KeyValue::new("mcplite.worker.id", i64::from(w.worker)));
            span.set_attribute(KeyValue::new("mcplite.worker.pid", i64::from(w.pid)));
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
        span.end();
    }

    fn http_start(&self, r: &HttpStart) -> Option<HttpSpan> {
        let cut = self.cut;
        let known = http_method(r.method);
        let name: Cow<'static, str> = match (known, r.route) {
            (None, _) => "HTTP".into(),
            (Some(m), None) => m.into(),
            (Some(m), Some(route)) => format!("{m} {route}").into(),
        };
        let mut attrs = Vec::with_capacity(12);
        attrs.push(cut.fixed("http.request.method", known.unwrap_or(OTHER_METHOD)));
        if known.is_none() {
            attrs.push(cut.owned("http.request.method_original", r.method, true));
        }
        attrs.push(cut.owned("url.path", r.path, true));
        attrs.push(cut.fixed("url.scheme", r.scheme));
        if let Some(route) = r.route {
            attrs.push(cut.owned("http.route", route, false));
        }
        if let Some(a) = r.server_address {
            attrs.push(cut.owned("server.address", a, true));
        }
        if let Some(p) = r.server_port {
            attrs.push(KeyValue::new("server.port", i64::from(p)));
        }
        if let Some(c) = r.client {
            attrs.push(cut.owned("client.address", &c.ip().to_string(), false));
            if c.port() != 0 {
                attrs.push(KeyValue::new("client.port", i64::from(c.port())));
            }
        }
        attrs.push(cut.fixed("network.protocol.name", "http"));
        attrs.push(cut.fixed("network.protocol.version", r.protocol_version));
        let parent = match r.traceparent.and_then(|tp| context_from(tp, r.tracestate)) {
            Some(sc) => Context::new().with_remote_span_context(sc),
            None => Context::current(),
        };
        let mut builder = self.tracer.span_builder(name).with_kind(SpanKind::Server).with_attributes(attrs);
        if self.ambient.is_some() {
            builder = builder.with_links(self.links(None));
        }
        Some(HttpSpan { span: Some(builder.start_with_context(&self.tracer, &parent)), cut })
    }

    fn shutdown(&self) {
        if self.done.swap(true, Ordering::SeqCst) {
            return;
        }
        let _ = self.provider.shutdown_with_timeout(self.shutdown_timeout);
    }
}

impl Drop for OtelRecorder {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// The standard HTTP methods (the HTTP conventions' list); anything else is
/// `_OTHER`.
fn http_method(m: &str) -> Option<&'static str> {
    const KNOWN: [&str; 9] = ["CONNECT", "DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT", "TRACE"];
    KNOWN.iter().find(|k| **k == m).copied()
}

/// What is known when an HTTP request arrives (its head).
#[derive(Debug, Default)]
pub struct HttpStart<'a> {
    /// The request method as sent.
    pub method: &'a str,
    /// The request path as sent (`url.path`, cut to 256 characters).
    pub path: &'a str,
    /// The matched route (`/mcp`, `/health`); `None` when nothing matched.
    pub route: Option<&'a str>,
    /// `url.scheme` (`"http"`).
    pub scheme: &'static str,
    /// `server.address`: the host the client addressed (`Host` header).
    pub server_address: Option<&'a str>,
    /// `server.port`.
    pub server_port: Option<u16>,
    /// The peer (`client.address`, `client.port`).
    pub client: Option<SocketAddr>,
    /// `network.protocol.version` (`"1.1"`).
    pub protocol_version: &'static str,
    /// The request's `traceparent` and `tracestate` headers: the HTTP span's
    /// parent when valid (read strictly, as in `_meta`).
    pub traceparent: Option<&'a str>,
    pub tracestate: Option<&'a str>,
}

/// One HTTP request's SERVER span (HTTP semantic conventions). It parents
/// the spans of the MCP message in the request ([`HttpSpan::context`] goes
/// into [`super::HttpVia::span`]); [`HttpSpan::finish`] records the status
/// code and ends it. Dropped unfinished (the client went away first), it
/// ends with `error.type` `_OTHER`.
pub struct HttpSpan {
    span: Option<Span>,
    cut: Cut,
}

impl HttpSpan {
    /// The span's context, for the MCP span to name as its parent.
    pub fn context(&self) -> Option<SpanContext> {
        self.span.as_ref().map(|s| s.span_context().clone()).filter(SpanContext::is_valid)
    }

    /// The response status was sent: record it and end the span. A 5xx is
    /// an error (`error.type` the status code, status ERROR); a 4xx is the
    /// client's, so the server span's status stays unset (HTTP conventions).
    pub fn finish(mut self, status: u16) {
        let Some(mut span) = self.span.take() else { return };
        span.set_attribute(KeyValue::new("http.response.status_code", i64::from(status)));
        if status >= 500 {
            span.set_attribute(self.cut.owned("error.type", &status.to_string(), false));
            span.set_status(Status::error(""));
        }
        span.end();
    }
}

impl Drop for HttpSpan {
    fn drop(&mut self) {
        if let Some(mut span) = self.span.take() {
            span.set_attribute(self.cut.fixed("error.type", OTHER_METHOD));
            span.set_status(Status::error(""));
            span.end();
        }
    }
}

impl std::fmt::Debug for HttpSpan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpSpan").field("context", &self.context()).finish()
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

/// Build the span recorder for a resolved configuration: one batch span
/// processor (behind an admission gate) per exporter. `None` when spans are
/// off.
pub fn recorder_from_config(c: &Config) -> Option<OtelRecorder> {
    let sig = c.traces.as_ref()?;
    // stderr alone: write each span as soon as it ends.
    let immediate = sig.exporters == [ExporterKind::Stderr];
    let batch_size = if immediate { 1 } else { c.max_export_batch_size };
    let mut builder = SdkTracerProvider::builder()
        .with_sampler(sampler(c.sampler))
        .with_resource(resource(&c.service_name, &c.resource));
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
                let Some(e) = otlp::spans(o, o.timeout.min(c.export_timeout), Arc::clone(&counters)) else { continue };
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
