//! The Streamable HTTP transport with workers (RULES N2–N7, N3.3, H4.2,
//! C6): calls at once, the health endpoint's counts, a full queue, fairness
//! between tokens, the drain, crashes, cancellation and the call's span.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use mcplite_engine::host::{Host, ToolSpec};
use mcplite_engine::progress::{Inflight, ProgressPolicy};
use mcplite_engine::server::STOPPING_TEXT;
use mcplite_engine::tasks::{Support, TaskOptions, Tasks};
use mcplite_engine::transport::http::{HttpOptions, HttpServer, Stopped};
use mcplite_engine::workers::{Pool, PoolOptions, SERVER_BUSY};
use mcplite_engine::{Server, ServerInfo};
use serde_json::{json, Value};

use crate::shared::{marks, mixed_options, options, temp_dir, wait_for, Here, NoHost};

/// A server over HTTP whose calls run in `n` fake workers.
struct Http {
    url: String,
    base: String,
    stop: Arc<AtomicBool>,
    serving: Option<JoinHandle<Stopped>>,
}

impl Http {
    fn start(n: usize, max_queue: usize) -> Http {
        Http::start_traced(n, max_queue, None)
    }

    fn start_traced(
        n: usize,
        max_queue: usize,
        recorder: Option<Box<dyn mcplite_engine::telemetry::SpanRecorder>>,
    ) -> Http {
        Http::start_with(options(n, &[]), max_queue, recorder, false)
    }

    fn start_with(
        o: PoolOptions,
        max_queue: usize,
        recorder: Option<Box<dyn mcplite_engine::telemetry::SpanRecorder>>,
        mixed: bool,
    ) -> Http {
        Http::start_tuned(o, max_queue, (recorder, None), mixed, |_| {})
    }

    fn start_tuned(
        mut o: PoolOptions,
        max_queue: usize,
        (recorder, tasks): (Option<Box<dyn mcplite_engine::telemetry::SpanRecorder>>, Option<Tasks>),
        mixed: bool,
        tune: impl FnOnce(&mut HttpOptions),
    ) -> Http {
        o.max_queue = max_queue;
        let specs = o.tools.iter().map(|n| ToolSpec::new(n.as_str(), "A test tool.")).collect();
        let pool = Arc::new(Pool::start(o).unwrap());
        let info = ServerInfo { name: "mcplite".into(), version: "1".into(), instructions: None };
        let mut server = Server::with_tools(info, specs);
        server.set_recorder(recorder);
        if let Some(t) = tasks {
            server = server.with_tasks(t);
        }
        let server = Arc::new(server);
        let inflight = Arc::new(Inflight::new(ProgressPolicy::with_interval(Duration::from_millis(200)), None));
        let mut opts = HttpOptions { port: 0, drain_timeout: Duration::from_secs(5), ..HttpOptions::default() };
        tune(&mut opts);
        let http = HttpServer::bind_with_pool(server, opts, inflight, Some(pool)).expect("bind");
        let base = format!("http://{}", http.local_addr());
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let serving = std::thread::spawn(move || {
            let mut host: Box<dyn Host> = if mixed { Box::new(Here) } else { Box::new(NoHost) };
            http.run(&mut *host, Duration::from_millis(10), &mut |_| s.load(Ordering::SeqCst))
        });
        Http { url: format!("{base}/mcp"), base, stop, serving: Some(serving) }
    }

    fn health(&self) -> Value {
        let mut r = agent().get(&format!("{}/health", self.base)).call().unwrap();
        serde_json::from_str(&r.body_mut().read_to_string().unwrap()).unwrap()
    }

    /// A modern `tools/call` (JSON answer): status, `Retry-After`, body.
    fn call(&self, id: i64, tool: &str, args: Value) -> (u16, Option<String>, Value) {
        self.call_as(None, id, tool, args)
    }

