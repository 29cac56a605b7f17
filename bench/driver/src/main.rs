//! mcp-bench-driver: the load driver of the mcplite benchmark suite.
//!
//! Spawns every configured stdio MCP server, drives the workloads W1-W7 of
//! issue 7 round by round (servers interleaved, order rotated each round, so
//! machine drift hits everyone alike), and writes results.json, results.csv
//! and results.md. See bench/README.md.
//!
//! Design for low overhead: the timed request/response loop runs on the main
//! thread with blocking pipe I/O (no channels, no async runtime); requests are
//! preformatted; responses are validated after the timestamp is taken.

mod report;
mod stats;

use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

pub const MODERN_META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
const BIG_CHARS: usize = 10_000_000;
const FRAME_ROWS: usize = 100_000;

// ---------------------------------------------------------------- config

#[derive(Clone, Debug)]
pub struct ServerDef {
    pub id: String,
    pub label: String,
    /// "mcplite", "peer", "floor", "echo" (driver overhead) or "runtime" (W1 floor: spawn -> exit)
    pub role: String,
    pub cmd: Vec<String>,
    pub modern: bool,
}

#[derive(Clone, Debug)]
pub struct Plan {
    pub quick: bool,
    pub rounds: usize,
    pub w1_spawns: usize,
    pub w2_calls: usize,
    pub w2_warmup: usize,
    pub w3_calls: usize,
    pub w3_batches: usize,
    pub w4_calls: usize,
    pub w5_calls: usize,
    pub workloads: Vec<String>,
}

impl Plan {
    fn new(quick: bool) -> Plan {
        if quick {
            Plan {
                quick,
                rounds: 1,
                w1_spawns: 2,
                w2_calls: 200,
                w2_warmup: 20,
                w3_calls: 500,
                w3_batches: 1,
                w4_calls: 50,
                w5_calls: 1,
                workloads: vec![],
            }
        } else {
            Plan {
                quick,
                rounds: 3,
                w1_spawns: 3,
                w2_calls: 2000,
                w2_warmup: 200,
                w3_calls: 5000,
                w3_batches: 1,
                w4_calls: 300,
                w5_calls: 2,
                workloads: vec![],
            }
        }
    }
    fn wants(&self, w: &str) -> bool {
        self.workloads.is_empty() || self.workloads.iter().any(|x| x == w)
    }
}

fn expand_env(s: &str) -> String {
    // "$NAME" or "${NAME}" at the start of an argument, resolved from the environment.
    let (name, rest) = if let Some(r) = s.strip_prefix("${") {
        match r.find('}') {
            Some(i) => (&r[..i], &r[i + 1..]),
            None => return s.to_string(),
        }
    } else if let Some(r) = s.strip_prefix('$') {
        let i = r.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(r.len());
        (&r[..i], &r[i..])
    } else {
        return s.to_string();
    };
    match std::env::var(name) {
        Ok(v) => format!("{v}{rest}"),
        Err(_) => die(&format!("environment variable {name} (used in the server config) is not set")),
    }
}

fn load_config(path: &Path) -> Vec<ServerDef> {
    let text = fs::read_to_string(path).unwrap_or_else(|e| die(&format!("cannot read {}: {e}", path.display())));
    let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| die(&format!("bad config JSON: {e}")));
    v["servers"]
        .as_array()
        .unwrap_or_else(|| die("config needs a `servers` array"))
        .iter()
        .map(|s| ServerDef {
            id: s["id"].as_str().expect("id").to_string(),
            label: s["label"].as_str().unwrap_or(s["id"].as_str().unwrap()).to_string(),
            role: s["role"].as_str().unwrap_or("peer").to_string(),
            cmd: s["cmd"]
                .as_array()
                .expect("cmd")
                .iter()
                .map(|a| expand_env(a.as_str().expect("cmd string")))
                .collect(),
            modern: s["modern"].as_bool().unwrap_or(true),
        })
        .collect()
}

pub fn die(msg: &str) -> ! {
    eprintln!("mcp-bench-driver: {msg}");
    std::process::exit(2)
}

