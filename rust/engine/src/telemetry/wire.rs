//! Direct protobuf encoding of an OTLP `ExportTraceServiceRequest` from SDK
//! span data, without building the intermediate `opentelemetry-proto`
//! message structs for every span (a few allocations per attribute). The
//! resource and scope messages are still encoded by prost from the official
//! types; tests check that decoding the output with the official types gives
//! exactly the messages the official transform builds.

use std::time::{SystemTime, UNIX_EPOCH};

use opentelemetry::trace::{SpanId, SpanKind, Status};
use opentelemetry::{Array, InstrumentationScope, KeyValue, Value};
use opentelemetry_proto::tonic::common::v1::InstrumentationScope as PbScope;
use opentelemetry_proto::tonic::resource::v1::Resource as PbResource;
use opentelemetry_proto::transform::common::tonic::ResourceAttributesWithSchema;
use opentelemetry_sdk::trace::SpanData;
use prost::Message;

const VARINT: u32 = 0;
const FIXED64: u32 = 1;
const LEN: u32 = 2;
const FIXED32: u32 = 5;

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn key(out: &mut Vec<u8>, field: u32, wire: u32) {
    varint(out, ((field << 3) | wire) as u64);
}

fn bytes_field(out: &mut Vec<u8>, field: u32, b: &[u8]) {
    key(out, field, LEN);
    varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

fn uint_field(out: &mut Vec<u8>, field: u32, v: u64) {
    if v != 0 {
        key(out, field, VARINT);
        varint(out, v);
    }
}

fn fixed64_field(out: &mut Vec<u8>, field: u32, v: u64) {
    if v != 0 {
        key(out, field, FIXED64);
        out.extend_from_slice(&v.to_le_bytes());
    }
}

fn fixed32_field(out: &mut Vec<u8>, field: u32, v: u32) {
    if v != 0 {
        key(out, field, FIXED32);
        out.extend_from_slice(&v.to_le_bytes());
    }
}

/// A length-delimited field whose body `f` writes in place: one length byte
/// is reserved and widened afterwards when the body is 128 bytes or more.
fn nested(out: &mut Vec<u8>, field: u32, f: impl FnOnce(&mut Vec<u8>)) {
    key(out, field, LEN);
    let at = out.len();
    out.push(0);
    f(out);
    let len = out.len() - at - 1;
    if len < 0x80 {
        out[at] = len as u8;
    } else {
        let mut lb = Vec::with_capacity(10);
        varint(&mut lb, len as u64);
        out.splice(at..at + 1, lb);
    }
}

fn any_value(out: &mut Vec<u8>, v: &Value) {
    match v {
        Value::String(s) => bytes_field(out, 1, s.as_str().as_bytes()),
        Value::Bool(b) => {
            key(out, 2, VARINT);
            varint(out, *b as u64);
        }
        Value::I64(i) => {
            key(out, 3, VARINT);
            varint(out, *i as u64);
        }
        Value::F64(d) => {
            key(out, 4, FIXED64);
            out.extend_from_slice(&d.to_bits().to_le_bytes());
        }
        Value::Array(a) => nested(out, 5, |o| match a {
            Array::Bool(v) => v.iter().for_each(|x| nested(o, 1, |o| any_value(o, &Value::Bool(*x)))),
            Array::I64(v) => v.iter().for_each(|x| nested(o, 1, |o| any_value(o, &Value::I64(*x)))),
            Array::F64(v) => v.iter().for_each(|x| nested(o, 1, |o| any_value(o, &Value::F64(*x)))),
            Array::String(v) => v.iter().for_each(|x| nested(o, 1, |o| bytes_field(o, 1, x.as_str().as_bytes()))),
            _ => {}
        }),
        _ => {}
    }
}

fn attributes(out: &mut Vec<u8>, field: u32, kvs: &[KeyValue]) {
    for kv in kvs {
        nested(out, field, |o| {
            if !kv.key.as_str().is_empty() {
                bytes_field(o, 1, kv.key.as_str().as_bytes());
            }
            nested(o, 2, |o| any_value(o, &kv.value));
        });
    }
}

fn nanos(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0)
}