    /// [`Http::call`] with a bearer token.
    fn call_as(&self, token: Option<&str>, id: i64, tool: &str, args: Value) -> (u16, Option<String>, Value) {
        let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                          "io.modelcontextprotocol/clientCapabilities": {}});
        let body = json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
                          "params":{"name":tool,"arguments":args,"_meta":meta}});
        let mut r = agent()
            .post(&self.url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2026-07-28")
            .header("Mcp-Method", "tools/call")
            .header("Mcp-Name", tool);
        if let Some(t) = token {
            r = r.header("Authorization", format!("Bearer {t}"));
        }
        let mut r = r.send(body.to_string()).unwrap();
        let retry = r.headers().get("retry-after").map(|v| v.to_str().unwrap().to_string());
        let text = r.body_mut().read_to_string().unwrap();
        (r.status().as_u16(), retry, serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}")))
    }

    /// A modern request with `params`, as a client that accepts a stream
    /// sends it: status and body (JSON, or the `data` of the stream's
    /// events, one per line).
    fn post(&self, id: &str, method: &str, name: &str, params: Value) -> (u16, Vec<Value>) {
        let body = json!({"jsonrpc":"2.0","id":id,"method":method,"params":params});
        let mut r = agent()
            .post(&self.url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2026-07-28")
            .header("Mcp-Method", method)
            .header("Mcp-Name", name)
            .send(body.to_string())
            .unwrap();
        let sse = r.headers().get("content-type").is_some_and(|v| v.to_str().unwrap().starts_with("text/event-stream"));
        let text = r.body_mut().read_to_string().unwrap();
        let messages = if sse {
            text.lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(|d| serde_json::from_str(d.trim()).unwrap())
                .collect()
        } else {
            vec![serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))]
        };
        (r.status().as_u16(), messages)
    }

    fn stop(self) -> Stopped {
        self.signal_stop();
        self.stopped()
    }

    /// Tell the server to stop (as SIGTERM does), without waiting.
    fn signal_stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
    }

    /// Wait until the server has stopped: what it did with its calls.
    fn stopped(mut self) -> Stopped {
        self.serving.take().unwrap().join().unwrap()
    }
}

fn agent() -> ureq::Agent {
    ureq::Agent::new_with_config(ureq::Agent::config_builder().http_status_as_error(false).build())
}

fn n2_http_calls_run_at_once_and_health_reports_the_workers() {
    let h = Http::start(2, 4);
    assert_eq!(h.health()["workers"], json!({"total": 2, "busy": 0, "idle": 2, "queued": 0, "restarts": 0}));
    let dir = temp_dir("http-meet");
    let d = dir.to_str().unwrap().to_string();
    std::thread::scope(|s| {
        let a = s.spawn(|| h.call(1, "meet", json!({"dir": d, "n": 2})));
        let b = s.spawn(|| h.call(2, "meet", json!({"dir": d, "n": 2})));
        for (status, _, v) in [a.join().unwrap(), b.join().unwrap()] {
            assert_eq!(status, 200);
            assert_eq!(v["result"]["content"][0]["text"], "met", "{v}");
        }
    });
    // A slow call makes one worker busy.
    std::thread::scope(|s| {
        let slow = s.spawn(|| h.call(3, "sleep", json!({"ms": 400})));
        wait_for("a busy worker", || h.health()["workers"]["busy"] == 1);
        assert_eq!(h.health()["workers"]["idle"], 1);
        assert_eq!(slow.join().unwrap().2["result"]["content"][0]["text"], "slept");
    });
    h.stop();
}

