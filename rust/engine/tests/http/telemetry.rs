//! Telemetry over HTTP (RULES T1, T10): the HTTP SERVER span and the MCP
//! span it parents, legacy session ids on spans, concurrent requests each
//! with their own span, refused connections traced, and the duration of
//! legacy sessions.

use std::net::TcpStream;
use std::time::Duration;

use mcplite_engine::telemetry::OtelRecorder;
use mcplite_engine::transport::http::HttpOptions;
use opentelemetry::trace::{SpanId, SpanKind, Status, TraceId};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::{json, Value};

use super::{
    agent, call_params, collect, get, initialize, modern_body, modern_post, opts, post, raw_exchange, start_traced,
    Running, MODERN,
};

#[test]
fn a_connection_over_the_limit_gets_an_http_span_too() {
    // The 503 of RULES H1.4 is traced like any answer (RULES T10), so an
    // operator sees the refused requests.
    let (r, exporter) =
        start_with_spans(HttpOptions { max_connections: 1, header_timeout: Duration::from_secs(60), ..opts() });
    let health = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    let mut held = TcpStream::connect(r.addr).unwrap();
    assert!(raw_exchange(&mut held, health).starts_with("HTTP/1.1 200 "));
    let mut s = TcpStream::connect(r.addr).unwrap();
    let out = raw_exchange(&mut s, health);
    assert!(out.starts_with("HTTP/1.1 503 "), "{out}");
    let spans = spans_after(&exporter, 2);
    let codes: Vec<String> = spans.iter().map(|s| span_attrs(s)["http.response.status_code"].clone()).collect();
    assert_eq!(codes, ["200", "503"], "{spans:#?}");
    let busy = &spans[1];
    assert_eq!(busy.name, "GET /health");
    assert_eq!(busy.span_kind, SpanKind::Server);
    assert_eq!(busy.status, Status::error(""));
    let a = span_attrs(busy);
    assert_eq!(a["error.type"], "503");
    assert_eq!(a["client.address"], "127.0.0.1");
    assert_eq!(a["http.route"], "/health");
}

/// A server recording spans into an in-memory exporter.
fn start_with_spans(o: HttpOptions) -> (Running, InMemorySpanExporter) {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder().with_simple_exporter(exporter.clone()).build();
    (start_traced(o, Some(Box::new(OtelRecorder::from_provider(provider)))), exporter)
}

type SpanAttrs = std::collections::HashMap<String, String>;

fn span_attrs(s: &SpanData) -> SpanAttrs {
    s.attributes.iter().map(|kv| (kv.key.to_string(), kv.value.to_string())).collect()
}

