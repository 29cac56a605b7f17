//! The stdio transport with workers (RULES N2–N5, N7.6): a server on another
//! thread serves over real pipes while its calls run in fake workers.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::sync::mpsc::{channel, Receiver};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use mcplite_engine::host::{Host, ToolSpec};
use mcplite_engine::progress::{Inflight, ProgressPolicy};
use mcplite_engine::tasks::{Support, TaskOptions, Tasks};
use mcplite_engine::transport::{serve_with_workers, Reader, ServeEnd, ServeOptions};
use mcplite_engine::workers::{Pool, SERVER_BUSY};
use mcplite_engine::{Server, ServerInfo};
use serde_json::{json, Value};

use crate::shared::{mixed_options, options, temp_dir, Here, NoHost, PATIENCE};

/// A pipe whose ends the workers do not inherit (a test's client would
/// otherwise keep its own server's input open through them).
fn pipe() -> (File, File) {
    let (r, w) = crate::pipes::pipe();
    for f in [&r, &w] {
        // SAFETY: fcntl on descriptors we own.
        unsafe {
            libc::fcntl(std::os::fd::AsRawFd::as_raw_fd(f), libc::F_SETFD, libc::FD_CLOEXEC);
        }
    }
    (r, w)
}

/// A server with a pool on another thread, and the client's ends of its pipes.
struct Client {
    input: Option<File>,
    lines: Receiver<String>,
    serving: JoinHandle<ServeEnd>,
}

impl Client {
    fn start(n: usize, max_queue: usize) -> Client {
        let c = Client::bare(n, max_queue);
        c.init()
    }

