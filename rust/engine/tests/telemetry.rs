//! Span recording end to end inside the engine (RULES T1–T7): a real `Server`
//! driven through transcripts with a fake host, spans captured by the
//! OpenTelemetry SDK's in-memory exporter.

use std::collections::HashMap;

use mcplite_engine::host::{CallContext, Host, ToolFailure, ToolResult, ToolSpec};
use mcplite_engine::server::{LegacyState, Server, ServerInfo};
use mcplite_engine::telemetry::{
    parse_traceparent, Limits, OtelRecorder, SpanRecorder, SpanStart, CLIENT_STRING_LIMIT, SCHEMA_URL, SCOPE_NAME,
};
use opentelemetry::trace::{SpanContext, SpanId, SpanKind, Status, TraceId, TraceState};
use opentelemetry::Value as OtelValue;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::{json, Value};

const SECRET_ARG: &str = "s3cr3t-argument-text";
const SECRET_RESULT: &str = "s3cr3t-result-text";
const SECRET_COND: &str = "s3cr3t-condition-message";
const SECRET_CLIENT: &str = "s3cr3t-client-name";
const TP: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const TS: &str = "vendor=opaque42";

/// A host with a few tools; remembers the trace context each call saw.
#[derive(Default)]
struct FakeHost {
    seen: Vec<CallContext>,
}

fn spec(name: &str) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: format!("{name} tool"),
        input_schema: r#"{"type":"object","properties":{}}"#.into(),
        annotations: vec![],
        output_schema: None,
    }
}

impl Host for FakeHost {
    fn tools(&mut self) -> Vec<ToolSpec> {
        vec![spec("echo"), spec("fails"), spec("soft_error")]
    }
    fn call_tool(
        &mut self,
        index: usize,
        arguments: Option<&serde_json::Map<String, Value>>,
        ctx: &CallContext,
    ) -> Result<ToolResult, ToolFailure> {
        self.seen.push(ctx.clone());
        let args = arguments.map(|a| Value::Object(a.clone()).to_string()).unwrap_or_default();
        match index {
            0 => Ok(ToolResult::text(format!("{SECRET_RESULT} {args}"))),
            1 => Err(ToolFailure::Error(format!("{SECRET_COND}: {args}"))),
            _ => {
                let mut r = ToolResult::text(SECRET_RESULT);
                r.is_error = true;
                Ok(r)
            }
        }
    }
}

struct Run {
    spans: Vec<SpanData>,
    responses: Vec<Option<String>>,
    host: FakeHost,
}

fn server(host: &mut FakeHost) -> Server {
    Server::new(ServerInfo { name: "t".into(), version: "1".into(), instructions: None }, host)
}

fn run_with(lines: &[String], traced: bool) -> Run {
    run_custom(lines, traced, |r| r)
}

/// Run a transcript with a recorder adjusted by `adjust` (limits, ambient
/// context).
fn run_custom(lines: &[String], traced: bool, adjust: impl FnOnce(OtelRecorder) -> OtelRecorder) -> Run {
    let exporter = InMemorySpanExporter::default();
    let mut host = FakeHost::default();
    let mut srv = server(&mut host);
    if traced {
        let provider = SdkTracerProvider::builder().with_simple_exporter(exporter.clone()).build();
        srv.set_recorder(Some(Box::new(adjust(OtelRecorder::from_provider(provider)))));
    }
    let mut responses = Vec::new();
    let mut legacy = LegacyState::default();
    for l in lines {
        let r = srv.handle(&mut legacy, l.as_bytes(), &mut host).into_line();
        responses.push(r.map(|b| String::from_utf8(b).unwrap()));
    }
    let spans = exporter.get_finished_spans().unwrap();
    srv.shutdown_recorder();
    Run { spans, responses, host }
}

fn run(lines: &[String]) -> Run {
    run_with(lines, true)
}

fn line(v: Value) -> String {
    v.to_string()
}

