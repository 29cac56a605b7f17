//! SDK span data → OTLP messages (official `opentelemetry-proto` types), and
//! the two exporters that ship them: OTLP/HTTP protobuf and OTLP/JSON lines
//! on stderr.

use std::io::Write;
use std::time::Instant;

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::trace::v1::ResourceSpans;
use opentelemetry_proto::transform::common::tonic::ResourceAttributesWithSchema;
use opentelemetry_proto::transform::trace::tonic::group_spans_by_resource_and_scope;
use opentelemetry_sdk::trace::SpanData;
use opentelemetry_sdk::Resource;
use prost::Message;

use super::config::OtlpConfig;
use super::http;
use super::jsonline;

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
    resource: ResourceAttributesWithSchema,
}

impl OtlpHttp {
    pub(crate) fn new(cfg: OtlpConfig, resource: &Resource) -> OtlpHttp {
        OtlpHttp { cfg, resource: resource.into() }
    }
}

/// Encode spans as an `ExportTraceServiceRequest`.
pub(crate) fn encode_request(spans: Vec<SpanData>, resource: &ResourceAttributesWithSchema) -> Vec<u8> {
    ExportTraceServiceRequest { resource_spans: to_proto(spans, resource) }.encode_to_vec()
}

impl Export for OtlpHttp {
    fn export(&mut self, spans: Vec<SpanData>, deadline: Instant) -> Result<(), String> {
        let deadline = deadline.min(Instant::now() + self.cfg.timeout);
        let body = encode_request(spans, &self.resource);
        match http::post(&self.cfg, "application/x-protobuf", &body, deadline)? {
            200..=299 => Ok(()),
            code => Err(format!("the collector answered HTTP {code}")),
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
