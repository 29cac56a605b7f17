//! SDK span data → OTLP messages (official `opentelemetry-proto` types), and
//! the two exporters that ship them: OTLP/HTTP protobuf and OTLP/JSON lines
//! on stderr.

use std::io::Write;
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::trace::v1::ResourceSpans;
use opentelemetry_proto::transform::common::tonic::ResourceAttributesWithSchema;
use opentelemetry_proto::transform::trace::tonic::group_spans_by_resource_and_scope;
use opentelemetry_sdk::trace::SpanData;
use opentelemetry_sdk::Resource;

use super::config::OtlpConfig;
use super::http;
use super::jsonline;
use super::wire::{encode_request, EncodedResource};

/// Group spans under their resource and scope.
pub(crate) fn to_proto(spans: Vec<SpanData>, resource: &ResourceAttributesWithSchema) -> Vec<ResourceSpans> {
    group_spans_by_resource_and_scope(spans, resource)
}

/// A synchronous exporter run on the queue's thread.
pub(crate) trait Export: Send {
    /// Export one batch before `deadline`. An error means the batch is lost.
    fn export(&mut self, spans: Vec<SpanData>, deadline: Instant) -> Result<(), String>;
    /// Short description for diagnostics.
    fn describe(&self) -> String;
}

/// OTLP over HTTP with protobuf bodies.
pub(crate) struct OtlpHttp {
    cfg: OtlpConfig,
    resource: EncodedResource,
    /// After a failed connection, batches are dropped without encoding or
    /// connecting until this time (a dead collector costs next to nothing).
    retry_at: Option<Instant>,
}

/// How long to skip exports after the collector could not be reached.
const RETRY_AFTER: Duration = Duration::from_secs(1);

impl OtlpHttp {
    pub(crate) fn new(cfg: OtlpConfig, resource: &Resource) -> OtlpHttp {
        OtlpHttp { cfg, resource: EncodedResource::new(&resource.into()), retry_at: None }
    }
}

impl Export for OtlpHttp {
    fn export(&mut self, spans: Vec<SpanData>, deadline: Instant) -> Result<(), String> {
        let now = Instant::now();
        if self.retry_at.is_some_and(|t| now < t) {
            return Err("the collector was unreachable moments ago".into());
        }
        let deadline = deadline.min(now + self.cfg.timeout);
        let body = encode_request(&spans, &self.resource);
        drop(spans);
        match http::post(&self.cfg, "application/x-protobuf", &body, deadline) {
            Ok(200..=299) => {
                self.retry_at = None;
                Ok(())
            }
            Ok(code) => Err(format!("the collector answered HTTP {code}")),
            Err(e) => {
                self.retry_at = Some(Instant::now() + RETRY_AFTER);
                Err(e)
            }
        }
    }
    fn describe(&self) -> String {
        format!("OTLP endpoint {}", self.cfg.url)
    }
}

/// One OTLP/JSON line (an `ExportTraceServiceRequest` holding one span) per
/// finished span, on stderr.
pub(crate) struct StderrLines {
    resource: ResourceAttributesWithSchema,
}

impl StderrLines {
    pub(crate) fn new(resource: &Resource) -> StderrLines {
        StderrLines { resource: resource.into() }
    }
}

impl Export for StderrLines {
    fn export(&mut self, spans: Vec<SpanData>, _deadline: Instant) -> Result<(), String> {
        let mut out = Vec::with_capacity(1024 * spans.len());
        for s in spans {
            jsonline::write_request(&mut out, &to_proto(vec![s], &self.resource));
            out.push(b'\n');
        }
        let stderr = std::io::stderr();
        let mut lock = stderr.lock();
        lock.write_all(&out).and_then(|_| lock.flush()).map_err(|e| e.to_string())
    }
    fn describe(&self) -> String {
        "stderr".into()
    }
}
