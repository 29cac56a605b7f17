//! The stdio transport with calls that take time, over real pipes and real
//! threads, with a fake host whose tools sleep, block and report (RULES
//! C1–C5): heartbeats and tool reports written by the ticker, cancellation
//! of the running call and of queued requests, and pings that overtake a
//! running call.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mcplite_engine::host::{CallContext, Host, ToolFailure, ToolResult, ToolSpec};
use mcplite_engine::logging::{LogEntry, LogLevel};
use mcplite_engine::progress::{Inflight, ProgressPolicy};
use mcplite_engine::telemetry::OtelRecorder;
use mcplite_engine::transport::{serve, Reader, ServeEnd, ServeOptions};
use mcplite_engine::{LegacyState, Server, ServerInfo};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider};
use serde_json::{json, Map, Value};

use crate::pipes::pipe;

/// Long enough for anything to arrive; a test that waits this long has failed.
const PATIENCE: Duration = Duration::from_secs(30);

/// What the test and the fake host share.
#[derive(Clone)]
struct Knobs {
    inflight: Arc<Inflight>,
    /// Set by the interrupter (what SIGINT does to R), cleared by the tool.
    interrupted: Arc<AtomicBool>,
    /// How often the interrupter was called.
    interrupts: Arc<AtomicUsize>,
    /// The `gate` tool runs until this is set.
    open: Arc<AtomicBool>,
    /// The `gate` tool is running.
    running: Arc<AtomicBool>,
}

impl Knobs {
    fn new(policy: ProgressPolicy) -> Knobs {
        let interrupted = Arc::new(AtomicBool::new(false));
        let interrupts = Arc::new(AtomicUsize::new(0));
        let (i, n) = (interrupted.clone(), interrupts.clone());
        let inflight = Arc::new(Inflight::new(
            policy,
            Some(Arc::new(move || {
                n.fetch_add(1, Ordering::SeqCst);
                i.store(true, Ordering::SeqCst);
            })),
        ));
        Knobs {
            inflight,
            interrupted,
            interrupts,
            open: Arc::new(AtomicBool::new(false)),
            running: Arc::new(AtomicBool::new(false)),
        }
    }

