//! Pools driven directly, as a transport's drivers take calls from the
//! queue (RULES N1, N3–N7, C2, C4): calls at once in processes of their own,
//! the bounded and fair queue, crashes, restarts, limits, cancellation,
//! progress, and no worker outliving its pool or its server.

use std::path::Path;
use std::sync::mpsc::{channel, Receiver};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcplite_engine::host::{CallContext, Host, ToolFailure, ToolResult};
use mcplite_engine::progress::{Asks, CallStart, CallWatch, Inflight, ProgressPolicy};
use mcplite_engine::version::Version;
use mcplite_engine::workers::{Calls, FairQueue, Pool, WorkerHost};
use serde_json::{json, Value};

use crate::shared::{marks, options, temp_dir, wait_for, PATIENCE};
use crate::worker::TOOLS;

/// A job for the pool's drivers in these tests: one call, its result sent back.
struct Job {
    tool: usize,
    args: Value,
    state: Option<Arc<mcplite_engine::workers::CallState>>,
    token: bool,
    reply: std::sync::mpsc::Sender<(Result<ToolResult, ToolFailure>, bool)>,
}

fn run(job: Job, host: &mut WorkerHost<'_>) {
    let args = job.args.as_object().cloned();
    if let Some(s) = &job.state {
        host.set_call(s.clone());
        s.started(&CallStart {
            id: "1",
            progress_token: job.token.then_some("\"t\""),
            log_level: None,
            asks: Asks::NONE,
            version: Version::V2025_11_25,
        });
    }
    let out = host.call_tool(job.tool, args.as_ref(), &CallContext::default());
    let cancelled = job.state.as_ref().is_some_and(|s| s.finished());
    let _ = job.reply.send((out, cancelled));
}

/// The drivers' queue, as a transport sends to it.
struct Jobs<'a> {
    queue: &'a FairQueue<Job>,
    pool: &'a Pool,
}

impl Jobs<'_> {
    fn send(&self, job: Job) {
        self.send_as(None, job);
    }

    /// Send `job` from the token named `caller` (RULES N3.3).
    fn send_as(&self, caller: Option<&str>, job: Job) {
        assert!(self.queue.send(caller.map(Into::into), job).is_ok(), "the queue is open");
        self.pool.job_sent();
    }
}