fn kind(k: &SpanKind) -> u64 {
    match k {
        SpanKind::Internal => 1,
        SpanKind::Server => 2,
        SpanKind::Client => 3,
        SpanKind::Producer => 4,
        SpanKind::Consumer => 5,
    }
}

/// OTLP span flags: W3C flags plus the "has is_remote" bit (0x100) and the
/// "is remote" bit (0x200) for a remote parent.
fn flags(remote: bool, trace_flags: u8) -> u32 {
    trace_flags as u32 | 0x100 | if remote { 0x200 } else { 0 }
}

fn string_field(out: &mut Vec<u8>, field: u32, s: &str) {
    if !s.is_empty() {
        bytes_field(out, field, s.as_bytes());
    }
}

fn span(out: &mut Vec<u8>, s: &SpanData) {
    let sc = &s.span_context;
    bytes_field(out, 1, &sc.trace_id().to_bytes());
    bytes_field(out, 2, &sc.span_id().to_bytes());
    string_field(out, 3, &sc.trace_state().header());
    if s.parent_span_id != SpanId::INVALID {
        bytes_field(out, 4, &s.parent_span_id.to_bytes());
    }
    string_field(out, 5, &s.name);
    uint_field(out, 6, kind(&s.span_kind));
    fixed64_field(out, 7, nanos(s.start_time));
    fixed64_field(out, 8, nanos(s.end_time));
    attributes(out, 9, &s.attributes);
    uint_field(out, 10, s.dropped_attributes_count as u64);
    for e in s.events.iter() {
        nested(out, 11, |o| {
            fixed64_field(o, 1, nanos(e.timestamp));
            string_field(o, 2, &e.name);
            attributes(o, 3, &e.attributes);
            uint_field(o, 4, e.dropped_attributes_count as u64);
        });
    }
    uint_field(out, 12, s.events.dropped_count as u64);
    for l in s.links.iter() {
        nested(out, 13, |o| {
            bytes_field(o, 1, &l.span_context.trace_id().to_bytes());
            bytes_field(o, 2, &l.span_context.span_id().to_bytes());
            string_field(o, 3, &l.span_context.trace_state().header());
            attributes(o, 4, &l.attributes);
            uint_field(o, 5, l.dropped_attributes_count as u64);
            fixed32_field(o, 6, flags(l.span_context.is_remote(), l.span_context.trace_flags().to_u8()));
        });
    }
    uint_field(out, 14, s.links.dropped_count as u64);
    nested(out, 15, |o| match &s.status {
        Status::Unset => {}
        Status::Ok => uint_field(o, 3, 1),
        Status::Error { description } => {
            string_field(o, 2, description);
            uint_field(o, 3, 2);
        }
    });
    fixed32_field(out, 16, flags(s.parent_span_is_remote, sc.trace_flags().to_u8()));
}

/// Encoded resource, reused for every request.
pub(crate) struct EncodedResource {
    resource: Vec<u8>,
    schema_url: String,
}

impl EncodedResource {
    pub(crate) fn new(r: &ResourceAttributesWithSchema) -> EncodedResource {
        let pb = PbResource { attributes: r.attributes.0.clone(), dropped_attributes_count: 0, entity_refs: vec![] };
        EncodedResource { resource: pb.encode_to_vec(), schema_url: r.schema_url.clone().unwrap_or_default() }
    }
}

fn scope_bytes(scope: &InstrumentationScope) -> Vec<u8> {
    PbScope::from((scope, None)).encode_to_vec()
}