fn n3_http_a_full_queue_is_503_with_retry_after() {
    let h = Http::start(1, 1);
    let dir = temp_dir("http-busy");
    let d = dir.to_str().unwrap().to_string();
    std::thread::scope(|s| {
        // Runs until a second file appears in `dir`.
        let first = s.spawn(|| h.call(1, "meet", json!({"dir": d, "n": 2})));
        wait_for("the first call runs", || h.health()["workers"]["busy"] == 1);
        let second = s.spawn(|| h.call(2, "echo", json!({"second": true})));
        wait_for("the second call waits", || h.health()["workers"]["queued"] == 1);
        let (status, retry, v) = h.call(3, "echo", json!({}));
        assert_eq!(status, 503, "{v}");
        assert_eq!(retry.as_deref(), Some("1"));
        assert_eq!(v["id"], 3);
        assert_eq!(v["error"]["code"], -32603);
        assert_eq!(v["error"]["message"], SERVER_BUSY, "RULES N3.1: in plain words");
        let (status, _, v) = h.call(4, "nonesuch", json!({}));
        assert_eq!((status, v["error"]["code"].clone()), (200, json!(-32602)), "an invalid call keeps its error");
        std::fs::write(dir.join("release"), "").unwrap();
        assert_eq!(first.join().unwrap().2["result"]["content"][0]["text"], "met");
        assert_eq!(second.join().unwrap().2["result"]["content"][0]["text"], r#"{"second":true}"#);
    });
    assert_eq!(h.call(5, "echo", json!({"x": 1})).0, 200, "room again");
    h.stop();
}

const ALICE: &str = "alice-0c4f9e2b7a1d8e3f5a6b9c0d";
const BOB: &str = "bob-7e1a3c5f9b2d4e6a8c0f1b3d";

/// A tokens file naming alice and bob (RULES H6.1), in `dir`.
fn tokens_file(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let f = dir.join("tokens");
    std::fs::write(&f, format!("alice {ALICE}\nbob {BOB}\n")).unwrap();
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
    f
}

fn n3_3_http_a_second_tokens_call_starts_before_the_first_tokens_backlog() {
    // RULES N3.3 over HTTP: the caller is the token's name.
    let dir = temp_dir("http-fair");
    let tokens = tokens_file(&dir);
    let h = Http::start_tuned(options(1, &[]), 8, (None, None), false, |o| o.tokens_file = Some(tokens));
    let gate = dir.join("gate");
    std::fs::create_dir_all(&gate).unwrap();
    let file = dir.join("order");
    let f = file.to_str().unwrap().to_string();
    let g = gate.to_str().unwrap().to_string();
    let text = |v: &Value| v["result"]["content"][0]["text"].as_str().unwrap_or_default().to_owned();
    std::thread::scope(|s| {
        let first = s.spawn(|| h.call_as(Some(ALICE), 1, "meet", json!({"dir": g, "n": 2})));
        wait_for("alice's first call runs", || h.health()["workers"]["busy"] == 1);
        let mut waiting = Vec::new();
        let calls = [(ALICE, "a1"), (ALICE, "a2"), (ALICE, "a3"), (BOB, "b1")];
        for (i, (who, tag)) in calls.into_iter().enumerate() {
            let (f, h) = (f.clone(), &h);
            let id = 10 + i as i64;
            waiting.push(s.spawn(move || h.call_as(Some(who), id, "mark", json!({"file": f, "tag": tag}))));
            // One at a time, so that the order they arrive in is known.
            wait_for("the call waits", || h.health()["workers"]["queued"] == i + 1);
        }
        std::fs::write(gate.join("release"), "").unwrap();
        assert_eq!(text(&first.join().unwrap().2), "met");
        let tags: Vec<String> = waiting.into_iter().map(|c| text(&c.join().unwrap().2)).collect();
        assert_eq!(tags, ["a1", "a2", "a3", "b1"]);
    });
    assert_eq!(marks(&file), ["a1", "b1", "a2", "a3"], "bob's call before alice's backlog; hers in order");
    h.stop();
}

fn h4_2_http_calls_outliving_the_drain_say_the_server_was_stopping_and_the_stop_counts_them() {
    // RULES H4.2, H7.3: a drain of 300 ms; one tool stops when
    // interrupted, one ignores it (compiled code) and its worker is
    // killed a second later; a third call waits and is not run.
    let tune = |o: &mut HttpOptions| o.drain_timeout = Duration::from_millis(300);
    let h = Http::start_tuned(options(2, &[]), 4, (None, None), false, tune);
    let text = |v: &Value| v["result"]["content"][0]["text"].as_str().unwrap_or_default().to_owned();
    let (a, b, c) = std::thread::scope(|s| {
        let a = s.spawn(|| h.call(1, "sleep", json!({"ms": 60_000})));
        let b = s.spawn(|| h.call(2, "sleep", json!({"ms": 60_000, "deaf": true})));
        wait_for("both run", || h.health()["workers"]["busy"] == 2);
        let c = s.spawn(|| h.call(3, "echo", json!({"waits": true})));
        wait_for("the third waits", || h.health()["workers"]["queued"] == 1);
        h.signal_stop();
        (a.join().unwrap(), b.join().unwrap(), c.join().unwrap())
    });
    let stopped = h.stopped();
    assert_eq!((a.0, text(&a.2)), (200, STOPPING_TEXT.to_string()), "{:?}", a.2);
    assert_eq!(b.0, 200);
    assert_eq!(b.2["result"]["isError"], true);
    let t = text(&b.2);
    assert!(t.contains("did not stop within 1 s of its interrupt as the server was stopping (it was killed)"), "{t}");
    assert_eq!(c.0, 503, "not run: {:?}", c.2);
    assert_eq!(stopped, Stopped { drained: 2, interrupted: 2, dropped: 1 });
    assert_eq!(stopped.summary(), "2 calls drained (2 interrupted), 1 queued call not run");
}

fn n5_http_a_crash_is_the_calls_tool_error_and_others_go_on() {
    let h = Http::start(2, 4);
    std::thread::scope(|s| {
        let long = s.spawn(|| h.call(1, "sleep", json!({"ms": 300})));
        let (status, _, v) = h.call(2, "segv", json!({}));
        assert_eq!(status, 200);
        assert_eq!(v["result"]["isError"], true, "{v}");
        let t = v["result"]["content"][0]["text"].as_str().unwrap();
        assert!(t.contains("was killed by signal 11 (SIGSEGV"), "{t}");
        assert_eq!(long.join().unwrap().2["result"]["content"][0]["text"], "slept", "the other call goes on");
    });
    assert_eq!(h.call(3, "echo", json!({"a": 1})).2["result"]["content"][0]["text"], r#"{"a":1}"#);
    wait_for("the replacement", || h.health()["workers"]["restarts"] == 1);
    h.stop();
}

fn n7_6_http_the_servers_own_tools_run_beside_the_workers() {
    let h = Http::start_with(mixed_options(1), 0, None, true);
    let me = std::process::id().to_string();
    let text = |v: &Value| v["result"]["content"][0]["text"].as_str().unwrap_or_default().to_owned();
    assert_eq!(text(&h.call(1, "echo", json!({"n": 1})).2), r#"{"n":1}"#);
    std::thread::scope(|s| {
        let slow = s.spawn(|| h.call(2, "sleep", json!({"ms": 400})));
        wait_for("a busy worker", || h.health()["workers"]["busy"] == 1);
        // No room in the pool's queue (max_queue 0), and still the
        // server's own tool runs.
        let (status, _, v) = h.call(3, "here", json!({}));
        assert_eq!((status, text(&v)), (200, format!("here {me}")), "{v}");
        assert_eq!(h.call(4, "pid", json!({})).0, 503, "a worker's tool waits for the pool");
        assert_eq!(text(&slow.join().unwrap().2), "slept");
    });
    let (_, _, v) = h.call(5, "pid", json!({}));
    assert_ne!(text(&v), me, "pid runs in a worker");
    h.stop();
}

fn c6_http_a_legacy_cancellation_interrupts_the_worker() {
    let h = Http::start(1, 4);
    let post = |sid: Option<&str>, body: Value| {
        let mut r = agent()
            .post(&h.url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2025-11-25");
        if let Some(s) = sid {
            r = r.header("Mcp-Session-Id", s);
        }
        r.send(body.to_string()).unwrap()
    };
    let init = post(
        None,
        json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",
               "capabilities":{},"clientInfo":{"name":"t","version":"1"}}}),
    );
    let sid = init.headers().get("mcp-session-id").unwrap().to_str().unwrap().to_string();
    let dir = temp_dir("http-cancel");
    let file = dir.join("f");
    std::thread::scope(|s| {
        let call = s.spawn(|| {
            let mut r = post(
                Some(&sid),
                json!({"jsonrpc":"2.0","id":7,"method":"tools/call",
                       "params":{"name":"sleep","arguments":{"ms": 60_000, "file": file.to_str().unwrap()}}}),
            );
            (r.status().as_u16(), r.body_mut().read_to_string().unwrap())
        });
        wait_for("the call runs", || h.health()["workers"]["busy"] == 1);
        let r = post(Some(&sid), json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}));
        assert_eq!(r.status().as_u16(), 202);
        let (status, body) = call.join().unwrap();
        assert_eq!((status, body.as_str()), (202, ""), "a cancelled call gets no response");
    });
    wait_for("the tool was interrupted", || std::fs::read_to_string(&file).is_ok_and(|s| s == "interrupted"));
    h.stop();
}