fn init(id: Value) -> String {
    line(json!({"jsonrpc":"2.0","id":id,"method":"initialize","params":{
        "protocolVersion":"2025-06-18","capabilities":{},
        "clientInfo":{"name":SECRET_CLIENT,"version":"1"}}}))
}

fn initialized() -> String {
    line(json!({"jsonrpc":"2.0","method":"notifications/initialized"}))
}

fn call(id: Value, name: &str, args: Value) -> String {
    line(json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":name,"arguments":args}}))
}

fn modern(id: Value, method: &str, version: &str, extra: Value) -> String {
    let mut params = json!({"_meta":{
        "io.modelcontextprotocol/protocolVersion":version,
        "io.modelcontextprotocol/clientCapabilities":{}}});
    if let Value::Object(m) = extra {
        for (k, v) in m {
            params[k] = v;
        }
    }
    line(json!({"jsonrpc":"2.0","id":id,"method":method,"params":params}))
}

fn attrs(s: &SpanData) -> HashMap<String, String> {
    s.attributes
        .iter()
        .map(|kv| {
            let v = match &kv.value {
                OtelValue::String(x) => x.to_string(),
                other => panic!("non-string attribute {} = {other:?}", kv.key),
            };
            (kv.key.to_string(), v)
        })
        .collect()
}

fn keys(s: &SpanData) -> Vec<String> {
    let mut k: Vec<String> = s.attributes.iter().map(|kv| kv.key.to_string()).collect();
    k.sort();
    k
}

fn response_json(r: &Option<String>) -> Value {
    serde_json::from_str(r.as_deref().expect("a response")).unwrap()
}

#[test]
fn one_span_per_legacy_message_with_names_and_attributes() {
    let lines = vec![
        init(json!(1)),
        initialized(),
        line(json!({"jsonrpc":"2.0","id":"list-\"1\"","method":"tools/list"})),
        call(json!(3000000000u64), "echo", json!({"x": SECRET_ARG})),
        line(json!({"jsonrpc":"2.0","id":4,"method":"ping"})),
        line(json!({"jsonrpc":"2.0","id":5,"method":"no/such"})),
        line(json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}})),
    ];
    let r = run(&lines);
    assert_eq!(r.spans.len(), lines.len());
    let names: Vec<&str> = r.spans.iter().map(|s| s.name.as_ref()).collect();
    assert_eq!(
        names,
        [
            "initialize",
            "notifications/initialized",
            "tools/list",
            "tools/call echo",
            "ping",
            "_OTHER",
            "notifications/cancelled"
        ]
    );
    for s in &r.spans {
        assert_eq!(s.span_kind, SpanKind::Server);
        assert_eq!(s.instrumentation_scope.name(), SCOPE_NAME);
        assert_eq!(s.instrumentation_scope.schema_url(), Some(SCHEMA_URL));
        let a = attrs(s);
        assert_eq!(a["network.transport"], "pipe");
        assert_eq!(a["mcp.method.name"], s.name.split(' ').next().unwrap());
    }
    // initialize records the negotiated version.
    let a = attrs(&r.spans[0]);
    assert_eq!(a["jsonrpc.request.id"], "1");
    assert_eq!(a["mcp.protocol.version"], "2025-06-18");
    assert_eq!(r.spans[0].status, Status::Unset);
    // A notification: start attributes plus the session's protocol version.
    assert_eq!(keys(&r.spans[1]), ["mcp.method.name", "mcp.protocol.version", "network.transport"]);
    assert_eq!(attrs(&r.spans[1])["mcp.protocol.version"], "2025-06-18");
    // A string id is recorded by value, a big number by its token text.
    assert_eq!(attrs(&r.spans[2])["jsonrpc.request.id"], "list-\"1\"");
    let a = attrs(&r.spans[3]);
    assert_eq!(a["jsonrpc.request.id"], "3000000000");
    assert_eq!(a["gen_ai.operation.name"], "execute_tool");
    assert_eq!(a["gen_ai.tool.name"], "echo");
    assert_eq!(a["mcp.protocol.version"], "2025-06-18");
    assert!(!a.contains_key("error.type"));
    assert_eq!(
        keys(&r.spans[3]),
        [
            "gen_ai.operation.name",
            "gen_ai.tool.name",
            "jsonrpc.request.id",
            "mcp.method.name",
            "mcp.protocol.version",
            "network.transport"
        ]
    );
    // Unknown method: a fixed name, the original kept as an attribute;
    // JSON-RPC error, status description = the message sent.
    let a = attrs(&r.spans[5]);
    assert_eq!(a["mcp.method.name"], "_OTHER");
    assert_eq!(a["rpc.method_original"], "no/such");
    assert_eq!(a["error.type"], "-32601");
    assert_eq!(a["rpc.response.status_code"], "-32601");
    let msg = response_json(&r.responses[5])["error"]["message"].as_str().unwrap().to_string();
    assert_eq!(r.spans[5].status, Status::error(msg));
    assert_eq!(keys(&r.spans[6]), ["mcp.method.name", "mcp.protocol.version", "network.transport"]);
    // Every span is a root (no traceparent given) with distinct ids.
    let mut ids: Vec<SpanId> = r.spans.iter().map(|s| s.span_context.span_id()).collect();
    ids.dedup();
    assert_eq!(ids.len(), r.spans.len());
    assert!(r.spans.iter().all(|s| s.parent_span_id == SpanId::INVALID));
}