    fn init(mut self) -> Client {
        self.send(&json!({"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}));
        assert_eq!(self.recv()["id"], "init");
        self
    }

    /// `initialize` in 2025-11-25, the version with tasks in core.
    fn init_tasks(&mut self) {
        self.send(&json!({"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}));
        let init = self.recv();
        assert_eq!(init["result"]["capabilities"]["tasks"]["requests"]["tools"]["call"], json!({}), "{init}");
    }

    fn bare(n: usize, max_queue: usize) -> Client {
        Client::bare_with(n, max_queue, false)
    }

    /// `mixed`: the server also has the tool `here`, which it runs itself
    /// ([`mixed_options`]).
    fn bare_with(n: usize, max_queue: usize, mixed: bool) -> Client {
        Client::bare_tasks(n, max_queue, mixed, None)
    }

    /// A server whose tools run as tasks as `tasks` says (RULES section 19).
    fn with_tasks(n: usize, max_queue: usize, tasks: Tasks) -> Client {
        Client::bare_tasks(n, max_queue, false, Some(tasks))
    }

    fn bare_tasks(n: usize, max_queue: usize, mixed: bool, tasks: Option<Tasks>) -> Client {
        let (in_r, in_w) = pipe();
        let (out_r, mut out_w) = pipe();
        let serving = std::thread::spawn(move || {
            let mut o = if mixed { mixed_options(n) } else { options(n, &[]) };
            o.max_queue = max_queue;
            let specs = o.tools.iter().map(|n| ToolSpec::new(n.as_str(), "A test tool.")).collect();
            let pool = Pool::start(o).unwrap();
            let info = ServerInfo { name: "mcplite".into(), version: "1".into(), instructions: None };
            let mut server = Server::with_tools(info, specs);
            if let Some(t) = tasks {
                server = server.with_tasks(t);
            }
            let inflight = Arc::new(Inflight::new(ProgressPolicy::with_interval(Duration::from_millis(200)), None));
            let mut host: Box<dyn Host> = if mixed { Box::new(Here) } else { Box::new(NoHost) };
            let r = Reader::spawn(in_r);
            serve_with_workers(&server, &mut *host, &pool, r, &mut out_w, &ServeOptions::default(), &inflight)
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
        Client { input: Some(in_w), lines, serving }
    }

    fn send(&mut self, v: &Value) {
        let w = self.input.as_mut().unwrap();
        w.write_all(v.to_string().as_bytes()).unwrap();
        w.write_all(b"\n").unwrap();
    }

    fn call(&mut self, id: Value, tool: &str, args: Value, token: Option<Value>) {
        let mut params = json!({"name": tool, "arguments": args});
        if let Some(t) = token {
            params["_meta"] = json!({ "progressToken": t });
        }
        self.send(&json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":params}));
    }

    fn recv(&self) -> Value {
        let l = self.lines.recv_timeout(PATIENCE).expect("no line from the server");
        serde_json::from_str(&l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}"))
    }

    fn close(mut self) -> (Vec<Value>, ServeEnd) {
        drop(self.input.take());
        let end = self.serving.join().unwrap();
        (self.lines.iter().map(|l| serde_json::from_str(&l).unwrap()).collect(), end)
    }
}

fn result_text(v: &Value) -> &str {
    v["result"]["content"][0]["text"].as_str().unwrap_or_else(|| panic!("no text: {v}"))
}

fn n2_stdio_answers_calls_as_they_finish_and_other_requests_at_once() {
    let mut c = Client::start(2, 64);
    c.call(json!(1), "sleep", json!({"ms": 60_000}), None);
    c.call(json!(2), "echo", json!({"x": 1}), None);
    let two = c.recv();
    assert_eq!(two["id"], 2, "the quick call overtakes the slow one");
    assert_eq!(result_text(&two), r#"{"x":1}"#);
    c.send(&json!({"jsonrpc":"2.0","id":3,"method":"tools/list"}));
    assert_eq!(c.recv()["id"], 3, "listing does not wait for the running call");
    c.send(&json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}));
    c.call(json!(4), "echo", json!({}), None);
    assert_eq!(c.recv()["id"], 4, "the cancelled call is never answered");
    let (rest, end) = c.close();
    assert!(rest.is_empty(), "{rest:?}");
    assert_eq!(end, ServeEnd::Eof);
}

fn n2_every_call_received_before_eof_is_answered() {
    let mut c = Client::start(2, 64);
    let dir = temp_dir("eof");
    for id in 0..6 {
        c.call(json!(id), "sleep", json!({"ms": 50, "file": dir.join(id.to_string()).to_str().unwrap()}), None);
    }
    let (lines, end) = c.close();
    let mut ids: Vec<i64> = lines.iter().map(|l| l["id"].as_i64().unwrap()).collect();
    ids.sort();
    assert_eq!(ids, [0, 1, 2, 3, 4, 5]);
    assert!(lines.iter().all(|l| result_text(l) == "slept"));
    assert_eq!(end, ServeEnd::Eof);
}

fn n3_stdio_refuses_a_call_the_queue_has_no_room_for() {
    let mut c = Client::start(1, 1);
    c.call(json!(1), "sleep", json!({"ms": 60_000}), None);
    c.call(json!(2), "sleep", json!({"ms": 60_000}), None);
    c.call(json!(3), "echo", json!({}), None);
    let busy = c.recv();
    assert_eq!(busy["id"], 3);
    assert_eq!(busy["error"]["code"], -32603);
    assert_eq!(busy["error"]["message"], SERVER_BUSY, "RULES N3.1: in plain words");
    c.call(json!(4), "nonesuch", json!({}), None);
    assert_eq!(c.recv()["error"]["code"], -32602, "an invalid call keeps its own error");
    for id in [1, 2] {
        c.send(&json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":id}}));
    }
    c.call(json!(5), "echo", json!({}), None);
    assert_eq!(c.recv()["id"], 5, "room again once the others were cancelled");
    c.close();
}

fn n4_stdio_progress_from_a_worker() {
    let mut c = Client::start(1, 4);
    c.call(json!(1), "progress", json!({"n": 4, "ms": 120}), Some(json!("tok")));
    let mut notes = Vec::new();
    let answer = loop {
        let v = c.recv();
        if v["method"] == "notifications/progress" {
            notes.push(v);
        } else {
            break v;
        }
    };
    assert_eq!(result_text(&answer), "reported");
    assert!(!notes.is_empty());
    assert!(notes.iter().all(|n| n["params"]["progressToken"] == "tok"));
    assert!(notes.iter().any(|n| n["params"]["message"].as_str().unwrap_or("").starts_with("step ")), "{notes:?}");
    c.close();
}

fn n3_a_waiting_call_gets_heartbeats() {
    let mut c = Client::start(1, 4);
    c.call(json!(1), "sleep", json!({"ms": 60_000}), None);
    c.call(json!(2), "echo", json!({"w": 1}), Some(json!("q")));
    let beat = c.recv();
    assert_eq!(beat["method"], "notifications/progress", "{beat}");
    assert_eq!(beat["params"]["progressToken"], "q");
    let said = beat["params"]["message"].as_str().unwrap_or_default().to_owned();
    assert!(said.starts_with("waiting for a free worker for ") && said.ends_with(" s, not running yet"), "{said}");
    c.send(&json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}));
    let answer = loop {
        let v = c.recv();
        if v["method"] != "notifications/progress" {
            break v;
        }
    };
    assert_eq!(answer["id"], 2);
    assert_eq!(result_text(&answer), r#"{"w":1}"#);
    c.close();
}

fn n2_a_modern_call_as_the_first_message() {
    let mut c = Client::bare(2, 4);
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}});
    c.send(&json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"m":1},"_meta":meta}}));
    let v = c.recv();
    assert_eq!(result_text(&v), r#"{"m":1}"#, "{v}");
    c.close();
}

fn n7_6_stdio_the_servers_own_tools_run_beside_the_workers() {
    let mut c = Client::bare_with(1, 4, true).init();
    let me = std::process::id().to_string();
    c.call(json!(1), "echo", json!({"n": 1}), None);
    assert_eq!(result_text(&c.recv()), r#"{"n":1}"#, "a worker's tool keeps its arguments and its number");
    c.call(json!(2), "pid", json!({}), None);
    let worker = c.recv();
    assert_ne!(result_text(&worker), me, "pid runs in a worker");
    // The worker is busy: the server's own tool runs at once all the same.
    c.call(json!(3), "sleep", json!({"ms": 60_000}), None);
    c.call(json!(4), "here", json!({}), None);
    let here = c.recv();
    assert_eq!(here["id"], 4, "{here}");
    assert_eq!(result_text(&here), format!("here {me}"), "here runs in the server");
    c.send(&json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}));
    c.call(json!(5), "echo", json!({"n": 5}), None);
    assert_eq!(result_text(&c.recv()), r#"{"n":5}"#);
    let (rest, end) = c.close();
    assert!(rest.is_empty(), "{rest:?}");
    assert_eq!(end, ServeEnd::Eof);
}

fn n5_stdio_a_crash_is_the_calls_tool_error() {
    let mut c = Client::start(2, 4);
    c.call(json!(1), "slow_exit", json!({"ms": 1}), None);
    let v = c.recv();
    assert_eq!(v["result"]["isError"], true);
    assert!(result_text(&v).contains("exited with status 0"), "{v}");
    c.call(json!(2), "echo", json!({"ok": true}), None);
    assert_eq!(result_text(&c.recv()), r#"{"ok":true}"#);
    c.close();
}

/// Every tool may run as a task; `sleep` must.
fn all_tasks(max_tasks: usize) -> Tasks {
    let mut support = vec![Support::Optional; crate::worker::TOOLS.len()];
    support[2] = Support::Required;
    let opts = TaskOptions { max_tasks, poll_interval: Duration::from_millis(50), ..TaskOptions::default() };
    Tasks::new(opts, support).unwrap()
}

/// Poll `tasks/get` until the task ends; its last state.
fn poll_task(c: &mut Client, task: &str) -> Value {
    for i in 0..2000 {
        c.send(&json!({"jsonrpc":"2.0","id":format!("g{i}"),"method":"tasks/get","params":{"taskId":task}}));
        let got = c.recv();
        let status = got["result"]["status"].as_str().unwrap_or_else(|| panic!("{got}")).to_owned();
        if status != "working" {
            return got["result"].clone();
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("task {task} never ended");
}

fn v2_stdio_a_legacy_task_is_answered_at_once_and_fetched_later() {
    let mut c = Client::with_tasks(1, 4, all_tasks(100));
    c.init_tasks();
    // The one worker is busy: the task's handle comes at once all the same.
    c.send(&json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":400},"task":{}}}));
    assert_eq!(c.recv()["id"], 1);
    c.send(&json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"progress","arguments":{"n":3,"ms":30},"task":{"ttl":60000}}}));
    let created = c.recv();
    assert_eq!(created["id"], 2, "{created}");
    let task = created["result"]["task"].clone();
    assert_eq!(task["status"], "working");
    assert_eq!(task["ttl"], 60000);
    let id = task["taskId"].as_str().unwrap().to_owned();
    assert_eq!(id.len(), 32);
    // tasks/result waits for the end, while other requests are answered.
    c.send(&json!({"jsonrpc":"2.0","id":3,"method":"tasks/result","params":{"taskId":id}}));
    c.send(&json!({"jsonrpc":"2.0","id":4,"method":"ping"}));
    assert_eq!(c.recv()["id"], 4, "ping overtakes the waiting tasks/result");
    let result = &c.recv();
    assert_eq!(result["id"], 3, "{result}");
    assert_eq!(result_text(result), "reported");
    assert_eq!(result["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"], id.as_str());
    let done = poll_task(&mut c, &id);
    assert_eq!(done["status"], "completed");
    assert_eq!(done["statusMessage"], "step 3", "RULES V2.2: progress messages are the status message");
    c.send(&json!({"jsonrpc":"2.0","id":5,"method":"tasks/list"}));
    let list = c.recv();
    assert_eq!(list["result"]["tasks"][0]["taskId"], id.as_str(), "{list}");
    c.send(&json!({"jsonrpc":"2.0","id":6,"method":"tasks/cancel","params":{"taskId":id}}));
    assert_eq!(c.recv()["error"]["code"], -32602, "a finished task cannot be cancelled");
    c.close();
}

fn v2_stdio_required_forbidden_and_cancelled_tasks() {
    let mut c = Client::with_tasks(1, 4, all_tasks(100));
    c.init_tasks();
    c.call(json!(1), "sleep", json!({"ms": 10}), None);
    let refused = c.recv();
    assert_eq!(refused["error"]["code"], -32601, "RULES V1.2: a required task not asked for: {refused}");
    c.send(&json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":60000},"task":{}}}));
    let id = c.recv()["result"]["task"]["taskId"].as_str().unwrap().to_owned();
    // RULES V3.4: a task-augmented request is cancelled with tasks/cancel,
    // not notifications/cancelled.
    c.send(&json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}));
    c.send(&json!({"jsonrpc":"2.0","id":"g","method":"tasks/get","params":{"taskId":id}}));
    assert_eq!(c.recv()["result"]["status"], "working");
    c.send(&json!({"jsonrpc":"2.0","id":3,"method":"tasks/cancel","params":{"taskId":id}}));
    let cancelled = c.recv();
    assert_eq!(cancelled["result"]["status"], "cancelled", "{cancelled}");
    // The worker is free again: the cancellation interrupted the call.
    c.send(
        &json!({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"x":1},"task":{}}}),
    );
    let echo = c.recv()["result"]["task"]["taskId"].as_str().unwrap().to_owned();
    assert_eq!(poll_task(&mut c, &echo)["status"], "completed");
    assert_eq!(poll_task(&mut c, &id)["status"], "cancelled");
    c.send(&json!({"jsonrpc":"2.0","id":5,"method":"tasks/get","params":{"taskId":"0".repeat(32)}}));
    assert_eq!(c.recv()["error"]["code"], -32602, "an unknown task is not found");
    c.close();
}