fn n5_the_span_records_the_worker() {
    use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider};
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder().with_simple_exporter(exporter.clone()).build();
    let recorder = mcplite_engine::telemetry::OtelRecorder::from_provider(provider);
    let h = Http::start_traced(1, 4, Some(Box::new(recorder)));
    let (_, _, v) = h.call(1, "pid", json!({}));
    let pid: i64 = v["result"]["content"][0]["text"].as_str().unwrap().parse().unwrap();
    // The HTTP span ends after its response was sent.
    wait_for("the spans", || exporter.get_finished_spans().unwrap().len() >= 2);
    // (Read before the stop: shutting the provider down empties the exporter.)
    let spans = exporter.get_finished_spans().unwrap();
    h.stop();
    let attr = |s: &opentelemetry_sdk::trace::SpanData, k: &str| {
        s.attributes.iter().find(|a| a.key.as_str() == k).map(|a| a.value.to_string())
    };
    let names: Vec<_> = spans.iter().map(|s| (s.name.to_string(), s.attributes.clone())).collect();
    let call = spans
        .iter()
        .find(|s| attr(s, "mcp.method.name").as_deref() == Some("tools/call"))
        .unwrap_or_else(|| panic!("{names:?}"));
    assert_eq!(attr(call, "mcplite.worker.id").as_deref(), Some("1"));
    assert_eq!(attr(call, "mcplite.worker.pid"), Some(pid.to_string()));
}

