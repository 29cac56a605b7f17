//! Progress and cancellation over Streamable HTTP (RULES C6), driven by a
//! real HTTP client (ureq) and raw TCP against a host whose tool sleeps in
//! steps, reports its progress, stops when interrupted, and leaves a side
//! effect only when it ran to the end.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mcplite_engine::host::{CallContext, Host, ToolFailure, ToolResult, ToolSpec};
use mcplite_engine::logging::{LogEntry, LogLevel};
use mcplite_engine::progress::{Inflight, ProgressPolicy};
use mcplite_engine::telemetry::OtelRecorder;
use mcplite_engine::transport::http::{HttpOptions, HttpServer};
use mcplite_engine::{Server, ServerInfo};
use opentelemetry::Value as OtelValue;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider};
use serde_json::{json, Map, Value};

const MODERN: &str = "2026-07-28";
const LEGACY: &str = "2025-11-25";

/// What the tools did: `started` has the tag of every `work` call that
/// began, `done` of every one that ran to its end (the side effect a
/// cancelled call never leaves).
#[derive(Default)]
struct Effects {
    started: Mutex<Vec<String>>,
    done: Mutex<Vec<String>>,
    interrupts: AtomicUsize,
}

/// Tools: `work` (`{"tag", "ms", "steps"}`: sleeps `ms` in `steps` steps,
/// reporting `mcp_progress(i, steps, "step i")` after each; interrupted by a
/// cancellation) and `echo`.
struct WorkHost {
    inflight: Arc<Inflight>,
    interrupted: Arc<AtomicBool>,
    effects: Arc<Effects>,
}

impl Host for WorkHost {
    fn tools(&mut self) -> Vec<ToolSpec> {
        ["work", "echo", "trio"].iter().map(|n| ToolSpec::new(*n, format!("{n} tool"))).collect()
    }

    fn call_tool(
        &mut self,
        index: usize,
        arguments: Option<&Map<String, Value>>,
        _: &CallContext,
    ) -> Result<ToolResult, ToolFailure> {
        let args = arguments.cloned().unwrap_or_default();
        if index == 1 {
            return Ok(ToolResult::text(Value::Object(args).to_string()));
        }
        if index == 2 {
            // The conformance suite's tool: 0, 50 and 100 of 100, 50 ms
            // apart, returning right after the last.
            // It also logs a message at each step, as the suite's
            // `test_tool_with_logging` does (RULES G2).
            for (j, v) in [0.0, 50.0, 100.0].into_iter().enumerate() {
                if j > 0 {
                    std::thread::sleep(Duration::from_millis(50));
                }
                self.inflight.log(LogEntry {
                    level: LogLevel::Info,
                    logger: Some("trio".into()),
                    data: json!(format!("step {j}")).to_string(),
                });
                self.inflight.report(v, Some(100.0), None).unwrap();
            }
            return Ok(ToolResult::text("done"));
        }
        // A stale interrupt from an earlier cancellation does not count.
        self.interrupted.store(false, Ordering::SeqCst);
        let tag = args.get("tag").and_then(Value::as_str).unwrap_or("").to_string();
        self.effects.started.lock().unwrap().push(tag.clone());
        let ms = args.get("ms").and_then(Value::as_u64).unwrap_or(0);
        let steps = args.get("steps").and_then(Value::as_u64).unwrap_or(1).max(1);
        let end = Instant::now() + Duration::from_millis(ms);
        for i in 1..=steps {
            let step_end = end - Duration::from_millis(ms) * (steps - i) as u32 / steps as u32;
            while Instant::now() < step_end {
                if self.interrupted.load(Ordering::SeqCst) {
                    return Err(ToolFailure::Interrupted);
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            // What the R bridge's mcp_progress() does.
            self.inflight.report(i as f64, Some(steps as f64), Some(&format!("step {i}"))).unwrap();
        }
        self.effects.done.lock().unwrap().push(tag);
        Ok(ToolResult::text("done"))
    }
}

struct Running {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    effects: Arc<Effects>,
}

impl Running {
    fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            t.join().unwrap();
        }
    }
}

fn policy() -> ProgressPolicy {
    ProgressPolicy::with_interval(Duration::from_millis(200))
}

fn start(exporter: Option<InMemorySpanExporter>) -> Running {
    start_with(exporter, HttpOptions { port: 0, ..HttpOptions::default() }, None)
}