// ---------------------------------------------------------------- process handling

struct Watchdog {
    deadline: Mutex<Instant>,
    done: AtomicBool,
    fired: AtomicBool,
}

pub struct Conn {
    pub def: ServerDef,
    child: Child,
    stdin: Option<ChildStdin>,
    reader: BufReader<ChildStdout>,
    pub line: Vec<u8>,
    dog: Arc<Watchdog>,
    next_id: u64,
}

pub struct Exit {
    pub ok: bool,
    /// user + system CPU seconds of the child (from wait4)
    pub cpu_s: f64,
}

impl Conn {
    pub fn spawn(def: &ServerDef, tools: &str, stderr_log: &Path) -> Result<(Conn, Instant), String> {
        let err = File::options().create(true).append(true).open(stderr_log).map_err(|e| e.to_string())?;
        let mut cmd = Command::new(&def.cmd[0]);
        cmd.args(&def.cmd[1..])
            .env("BENCH_TOOLS", tools)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(err));
        let t0 = Instant::now();
        let mut child = cmd.spawn().map_err(|e| format!("cannot start {:?}: {e}", def.cmd))?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let dog = Arc::new(Watchdog {
            deadline: Mutex::new(Instant::now() + Duration::from_secs(60)),
            done: AtomicBool::new(false),
            fired: AtomicBool::new(false),
        });
        let pid = child.id() as libc::pid_t;
        let d2 = dog.clone();
        thread::spawn(move || loop {
            thread::sleep(Duration::from_millis(50));
            if d2.done.load(Ordering::Acquire) {
                return;
            }
            if Instant::now() > *d2.deadline.lock().unwrap() {
                d2.fired.store(true, Ordering::Release);
                unsafe { libc::kill(pid, libc::SIGKILL) };
                return;
            }
        });
        Ok((
            Conn {
                def: def.clone(),
                child,
                stdin,
                reader: BufReader::with_capacity(1 << 18, stdout),
                line: Vec::with_capacity(1 << 16),
                dog,
                next_id: 1,
            },
            t0,
        ))
    }

    pub fn set_timeout(&self, secs: u64) {
        *self.dog.deadline.lock().unwrap() = Instant::now() + Duration::from_secs(secs);
    }

    pub fn id(&mut self) -> u64 {
        let i = self.next_id;
        self.next_id += 1;
        i
    }

    pub fn send(&mut self, bytes: &[u8]) -> Result<(), String> {
        let w = self.stdin.as_mut().ok_or("stdin closed")?;
        w.write_all(bytes).map_err(|e| self.fail(format!("write failed: {e}")))
    }

    fn fail(&self, msg: String) -> String {
        if self.dog.fired.load(Ordering::Acquire) {
            format!("timed out ({msg})")
        } else {
            msg
        }
    }

    /// Reads the next JSON-RPC response line into `self.line` (server notifications are skipped).
    pub fn recv(&mut self) -> Result<(), String> {
        loop {
            self.line.clear();
            match self.reader.read_until(b'\n', &mut self.line) {
                Ok(0) => return Err(self.fail("server closed stdout".into())),
                Ok(_) => {}
                Err(e) => return Err(self.fail(format!("read failed: {e}"))),
            }
            if self.def.role == "echo" || !is_server_notification(&self.line) {
                return Ok(());
            }
        }
    }

    /// Peak resident set size of the server so far, in MB (VmHWM of its current program image).
    ///
    /// Not wait4()'s ru_maxrss: on Linux that also counts the driver's own memory, because the
    /// child's maxrss inherits the high-water mark of the address space it had before exec.
    pub fn peak_rss_mb(&self) -> Result<f64, String> {
        let status = fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .map_err(|e| format!("cannot read VmHWM: {e}"))?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
            .map(|kb| kb / 1024.0)
            .ok_or_else(|| "no VmHWM in /proc status".to_string())
    }

    /// user + system CPU seconds of the whole process so far (/proc/PID/stat, clock-tick resolution;
    /// includes threads that already exited).
    pub fn cpu_ticks_s(&self) -> Option<f64> {
        let s = fs::read_to_string(format!("/proc/{}/stat", self.child.id())).ok()?;
        let rest = &s[s.rfind(')')? + 2..];
        let f: Vec<&str> = rest.split_whitespace().collect();
        let ticks = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
        Some(ticks / unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64)
    }

    /// CPU time consumed so far by all threads of the server, in seconds (schedstat, ns resolution).
    pub fn cpu_s(&self) -> Option<f64> {
        let dir = fs::read_dir(format!("/proc/{}/task", self.child.id())).ok()?;
        let mut ns = 0u64;
        for t in dir.flatten() {
            let s = fs::read_to_string(t.path().join("schedstat")).ok()?;
            ns += s.split_whitespace().next()?.parse::<u64>().ok()?;
        }
        Some(ns as f64 * 1e-9)
    }

    /// Closes stdin and waits for exit (killing after `grace` seconds).
    pub fn close(mut self, grace: u64) -> Exit {
        drop(self.stdin.take());
        self.set_timeout(grace);
        let pid = self.child.id() as libc::pid_t;
        let mut status = 0;
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        let r = loop {
            let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
            if r == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            break r;
        };
        self.dog.done.store(true, Ordering::Release);
        // The child is reaped: keep std's Child from waiting on it again.
        std::mem::forget(self.child);
        let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 * 1e-6;
        Exit { ok: r == pid && !self.dog.fired.load(Ordering::Acquire), cpu_s: t(ru.ru_utime) + t(ru.ru_stime) }
    }

    pub fn kill(self) {
        unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGKILL) };
        let _ = self.close(5);
    }
}

