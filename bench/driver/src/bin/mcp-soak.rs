//! mcp-soak: a long run of mixed traffic against one mcplite server, by hand
//! (not in CI): `bench/soak/run.sh`.
//!
//! The server is `bench/soak/server.R`, over HTTP (`--transport http`, the
//! default) or stdio (`--transport stdio`). For `--minutes M` the driver
//! sends a seeded random mix of requests and checks every answer exactly:
//!
//! - HTTP: 8 client threads, each a keep-alive connection. Modern
//!   (2026-07-28) calls of every tool; legacy (2025-11-25) sessions that run
//!   a few calls and end with DELETE, or are abandoned (the server ends them
//!   after `MCPLITE_SESSION_IDLE`, 5 s here; using one later must give 404);
//!   calls with a progress token answered as an event stream; calls the
//!   client gives up on (the server cancels them); and bad requests, each
//!   with its exact status: invalid JSON 400/-32700, wrong media type 415,
//!   no JSON in Accept 406, GET 405, a body over the limit 413, an unknown
//!   session 404, mismatched mirrored headers 400/-32020.
//! - stdio: one session, up to 32 requests in flight: calls of every tool
//!   (with and without a progress token), `tools/list`, `ping`, unknown
//!   methods, invalid lines, and cancellations of calls in flight (answered
//!   or not, never answered twice).
//!
//! Every 5 s it samples the server's RSS, thread count and open file
//! descriptors. It prints a Markdown report (requests by kind, failures,
//! those samples) and exits non-zero on any failure or growth.

use serde_json::{json, Value};
use std::collections::HashMap;
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

const MODERN: &str = "2026-07-28";
const LEGACY: &str = "2025-11-25";

/// xorshift64*: a seeded, dependency-free generator for the request mix.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Counts by request kind, and the failures (first 20 kept in full).
#[derive(Default)]
struct Tally {
    counts: HashMap<&'static str, u64>,
    failures: u64,
    examples: Vec<String>,
}

impl Tally {
    fn ok(&mut self, kind: &'static str) {
        *self.counts.entry(kind).or_default() += 1;
    }
    fn fail(&mut self, kind: &'static str, what: String) {
        self.failures += 1;
        if self.examples.len() < 20 {
            self.examples.push(format!("{kind}: {}", &what[..what.len().min(400)]));
        }
    }
}

type Shared = Arc<Mutex<Tally>>;

/// One sample of the server process.
struct Sample {
    at: f64,
    rss_mb: f64,
    threads: u64,
    fds: u64,
}

fn sample(pid: u32, t0: Instant) -> Sample {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| -> f64 {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(f64::NAN)
    };
    let fds = fs::read_dir(format!("/proc/{pid}/fd")).map(|d| d.count() as u64).unwrap_or(0);
    Sample { at: t0.elapsed().as_secs_f64(), rss_mb: field("VmRSS:") / 1024.0, threads: field("Threads:") as u64, fds }
}