/// [`start`] with options, and a stop signal for `HttpServer::stop_when`.
fn start_with(exporter: Option<InMemorySpanExporter>, opts: HttpOptions, signal: Option<Arc<AtomicBool>>) -> Running {
    let interrupted = Arc::new(AtomicBool::new(false));
    let effects = Arc::new(Effects::default());
    let (i, e) = (interrupted.clone(), effects.clone());
    let inflight = Arc::new(Inflight::new(
        policy(),
        Some(Arc::new(move || {
            e.interrupts.fetch_add(1, Ordering::SeqCst);
            i.store(true, Ordering::SeqCst);
        })),
    ));
    let mut host = WorkHost { inflight: inflight.clone(), interrupted, effects: effects.clone() };
    let info = ServerInfo { name: "mcplite".into(), version: "9.9.9".into(), instructions: None };
    let mut server = Server::new(info, &mut host);
    if let Some(x) = exporter {
        let provider = SdkTracerProvider::builder().with_simple_exporter(x).build();
        server.set_recorder(Some(Box::new(OtelRecorder::from_provider(provider))));
    }
    let http = HttpServer::bind_with(Arc::new(server), opts, inflight).expect("bind");
    if let Some(signal) = signal {
        http.stop_when(move || signal.load(Ordering::SeqCst));
    }
    let addr = http.local_addr();
    let stop = Arc::new(AtomicBool::new(false));
    let s = stop.clone();
    let thread = std::thread::spawn(move || {
        http.run(&mut host, Duration::from_millis(10), &mut |_| s.load(Ordering::SeqCst));
    });
    Running { addr, stop, thread: Some(thread), effects }
}

