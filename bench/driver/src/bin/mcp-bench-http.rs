//! mcp-bench-http: the HTTP workloads of the mcplite benchmark (issue 16).
//!
//! Starts each server of `bench/http/servers.json` on a free loopback port
//! (the port in `BENCH_HTTP_PORT` and `MCPLITE_PORT`, `MCPLITE_TRANSPORT=http`,
//! `BENCH_NAP=1` for the sleeping tool), then drives, over Streamable HTTP
//! with keep-alive connections:
//!
//! - H0 server RSS (`VmRSS`) after the session starts, after 1,000 and after
//!   10,000 sequential `tools/call add` requests;
//! - H1 sequential `tools/call add` on one connection: p50, p99;
//! - H2 throughput: 16 connections (one thread and one session each), each
//!   sending its calls back to back: calls per second, and the CPU time per
//!   call of the server and of this driver (both share the machine's cores,
//!   so a costly driver caps every server's rate);
//! - H3 `tools/list` p50 on an idle server, and while another connection's
//!   `nap(2)` (a 2-second tool) runs;
//! - H4 `big_text`, a 10,000,000-character result: time per call.
//!
//! Sessions are legacy (2025-11-25, `initialize`, `MCP-Session-Id`), which
//! every server speaks; a server marked `"era": "modern"` is driven with
//! self-contained 2026-07-28 requests instead (no session). Every answer is
//! checked (status 200, the id, the sum, 10,000,000 characters).
//!
//! The client is ureq (blocking, one connection per agent): a thread per
//! connection and no async runtime keeps the driver's own cost per request
//! small and steady next to any server's (about 30 µs per call). Two things
//! keep it so: per-phase time limits rather than ureq's global one (with a
//! global limit, ureq resolves the address on a new thread for every
//! request), and an allocator that keeps freed memory (see
//! `quiet_allocator`).

#[path = "../stats.rs"]
mod stats;

use serde_json::{json, Value};
use std::fs;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

const LEGACY: &str = "2025-11-25";
const MODERN_META: &str =
    r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

struct ServerDef {
    id: String,
    label: String,
    role: String,
    modern: bool,
    cmd: Vec<String>,
}

struct Plan {
    rss_calls: [usize; 2],
    seq_warmup: usize,
    seq_calls: usize,
    conns: usize,
    conn_calls: usize,
    list_idle: usize,
    big_calls: usize,
}

/// One client connection (and, for legacy servers, one session).
struct Conn {
    agent: ureq::Agent,
    url: String,
    modern: bool,
    sid: Option<String>,
    next: u64,
}

impl Conn {
    fn new(url: &str, modern: bool) -> Conn {
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_idle_connections(1)
            .max_idle_connections_per_host(1)
            // Per-phase limits, not timeout_global: with a global limit ureq
            // resolves the address on a new thread for every request.
            .timeout_connect(Some(Duration::from_secs(10)))
            .timeout_send_request(Some(Duration::from_secs(30)))
            .timeout_recv_response(Some(Duration::from_secs(120)))
            .timeout_recv_body(Some(Duration::from_secs(120)))
            .build();
        Conn { agent: config.into(), url: url.to_string(), modern, sid: None, next: 1 }
    }