fn find(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

fn is_server_notification(line: &[u8]) -> bool {
    // Only small lines can be notifications worth parsing; responses always carry "result" or "error".
    line.len() < 4096
        && find(line, b"\"method\"")
        && serde_json::from_slice::<Value>(line)
            .map(|v| v.get("method").is_some() && v.get("id").is_none())
            .unwrap_or(false)
}

// ---------------------------------------------------------------- requests

pub fn init_request(id: u64) -> Vec<u8> {
    format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"initialize\",\"params\":{{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{{}},\"clientInfo\":{{\"name\":\"mcp-bench-driver\",\"version\":\"0.1.0\"}}}}}}\n").into_bytes()
}
const INITIALIZED: &[u8] = b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";

pub fn call_request(id: u64, name: &str, args: &str, modern: bool) -> Vec<u8> {
    let meta = if modern { format!(",{MODERN_META}") } else { String::new() };
    format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"{name}\",\"arguments\":{args}{meta}}}}}\n").into_bytes()
}

fn add_request(id: u64, modern: bool) -> Vec<u8> {
    call_request(id, "add", &format!("{{\"x\":{},\"y\":2}}", id % 100_000), modern)
}

fn list_request(id: u64) -> Vec<u8> {
    format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/list\"}}\n").into_bytes()
}

fn parse(line: &[u8]) -> Result<Value, String> {
    serde_json::from_slice(line).map_err(|e| format!("response is not JSON: {e}: {}", snippet(line)))
}

pub fn snippet(line: &[u8]) -> String {
    let s = String::from_utf8_lossy(&line[..line.len().min(300)]);
    s.trim_end().to_string()
}

fn result_of<'a>(v: &'a Value, id: u64) -> Result<&'a Value, String> {
    if v["id"].as_u64() != Some(id) {
        return Err(format!("expected id {id}, got {}", v["id"]));
    }
    v.get("result").ok_or_else(|| format!("error response: {}", v.get("error").unwrap_or(&Value::Null)))
}

fn first_text(r: &Value) -> Option<&str> {
    r["content"][0]["text"].as_str()
}

