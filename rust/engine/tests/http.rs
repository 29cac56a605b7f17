//! The Streamable HTTP transport driven by a real HTTP client (ureq) and, for
//! the hostile cases, by raw TCP: every status code the transport answers,
//! both protocol eras, sessions, security checks, limits, the tool thread and
//! shutdown.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use mcplite_engine::host::{CallContext, Host, ToolFailure, ToolResult, ToolSpec};
use mcplite_engine::telemetry::{OtelRecorder, SpanRecorder};
use mcplite_engine::transport::http::{HttpError, HttpOptions, HttpServer, LogFormat};
use mcplite_engine::{Server, ServerInfo};
use opentelemetry::trace::{SpanId, SpanKind, Status, TraceId};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::{json, Map, Value};

const MODERN: &str = "2026-07-28";

/// Tools: `echo` (arguments back as text), `sleep` (waits `ms`, then says
/// how many calls ran at once), `fail` (an error).
struct TestHost {
    running: Arc<AtomicUsize>,
    order: Arc<std::sync::Mutex<Vec<i64>>>,
}

impl Host for TestHost {
    fn tools(&mut self) -> Vec<ToolSpec> {
        ["echo", "sleep", "fail", "na me"].iter().map(|n| ToolSpec::new(*n, format!("{n} tool"))).collect()
    }

    fn call_tool(
        &mut self,
        index: usize,
        arguments: Option<&Map<String, Value>>,
        _: &CallContext,
    ) -> Result<ToolResult, ToolFailure> {
        let args = arguments.cloned().unwrap_or_default();
        if let Some(n) = args.get("n").and_then(Value::as_i64) {
            self.order.lock().unwrap().push(n);
        }
        match index {
            1 => {
                let at_once = self.running.fetch_add(1, Ordering::SeqCst) + 1;
                let ms = args.get("ms").and_then(Value::as_u64).unwrap_or(0);
                std::thread::sleep(Duration::from_millis(ms));
                self.running.fetch_sub(1, Ordering::SeqCst);
                Ok(ToolResult::text(format!("at once: {at_once}")))
            }
            2 => Err(ToolFailure::Error("it failed".into())),
            _ => Ok(ToolResult::text(Value::Object(args).to_string())),
        }
    }
}

struct Running {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    order: Arc<std::sync::Mutex<Vec<i64>>>,
}

impl Running {
    fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }
    fn stop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            t.join().unwrap();
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop();
    }
}

fn opts() -> HttpOptions {
    // The access log is tested end to end (tests/testthat/test-http-access.R).
    HttpOptions { port: 0, access_log: LogFormat::Off, ..HttpOptions::default() }
}

fn start(opts: HttpOptions) -> Running {
    start_traced(opts, None)
}

fn start_traced(opts: HttpOptions, recorder: Option<Box<dyn SpanRecorder>>) -> Running {
    let running = Arc::new(AtomicUsize::new(0));
    let order = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut host = TestHost { running, order: order.clone() };
    let info = ServerInfo { name: "mcplite".into(), version: "9.9.9".into(), instructions: None };
    let mut server = Server::new(info, &mut host);
    server.set_recorder(recorder);
    let server = Arc::new(server);
    let http = HttpServer::bind(server, opts).expect("bind");
    let addr = http.local_addr();
    let stop = Arc::new(AtomicBool::new(false));
    let s = stop.clone();
    let thread = std::thread::spawn(move || {
        http.run(&mut host, Duration::from_millis(10), &mut |_| s.load(Ordering::SeqCst));
    });
    Running { addr, stop, thread: Some(thread), order }
}

fn agent() -> ureq::Agent {
    ureq::Agent::new_with_config(ureq::Agent::config_builder().http_status_as_error(false).build())
}