struct Got {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Got {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
    /// The SSE events' data, checking the framing of each event.
    fn events(&self) -> Vec<Value> {
        assert!(self.body.ends_with("\n\n"), "{:?}", self.body);
        self.body
            .trim_end_matches('\n')
            .split("\n\n")
            .map(|ev| {
                let data = ev.strip_prefix("event: message\ndata: ").unwrap_or_else(|| panic!("framing: {ev:?}"));
                assert!(!data.contains('\n'), "one data line: {ev:?}");
                serde_json::from_str(data).unwrap()
            })
            .collect()
    }
}

fn post(url: &str, headers: &[(&str, &str)], body: &str) -> Got {
    let agent = ureq::Agent::new_with_config(ureq::Agent::config_builder().http_status_as_error(false).build());
    let mut req = agent.post(url).header("Content-Type", "application/json");
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let mut r = req.send(body).expect("request");
    let status = r.status().as_u16();
    let headers =
        r.headers().iter().map(|(k, v)| (k.as_str().to_string(), v.to_str().unwrap_or("").to_string())).collect();
    let body = r.body_mut().read_to_string().unwrap_or_default();
    Got { status, headers, body }
}

const BOTH: &str = "application/json, text/event-stream";

fn modern_call(id: i64, name: &str, args: Value, token: Option<Value>) -> String {
    let mut meta = json!({"io.modelcontextprotocol/protocolVersion": MODERN,
                          "io.modelcontextprotocol/clientCapabilities": {}});
    if let Some(t) = token {
        meta["progressToken"] = t;
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": name, "arguments": args, "_meta": meta}})
    .to_string()
}

fn modern_post(url: &str, accept: &str, name: &str, body: &str) -> Got {
    post(
        url,
        &[("MCP-Protocol-Version", MODERN), ("Mcp-Method", "tools/call"), ("Mcp-Name", name), ("Accept", accept)],
        body,
    )
}

fn legacy_call(id: Value, args: Value, token: Option<Value>) -> String {
    let mut params = json!({"name": "work", "arguments": args});
    if let Some(t) = token {
        params["_meta"] = json!({"progressToken": t});
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}).to_string()
}

fn initialize(url: &str) -> String {
    let body = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let g = post(url, &[("Accept", BOTH)], &body.to_string());
    assert_eq!(g.status, 200, "{}", g.body);
    g.header("mcp-session-id").expect("a session id").to_string()
}

fn legacy_post(url: &str, sid: &str, accept: &str, body: &str) -> Got {
    post(url, &[("Mcp-Session-Id", sid), ("MCP-Protocol-Version", LEGACY), ("Accept", accept)], body)
}

/// The tool was interrupted (`interrupts` so far), the next call is
/// answered, and no cancelled call left its side effect.
fn assert_cancelled(r: &Running, interrupts: usize) {
    wait_for("the interrupt", || r.effects.interrupts.load(Ordering::SeqCst) == interrupts);
    echo_answered(r);
    assert!(r.effects.done.lock().unwrap().is_empty(), "a cancelled tool ran to its end");
}

fn echo_answered(r: &Running) {
    let g = modern_post(&r.url(), BOTH, "echo", &modern_call(99, "echo", json!({"after": 1}), None));
    assert_eq!(g.status, 200, "{}", g.body);
    assert_eq!(g.json()["result"]["content"][0]["text"], "{\"after\":1}");
}

/// Check an SSE answer: headers, framing, progress events for `token`
/// with increasing values and (when `reports`) the tool's own reports in
/// order, and the response last. Returns the progress events' params.
fn check_stream(g: &Got, token: &Value, id: &Value, reports: bool) -> Vec<Value> {
    assert_eq!(g.status, 200, "{}", g.body);
    assert_eq!(g.header("content-type"), Some("text/event-stream"));
    assert_eq!(g.header("cache-control"), Some("no-cache"));
    assert_eq!(g.header("x-accel-buffering"), Some("no"));
    let mut events = g.events();
    let response = events.pop().unwrap();
    assert_eq!(response["id"], *id, "the response is the last event: {}", g.body);
    assert_eq!(response["result"]["content"][0]["text"], "done");
    assert!(!events.is_empty(), "progress before the response: {}", g.body);
    let params: Vec<Value> = events
        .iter()
        .map(|e| {
            assert_eq!(e["method"], "notifications/progress", "{e}");
            assert!(e.get("id").is_none());
            assert_eq!(e["params"]["progressToken"], *token);
            e["params"].clone()
        })
        .collect();
    let values: Vec<f64> = params.iter().map(|p| p["progress"].as_f64().unwrap()).collect();
    assert!(values.windows(2).all(|w| w[0] < w[1]), "increasing: {values:?}");
    let msg = |p: &Value| p["message"].as_str().unwrap_or("").to_string();
    assert!(msg(&params[0]).starts_with("still running after"), "a heartbeat first: {}", params[0]);
    if reports {
        // The tool's reports in order, the last one (made just before the
        // tool returns) included, with the tool's total (RULES C2.4).
        let steps: Vec<String> = params.iter().map(msg).filter(|m| m.len() == 6 && m.starts_with("step ")).collect();
        assert_eq!(steps, ["step 1", "step 2", "step 3"]);
        assert!(params.iter().filter(|p| msg(p).starts_with("step")).all(|p| p["total"] == 3));
        // Heartbeats in a silence after a report repeat its message.
        assert!(params.iter().map(msg).all(|m| m.starts_with("still running") || m.starts_with("step ")));
    }
    params
}

#[test]
fn c6_modern_call_with_token_is_answered_as_an_sse_stream() {
    let exporter = InMemorySpanExporter::default();
    let r = start(Some(exporter.clone()));
    let token = json!("tok-1");
    let g = modern_post(
        &r.url(),
        BOTH,
        "work",
        // The first report at 600 ms, well after the first heartbeat (200
        // ms): at 300 ms a loaded machine under Wine once sent the report first.
        &modern_call(1, "work", json!({"tag": "a", "ms": 1800, "steps": 3}), Some(token.clone())),
    );
    check_stream(&g, &token, &json!(1), true);
    assert_eq!(*r.effects.done.lock().unwrap(), ["a"]);
    // RULES T10: the request's HTTP span lasts as long as its stream, so it
    // contains the span of the call it carries.
    let spans = exporter.get_finished_spans().unwrap();
    let call = spans.iter().find(|s| s.name.contains("tools/call work")).expect("the call's span");
    let http = spans.iter().find(|s| s.span_context.span_id() == call.parent_span_id).expect("the HTTP span");
    assert!(http.name.starts_with("POST"), "{}", http.name);
    assert!(http.start_time <= call.start_time && call.end_time <= http.end_time, "{http:?} {call:?}");
}

#[test]
fn c6_legacy_call_with_token_is_answered_as_an_sse_stream() {
    let r = start(None);
    let sid = initialize(&r.url());
    let token = json!(7);
    let g = legacy_post(
        &r.url(),
        &sid,
        BOTH,
        &legacy_call(json!("x"), json!({"tag": "a", "ms": 1800, "steps": 3}), Some(token.clone())),
    );
    check_stream(&g, &token, &json!("x"), true);
    // A heartbeat only (a tool that reports nothing).
    let g = legacy_post(&r.url(), &sid, BOTH, &legacy_call(json!(2), json!({"tag": "b", "ms": 500}), Some(json!(8))));
    let params = check_stream(&g, &json!(8), &json!(2), false);
    assert_eq!(params[0]["progress"], 0, "a heartbeat sets no scale");
}

#[test]
fn c2_a_short_burst_and_the_last_report_arrive_whole_in_both_eras() {
    let r = start(None);
    let sid = initialize(&r.url());
    for i in 0..5 {
        let token = json!(format!("trio-{i}"));
        let modern = modern_post(&r.url(), BOTH, "trio", &modern_call(i, "trio", json!({}), Some(token.clone())));
        let call = json!({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                          "params": {"name": "trio", "_meta": {"progressToken": token}}});
        let legacy = legacy_post(&r.url(), &sid, BOTH, &call.to_string());
        for g in [modern, legacy] {
            assert_eq!(g.header("content-type"), Some("text/event-stream"), "{}", g.body);
            let mut events = g.events();
            let response = events.pop().unwrap();
            assert_eq!(response["result"]["content"][0]["text"], "done", "{}", g.body);
            let values: Vec<Value> = events.iter().map(|e| e["params"]["progress"].clone()).collect();
            assert_eq!(values, [json!(0), json!(50), json!(100)], "run {i}: {}", g.body);
            assert!(events.iter().all(|e| e["params"]["total"] == 100 && e["params"]["progressToken"] == token));
        }
    }
}

#[test]
fn c6_calls_without_token_or_sse_accept_keep_json() {
    let r = start(None);
    let url = r.url();
    let work = json!({"tag": "a", "ms": 500});
    for (accept, token) in [
        (BOTH, None),
        ("application/json", Some(json!("t"))),
        (BOTH, Some(json!(1.5))),
        (BOTH, Some(json!(null))),
        (BOTH, Some(json!({"a": 1}))),
    ] {
        let g = modern_post(&url, accept, "work", &modern_call(3, "work", work.clone(), token.clone()));
        assert_eq!(g.status, 200, "{}", g.body);
        assert_eq!(g.header("content-type"), Some("application/json"), "{accept} {token:?}");
        assert_eq!(g.json()["result"]["content"][0]["text"], "done");
    }
    let sid = initialize(&url);
    let g = legacy_post(&url, &sid, BOTH, &legacy_call(json!(4), work, None));
    assert_eq!(g.header("content-type"), Some("application/json"));
    assert_eq!(g.json()["result"]["content"][0]["text"], "done");
}

/// Send a modern `tools/call` on a raw connection.
fn raw_call(addr: SocketAddr, id: i64, args: Value, token: Option<Value>) -> TcpStream {
    let mut s = TcpStream::connect(addr).unwrap();
    let body = modern_call(id, "work", args, token);
    write!(
        s,
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: {BOTH}\r\n\
         MCP-Protocol-Version: {MODERN}\r\nMcp-Method: tools/call\r\nMcp-Name: work\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    s
}

/// Read from `s` until `needle` has arrived.
fn read_until(s: &mut TcpStream, needle: &str) -> String {
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&got).contains(needle) {
        let n = s.read(&mut buf).expect("read");
        assert!(n > 0, "closed before {needle:?}: {}", String::from_utf8_lossy(&got));
        got.extend_from_slice(&buf[..n]);
    }
    String::from_utf8_lossy(&got).into_owned()
}

fn wait_for(what: &str, f: impl Fn() -> bool) {
    let t = Instant::now();
    while !f() {
        assert!(t.elapsed() < Duration::from_secs(10), "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn c6_closing_the_sse_stream_cancels_the_running_call() {
    let exporter = InMemorySpanExporter::default();
    let r = start(Some(exporter.clone()));
    let mut s = raw_call(r.addr, 1, json!({"tag": "a", "ms": 3000, "steps": 3}), Some(json!("t")));
    // The stream is open and the tool running: a heartbeat has arrived.
    let head = read_until(&mut s, "notifications/progress");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(head.to_ascii_lowercase().contains("content-type: text/event-stream"), "{head}");
    drop(s);
    assert_cancelled(&r, 1);
    assert_eq!(*r.effects.started.lock().unwrap(), ["a"]);
    // The span of the cancelled call records the cancellation.
    let spans = exporter.get_finished_spans().unwrap();
    let call = spans.iter().find(|s| s.name.contains("tools/call work")).expect("the call's span");
    let etype = call.attributes.iter().find(|kv| kv.key.as_str() == "error.type").map(|kv| kv.value.clone());
    assert_eq!(etype, Some(OtelValue::from("cancelled")));
}

#[test]
fn c6_closing_a_json_exchange_cancels_the_running_call() {
    let r = start(None);
    let s = raw_call(r.addr, 1, json!({"tag": "a", "ms": 3000}), None);
    wait_for("the tool to start", || r.effects.started.lock().unwrap().len() == 1);
    drop(s);
    assert_cancelled(&r, 1);
}

#[test]
fn c6_a_queued_call_whose_client_left_is_skipped() {
    let r = start(None);
    let url = r.url();
    let first = std::thread::spawn(move || {
        modern_post(&url, BOTH, "work", &modern_call(1, "work", json!({"tag": "a", "ms": 800}), None))
    });
    wait_for("the first tool to start", || r.effects.started.lock().unwrap().len() == 1);
    let s = raw_call(r.addr, 2, json!({"tag": "b", "ms": 10}), Some(json!("t")));
    std::thread::sleep(Duration::from_millis(100));
    drop(s);
    let g = first.join().unwrap();
    assert_eq!(g.json()["result"]["content"][0]["text"], "done");
    echo_answered(&r);
    assert_eq!(*r.effects.started.lock().unwrap(), ["a"], "the queued call never ran");
    assert_eq!(r.effects.interrupts.load(Ordering::SeqCst), 0, "the running call was not cancelled");
}

fn cancel(url: &str, sid: &str, id: Value) -> Got {
    let body = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                      "params": {"requestId": id, "reason": "test"}});
    legacy_post(url, sid, BOTH, &body.to_string())
}

#[test]
fn c6_legacy_cancel_notification_cancels_a_call_of_its_own_session() {
    let r = start(None);
    let url = r.url();
    let sid = initialize(&url);
    for (accept, token) in [("application/json", None), (BOTH, Some(json!("p")))] {
        let before = r.effects.started.lock().unwrap().len();
        let (u, s) = (url.clone(), sid.clone());
        let call = std::thread::spawn(move || {
            legacy_post(&u, &s, accept, &legacy_call(json!(5), json!({"tag": "a", "ms": 3000}), token))
        });
        wait_for("the tool to start", || r.effects.started.lock().unwrap().len() == before + 1);
        assert_eq!(cancel(&url, &sid, json!(5)).status, 202);
        let g = call.join().unwrap();
        // No JSON-RPC response: an empty 202, or a stream without events.
        if accept == BOTH {
            assert_eq!(g.status, 200);
            assert!(!g.body.contains("\"id\""), "no response for a cancelled call: {}", g.body);
        } else {
            assert_eq!((g.status, g.body.as_str()), (202, ""));
        }
    }
    assert_cancelled(&r, 2);
}

#[test]
fn c6_legacy_cancel_from_another_session_is_ignored() {
    let r = start(None);
    let url = r.url();
    let (mine, other) = (initialize(&url), initialize(&url));
    let (u, s) = (url.clone(), mine.clone());
    let call = std::thread::spawn(move || {
        legacy_post(&u, &s, BOTH, &legacy_call(json!(5), json!({"tag": "a", "ms": 600}), None))
    });
    wait_for("the tool to start", || r.effects.started.lock().unwrap().len() == 1);
    assert_eq!(cancel(&url, &other, json!(5)).status, 202);
    assert_eq!(cancel(&url, &mine, json!(6)).status, 202, "another id");
    assert_eq!(cancel(&url, &mine, json!("5")).status, 202, "ids compare as JSON values");
    // A burst of cancellations for ids that were never sent.
    for id in 1000..2000 {
        assert_eq!(cancel(&url, &mine, json!(id)).status, 202);
    }
    let g = call.join().unwrap();
    assert_eq!(g.json()["result"]["content"][0]["text"], "done");
    assert_eq!(*r.effects.done.lock().unwrap(), ["a"]);
    assert_eq!(r.effects.interrupts.load(Ordering::SeqCst), 0);
    // A cancel after the end changes nothing.
    assert_eq!(cancel(&url, &mine, json!(5)).status, 202);
    echo_answered(&r);
}

#[test]
fn c6_legacy_cancel_drops_a_queued_call_of_the_session() {
    let r = start(None);
    let url = r.url();
    let sid = initialize(&url);
    let (u, s) = (url.clone(), sid.clone());
    let first = std::thread::spawn(move || {
        legacy_post(&u, &s, BOTH, &legacy_call(json!(1), json!({"tag": "a", "ms": 800}), None))
    });
    wait_for("the first tool to start", || r.effects.started.lock().unwrap().len() == 1);
    let (u, s) = (url.clone(), sid.clone());
    let queued = std::thread::spawn(move || {
        legacy_post(&u, &s, BOTH, &legacy_call(json!(2), json!({"tag": "b", "ms": 10}), None))
    });
    std::thread::sleep(Duration::from_millis(150));
    assert_eq!(cancel(&url, &sid, json!(2)).status, 202);
    let g = queued.join().unwrap();
    assert_eq!((g.status, g.body.as_str()), (202, ""), "dropped unanswered");
    let g = first.join().unwrap();
    assert_eq!(g.json()["result"]["content"][0]["text"], "done");
    assert_eq!(*r.effects.started.lock().unwrap(), ["a"], "the queued call never ran");
    assert_eq!(r.effects.interrupts.load(Ordering::SeqCst), 0);
}

#[test]
fn h4_2_a_stop_signal_during_a_long_tool_stops_accepting_then_interrupts_it() {
    // RULES H4.2: SIGTERM (the bridge's stop signal) while a tool runs stops
    // accepting at once, not when the tool returns; a tool still running when
    // the drain time is up is interrupted, and its call is answered.
    let signal = Arc::new(AtomicBool::new(false));
    let opts = HttpOptions { port: 0, drain_timeout: Duration::from_millis(1500), ..HttpOptions::default() };
    let mut r = start_with(None, opts, Some(signal.clone()));
    let url = r.url();
    let call = std::thread::spawn(move || {
        modern_post(
            &url,
            "application/json",
            "work",
            &modern_call(7, "work", json!({"tag": "long", "ms": 60_000}), None),
        )
    });
    let effects = r.effects.clone();
    wait_for("the tool to start", || effects.started.lock().unwrap().len() == 1);
    signal.store(true, Ordering::SeqCst);
    let addr = r.addr;
    wait_for("the listener to close while the tool runs", || TcpStream::connect(addr).is_err());
    assert_eq!(r.effects.interrupts.load(Ordering::SeqCst), 0, "the drain time is not up yet");
    let g = call.join().unwrap();
    assert_eq!(g.status, 200, "{}", g.body);
    let v = g.json();
    assert_eq!(v["id"], 7);
    assert_eq!(v["result"]["isError"], true, "{v}");
    assert_eq!(r.effects.interrupts.load(Ordering::SeqCst), 1);
    assert!(r.effects.done.lock().unwrap().is_empty(), "the tool did not run to its end");
    // The serving thread returns (joined without the test's own stop flag).
    r.thread.take().unwrap().join().unwrap();
}

/// The `notifications/message` events of an SSE answer, in order, and
/// whether the response came last.
fn log_events(g: &Got, id: &Value) -> Vec<Value> {
    assert_eq!(g.status, 200, "{}", g.body);
    assert_eq!(g.header("content-type"), Some("text/event-stream"), "{}", g.body);
    let events = g.events();
    assert_eq!(events.last().unwrap()["id"], *id, "the response last: {}", g.body);
    events.iter().filter(|e| e["method"] == "notifications/message").map(|e| e["params"].clone()).collect()
}

#[test]
fn g3_log_messages_travel_on_the_calls_own_stream_in_both_eras() {
    let r = start(None);
    let want: Vec<Value> =
        (0..3).map(|j| json!({"level": "info", "logger": "trio", "data": format!("step {j}")})).collect();
    // Legacy: the session's level; no progress token is needed for a stream.
    let sid = initialize(&r.url());
    let trio = |id: i64| {
        json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":"trio","arguments":{}}}).to_string()
    };
    let g = legacy_post(&r.url(), &sid, BOTH, &trio(1));
    assert_eq!(g.header("content-type"), Some("application/json"), "no level set yet: {}", g.body);
    let set = json!({"jsonrpc":"2.0","id":"lv","method":"logging/setLevel","params":{"level":"debug"}});
    let g = legacy_post(&r.url(), &sid, BOTH, &set.to_string());
    assert_eq!(g.json(), json!({"jsonrpc":"2.0","id":"lv","result":{}}));
    assert_eq!(log_events(&legacy_post(&r.url(), &sid, BOTH, &trio(2)), &json!(2)), want);
    // A client that does not accept SSE gets its answer as JSON, without them.
    let g = legacy_post(&r.url(), &sid, "application/json", &trio(3));
    assert_eq!(g.json()["result"]["content"][0]["text"], "done");
    // Another session has no level.
    let other = initialize(&r.url());
    let g = legacy_post(&r.url(), &other, BOTH, &trio(4));
    assert_eq!(g.header("content-type"), Some("application/json"));
    // Modern: the request's own level.
    let mut body: Value = serde_json::from_str(&modern_call(5, "trio", json!({}), None)).unwrap();
    body["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = json!("info");
    assert_eq!(log_events(&modern_post(&r.url(), BOTH, "trio", &body.to_string()), &json!(5)), want);
    body["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = json!("warning");
    let g = modern_post(&r.url(), BOTH, "trio", &body.to_string());
    assert!(log_events(&g, &json!(5)).is_empty(), "below the level: {}", g.body);
    body["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = json!("chatty");
    let g = modern_post(&r.url(), BOTH, "trio", &body.to_string());
    assert_eq!(g.json()["error"]["code"], -32602, "{}", g.body);
}

// -- RULES H8: resumable streams, SSE polling ---------------------------------

/// One SSE event as sent: its id, its `retry` field and its data.
#[derive(Debug)]
struct Sse {
    id: Option<String>,
    retry: Option<u64>,
    data: String,
}

fn sse_events(body: &str) -> Vec<Sse> {
    body.split("\n\n")
        .filter(|ev| !ev.is_empty())
        .map(|ev| {
            let mut e = Sse { id: None, retry: None, data: String::new() };
            for line in ev.lines() {
                if let Some(v) = line.strip_prefix("id: ") {
                    e.id = Some(v.to_string());
                } else if let Some(v) = line.strip_prefix("retry: ") {
                    e.retry = Some(v.parse().unwrap());
                } else if let Some(v) = line.strip_prefix("data: ") {
                    e.data = v.to_string();
                } else if line == "data:" {
                } else {
                    assert_eq!(line, "event: message", "framing: {ev:?}");
                }
            }
            e
        })
        .collect()
}

fn get(url: &str, headers: &[(&str, &str)]) -> Got {
    let agent = ureq::Agent::new_with_config(ureq::Agent::config_builder().http_status_as_error(false).build());
    let mut req = agent.get(url);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let mut r = req.call().expect("request");
    let status = r.status().as_u16();
    let headers =
        r.headers().iter().map(|(k, v)| (k.as_str().to_string(), v.to_str().unwrap_or("").to_string())).collect();
    let body = r.body_mut().read_to_string().unwrap_or_default();
    Got { status, headers, body }
}

fn resume(url: &str, sid: &str, last: &str) -> Got {
    get(
        url,
        &[
            ("Mcp-Session-Id", sid),
            ("MCP-Protocol-Version", LEGACY),
            ("Accept", "text/event-stream"),
            ("Last-Event-ID", last),
        ],
    )
}

fn held(ms: u64) -> Running {
    start_with(
        None,
        HttpOptions { port: 0, stream_hold: Some(Duration::from_millis(ms)), ..HttpOptions::default() },
        None,
    )
}

/// Poll a resumable stream as a client does: the POST's events, then a
/// `GET` with the last id after each closed connection, until the
/// response to `id` arrives. Returns every event and the number of
/// connections.
fn poll_to_answer(url: &str, sid: &str, first: Got, id: &Value) -> (Vec<Sse>, usize) {
    assert_eq!(first.status, 200, "{}", first.body);
    assert_eq!(first.header("content-type"), Some("text/event-stream"));
    let mut all = sse_events(&first.body);
    // The priming event first: an id, the retry field, no data.
    assert!(all[0].id.is_some() && all[0].retry == Some(500) && all[0].data.is_empty(), "{:?}", all[0]);
    let mut connections = 1;
    let answered = |all: &Vec<Sse>| {
        all.iter()
            .any(|e| serde_json::from_str::<Value>(&e.data).is_ok_and(|v| v["id"] == *id && v.get("result").is_some()))
    };
    while !answered(&all) {
        // A connection closed before the answer ends with the retry field.
        assert_eq!(all.last().unwrap().retry, Some(500), "{all:?}");
        assert!(connections < 50, "no answer after {connections} connections");
        let last = all.iter().rev().find_map(|e| e.id.clone()).unwrap();
        let g = resume(url, sid, &last);
        assert_eq!(g.status, 200, "{}", g.body);
        assert_eq!(g.header("content-type"), Some("text/event-stream"));
        let got = sse_events(&g.body);
        // It starts with the client's position again, without data.
        assert_eq!(got[0].id.as_deref(), Some(last.as_str()), "{got:?}");
        assert!(got[0].data.is_empty(), "{got:?}");
        all.extend(got);
        connections += 1;
    }
    // Every event with data once, in order, on one stream (a resumed
    // connection starts by repeating the last id the client read, without
    // data).
    let ids: Vec<&String> = all
        .iter()
        .enumerate()
        .filter(|(i, e)| *i == 0 || !e.data.is_empty())
        .filter_map(|(_, e)| e.id.as_ref())
        .collect();
    let key = ids[0].rsplit_once('-').unwrap().0;
    let positions: Vec<usize> = ids
        .iter()
        .map(|i| {
            let (k, p) = i.rsplit_once('-').unwrap();
            assert_eq!(k, key, "one stream");
            p.parse().unwrap()
        })
        .collect();
    assert_eq!(positions, (0..positions.len()).collect::<Vec<_>>(), "each event once, in order");
    (all, connections)
}

#[test]
fn h8_a_call_not_answered_within_the_hold_time_is_polled_to_its_answer() {
    let r = held(300);
    let sid = initialize(&r.url());
    let id = json!(7);
    let g = legacy_post(&r.url(), &sid, BOTH, &legacy_call(id.clone(), json!({"tag": "p", "ms": 1500}), None));
    let (events, connections) = poll_to_answer(&r.url(), &sid, g, &id);
    assert!(connections >= 3, "held 300 ms at a time: {connections} connections");
    let answer: Value = serde_json::from_str(&events.last().unwrap().data).unwrap();
    assert_eq!(answer["result"]["content"][0]["text"], "done");
    assert_eq!(*r.effects.done.lock().unwrap(), ["p"], "a closed connection is no cancellation");
    // A quick call is answered with JSON, as without a hold time.
    let g = legacy_post(&r.url(), &sid, BOTH, &legacy_call(json!(8), json!({"tag": "q", "ms": 0}), None));
    assert_eq!(g.header("content-type"), Some("application/json"), "{}", g.body);
    assert_eq!(g.json()["result"]["content"][0]["text"], "done");
    // Read again from the start, the whole stream comes again (a client
    // that lost the answer's event).
    let first = events[0].id.clone().unwrap();
    let g = resume(&r.url(), &sid, &first);
    let again = sse_events(&g.body);
    assert_eq!(again.last().unwrap().data, events.last().unwrap().data);
}

#[test]
fn h8_progress_goes_on_between_connections_and_each_event_arrives_once() {
    let r = held(400);
    let sid = initialize(&r.url());
    let id = json!("c");
    let token = json!("tok");
    let g = legacy_post(
        &r.url(),
        &sid,
        BOTH,
        &legacy_call(id.clone(), json!({"tag": "s", "ms": 1600, "steps": 4}), Some(token.clone())),
    );
    let (events, connections) = poll_to_answer(&r.url(), &sid, g, &id);
    assert!(connections >= 2, "{connections}");
    let steps: Vec<String> = events
        .iter()
        .filter_map(|e| serde_json::from_str::<Value>(&e.data).ok())
        .filter(|v| v["method"] == "notifications/progress")
        .map(|v| {
            assert_eq!(v["params"]["progressToken"], token);
            v["params"]["message"].as_str().unwrap_or("").to_string()
        })
        // The tool's own reports (heartbeats repeat them with a suffix).
        .filter(|m| m.len() == 6 && m.starts_with("step "))
        .collect();
    assert_eq!(steps, ["step 1", "step 2", "step 3", "step 4"], "reports made while no connection was open too");
}

#[test]
fn h8_get_resumes_only_a_stream_of_its_own_session() {
    let r = held(200);
    let a = initialize(&r.url());
    let b = initialize(&r.url());
    let g = legacy_post(&r.url(), &a, BOTH, &legacy_call(json!(1), json!({"tag": "x", "ms": 700}), None));
    let events = sse_events(&g.body);
    let last = events[0].id.clone().unwrap();
    // Another session does not find it; an unknown session is 404; no
    // Last-Event-ID is the GET stream this server does not offer (405);
    // an Accept without SSE is 406; an id of an event not sent yet is 400.
    assert_eq!(resume(&r.url(), &b, &last).status, 400);
    assert_eq!(resume(&r.url(), "0123456789abcdef0123456789abcdef", &last).status, 404);
    let no_id = get(&r.url(), &[("Mcp-Session-Id", &a), ("Accept", "text/event-stream")]);
    assert_eq!(no_id.status, 405);
    let json_only = get(&r.url(), &[("Mcp-Session-Id", &a), ("Accept", "application/json"), ("Last-Event-ID", &last)]);
    assert_eq!(json_only.status, 406);
    let (key, _) = last.rsplit_once('-').unwrap();
    assert_eq!(resume(&r.url(), &a, &format!("{key}-99")).status, 400);
    let (_, connections) = poll_to_answer(&r.url(), &a, g, &json!(1));
    assert!(connections >= 2);
    // DELETE ends the session and its streams.
    let d = ureq::Agent::new_with_config(ureq::Agent::config_builder().http_status_as_error(false).build())
        .delete(&r.url())
        .header("Mcp-Session-Id", &a)
        .call()
        .unwrap();
    assert_eq!(d.status().as_u16(), 200);
    assert_eq!(resume(&r.url(), &a, &last).status, 404);
}

#[test]
fn h8_older_sessions_and_servers_without_a_hold_time_keep_their_connections() {
    // A 2025-06-18 session: the call is answered on its connection, JSON.
    let r = held(200);
    let body = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let g = post(&r.url(), &[("Accept", BOTH)], &body.to_string());
    let sid = g.header("mcp-session-id").unwrap().to_string();
    let g = post(
        &r.url(),
        &[("Mcp-Session-Id", &sid), ("MCP-Protocol-Version", "2025-06-18"), ("Accept", BOTH)],
        &legacy_call(json!(1), json!({"tag": "o", "ms": 600}), None),
    );
    assert_eq!(g.header("content-type"), Some("application/json"), "{}", g.body);
    // Without a hold time: no ids, and GET with Last-Event-ID is 405.
    let r = start(None);
    let sid = initialize(&r.url());
    let g = legacy_post(&r.url(), &sid, BOTH, &legacy_call(json!(2), json!({"tag": "n", "ms": 10}), Some(json!("t"))));
    assert!(!g.body.contains("\nid: ") && !g.body.starts_with("id: "), "{}", g.body);
    assert_eq!(resume(&r.url(), &sid, "abc-0").status, 405);
}

#[test]
fn h8_a_call_whose_client_can_be_asked_is_polled_too() {
    // A client that declares elicitation gets a stream only once the call
    // asks (RULES A1.2); not answered within the hold time, the call is
    // resumable all the same.
    let r = held(300);
    let body = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion": LEGACY, "capabilities": {"elicitation": {}, "sampling": {}},
        "clientInfo": {"name": "t", "version": "1"}}});
    let g = post(&r.url(), &[("Accept", BOTH)], &body.to_string());
    let sid = g.header("mcp-session-id").unwrap().to_string();
    let id = json!(3);
    let g = legacy_post(&r.url(), &sid, BOTH, &legacy_call(id.clone(), json!({"tag": "e", "ms": 1000}), None));
    let (events, connections) = poll_to_answer(&r.url(), &sid, g, &id);
    assert!(connections >= 2, "{connections}");
    let answer: Value = serde_json::from_str(&events.last().unwrap().data).unwrap();
    assert_eq!(answer["result"]["content"][0]["text"], "done");
    // Quick: JSON.
    let g = legacy_post(&r.url(), &sid, BOTH, &legacy_call(json!(4), json!({"tag": "f", "ms": 0}), None));
    assert_eq!(g.header("content-type"), Some("application/json"), "{}", g.body);
}
