//! MCP metrics inside the engine: a real `Server` driven through transcripts,
//! the histograms read back from the OpenTelemetry SDK's in-memory exporter.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::common::{new_server, FakeHost};
use mcplite_engine::server::LegacyState;
use mcplite_engine::telemetry::{
    Limits, MetricsRecorder, OPERATION_DURATION, OPERATION_DURATION_BOUNDARIES, SCHEMA_URL, SCOPE_NAME,
    SESSION_DURATION,
};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData, ResourceMetrics};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use serde_json::{json, Value};

type Attrs = BTreeMap<String, String>;

/// One histogram data point: its attributes, count, sum and bounds.
#[derive(Debug, Clone)]
struct Point {
    attrs: Attrs,
    count: u64,
    sum: f64,
    bounds: Vec<f64>,
}

fn provider(interval: Duration) -> (SdkMeterProvider, InMemoryMetricExporter) {
    let exporter = InMemoryMetricExporter::default();
    let reader = PeriodicReader::builder(exporter.clone()).with_interval(interval).build();
    (SdkMeterProvider::builder().with_reader(reader).build(), exporter)
}

/// The data points of histogram `name` in the last export.
fn points(all: &[ResourceMetrics], name: &str) -> Vec<Point> {
    let Some(rm) = all.last() else { return vec![] };
    let mut out = Vec::new();
    for sm in rm.scope_metrics() {
        assert_eq!(sm.scope().name(), SCOPE_NAME);
        assert_eq!(sm.scope().schema_url(), Some(SCHEMA_URL));
        for m in sm.metrics().filter(|m| m.name() == name) {
            assert_eq!(m.unit(), "s");
            let AggregatedMetrics::F64(MetricData::Histogram(h)) = m.data() else {
                panic!("{name} is not a histogram")
            };
            for dp in h.data_points() {
                out.push(Point {
                    attrs: dp.attributes().map(|kv| (kv.key.to_string(), kv.value.to_string())).collect(),
                    count: dp.count(),
                    sum: dp.sum(),
                    bounds: dp.bounds().collect(),
                });
            }
        }
    }
    out
}