/// Encode spans as one `ExportTraceServiceRequest` (one resource, spans
/// grouped by instrumentation scope in order of first appearance).
pub(crate) fn encode_request(spans: &[SpanData], res: &EncodedResource) -> Vec<u8> {
    let mut groups: Vec<(&InstrumentationScope, Vec<&SpanData>)> = Vec::new();
    for s in spans {
        match groups.iter_mut().find(|(sc, _)| **sc == s.instrumentation_scope) {
            Some((_, v)) => v.push(s),
            None => groups.push((&s.instrumentation_scope, vec![s])),
        }
    }
    let mut out = Vec::with_capacity(64 + spans.len() * 320 + res.resource.len());
    nested(&mut out, 1, |o| {
        bytes_field(o, 1, &res.resource);
        for (scope, members) in &groups {
            nested(o, 2, |o| {
                bytes_field(o, 1, &scope_bytes(scope));
                for s in members {
                    nested(o, 2, |o| span(o, s));
                }
                string_field(o, 3, scope.schema_url().unwrap_or(""));
            });
        }
        string_field(o, 3, &res.schema_url);
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry::trace::{
        Link, Span as _, SpanContext, TraceContextExt, TraceFlags, TraceId, TraceState, Tracer, TracerProvider,
    };
    use opentelemetry::Context;
    use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
    use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider};
    use opentelemetry_sdk::Resource;

    fn official(spans: Vec<SpanData>, r: &ResourceAttributesWithSchema) -> ExportTraceServiceRequest {
        ExportTraceServiceRequest { resource_spans: super::super::otlp::to_proto(spans, r) }
    }

    #[test]
    fn varints_and_long_messages() {
        let mut v = Vec::new();
        varint(&mut v, 300);
        assert_eq!(v, [0xac, 0x02]);
        let mut out = Vec::new();
        nested(&mut out, 1, |o| o.extend_from_slice(&[7u8; 200]));
        assert_eq!(&out[..3], &[0x0a, 0xc8, 0x01]);
        assert_eq!(out.len(), 203);
    }

    #[test]
    fn same_messages_as_the_official_transform() {
        let exp = InMemorySpanExporter::default();
        let provider = SdkTracerProvider::builder().with_simple_exporter(exp.clone()).build();
        let t1 = provider
            .tracer_with_scope(InstrumentationScope::builder("r.package.mcplite").with_version("0.1.0").build());
        let t2 = provider.tracer("other");
        let parent = SpanContext::new(
            TraceId::from_hex("4bf92f3577b34da6a3ce929d0e0e4736").unwrap(),
            SpanId::from_hex("00f067aa0ba902b7").unwrap(),
            TraceFlags::SAMPLED,
            true,
            "a=1,b=2".parse::<TraceState>().unwrap(),
        );
        let cx = Context::new().with_remote_span_context(parent.clone());
        let long = "x".repeat(300);
        let mut s = t1
            .span_builder("tools/call echo")
            .with_kind(SpanKind::Server)
            .with_attributes([
                KeyValue::new("s", "v"),
                KeyValue::new("empty", ""),
                KeyValue::new("long", long.clone()),
                KeyValue::new("b", false),
                KeyValue::new("i", -5i64),
                KeyValue::new("f", 0.25),
                KeyValue::new("arr", Value::Array(Array::I64(vec![1, 0, -1]))),
                KeyValue::new("sarr", Value::Array(Array::String(vec!["p".into(), "".into()]))),
            ])
            .with_links(vec![Link::with_context(parent.clone())])
            .start_with_context(&t1, &cx);
        s.add_event("ev", vec![KeyValue::new("k", 1i64)]);
        s.set_status(Status::error("Invalid params"));
        s.end();
        t2.in_span("plain", |_| {});
        t1.span_builder("ok").start(&t1).end();
        let mut s = t1.start("okstatus");
        s.set_status(Status::Ok);
        s.end();
        let spans = exp.get_finished_spans().unwrap();
        assert_eq!(spans.len(), 4);
        let res = Resource::builder_empty()
            .with_service_name("R")
            .with_attribute(KeyValue::new("deployment.environment", "ci"))
            .build();
        let r: ResourceAttributesWithSchema = (&res).into();
        let mine = encode_request(&spans, &EncodedResource::new(&r));
        let decoded = ExportTraceServiceRequest::decode(mine.as_slice()).unwrap();
        assert_eq!(decoded, official(spans, &r));
        assert_eq!(decoded.resource_spans[0].scope_spans.len(), 2);
    }
}