fn check_tool_text(r: &Value, expect: &str) -> Result<(), String> {
    if r["isError"].as_bool() == Some(true) {
        return Err(format!("tool error: {}", first_text(r).unwrap_or("?")));
    }
    match first_text(r) {
        Some(t) if t == expect => Ok(()),
        Some(t) => Err(format!("expected text {expect:?}, got {:?}", &t[..t.len().min(80)])),
        None => Err(format!("no text content in {}", r)),
    }
}

fn check_modern(r: &Value) -> Result<(), String> {
    if r["resultType"].as_str() != Some("complete") {
        return Err("answers 2026-07-28 requests without resultType (legacy handling)".into());
    }
    Ok(())
}

// ---------------------------------------------------------------- sessions

fn start_session(def: &ServerDef, log: &Path, initialize: bool) -> Result<Conn, String> {
    let (mut c, _) = Conn::spawn(def, "54", log)?;
    c.set_timeout(60);
    if initialize && def.role != "echo" {
        let id = c.id();
        c.send(&init_request(id))?;
        c.recv()?;
        let v = parse(&c.line)?;
        result_of(&v, id)?;
        c.send(INITIALIZED)?;
    }
    Ok(c)
}

/// Sequential calls; returns per-call latencies in microseconds.
fn sequential(
    c: &mut Conn,
    n: usize,
    warmup: usize,
    mut make: impl FnMut(u64) -> Vec<u8>,
    check: &dyn Fn(&Conn, u64, &Value) -> Result<(), String>,
) -> Result<Vec<f64>, String> {
    let mut out = Vec::with_capacity(n);
    for k in 0..(warmup + n) {
        let id = c.id();
        let req = make(id);
        let t0 = Instant::now();
        c.send(&req)?;
        c.recv()?;
        let dt = t0.elapsed();
        if c.def.role != "echo" {
            let v = parse(&c.line)?;
            check(c, id, &v)?;
        }
        if k >= warmup {
            out.push(dt.as_secs_f64() * 1e6);
        }
    }
    Ok(out)
}

/// Pipelined calls: a writer thread sends all requests while this thread reads.
/// Returns calls per second.
fn pipelined(c: &mut Conn, n: usize, modern: bool) -> Result<f64, String> {
    let first = c.next_id;
    c.next_id += n as u64;
    let mut buf = Vec::with_capacity(n * 160);
    for id in first..first + n as u64 {
        buf.extend_from_slice(&add_request(id, modern));
    }
    let mut stdin = c.stdin.take().ok_or("stdin closed")?;
    let t0 = Instant::now();
    let writer = thread::spawn(move || {
        let r = stdin.write_all(&buf).and_then(|_| stdin.flush());
        (stdin, r)
    });
    let mut bad = None;
    for _ in 0..n {
        if let Err(e) = c.recv() {
            bad = Some(e);
            break;
        }
        if c.def.role != "echo" && bad.is_none() && !find(&c.line, b"\"result\"") {
            bad = Some(format!("non-result response: {}", snippet(&c.line)));
        }
    }
    let dt = t0.elapsed().as_secs_f64();
    let (stdin, wr) = writer.join().map_err(|_| "writer thread panicked".to_string())?;
    c.stdin = Some(stdin);
    if let Some(e) = bad {
        return Err(e);
    }
    wr.map_err(|e| format!("write failed: {e}"))?;
    Ok(n as f64 / dt)
}

// ---------------------------------------------------------------- results store

#[derive(Default)]
pub struct Results {
    /// server id -> metric -> samples
    pub samples: BTreeMap<String, BTreeMap<String, Vec<f64>>>,
    /// server id -> metric -> reason it is not available
    pub na: BTreeMap<String, BTreeMap<String, String>>,
}

impl Results {
    fn add(&mut self, server: &str, metric: &str, xs: &[f64]) {
        self.samples.entry(server.into()).or_default().entry(metric.into()).or_default().extend_from_slice(xs);
    }
    fn mark_na(&mut self, server: &str, metric: &str, why: &str) {
        eprintln!("    {server} {metric}: n/a ({why})");
        self.na.entry(server.into()).or_default().entry(metric.into()).or_insert_with(|| why.to_string());
    }
}

