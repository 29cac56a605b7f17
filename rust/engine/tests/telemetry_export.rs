//! The recorders built from environment variables, exporting spans and
//! metrics as OTLP/HTTP protobuf to a loopback receiver that decodes the
//! official OTLP messages.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::common::FakeHost;
use mcplite_engine::server::{LegacyState, Server, ServerInfo};
use mcplite_engine::telemetry::recorder_from_env;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{any_value, KeyValue};
use opentelemetry_proto::tonic::metrics::v1::{metric, HistogramDataPoint};
use prost::Message;
use serde_json::json;

struct Received {
    path: String,
    headers: Vec<String>,
    body: Vec<u8>,
}

/// Accept POSTs, answer 200, hand each request to the channel.
fn receiver() -> (u16, mpsc::Receiver<Received>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let s = match s {
                Ok(s) => s,
                Err(_) => return,
            };
            let mut r = BufReader::new(s.try_clone().unwrap());
            let mut first = String::new();
            r.read_line(&mut first).unwrap();
            let path = first.split(' ').nth(1).unwrap_or("").to_string();
            let mut headers = Vec::new();
            let mut len = 0;
            loop {
                let mut h = String::new();
                r.read_line(&mut h).unwrap();
                if h == "\r\n" || h.is_empty() {
                    break;
                }
                if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap();
                }
                headers.push(h.trim_end().to_string());
            }
            let mut body = vec![0; len];
            r.read_exact(&mut body).unwrap();
            (&s).write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n").unwrap();
            if tx.send(Received { path, headers, body }).is_err() {
                return;
            }
        }
    });
    (port, rx)
}

fn str_attr(kvs: &[KeyValue], key: &str) -> Option<String> {
    kvs.iter().find(|kv| kv.key == key).and_then(|kv| match &kv.value.as_ref()?.value {
        Some(any_value::Value::StringValue(s)) => Some(s.clone()),
        _ => None,
    })
}