#[test]
fn errors_and_tool_errors() {
    let lines = vec![
        line(json!({"jsonrpc":"2.0","id":1,"method":"tools/list"})), // before initialize
        init(json!(2)),
        call(json!(3), "fails", json!({"x": SECRET_ARG})),
        call(json!(4), "soft_error", json!({})),
        call(json!(5), "missing", json!({})),
        line(json!({"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"echo","arguments":[1]}})),
        line(json!({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":7}})),
        line(json!({"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo"}})),
    ];
    let r = run(&lines);
    assert_eq!(r.spans.len(), lines.len());
    // Pre-initialization error: no protocol version known yet; the status
    // description is the whole message sent, fixed detail included.
    let a = attrs(&r.spans[0]);
    assert_eq!(a["error.type"], "-32600");
    assert!(!a.contains_key("mcp.protocol.version"));
    let msg = response_json(&r.responses[0])["error"]["message"].as_str().unwrap().to_string();
    assert_eq!(msg, "Invalid Request: server not initialized");
    assert_eq!(r.spans[0].status, Status::error(msg));
    // A failing tool and an isError result: tool_error, no status description.
    for i in [2, 3] {
        let a = attrs(&r.spans[i]);
        assert_eq!(a["error.type"], "tool_error", "span {i}");
        assert!(!a.contains_key("rpc.response.status_code"));
        assert_eq!(r.spans[i].status, Status::error(""));
        assert_eq!(response_json(&r.responses[i])["result"]["isError"], json!(true));
    }
    // Unknown tool: the span is not named after it (bounded names); the
    // attribute keeps it. Invalid params: -32602.
    assert_eq!(r.spans[4].name, "tools/call");
    assert_eq!(attrs(&r.spans[4])["gen_ai.tool.name"], "missing");
    for (i, want) in [(4, "Invalid params: unknown tool"), (5, "Invalid params")] {
        let a = attrs(&r.spans[i]);
        assert_eq!(a["error.type"], "-32602");
        assert_eq!(a["rpc.response.status_code"], "-32602");
        assert_eq!(a["mcp.protocol.version"], "2025-06-18");
        let msg = response_json(&r.responses[i])["error"]["message"].as_str().unwrap().to_string();
        assert_eq!(msg, want);
        assert_eq!(r.spans[i].status, Status::error(msg));
    }
    // A non-string tool name: plain method name, no gen_ai.tool.name.
    assert_eq!(r.spans[6].name, "tools/call");
    let a = attrs(&r.spans[6]);
    assert_eq!(a["gen_ai.operation.name"], "execute_tool");
    assert!(!a.contains_key("gen_ai.tool.name"));
    // A tools/call notification: start attributes (and the session's
    // version) only, never run.
    assert_eq!(r.spans[7].name, "tools/call echo");
    assert_eq!(
        keys(&r.spans[7]),
        ["gen_ai.operation.name", "gen_ai.tool.name", "mcp.method.name", "mcp.protocol.version", "network.transport"]
    );
    assert_eq!(r.spans[7].status, Status::Unset);
}

#[test]
fn modern_requests() {
    let lines = vec![
        modern(json!(1), "server/discover", "2026-07-28", json!({})),
        modern(json!(2), "tools/list", "2026-07-28", json!({})),
        modern(json!(3), "tools/call", "2026-07-28", json!({"name":"echo","arguments":{}})),
        modern(json!(4), "tools/list", "2099-01-01", json!({})),
        modern(json!(5), "ping", "2026-07-28", json!({})),
    ];
    let r = run(&lines);
    assert_eq!(r.spans.len(), 5);
    for i in 0..3 {
        assert_eq!(attrs(&r.spans[i])["mcp.protocol.version"], "2026-07-28");
        assert_eq!(r.spans[i].status, Status::Unset);
    }
    assert_eq!(r.spans[2].name, "tools/call echo");
    let a = attrs(&r.spans[3]);
    assert_eq!(a["error.type"], "-32022");
    assert!(!a.contains_key("mcp.protocol.version"));
    assert_eq!(r.spans[3].status, Status::error("Unsupported protocol version"));
    assert_eq!(attrs(&r.spans[4])["error.type"], "-32601");
}

#[test]
fn no_spans_for_excluded_inputs() {
    let lines: Vec<String> = [
        "",
        "  \t ",
        "{",
        "not json",
        r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":1.5e400,"method":"ping"}"#,
        r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
        r#"{"jsonrpc":"2.0","id":1,"method":3}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":2,"error":{"code":1,"message":"x"}}"#,
        "42",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let r = run(&lines);
    assert!(r.spans.is_empty(), "{:?}", r.spans.iter().map(|s| &s.name).collect::<Vec<_>>());
    // The same lines are answered (or ignored) exactly as without tracing.
    assert_eq!(r.responses, run_with(&lines, false).responses);
}

#[test]
fn remote_parent_from_meta() {
    let with_meta = |id: i64, meta: Value| {
        line(json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
            "params":{"name":"echo","arguments":{},"_meta":meta}}))
    };
    let lines = vec![
        init(json!(0)),
        with_meta(1, json!({"traceparent": TP, "tracestate": TS})),
        with_meta(2, json!({"traceparent": TP.to_uppercase()})),
        with_meta(3, json!({"traceparent": TP, "tracestate": 5})),
        with_meta(4, json!({"traceparent": "00-00000000000000000000000000000000-00f067aa0ba902b7-01"})),
        with_meta(5, json!({"traceparent": TP, "tracestate": "BAD KEY=1"})),
        with_meta(6, json!({"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"})),
    ];
    let r = run(&lines);
    let want_trace = TraceId::from_hex("4bf92f3577b34da6a3ce929d0e0e4736").unwrap();
    let want_parent = SpanId::from_hex("00f067aa0ba902b7").unwrap();
    // Index into spans: sampled-out span 6 is not exported.
    assert_eq!(r.spans.len(), 6);
    let s = &r.spans[1];
    assert_eq!(s.span_context.trace_id(), want_trace);
    assert_eq!(s.parent_span_id, want_parent);
    assert!(s.parent_span_is_remote);
    assert_eq!(s.span_context.trace_state().header(), TS);
    // Malformed: ignored silently; a new root, a normal result.
    for i in [2, 3, 4] {
        assert_eq!(r.spans[i].parent_span_id, SpanId::INVALID, "span {i}");
        assert_ne!(r.spans[i].span_context.trace_id(), want_trace);
        assert!(response_json(&r.responses[i]).get("result").is_some());
    }
    // A bad tracestate drops only the tracestate.
    assert_eq!(r.spans[5].parent_span_id, want_parent);
    assert_eq!(r.spans[5].span_context.trace_state().header(), "");
    // The tool saw its own span as TRACEPARENT (plus the tracestate).
    let seen = &r.host.seen;
    assert_eq!(seen.len(), 6);
    assert_eq!(
        seen[0].traceparent.as_deref(),
        Some(format!("00-{}-{}-01", want_trace, s.span_context.span_id()).as_str())
    );
    assert_eq!(seen[0].tracestate.as_deref(), Some(TS));
    assert_eq!(seen[1].tracestate, None);
    for (c, sp) in seen[..5].iter().zip(&r.spans[1..]) {
        assert_eq!(
            c.traceparent.as_deref().unwrap(),
            format!("00-{}-{}-01", sp.span_context.trace_id(), sp.span_context.span_id())
        );
    }
    // Parent not sampled: the span is not recorded, but its context (not
    // sampled) still reaches the tool.
    let tp6 = seen[5].traceparent.as_deref().unwrap();
    assert!(tp6.starts_with("00-4bf92f3577b34da6a3ce929d0e0e4736-") && tp6.ends_with("-00"), "{tp6}");
    assert!(!tp6.contains("00f067aa0ba902b7"));
}

#[test]
fn nothing_private_is_recorded() {
    let secret_meta = json!({"traceparent": TP, "tracestate": TS, "baggage": "k=s3cr3t-baggage", "note": SECRET_ARG});
    let lines = vec![
        init(json!(1)),
        line(json!({"jsonrpc":"2.0","id":2,"method":"tools/call",
            "params":{"name":"echo","arguments":{"x":SECRET_ARG},"_meta":secret_meta}})),
        call(json!(3), "fails", json!({"x": SECRET_ARG})),
        call(json!(4), "soft_error", json!({"x": SECRET_ARG})),
        line(json!({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":SECRET_ARG}})),
    ];
    let r = run(&lines);
    assert_eq!(r.spans.len(), 5);
    // The secrets did reach the tools and the responses...
    assert!(r.responses[1].as_deref().unwrap().contains(SECRET_ARG));
    assert!(r.responses[2].as_deref().unwrap().contains(SECRET_COND));
    let forbidden_values =
        [SECRET_ARG, SECRET_RESULT, SECRET_COND, SECRET_CLIENT, TS, &TP[3..35], "opaque42", "s3cr3t-baggage"];
    let forbidden_keys = ["argument", "result", "content", "message", "_meta", "traceparent", "tracestate", "baggage"];
    for s in &r.spans {
        // ... but never any span field.
        let mut texts: Vec<String> = vec![s.name.to_string()];
        for kv in &s.attributes {
            let k = kv.key.as_str();
            for f in forbidden_keys {
                assert!(!k.contains(f), "attribute name {k}");
            }
            texts.push(k.to_string());
            texts.push(kv.value.to_string());
        }
        if let Status::Error { description } = &s.status {
            texts.push(description.to_string());
        }
        for e in s.events.iter() {
            texts.push(e.name.to_string());
            texts.extend(e.attributes.iter().map(|kv| kv.value.to_string()));
        }
        assert_eq!(s.events.len(), 0);
        assert_eq!(s.links.len(), 0);
        for t in &texts {
            for f in forbidden_values {
                assert!(!t.contains(f), "span {} carries {f:?} in {t:?}", s.name);
            }
        }
    }
}

#[test]
fn responses_identical_with_and_without_tracing() {
    let lines = vec![
        init(json!(1)),
        initialized(),
        line(json!({"jsonrpc":"2.0","id":2,"method":"tools/list"})),
        call(json!(3), "echo", json!({"a":1})),
        call(json!(4), "fails", json!({})),
        line(json!({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","_meta":{"traceparent":TP}}})),
        modern(json!(6), "tools/list", "2026-07-28", json!({})),
    ];
    let on = run_with(&lines, true);
    let off = run_with(&lines, false);
    assert_eq!(on.responses, off.responses);
    assert!(off.host.seen.iter().all(|c| *c == CallContext::default()));
    assert!(on.host.seen.iter().all(|c| c.traceparent.is_some()));
}

/// The in-memory exporter forgets its spans on shutdown; this keeps them.
#[derive(Debug)]
struct KeepOnShutdown(InMemorySpanExporter);

impl opentelemetry_sdk::trace::SpanExporter for KeepOnShutdown {
    async fn export(&self, batch: Vec<SpanData>) -> opentelemetry_sdk::error::OTelSdkResult {
        self.0.export(batch).await
    }
    fn shutdown_with_timeout(&self, _t: std::time::Duration) -> opentelemetry_sdk::error::OTelSdkResult {
        Ok(())
    }
}

#[test]
fn shutdown_is_idempotent_and_exports_a_dropped_span() {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder().with_simple_exporter(KeepOnShutdown(exporter.clone())).build();
    let rec = OtelRecorder::from_provider(provider);
    let meta = json!({"traceparent": TP});
    let ctx = rec.start(&SpanStart {
        method: "tools/call",
        id: Some("1"),
        tool_name: Some("x"),
        tool_registered: true,
        modern: false,
        meta: meta.as_object(),
        via: None,
    });
    assert!(ctx.context.traceparent.clone().unwrap().starts_with("00-4bf92f3577b34da6a3ce929d0e0e4736-"));
    // A message whose reply is dropped unanswered still ends its span.
    drop(ctx);
    rec.shutdown();
    rec.shutdown();
    assert_eq!(exporter.get_finished_spans().unwrap().len(), 1);
}

#[test]
fn client_strings_stay_bounded() {
    let long_method = "m".repeat(5000);
    let long_tool = "t".repeat(5000);
    let long_id = format!("\"{}\"", "i".repeat(5000));
    let lines = vec![
        init(json!(1)),
        line(json!({"jsonrpc":"2.0","id":2,"method":long_method})),
        call(json!(3), &long_tool, json!({})),
        format!(r#"{{"jsonrpc":"2.0","id":{long_id},"method":"ping"}}"#),
        line(json!({"jsonrpc":"2.0","method":long_method})),
    ];
    let r = run(&lines);
    assert_eq!(r.spans.len(), 5);
    let names: Vec<&str> = r.spans.iter().map(|s| s.name.as_ref()).collect();
    assert_eq!(names, ["initialize", "_OTHER", "tools/call", "ping", "_OTHER"]);
    let a = attrs(&r.spans[1]);
    assert_eq!(a["mcp.method.name"], "_OTHER");
    assert_eq!(a["rpc.method_original"], "m".repeat(CLIENT_STRING_LIMIT));
    assert_eq!(attrs(&r.spans[4])["rpc.method_original"].len(), CLIENT_STRING_LIMIT);
    let a = attrs(&r.spans[2]);
    assert_eq!(a["gen_ai.tool.name"], "t".repeat(CLIENT_STRING_LIMIT));
    assert_eq!(a["error.type"], "-32602");
    assert_eq!(attrs(&r.spans[3])["jsonrpc.request.id"], "i".repeat(CLIENT_STRING_LIMIT));
    // No value anywhere longer than the bound.
    for s in &r.spans {
        assert!(s.name.len() <= 64, "{}", s.name);
        for kv in &s.attributes {
            assert!(kv.value.as_str().chars().count() <= CLIENT_STRING_LIMIT, "{}", kv.key);
        }
    }
}

#[test]
fn attribute_length_limits_are_honoured() {
    let lines = vec![
        init(json!(1)),
        call(json!("request-id-0123456789"), "soft_error", json!({})),
        line(json!({"jsonrpc":"2.0","id":3,"method":"no/such/method"})),
    ];
    let limits = Limits { span_value_length: Some(6), value_length: Some(100) };
    let r = run_custom(&lines, true, |rec| rec.with_limits(limits));
    assert_eq!(r.spans.len(), 3);
    for s in &r.spans {
        for kv in &s.attributes {
            assert!(kv.value.as_str().chars().count() <= 6, "{} = {}", kv.key, kv.value);
        }
    }
    let a = attrs(&r.spans[1]);
    assert_eq!(a["jsonrpc.request.id"], "reques");
    assert_eq!(a["gen_ai.tool.name"], "soft_e");
    assert_eq!(a["error.type"], "tool_e");
    assert_eq!(a["mcp.protocol.version"], "2025-0");
    // Span names are not attributes: a registered tool keeps its full name.
    assert_eq!(r.spans[1].name, "tools/call soft_error");
    assert_eq!(attrs(&r.spans[2])["rpc.method_original"], "no/suc");
}

#[test]
fn baggage_reaches_tools_and_nothing_else() {
    let with_meta = |id: i64, meta: Value| {
        line(json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
            "params":{"name":"echo","arguments":{},"_meta":meta}}))
    };
    let lines = vec![
        init(json!(0)),
        with_meta(1, json!({"traceparent": TP, "baggage": "userId=alice,serverNode=DF%2028"})),
        with_meta(2, json!({"baggage": "only=baggage"})),
        with_meta(3, json!({"traceparent": TP, "baggage": ["not", "a", "string"]})),
        with_meta(4, json!({"traceparent": "00-XYZ", "baggage": "k=v;prop"})),
        call(json!(5), "echo", json!({})),
    ];
    let r = run(&lines);
    let seen: Vec<Option<String>> = r.host.seen.iter().map(|c| c.baggage.clone()).collect();
    let sorted = |b: &Option<String>| {
        let mut v: Vec<String> = b.as_deref().unwrap_or("").split(',').map(String::from).collect();
        v.sort();
        v
    };
    assert_eq!(sorted(&seen[0]), ["serverNode=DF%2028", "userId=alice"]);
    // Baggage does not need a traceparent, and a bad traceparent does not
    // spoil it; other shapes are ignored.
    assert_eq!(seen[1].as_deref(), Some("only=baggage"));
    assert_eq!(seen[2], None);
    assert_eq!(seen[3].as_deref(), Some("k=v;prop"));
    assert_eq!(seen[4], None);
    // Tracing off: nothing is read at all.
    let off = run_with(&lines, false);
    assert!(off.host.seen.iter().all(|c| c.baggage.is_none()));
}

#[test]
fn ambient_context_becomes_a_link() {
    let (t, s, f) = parse_traceparent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01").unwrap();
    let ambient = SpanContext::new(t, s, f, true, TraceState::default());
    let lines = vec![
        init(json!(1)),
        line(json!({"jsonrpc":"2.0","id":2,"method":"tools/call",
            "params":{"name":"echo","arguments":{},"_meta":{"traceparent":TP}}})),
    ];
    let r = run_custom(&lines, true, |rec| rec.with_ambient(Some(ambient.clone())));
    assert_eq!(r.spans.len(), 2);
    for sp in &r.spans {
        assert_eq!(sp.links.len(), 1);
        assert_eq!(sp.links[0].span_context, ambient);
    }
    // The ambient context is a link, never the parent: without _meta the
    // span is a root, with _meta its parent is the client's span.
    assert_eq!(r.spans[0].parent_span_id, SpanId::INVALID);
    assert_ne!(r.spans[0].span_context.trace_id(), t);
    assert_eq!(r.spans[1].parent_span_id, SpanId::from_hex("00f067aa0ba902b7").unwrap());
}

#[test]
fn notification_versions() {
    let modern_note = |version: &str| {
        line(json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"_meta":{
            "io.modelcontextprotocol/protocolVersion":version}}}))
    };
    let lines = vec![
        initialized(), // before any handshake: no version
        modern_note("2026-07-28"),
        modern_note("2099-01-01"),
        init(json!(1)),
        initialized(),
        // A failed re-initialize keeps the negotiated version.
        line(json!({"jsonrpc":"2.0","id":2,"method":"initialize","params":{}})),
        initialized(),
    ];
    let r = run(&lines);
    let version = |i: usize| attrs(&r.spans[i]).get("mcp.protocol.version").cloned();
    assert_eq!(version(0), None);
    assert_eq!(version(1).as_deref(), Some("2026-07-28"));
    assert_eq!(version(2), None);
    assert_eq!(version(4).as_deref(), Some("2025-06-18"));
    assert_eq!(version(6).as_deref(), Some("2025-06-18"));
}

#[test]
fn http_server_span_status_and_bounded_values() {
    // RULES T10: a 5xx is the server's error (status ERROR, error.type the
    // code); a request dropped unanswered has error.type _OTHER; a
    // non-standard method is _OTHER (span name "HTTP") with the original cut
    // to 256 characters; an invalid traceparent header is ignored.
    use mcplite_engine::telemetry::HttpStart;
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder().with_simple_exporter(exporter.clone()).build();
    let rec = OtelRecorder::from_provider(provider);
    let long_method = "X".repeat(5000);
    let long_path = format!("/{}", "p".repeat(5000));
    let start = |method: &'static str, tp: Option<&'static str>| HttpStart {
        method,
        path: "/mcp",
        route: Some("/mcp"),
        scheme: "http",
        protocol_version: "1.1",
        traceparent: tp,
        ..Default::default()
    };
    rec.http_start(&start("POST", Some(TP))).unwrap().finish(503);
    drop(rec.http_start(&start("POST", Some("00-not-a-traceparent"))).unwrap());
    let odd = HttpStart { method: &long_method, path: &long_path, route: None, ..start("POST", None) };
    rec.http_start(&odd).unwrap().finish(405);
    let spans = exporter.get_finished_spans().unwrap();
    assert_eq!(spans.len(), 3);
    // HTTP spans have integer attributes (status code, ports) too.
    let attrs = |s: &SpanData| -> HashMap<String, String> {
        s.attributes.iter().map(|kv| (kv.key.to_string(), kv.value.to_string())).collect()
    };
    let (failed, dropped, other) = (&spans[0], &spans[1], &spans[2]);
    assert_eq!(failed.name, "POST /mcp");
    assert_eq!(failed.span_kind, SpanKind::Server);
    assert_eq!(failed.parent_span_id, SpanId::from_hex("00f067aa0ba902b7").unwrap());
    let a = attrs(failed);
    assert_eq!(a["error.type"], "503");
    assert_eq!(a["http.response.status_code"], "503");
    assert!(matches!(failed.status, Status::Error { .. }));
    let d = attrs(dropped);
    assert_eq!(d["error.type"], "_OTHER");
    assert!(!d.contains_key("http.response.status_code"));
    assert_eq!(dropped.parent_span_id, SpanId::INVALID, "an invalid header is ignored");
    assert_eq!(other.name, "HTTP");
    let o = attrs(other);
    assert_eq!(o["http.request.method"], "_OTHER");
    assert_eq!(o["http.request.method_original"].chars().count(), CLIENT_STRING_LIMIT);
    assert_eq!(o["url.path"].chars().count(), CLIENT_STRING_LIMIT);
    assert!(!o.contains_key("error.type"), "a 4xx is the client's error");
    assert_eq!(other.status, Status::Unset);
}