// ---------------------------------------------------------------- workloads

fn w1(def: &ServerDef, plan: &Plan, log: &Path, res: &mut Results) {
    let variants: &[&str] = if def.role == "runtime" { &["-"] } else { &["1", "54"] };
    for tools in variants {
        let metric = if def.role == "runtime" { "W1.cold_ms".to_string() } else { format!("W1.cold_{tools}_ms") };
        let cpu_metric = if def.role == "runtime" { "W1.cpu_ms".to_string() } else { format!("W1.cpu_{tools}_ms") };
        let mut times = vec![];
        let mut rss = vec![];
        let mut cpus = vec![];
        for _ in 0..plan.w1_spawns {
            let r = (|| -> Result<(f64, f64, f64), String> {
                let (mut c, t0) = Conn::spawn(def, tools, log)?;
                c.set_timeout(60);
                if def.role == "runtime" {
                    let e = c.close(60);
                    let dt = t0.elapsed().as_secs_f64() * 1e3;
                    if !e.ok {
                        return Err("runtime did not exit cleanly".into());
                    }
                    return Ok((dt, f64::NAN, e.cpu_s * 1e3));
                }
                let id = c.id();
                c.send(&init_request(id))?;
                c.recv()?;
                let dt = t0.elapsed().as_secs_f64() * 1e3;
                let v = parse(&c.line)?;
                result_of(&v, id)?;
                let rss = c.peak_rss_mb()?;
                let cpu = c.cpu_ticks_s().ok_or("cannot read the server's CPU time")?;
                c.close(30);
                Ok((dt, rss, cpu * 1e3))
            })();
            match r {
                Ok((t, m, cpu)) => {
                    times.push(t);
                    rss.push(m);
                    cpus.push(cpu);
                }
                Err(e) => {
                    res.mark_na(&def.id, &metric, &e);
                    return;
                }
            }
        }
        res.add(&def.id, &metric, &times);
        res.add(&def.id, &cpu_metric, &cpus);
        if *tools == "54" {
            res.add(&def.id, "idle_rss_mb", &rss);
        }
    }
}

fn w2_w3_w4(def: &ServerDef, plan: &Plan, log: &Path, res: &mut Results) {
    let mut c = match start_session(def, log, true) {
        Ok(c) => c,
        Err(e) => {
            for m in ["W2.call_us", "W3.calls_per_s", "W4.list_us"] {
                res.mark_na(&def.id, m, &e);
            }
            return;
        }
    };
    let check_add: &dyn Fn(&Conn, u64, &Value) -> Result<(), String> =
        &|_c, id, v| check_tool_text(result_of(v, id)?, &(id % 100_000 + 2).to_string());
    if plan.wants("W4") && def.role != "echo" {
        c.set_timeout(120);
        let r = sequential(&mut c, plan.w4_calls, plan.w4_calls / 10 + 5, list_request, &|_c, id, v| {
            let tools = result_of(v, id)?["tools"].as_array().ok_or("no tools array")?;
            if tools.len() != 54 {
                return Err(format!("expected 54 tools, got {}", tools.len()));
            }
            Ok(())
        });
        match r {
            Ok(xs) => res.add(&def.id, "W4.list_us", &xs),
            Err(e) => res.mark_na(&def.id, "W4.list_us", &e),
        }
    }
    if plan.wants("W2") {
        c.set_timeout(300);
        let usage0 = self_cpu();
        let server0 = c.cpu_s();
        let r = sequential(&mut c, plan.w2_calls, plan.w2_warmup, |id| add_request(id, false), check_add);
        let cpu = self_cpu() - usage0;
        let calls = (plan.w2_calls + plan.w2_warmup) as f64;
        match r {
            Ok(xs) => {
                res.add(&def.id, "W2.call_us", &xs);
                res.add(&def.id, "driver_cpu_us_per_call", &[cpu * 1e6 / calls]);
                if let (Some(a), Some(b)) = (server0, c.cpu_s()) {
                    res.add(&def.id, "W2.server_cpu_us", &[(b - a) * 1e6 / calls]);
                }
            }
            Err(e) => res.mark_na(&def.id, "W2.call_us", &e),
        }
    }
    if plan.wants("W3") {
        c.set_timeout(300);
        for _ in 0..plan.w3_batches {
            let server0 = c.cpu_s();
            match pipelined(&mut c, plan.w3_calls, false) {
                Ok(x) => {
                    res.add(&def.id, "W3.calls_per_s", &[x]);
                    if let (Some(a), Some(b)) = (server0, c.cpu_s()) {
                        res.add(&def.id, "W3.server_cpu_us", &[(b - a) * 1e6 / plan.w3_calls as f64]);
                    }
                }
                Err(e) => {
                    res.mark_na(&def.id, "W3.calls_per_s", &e);
                    c.kill();
                    return;
                }
            }
        }
    }
    c.close(30);
}

