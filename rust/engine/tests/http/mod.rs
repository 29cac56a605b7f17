//! The Streamable HTTP transport driven by a real HTTP client (ureq) and, for
//! the hostile cases, by raw TCP: every status code the transport answers,
//! both protocol eras, sessions, security checks, limits, the tool thread and
//! shutdown. Here: the server under test (a [`TestHost`] served on a
//! loopback port) and the requests the tests send; the tests, one concern
//! per module, are named `http::<module>::<test>`.

mod guard;
mod limits;
mod listen;
mod modern;
mod sessions;
mod stop;
mod telemetry;
mod tool_thread;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use mcplite_engine::host::{CallContext, Host, ToolFailure, ToolResult, ToolSpec};
use mcplite_engine::telemetry::SpanRecorder;
use mcplite_engine::transport::http::{HttpOptions, HttpServer, LogFormat};
use mcplite_engine::{Server, ServerInfo};
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

fn initialize(url: &str, version: &str) -> String {
    let body = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
        "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let g = post(url, &[("Accept", "application/json, text/event-stream")], &body.to_string());
    assert_eq!(g.status, 200, "{}", g.body);
    assert_eq!(g.json()["result"]["protocolVersion"], version);
    g.header("mcp-session-id").expect("a session id").to_string()
}

/// Send a raw request on `s` and read what comes back in one read.
fn raw_exchange(s: &mut TcpStream, request: &str) -> String {
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut buf = vec![0u8; 4096];
    let n = s.read(&mut buf).unwrap_or_else(|e| panic!("no answer in bounded time: {e}"));
    String::from_utf8_lossy(&buf[..n]).into_owned()
}
