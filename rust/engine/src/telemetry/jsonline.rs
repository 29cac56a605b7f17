//! OTLP/JSON encoding (the OTLP specification's JSON mapping: camelCase
//! field names, trace and span ids as hex, 64-bit integers as strings, enums
//! as numbers, default values omitted) of an `ExportTraceServiceRequest`.
//! The `stderr` exporter writes one such object per line.

use opentelemetry_proto::tonic::common::v1::{any_value, AnyValue, KeyValue};
use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, Span};

use crate::json::{write_i64, write_shortest_f64, write_str};

fn hex(out: &mut Vec<u8>, b: &[u8]) {
    const H: &[u8; 16] = b"0123456789abcdef";
    out.push(b'"');
    for x in b {
        out.push(H[(x >> 4) as usize]);
        out.push(H[(x & 15) as usize]);
    }
    out.push(b'"');
}

fn key(out: &mut Vec<u8>, first: &mut bool, k: &str) {
    if !*first {
        out.push(b',');
    }
    *first = false;
    out.push(b'"');
    out.extend_from_slice(k.as_bytes());
    out.extend_from_slice(b"\":");
}

fn any_value(out: &mut Vec<u8>, v: &AnyValue) {
    out.push(b'{');
    match &v.value {
        None => {}
        Some(any_value::Value::StringValue(s)) => {
            out.extend_from_slice(b"\"stringValue\":");
            write_str(out, s);
        }
        Some(any_value::Value::BoolValue(b)) => {
            out.extend_from_slice(if *b { b"\"boolValue\":true" } else { b"\"boolValue\":false" });
        }
        Some(any_value::Value::IntValue(i)) => {
            out.extend_from_slice(b"\"intValue\":\"");
            write_i64(out, *i);
            out.push(b'"');
        }
        Some(any_value::Value::DoubleValue(d)) => {
            out.extend_from_slice(b"\"doubleValue\":");
            if d.is_finite() {
                write_shortest_f64(out, *d);
            } else if d.is_nan() {
                out.extend_from_slice(b"\"NaN\"");
            } else if *d > 0.0 {
                out.extend_from_slice(b"\"Infinity\"");
            } else {
                out.extend_from_slice(b"\"-Infinity\"");
            }
        }
        Some(any_value::Value::ArrayValue(a)) => {
            out.extend_from_slice(b"\"arrayValue\":{\"values\":[");
            for (i, x) in a.values.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                any_value(out, x);
            }
            out.extend_from_slice(b"]}");
        }
        Some(any_value::Value::KvlistValue(l)) => {
            out.extend_from_slice(b"\"kvlistValue\":{\"values\":");
            attributes(out, &l.values);
            out.push(b'}');
        }
        Some(any_value::Value::BytesValue(b)) => {
            // Bytes values are base64 in OTLP/JSON; mcplite never records any.
            out.extend_from_slice(b"\"bytesValue\":\"");
            const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
            for c in b.chunks(3) {
                let n = (c[0] as u32) << 16 | (*c.get(1).unwrap_or(&0) as u32) << 8 | *c.get(2).unwrap_or(&0) as u32;
                out.push(B64[(n >> 18) as usize & 63]);
                out.push(B64[(n >> 12) as usize & 63]);
                out.push(if c.len() > 1 { B64[(n >> 6) as usize & 63] } else { b'=' });
                out.push(if c.len() > 2 { B64[n as usize & 63] } else { b'=' });
            }
            out.push(b'"');
        }
        Some(any_value::Value::StringValueStrindex(_)) => {}
    }
    out.push(b'}');
}

fn attributes(out: &mut Vec<u8>, kvs: &[KeyValue]) {
    out.push(b'[');
    for (i, kv) in kvs.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"key\":");
        write_str(out, &kv.key);
        out.extend_from_slice(b",\"value\":");
        match &kv.value {
            Some(v) => any_value(out, v),
            None => out.extend_from_slice(b"{}"),
        }
        out.push(b'}');
    }
    out.push(b']');
}

fn span(out: &mut Vec<u8>, s: &Span) {
    let mut f = true;
    out.push(b'{');
    key(out, &mut f, "traceId");
    hex(out, &s.trace_id);
    key(out, &mut f, "spanId");
    hex(out, &s.span_id);
    if !s.trace_state.is_empty() {
        key(out, &mut f, "traceState");
        write_str(out, &s.trace_state);
    }
    if !s.parent_span_id.is_empty() {
        key(out, &mut f, "parentSpanId");
        hex(out, &s.parent_span_id);
    }
    if s.flags != 0 {
        key(out, &mut f, "flags");
        out.extend_from_slice(s.flags.to_string().as_bytes());
    }
    key(out, &mut f, "name");
    write_str(out, &s.name);
    key(out, &mut f, "kind");
    out.extend_from_slice(s.kind.to_string().as_bytes());
    key(out, &mut f, "startTimeUnixNano");
    out.extend_from_slice(format!("\"{}\"", s.start_time_unix_nano).as_bytes());
    key(out, &mut f, "endTimeUnixNano");
    out.extend_from_slice(format!("\"{}\"", s.end_time_unix_nano).as_bytes());
    if !s.attributes.is_empty() {
        key(out, &mut f, "attributes");
        attributes(out, &s.attributes);
    }
    if s.dropped_attributes_count != 0 {
        key(out, &mut f, "droppedAttributesCount");
        out.extend_from_slice(s.dropped_attributes_count.to_string().as_bytes());
    }
    key(out, &mut f, "status");
    out.push(b'{');
    let mut g = true;
    if let Some(st) = &s.status {
        if !st.message.is_empty() {
            key(out, &mut g, "message");
            write_str(out, &st.message);
        }
        if st.code != 0 {
            key(out, &mut g, "code");
            out.extend_from_slice(st.code.to_string().as_bytes());
        }
    }
    out.push(b'}');
    out.push(b'}');
}