fn big_session(
    def: &ServerDef,
    plan: &Plan,
    log: &Path,
    res: &mut Results,
    metric: &str,
    req: &dyn Fn(u64) -> Vec<u8>,
    check: &dyn Fn(&Value) -> Result<(), String>,
) {
    let r = (|| -> Result<(Vec<f64>, f64, f64), String> {
        let mut c = start_session(def, log, true)?;
        c.set_timeout(600);
        let mut times = vec![];
        let mut cpu0 = None;
        for k in 0..(plan.w5_calls + 1) {
            if k == 1 {
                cpu0 = c.cpu_s();
            }
            let id = c.id();
            let bytes = req(id);
            let t0 = Instant::now();
            c.send(&bytes)?;
            c.recv()?;
            let dt = t0.elapsed().as_secs_f64() * 1e3;
            let v = parse(&c.line)?;
            check(result_of(&v, id)?)?;
            if k > 0 {
                times.push(dt); // the first call (building the cached data) is a warm-up
            }
        }
        let cpu = match (cpu0, c.cpu_s()) {
            (Some(a), Some(b)) => (b - a) * 1e3 / plan.w5_calls as f64,
            _ => f64::NAN,
        };
        let rss = c.peak_rss_mb()?;
        let e = c.close(60);
        if !e.ok {
            return Err("server did not exit after stdin closed".into());
        }
        Ok((times, rss, cpu))
    })();
    match r {
        Ok((t, m, cpu)) => {
            res.add(&def.id, &format!("{metric}_ms"), &t);
            res.add(&def.id, &format!("{metric}_rss_mb"), &[m]);
            if cpu.is_finite() {
                res.add(&def.id, &format!("{metric}_cpu_ms"), &[cpu]);
            }
        }
        Err(e) => {
            res.mark_na(&def.id, &format!("{metric}_ms"), &e);
            res.mark_na(&def.id, &format!("{metric}_rss_mb"), &e);
        }
    }
}

fn w5_w6(def: &ServerDef, plan: &Plan, log: &Path, res: &mut Results, big_arg: &Arc<Vec<u8>>) {
    if plan.wants("W5") || plan.wants("W5.text") {
        big_session(def, plan, log, res, "W5.text", &|id| call_request(id, "big_text", "{}", false), &|r| {
            let t = first_text(r).ok_or("no text")?;
            if t.len() != BIG_CHARS || !t.starts_with("abcdefghij") {
                return Err(format!("big_text returned {} bytes", t.len()));
            }
            Ok(())
        });
    }
    if plan.wants("W5") || plan.wants("W5.frame") {
        big_session(def, plan, log, res, "W5.frame", &|id| call_request(id, "frame", "{}", false), &|r| {
            let rows = r["structuredContent"]["rows"].as_array().ok_or("no structuredContent.rows")?;
            if rows.len() != FRAME_ROWS || rows[FRAME_ROWS - 1]["label"] != "r100000" {
                return Err(format!("frame returned {} rows", rows.len()));
            }
            if !first_text(r).is_some_and(|t| t.contains("r99999")) {
                return Err("frame text content does not hold the data".into());
            }
            Ok(())
        });
    }
    if plan.wants("W6") {
        let arg = big_arg.clone();
        big_session(
            def,
            plan,
            log,
            res,
            "W6.arg",
            &move |id| {
                let mut v = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"text_length\",\"arguments\":{{\"text\":").into_bytes();
                v.extend_from_slice(&arg);
                v.extend_from_slice(b"}}}\n");
                v
            },
            &|r| check_tool_text(r, &BIG_CHARS.to_string()),
        );
    }
}