struct Got {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Got {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
    fn code(&self) -> i64 {
        self.json()["error"]["code"].as_i64().unwrap_or_else(|| panic!("no error code: {}", self.body))
    }
}

fn post(url: &str, headers: &[(&str, &str)], body: &str) -> Got {
    let mut req = agent().post(url);
    let mut has_ct = false;
    for (k, v) in headers {
        has_ct |= k.eq_ignore_ascii_case("content-type");
        req = req.header(*k, *v);
    }
    if !has_ct {
        req = req.header("Content-Type", "application/json");
    }
    collect(req.send(body).expect("request"))
}

fn collect(mut r: ureq::http::Response<ureq::Body>) -> Got {
    let status = r.status().as_u16();
    let headers =
        r.headers().iter().map(|(k, v)| (k.as_str().to_string(), v.to_str().unwrap_or("").to_string())).collect();
    let body = r.body_mut().read_to_string().unwrap_or_default();
    Got { status, headers, body }
}

fn get(url: &str) -> Got {
    collect(agent().get(url).call().expect("request"))
}

fn modern_body(id: i64, method: &str, params: Value) -> String {
    let mut p = params.as_object().cloned().unwrap_or_default();
    p.insert(
        "_meta".into(),
        json!({"io.modelcontextprotocol/protocolVersion": MODERN,
               "io.modelcontextprotocol/clientCapabilities": {}}),
    );
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": p}).to_string()
}

fn modern_post(url: &str, method: &str, name: Option<&str>, params: Value) -> Got {
    let mut h = vec![
        ("MCP-Protocol-Version", MODERN),
        ("Mcp-Method", method),
        ("Accept", "application/json, text/event-stream"),
    ];
    if let Some(n) = name {
        h.push(("Mcp-Name", n));
    }
    post(url, &h, &modern_body(1, method, params))
}

fn call_params(name: &str, args: Value) -> Value {
    json!({"name": name, "arguments": args})
}

fn health_ok(r: &Running) {
    let g = get(&r.url("/health"));
    assert_eq!(g.status, 200, "{}", g.body);
    assert_eq!(g.json(), json!({"status": "ok", "name": "mcplite", "version": "9.9.9", "tools": 4, "replica": null}));
}

#[test]
fn health_answers_name_version_and_tool_count() {
    let r = start(opts());
    health_ok(&r);
    let g = get(&r.url("/elsewhere"));
    assert_eq!(g.status, 404);
}

#[test]
fn modern_requests_and_mirrored_headers() {
    let r = start(opts());
    let url = r.url("/mcp");
    let g = modern_post(&url, "server/discover", None, json!({}));
    assert_eq!(g.status, 200, "{}", g.body);
    assert_eq!(g.header("content-type"), Some("application/json"));
    assert!(g.json()["result"]["supportedVersions"].is_array() || g.json()["result"].is_object());
    assert!(g.header("mcp-session-id").is_none(), "modern answers mint no session");

    let g = modern_post(&url, "tools/list", None, json!({}));
    assert_eq!(g.status, 200);
    assert_eq!(g.json()["result"]["tools"].as_array().unwrap().len(), 4);

    let g = modern_post(&url, "tools/call", Some("echo"), call_params("echo", json!({"a": 1})));
    assert_eq!(g.status, 200, "{}", g.body);
    assert_eq!(g.json()["result"]["content"][0]["text"], "{\"a\":1}");

    // A tool error is a result, not an HTTP error.
    let g = modern_post(&url, "tools/call", Some("fail"), call_params("fail", json!({})));
    assert_eq!(g.status, 200);
    assert_eq!(g.json()["result"]["isError"], true);

    // Last-Event-ID and Mcp-Session-Id are ignored on modern requests (RULES H2.2,
    // issue 16): answered as without them, as JSON, and no session is minted.
    let mh = [("MCP-Protocol-Version", MODERN), ("Accept", "application/json, text/event-stream")];
    for extra in [vec![("Last-Event-ID", "42")], vec![("Last-Event-ID", "0"), ("Mcp-Session-Id", "no-such-session")]] {
        let mut h = vec![mh[0], mh[1], ("Mcp-Method", "tools/list")];
        h.extend(&extra);
        let g = post(&url, &h, &modern_body(5, "tools/list", json!({})));
        assert_eq!(g.status, 200, "{extra:?}: {}", g.body);
        assert_eq!(g.json()["id"], 5);
        assert_eq!(g.json()["result"]["tools"].as_array().unwrap().len(), 4);
        let mut h = vec![mh[0], mh[1], ("Mcp-Method", "tools/call"), ("Mcp-Name", "echo")];
        h.extend(&extra);
        let g = post(&url, &h, &modern_body(6, "tools/call", call_params("echo", json!({"b": 2}))));
        assert_eq!(g.status, 200, "{extra:?}: {}", g.body);
        assert_eq!(g.header("content-type"), Some("application/json"));
        assert_eq!(g.json()["result"]["content"][0]["text"], "{\"b\":2}");
        assert!(g.header("mcp-session-id").is_none());
    }

    // Mcp-Name in the base64 form, for a name with a space.
    let g = modern_post(&url, "tools/call", Some("=?base64?bmEgbWU=?="), call_params("na me", json!({})));
    assert_eq!(g.status, 200, "{}", g.body);

    // Missing or different mirrored headers: 400 with -32020, with the id.
    let body = modern_body(7, "tools/list", json!({}));
    for headers in [
        vec![("Mcp-Method", "tools/list")],
        vec![("MCP-Protocol-Version", MODERN)],
        vec![("MCP-Protocol-Version", MODERN), ("Mcp-Method", "tools/call")],
    ] {
        let g = post(&url, &headers, &body);
        assert_eq!((g.status, g.code()), (400, -32020), "{headers:?}: {}", g.body);
        assert_eq!(g.json()["id"], 7);
    }
    let call = modern_body(8, "tools/call", call_params("echo", json!({})));
    for name in [None, Some("fail"), Some("=?base64?ZmFpbA==?="), Some("=?base64?%%?=")] {
        let mut h = vec![("MCP-Protocol-Version", MODERN), ("Mcp-Method", "tools/call")];
        if let Some(n) = name {
            h.push(("Mcp-Name", n));
        }
        let g = post(&url, &h, &call);
        assert_eq!((g.status, g.code()), (400, -32020), "{name:?}: {}", g.body);
    }
    // Header version and body claim differ.
    let g = post(&url, &[("MCP-Protocol-Version", "2025-11-25"), ("Mcp-Method", "tools/list")], &body);
    assert_eq!((g.status, g.code()), (400, -32020), "{}", g.body);
    // A modern header with a body that claims nothing.
    let g = post(
        &url,
        &[("MCP-Protocol-Version", MODERN), ("Mcp-Method", "tools/list")],
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#,
    );
    assert_eq!((g.status, g.code()), (400, -32020), "{}", g.body);
}

#[test]
fn modern_version_method_and_http_method_errors() {
    let r = start(opts());
    let url = r.url("/mcp");
    // Unsupported version: 400 with the unsupported-version error listing
    // the supported versions.
    let mut body: Value = serde_json::from_str(&modern_body(2, "tools/list", json!({}))).unwrap();
    body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
    let g = post(&url, &[("MCP-Protocol-Version", "2099-01-01"), ("Mcp-Method", "tools/list")], &body.to_string());
    assert_eq!((g.status, g.code()), (400, -32022), "{}", g.body);
    let supported = g.json()["error"]["data"]["supported"].clone();
    assert!(supported.as_array().unwrap().contains(&json!(MODERN)), "{}", g.body);

    // Unknown method: 404 with -32601.
    let g = modern_post(&url, "resources/list", None, json!({}));
    assert_eq!((g.status, g.code()), (404, -32601), "{}", g.body);

    // A notification: 202, no body.
    let n = json!({"jsonrpc":"2.0","method":"notifications/whatever","params":{"_meta":{
        "io.modelcontextprotocol/protocolVersion": MODERN}}});
    let g = post(&url, &[("MCP-Protocol-Version", MODERN), ("Mcp-Method", "notifications/whatever")], &n.to_string());
    assert_eq!(g.status, 202);
    assert!(g.body.is_empty());

    // GET and DELETE: 405.
    assert_eq!(get(&url).status, 405);
    let g = collect(agent().delete(&url).header("MCP-Protocol-Version", MODERN).call().unwrap());
    assert_eq!(g.status, 405);
    assert!(g.header("allow").is_some());
    // Session ids are ignored on modern requests.
    let g = post(
        &url,
        &[("MCP-Protocol-Version", MODERN), ("Mcp-Method", "tools/list"), ("Mcp-Session-Id", "nope")],
        &modern_body(4, "tools/list", json!({})),
    );
    assert_eq!(g.status, 200, "{}", g.body);
}

fn initialize(url: &str, version: &str) -> String {
    let body = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
        "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let g = post(url, &[("Accept", "application/json, text/event-stream")], &body.to_string());
    assert_eq!(g.status, 200, "{}", g.body);
    assert_eq!(g.json()["result"]["protocolVersion"], version);
    g.header("mcp-session-id").expect("a session id").to_string()
}

#[test]
fn legacy_sessions() {
    let r = start(opts());
    let url = r.url("/mcp");
    let sid = initialize(&url, "2025-06-18");
    assert!(sid.len() >= 32 && sid.bytes().all(|b| (0x21..=0x7e).contains(&b)), "{sid}");
    assert_ne!(initialize(&url, "2025-06-18"), sid, "ids are random");

    let h = |sid: &'static str| vec![("Mcp-Session-Id", sid), ("MCP-Protocol-Version", "2025-06-18")];
    let sid: &'static str = Box::leak(sid.into_boxed_str());
    let g = post(&url, &h(sid), r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    assert_eq!(g.status, 202);
    let g = post(&url, &h(sid), r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    assert_eq!(g.status, 200, "{}", g.body);
    assert_eq!(g.json()["result"]["tools"].as_array().unwrap().len(), 4);
    let g = post(
        &url,
        &h(sid),
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"x":true}}}"#,
    );
    assert_eq!(g.json()["result"]["content"][0]["text"], "{\"x\":true}", "{}", g.body);
    // Without MCP-Protocol-Version (taken as 2025-03-26): still served.
    let g = post(&url, &[("Mcp-Session-Id", sid)], r#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#);
    assert_eq!(g.status, 200, "{}", g.body);

    // Missing session id: 400; unknown: 404.
    let g = post(&url, &[], r#"{"jsonrpc":"2.0","id":5,"method":"tools/list"}"#);
    assert_eq!(g.status, 400, "{}", g.body);
    let g = post(&url, &h("not-a-session"), r#"{"jsonrpc":"2.0","id":6,"method":"tools/list"}"#);
    assert_eq!(g.status, 404, "{}", g.body);

    // GET: 405. DELETE ends the session; afterwards it is unknown.
    let g = collect(agent().get(&url).header("Mcp-Session-Id", sid).call().unwrap());
    assert_eq!(g.status, 405);
    let g = collect(agent().delete(&url).header("Mcp-Session-Id", sid).call().unwrap());
    assert_eq!(g.status, 200);
    let g = post(&url, &h(sid), r#"{"jsonrpc":"2.0","id":7,"method":"tools/list"}"#);
    assert_eq!(g.status, 404);
    let g = collect(agent().delete(&url).header("Mcp-Session-Id", sid).call().unwrap());
    assert_eq!(g.status, 404);
}

#[test]
fn sessions_are_bounded_and_expire() {
    let r = start(HttpOptions { max_sessions: 2, session_idle: Duration::from_millis(300), ..opts() });
    let url = r.url("/mcp");
    let list =
        |sid: &str| post(&url, &[("Mcp-Session-Id", sid)], r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#).status;
    let a = initialize(&url, "2025-11-25");
    let b = initialize(&url, "2025-11-25");
    let c = initialize(&url, "2025-11-25");
    assert_eq!(list(&a), 404, "the least recently used session was dropped");
    assert_eq!((list(&b), list(&c)), (200, 200));
    std::thread::sleep(Duration::from_millis(600));
    assert_eq!(list(&c), 404, "idle sessions expire");
}

#[test]
fn replica_name_leads_session_ids() {
    // Issue 16 (scale-out): a load balancer routes a legacy session on
    // MCP-Session-Id by the replica name in front of it.
    let r = start(HttpOptions { replica: Some("r-2_b".into()), ..opts() });
    let url = r.url("/mcp");
    let sid = initialize(&url, "2025-11-25");
    let rest = sid.strip_prefix("r-2_b.").expect("the replica name leads the id");
    assert!(rest.len() == 32 && rest.bytes().all(|b| b.is_ascii_hexdigit()), "{sid}");
    let g = post(&url, &[("Mcp-Session-Id", &sid)], r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    assert_eq!(g.status, 200, "{}", g.body);
    // RULES H1.3: /health names the replica (a load balancer's check, or a
    // person behind one, sees which replica answered).
    assert_eq!(get(&r.url("/health")).json()["replica"], "r-2_b");
    let server = Arc::new(Server::with_tools(
        ServerInfo { name: "m".into(), version: "1".into(), instructions: None },
        Vec::new(),
    ));
    for bad in ["", "a.b", "a b", &"r".repeat(33)] {
        let e = HttpServer::bind(server.clone(), HttpOptions { replica: Some(bad.into()), ..opts() });
        assert!(matches!(e, Err(HttpError::Config(ref m)) if m.contains("replica")), "{bad:?}");
    }
}

#[test]
fn legacy_unknown_method_is_200_and_keeps_the_session() {
    // A legacy client reads 404 as "session ended": only a missing session
    // is 404 there; an unknown method is the JSON-RPC error with 200.
    let r = start(opts());
    let url = r.url("/mcp");
    let sid = initialize(&url, "2025-11-25");
    let h = [("Mcp-Session-Id", sid.as_str()), ("MCP-Protocol-Version", "2025-11-25")];
    let g = post(&url, &h, r#"{"jsonrpc":"2.0","id":2,"method":"resources/list"}"#);
    assert_eq!((g.status, g.code()), (200, -32601), "{}", g.body);
    let g = post(&url, &h, r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#);
    assert_eq!(g.status, 200, "{}", g.body);
}

#[test]
fn unknown_protocol_version_header_on_legacy_requests() {
    let r = start(opts());
    let url = r.url("/mcp");
    let sid = initialize(&url, "2025-11-25");
    let g = post(
        &url,
        &[("Mcp-Session-Id", &sid), ("MCP-Protocol-Version", "1999-01-01")],
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    );
    assert_eq!((g.status, g.code()), (400, -32022), "{}", g.body);
}

#[test]
fn media_types_body_limits_and_parse_errors() {
    let r = start(HttpOptions { max_body: 1000, ..opts() });
    let url = r.url("/mcp");
    let list = modern_body(1, "tools/list", json!({}));
    let mh = [("MCP-Protocol-Version", MODERN), ("Mcp-Method", "tools/list")];
    let g = post(&url, &[mh[0], mh[1], ("Content-Type", "text/plain")], &list);
    assert_eq!(g.status, 415);
    let g = post(&url, &[mh[0], mh[1], ("Accept", "text/event-stream")], &list);
    assert_eq!(g.status, 406);
    let g = post(&url, &[mh[0], mh[1], ("Content-Type", "application/json; charset=utf-8"), ("Accept", "*/*")], &list);
    assert_eq!(g.status, 200, "{}", g.body);
    let g = post(&url, &mh, "{not json");
    assert_eq!((g.status, g.code()), (400, -32700));
    let g = post(&url, &mh, "");
    assert_eq!((g.status, g.code()), (400, -32700));
    let g = post(&url, &mh, "[]");
    assert_eq!((g.status, g.code()), (400, -32600));
    let big = format!("{{\"pad\":\"{}\"}}", "x".repeat(2000));
    let g = post(&url, &mh, &big);
    assert_eq!(g.status, 413);
    health_ok(&r);
    // A chunked body declares no length: it is read up to the limit, then 413.
    let mut s = TcpStream::connect(r.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nMCP-Protocol-Version: {MODERN}\r\n\
         Mcp-Method: tools/list\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{big}\r\n0\r\n\r\n",
        big.len()
    )
    .unwrap();
    let mut buf = [0u8; 64];
    let n = s.read(&mut buf).unwrap();
    assert!(buf[..n].starts_with(b"HTTP/1.1 413 "), "{}", String::from_utf8_lossy(&buf[..n]));
    health_ok(&r);
}

#[test]
fn declared_huge_body_is_refused_before_reading() {
    let r = start(HttpOptions { max_body: 1000, ..opts() });
    let mut s = TcpStream::connect(r.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(
        s,
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 10000000000\r\n\r\n"
    )
    .unwrap();
    let mut buf = [0u8; 64];
    let n = s.read(&mut buf).unwrap();
    assert!(buf[..n].starts_with(b"HTTP/1.1 413 "), "{}", String::from_utf8_lossy(&buf[..n]));
    health_ok(&r);
}

#[test]
fn host_origin_and_token_checks() {
    let r = start(HttpOptions {
        token: Some("s3cret-0123456789ab".into()),
        allowed_origins: vec!["https://app.example".into()],
        ..opts()
    });
    let url = r.url("/mcp");
    let mh = [("MCP-Protocol-Version", MODERN), ("Mcp-Method", "tools/list")];
    let list = modern_body(1, "tools/list", json!({}));
    // No token, wrong token: 401 with WWW-Authenticate.
    for auth in [None, Some("Bearer nope"), Some("Basic czNjcmV0"), Some("Bearer s3cret-0123456789ab2")] {
        let mut h = mh.to_vec();
        if let Some(a) = auth {
            h.push(("Authorization", a));
        }
        let g = post(&url, &h, &list);
        assert_eq!(g.status, 401, "{auth:?}");
        assert_eq!(g.header("www-authenticate"), Some("Bearer"));
        // RULES H6.3: missing and wrong are told apart.
        let want = if auth.is_some_and(|a| a.starts_with("Bearer")) {
            "invalid bearer token"
        } else {
            "bearer token required"
        };
        assert!(g.body.contains(want), "{auth:?}: {}", g.body);
    }
    let auth = ("Authorization", "Bearer s3cret-0123456789ab");
    assert_eq!(post(&url, &[mh[0], mh[1], auth], &list).status, 200);
    // /health stays open.
    health_ok(&r);
    // Origins: foreign 403, configured and loopback fine.
    let g = post(&url, &[mh[0], mh[1], auth, ("Origin", "https://evil.example")], &list);
    assert_eq!(g.status, 403);
    for o in ["https://app.example", "http://localhost:6274", "http://127.0.0.1"] {
        assert_eq!(post(&url, &[mh[0], mh[1], auth, ("Origin", o)], &list).status, 200, "{o}");
    }
    // DNS rebinding: a foreign Host on a loopback bind is refused.
    let mut s = TcpStream::connect(r.addr).unwrap();
    write!(s, "GET /health HTTP/1.1\r\nHost: evil.example:8080\r\nConnection: close\r\n\r\n").unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    assert!(out.starts_with("HTTP/1.1 403"), "{out}");
}

#[test]
fn public_bind_without_token_is_refused() {
    let server = Arc::new(Server::with_tools(
        ServerInfo { name: "m".into(), version: "1".into(), instructions: None },
        Vec::new(),
    ));
    let e = HttpServer::bind(server.clone(), HttpOptions { host: "0.0.0.0".into(), ..opts() });
    match e {
        Err(HttpError::Config(m)) => assert!(m.contains("without a token"), "{m}"),
        _ => panic!("a public bind without a token must be refused"),
    }
    let ok = HttpServer::bind(
        server.clone(),
        HttpOptions { host: "0.0.0.0".into(), allow_public_without_token: true, ..opts() },
    );
    assert!(ok.is_ok());
    let bad = HttpServer::bind(server, HttpOptions { path: "mcp".into(), ..opts() });
    assert!(matches!(bad, Err(HttpError::Config(_))));
}

/// RULES H6.1, H6.2: short tokens and tokens files open to others are
/// refused at bind, with the reason; a tokens file's names are accepted.
/// (Unix: file modes.)
#[cfg(unix)]
#[test]
fn short_tokens_and_open_tokens_files_are_refused() {
    use std::os::unix::fs::PermissionsExt;
    let server = Arc::new(Server::with_tools(
        ServerInfo { name: "m".into(), version: "1".into(), instructions: None },
        Vec::new(),
    ));
    let bind = |o: HttpOptions| match HttpServer::bind(server.clone(), o) {
        Err(HttpError::Config(m)) => m,
        Err(e) => panic!("{e}"),
        Ok(_) => String::from("bound"),
    };
    assert!(bind(HttpOptions { token: Some("fifteen-chars!!".into()), ..opts() }).contains("at least 16"));
    let dir = std::env::temp_dir().join(format!("mcplite-tokens-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("tokens");
    let write = |text: &str, mode: u32| {
        std::fs::write(&file, text).unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode)).unwrap();
    };
    let with_file = || HttpOptions { tokens_file: Some(file.clone()), ..opts() };
    write("alice 0123456789abcdef0123\n", 0o644);
    assert!(bind(with_file()).contains("accessible to others (mode 644)"));
    write("alice short\n", 0o600);
    let m = bind(with_file());
    assert!(m.contains("line 1") && m.contains("at least 16") && !m.contains("short"), "{m}");
    write("alice 0123456789abcdef0123\nalice 0123456789abcdef0124\n", 0o600);
    assert!(bind(with_file()).contains("used twice"));
    write(&format!("# team\nalice 0123456789abcdef0123 30\nbob sha256:{}\n", "ab".repeat(32)), 0o600);
    assert_eq!(bind(with_file()), "bound");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn metadata_requests_do_not_wait_behind_a_running_tool() {
    let r = start(opts());
    let url = r.url("/mcp");
    let u = url.clone();
    let slow = std::thread::spawn(move || {
        modern_post(&u, "tools/call", Some("sleep"), call_params("sleep", json!({"ms": 1500})))
    });
    std::thread::sleep(Duration::from_millis(200));
    let g = modern_post(&url, "tools/list", None, json!({}));
    assert_eq!(g.status, 200);
    let sid = initialize(&url, "2025-11-25");
    let g = post(&url, &[("Mcp-Session-Id", &sid)], r#"{"jsonrpc":"2.0","id":9,"method":"ping"}"#);
    assert_eq!(g.status, 200);
    assert!(!slow.is_finished(), "metadata answered while the tool is still running");
    let g = slow.join().unwrap();
    assert_eq!(g.json()["result"]["content"][0]["text"], "at once: 1");
}

#[test]
fn tool_calls_run_one_at_a_time_in_arrival_order() {
    let r = start(opts());
    let url = r.url("/mcp");
    // Each call asks for a response stream (a progress token, RULES C6.1),
    // whose headers come once the call is queued; the next call is sent only
    // then, so the order of arrival is the order of sending.
    let mut streams = Vec::new();
    for n in 0..6 {
        let mut body: Value =
            serde_json::from_str(&modern_body(n, "tools/call", call_params("sleep", json!({"ms": 50, "n": n}))))
                .unwrap();
        body["params"]["_meta"]["progressToken"] = json!(n);
        let resp = agent()
            .post(&url)
            .header("Content-Type", "application/json")
            .header("MCP-Protocol-Version", MODERN)
            .header("Mcp-Method", "tools/call")
            .header("Mcp-Name", "sleep")
            .header("Accept", "application/json, text/event-stream")
            .send(body.to_string())
            .expect("request");
        assert_eq!(resp.headers().get("content-type").and_then(|v| v.to_str().ok()), Some("text/event-stream"));
        streams.push(resp);
    }
    for s in streams {
        let g = collect(s);
        assert!(g.body.contains(r#""text":"at once: 1""#), "{}", g.body);
    }
    assert_eq!(*r.order.lock().unwrap(), vec![0, 1, 2, 3, 4, 5]);
}

#[test]
fn hostile_clients_leave_the_server_serving() {
    let r = start(HttpOptions { header_timeout: Duration::from_millis(500), max_connections: 64, ..opts() });
    // Slow headers: cut off after the header timeout while others are served.
    let mut slow = TcpStream::connect(r.addr).unwrap();
    slow.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n").unwrap();
    health_ok(&r);
    std::thread::sleep(Duration::from_millis(1200));
    slow.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let _ = slow.write_all(b"X-Slow: 1\r\n");
    let mut out = Vec::new();
    // The server closes the connection (a read timeout here would be Err).
    let closed = slow.read_to_end(&mut out);
    assert!(closed.is_ok(), "slow client was not cut off: {closed:?}");
    assert!(!String::from_utf8_lossy(&out).contains("200"), "slow client was served");
    health_ok(&r);

    // Garbage request line.
    let mut s = TcpStream::connect(r.addr).unwrap();
    s.write_all(b"\x00\x01GARBAGE nonsense\r\n\r\n").unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    assert!(out.is_empty() || out.starts_with(b"HTTP/1.1 400"), "{}", String::from_utf8_lossy(&out));
    health_ok(&r);

    // Headers over the size limit (RULES H1.2): 431, then the connection ends.
    for size in [20_000, 100_000] {
        let mut s = TcpStream::connect(r.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let huge = format!("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: {}\r\n\r\n", "a".repeat(size));
        let _ = s.write_all(huge.as_bytes());
        let mut out = Vec::new();
        let _ = s.read_to_end(&mut out);
        assert!(out.starts_with(b"HTTP/1.1 431 "), "{size}: {}", String::from_utf8_lossy(&out));
        health_ok(&r);
    }

    // 1,000 concurrent connections (far more than the connection limit):
    // those over the limit wait to be accepted; health is still answered.
    let conns: Vec<TcpStream> = (0..1000).filter_map(|_| TcpStream::connect(r.addr).ok()).collect();
    drop(conns);
    served_again(&r);

    // A client that disconnects mid-call.
    let mut s = TcpStream::connect(r.addr).unwrap();
    let body = modern_body(1, "tools/call", call_params("sleep", json!({"ms": 300})));
    write!(
        s,
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nMCP-Protocol-Version: {MODERN}\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: sleep\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(50));
    drop(s);
    health_ok(&r);
    let g = modern_post(&r.url("/mcp"), "tools/call", Some("echo"), call_params("echo", json!({"after": 1})));
    assert_eq!(g.status, 200);
}

/// Send a raw request on `s` and read what comes back in one read.
fn raw_exchange(s: &mut TcpStream, request: &str) -> String {
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut buf = vec![0u8; 4096];
    let n = s.read(&mut buf).unwrap_or_else(|e| panic!("no answer in bounded time: {e}"));
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

/// An early refusal (415, 406, 404, 405, 401) is given before the body is
/// read. Found by the soak run: when the body had not arrived yet, the
/// connection was closed after the answer without `Connection: close`, and
/// a client reusing it lost its next request. Now a small body is read first
/// and the connection carries the next request; a large or slow one closes
/// the connection and the answer says so.
#[test]
fn early_refusals_keep_the_connection_usable_or_say_close() {
    let r = start(opts());
    let locked = start(HttpOptions { token: Some("s3cret-0123456789ab".into()), ..opts() });
    let list = modern_body(1, "tools/list", json!({}));
    let good = |auth: &str| {
        format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json\r\n\
             MCP-Protocol-Version: {MODERN}\r\nMcp-Method: tools/list\r\n{auth}Content-Length: {}\r\n\r\n{list}",
            list.len()
        )
    };
    let json = "Content-Type: application/json\r\nAccept: application/json";
    let refusals = [
        (&r, "POST /mcp", "Content-Type: text/plain\r\nAccept: application/json", "415", ""),
        (&r, "POST /mcp", "Content-Type: application/json\r\nAccept: text/html", "406", ""),
        (&r, "POST /elsewhere", json, "404", ""),
        (&r, "PUT /mcp", json, "405", ""),
        (&locked, "POST /mcp", json, "401", "Authorization: Bearer s3cret-0123456789ab\r\n"),
    ];
    for (server, line, headers, status, auth) in refusals {
        // The headers first, the body 100 ms later (as a client writing them
        // separately may send them).
        let mut s = TcpStream::connect(server.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let head = format!("{line} HTTP/1.1\r\nHost: 127.0.0.1\r\n{headers}\r\nContent-Length: {}\r\n\r\n", list.len());
        s.write_all(head.as_bytes()).unwrap();
        std::thread::sleep(Duration::from_millis(100));
        s.write_all(list.as_bytes()).unwrap();
        let mut buf = vec![0u8; 4096];
        let n = s.read(&mut buf).unwrap();
        let out = String::from_utf8_lossy(&buf[..n]).to_ascii_lowercase();
        assert!(out.starts_with(&format!("http/1.1 {status} ")), "{out}");
        assert!(!out.contains("connection: close"), "{out}");
        // The same connection serves the next request.
        let out = raw_exchange(&mut s, &good(auth));
        assert!(out.starts_with("HTTP/1.1 200 "), "after {status}: {out:?}");
    }
    // A body too large to read before refusing: the answer says the
    // connection closes.
    let mut s = TcpStream::connect(r.addr).unwrap();
    let head = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: 500000\r\n\r\n";
    let out = raw_exchange(&mut s, head).to_ascii_lowercase();
    assert!(out.starts_with("http/1.1 415 "), "{out}");
    assert!(out.contains("\r\nconnection: close\r\n"), "{out}");
    // A body that stops arriving: answered after the drain time (1 s), and
    // the answer says the connection closes.
    let mut s = TcpStream::connect(r.addr).unwrap();
    let head = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\n{\"js";
    let out = raw_exchange(&mut s, head).to_ascii_lowercase();
    assert!(out.starts_with("http/1.1 415 "), "{out}");
    assert!(out.contains("\r\nconnection: close\r\n"), "{out}");
    // A declared body over the limit: 413, and the connection closes.
    let mut s = TcpStream::connect(r.addr).unwrap();
    let head =
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 999999999\r\n\r\n";
    let out = raw_exchange(&mut s, head).to_ascii_lowercase();
    assert!(out.starts_with("http/1.1 413 "), "{out}");
    assert!(out.contains("\r\nconnection: close\r\n"), "{out}");
    health_ok(&r);
}

/// After clients over the connection limit went away, the next client is
/// served. The server notices closed connections asynchronously, so until
/// it has, a health check may be told to retry (503, RULES H1.4): ask again
/// (for a bounded number of times) until it is served.
fn served_again(r: &Running) {
    for _ in 0..400 {
        let mut s = TcpStream::connect(r.addr).unwrap();
        let out = raw_exchange(&mut s, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
        if out.starts_with("HTTP/1.1 200 ") {
            return health_ok(r);
        }
        assert!(out.starts_with("HTTP/1.1 503 "), "neither served nor told to retry: {out}");
        std::thread::sleep(Duration::from_millis(25));
    }
    panic!("the server did not serve again after the connections over its limit closed");
}

#[test]
fn connections_over_the_limit_are_told_to_retry() {
    // RULES H1.4: with the limit held by open connections, a new client is
    // answered 503 with Retry-After at once, instead of waiting unanswered
    // until a held connection ends.
    let r = start(HttpOptions { max_connections: 4, header_timeout: Duration::from_secs(60), ..opts() });
    let health = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    // Four keep-alive connections, each served once and left open.
    let mut held: Vec<TcpStream> = Vec::new();
    for _ in 0..4 {
        let mut s = TcpStream::connect(r.addr).unwrap();
        let out = raw_exchange(&mut s, health);
        assert!(out.starts_with("HTTP/1.1 200 "), "{out}");
        held.push(s);
    }
    // More connections beyond the limit that send nothing, also held.
    let idle: Vec<TcpStream> = (0..10).map(|_| TcpStream::connect(r.addr).unwrap()).collect();
    // A new client, on /health and on the endpoint: 503, Retry-After, closed.
    let body = modern_body(1, "tools/list", json!({}));
    let list = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nMCP-Protocol-Version: {MODERN}\r\n\
         Mcp-Method: tools/list\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    for req in [health, list.as_str()] {
        let mut s = TcpStream::connect(r.addr).unwrap();
        let out = raw_exchange(&mut s, req).to_ascii_lowercase();
        assert!(out.starts_with("http/1.1 503 "), "{out}");
        assert!(out.contains("\r\nretry-after: 1\r\n"), "{out}");
        assert!(out.contains("\r\nconnection: close\r\n"), "{out}");
        assert!(out.contains("too many connections"), "{out}");
    }
    // The held connections are still served.
    let out = raw_exchange(&mut held[0], health);
    assert!(out.starts_with("HTTP/1.1 200 "), "{out}");
    // Once they close, new clients are served again.
    drop(held);
    drop(idle);
    served_again(&r);
}

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

#[test]
fn configured_hosts_are_enforced_on_a_public_bind() {
    // RULES H5.2: bound to 0.0.0.0 with a token and allowed_hosts, a Host
    // not listed is refused; without allowed_hosts any Host is accepted.
    let auth = ("Authorization", "Bearer s3cret-0123456789ab");
    let public = HttpOptions {
        host: "0.0.0.0".into(),
        token: Some("s3cret-0123456789ab".into()),
        allow_public_without_token: true,
        ..opts()
    };
    let r = start(HttpOptions { allowed_hosts: vec!["Example.TEST".into()], ..public.clone() });
    let port = r.addr.port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let mh = [("MCP-Protocol-Version", MODERN), ("Mcp-Method", "tools/list"), auth];
    let list = modern_body(1, "tools/list", json!({}));
    for (host, status) in [
        ("evil.test", 403),
        (&*format!("evil.test:{port}"), 403),
        ("example.test.evil", 403),
        ("example.test", 200),
        (&*format!("example.test:{port}"), 200),
        (&*format!("localhost:{port}"), 200),
    ] {
        let g = post(&url, &[mh[0], mh[1], mh[2], ("Host", host)], &list);
        assert_eq!(g.status, status, "Host: {host}: {}", g.body);
        if status == 403 {
            assert!(g.body.contains("Host header not allowed"), "{}", g.body);
        }
    }
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let out = raw_exchange(&mut s, "GET /health HTTP/1.1\r\nHost: evil.test\r\nConnection: close\r\n\r\n");
    assert!(out.starts_with("HTTP/1.1 403 "), "{out}");
    drop(r);
    // Not configured: a public bind accepts any Host (the operator's proxy
    // or network decides which names reach it).
    let r = start(public);
    let url = format!("http://127.0.0.1:{}/mcp", r.addr.port());
    let g = post(&url, &[mh[0], mh[1], mh[2], ("Host", "evil.test")], &list);
    assert_eq!(g.status, 200, "{}", g.body);
}

#[test]
fn stop_lets_the_call_in_flight_finish() {
    let mut r = start(opts());
    let url = r.url("/mcp");
    let call = std::thread::spawn(move || {
        modern_post(&url, "tools/call", Some("sleep"), call_params("sleep", json!({"ms": 500})))
    });
    std::thread::sleep(Duration::from_millis(150));
    r.stop();
    let g = call.join().unwrap();
    assert_eq!(g.status, 200, "{}", g.body);
    assert_eq!(g.json()["result"]["content"][0]["text"], "at once: 1");
    assert!(TcpStream::connect(r.addr).is_err(), "no longer accepting");
}

/// RULES H4.2: a connection opened before the stop whose request comes
/// only after it (a proxy connects, then sends) is answered, not closed
/// unanswered: a POST that went out cannot be sent to another replica. A
/// connection still in the listen queue at the stop is served the same way.
#[test]
fn stop_answers_requests_on_connections_opened_before_it() {
    let mut r = start(opts());
    let mut open: Vec<TcpStream> = (0..8).map(|_| TcpStream::connect(r.addr).unwrap()).collect();
    r.stop.store(true, Ordering::SeqCst);
    // The stop has happened once a new connection is refused.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(r.addr).is_ok() {
        assert!(std::time::Instant::now() < deadline, "the server kept accepting after the stop");
        std::thread::sleep(Duration::from_millis(5));
    }
    for (i, s) in open.iter_mut().enumerate() {
        let body = modern_body(i as i64, "tools/call", call_params("echo", json!({"n": i})));
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
             Accept: application/json\r\nMCP-Protocol-Version: {MODERN}\r\nMcp-Method: tools/call\r\n\
             Mcp-Name: echo\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        let out = raw_exchange(s, &request);
        assert!(out.starts_with("HTTP/1.1 200"), "connection {i}: {out:?}");
        assert!(out.contains(&format!("{{\\\"n\\\":{i}}}")), "connection {i}: {out:?}");
    }
    r.stop();
}

/// The stop check may be costly (in R it evaluates R code): it runs at most
/// once per poll interval, not after every call.
#[test]
fn stop_check_runs_once_per_poll_not_once_per_call() {
    let mut host = TestHost { running: Arc::new(AtomicUsize::new(0)), order: Arc::default() };
    let info = ServerInfo { name: "mcplite".into(), version: "9.9.9".into(), instructions: None };
    let server = Arc::new(Server::new(info, &mut host));
    let http = HttpServer::bind(server, opts()).expect("bind");
    let url = format!("http://{}/mcp", http.local_addr());
    let signal = Arc::new(AtomicBool::new(false));
    let s = signal.clone();
    http.stop_when(move || s.load(Ordering::SeqCst));
    let checks = Arc::new(AtomicUsize::new(0));
    let c = checks.clone();
    let poll = Duration::from_secs(2);
    let thread = std::thread::spawn(move || {
        http.run(&mut host, poll, &mut |_| {
            c.fetch_add(1, Ordering::SeqCst);
            false
        })
    });
    let t = std::time::Instant::now();
    for n in 0..40 {
        let g = modern_post(&url, "tools/call", Some("echo"), call_params("echo", json!({"n": n})));
        assert_eq!(g.status, 200, "{}", g.body);
    }
    let elapsed = t.elapsed();
    signal.store(true, Ordering::SeqCst);
    thread.join().unwrap();
    // One check on entry, one more for each poll interval the calls took,
    // and one when the idle wait after them timed out.
    let most = 2 + (elapsed.as_millis() / poll.as_millis()) as usize;
    let n = checks.load(Ordering::SeqCst);
    assert!((1..=most).contains(&n), "{n} stop checks for 40 calls in {elapsed:?}");
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