fn v2_stdio_a_modern_task_inlines_its_result() {
    let mut c = Client::with_tasks(1, 4, all_tasks(100));
    let meta = json!({"io.modelcontextprotocol/protocolVersion":"2026-07-28",
        "io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}});
    c.send(&json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"y":2},"_meta":meta}}));
    let created = c.recv();
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    assert_eq!(created["result"]["pollIntervalMs"], 50);
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    let mut done = Value::Null;
    for i in 0..500 {
        c.send(&json!({"jsonrpc":"2.0","id":format!("g{i}"),"method":"tasks/get","params":{"taskId":id,"_meta":meta}}));
        done = c.recv();
        if done["result"]["status"] != "working" {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(done["result"]["resultType"], "complete");
    assert_eq!(done["result"]["status"], "completed", "{done}");
    assert_eq!(done["result"]["result"]["content"][0]["text"], r#"{"y":2}"#);
    // Without the extension: -32021, naming it.
    let bare =
        json!({"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}});
    c.send(&json!({"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":id,"_meta":bare}}));
    let refused = c.recv();
    assert_eq!(refused["error"]["code"], -32021);
    assert!(refused["error"]["data"]["requiredCapabilities"]["extensions"]["io.modelcontextprotocol/tasks"].is_object());
    c.send(
        &json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"sleep","arguments":{},"_meta":bare}}),
    );
    assert_eq!(c.recv()["error"]["code"], -32021, "a required task from a client that cannot poll");
    c.close();
}