/// Runs `f` with a pool whose drivers take [`Job`]s from the queue.
fn with_pool<T>(pool: &Pool, f: impl FnOnce(&Jobs<'_>) -> T) -> T {
    let queue = FairQueue::new();
    let run: &(dyn Fn(Job, &mut WorkerHost<'_>) + Sync) = &run;
    std::thread::scope(|s| {
        pool.spawn_drivers(s, &queue, run);
        let jobs = Jobs { queue: &queue, pool };
        let out = f(&jobs);
        queue.close();
        pool.wake_drivers();
        out
    })
}

fn call(
    jobs: &Jobs<'_>,
    tool: &str,
    args: Value,
    state: Option<Arc<mcplite_engine::workers::CallState>>,
) -> Receiver<(Result<ToolResult, ToolFailure>, bool)> {
    let (reply, rx) = channel();
    let token = state.is_some();
    let tool = TOOLS.iter().position(|t| *t == tool).unwrap();
    jobs.send(Job { tool, args, state, token, reply });
    rx
}

fn text(r: &Result<ToolResult, ToolFailure>) -> String {
    match r {
        Ok(r) => match &r.content[0].content {
            mcplite_engine::Content::Text { text } => text.clone(),
            c => panic!("not text: {c:?}"),
        },
        Err(ToolFailure::Error(e)) => e.clone(),
        Err(ToolFailure::Interrupted) => "<interrupted>".into(),
    }
}

fn get<T>(rx: &Receiver<T>) -> T {
    rx.recv_timeout(PATIENCE).expect("no answer")
}

fn n1_calls_run_at_the_same_time_each_in_its_own_process() {
    let pool = Pool::start(options(3, &[])).unwrap();
    assert_eq!(pool.stats().idle, 3);
    let dir = temp_dir("meet");
    let results = with_pool(&pool, |jobs| {
        // A quick call first: its driver spins for the next job as the
        // burst arrives, which must still reach the idle drivers (the
        // naps row of bench/workers times it).
        let (echoed, _) = get(&call(jobs, "echo", json!({}), None));
        assert_eq!(text(&echoed), "{}");
        let rx: Vec<_> =
            (0..3).map(|_| call(jobs, "meet", json!({"dir": dir.to_str().unwrap(), "n": 3}), None)).collect();
        rx.iter().map(get).collect::<Vec<_>>()
    });
    for (r, _) in &results {
        assert_eq!(text(r), "met", "all three were inside the tool at once");
    }
    let pids: std::collections::BTreeSet<_> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(pids.len(), 3, "three processes");
    assert!(!pids.contains(std::ffi::OsStr::new(&std::process::id().to_string())));
}

fn n1_arguments_and_context_reach_the_worker() {
    let pool = Pool::start(options(1, &[])).unwrap();
    let (r, _) = with_pool(&pool, |jobs| {
        let (reply, rx) = channel();
        let text = r#"{"x":1.50,"s":"é\u0000","deep":[[[{"a":null}]]],"big":12345678901234567890}"#;
        let args: Value = serde_json::from_str(text).unwrap();
        jobs.send(Job { tool: 0, args, state: None, token: false, reply });
        get(&rx)
    });
    let back: Value = serde_json::from_str(&text(&r)).unwrap();
    assert_eq!(back["s"], "é\u{0}");
    assert_eq!(back["deep"][0][0][0]["a"], Value::Null);
    assert_eq!(text(&r), r#"{"x":1.50,"s":"é\u0000","deep":[[[{"a":null}]]],"big":12345678901234567890}"#);
}

fn n3_the_queue_is_bounded() {
    let mut o = options(1, &[]);
    o.max_queue = 2;
    let pool = Pool::start(o).unwrap();
    let t: Vec<_> = (0..3).map(|_| pool.reserve().expect("room for the worker and two waiting")).collect();
    assert!(pool.reserve().is_none(), "a fourth call is refused");
    assert_eq!(pool.stats().queued, 3);
    drop(t);
    assert!(pool.reserve().is_some(), "tickets are given back");
}

fn n3_3_calls_waiting_for_a_worker_are_taken_in_turn_between_tokens() {
    // RULES N3.3: one worker, busy with alice's call; alice queues three
    // more, then bob one: bob's runs right after alice's first, and
    // alice's run in the order she sent them.
    let pool = Pool::start(options(1, &[])).unwrap();
    let dir = temp_dir("fair");
    let gate = dir.join("gate");
    std::fs::create_dir_all(&gate).unwrap();
    let file = dir.join("order");
    let f = file.to_str().unwrap();
    let replies = with_pool(&pool, |jobs| {
        let mark = |caller: &str, tag: &str| {
            let (reply, rx) = channel();
            let tool = TOOLS.iter().position(|t| *t == "mark").unwrap();
            let args = json!({"file": f, "tag": tag});
            jobs.send_as(Some(caller), Job { tool, args, state: None, token: false, reply });
            rx
        };
        // Runs until a second file appears in `gate`.
        let (reply, busy) = channel();
        let tool = TOOLS.iter().position(|t| *t == "meet").unwrap();
        let args = json!({"dir": gate.to_str().unwrap(), "n": 2});
        jobs.send_as(Some("alice"), Job { tool, args, state: None, token: false, reply });
        wait_for("the first call runs", || pool.stats().busy == 1);
        let mut rx: Vec<_> = ["a1", "a2", "a3"].iter().map(|t| mark("alice", t)).collect();
        rx.push(mark("bob", "b1"));
        assert_eq!(jobs.queue.len(), 4, "four calls wait");
        std::fs::write(gate.join("release"), "").unwrap();
        assert_eq!(text(&get(&busy).0), "met");
        rx.iter().map(|r| text(&get(r).0)).collect::<Vec<_>>()
    });
    assert_eq!(replies, ["a1", "a2", "a3", "b1"], "each call has its own answer");
    assert_eq!(marks(&file), ["a1", "b1", "a2", "a3"], "bob's call before alice's backlog; hers in order");
}

fn n5_a_worker_that_exits_during_a_call_is_a_tool_error_and_is_replaced() {
    let pool = Pool::start(options(2, &[])).unwrap();
    let (first, crashed, after, other) = with_pool(&pool, |jobs| {
        let dir = temp_dir("crash");
        let first = text(&get(&call(jobs, "pid", json!({}), None)).0);
        // A long call on the other worker is not affected by the crash.
        let long = call(jobs, "sleep", json!({"ms": 300, "file": dir.join("f").to_str().unwrap()}), None);
        let crashed = text(&get(&call(jobs, "exit", json!({}), None)).0);
        let other = text(&get(&long).0);
        let after: Vec<String> = (0..4).map(|_| text(&get(&call(jobs, "pid", json!({}), None)).0)).collect();
        (first, crashed, after, other)
    });
    assert!(crashed.contains("exited with status 3"), "{crashed}");
    assert!(crashed.contains("The R worker process running this tool call (worker "), "{crashed}");
    assert!(crashed.contains("other calls are not affected"), "{crashed}");
    assert_eq!(other, "slept");
    assert!(after.iter().all(|p| p.parse::<u32>().is_ok()), "{after:?}");
    assert_eq!(pool.stats().restarts, 1);
    assert_eq!(pool.stats().idle, 2, "a replacement is running");
    let _ = first;
}

fn n5_a_segfault_is_a_tool_error_that_names_the_signal() {
    let pool = Pool::start(options(1, &[])).unwrap();
    let (crashed, after) = with_pool(&pool, |jobs| {
        let crashed = text(&get(&call(jobs, "segv", json!({}), None)).0);
        let after = text(&get(&call(jobs, "echo", json!({"a": 1}), None)).0);
        (crashed, after)
    });
    assert!(crashed.contains("was killed by signal 11 (SIGSEGV"), "{crashed}");
    assert_eq!(after, r#"{"a":1}"#);
}

fn n5_a_worker_that_dies_while_idle_is_replaced_before_the_next_call() {
    let pool = Pool::start(options(1, &[])).unwrap();
    let (r, after) = with_pool(&pool, |jobs| {
        // The tool answers, then its process ends shortly after.
        let pid: u32 = text(&get(&call(jobs, "pid", json!({}), None)).0).parse().unwrap();
        // SAFETY: killing our own child.
        unsafe {
            libc::kill(pid as i32, libc::SIGKILL);
        }
        let t0 = Instant::now();
        while pool.stats().restarts == 0 && t0.elapsed() < PATIENCE {
            std::thread::sleep(Duration::from_millis(10));
        }
        let r = get(&call(jobs, "echo", json!({"b": 2}), None));
        (r, text(&get(&call(jobs, "pid", json!({}), None)).0))
    });
    assert_eq!(text(&r.0), r#"{"b":2}"#, "the call after the death is not lost");
    assert_eq!(pool.stats().restarts, 1);
    assert!(after.parse::<u32>().is_ok());
}

fn n6_a_worker_that_cannot_start_fails_the_pool() {
    let dir = temp_dir("nostart");
    let flag = dir.join("fail");
    std::fs::write(&flag, "").unwrap();
    let e = Pool::start(options(2, &[("FAKE_FAIL_IF_EXISTS", flag.to_str().unwrap())])).err().unwrap();
    assert!(e.0.starts_with("worker 1 of 2 (process "), "{e}");
    assert!(e.0.ends_with("exited with status 1 before it was ready"), "{e}");
    let e = Pool::start(options(1, &[("FAKE_TOOLS", "echo,other")])).err().unwrap();
    assert!(e.0.contains("serves other tools (\"echo\", \"other\") than the server (\"echo\", \"pid\""), "{e}");
}

fn n6_workers_that_keep_failing_to_start_stop_the_pool() {
    let dir = temp_dir("loop");
    let flag = dir.join("fail");
    let pool = Pool::start(options(1, &[("FAKE_FAIL_IF_EXISTS", flag.to_str().unwrap())])).unwrap();
    std::fs::write(&flag, "").unwrap();
    let (crashed, next) = with_pool(&pool, |jobs| {
        let crashed = text(&get(&call(jobs, "exit", json!({}), None)).0);
        let next = text(&get(&call(jobs, "pid", json!({}), None)).0);
        (crashed, next)
    });
    assert!(crashed.contains("exited with status 3"), "{crashed}");
    let why = pool.failure().expect("the pool has failed");
    assert!(why.starts_with("worker processes keep failing to start (3 in a row; the last: worker 1"), "{why}");
    assert!(why.contains("exited with status 1 before it was ready"), "{why}");
    assert!(next.starts_with("No R worker process could run this tool call: worker processes keep failing"), "{next}");
}

fn c4_a_cancelled_call_interrupts_its_worker_and_one_waiting_never_runs() {
    let pool = Pool::start(options(1, &[])).unwrap();
    let calls = Calls::new(Arc::new(Inflight::new(ProgressPolicy::default(), None)));
    let dir = temp_dir("cancel");
    let (first, second, third) = with_pool(&pool, |jobs| {
        let a = calls.register(None, "1", None);
        let b = calls.register(None, "2", None);
        let f1 = dir.join("1");
        let f2 = dir.join("2");
        let r1 = call(jobs, "sleep", json!({"ms": 60_000, "file": f1.to_str().unwrap()}), Some(a.state().clone()));
        let r2 = call(jobs, "sleep", json!({"ms": 1, "file": f2.to_str().unwrap()}), Some(b.state().clone()));
        let t0 = Instant::now();
        while pool.stats().busy == 0 && t0.elapsed() < PATIENCE {
            std::thread::sleep(Duration::from_millis(2));
        }
        assert!(calls.cancel(None, &json!(2)), "the waiting call");
        assert!(calls.cancel(None, &json!(1)), "the running call");
        let first = get(&r1);
        let second = get(&r2);
        assert!(!f2.exists(), "the call cancelled while it waited never ran");
        let third = text(&get(&call(jobs, "echo", json!({"c": 3}), None)).0);
        (first, second, third)
    });
    assert_eq!(text(&first.0), "<interrupted>");
    assert!(first.1, "the dispatcher learns it was cancelled");
    assert_eq!(std::fs::read_to_string(dir.join("1")).unwrap(), "interrupted", "its clean-up ran");
    assert_eq!((text(&second.0), second.1), ("<interrupted>".to_string(), true));
    assert_eq!(third, r#"{"c":3}"#, "the worker serves the next call");
    assert_eq!(pool.stats().restarts, 0, "no worker died");
}

fn n4_a_worker_that_ignores_a_cancellation_is_killed_and_replaced() {
    let mut opts = options(1, &[]);
    opts.interrupt_grace = Duration::from_millis(300);
    let pool = Pool::start(opts).unwrap();
    let calls = Calls::new(Arc::new(Inflight::new(ProgressPolicy::default(), None)));
    let (first, next, pids) = with_pool(&pool, |jobs| {
        let before = text(&get(&call(jobs, "pid", json!({}), None)).0);
        let a = calls.register(None, "1", None);
        let r1 = call(jobs, "sleep", json!({"ms": 60_000, "deaf": true}), Some(a.state().clone()));
        let t0 = Instant::now();
        while pool.stats().busy == 0 && t0.elapsed() < PATIENCE {
            std::thread::sleep(Duration::from_millis(2));
        }
        assert!(calls.cancel(None, &json!(1)), "the running call");
        let first = get(&r1);
        let after = text(&get(&call(jobs, "pid", json!({}), None)).0);
        let next = text(&get(&call(jobs, "echo", json!({"c": 2}), None)).0);
        (first, next, (before, after))
    });
    let why = text(&first.0);
    assert!(why.contains("did not stop within 0.3 s of the call's cancellation (it was killed)"), "{why}");
    assert!(first.1, "the call was cancelled: the dispatcher sends no answer");
    assert_ne!(pids.0, pids.1, "a new worker process");
    assert_eq!(next, r#"{"c":2}"#, "the new worker serves the next call");
    assert_eq!(pool.stats().restarts, 1);
}

#[cfg(target_os = "linux")]
fn n5_a_worker_that_keeps_too_much_memory_after_a_call_is_replaced() {
    let mut opts = options(1, &[]);
    opts.max_growth = Some(32 << 20);
    let pool = Pool::start(opts).unwrap();
    let (pids, answers) = with_pool(&pool, |jobs| {
        let first = text(&get(&call(jobs, "pid", json!({}), None)).0);
        // Under the limit: the same worker goes on.
        let small = text(&get(&call(jobs, "grow", json!({"mb": 4}), None)).0);
        let same = text(&get(&call(jobs, "pid", json!({}), None)).0);
        // Over it: the call is answered, then the worker is replaced.
        let big = text(&get(&call(jobs, "grow", json!({"mb": 96}), None)).0);
        let next = text(&get(&call(jobs, "pid", json!({}), None)).0);
        ((first, same, next), (small, big))
    });
    assert_eq!(answers, ("1024".to_string(), "24576".to_string()), "both calls answered");
    assert_eq!(pids.0, pids.1, "4 MB more keeps the worker");
    assert_ne!(pids.1, pids.2, "96 MB more replaces it");
    assert_eq!(pool.stats().restarts, 1);
}

#[cfg(not(target_os = "linux"))]
fn n5_a_worker_that_keeps_too_much_memory_after_a_call_is_replaced() {}

fn n6_4_a_workers_temporary_directory_goes_with_it() {
    let root = temp_dir("tmp-root");
    let mut opts = options(1, &[]);
    opts.command.tmp_root = Some(root.clone());
    let pool = Pool::start(opts).unwrap();
    let (first, second) = with_pool(&pool, |jobs| {
        let first = text(&get(&call(jobs, "tmpdir", json!({}), None)).0);
        // Killed during a call: R would leave its directory behind.
        let _ = get(&call(jobs, "exit", json!({}), None));
        let second = text(&get(&call(jobs, "tmpdir", json!({}), None)).0);
        (first, second)
    });
    assert!(first.starts_with(root.to_str().unwrap()), "{first}");
    assert!(!std::path::Path::new(&first).exists(), "the ended worker's directory is removed");
    assert_ne!(first, second);
    pool.shutdown();
    assert!(!std::path::Path::new(&second).exists(), "removed when the pool stops its worker");
    let _ = std::fs::remove_dir_all(&root);
}

#[cfg(target_os = "linux")]
fn n7_5_a_call_over_its_cpu_time_ends_its_worker() {
    let mut opts = options(1, &[]);
    opts.call_cpu = Some(Duration::from_secs(1));
    let pool = Pool::start(opts).unwrap();
    let (first, quick, pids) = with_pool(&pool, |jobs| {
        let before = text(&get(&call(jobs, "pid", json!({}), None)).0);
        let first = text(&get(&call(jobs, "burn", json!({"ms": 30_000}), None)).0);
        let quick = text(&get(&call(jobs, "burn", json!({"ms": 10}), None)).0);
        let after = text(&get(&call(jobs, "pid", json!({}), None)).0);
        (first, quick, (before, after))
    });
    assert!(first.contains("was killed by signal 24 (SIGXCPU, a CPU time limit)"), "{first}");
    assert!(quick.parse::<u64>().is_ok(), "a short call runs under the limit: {quick}");
    assert_ne!(pids.0, pids.1, "a new worker");
    assert_eq!(pool.stats().restarts, 1);
}

#[cfg(not(target_os = "linux"))]
fn n7_5_a_call_over_its_cpu_time_ends_its_worker() {}

fn n7_8_json_text_from_a_worker_cannot_break_the_servers_framing() {
    let pool = Pool::start(options(1, &[])).unwrap();
    let (structured, meta, close, next) = with_pool(&pool, |jobs| {
        let s = text(&get(&call(jobs, "forge", json!({}), None)).0);
        let m = text(&get(&call(jobs, "forge", json!({"where": "meta"}), None)).0);
        let c = text(&get(&call(jobs, "forge", json!({"where": "close"}), None)).0);
        let n = text(&get(&call(jobs, "echo", json!({"c": 1}), None)).0);
        (s, m, c, n)
    });
    assert!(
        close.contains("broke the worker protocol (malformed frame: JSON text that is not one JSON value)"),
        "{close}"
    );
    assert!(!close.contains("victim"), "{close}");
    for why in [&structured, &meta] {
        assert!(why.contains("broke the worker protocol (malformed frame: a control character in JSON text)"), "{why}");
        assert!(!why.contains("victim"), "{why}");
    }
    assert_eq!(next, r#"{"c":1}"#, "a new worker serves the next call");
    assert_eq!(pool.stats().restarts, 3);
}

fn n7_7_a_call_over_its_wall_time_is_interrupted_or_its_worker_killed() {
    let mut opts = options(1, &[]);
    opts.call_timeout = Some(Duration::from_millis(400));
    opts.interrupt_grace = Duration::from_millis(300);
    let pool = Pool::start(opts).unwrap();
    let dir = temp_dir("wall");
    let file = dir.join("ended");
    let (waited, deaf, quick, pids) = with_pool(&pool, |jobs| {
        let p0 = text(&get(&call(jobs, "pid", json!({}), None)).0);
        // Interrupted: its on.exit runs, the same worker goes on.
        let f = file.to_str().unwrap();
        let waited = text(&get(&call(jobs, "sleep", json!({"ms": 60_000, "file": f}), None)).0);
        let p1 = text(&get(&call(jobs, "pid", json!({}), None)).0);
        // Deaf to the interrupt: killed `interrupt_grace` later, replaced.
        let deaf = text(&get(&call(jobs, "sleep", json!({"ms": 60_000, "deaf": true}), None)).0);
        let quick = text(&get(&call(jobs, "sleep", json!({"ms": 10}), None)).0);
        let p2 = text(&get(&call(jobs, "pid", json!({}), None)).0);
        (waited, deaf, quick, (p0, p1, p2))
    });
    assert!(waited.starts_with("The tool call ran longer than 0.4 s"), "{waited}");
    assert!(waited.contains("MCPLITE_CALL_TIMEOUT"), "{waited}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "interrupted", "the tool's clean-up ran");
    assert_eq!(pids.0, pids.1, "an interrupted call keeps its worker");
    assert!(deaf.contains("ran longer than 0.4 s"), "{deaf}");
    assert!(deaf.contains("did not stop within 0.3 s of its interrupt (it was killed)"), "{deaf}");
    assert_eq!(quick, "slept", "a short call runs under the limit");
    assert_ne!(pids.1, pids.2, "a new worker after the kill");
    assert_eq!(pool.stats().restarts, 1);
    let _ = std::fs::remove_dir_all(&dir);
}

fn c2_progress_reports_reach_the_call() {
    let pool = Pool::start(options(1, &[])).unwrap();
    let calls = Calls::new(Arc::new(Inflight::new(ProgressPolicy::default(), None)));
    let reg = calls.register(None, "1", None);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let r = with_pool(&pool, |jobs| {
        let rx = call(jobs, "progress", json!({"n": 5, "ms": 40}), Some(reg.state().clone()));
        // Poll the call's progress as a transport's ticker would.
        let t0 = Instant::now();
        loop {
            if let Ok(r) = rx.try_recv() {
                break r;
            }
            for p in calls.progresses() {
                if let Some(line) = p.poll(Instant::now()) {
                    seen.lock().unwrap().push(String::from_utf8(line).unwrap());
                }
            }
            assert!(t0.elapsed() < PATIENCE);
            std::thread::sleep(Duration::from_millis(5));
        }
    });
    assert_eq!(text(&r.0), "reported");
    let seen = seen.lock().unwrap();
    assert!(!seen.is_empty(), "reports were forwarded");
    let values: Vec<f64> = seen
        .iter()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["params"]["progress"].as_f64().unwrap())
        .collect();
    assert!(values.windows(2).all(|w| w[0] < w[1]), "{values:?}");
    assert!(seen[0].contains(r#""total":5,"message":"step "#), "{}", seen[0]);
}

fn n6_workers_end_with_their_pool() {
    let pool = Pool::start(options(2, &[])).unwrap();
    let pids: Vec<u32> = with_pool(&pool, |jobs| {
        let dir = temp_dir("end");
        (0..2)
            .map(|_| call(jobs, "meet", json!({"dir": dir.to_str().unwrap(), "n": 2}), None))
            .collect::<Vec<_>>()
            .iter()
            .map(get)
            .for_each(drop);
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_str().unwrap().parse().unwrap()).collect()
    });
    assert_eq!(pids.len(), 2);
    drop(pool);
    for pid in pids {
        assert!(!alive(pid), "worker {pid} outlived its pool");
    }
}

/// Is `pid` a live process (not gone, not a zombie)?
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => !s.rsplit(')').next().unwrap_or("").trim_start().starts_with('Z'),
        // No /proc (macOS): ask kill().
        // SAFETY: signal 0 only checks.
        Err(_) => !Path::new("/proc").exists() && unsafe { libc::kill(pid as i32, 0) } == 0,
    }
}

/// The orphan test's parent: a pool of two workers whose process ids it
/// writes to `FAKE_PARENT_OUT`, then it waits to be killed.
pub fn parent_main(out: &str) {
    let pool = Pool::start(options(2, &[])).unwrap();
    let dir = temp_dir("parent");
    with_pool(&pool, |jobs| {
        let rx: Vec<_> =
            (0..2).map(|_| call(jobs, "meet", json!({"dir": dir.to_str().unwrap(), "n": 2}), None)).collect();
        rx.iter().map(get).for_each(drop);
        let pids: Vec<String> =
            std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_str().unwrap().to_string()).collect();
        std::fs::write(format!("{out}.tmp"), pids.join("\n")).unwrap();
        std::fs::rename(format!("{out}.tmp"), out).unwrap();
        loop {
            std::thread::sleep(Duration::from_secs(1));
        }
    });
}

fn n6_no_orphans_when_the_server_is_killed() {
    let dir = temp_dir("orphans");
    let out = dir.join("pids");
    let mut parent =
        std::process::Command::new(std::env::current_exe().unwrap()).env("FAKE_PARENT_OUT", &out).spawn().unwrap();
    let t0 = Instant::now();
    while !out.exists() {
        assert!(t0.elapsed() < PATIENCE, "the parent never reported its workers");
        std::thread::sleep(Duration::from_millis(10));
    }
    let pids: Vec<u32> = std::fs::read_to_string(&out).unwrap().lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(pids.len(), 2);
    assert!(pids.iter().all(|p| alive(*p)));
    parent.kill().unwrap();
    parent.wait().unwrap();
    let t0 = Instant::now();
    while pids.iter().any(|p| alive(*p)) {
        assert!(t0.elapsed() < PATIENCE, "workers {pids:?} outlived their server (killed with SIGKILL)");
        std::thread::sleep(Duration::from_millis(10));
    }
}

tests![
    n1_calls_run_at_the_same_time_each_in_its_own_process,
    n1_arguments_and_context_reach_the_worker,
    n3_the_queue_is_bounded,
    n3_3_calls_waiting_for_a_worker_are_taken_in_turn_between_tokens,
    n5_a_worker_that_exits_during_a_call_is_a_tool_error_and_is_replaced,
    n5_a_segfault_is_a_tool_error_that_names_the_signal,
    n5_a_worker_that_dies_while_idle_is_replaced_before_the_next_call,
    n6_a_worker_that_cannot_start_fails_the_pool,
    n6_workers_that_keep_failing_to_start_stop_the_pool,
    c4_a_cancelled_call_interrupts_its_worker_and_one_waiting_never_runs,
    n4_a_worker_that_ignores_a_cancellation_is_killed_and_replaced,
    n5_a_worker_that_keeps_too_much_memory_after_a_call_is_replaced,
    n7_5_a_call_over_its_cpu_time_ends_its_worker,
    n7_8_json_text_from_a_worker_cannot_break_the_servers_framing,
    n7_7_a_call_over_its_wall_time_is_interrupted_or_its_worker_killed,
    n6_4_a_workers_temporary_directory_goes_with_it,
    c2_progress_reports_reach_the_call,
    n6_workers_end_with_their_pool,
    n6_no_orphans_when_the_server_is_killed,
];