/// What a `tools/call` should answer: the tool, its arguments, and the
/// expected first text block and `isError`.
fn pick_call(rng: &mut Rng) -> (&'static str, Value, String, bool) {
    match rng.below(6) {
        0 => {
            let (x, y) = (rng.below(1_000_000) as i64, rng.below(1000) as i64);
            ("add", json!({"x": x, "y": y}), (x + y).to_string(), false)
        }
        1 => {
            let times = 1 + rng.below(2000) as usize;
            ("repeat_text", json!({"text": "ab\u{e9}", "times": times}), "ab\u{e9}".repeat(times), false)
        }
        2 => {
            let n = rng.below(100_000);
            ("fail", json!({"why": format!("bad {n}")}), format!("bad {n}"), true)
        }
        3 => {
            let n = 1 + rng.below(20) as usize;
            let v: Vec<String> = (1..=n).map(|i| i.to_string()).collect();
            // A length-one vector is a scalar in JSON.
            let text = if n == 1 { "1".to_string() } else { format!("[{}]", v.join(",")) };
            ("noisy", json!({"n": n}), text, false)
        }
        4 => {
            let rows = 1 + rng.below(300) as usize;
            let v: Vec<String> = (1..=rows).map(|i| format!(r#"{{"i":{i},"sq":{}}}"#, i * i)).collect();
            ("table", json!({"rows": rows}), format!("[{}]", v.join(",")), false)
        }
        _ => ("steps", json!({"steps": 2, "pause": 0.001}), "2".into(), false),
    }
}

/// Checks a `tools/call` response object against the expectation.
fn check_call(resp: &Value, id: u64, text: &str, is_error: bool) -> Result<(), String> {
    if resp["id"] != json!(id) {
        return Err(format!("id {} for {id}", resp["id"]));
    }
    let r = &resp["result"];
    let got = r["content"][0]["text"].as_str().ok_or_else(|| format!("no text: {resp}"))?;
    if got != text || r["isError"] != json!(is_error) {
        return Err(format!("expected {text:?} (isError {is_error}), got {resp}"));
    }
    Ok(())
}

// --- HTTP -------------------------------------------------------------------

fn agent(read: Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_idle_connections_per_host(1)
        .timeout_connect(Some(Duration::from_secs(10)))
        .timeout_recv_response(Some(read))
        .timeout_recv_body(Some(Duration::from_secs(60)))
        .build()
        .into()
}

struct Http {
    url: String,
    agent: ureq::Agent,
    next: u64,
}

struct Got {
    status: u16,
    ctype: String,
    session: Option<String>,
    body: String,
}

impl Http {
    fn send(&self, method: &str, headers: &[(&str, String)], body: Option<&str>) -> Result<Got, String> {
        let resp = match method {
            "GET" => {
                let mut r = self.agent.get(&self.url);
                for (k, v) in headers {
                    r = r.header(*k, v);
                }
                r.call()
            }
            "DELETE" => {
                let mut r = self.agent.delete(&self.url);
                for (k, v) in headers {
                    r = r.header(*k, v);
                }
                r.call()
            }
            _ => {
                let mut r = self.agent.post(&self.url);
                for (k, v) in headers {
                    r = r.header(*k, v);
                }
                r.send(body.unwrap_or(""))
            }
        };
        let mut resp = resp.map_err(|e| format!("transport: {e}"))?;
        let status = resp.status().as_u16();
        let hv = |n: &str| resp.headers().get(n).and_then(|v| v.to_str().ok()).map(String::from);
        let ctype = hv("content-type").unwrap_or_default();
        let session = hv("mcp-session-id");
        let body = resp.body_mut().with_config().limit(16 << 20).read_to_string().map_err(|e| format!("body: {e}"))?;
        Ok(Got { status, ctype, session, body })
    }

    fn id(&mut self) -> u64 {
        self.next += 1;
        self.next
    }

    /// A modern request: body with `_meta`, mirrored headers.
    fn modern(&mut self, method: &str, name: Option<&str>, mut params: Value, sse: bool) -> (u64, Result<Got, String>) {
        let id = self.id();
        params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {}});
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
        let mut h = vec![
            ("Content-Type", "application/json".to_string()),
            ("Accept", if sse { "application/json, text/event-stream" } else { "application/json" }.to_string()),
            ("MCP-Protocol-Version", MODERN.to_string()),
            ("Mcp-Method", method.to_string()),
        ];
        if let Some(n) = name {
            h.push(("Mcp-Name", n.to_string()));
        }
        (id, self.send("POST", &h, Some(&body)))
    }

    fn legacy(
        &mut self,
        sid: Option<&str>,
        method: &str,
        params: Value,
        notification: bool,
    ) -> (u64, Result<Got, String>) {
        let id = self.id();
        let body = if notification {
            json!({"jsonrpc": "2.0", "method": method, "params": params})
        } else {
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        };
        let mut h = vec![
            ("Content-Type", "application/json".to_string()),
            ("Accept", "application/json, text/event-stream".to_string()),
        ];
        if method != "initialize" {
            h.push(("MCP-Protocol-Version", LEGACY.to_string()));
        }
        if let Some(s) = sid {
            h.push(("Mcp-Session-Id", s.to_string()));
        }
        (id, self.send("POST", &h, Some(&body.to_string())))
    }
}