/// RULES V2.5 over HTTP: a quick call of an optional tool is answered as
/// usual; a long one is answered with its task's handle when its time is
/// up (as JSON, or as the last message of its stream after heartbeats),
/// and its result is kept in the task.
fn v2_5_http_a_long_call_becomes_a_task() {
    let opts = TaskOptions {
        after: Some(Duration::from_millis(400)),
        poll_interval: Duration::from_millis(50),
        ..TaskOptions::default()
    };
    let tasks = Tasks::new(opts, vec![Support::Optional; crate::worker::TOOLS.len()]).unwrap();
    let h = Http::start_tuned(options(2, &[]), 4, (None, Some(tasks)), false, |_| {});
    let meta = json!({"io.modelcontextprotocol/protocolVersion":"2026-07-28",
        "io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}});
    let (status, quick) = h.post("1", "tools/call", "echo", json!({"name":"echo","arguments":{"y":2},"_meta":meta}));
    assert_eq!(status, 200);
    assert_eq!(quick[0]["result"]["content"][0]["text"], r#"{"y":2}"#, "{quick:?}");
    let get = |id: &str| {
        let params = json!({"taskId":id,"_meta":meta});
        for _ in 0..500 {
            let (_, got) = h.post("g", "tasks/get", id, params.clone());
            if got[0]["result"]["status"] != "working" {
                return got[0]["result"].clone();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("the task never ended");
    };
    // JSON: the handle is the answer.
    let (_, json_answer) =
        h.post("2", "tools/call", "sleep", json!({"name":"sleep","arguments":{"ms":1200},"_meta":meta}));
    let handle = &json_answer[0];
    assert_eq!(handle["result"]["resultType"], "task", "{handle}");
    let done = get(handle["result"]["taskId"].as_str().unwrap());
    assert_eq!(
        (done["status"].as_str(), done["result"]["content"][0]["text"].as_str()),
        (Some("completed"), Some("slept"))
    );
    // A stream (the client listens to its progress): heartbeats, then the
    // handle ends it.
    let mut m = meta.clone();
    m["progressToken"] = json!("p");
    let (_, streamed) = h.post("3", "tools/call", "sleep", json!({"name":"sleep","arguments":{"ms":1200},"_meta":m}));
    let (last, before) = streamed.split_last().unwrap();
    assert!(!before.is_empty() && before.iter().all(|v| v["method"] == "notifications/progress"), "{streamed:?}");
    assert_eq!(last["id"], "3");
    assert_eq!(last["result"]["resultType"], "task", "{last}");
    let done = get(last["result"]["taskId"].as_str().unwrap());
    assert_eq!(done["status"], "completed", "{done}");
    h.stop();
}

fn n3_1_http_a_sequential_client_always_finds_the_worker_free() {
    // One worker, no queue: each call is sent when the answer to the one
    // before it has arrived, so the worker is free every time. The worker
    // was marked free only after its answer left, and a quick client was
    // refused 503 now and then.
    let h = Http::start(1, 0);
    for i in 0..200 {
        let (status, _, v) = h.call(i, "echo", json!({"i": i}));
        assert_eq!(status, 200, "call {i}: {v}");
    }
    h.stop();
}

tests![
    v2_5_http_a_long_call_becomes_a_task,
    n3_1_http_a_sequential_client_always_finds_the_worker_free,
    n7_6_http_the_servers_own_tools_run_beside_the_workers,
    n2_http_calls_run_at_once_and_health_reports_the_workers,
    n3_http_a_full_queue_is_503_with_retry_after,
    n3_3_http_a_second_tokens_call_starts_before_the_first_tokens_backlog,
    h4_2_http_calls_outliving_the_drain_say_the_server_was_stopping_and_the_stop_counts_them,
    n5_http_a_crash_is_the_calls_tool_error_and_others_go_on,
    c6_http_a_legacy_cancellation_interrupts_the_worker,
    n5_the_span_records_the_worker,
];