fn w7(def: &ServerDef, plan: &Plan, log: &Path, res: &mut Results) {
    let metrics = ["W7.call_us", "W7.calls_per_s"];
    if !def.modern {
        for m in metrics {
            res.mark_na(&def.id, m, "does not implement protocol 2026-07-28");
        }
        return;
    }
    let r = (|| -> Result<(), String> {
        let mut c = start_session(def, log, false)?;
        c.set_timeout(300);
        let check: &dyn Fn(&Conn, u64, &Value) -> Result<(), String> = &|_c, id, v| {
            let r = result_of(v, id)?;
            check_modern(r)?;
            check_tool_text(r, &(id % 100_000 + 2).to_string())
        };
        // One call first: the process has finished starting up once it answers, so the CPU
        // time measured below is the calls' alone.
        if let Err(e) = sequential(&mut c, 1, 0, |id| add_request(id, true), check) {
            c.kill();
            return Err(e);
        }
        let server0 = c.cpu_s();
        let xs = match sequential(&mut c, plan.w2_calls, plan.w2_warmup, |id| add_request(id, true), check) {
            Ok(xs) => xs,
            Err(e) => {
                c.kill();
                return Err(e);
            }
        };
        res.add(&def.id, "W7.call_us", &xs);
        if let (Some(a), Some(b)) = (server0, c.cpu_s()) {
            res.add(&def.id, "W7.server_cpu_us", &[(b - a) * 1e6 / (plan.w2_calls + plan.w2_warmup) as f64]);
        }
        for _ in 0..plan.w3_batches {
            match pipelined(&mut c, plan.w3_calls, true) {
                Ok(x) => res.add(&def.id, "W7.calls_per_s", &[x]),
                Err(e) => {
                    res.mark_na(&def.id, "W7.calls_per_s", &e);
                    c.kill();
                    return Ok(());
                }
            }
        }
        c.close(30);
        Ok(())
    })();
    if let Err(e) = r {
        for m in metrics {
            res.mark_na(&def.id, m, &e);
        }
    }
}

fn self_cpu() -> f64 {
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 * 1e-6;
    t(ru.ru_utime) + t(ru.ru_stime)
}