/// The JSON-RPC messages of an answer: the body, or each `data:` of a stream.
fn messages(g: &Got) -> Result<Vec<Value>, String> {
    if g.ctype.starts_with("text/event-stream") {
        g.body
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .map(|d| serde_json::from_str(d).map_err(|e| format!("event not JSON ({e}): {d}")))
            .collect()
    } else {
        serde_json::from_str(&g.body).map(|v| vec![v]).map_err(|e| format!("not JSON ({e}): {}", g.body))
    }
}

fn expect_status(g: Result<Got, String>, status: u16, code: Option<i64>) -> Result<(), String> {
    let g = g?;
    if g.status != status {
        return Err(format!("status {} (expected {status}): {}", g.status, g.body));
    }
    if let Some(c) = code {
        let v: Value = serde_json::from_str(&g.body).map_err(|e| format!("not JSON ({e}): {}", g.body))?;
        if v["error"]["code"] != json!(c) {
            return Err(format!("code {} (expected {c}): {}", v["error"]["code"], g.body));
        }
    }
    Ok(())
}

fn one_call(g: Result<Got, String>, id: u64, text: &str, is_error: bool) -> Result<(), String> {
    let g = g?;
    if g.status != 200 {
        return Err(format!("status {}: {}", g.status, g.body));
    }
    let msgs = messages(&g)?;
    let last = msgs.last().ok_or("empty answer")?;
    check_call(last, id, text, is_error)
}