    /// POST one message; returns the status and the body.
    fn post(&mut self, method: &str, name: Option<&str>, params: &str, notification: bool) -> (u16, String) {
        let params = if self.modern {
            let p = params.strip_suffix('}').expect("params is an object");
            let sep = if p.ends_with('{') { "" } else { "," };
            format!("{p}{sep}\"_meta\":{MODERN_META}}}")
        } else {
            params.to_string()
        };
        let body = if notification {
            format!(r#"{{"jsonrpc":"2.0","method":"{method}","params":{params}}}"#)
        } else {
            let id = self.next;
            self.next += 1;
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#)
        };
        let mut req = self
            .agent
            .post(&self.url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream");
        if self.modern {
            req = req.header("MCP-Protocol-Version", "2026-07-28").header("Mcp-Method", method);
            if let Some(n) = name {
                req = req.header("Mcp-Name", n);
            }
        } else if method != "initialize" {
            req = req.header("MCP-Protocol-Version", LEGACY);
            if let Some(s) = &self.sid {
                req = req.header("Mcp-Session-Id", s);
            }
        }
        let mut resp = req.send(body.as_bytes()).expect("HTTP request failed");
        let status = resp.status().as_u16();
        if method == "initialize" {
            self.sid = resp.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).map(String::from);
        }
        let text = resp.body_mut().with_config().limit(64 << 20).read_to_string().expect("body not read");
        (status, text)
    }

    fn start(&mut self) {
        if self.modern {
            return;
        }
        let init = format!(
            r#"{{"protocolVersion":"{LEGACY}","capabilities":{{}},"clientInfo":{{"name":"mcp-bench-http","version":"0"}}}}"#
        );
        let (st, body) = self.post("initialize", None, &init, false);
        assert_eq!(st, 200, "initialize: {body}");
        let (st, _) = self.post("notifications/initialized", None, "{}", true);
        assert!(st == 202 || st == 200, "notifications/initialized: {st}");
    }

    /// `tools/call`; returns the first text block (checked: a result, not an error).
    fn call(&mut self, tool: &str, args: &str) -> String {
        let (st, body) =
            self.post("tools/call", Some(tool), &format!(r#"{{"name":"{tool}","arguments":{args}}}"#), false);
        assert_eq!(st, 200, "tools/call {tool}: {}", &body[..body.len().min(300)]);
        let v: Value = serde_json::from_str(data_of(&body)).expect("answer is not JSON");
        let r = &v["result"];
        assert!(r["isError"] != json!(true), "tool error: {body}");
        r["content"][0]["text"].as_str().expect("no text block").to_string()
    }

    fn add(&mut self, x: u64) {
        let text = self.call("add", &format!(r#"{{"x":{x},"y":1}}"#));
        assert_eq!(text, (x + 1).to_string(), "wrong sum");
    }

    fn list(&mut self) -> usize {
        let (st, body) = self.post("tools/list", None, "{}", false);
        assert_eq!(st, 200, "tools/list: {body}");
        let v: Value = serde_json::from_str(data_of(&body)).expect("answer is not JSON");
        v["result"]["tools"].as_array().map_or(0, Vec::len)
    }
}

/// The JSON of an answer: the body, or the `data:` of an event stream.
fn data_of(body: &str) -> &str {
    if body.starts_with('{') {
        return body;
    }
    body.lines().rev().find_map(|l| l.strip_prefix("data: ")).unwrap_or(body)
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn rss_mb(pid: u32) -> f64 {
    let s = fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

/// CPU time used so far by every thread of `pid`, in µs (schedstat, ns
/// resolution): less sensitive to the machine's load than wall time.
fn cpu_us(pid: u32) -> f64 {
    let Ok(dir) = fs::read_dir(format!("/proc/{pid}/task")) else { return f64::NAN };
    let mut ns = 0u64;
    for t in dir.flatten() {
        let s = fs::read_to_string(t.path().join("schedstat")).unwrap_or_default();
        ns += s.split_whitespace().next().and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    }
    ns as f64 / 1e3
}

/// CPU time used so far by this process, finished threads included, in µs.
fn own_cpu_us() -> f64 {
    // SAFETY: getrusage only writes the struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let us = |t: libc::timeval| t.tv_sec as f64 * 1e6 + t.tv_usec as f64;
    us(ru.ru_utime) + us(ru.ru_stime)
}

fn spawn(def: &ServerDef, port: u16, log: &Path) -> Child {
    let err = fs::File::create(log).unwrap();
    let mut cmd = Command::new(&def.cmd[0]);
    cmd.args(&def.cmd[1..])
        .env("BENCH_HTTP_PORT", port.to_string())
        .env("MCPLITE_PORT", port.to_string())
        .env("MCPLITE_TRANSPORT", "http")
        .env("BENCH_NAP", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(err);
    cmd.spawn().unwrap_or_else(|e| panic!("cannot start {}: {e}", def.id))
}

fn wait_ready(url: &str, modern: bool) {
    let t = Instant::now();
    loop {
        let addr = url.trim_start_matches("http://").split('/').next().unwrap().to_string();
        if std::net::TcpStream::connect(&addr).is_ok() {
            let mut c = Conn::new(url, modern);
            let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                c.start();
                c.list()
            }));
            if ok.is_ok() {
                return;
            }
        }
        assert!(t.elapsed() < Duration::from_secs(60), "server at {url} did not start");
        thread::sleep(Duration::from_millis(100));
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn summary_json(xs: &[f64]) -> Value {
    match stats::summarize(xs) {
        Some(s) => {
            json!({"n": s.n, "median": s.median, "p25": s.p25, "p75": s.p75, "p99": s.p99, "min": s.min, "max": s.max})
        }
        None => Value::Null,
    }
}

fn run_server(def: &ServerDef, plan: &Plan, logs: &Path) -> Value {
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let mut child = spawn(def, port, &logs.join(format!("{}.log", def.id)));
    let pid = child.id();
    wait_ready(&url, def.modern);
    let mut out = serde_json::Map::new();

    // H0: RSS after 1,000 and 10,000 sequential requests.
    let mut c = Conn::new(&url, def.modern);
    c.start();
    let rss0 = rss_mb(pid);
    let mut x = 0;
    for _ in 0..plan.rss_calls[0] {
        c.add(x);
        x += 1;
    }
    let rss1 = rss_mb(pid);
    for _ in plan.rss_calls[0]..plan.rss_calls[1] {
        c.add(x);
        x += 1;
    }
    let rss2 = rss_mb(pid);
    out.insert("rss_mb".into(), json!({"start": rss0, "after_1k": rss1, "after_10k": rss2, "calls": plan.rss_calls}));
    eprintln!("  {}: RSS {rss0:.1} -> {rss1:.1} -> {rss2:.1} MB", def.id);

    // H1: sequential add.
    let mut c = Conn::new(&url, def.modern);
    c.start();
    for i in 0..plan.seq_warmup {
        c.add(i as u64);
    }
    let mut lat = Vec::with_capacity(plan.seq_calls);
    let cpu0 = cpu_us(pid);
    for i in 0..plan.seq_calls {
        let t = Instant::now();
        c.add(i as u64);
        lat.push(ms(t.elapsed()) * 1e3);
    }
    let seq_cpu = (cpu_us(pid) - cpu0) / plan.seq_calls as f64;
    let s = stats::summarize(&lat).unwrap();
    eprintln!(
        "  {}: sequential add p50 {:.1} us, p99 {:.1} us; server CPU {seq_cpu:.1} us per call",
        def.id, s.median, s.p99
    );
    out.insert("seq_add_us".into(), summary_json(&lat));
    out.insert("seq_add_server_cpu_us".into(), json!(seq_cpu));

    // H1b (info): sequential requests that run no tool (`ping`; modern:
    // `server/discover`): the transport's own round trip.
    let (method, params) = if def.modern { ("server/discover", "{}") } else { ("ping", "{}") };
    let mut rt = Vec::with_capacity(plan.seq_calls);
    for _ in 0..plan.seq_calls {
        let t = Instant::now();
        let (st, body) = c.post(method, None, params, false);
        rt.push(ms(t.elapsed()) * 1e3);
        assert_eq!(st, 200, "{method}: {body}");
    }
    eprintln!("  {}: sequential {method} p50 {:.1} us", def.id, stats::summarize(&rt).unwrap().median);
    out.insert("seq_notool_us".into(), summary_json(&rt));

    // H3: tools/list idle, then while a 2-second tool runs on another connection.
    let mut idle = Vec::new();
    for _ in 0..plan.list_idle {
        let t = Instant::now();
        c.list();
        idle.push(ms(t.elapsed()) * 1e3);
    }
    let napper = {
        let url = url.clone();
        let modern = def.modern;
        thread::spawn(move || {
            let mut n = Conn::new(&url, modern);
            n.start();
            let t = Instant::now();
            assert_eq!(n.call("nap", r#"{"s":2}"#), "rested");
            t.elapsed()
        })
    };
    thread::sleep(Duration::from_millis(200));
    let mut busy = Vec::new();
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_millis(1500) && !napper.is_finished() {
        let t = Instant::now();
        c.list();
        busy.push(ms(t.elapsed()) * 1e3);
    }
    let nap = napper.join().unwrap();
    let (si, sb) = (stats::summarize(&idle).unwrap(), stats::summarize(&busy));
    eprintln!(
        "  {}: tools/list p50 idle {:.1} us, during nap {:.1} us (n={}), nap took {:.0} ms",
        def.id,
        si.median,
        sb.map_or(f64::NAN, |s| s.median),
        busy.len(),
        ms(nap)
    );
    out.insert(
        "list_us".into(),
        json!({"idle": summary_json(&idle), "during_tool": summary_json(&busy), "nap_ms": ms(nap)}),
    );

    // H2: throughput over 16 connections.
    let barrier = Arc::new(Barrier::new(plan.conns + 1));
    let workers: Vec<_> = (0..plan.conns)
        .map(|k| {
            let (url, b, modern, n) = (url.clone(), barrier.clone(), def.modern, plan.conn_calls);
            thread::spawn(move || {
                let mut c = Conn::new(&url, modern);
                c.start();
                c.add(0);
                b.wait();
                for i in 0..n {
                    c.add((k * n + i) as u64);
                }
                Instant::now()
            })
        })
        .collect();
    barrier.wait();
    let t0 = Instant::now();
    let cpu0 = cpu_us(pid);
    let driver0 = own_cpu_us();
    let end = workers.into_iter().map(|w| w.join().unwrap()).max().unwrap();
    let secs = (end - t0).as_secs_f64();
    let total = plan.conns * plan.conn_calls;
    let cpu = (cpu_us(pid) - cpu0) / total as f64;
    let driver = (own_cpu_us() - driver0) / total as f64;
    let rate = total as f64 / secs;
    eprintln!(
        "  {}: {} connections, {total} calls in {secs:.2} s = {rate:.0}/s; CPU per call: server {cpu:.1} us, driver {driver:.1} us",
        def.id, plan.conns
    );
    out.insert(
        "throughput".into(),
        json!({"connections": plan.conns, "calls": total, "seconds": secs, "per_second": rate,
               "server_cpu_us_per_call": cpu, "driver_cpu_us_per_call": driver}),
    );

    // H4: 10 MB result.
    let mut big = Vec::new();
    for i in 0..=plan.big_calls {
        let t = Instant::now();
        let text = c.call("big_text", "{}");
        let d = ms(t.elapsed());
        assert_eq!(text.chars().count(), 10_000_000, "big_text length");
        if i > 0 {
            big.push(d);
        }
    }
    eprintln!("  {}: big_text median {:.1} ms", def.id, stats::summarize(&big).unwrap().median);
    out.insert("big_text_ms".into(), summary_json(&big));
    out.insert("rss_mb_end".into(), json!(rss_mb(pid)));

    let _ = child.kill();
    let _ = child.wait();
    json!({"id": def.id, "label": def.label, "role": def.role, "era": if def.modern {"2026-07-28"} else {LEGACY}, "metrics": out})
}

/// Keep freed memory in this process. Each request's 128 KiB ureq buffers
/// otherwise make glibc grow and trim its per-thread heaps over and over
/// (mprotect, madvise and munmap, each flushing the TLB of both cores): up
/// to a tenth of the driver's CPU, time taken from the server under test.
fn quiet_allocator() {
    // SAFETY: mallopt only sets allocator parameters; called before any
    // other thread starts.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 256 << 20);
    }
}

fn main() {
    quiet_allocator();
    let args: Vec<String> = std::env::args().collect();
    let opt = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let quick = args.iter().any(|a| a == "--quick");
    let config = opt("--config").unwrap_or_else(|| "bench/http/servers.json".into());
    let out_dir = PathBuf::from(opt("--out").unwrap_or_else(|| "bench/results/http".into()));
    let only: Option<Vec<String>> = opt("--servers").map(|s| s.split(',').map(String::from).collect());
    let mut plan = if quick {
        Plan {
            rss_calls: [200, 1000],
            seq_warmup: 50,
            seq_calls: 300,
            conns: 16,
            conn_calls: 30,
            list_idle: 50,
            big_calls: 2,
        }
    } else {
        Plan {
            rss_calls: [1000, 10_000],
            seq_warmup: 200,
            seq_calls: 2000,
            conns: 16,
            // 24,000 calls: about a second for the fastest server.
            conn_calls: 1500,
            list_idle: 300,
            big_calls: 5,
        }
    };
    // `--calls N`: calls per connection of the throughput workload (H2).
    if let Some(n) = opt("--calls") {
        plan.conn_calls = n.parse().expect("--calls takes a number");
    }
    let cfg: Value = serde_json::from_str(&fs::read_to_string(&config).expect("config")).expect("config JSON");
    let env = |s: &str| -> String {
        match s.strip_prefix('$') {
            Some(var) => std::env::var(var).unwrap_or_else(|_| panic!("{var} is not set")),
            None => s.to_string(),
        }
    };
    let defs: Vec<ServerDef> = cfg["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| ServerDef {
            id: s["id"].as_str().unwrap().into(),
            label: s["label"].as_str().unwrap().into(),
            role: s["role"].as_str().unwrap().into(),
            modern: s["era"].as_str() == Some("modern"),
            cmd: s["cmd"].as_array().unwrap().iter().map(|c| env(c.as_str().unwrap())).collect(),
        })
        .filter(|d| only.as_ref().is_none_or(|o| o.contains(&d.id)))
        .collect();
    let logs = out_dir.join("logs");
    fs::create_dir_all(&logs).unwrap();
    let started = Instant::now();
    let mut results = Vec::new();
    for def in &defs {
        eprintln!("== {} ({})", def.label, def.id);
        results.push(run_server(def, &plan, &logs));
    }
    let doc = json!({
        "quick": quick,
        "seconds": started.elapsed().as_secs_f64(),
        "loadavg_end": fs::read_to_string("/proc/loadavg").unwrap_or_default().trim(),
        "servers": results,
    });
    fs::write(out_dir.join("results.json"), serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    eprintln!("wrote {}", out_dir.join("results.json").display());
}