    fn wait_running(&self) {
        let t0 = Instant::now();
        while !self.running.load(Ordering::SeqCst) {
            assert!(t0.elapsed() < PATIENCE, "the gate tool never started");
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

/// The fake host: `sleep` (`ms`), `gate` (until opened or interrupted),
/// `report` (`n` reports out of `n`, one every `every_us`, the last one just
/// before returning), `echo` (`n`), `trio` (0, 50 and 100 of 100, 50 ms
/// apart, as the conformance suite's tool does), `late` (sleeps `ms`, then
/// reports 0.5 of 1 and returns 50 ms later), `logs` (`n` log messages,
/// message `j` at level `j % 8` of [`LogLevel::ALL`], reporting progress `j`
/// after each when `progress` is set; RULES G2).
struct Fake(Knobs);

const TOOLS: [&str; 8] = ["sleep", "gate", "report", "echo", "trio", "late", "logs", "log_gate"];

impl Knobs {
    /// What the R bridge's mcp_progress() does.
    fn report(&self, value: f64, total: f64, message: Option<&str>) {
        self.inflight.report(value, Some(total), message).unwrap();
    }
}

impl Host for Fake {
    fn tools(&mut self) -> Vec<ToolSpec> {
        TOOLS.iter().map(|n| ToolSpec::new(*n, "A test tool.")).collect()
    }

    fn call_tool(
        &mut self,
        i: usize,
        a: Option<&Map<String, Value>>,
        _: &CallContext,
    ) -> Result<ToolResult, ToolFailure> {
        let arg = |k: &str| a.and_then(|a| a.get(k)).and_then(Value::as_u64).unwrap_or(0);
        let k = &self.0;
        match TOOLS[i] {
            "sleep" => std::thread::sleep(Duration::from_millis(arg("ms"))),
            "gate" | "log_gate" => {
                k.running.store(true, Ordering::SeqCst);
                if TOOLS[i] == "log_gate" {
                    // One message, then wait: it must reach the client now.
                    k.inflight.log(LogEntry { level: LogLevel::Info, logger: None, data: "\"waiting\"".into() });
                }
                let t0 = Instant::now();
                let out = loop {
                    if k.interrupted.swap(false, Ordering::SeqCst) {
                        break Err(ToolFailure::Interrupted);
                    }
                    if k.open.load(Ordering::SeqCst) || t0.elapsed() > PATIENCE {
                        break Ok(ToolResult::text("opened"));
                    }
                    std::thread::sleep(Duration::from_millis(1));
                };
                k.running.store(false, Ordering::SeqCst);
                return out;
            }
            "report" => {
                let (n, every) = (arg("n"), Duration::from_micros(arg("every_us")));
                for j in 1..=n {
                    if j > 1 && !every.is_zero() {
                        std::thread::sleep(every);
                    }
                    k.report(j as f64, n as f64, Some(&format!("step {j}")));
                }
            }
            "trio" => {
                for (j, v) in [0.0, 50.0, 100.0].into_iter().enumerate() {
                    if j > 0 {
                        std::thread::sleep(Duration::from_millis(50));
                    }
                    k.report(v, 100.0, None);
                }
            }
            "late" => {
                std::thread::sleep(Duration::from_millis(arg("ms")));
                k.report(0.5, 1.0, Some("half"));
                std::thread::sleep(Duration::from_millis(50));
            }
            "logs" => {
                let n = arg("n");
                for j in 1..=n {
                    // What the R bridge's mcp_log() (and a tool's message()) does.
                    k.inflight.log(LogEntry {
                        level: LogLevel::ALL[(j % 8) as usize],
                        logger: Some("logs".into()),
                        data: json!(format!("line {j}")).to_string(),
                    });
                    if arg("progress") == 1 {
                        k.report(j as f64, n as f64, None);
                    }
                }
            }
            _ => {}
        }
        Ok(ToolResult::text(arg("n").to_string()))
    }
}

/// A server on another thread, and the client's ends of its pipes.
struct Client {
    input: Option<File>,
    lines: Receiver<String>,
    serving: JoinHandle<ServeEnd>,
    knobs: Knobs,
}

impl Client {
    fn start(policy: ProgressPolicy) -> Client {
        Client::start_traced(policy, None)
    }

    /// [`Client::start`] with spans recorded into `exporter`.
    fn start_traced(policy: ProgressPolicy, exporter: Option<InMemorySpanExporter>) -> Client {
        let knobs = Knobs::new(policy);
        let (in_r, in_w) = pipe();
        let (out_r, mut out_w) = pipe();
        let k = knobs.clone();
        let serving = std::thread::spawn(move || {
            let mut host = Fake(k.clone());
            let info = ServerInfo { name: "mcplite".into(), version: "1".into(), instructions: None };
            let mut server = Server::new(info, &mut host);
            if let Some(x) = exporter {
                let provider = SdkTracerProvider::builder().with_simple_exporter(x).build();
                server.set_recorder(Some(Box::new(OtelRecorder::from_provider(provider))));
            }
            serve(&server, &mut host, Reader::spawn(in_r), &mut out_w, &ServeOptions::default(), &k.inflight)
        });
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for l in BufReader::new(out_r).lines() {
                let Ok(l) = l else { return };
                if tx.send(l).is_err() {
                    return;
                }
            }
        });
        let mut c = Client { input: Some(in_w), lines, serving, knobs };
        c.send(r#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#);
        assert_eq!(c.recv()["id"], "init");
        c
    }

    fn send(&mut self, line: &str) {
        let w = self.input.as_mut().unwrap();
        w.write_all(line.as_bytes()).unwrap();
        w.write_all(b"\n").unwrap();
    }

    fn send_bytes(&mut self, bytes: &[u8]) {
        self.input.as_mut().unwrap().write_all(bytes).unwrap();
    }

    fn call(&mut self, id: Value, tool: &str, args: Value, token: Option<Value>) {
        let mut params = json!({"name": tool, "arguments": args});
        if let Some(t) = token {
            params["_meta"] = json!({ "progressToken": t });
        }
        self.send(&json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":params}).to_string());
    }

    fn cancel(&mut self, id: Value) {
        self.send(
            &json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":id,"reason":"test"}})
                .to_string(),
        );
    }

    fn recv(&self) -> Value {
        let l = self.lines.recv_timeout(PATIENCE).expect("no line from the server");
        serde_json::from_str(&l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}"))
    }

    /// Lines up to and including the response with `id`.
    fn until(&self, id: &Value) -> Vec<Value> {
        let mut got = Vec::new();
        loop {
            let v = self.recv();
            let done = v.get("id") == Some(id);
            got.push(v);
            if done {
                return got;
            }
        }
    }

    /// Close stdin; everything else the server writes, and how it ended.
    fn finish(mut self) -> (Vec<Value>, ServeEnd) {
        drop(self.input.take());
        let end = self.serving.join().unwrap();
        let mut rest = Vec::new();
        loop {
            match self.lines.recv_timeout(PATIENCE) {
                Ok(l) => rest.push(serde_json::from_str(&l).unwrap()),
                Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => panic!("the server's output did not end"),
            }
        }
        (rest, end)
    }
}

fn is_progress(v: &Value) -> bool {
    v["method"] == "notifications/progress"
}

fn fast_policy() -> ProgressPolicy {
    ProgressPolicy {
        first: Duration::from_millis(20),
        interval: Duration::from_millis(50),
        min_gap: Duration::from_millis(10),
        burst: 10,
    }
}

#[test]
fn c1_heartbeats_for_a_slow_call_with_a_token_and_none_after_its_response() {
    let mut c = Client::start(fast_policy());
    c.call(json!(1), "sleep", json!({"ms": 600}), Some(json!("hb")));
    let got = c.until(&json!(1));
    let (notes, answer) = got.split_at(got.len() - 1);
    assert_eq!(answer[0]["result"]["isError"], false);
    assert!(notes.len() >= 2, "a 600 ms call with 50 ms heartbeats got {} notifications", notes.len());
    let mut last = -1.0;
    for n in notes {
        assert!(is_progress(n), "{n}");
        let p = &n["params"];
        assert_eq!(p["progressToken"], "hb");
        let v = p["progress"].as_f64().unwrap();
        assert!(v > last, "progress must increase: {v} after {last}");
        last = v;
        assert!(p.get("total").is_none());
        assert!(p["message"].as_str().unwrap().starts_with("still running after"), "{n}");
    }
    // Quiet for several intervals: nothing may follow the response.
    std::thread::sleep(Duration::from_millis(300));
    c.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    let next = c.recv();
    assert_eq!(next["id"], 2, "only the next answer, no late notification: {next}");
    let (rest, end) = c.finish();
    assert_eq!(end, ServeEnd::Eof);
    assert!(rest.is_empty(), "{rest:?}");
}

#[test]
fn c1_no_heartbeat_without_a_token_nor_for_a_fast_call() {
    let mut c = Client::start(fast_policy());
    // Slow, but no token; then a token of a type that is ignored.
    c.call(json!("slow"), "sleep", json!({"ms": 300}), None);
    c.call(json!("float"), "sleep", json!({"ms": 300}), Some(json!(1.5)));
    assert_eq!(c.until(&json!("slow")).len(), 1, "no notification without a token");
    assert_eq!(c.until(&json!("float")).len(), 1, "no notification for a token that is neither string nor integer");
    let mut c = {
        let (rest, _) = c.finish();
        assert!(rest.is_empty());
        Client::start(ProgressPolicy::default())
    };
    // With the default policy (first heartbeat after 1 s), quick calls with
    // a token get none.
    for i in 0..200 {
        c.call(json!(i), "echo", json!({"n": i}), Some(json!(format!("t{i}"))));
    }
    for i in 0..200 {
        let v = c.recv();
        assert_eq!(v["id"], i, "only answers, in order: {v}");
    }
    let (rest, _) = c.finish();
    assert!(rest.is_empty());
}

#[test]
fn c2_tool_reports_arrive_coalesced_and_increasing() {
    let mut c = Client::start(fast_policy());
    // 5,000 reports over about half a second.
    c.call(json!("r"), "report", json!({"n": 5000, "every_us": 100}), Some(json!(7)));
    let got = c.until(&json!("r"));
    let (notes, answer) = got.split_at(got.len() - 1);
    assert_eq!(answer[0]["result"]["content"][0]["text"], "5000");
    assert!(!notes.is_empty(), "the tool's reports were sent");
    assert!(notes.len() < 1000, "5,000 reports must be coalesced, got {} notifications", notes.len());
    let mut last = 0.0;
    let mut reported = 0;
    for n in notes {
        assert!(is_progress(n), "{n}");
        let p = &n["params"];
        assert_eq!(p["progressToken"], 7);
        let v = p["progress"].as_f64().unwrap();
        assert!(v > last && v <= 5000.0 + 1.0, "{v} after {last}");
        last = v;
        if p["total"] == 5000 && p["message"].as_str().is_some_and(|m| m.starts_with("step ")) {
            reported += 1;
        }
    }
    assert!(reported >= 1, "the tool's own values, total and message are sent: {notes:?}");
    let last = &notes.last().unwrap()["params"];
    assert_eq!((last["progress"].clone(), last["message"].clone()), (json!(5000), json!("step 5000")));
    c.finish();
}

/// The progress notifications before the response with `id`, and their
/// values (checked to increase).
fn notes_until(c: &Client, id: &Value) -> (Vec<Value>, Vec<f64>) {
    let mut got = c.until(id);
    let answer = got.pop().unwrap();
    assert!(answer.get("result").is_some(), "{answer}");
    let mut values = Vec::new();
    for n in &got {
        assert!(is_progress(n), "{n}");
        values.push(n["params"]["progress"].as_f64().unwrap());
    }
    assert!(values.windows(2).all(|w| w[0] < w[1]), "increasing: {values:?}");
    (got.into_iter().map(|n| n["params"].clone()).collect(), values)
}

#[test]
fn c2_a_short_burst_arrives_whole_and_unchanged() {
    // The conformance suite's tools-call-with-progress: 0, 50 and 100 of
    // 100, 50 ms apart, with the default policy (a burst of 10).
    let mut c = Client::start(ProgressPolicy::default());
    for i in 0..5 {
        c.call(json!(i), "trio", json!({}), Some(json!(format!("t{i}"))));
        let (notes, values) = notes_until(&c, &json!(i));
        assert_eq!(values, [0.0, 50.0, 100.0], "run {i}: {notes:?}");
        assert!(notes.iter().all(|n| n["total"] == 100 && n["progressToken"] == format!("t{i}")));
    }
    c.finish();
}

#[test]
fn c2_the_last_report_is_always_sent_before_the_response() {
    let mut c = Client::start(ProgressPolicy::default());
    // A report made just before the tool returns, twenty times; and ten
    // after the burst is used up (the rate limit would hold the last one).
    for i in 0..20 {
        c.call(json!(i), "report", json!({"n": 1}), Some(json!(i)));
        let (notes, values) = notes_until(&c, &json!(i));
        assert_eq!(values, [1.0], "run {i}: {notes:?}");
        assert_eq!(notes[0]["message"], "step 1");
    }
    for i in 20..30 {
        c.call(json!(i), "report", json!({"n": 50}), Some(json!(i)));
        let (_, values) = notes_until(&c, &json!(i));
        assert_eq!(values.last(), Some(&50.0), "run {i}: {values:?}");
    }
    c.finish();
}

#[test]
fn c2_a_tight_loop_sends_few_notifications() {
    let mut c = Client::start(ProgressPolicy::default());
    let t0 = Instant::now();
    c.call(json!("loop"), "report", json!({"n": 200_000}), Some(json!(1)));
    let (notes, values) = notes_until(&c, &json!("loop"));
    let secs = t0.elapsed().as_secs_f64();
    // The burst, ten a second after it, heartbeats (one a second at most
    // with the default policy), and the last report.
    let most = 10.0 + 10.0 * secs + secs + 2.0;
    assert!((values.len() as f64) <= most, "{} notifications in {secs:.2} s", values.len());
    assert_eq!(values.last(), Some(&200_000.0), "{notes:?}");
    c.finish();
}

#[test]
fn c2_a_heartbeat_before_the_first_report_sets_no_scale() {
    let mut c = Client::start(fast_policy());
    // Heartbeats from 20 ms on; the tool reports 0.5 of 1 after 150 ms.
    c.call(json!("h"), "late", json!({"ms": 150}), Some(json!("hb")));
    let (notes, values) = notes_until(&c, &json!("h"));
    let at = notes.iter().position(|n| n["message"] == "half").expect("the tool's report");
    assert!(at >= 1, "heartbeats came first: {notes:?}");
    assert!(values[..at].iter().all(|v| *v < 1e-6), "heartbeats only add a hair: {values:?}");
    assert_eq!((values[at], notes[at]["total"].clone()), (0.5, json!(1)), "sent as reported: {notes:?}");
    c.finish();
}

#[test]
fn c4_cancelling_the_running_call_interrupts_it_and_it_gets_no_answer() {
    let mut c = Client::start(fast_policy());
    c.call(json!("c1"), "gate", json!({}), Some(json!("tok")));
    c.knobs.wait_running();
    // The same id spelled differently is the same request (and a reason
    // that mentions tools/call changes nothing).
    c.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"\u0063\u0031","reason":"tools/call took too long"}}"#);
    c.call(json!(2), "echo", json!({"n": 2}), None);
    let got = c.until(&json!(2));
    for v in &got[..got.len() - 1] {
        assert!(is_progress(v), "nothing but notifications before the next answer: {v}");
    }
    assert_eq!(got.last().unwrap()["result"]["content"][0]["text"], "2");
    assert_eq!(c.knobs.interrupts.load(Ordering::SeqCst), 1, "the interrupter ran once");
    // A cancellation after the end is ignored.
    c.cancel(json!(2));
    c.cancel(json!("c1"));
    c.send(r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#);
    assert_eq!(c.recv()["id"], 3);
    let (rest, end) = c.finish();
    assert_eq!(end, ServeEnd::Eof);
    assert!(rest.is_empty(), "no answer for c1, ever: {rest:?}");
}

#[test]
fn c4_the_cancelled_calls_span_records_the_cancellation() {
    // RULES C4 and T-rules: the span of a call cancelled while its tool ran
    // ends with error.type "cancelled"; the next call's span has none.
    let exporter = InMemorySpanExporter::default();
    let mut c = Client::start_traced(fast_policy(), Some(exporter.clone()));
    c.call(json!("c1"), "gate", json!({}), None);
    c.knobs.wait_running();
    c.cancel(json!("c1"));
    c.call(json!(2), "echo", json!({"n": 2}), None);
    assert_eq!(c.until(&json!(2)).last().unwrap()["result"]["content"][0]["text"], "2");
    // (Read while serving: the exporter forgets its spans at shutdown.)
    let deadline = Instant::now() + PATIENCE;
    let spans = loop {
        let spans = exporter.get_finished_spans().unwrap();
        if spans.iter().any(|s| s.name == "tools/call echo") || Instant::now() > deadline {
            break spans;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let (rest, _) = c.finish();
    assert!(rest.is_empty(), "{rest:?}");
    let error_type = |name: &str| {
        let s = spans.iter().find(|s| s.name == name).unwrap_or_else(|| panic!("no span {name}: {spans:#?}"));
        s.attributes.iter().find(|kv| kv.key.as_str() == "error.type").map(|kv| kv.value.to_string())
    };
    assert_eq!(error_type("tools/call gate").as_deref(), Some("cancelled"));
    assert_eq!(error_type("tools/call echo"), None);
}

#[test]
fn c4_a_request_cancelled_while_queued_is_never_answered() {
    let mut c = Client::start(fast_policy());
    c.call(json!("a"), "gate", json!({}), None);
    c.knobs.wait_running();
    c.call(json!("q"), "echo", json!({"n": 1}), None);
    c.send(r#"{"jsonrpc":"2.0","id":"l","method":"tools/list"}"#);
    c.cancel(json!("q"));
    c.cancel(json!("l"));
    c.call(json!("r"), "echo", json!({"n": 2}), None);
    // A cancellation acts when the server reads it: wait until it has read
    // everything (the ping's answer comes once the lines before it were
    // seen; RULES C5), then let the running call end.
    c.send(r#"{"jsonrpc":"2.0","id":"sync","method":"ping"}"#);
    assert_eq!(c.recv()["id"], "sync");
    c.knobs.open.store(true, Ordering::SeqCst);
    let (rest, end) = c.finish();
    assert_eq!(end, ServeEnd::Eof);
    let ids: Vec<&Value> = rest.iter().map(|v| &v["id"]).collect();
    assert_eq!(ids, [&json!("a"), &json!("r")], "{rest:?}");
    assert_eq!(rest[0]["result"]["content"][0]["text"], "opened", "the running call was not interrupted");
}

#[test]
fn c4_a_cancellation_never_touches_a_later_request_with_that_id() {
    let mut c = Client::start(fast_policy());
    // While idle: a cancellation for an id not sent yet.
    c.cancel(json!("z"));
    c.call(json!("z"), "echo", json!({"n": 1}), None);
    assert_eq!(c.recv()["id"], "z");
    // While a call runs: the same, with the request queued after it.
    c.call(json!("a"), "gate", json!({}), None);
    c.knobs.wait_running();
    c.cancel(json!("y"));
    c.call(json!("y"), "echo", json!({"n": 2}), None);
    c.knobs.open.store(true, Ordering::SeqCst);
    assert_eq!(c.recv()["id"], "a");
    assert_eq!(c.recv()["id"], "y");
    // A cancellation of the running call never applies to the next call
    // reusing its id.
    c.knobs.open.store(false, Ordering::SeqCst);
    c.call(json!("x"), "gate", json!({}), None);
    c.knobs.wait_running();
    c.cancel(json!("x"));
    c.call(json!("x"), "echo", json!({"n": 3}), None);
    let v = c.recv();
    assert_eq!((v["id"].clone(), v["result"]["content"][0]["text"].clone()), (json!("x"), json!("3")));
    let knobs = c.knobs.clone();
    let (rest, _) = c.finish();
    assert!(rest.is_empty(), "{rest:?}");
    assert_eq!(knobs.interrupts.load(Ordering::SeqCst), 1);
}

#[test]
fn c4_a_burst_of_cancellations() {
    let mut c = Client::start(fast_policy());
    c.call(json!("run"), "gate", json!({}), None);
    c.knobs.wait_running();
    c.call(json!("queued"), "echo", json!({"n": 1}), None);
    let mut burst = String::new();
    for i in 0..1000 {
        // Never-sent ids, the queued request, and the running call, mixed.
        let id = match i % 10 {
            0 => json!("queued"),
            5 => json!("run"),
            _ => json!(format!("never-{i}")),
        };
        burst.push_str(
            &json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":id}}).to_string(),
        );
        burst.push('\n');
    }
    c.send_bytes(burst.as_bytes());
    for i in 0..100 {
        c.call(json!(format!("never-{i}")), "echo", json!({"n": i}), None);
    }
    let knobs = c.knobs.clone();
    let (rest, end) = c.finish();
    assert_eq!(end, ServeEnd::Eof);
    assert_eq!(knobs.interrupts.load(Ordering::SeqCst), 1, "the running call is interrupted once");
    let ids: Vec<String> = rest.iter().map(|v| v["id"].as_str().unwrap().to_owned()).collect();
    let want: Vec<String> = (0..100).map(|i| format!("never-{i}")).collect();
    assert_eq!(ids, want, "the later requests with cancelled ids are all answered, in order");
}

#[test]
fn c5_a_legacy_ping_is_answered_while_a_call_is_blocked() {
    let mut c = Client::start(fast_policy());
    c.call(json!("g"), "gate", json!({}), None);
    c.knobs.wait_running();
    c.send(r#"{"jsonrpc":"2.0","id":"l","method":"tools/list"}"#);
    c.send(r#"{"jsonrpc":"2.0","id":"p1","method":"ping"}"#);
    c.send(r#"{"jsonrpc":"2.0","id":"m","method":"ping","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#);
    c.send(r#"{"jsonrpc":"2.0","id":"p2","method":"ping","params":{}}"#);
    // Answered while the gate is still closed.
    assert_eq!(c.recv(), json!({"jsonrpc":"2.0","id":"p1","result":{}}));
    assert_eq!(c.recv(), json!({"jsonrpc":"2.0","id":"p2","result":{}}));
    assert!(c.knobs.running.load(Ordering::SeqCst), "the call still runs");
    c.knobs.open.store(true, Ordering::SeqCst);
    // Everything else keeps its order: the call, tools/list, then the
    // modern ping's error.
    assert_eq!(c.recv()["id"], "g");
    assert_eq!(c.recv()["id"], "l");
    let m = c.recv();
    assert_eq!((m["id"].clone(), m["error"]["code"].clone()), (json!("m"), json!(-32601)));
    // With nothing running, a ping keeps its place.
    c.send(r#"{"jsonrpc":"2.0","id":"l2","method":"tools/list"}"#);
    c.send(r#"{"jsonrpc":"2.0","id":"p3","method":"ping"}"#);
    assert_eq!(c.recv()["id"], "l2");
    assert_eq!(c.recv()["id"], "p3");
    let (rest, _) = c.finish();
    assert!(rest.is_empty(), "{rest:?}");
}

#[test]
fn c5_pings_read_with_a_call_queued_ahead_overtake_it_and_all_are_answered_at_eof() {
    let mut c = Client::start(fast_policy());
    let mut batch = String::new();
    batch.push_str(
        &json!({"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"sleep","arguments":{"ms":300}}})
            .to_string(),
    );
    batch.push('\n');
    for i in 0..50 {
        batch.push_str(&format!("{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"ping\"}}\n"));
    }
    c.send_bytes(batch.as_bytes());
    let (rest, _) = c.finish();
    assert_eq!(rest.len(), 51, "every line received before EOF is answered: {rest:?}");
    let pos = rest.iter().position(|v| v["id"] == "s").unwrap();
    assert!(pos > 0, "pings overtake the sleeping call");
    let mut pings: Vec<u64> = rest.iter().filter_map(|v| v["id"].as_u64()).collect();
    pings.sort_unstable();
    assert_eq!(pings, (0..50).collect::<Vec<_>>());
}

#[test]
fn hostile_lines_that_look_like_cancellations_or_pings() {
    let mut c = Client::start(fast_policy());
    c.call(json!("g"), "gate", json!({}), None);
    c.knobs.wait_running();
    let huge_cancel = format!(
        "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{{\"requestId\":\"g\",\"reason\":\"{}\"}}}}",
        "x".repeat(100_000)
    );
    let huge_ping = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":\"hp\",\"method\":\"ping\",\"params\":{{\"pad\":\"{}\"}}}}",
        "y".repeat(100_000)
    );
    let lines = [
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":["g"]}}"#.to_string(),
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1.5}}"#.into(),
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":"g"}"#.into(),
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled"}"#.into(),
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"g""#.into(),
        r#"{"jsonrpc":"2.0","id":"g","method":"notifications/cancelled","params":{"requestId":"g"}}"#.into(),
        "\u{1}notifications/cancelled \"ping\" \u{7f}".into(),
        r#"{"jsonrpc":"2.0","id":"bad","method":"ping""#.into(),
        r#"{"jsonrpc":"2.0","id":"trailing","method":"ping"} "#.into(),
        r#"[{"jsonrpc":"2.0","id":"arr","method":"ping"}]"#.into(),
        r#"{"jsonrpc":"2.0","method":"ping"}"#.into(),
        r#"{"jsonrpc":"2.0","id":"pingy","method":"pings"}"#.into(),
        huge_cancel,
        huge_ping,
    ];
    for l in &lines {
        c.send(l);
    }
    let garbage: &[u8] = b"\xff\xfe\"ping\" notifications/cancelled";
    c.send_bytes(garbage);
    c.send_bytes(b"\n");
    // The call is still running: none of those cancelled it. The legacy
    // ping among them (trailing space) and this one overtake it.
    c.send(r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#);
    let early = c.until(&json!("p"));
    assert_eq!(
        early,
        [json!({"jsonrpc":"2.0","id":"trailing","result":{}}), json!({"jsonrpc":"2.0","id":"p","result":{}})]
    );
    assert_eq!(c.knobs.interrupts.load(Ordering::SeqCst), 0);
    c.knobs.open.store(true, Ordering::SeqCst);
    let (rest, _) = c.finish();
    assert_eq!(rest[0]["id"], "g");
    assert_eq!(rest[0]["result"]["content"][0]["text"], "opened");
    // The rest in order, each answered as the dispatcher answers it alone
    // (the huge ping is too long to look at on arrival: it keeps its place).
    let mut host = Fake(Knobs::new(fast_policy()));
    let info = ServerInfo { name: "mcplite".into(), version: "1".into(), instructions: None };
    let oracle = Server::new(info, &mut host);
    let mut session = LegacyState::default();
    let init = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    assert!(oracle.handle(&mut session, init, &mut host).into_line().is_some());
    let want: Vec<Value> = lines
        .iter()
        .map(|l| l.as_bytes())
        .chain([garbage])
        .filter_map(|l| oracle.handle(&mut session, l, &mut host).into_line())
        .map(|l| serde_json::from_slice::<Value>(&l).unwrap())
        .filter(|v| v["id"] != "trailing")
        .collect();
    assert_eq!(rest[1..], want[..]);
    assert!(want.iter().any(|v| v["id"] == "hp"));
}

/// The `params` of the `notifications/message` lines in `got`.
fn log_params(got: &[Value]) -> Vec<Value> {
    got.iter().filter(|v| v["method"] == "notifications/message").map(|v| v["params"].clone()).collect()
}

#[test]
fn g1_no_log_message_before_the_session_sets_a_level() {
    let mut c = Client::start(fast_policy());
    c.call(json!(1), "logs", json!({"n": 16}), Some(json!("t")));
    let got = c.until(&json!(1));
    assert!(log_params(&got).is_empty(), "{got:?}");
    let _ = c.finish();
}

#[test]
fn g1_g3_a_session_level_filters_and_orders_messages_before_the_response() {
    let mut c = Client::start(fast_policy());
    c.send(r#"{"jsonrpc":"2.0","id":"lv","method":"logging/setLevel","params":{"level":"warning"}}"#);
    assert_eq!(c.recv(), json!({"jsonrpc":"2.0","id":"lv","result":{}}));
    c.send(r#"{"jsonrpc":"2.0","id":"bad","method":"logging/setLevel","params":{"level":"loud"}}"#);
    assert_eq!(c.recv()["error"]["code"], -32602);
    // No progress token: the messages alone.
    c.call(json!(1), "logs", json!({"n": 16}), None);
    let got = c.until(&json!(1));
    let logs = log_params(&got);
    // Levels j % 8 for j in 1..=16 at warning (3) or above: j % 8 in 3..=7.
    let want: Vec<Value> = (1..=16u64)
        .filter(|j| j % 8 >= 3)
        .map(|j| json!({"level": LogLevel::ALL[(j % 8) as usize].as_str(), "logger": "logs", "data": format!("line {j}")}))
        .collect();
    assert_eq!(logs, want);
    assert_eq!(got.last().unwrap()["id"], 1, "every message before the response");
    assert!(got.iter().all(|v| !is_progress(v)), "no progress without a token");
    // With a token too: both, each message before the progress reported after it.
    c.call(json!(2), "logs", json!({"n": 8, "progress": 1}), Some(json!("p")));
    let got = c.until(&json!(2));
    assert_eq!(log_params(&got).len(), 5);
    assert!(got.iter().any(is_progress));
    let first_log = got.iter().position(|v| v["method"] == "notifications/message").unwrap();
    assert_eq!(got[first_log]["params"]["data"], "line 3");
    // A lower level later in the session: more messages.
    c.send(r#"{"jsonrpc":"2.0","id":"lv2","method":"logging/setLevel","params":{"level":"debug"}}"#);
    assert_eq!(c.recv()["id"], "lv2");
    c.call(json!(3), "logs", json!({"n": 8}), None);
    assert_eq!(log_params(&c.until(&json!(3))).len(), 8);
    let (rest, _) = c.finish();
    assert!(log_params(&rest).is_empty(), "nothing after the responses: {rest:?}");
}

#[test]
fn g1_a_modern_call_asks_for_its_own_messages_and_a_bad_level_is_refused() {
    let mut c = Client::start(fast_policy());
    let call = |id: &str, meta: Value| {
        json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{
            "name":"logs","arguments":{"n":8},
            "_meta": meta}})
        .to_string()
    };
    let claim = |extra: Value| {
        let mut m = json!({"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}});
        m.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        m
    };
    c.send(&call("m1", claim(json!({"io.modelcontextprotocol/logLevel": "error"}))));
    let got = c.until(&json!("m1"));
    let levels: Vec<Value> = log_params(&got).iter().map(|p| p["level"].clone()).collect();
    assert_eq!(levels, [json!("error"), json!("critical"), json!("alert"), json!("emergency")]);
    // The legacy session's level does not reach a modern call, and a modern
    // call without the member gets nothing.
    c.send(r#"{"jsonrpc":"2.0","id":"lv","method":"logging/setLevel","params":{"level":"debug"}}"#);
    assert_eq!(c.recv()["id"], "lv");
    c.send(&call("m2", claim(json!({}))));
    assert!(log_params(&c.until(&json!("m2"))).is_empty());
    c.send(&call("m3", claim(json!({"io.modelcontextprotocol/logLevel": "verbose"}))));
    let got = c.until(&json!("m3"));
    assert_eq!(got.len(), 1, "refused before the tool ran: {got:?}");
    assert_eq!(got[0]["error"]["code"], -32602);
    let _ = c.finish();
}

#[test]
fn g3_a_message_goes_out_while_the_tool_still_runs() {
    // Log-only (no progress token): the ticker has no heartbeat to keep
    // time for, and must be woken by the message itself.
    let mut c = Client::start(fast_policy());
    c.send(r#"{"jsonrpc":"2.0","id":"lv","method":"logging/setLevel","params":{"level":"info"}}"#);
    assert_eq!(c.recv()["id"], "lv");
    c.call(json!(1), "log_gate", json!({}), None);
    let first = c.recv();
    assert_eq!(first["method"], "notifications/message", "{first}");
    assert_eq!(first["params"]["data"], "waiting");
    assert!(c.knobs.running.load(Ordering::SeqCst), "the tool is still running");
    c.knobs.open.store(true, Ordering::SeqCst);
    assert_eq!(c.recv()["id"], 1);
    let _ = c.finish();
}