/// The finished spans once `n` have ended (the HTTP span ends after its
/// response is sent; hang guard only).
fn spans_after(exporter: &InMemorySpanExporter, n: usize) -> Vec<SpanData> {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let spans = exporter.get_finished_spans().unwrap();
        if spans.len() >= n || std::time::Instant::now() > deadline {
            return spans;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn tp_of(trace: &str, span: &str) -> String {
    format!("00-{trace}-{span}-01")
}

#[test]
fn http_server_span_parents_the_mcp_span() {
    // RULES T10: one HTTP SERVER span per request (HTTP conventions), the
    // parent of the MCP span; a traceparent header is its parent.
    let (r, exporter) = start_with_spans(opts());
    let url = r.url("/mcp");
    let (trace, caller) = ("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7");
    let tp = tp_of(trace, caller);
    let g = post(
        &url,
        &[("MCP-Protocol-Version", MODERN), ("Mcp-Method", "tools/list"), ("traceparent", &tp)],
        &modern_body(1, "tools/list", json!({})),
    );
    assert_eq!(g.status, 200, "{}", g.body);
    let spans = spans_after(&exporter, 2);
    assert_eq!(spans.len(), 2, "{spans:#?}");
    let (mcp, http) = (&spans[0], &spans[1]);
    assert_eq!(http.name, "POST /mcp");
    assert_eq!(http.span_kind, SpanKind::Server);
    assert_eq!(http.span_context.trace_id(), TraceId::from_hex(trace).unwrap());
    assert_eq!(http.parent_span_id, SpanId::from_hex(caller).unwrap());
    let a = span_attrs(http);
    let port = r.addr.port().to_string();
    for (k, v) in [
        ("http.request.method", "POST"),
        ("http.route", "/mcp"),
        ("url.path", "/mcp"),
        ("url.scheme", "http"),
        ("http.response.status_code", "200"),
        ("server.address", "127.0.0.1"),
        ("server.port", port.as_str()),
        ("client.address", "127.0.0.1"),
        ("network.protocol.name", "http"),
        ("network.protocol.version", "1.1"),
    ] {
        assert_eq!(a.get(k).map(String::as_str), Some(v), "{k} in {a:?}");
    }
    assert!(!a.contains_key("error.type"), "{a:?}");
    assert_eq!(http.status, Status::Unset);
    // The MCP span: a child of the HTTP span, in the caller's trace.
    assert_eq!(mcp.name, "tools/list");
    assert_eq!(mcp.span_kind, SpanKind::Server);
    assert_eq!(mcp.span_context.trace_id(), TraceId::from_hex(trace).unwrap());
    assert_eq!(mcp.parent_span_id, http.span_context.span_id());
    assert!(mcp.links.is_empty());
    let m = span_attrs(mcp);
    assert_eq!(m["network.transport"], "tcp");
    assert_eq!(m["network.protocol.name"], "http");
    assert_eq!(m["client.address"], "127.0.0.1");
    assert_eq!(m["mcp.protocol.version"], MODERN);

    // Both present: `_meta.traceparent` parents the MCP span and the HTTP
    // span (the header's child) becomes a link (precedence, RULES T10).
    let mut body: Value = serde_json::from_str(&modern_body(2, "tools/list", json!({}))).unwrap();
    let body_trace = "11111111111111111111111111111111";
    body["params"]["_meta"]["traceparent"] = json!(tp_of(body_trace, "2222222222222222"));
    let g = post(
        &url,
        &[("MCP-Protocol-Version", MODERN), ("Mcp-Method", "tools/list"), ("traceparent", &tp)],
        &body.to_string(),
    );
    assert_eq!(g.status, 200, "{}", g.body);
    let spans = spans_after(&exporter, 4);
    let (mcp, http) = (&spans[2], &spans[3]);
    assert_eq!(http.span_context.trace_id(), TraceId::from_hex(trace).unwrap());
    assert_eq!(http.parent_span_id, SpanId::from_hex(caller).unwrap());
    assert_eq!(mcp.span_context.trace_id(), TraceId::from_hex(body_trace).unwrap());
    assert_eq!(mcp.parent_span_id, SpanId::from_hex("2222222222222222").unwrap());
    assert_eq!(mcp.links.len(), 1);
    assert_eq!(mcp.links[0].span_context.span_id(), http.span_context.span_id());

    // A tool call (run on the tool thread) and errors: 404 for an unknown
    // method is the client's error, so the HTTP span has no error.type and
    // an unset status (HTTP conventions for SERVER spans); the MCP span
    // records the JSON-RPC error.
    let g = modern_post(&url, "tools/call", Some("echo"), call_params("echo", json!({"a": 1})));
    assert_eq!(g.status, 200, "{}", g.body);
    let g = modern_post(&url, "nope/nope", None, json!({}));
    assert_eq!(g.status, 404, "{}", g.body);
    let g = get(&url);
    assert_eq!(g.status, 405);
    let g = collect(agent().post(&r.url("/elsewhere")).header("Content-Type", "application/json").send("{}").unwrap());
    assert_eq!(g.status, 404);
    let spans = spans_after(&exporter, 10);
    assert_eq!(spans.len(), 10, "{:#?}", spans.iter().map(|s| &s.name).collect::<Vec<_>>());
    let (call, call_http) = (&spans[4], &spans[5]);
    assert_eq!(call.name, "tools/call echo");
    assert_eq!(call.parent_span_id, call_http.span_context.span_id());
    // Run on the tool thread, the call's span still ends inside its parent.
    assert!(call.end_time <= call_http.end_time);
    assert_eq!(span_attrs(call_http)["http.response.status_code"], "200");
    assert_ne!(call.span_context.trace_id(), TraceId::from_hex(trace).unwrap(), "a new trace without a header");
    let (unknown, unknown_http) = (&spans[6], &spans[7]);
    assert_eq!(unknown.name, "_OTHER");
    assert_eq!(span_attrs(unknown)["error.type"], "-32601");
    let ua = span_attrs(unknown_http);
    assert_eq!(ua["http.response.status_code"], "404");
    assert!(!ua.contains_key("error.type"));
    assert_eq!(unknown_http.status, Status::Unset);
    // GET: an HTTP span only (no MCP message).
    assert_eq!(spans[8].name, "GET /mcp");
    assert_eq!(span_attrs(&spans[8])["http.response.status_code"], "405");
    // No route matched: the span is named by the method alone.
    assert_eq!(spans[9].name, "POST");
    let ea = span_attrs(&spans[9]);
    assert_eq!(ea["url.path"], "/elsewhere");
    assert!(!ea.contains_key("http.route"));
}

#[test]
fn legacy_session_id_on_message_spans() {
    // A legacy request names its session (`mcp.session.id`).
    let (r, exporter) = start_with_spans(opts());
    let url = r.url("/mcp");
    let sid = initialize(&url, "2025-06-18");
    let g = post(&url, &[("Mcp-Session-Id", sid.as_str())], r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    assert_eq!(g.status, 200, "{}", g.body);
    let spans = spans_after(&exporter, 4);
    let init = span_attrs(&spans[0]);
    assert_eq!(init["mcp.method.name"], "initialize");
    assert!(!init.contains_key("mcp.session.id"), "minted after the message was handled");
    let list = span_attrs(&spans[2]);
    assert_eq!(list["mcp.session.id"], sid);
    assert_eq!(list["mcp.protocol.version"], "2025-06-18");
}

#[test]
fn concurrent_requests_each_get_their_own_span() {
    // RULES T1/T10: requests answered at the same time on the HTTP threads
    // each have their own span, parent and attributes.
    let (r, exporter) = start_with_spans(HttpOptions { threads: 4, ..opts() });
    let url = r.url("/mcp");
    let (threads, per) = (8, 25);
    let sent: Vec<(i64, String, String)> = std::thread::scope(|sc| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let url = url.clone();
                sc.spawn(move || {
                    let mut sent = Vec::new();
                    for i in 0..per {
                        let id = (t * 1000 + i) as i64;
                        let trace = format!("{:032x}", 0xabc0_0000_u64 + id as u64);
                        let parent = format!("{:016x}", 0x5000_u64 + id as u64);
                        let method = if i % 2 == 0 { "tools/list" } else { "server/discover" };
                        let mut body: Value = serde_json::from_str(&modern_body(id, method, json!({}))).unwrap();
                        body["params"]["_meta"]["traceparent"] = json!(tp_of(&trace, &parent));
                        let g =
                            post(&url, &[("MCP-Protocol-Version", MODERN), ("Mcp-Method", method)], &body.to_string());
                        assert_eq!(g.status, 200, "{}", g.body);
                        assert_eq!(g.json()["id"], id);
                        sent.push((id, trace, parent));
                    }
                    sent
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    let n = threads * per;
    let spans = spans_after(&exporter, 2 * n);
    let mcp: Vec<&SpanData> = spans.iter().filter(|s| span_attrs(s).contains_key("mcp.method.name")).collect();
    assert_eq!(mcp.len(), n);
    let https: std::collections::HashMap<SpanId, &SpanData> =
        spans.iter().filter(|s| s.name == "POST /mcp").map(|s| (s.span_context.span_id(), s)).collect();
    assert_eq!(https.len(), n);
    let mut seen = std::collections::HashSet::new();
    for s in mcp {
        let a = span_attrs(s);
        let id: i64 = a["jsonrpc.request.id"].parse().unwrap();
        assert!(seen.insert(id), "one span per request");
        let (_, trace, parent) = sent.iter().find(|(i, _, _)| *i == id).unwrap();
        assert_eq!(s.span_context.trace_id(), TraceId::from_hex(trace).unwrap(), "request {id}");
        assert_eq!(s.parent_span_id, SpanId::from_hex(parent).unwrap(), "request {id}");
        let method = if id % 1000 % 2 == 0 { "tools/list" } else { "server/discover" };
        assert_eq!(s.name, method, "request {id}");
        assert_eq!(a["mcp.method.name"], method);
        // Its own HTTP span is linked, and no other request's.
        assert_eq!(s.links.len(), 1);
        let http = https[&s.links[0].span_context.span_id()];
        assert!(s.start_time >= http.start_time && s.end_time <= http.end_time, "request {id}");
    }
}

#[test]
fn http_legacy_session_durations() {
    // `mcp.server.session.duration` for HTTP sessions: ended by DELETE, by
    // idle expiry and by the server's shutdown; one measurement each.
    use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
    use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
    let exporter = InMemoryMetricExporter::default();
    let reader = PeriodicReader::builder(exporter.clone()).with_interval(Duration::from_secs(3600)).build();
    let provider = SdkMeterProvider::builder().with_reader(reader).build();
    let rec = mcplite_engine::telemetry::MetricsRecorder::from_provider(provider.clone());
    let idle = Duration::from_millis(400);
    let mut r = start_traced(HttpOptions { session_idle: idle, ..opts() }, Some(Box::new(rec)));
    let url = r.url("/mcp");
    // (version, count, sum) of every session point in the last export.
    let sessions = || {
        let mut got: Vec<(String, u64, f64)> = Vec::new();
        let all = exporter.get_finished_metrics().unwrap();
        for sm in all.last().map(|rm| rm.scope_metrics().collect::<Vec<_>>()).unwrap_or_default() {
            for m in sm.metrics().filter(|m| m.name() == "mcp.server.session.duration") {
                let AggregatedMetrics::F64(MetricData::Histogram(h)) = m.data() else { panic!("not a histogram") };
                for dp in h.data_points() {
                    let a: SpanAttrs = dp.attributes().map(|kv| (kv.key.to_string(), kv.value.to_string())).collect();
                    assert_eq!(a["network.transport"], "tcp");
                    assert_eq!(a["network.protocol.name"], "http");
                    got.push((a["mcp.protocol.version"].clone(), dp.count(), dp.sum()));
                }
            }
        }
        got.sort_by(|a, b| a.0.cmp(&b.0));
        got
    };
    let versions = |got: &[(String, u64, f64)]| got.iter().map(|g| (g.0.clone(), g.1)).collect::<Vec<_>>();
    let v = |s: &str, n: u64| (s.to_string(), n);
    // Two sessions open at once: a new one does not end the other.
    let expired = initialize(&url, "2025-11-25");
    let deleted = initialize(&url, "2025-06-18");
    let g = collect(agent().delete(&url).header("Mcp-Session-Id", &deleted).call().unwrap());
    assert_eq!(g.status, 200);
    provider.force_flush().unwrap();
    assert_eq!(versions(&sessions()), [v("2025-06-18", 1)], "ended by DELETE, and only that one");
    std::thread::sleep(idle + Duration::from_millis(200));
    let list = |sid: &str| post(&url, &[("Mcp-Session-Id", sid)], r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    assert_eq!(list(&expired).status, 404, "expired");
    let open = initialize(&url, "2024-11-05");
    assert_eq!(list(&open).status, 200);
    provider.force_flush().unwrap();
    assert_eq!(versions(&sessions()), [v("2025-06-18", 1), v("2025-11-25", 1)], "ended by idle expiry");
    r.stop();
    let got = sessions();
    assert_eq!(versions(&got), [v("2024-11-05", 1), v("2025-06-18", 1), v("2025-11-25", 1)], "ended by shutdown");
    // The expired session lasted at least its idle time (it ended when that
    // ran out, not when it was next looked at).
    assert!(got[2].2 >= idle.as_secs_f64(), "{got:?}");
}