fn attrs(pairs: &[(&str, &str)]) -> Attrs {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

fn line(v: Value) -> String {
    v.to_string()
}

fn init(id: i64) -> String {
    line(json!({"jsonrpc":"2.0","id":id,"method":"initialize","params":{
        "protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}))
}

fn call(id: i64, name: &str, args: Value) -> String {
    line(json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":name,"arguments":args}}))
}

/// Run `lines` through a server with the metrics recorder, end the session
/// (end of input, as the stdio loop does), then shut down (the final
/// export). Returns everything exported.
fn run(lines: &[String], limits: Limits) -> Vec<ResourceMetrics> {
    let (provider, exporter) = provider(Duration::from_secs(3600));
    let mut host = FakeHost::default();
    let mut srv = new_server(&mut host);
    let mut legacy = LegacyState::default();
    srv.set_recorder(Some(Box::new(MetricsRecorder::from_provider(provider).with_limits(limits))));
    for l in lines {
        drop(srv.handle(&mut legacy, l.as_bytes(), &mut host));
    }
    srv.end_session(&mut legacy);
    // Once only.
    srv.end_session(&mut legacy);
    srv.shutdown_recorder();
    exporter.get_finished_metrics().unwrap()
}

#[test]
fn one_measurement_per_message_with_bounded_attributes() {
    let long_method = "m".repeat(5000);
    let long_tool = "t".repeat(5000);
    let lines = vec![
        line(json!({"jsonrpc":"2.0","id":0,"method":"tools/list"})), // before initialize
        init(1),
        line(json!({"jsonrpc":"2.0","method":"notifications/initialized"})),
        line(json!({"jsonrpc":"2.0","id":2,"method":"tools/list"})),
        call(3, "echo", json!({"secret":"s3cr3t"})),
        call(4, "echo", json!({})),
        call(5, "fail", json!({})),
        call(6, &long_tool, json!({})),
        line(json!({"jsonrpc":"2.0","id":7,"method":long_method})),
        line(json!({"jsonrpc":"2.0","id":"x","method":"ping"})),
        line(json!({"jsonrpc":"2.0","id":8,"method":"tools/list","params":{"_meta":{
            "io.modelcontextprotocol/protocolVersion":"2026-07-28",
            "io.modelcontextprotocol/clientCapabilities":{}}}})),
        // Not envelope-valid: no measurement.
        "{not json".to_string(),
        line(json!({"jsonrpc":"2.0","id":9,"result":{}})),
    ];
    let all = run(&lines, Limits::default());
    let ops = points(&all, OPERATION_DURATION);
    let total: u64 = ops.iter().map(|p| p.count).sum();
    assert_eq!(total, 11, "{ops:#?}");
    for p in &ops {
        assert_eq!(p.bounds, OPERATION_DURATION_BOUNDARIES);
        assert!(p.sum >= 0.0 && p.sum < 10.0);
        // Never per-request or client-chosen values.
        assert!(!p.attrs.contains_key("jsonrpc.request.id"));
        assert!(!p.attrs.contains_key("rpc.method_original"));
        assert!(p.attrs.values().all(|v| v.len() <= 32), "{:?}", p.attrs);
        assert_eq!(p.attrs["network.transport"], "pipe");
    }
    let find = |want: Attrs| {
        ops.iter().find(|p| p.attrs == want).unwrap_or_else(|| panic!("no point {want:?} in {ops:#?}")).count
    };
    let legacy = "2025-06-18";
    fn with(m: &'static str, extra: &[(&'static str, &'static str)]) -> Attrs {
        let mut v = vec![("mcp.method.name", m), ("network.transport", "pipe")];
        v.extend_from_slice(extra);
        attrs(&v)
    }
    let call_attrs = |extra: &[(&'static str, &'static str)]| {
        let mut v = vec![("gen_ai.operation.name", "execute_tool"), ("mcp.protocol.version", "2025-06-18")];
        v.extend_from_slice(extra);
        with("tools/call", &v)
    };
    assert_eq!(find(with("tools/list", &[("error.type", "-32600"), ("rpc.response.status_code", "-32600")])), 1);
    assert_eq!(find(with("initialize", &[("mcp.protocol.version", legacy)])), 1);
    assert_eq!(find(with("notifications/initialized", &[("mcp.protocol.version", legacy)])), 1);
    assert_eq!(find(with("tools/list", &[("mcp.protocol.version", legacy)])), 1);
    assert_eq!(find(call_attrs(&[("gen_ai.tool.name", "echo")])), 2);
    assert_eq!(find(call_attrs(&[("gen_ai.tool.name", "fail"), ("error.type", "tool_error")])), 1);
    // An unknown tool: no tool name at all.
    assert_eq!(find(call_attrs(&[("error.type", "-32602"), ("rpc.response.status_code", "-32602")])), 1);
    // An unknown method: _OTHER.
    assert_eq!(
        find(with(
            "_OTHER",
            &[("mcp.protocol.version", legacy), ("error.type", "-32601"), ("rpc.response.status_code", "-32601")]
        )),
        1
    );
    assert_eq!(find(with("ping", &[("mcp.protocol.version", legacy)])), 1);
    assert_eq!(find(with("tools/list", &[("mcp.protocol.version", "2026-07-28")])), 1);

    // One legacy session, from initialize to the end of input.
    let sessions = points(&all, SESSION_DURATION);
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0].count, 1);
    assert_eq!(sessions[0].attrs, attrs(&[("mcp.protocol.version", legacy), ("network.transport", "pipe")]));
}

#[test]
fn sessions_end_at_the_next_initialize_and_at_end_of_input() {
    let lines = vec![
        init(1),
        line(json!({"jsonrpc":"2.0","id":2,"method":"initialize","params":{
            "protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"c","version":"1"}}})),
        // A failed initialize opens nothing.
        line(json!({"jsonrpc":"2.0","id":3,"method":"initialize","params":{}})),
    ];
    let t0 = Instant::now();
    let all = run(&lines, Limits::default());
    let elapsed = t0.elapsed().as_secs_f64();
    let mut sessions = points(&all, SESSION_DURATION);
    sessions.sort_by(|a, b| a.attrs["mcp.protocol.version"].cmp(&b.attrs["mcp.protocol.version"]));
    assert_eq!(sessions.len(), 2, "{sessions:#?}");
    assert_eq!(sessions[0].attrs["mcp.protocol.version"], "2024-11-05");
    assert_eq!(sessions[1].attrs["mcp.protocol.version"], "2025-06-18");
    for s in &sessions {
        assert_eq!(s.count, 1);
        assert!(s.sum >= 0.0 && s.sum <= elapsed);
    }
    // Modern requests open no session.
    let modern = line(json!({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{
        "io.modelcontextprotocol/protocolVersion":"2026-07-28",
        "io.modelcontextprotocol/clientCapabilities":{}}}}));
    assert!(points(&run(&[modern], Limits::default()), SESSION_DURATION).is_empty());
}

#[test]
fn attribute_limit_applies_to_metrics() {
    let all =
        run(&[init(1), call(2, "structured", json!({}))], Limits { span_value_length: None, value_length: Some(5) });
    let ops = points(&all, OPERATION_DURATION);
    assert!(!ops.is_empty());
    for p in &ops {
        assert!(p.attrs.values().all(|v| v.chars().count() <= 5), "{:?}", p.attrs);
    }
    assert!(ops.iter().any(|p| p.attrs.get("gen_ai.tool.name").map(String::as_str) == Some("struc")));
}

#[test]
fn exported_periodically_without_shutdown() {
    let (provider, exporter) = provider(Duration::from_millis(50));
    let mut host = FakeHost::default();
    let mut srv = new_server(&mut host);
    let mut legacy = LegacyState::default();
    srv.set_recorder(Some(Box::new(MetricsRecorder::from_provider(provider))));
    drop(srv.handle(&mut legacy, init(1).as_bytes(), &mut host));
    // Hang guard only: the reader exports every 50 ms.
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut got = Vec::new();
    while got.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
        got = points(&exporter.get_finished_metrics().unwrap(), OPERATION_DURATION);
    }
    assert_eq!(got.iter().map(|p| p.count).sum::<u64>(), 1);
    srv.shutdown_recorder();
}