fn http_worker(
    url: String,
    seed: u64,
    stop: Arc<AtomicBool>,
    tally: Shared,
    abandoned: Arc<Mutex<Vec<(String, Instant)>>>,
) {
    let mut rng = Rng(seed);
    let mut c = Http { url: url.clone(), agent: agent(Duration::from_secs(60)), next: 0 };
    let impatient = Http { url, agent: agent(Duration::from_millis(50)), next: 0 };
    let mut previous = "start";
    while !stop.load(Ordering::Relaxed) {
        let roll = rng.below(100);
        let (kind, res): (&'static str, Result<(), String>) = match roll {
            0..=49 => {
                let (tool, args, text, err) = pick_call(&mut rng);
                let (id, g) = c.modern("tools/call", Some(tool), json!({"name": tool, "arguments": args}), false);
                ("modern call", one_call(g, id, &text, err))
            }
            50..=59 => {
                // A call with a progress token, answered as an event stream.
                let steps = 2 + rng.below(3);
                let params = json!({"name": "steps", "arguments": {"steps": steps, "pause": 0.005},
                    "_meta": {"progressToken": format!("p{}", rng.next())}});
                let (id, g) = c.modern("tools/call", Some("steps"), params, true);
                let res = g.and_then(|g| {
                    let msgs = messages(&g)?;
                    let mut last = 0.0;
                    for m in &msgs[..msgs.len().saturating_sub(1)] {
                        let p = m["params"]["progress"].as_f64().ok_or_else(|| format!("not progress: {m}"))?;
                        if p <= last {
                            return Err(format!("progress not increasing: {msgs:?}"));
                        }
                        last = p;
                    }
                    check_call(msgs.last().ok_or("empty stream")?, id, &steps.to_string(), false)
                });
                ("progress call", res)
            }
            60..=74 => {
                // A legacy session: initialize, a few calls, then DELETE or
                // abandoned.
                let (_, g) = c.legacy(
                    None,
                    "initialize",
                    json!({"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "soak", "version": "0"}}),
                    false,
                );
                let res = g.and_then(|g| {
                    let sid = g.session.ok_or_else(|| format!("no session id: {}", g.body))?;
                    let (_, n) = c.legacy(Some(&sid), "notifications/initialized", json!({}), true);
                    expect_status(n, 202, None)?;
                    for _ in 0..1 + rng.below(5) {
                        let (tool, args, text, err) = pick_call(&mut rng);
                        let (id, g) =
                            c.legacy(Some(&sid), "tools/call", json!({"name": tool, "arguments": args}), false);
                        one_call(g, id, &text, err)?;
                    }
                    if rng.below(3) == 0 {
                        abandoned.lock().unwrap().push((sid, Instant::now()));
                    } else {
                        let h = [("MCP-Protocol-Version", LEGACY.to_string()), ("Mcp-Session-Id", sid.clone())];
                        expect_status(c.send("DELETE", &h, None), 200, None)?;
                        let (_, g) = c.legacy(Some(&sid), "tools/list", json!({}), false);
                        expect_status(g, 404, None)?;
                    }
                    Ok(())
                });
                ("legacy session", res)
            }
            75..=77 => {
                // An abandoned session, 8 s after it was left (idle limit 5 s):
                // ended, so 404.
                let due = {
                    let mut a = abandoned.lock().unwrap();
                    let i = a.iter().position(|(_, t)| t.elapsed() > Duration::from_secs(8));
                    i.map(|i| a.swap_remove(i).0)
                };
                match due {
                    Some(sid) => {
                        let (_, g) = c.legacy(Some(&sid), "tools/list", json!({}), false);
                        ("expired session", expect_status(g, 404, None))
                    }
                    None => continue,
                }
            }
            78..=80 => {
                // A client that gives up after 50 ms on a 300 ms call.
                let mut imp = Http { url: impatient.url.clone(), agent: impatient.agent.clone(), next: c.next };
                let (_, g) = imp.modern(
                    "tools/call",
                    Some("steps"),
                    json!({"name": "steps", "arguments": {"steps": 3, "pause": 0.1}}),
                    false,
                );
                c.next = imp.next;
                match g {
                    Err(_) => ("abandoned call", Ok(())),
                    Ok(g) => ("abandoned call", Err(format!("answered within 50 ms: {} {}", g.status, g.body))),
                }
            }
            81..=83 => {
                let (_, g) = c.modern("tools/list", None, json!({}), false);
                let res = g.and_then(|g| {
                    let v: Value = serde_json::from_str(&g.body).map_err(|e| e.to_string())?;
                    match v["result"]["tools"].as_array().map(Vec::len) {
                        Some(6) => Ok(()),
                        _ => Err(format!("tools/list: {}", g.body)),
                    }
                });
                ("tools/list", res)
            }
            84..=85 => {
                let h = [("Content-Type", "application/json".into()), ("Accept", "application/json".into())];
                ("invalid JSON 400", expect_status(c.send("POST", &h, Some("{\"jsonrpc\": ")), 400, Some(-32700)))
            }
            86..=87 => {
                let h = [("Content-Type", "text/plain".into()), ("Accept", "application/json".into())];
                ("media type 415", expect_status(c.send("POST", &h, Some("{}")), 415, None))
            }
            88..=89 => {
                let body = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string();
                let h = [("Content-Type", "application/json".into()), ("Accept", "text/html".into())];
                ("accept 406", expect_status(c.send("POST", &h, Some(&body)), 406, None))
            }
            90..=91 => {
                ("GET 405", expect_status(c.send("GET", &[("Accept", "text/event-stream".into())], None), 405, None))
            }
            92..=93 => ("body 413", declared_too_big(&c.url)),
            94..=95 => {
                let (_, g) = c.legacy(Some("no-such-session"), "tools/list", json!({}), false);
                ("unknown session 404", expect_status(g, 404, None))
            }
            _ => {
                // Mcp-Name that does not match the body's tool name.
                let (tool, args, _, _) = pick_call(&mut rng);
                let (_, g) = c.modern("tools/call", Some("other"), json!({"name": tool, "arguments": args}), false);
                ("mirrored header 400", expect_status(g, 400, Some(-32020)))
            }
        };
        let mut t = tally.lock().unwrap();
        match res {
            Ok(()) => t.ok(kind),
            Err(e) => t.fail(kind, format!("{e} (after {previous})")),
        }
        previous = kind;
    }
}

/// A request declaring a body over the limit (1 MB here) is answered 413
/// before the body is sent (a client writing the whole body first would
/// find the connection closed under it).
fn declared_too_big(url: &str) -> Result<(), String> {
    use std::io::Read;
    let addr = url.trim_start_matches("http://").split('/').next().unwrap_or_default();
    let mut s = std::net::TcpStream::connect(addr).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(Duration::from_secs(10))).map_err(|e| e.to_string())?;
    let req = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json\r\n\
         Content-Length: 1100000\r\n\r\n{{\"jsonrpc\""
    );
    s.write_all(req.as_bytes()).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let out = String::from_utf8_lossy(&out);
    if out.starts_with("HTTP/1.1 413 ") {
        Ok(())
    } else {
        Err(format!("not 413: {out}"))
    }
}

// --- stdio ------------------------------------------------------------------

/// What the reader expects for each request id.
enum Expect {
    Call {
        text: String,
        is_error: bool,
    },
    /// A call that a cancellation may cut short: the right answer or none.
    /// Not counted in the window of requests in flight.
    Cancellable {
        text: String,
    },
    List,
    Pong,
    Error(i64),
}

fn stdio_run(mut child: Child, minutes: f64, seed: u64, tally: Shared) {
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let pending: Arc<Mutex<HashMap<u64, Expect>>> = Arc::default();
    let window = Arc::new((Mutex::new(0usize), std::sync::Condvar::new()));
    let done = Arc::new(AtomicBool::new(false));

    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": LEGACY,
        "capabilities": {}, "clientInfo": {"name": "soak", "version": "0"}}});
    writeln!(stdin, "{init}\n{}", json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).unwrap();
    let mut lines = BufReader::new(stdout).lines();
    let first = lines.next().unwrap().unwrap();
    assert!(first.contains("\"protocolVersion\""), "initialize: {first}");

    let reader = {
        let (pending, window, tally, done) = (pending.clone(), window.clone(), tally.clone(), done.clone());
        thread::spawn(move || {
            for line in lines {
                let Ok(line) = line else { break };
                let v: Value = match serde_json::from_str(&line) {
                    Ok(v) => v,
                    Err(e) => {
                        tally.lock().unwrap().fail("stdout line", format!("not JSON ({e}): {line}"));
                        continue;
                    }
                };
                if v["method"] == "notifications/progress" {
                    tally.lock().unwrap().ok("progress notification");
                    continue;
                }
                if v["id"].is_null() {
                    // An invalid line's answer.
                    let mut t = tally.lock().unwrap();
                    if v["error"]["code"] == json!(-32700) {
                        t.ok("invalid line");
                    } else {
                        t.fail("invalid line", line);
                    }
                    continue;
                }
                let id = v["id"].as_u64().unwrap_or(u64::MAX);
                let Some(exp) = pending.lock().unwrap().remove(&id) else {
                    tally.lock().unwrap().fail("answer", format!("unexpected or second answer: {line}"));
                    continue;
                };
                let windowed = !matches!(exp, Expect::Cancellable { .. });
                let (kind, res): (&'static str, Result<(), String>) = match exp {
                    Expect::Call { text, is_error } => ("call", check_call(&v, id, &text, is_error)),
                    Expect::Cancellable { text } => ("cancelled call answered", check_call(&v, id, &text, false)),
                    Expect::List => (
                        "tools/list",
                        if v["result"]["tools"].as_array().map(Vec::len) == Some(6) {
                            Ok(())
                        } else {
                            Err(line.clone())
                        },
                    ),
                    Expect::Pong => ("ping", if v["result"] == json!({}) { Ok(()) } else { Err(line.clone()) }),
                    Expect::Error(c) => (
                        "error answer",
                        if v["error"]["code"] == json!(c) { Ok(()) } else { Err(format!("expected {c}: {line}")) },
                    ),
                };
                {
                    let mut t = tally.lock().unwrap();
                    match res {
                        Ok(()) => t.ok(kind),
                        Err(e) => t.fail(kind, e),
                    }
                }
                if windowed {
                    let (m, cv) = &*window;
                    *m.lock().unwrap() -= 1;
                    cv.notify_one();
                }
                if done.load(Ordering::SeqCst) && pending.lock().unwrap().is_empty() {
                    break;
                }
            }
        })
    };

    let mut rng = Rng(seed);
    let t0 = Instant::now();
    let mut id = 0u64;
    let mut cancellable: Vec<u64> = Vec::new();
    let mut cancelled: std::collections::HashSet<u64> = Default::default();
    while t0.elapsed().as_secs_f64() < minutes * 60.0 {
        {
            let (m, cv) = &*window;
            let mut n = m.lock().unwrap();
            while *n >= 32 {
                n = cv.wait(n).unwrap();
            }
        }
        id += 1;
        let roll = rng.below(100);
        let (line, exp) = match roll {
            0..=69 => {
                let (tool, args, text, is_error) = pick_call(&mut rng);
                let token = (rng.below(4) == 0).then(|| format!("t{id}"));
                let mut params = json!({"name": tool, "arguments": args});
                if let Some(t) = &token {
                    params["_meta"] = json!({"progressToken": t});
                }
                let line = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
                (line.to_string(), Some(Expect::Call { text, is_error }))
            }
            70..=74 => {
                let line = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                    "params": {"name": "steps", "arguments": {"steps": 3, "pause": 0.01}}});
                cancellable.push(id);
                (line.to_string(), Some(Expect::Cancellable { text: "3".into() }))
            }
            75..=79 => {
                // Cancel an earlier cancellable call (answered or not yet).
                let Some(target) = cancellable.pop() else { continue };
                cancelled.insert(target);
                let line = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                    "params": {"requestId": target, "reason": "soak"}});
                writeln!(stdin, "{line}").unwrap();
                tally.lock().unwrap().ok("cancellation sent");
                continue;
            }
            80..=84 => (json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"}).to_string(), Some(Expect::List)),
            85..=89 => (json!({"jsonrpc": "2.0", "id": id, "method": "ping"}).to_string(), Some(Expect::Pong)),
            90..=94 => {
                (json!({"jsonrpc": "2.0", "id": id, "method": "no/such"}).to_string(), Some(Expect::Error(-32601)))
            }
            _ => ("{\"jsonrpc\": \"2.0\", \"id\": ".to_string(), None),
        };
        if let Some(e) = exp {
            if !matches!(e, Expect::Cancellable { .. }) {
                *window.0.lock().unwrap() += 1;
            }
            pending.lock().unwrap().insert(id, e);
        }
        writeln!(stdin, "{line}").unwrap();
    }
    // Calls cut short by a cancellation are never answered: forget them
    // once everything else is in.
    done.store(true, Ordering::SeqCst);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let left: Vec<u64> = {
            let p = pending.lock().unwrap();
            p.iter().filter(|(_, e)| !matches!(e, Expect::Cancellable { .. })).map(|(k, _)| *k).collect()
        };
        if left.is_empty() || Instant::now() > deadline {
            if !left.is_empty() {
                tally.lock().unwrap().fail(
                    "unanswered",
                    format!("{} requests never answered: {:?}", left.len(), &left[..left.len().min(10)]),
                );
            }
            break;
        }
        thread::sleep(Duration::from_millis(50));
    }
    // What is still pending now was cancelled, or it is lost.
    let left: Vec<u64> = pending.lock().unwrap().keys().copied().collect();
    let (cut, lost): (Vec<u64>, Vec<u64>) = left.into_iter().partition(|id| cancelled.contains(id));
    let mut t = tally.lock().unwrap();
    *t.counts.entry("cancelled call not answered").or_default() += cut.len() as u64;
    if !lost.is_empty() {
        t.fail(
            "unanswered",
            format!("{} calls never cancelled nor answered: {:?}", lost.len(), &lost[..lost.len().min(10)]),
        );
    }
    drop(t);
    drop(stdin);
    let status = child.wait().unwrap();
    if !status.success() {
        tally.lock().unwrap().fail("exit", format!("server exited with {status}"));
    }
    let _ = reader.join();
}