#[test]
fn otlp_http_export_from_env() {
    let (port, rx) = receiver();
    let vars: HashMap<&str, String> = [
        ("OTEL_TRACES_EXPORTER", "otlp".to_string()),
        ("OTEL_EXPORTER_OTLP_ENDPOINT", format!("http://127.0.0.1:{port}")),
        ("OTEL_EXPORTER_OTLP_HEADERS", "x-team=mcp%20lite".to_string()),
        ("OTEL_SERVICE_NAME", "svc-test".to_string()),
        ("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=ci".to_string()),
        ("OTEL_BSP_SCHEDULE_DELAY", "50".to_string()),
    ]
    .into_iter()
    .collect();
    let rec = recorder_from_env(&|k| vars.get(k).cloned()).expect("tracing on");
    let mut host = FakeHost::default();
    let mut srv = Server::new(ServerInfo { name: "t".into(), version: "1".into(), instructions: None }, &mut host);
    srv.set_recorder(Some(rec));
    let tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let lines = [
        json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}),
        json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{},"_meta":{"traceparent":tp}}}),
    ];
    let mut legacy = LegacyState::default();
    for l in &lines {
        drop(srv.handle(&mut legacy, l.to_string().as_bytes(), &mut host));
    }
    // The batch goes out on the schedule delay, without a shutdown.
    let mut spans = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut first: Option<Received> = None;
    while spans.len() < 2 && Instant::now() < deadline {
        if let Ok(r) = rx.recv_timeout(Duration::from_millis(100)) {
            let req = ExportTraceServiceRequest::decode(r.body.as_slice()).unwrap();
            for rs in &req.resource_spans {
                let res = rs.resource.as_ref().unwrap();
                assert_eq!(str_attr(&res.attributes, "service.name").as_deref(), Some("svc-test"));
                assert_eq!(str_attr(&res.attributes, "deployment.environment").as_deref(), Some("ci"));
                for ss in &rs.scope_spans {
                    assert_eq!(ss.scope.as_ref().unwrap().name, "r.package.mcplite");
                    spans.extend(ss.spans.iter().cloned());
                }
            }
            first.get_or_insert(r);
        }
    }
    let r = first.expect("an export request");
    assert_eq!(r.path, "/v1/traces");
    assert!(r.headers.iter().any(|h| h == "x-team: mcp lite"), "{:?}", r.headers);
    assert!(r.headers.iter().any(|h| h.eq_ignore_ascii_case("content-type: application/x-protobuf")));
    assert_eq!(spans.len(), 2);
    assert_eq!(spans[0].name, "initialize");
    assert_eq!(spans[0].kind, 2); // SERVER
    assert!(spans[0].parent_span_id.is_empty());
    assert_eq!(spans[1].name, "tools/call echo");
    assert_eq!(hex(&spans[1].trace_id), "4bf92f3577b34da6a3ce929d0e0e4736");
    assert_eq!(hex(&spans[1].parent_span_id), "00f067aa0ba902b7");
    assert_eq!(str_attr(&spans[1].attributes, "gen_ai.tool.name").as_deref(), Some("echo"));
    assert_eq!(str_attr(&spans[1].attributes, "mcp.protocol.version").as_deref(), Some("2025-11-25"));
    srv.shutdown_recorder();
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[test]
fn dead_collector_costs_nothing_but_spans() {
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let vars: HashMap<&str, String> = [
        ("OTEL_TRACES_EXPORTER", "otlp".to_string()),
        ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", format!("http://127.0.0.1:{port}/v1/traces")),
        ("OTEL_BSP_SCHEDULE_DELAY", "1".to_string()),
        ("OTEL_BSP_MAX_QUEUE_SIZE", "8".to_string()),
    ]
    .into_iter()
    .collect();
    let rec = recorder_from_env(&|k| vars.get(k).cloned()).expect("tracing on");
    let mut host = FakeHost::default();
    let mut srv = Server::new(ServerInfo { name: "t".into(), version: "1".into(), instructions: None }, &mut host);
    srv.set_recorder(Some(rec));
    let ping = json!({"jsonrpc":"2.0","id":1,"method":"ping"}).to_string();
    for _ in 0..2000 {
        let r = srv.handle(&mut LegacyState::default(), ping.as_bytes(), &mut host).into_line().unwrap();
        assert!(r.starts_with(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}"));
    }
    srv.shutdown_recorder();
}

#[test]
fn off_configurations_install_nothing() {
    let none: HashMap<&str, &str> = HashMap::new();
    assert!(recorder_from_env(&|k| none.get(k).map(|s| s.to_string())).is_none());
    let off = |pairs: &[(&str, &str)]| {
        let m: HashMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        recorder_from_env(&|k| m.get(k).cloned()).is_none()
    };
    assert!(off(&[("OTEL_TRACES_EXPORTER", "stderr"), ("OTEL_R_SUPPRESS_SCOPES", "mcplite")]));
    assert!(off(&[("OTEL_METRICS_EXPORTER", "stderr"), ("OTEL_R_SUPPRESS_SCOPES", "mcplite")]));
    assert!(off(&[("OTEL_TRACES_EXPORTER", "none"), ("OTEL_METRICS_EXPORTER", "none"), ("MCPLITE_LOG", "off")]));
    assert!(off(&[("OTEL_METRICS_EXPORTER", "otlp"), ("OTEL_SDK_DISABLED", "true")]));
    // Logging alone is independent of the OpenTelemetry switches.
    assert!(!off(&[("MCPLITE_LOG", "info"), ("OTEL_SDK_DISABLED", "true")]));
}

/// Every histogram data point of `name` in `req`, with its scope.
fn histogram_points(req: &ExportMetricsServiceRequest, name: &str) -> Vec<(String, String, HistogramDataPoint)> {
    let mut out = Vec::new();
    for rm in &req.resource_metrics {
        for sm in &rm.scope_metrics {
            let scope = sm.scope.as_ref().map(|s| s.name.clone()).unwrap_or_default();
            for m in sm.metrics.iter().filter(|m| m.name == name) {
                assert_eq!(m.unit, "s");
                let Some(metric::Data::Histogram(h)) = &m.data else { panic!("{name} is not a histogram") };
                for dp in &h.data_points {
                    out.push((scope.clone(), sm.schema_url.clone(), dp.clone()));
                }
            }
        }
    }
    out
}

#[test]
fn otlp_http_metrics_from_env() {
    let (port, rx) = receiver();
    let vars: HashMap<&str, String> = [
        ("OTEL_METRICS_EXPORTER", "otlp".to_string()),
        ("OTEL_EXPORTER_OTLP_ENDPOINT", format!("http://127.0.0.1:{port}")),
        ("OTEL_EXPORTER_OTLP_METRICS_HEADERS", "x-team=metrics".to_string()),
        ("OTEL_SERVICE_NAME", "svc-metrics".to_string()),
        ("OTEL_METRIC_EXPORT_INTERVAL", "100".to_string()),
    ]
    .into_iter()
    .collect();
    let rec = recorder_from_env(&|k| vars.get(k).cloned()).expect("metrics on");
    let mut host = FakeHost::default();
    let mut srv = Server::new(ServerInfo { name: "t".into(), version: "1".into(), instructions: None }, &mut host);
    srv.set_recorder(Some(rec));
    let lines = [
        json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}),
        json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{}}}),
        json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{}}}),
    ];
    let mut legacy = LegacyState::default();
    for l in &lines {
        drop(srv.handle(&mut legacy, l.to_string().as_bytes(), &mut host));
    }
    // Exported on the interval, without a shutdown (hang guard only).
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut periodic: Option<(Received, ExportMetricsServiceRequest)> = None;
    while periodic.is_none() && Instant::now() < deadline {
        if let Ok(r) = rx.recv_timeout(Duration::from_millis(100)) {
            let req = ExportMetricsServiceRequest::decode(r.body.as_slice()).unwrap();
            if !histogram_points(&req, "mcp.server.operation.duration").is_empty() {
                periodic = Some((r, req));
            }
        }
    }
    let (r, req) = periodic.expect("a periodic metrics export");
    assert_eq!(r.path, "/v1/metrics");
    assert!(r.headers.iter().any(|h| h == "x-team: metrics"), "{:?}", r.headers);
    assert!(r.headers.iter().any(|h| h.eq_ignore_ascii_case("content-type: application/x-protobuf")));
    let res = req.resource_metrics[0].resource.as_ref().unwrap();
    assert_eq!(str_attr(&res.attributes, "service.name").as_deref(), Some("svc-metrics"));
    let points = histogram_points(&req, "mcp.server.operation.duration");
    let calls: Vec<&HistogramDataPoint> = points
        .iter()
        .filter(|(_, _, p)| str_attr(&p.attributes, "gen_ai.tool.name").as_deref() == Some("echo"))
        .map(|(_, _, p)| p)
        .collect();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].count, 2);
    assert_eq!(
        calls[0].explicit_bounds,
        [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0]
    );
    assert_eq!(str_attr(&calls[0].attributes, "mcp.protocol.version").as_deref(), Some("2025-11-25"));
    assert_eq!(str_attr(&calls[0].attributes, "mcp.method.name").as_deref(), Some("tools/call"));
    for (scope, schema, _) in &points {
        assert_eq!(scope, "r.package.mcplite");
        assert_eq!(schema, "https://opentelemetry.io/schemas/gen-ai-dev/1.42.0-dev");
    }
    // The final flush at shutdown carries the session (ended with the input).
    srv.end_session(&mut legacy);
    srv.shutdown_recorder();
    let mut session = Vec::new();
    while let Ok(r) = rx.recv_timeout(Duration::from_millis(500)) {
        let req = ExportMetricsServiceRequest::decode(r.body.as_slice()).unwrap();
        session = histogram_points(&req, "mcp.server.session.duration");
    }
    assert_eq!(session.len(), 1);
    assert_eq!(session[0].2.count, 1);
    assert_eq!(str_attr(&session[0].2.attributes, "mcp.protocol.version").as_deref(), Some("2025-11-25"));
}