/// Write `{"resourceSpans":[...]}`.
pub(crate) fn write_request(out: &mut Vec<u8>, rs: &[ResourceSpans]) {
    out.extend_from_slice(b"{\"resourceSpans\":[");
    for (i, r) in rs.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        let mut f = true;
        out.push(b'{');
        if let Some(res) = &r.resource {
            key(out, &mut f, "resource");
            out.extend_from_slice(b"{\"attributes\":");
            attributes(out, &res.attributes);
            out.push(b'}');
        }
        key(out, &mut f, "scopeSpans");
        out.push(b'[');
        for (j, ss) in r.scope_spans.iter().enumerate() {
            if j > 0 {
                out.push(b',');
            }
            let mut g = true;
            out.push(b'{');
            if let Some(sc) = &ss.scope {
                key(out, &mut g, "scope");
                out.extend_from_slice(b"{\"name\":");
                write_str(out, &sc.name);
                if !sc.version.is_empty() {
                    out.extend_from_slice(b",\"version\":");
                    write_str(out, &sc.version);
                }
                out.push(b'}');
            }
            key(out, &mut g, "spans");
            out.push(b'[');
            for (k, s) in ss.spans.iter().enumerate() {
                if k > 0 {
                    out.push(b',');
                }
                span(out, s);
            }
            out.push(b']');
            if !ss.schema_url.is_empty() {
                key(out, &mut g, "schemaUrl");
                write_str(out, &ss.schema_url);
            }
            out.push(b'}');
        }
        out.push(b']');
        if !r.schema_url.is_empty() {
            key(out, &mut f, "schemaUrl");
            write_str(out, &r.schema_url);
        }
        out.push(b'}');
    }
    out.extend_from_slice(b"]}");
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry::trace::{Span as _, SpanKind, Status, Tracer, TracerProvider};
    use opentelemetry::KeyValue as Kv;
    use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider};
    use opentelemetry_sdk::Resource;

    #[test]
    fn otlp_json_line_shape() {
        let exp = InMemorySpanExporter::default();
        let provider = SdkTracerProvider::builder().with_simple_exporter(exp.clone()).build();
        let tracer = provider.tracer("r.package.mcplite");
        let mut s = tracer
            .span_builder("tools/call \"q\"")
            .with_kind(SpanKind::Server)
            .with_attributes([Kv::new("a", "x\ny"), Kv::new("n", 3i64), Kv::new("b", true)])
            .start(&tracer);
        s.set_status(Status::error("Invalid params"));
        s.end();
        let spans = exp.get_finished_spans().unwrap();
        let res = Resource::builder_empty().with_service_name("R").build();
        let rs = super::super::otlp::to_proto(spans.clone(), &(&res).into());
        let mut out = Vec::new();
        write_request(&mut out, &rs);
        assert!(!out.contains(&b'\n'));
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        let r = &v["resourceSpans"][0];
        assert_eq!(r["resource"]["attributes"][0]["key"], "service.name");
        assert_eq!(r["resource"]["attributes"][0]["value"]["stringValue"], "R");
        let ss = &r["scopeSpans"][0];
        assert_eq!(ss["scope"]["name"], "r.package.mcplite");
        let sp = &ss["spans"][0];
        assert_eq!(sp["name"], "tools/call \"q\"");
        assert_eq!(sp["kind"], 2);
        assert_eq!(sp["traceId"], spans[0].span_context.trace_id().to_string());
        assert_eq!(sp["spanId"], spans[0].span_context.span_id().to_string());
        assert!(sp.get("parentSpanId").is_none());
        assert_eq!(sp["attributes"][0]["value"]["stringValue"], "x\ny");
        assert_eq!(sp["attributes"][1]["value"]["intValue"], "3");
        assert_eq!(sp["attributes"][2]["value"]["boolValue"], true);
        assert_eq!(sp["status"]["code"], 2);
        assert_eq!(sp["status"]["message"], "Invalid params");
        let start: u64 = sp["startTimeUnixNano"].as_str().unwrap().parse().unwrap();
        let end: u64 = sp["endTimeUnixNano"].as_str().unwrap().parse().unwrap();
        assert!(start > 1_600_000_000_000_000_000 && end >= start);
    }
}