fn loadavg() -> String {
    fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

// ---------------------------------------------------------------- main

fn main() {
    let mut args = std::env::args().skip(1);
    let mut config = PathBuf::from("bench/servers.json");
    let mut out_dir = None;
    let mut meta_path = None;
    let mut quick = false;
    let mut rounds = None;
    let mut big_calls = None;
    let mut only: Vec<String> = vec![];
    let mut workloads: Vec<String> = vec![];
    while let Some(a) = args.next() {
        match a.as_str() {
            "--config" => config = PathBuf::from(args.next().expect("--config FILE")),
            "--out" => out_dir = Some(PathBuf::from(args.next().expect("--out DIR"))),
            "--meta" => meta_path = Some(PathBuf::from(args.next().expect("--meta FILE"))),
            "--quick" => quick = true,
            "--rounds" => rounds = Some(args.next().and_then(|x| x.parse().ok()).expect("--rounds N")),
            "--big-calls" => big_calls = Some(args.next().and_then(|x| x.parse().ok()).expect("--big-calls N")),
            "--servers" => only = args.next().expect("--servers a,b").split(',').map(String::from).collect(),
            "--workloads" => workloads = args.next().expect("--workloads W1,W2").split(',').map(String::from).collect(),
            "-h" | "--help" => {
                println!("usage: mcp-bench-driver [--config bench/servers.json] [--out DIR] [--meta FILE] [--quick] [--rounds N] [--big-calls N] [--servers id,..] [--workloads W1,..,W5.text,W5.frame]");
                return;
            }
            other => die(&format!("unknown argument {other}")),
        }
    }
    let mut plan = Plan::new(quick);
    if let Some(r) = rounds {
        plan.rounds = r;
    }
    plan.workloads = workloads;
    if let Some(n) = big_calls {
        plan.w5_calls = n;
    }
    let out_dir = out_dir.unwrap_or_else(|| PathBuf::from(if quick { "bench/results/quick" } else { "bench/results" }));
    fs::create_dir_all(out_dir.join("logs")).expect("create output dir");
    let mut servers = load_config(&config);
    if !only.is_empty() {
        servers.retain(|s| only.contains(&s.id) || s.role == "echo");
    }
    let meta: Value = meta_path
        .map(|p| serde_json::from_str(&fs::read_to_string(p).expect("read meta")).expect("meta JSON"))
        .unwrap_or(json!({}));

    let mut big_arg = Vec::with_capacity(BIG_CHARS + 2);
    big_arg.push(b'"');
    for _ in 0..BIG_CHARS / 10 {
        big_arg.extend_from_slice(b"abcdefghij");
    }
    big_arg.push(b'"');
    let big_arg = Arc::new(big_arg);

    let mut res = Results::default();
    let load_start = loadavg();
    let t_start = Instant::now();
    let log = |id: &str| out_dir.join("logs").join(format!("{id}.stderr"));
    for round in 0..plan.rounds {
        // Rotate the order each round so that drift does not favour anyone.
        let mut order: Vec<&ServerDef> = servers.iter().collect();
        let n = order.len();
        order.rotate_left(round % n.max(1));
        eprintln!("== round {}/{} (load {})", round + 1, plan.rounds, loadavg());
        let phases: [(&str, &dyn Fn(&ServerDef, &mut Results)); 4] = [
            ("W1", &|d, r| {
                if d.role != "echo" {
                    w1(d, &plan, &log(&d.id), r)
                }
            }),
            ("W2", &|d, r| {
                if d.role != "runtime" {
                    w2_w3_w4(d, &plan, &log(&d.id), r)
                }
            }),
            ("W5", &|d, r| {
                if d.role != "runtime" && d.role != "echo" {
                    w5_w6(d, &plan, &log(&d.id), r, &big_arg)
                }
            }),
            ("W7", &|d, r| {
                if d.role != "runtime" && d.role != "echo" {
                    w7(d, &plan, &log(&d.id), r)
                }
            }),
        ];
        for (name, f) in phases {
            let wanted = match name {
                "W1" => plan.wants("W1"),
                "W2" => plan.wants("W2") || plan.wants("W3") || plan.wants("W4"),
                "W5" => plan.wants("W5") || plan.wants("W5.text") || plan.wants("W5.frame") || plan.wants("W6"),
                _ => plan.wants("W7"),
            };
            if !wanted {
                continue;
            }
            for d in &order {
                let t = Instant::now();
                f(d, &mut res);
                eprintln!("  {name:<3} {:<14} {:>6.1}s", d.id, t.elapsed().as_secs_f64());
            }
        }
    }
    let elapsed = t_start.elapsed().as_secs_f64();
    let run = json!({
        "quick": plan.quick,
        "rounds": plan.rounds,
        "w1_spawns_per_round": plan.w1_spawns,
        "w2_calls_per_round": plan.w2_calls,
        "w2_warmup": plan.w2_warmup,
        "w3_calls_per_batch": plan.w3_calls,
        "w4_calls_per_round": plan.w4_calls,
        "w5_w6_calls_per_round": plan.w5_calls,
        "elapsed_s": elapsed,
        "loadavg_start": load_start,
        "loadavg_end": loadavg(),
    });
    report::write_all(&out_dir, &servers, &res, &meta, &run);
    eprintln!("== done in {elapsed:.0}s; results in {}", out_dir.display());
}