fn v3_7_stdio_a_listener_hears_its_tasks_status() {
    let mut c = Client::with_tasks(1, 4, all_tasks(100));
    let meta = json!({"io.modelcontextprotocol/protocolVersion":"2026-07-28",
        "io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}});
    c.send(&json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":300},"_meta":meta}}));
    let id = c.recv()["result"]["taskId"].as_str().unwrap().to_owned();
    let other = "0".repeat(32);
    c.send(&json!({"jsonrpc":"2.0","id":"L","method":"subscriptions/listen",
        "params":{"notifications":{"taskIds":[id, other]},"_meta":meta}}));
    let ack = c.recv();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged", "{ack}");
    assert_eq!(ack["params"]["notifications"]["taskIds"], json!([id]), "only the tasks it can see");
    let heard = c.recv();
    assert_eq!(heard["method"], "notifications/tasks", "{heard}");
    assert_eq!(heard["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "L");
    assert_eq!(heard["params"]["taskId"], id.as_str());
    assert_eq!(heard["params"]["status"], "completed");
    assert_eq!(heard["params"]["result"]["content"][0]["text"], "slept");
    // Without the extension: -32021.
    let bare =
        json!({"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}});
    c.send(&json!({"jsonrpc":"2.0","id":"M","method":"subscriptions/listen",
        "params":{"notifications":{"taskIds":[id]},"_meta":bare}}));
    assert_eq!(c.recv()["error"]["code"], -32021);
    c.close();
}

/// RULES V2.4: the end of input fails the tasks still running (their
/// file says so) and stops their calls, instead of serving until they end.
fn v2_4_stdio_the_end_of_input_fails_running_tasks() {
    let dir = temp_dir("tasks-eof");
    let mut support = vec![Support::Optional; crate::worker::TOOLS.len()];
    support[2] = Support::Required;
    let opts = TaskOptions { dir: Some(dir.clone()), ..TaskOptions::default() };
    let mut c = Client::with_tasks(1, 4, Tasks::new(opts, support).unwrap());
    c.init_tasks();
    let marker = dir.join("sleep-end");
    let started = dir.join("sleep-started");
    c.send(&json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep",
        "arguments":{"ms":600_000,"file":marker.to_str().unwrap(),"started":started.to_str().unwrap()},
        "task":{}}}));
    let id = c.recv()["result"]["task"]["taskId"].as_str().unwrap().to_owned();
    // The call runs (the worker took it) before the input ends.
    crate::shared::wait_for("a worker to take the task's call", || started.exists());
    c.send(&json!({"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":id}}));
    assert_eq!(c.recv()["result"]["status"], "working");
    let (rest, end) = c.close();
    assert!(rest.is_empty(), "{rest:?}");
    assert_eq!(end, ServeEnd::Eof);
    let kept: Value = serde_json::from_slice(&std::fs::read(dir.join(format!("{id}.json"))).unwrap()).unwrap();
    assert_eq!(kept["status"], "failed", "{kept}");
    assert_eq!(kept["message"], mcplite_engine::tasks::STOPPED_TEXT);
    crate::shared::wait_for("the task's call to be interrupted", || {
        std::fs::read_to_string(&marker).is_ok_and(|s| s.contains("interrupted"))
    });
}

/// RULES V2.1, V4.2: tasks' calls wait in a lane of their own, so a call
/// sent after many tasks is taken after at most one of them.
fn v2_1_stdio_calls_take_turns_with_queued_tasks() {
    let mut c = Client::with_tasks(1, 1, all_tasks(100));
    c.init_tasks();
    let mut ids = Vec::new();
    for n in 0..5 {
        c.send(&json!({"jsonrpc":"2.0","id":format!("t{n}"),"method":"tools/call","params":{"name":"sleep",
            "arguments":{"ms":400},"task":{}}}));
        ids.push(c.recv()["result"]["task"]["taskId"].as_str().unwrap().to_owned());
    }
    // max_queue is 1: the tasks took no place in it.
    c.send(&json!({"jsonrpc":"2.0","id":"plain","method":"tools/call","params":{"name":"pid","arguments":{}}}));
    let answer = c.recv();
    assert_eq!(answer["id"], "plain", "{answer}");
    assert!(answer["result"]["content"][0]["text"].is_string(), "{answer}");
    let mut working = 0;
    for (i, id) in ids.iter().enumerate() {
        c.send(&json!({"jsonrpc":"2.0","id":format!("g{i}"),"method":"tasks/get","params":{"taskId":id}}));
        if c.recv()["result"]["status"] == "working" {
            working += 1;
        }
    }
    assert!(working >= 3, "the call waited behind {} of 5 tasks", 5 - working);
    c.close();
}

/// RULES V2.5: with `after`, a 2026-07-28 call of an optional tool is
/// answered as usual when it is quick, and with a task's handle when it is
/// still running at that time; its heartbeats stop with the handle, its
/// answer is kept in the task, and `tasks/cancel` (not a cancellation of
/// the answered request) interrupts it.
fn v2_5_stdio_a_long_call_becomes_a_task_a_quick_one_does_not() {
    let support = vec![Support::Optional; crate::worker::TOOLS.len()];
    let opts = TaskOptions {
        after: Some(Duration::from_millis(400)),
        poll_interval: Duration::from_millis(50),
        ..TaskOptions::default()
    };
    let mut c = Client::with_tasks(2, 4, Tasks::new(opts, support).unwrap());
    let meta = json!({"io.modelcontextprotocol/protocolVersion":"2026-07-28",
        "io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}});
    c.send(&json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"y":2},"_meta":meta}}));
    let quick = c.recv();
    assert_eq!(quick["id"], 1);
    assert_ne!(quick["result"]["resultType"], "task", "{quick}");
    assert_eq!(quick["result"]["content"][0]["text"], r#"{"y":2}"#, "{quick}");

    // A long call, whose client listens to its progress: heartbeats, then
    // the handle, then nothing more about its token.
    let mut m = meta.clone();
    m["progressToken"] = json!("long");
    c.send(&json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":1500},"_meta":m}}));
    let mut beats = 0;
    let handle = loop {
        let v = c.recv();
        if v["method"] == "notifications/progress" {
            beats += 1;
            continue;
        }
        break v;
    };
    assert!(beats >= 1, "heartbeats before the handle");
    assert_eq!(handle["id"], 2, "{handle}");
    assert_eq!(handle["result"]["resultType"], "task", "{handle}");
    assert_eq!(handle["result"]["status"], "working", "{handle}");
    let id = handle["result"]["taskId"].as_str().unwrap().to_owned();
    let done = loop {
        c.send(&json!({"jsonrpc":"2.0","id":"g","method":"tasks/get","params":{"taskId":id,"_meta":meta}}));
        let v = c.recv();
        assert_ne!(v["method"], "notifications/progress", "progress after the handle: {v}");
        if v["result"]["status"] != "working" {
            break v;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(done["result"]["status"], "completed", "{done}");
    assert_eq!(done["result"]["result"]["content"][0]["text"], "slept", "{done}");

    // A promoted call is the task's: cancelling its answered request does
    // nothing, tasks/cancel interrupts it.
    let dir = temp_dir("promoted-cancel");
    let marker = dir.join("end");
    c.send(&json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"sleep",
        "arguments":{"ms":600_000,"file":marker.to_str().unwrap()},"_meta":meta}}));
    let handle = c.recv();
    assert_eq!(handle["result"]["resultType"], "task", "{handle}");
    let id = handle["result"]["taskId"].as_str().unwrap().to_owned();
    c.send(&json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}));
    c.send(&json!({"jsonrpc":"2.0","id":"g2","method":"tasks/get","params":{"taskId":id,"_meta":meta}}));
    assert_eq!(c.recv()["result"]["status"], "working");
    assert!(!marker.exists(), "the answered request's cancellation stopped the task");
    c.send(&json!({"jsonrpc":"2.0","id":4,"method":"tasks/cancel","params":{"taskId":id,"_meta":meta}}));
    let cancelled = c.recv();
    assert_eq!(cancelled["result"]["resultType"], "complete", "{cancelled}");
    crate::shared::wait_for("the promoted call to be interrupted", || {
        std::fs::read_to_string(&marker).is_ok_and(|s| s.contains("interrupted"))
    });
    c.send(&json!({"jsonrpc":"2.0","id":"g3","method":"tasks/get","params":{"taskId":id,"_meta":meta}}));
    assert_eq!(c.recv()["result"]["status"], "cancelled");
    // 2025-11-25 calls are tasks only when the client asks.
    c.send(&json!({"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}));
    assert_eq!(c.recv()["id"], "init");
    c.send(&json!({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":700}}}));
    let plain = c.recv();
    assert_eq!(plain["result"]["content"][0]["text"], "slept", "{plain}");
    c.close();
}

/// RULES V2.5, C4.3: a call that may become a task, cancelled while it
/// waits for the worker, is never promoted (nor answered).
fn v2_5_stdio_a_call_cancelled_while_queued_is_not_promoted() {
    let support = vec![Support::Optional; crate::worker::TOOLS.len()];
    let opts = TaskOptions { after: Some(Duration::from_millis(700)), ..TaskOptions::default() };
    let mut c = Client::with_tasks(1, 4, Tasks::new(opts, support).unwrap());
    let plain =
        json!({"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}});
    let ext = json!({"io.modelcontextprotocol/protocolVersion":"2026-07-28",
        "io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}});
    // The one worker is busy for longer than the promotion's time.
    c.send(&json!({"jsonrpc":"2.0","id":"busy","method":"tools/call","params":{"name":"sleep","arguments":{"ms":1500},"_meta":plain}}));
    let mut m = ext.clone();
    m["progressToken"] = json!("q");
    c.send(
        &json!({"jsonrpc":"2.0","id":"queued","method":"tools/call","params":{"name":"echo","arguments":{},"_meta":m}}),
    );
    // Cancelled once it waits in the queue (its heartbeats say so), before
    // its time to become a task.
    let beat = c.recv();
    assert_eq!(beat["params"]["progressToken"], "q", "{beat}");
    c.send(&json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"queued"}}));
    let first = loop {
        let v = c.recv();
        if v["method"] != "notifications/progress" {
            break v;
        }
    };
    assert_eq!(first["id"], "busy", "the cancelled call was answered: {first}");
    // The loop goes on answering in order.
    c.send(&json!({"jsonrpc":"2.0","id":"after","method":"tools/call","params":{"name":"echo","arguments":{"z":1},"_meta":plain}}));
    let next = c.recv();
    assert_eq!(next["id"], "after", "{next}");
    c.close();
}

tests![
    v2_5_stdio_a_call_cancelled_while_queued_is_not_promoted,
    v2_5_stdio_a_long_call_becomes_a_task_a_quick_one_does_not,
    v2_4_stdio_the_end_of_input_fails_running_tasks,
    v2_1_stdio_calls_take_turns_with_queued_tasks,
    v3_7_stdio_a_listener_hears_its_tasks_status,
    v2_stdio_a_legacy_task_is_answered_at_once_and_fetched_later,
    v2_stdio_required_forbidden_and_cancelled_tasks,
    v2_stdio_a_modern_task_inlines_its_result,
    n2_stdio_answers_calls_as_they_finish_and_other_requests_at_once,
    n2_every_call_received_before_eof_is_answered,
    n3_stdio_refuses_a_call_the_queue_has_no_room_for,
    n4_stdio_progress_from_a_worker,
    n3_a_waiting_call_gets_heartbeats,
    n2_a_modern_call_as_the_first_message,
    n5_stdio_a_crash_is_the_calls_tool_error,
    n7_6_stdio_the_servers_own_tools_run_beside_the_workers,
];