// --- main -------------------------------------------------------------------

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let opt = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let minutes: f64 = opt("--minutes").map_or(10.0, |m| m.parse().expect("--minutes takes a number"));
    let transport = opt("--transport").unwrap_or_else(|| "http".into());
    let seed: u64 = opt("--seed").map_or(1, |s| s.parse().expect("--seed takes a number"));
    let rscript = std::env::var("RSCRIPT").unwrap_or_else(|_| "Rscript".into());
    let log = fs::File::create(opt("--log").unwrap_or_else(|| "/tmp/mcp-soak-server.log".into())).unwrap();

    let tally: Shared = Arc::default();
    let mut cmd = Command::new(rscript);
    cmd.args(["--vanilla", "bench/soak/server.R"]).stderr(log);
    let t0 = Instant::now();
    let samples = Arc::new(Mutex::new(Vec::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let sampler = |pid: u32| {
        let (samples, stop) = (samples.clone(), stop.clone());
        thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                samples.lock().unwrap().push(sample(pid, t0));
                for _ in 0..50 {
                    if stop.load(Ordering::SeqCst) {
                        return;
                    }
                    thread::sleep(Duration::from_millis(100));
                }
            }
        })
    };

    if transport == "stdio" {
        let child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().expect("start the server");
        let s = sampler(child.id());
        stdio_run(child, minutes, seed, tally.clone());
        stop.store(true, Ordering::SeqCst);
        let _ = s.join();
    } else {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let mut child = cmd
            .env("MCPLITE_TRANSPORT", "http")
            .env("MCPLITE_PORT", port.to_string())
            .env("MCPLITE_SESSION_IDLE", "5")
            .env("MCPLITE_MAX_BODY", "1000000")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .expect("start the server");
        let url = format!("http://127.0.0.1:{port}/mcp");
        let health = format!("http://127.0.0.1:{port}/health");
        let a = agent(Duration::from_secs(5));
        let ready = Instant::now();
        while a.get(&health).call().is_err() {
            assert!(ready.elapsed() < Duration::from_secs(60), "server did not start");
            thread::sleep(Duration::from_millis(100));
        }
        let s = sampler(child.id());
        let abandoned = Arc::default();
        let workers: Vec<_> = (0..8)
            .map(|k| {
                let (url, stop, tally, abandoned) = (url.clone(), stop.clone(), tally.clone(), Arc::clone(&abandoned));
                thread::spawn(move || http_worker(url, seed.wrapping_mul(1000) + k + 1, stop, tally, abandoned))
            })
            .collect();
        thread::sleep(Duration::from_secs_f64(minutes * 60.0));
        stop.store(true, Ordering::SeqCst);
        for w in workers {
            let _ = w.join();
        }
        let _ = s.join();
        // The server still answers, then stops on SIGTERM with status 0.
        match a.get(&health).call() {
            Ok(r) if r.status() == 200 => tally.lock().unwrap().ok("health at the end"),
            other => tally.lock().unwrap().fail("health at the end", format!("{:?}", other.map(|r| r.status()))),
        }
        // SAFETY: kill() sends a signal to our own child.
        unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
        let status = child.wait().unwrap();
        if !status.success() {
            tally.lock().unwrap().fail("exit", format!("server exited with {status} after SIGTERM"));
        }
    }

    // --- report ---
    let t = tally.lock().unwrap();
    let samples = samples.lock().unwrap();
    let total: u64 = t.counts.values().sum();
    let secs = t0.elapsed().as_secs_f64();
    println!("## Soak: {transport}, {minutes} min, seed {seed}\n");
    println!("- {total} requests checked ({:.0}/s), {} failures", total as f64 / secs, t.failures);
    let mut kinds: Vec<_> = t.counts.iter().collect();
    kinds.sort();
    println!("- by kind: {}", kinds.iter().map(|(k, n)| format!("{k} {n}")).collect::<Vec<_>>().join(", "));
    for e in &t.examples {
        println!("- FAILURE {e}");
    }
    // Growth: the last sample against the one after the first minute.
    let warm = samples.iter().find(|s| s.at >= 60.0_f64.min(minutes * 30.0)).or(samples.first());
    let mut grew = false;
    if let (Some(w), Some(l)) = (warm, samples.last()) {
        let max_rss = samples.iter().map(|s| s.rss_mb).fold(0.0, f64::max);
        println!(
            "- server RSS {:.1} MB at {:.0} s, {:.1} MB at the end (max {:.1}); threads {} then {}; open fds {} then {}",
            w.rss_mb, w.at, l.rss_mb, max_rss, w.threads, l.threads, w.fds, l.fds
        );
        grew = l.rss_mb > w.rss_mb * 1.1 + 2.0 || l.fds > w.fds + 8 || l.threads > w.threads + 4;
        if grew {
            println!("- GROWTH between {:.0} s and the end", w.at);
        }
    }
    println!("\n| s | RSS (MB) | threads | fds |\n|---|---|---|---|");
    let step = (samples.len() / 12).max(1);
    for s in samples.iter().step_by(step).chain(samples.last()) {
        println!("| {:.0} | {:.1} | {} | {} |", s.at, s.rss_mb, s.threads, s.fds);
    }
    if t.failures > 0 || grew {
        std::process::exit(1);
    }
}
