//! Worker processes (RULES N1–N6) with real processes: this very executable
//! started as a worker (`MCPLITE_WORKER` set) serves a fake host's tools
//! with the engine's worker loop, and the tests drive a [`Pool`] directly
//! and through the stdio transport over real pipes. `harness = false`:
//! `main` is a worker, a pool parent (for the orphan test), or a small test
//! runner that prints libtest's summary line.

// The runner reports on stdout, as libtest does.
#![allow(clippy::print_stdout)]

#[cfg(unix)]
mod pipes;

#[cfg(unix)]
mod unix {
    use std::fs::File;
    use std::io::{BufRead, BufReader, Write};
    use std::path::{Path, PathBuf};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::mpsc::{channel, Receiver};
    use std::sync::{Arc, Mutex};
    use std::thread::JoinHandle;
    use std::time::{Duration, Instant};

    use mcplite_engine::host::{CallContext, Host, ToolFailure, ToolResult, ToolSpec};
    use mcplite_engine::progress::{CallStart, CallWatch, Inflight, ProgressPolicy};
    use mcplite_engine::server::STOPPING_TEXT;
    use mcplite_engine::transport::http::{HttpOptions, HttpServer, Stopped};
    use mcplite_engine::transport::{serve_with_workers, Reader, ServeEnd, ServeOptions};
    use mcplite_engine::version::Version;
    use mcplite_engine::workers::{
        serve_worker, take_worker_fds, Calls, FairQueue, Pool, PoolOptions, WorkerCommand, WorkerHost, WorkerOptions,
        SERVER_BUSY,
    };
    use mcplite_engine::{Server, ServerInfo};
    use serde_json::{json, Map, Value};

    /// A pipe whose ends the workers do not inherit (a test's client would
    /// otherwise keep its own server's input open through them).
    fn pipe() -> (File, File) {
        let (r, w) = super::pipes::pipe();
        for f in [&r, &w] {
            // SAFETY: fcntl on descriptors we own.
            unsafe {
                libc::fcntl(std::os::fd::AsRawFd::as_raw_fd(f), libc::F_SETFD, libc::FD_CLOEXEC);
            }
        }
        (r, w)
    }

    /// Long enough for anything to happen; a test that waits this long failed.
    const PATIENCE: Duration = Duration::from_secs(30);

    const TOOLS: [&str; 13] = [
        "echo",
        "pid",
        "sleep",
        "exit",
        "segv",
        "progress",
        "meet",
        "slow_exit",
        "grow",
        "burn",
        "tmpdir",
        "mark",
        "forge",
    ];

    // ---- the worker ------------------------------------------------------

    /// Set by the worker's interrupter (what SIGINT does to R).
    static INTERRUPTED: AtomicBool = AtomicBool::new(false);

    struct Fake {
        inflight: Arc<Inflight>,
    }

    fn arg<'a>(a: Option<&'a Map<String, Value>>, k: &str) -> Option<&'a Value> {
        a.and_then(|a| a.get(k))
    }

    impl Host for Fake {
        fn tools(&mut self) -> Vec<ToolSpec> {
            let names: Vec<String> = match std::env::var("FAKE_TOOLS") {
                Ok(s) => s.split(',').map(String::from).collect(),
                Err(_) => TOOLS.iter().map(|s| s.to_string()).collect(),
            };
            names.iter().map(|n| ToolSpec::new(n.as_str(), "A test tool.")).collect()
        }

        fn call_tool(
            &mut self,
            i: usize,
            a: Option<&Map<String, Value>>,
            ctx: &CallContext,
        ) -> Result<ToolResult, ToolFailure> {
            INTERRUPTED.store(false, Ordering::SeqCst);
            let ms = arg(a, "ms").and_then(Value::as_u64).unwrap_or(0);
            match TOOLS[i] {
                "echo" => {
                    let mut r = ToolResult::text(serde_json::to_string(&a).unwrap());
                    r.structured = ctx.traceparent.clone();
                    Ok(r)
                }
                "pid" => Ok(ToolResult::text(std::process::id().to_string())),
                "sleep" => {
                    // Writes how it ended to `file`, as an on.exit handler would.
                    // `deaf`: as compiled code that never checks for interrupts.
                    let deaf = arg(a, "deaf").and_then(Value::as_bool).unwrap_or(false);
                    let t0 = Instant::now();
                    let out = loop {
                        if !deaf && INTERRUPTED.load(Ordering::SeqCst) {
                            break Err(ToolFailure::Interrupted);
                        }
                        if t0.elapsed() >= Duration::from_millis(ms) {
                            break Ok(ToolResult::text("slept"));
                        }
                        std::thread::sleep(Duration::from_millis(2));
                    };
                    if let Some(Value::String(f)) = arg(a, "file") {
                        let what = if out.is_ok() { "done" } else { "interrupted" };
                        std::fs::write(f, what).unwrap();
                    }
                    out
                }
                "exit" => std::process::exit(3),
                "segv" => {
                    // SAFETY: the point is to die of SIGSEGV (Rust's own handler,
                    // for stack overflows, is put aside first).
                    unsafe {
                        libc::signal(libc::SIGSEGV, libc::SIG_DFL);
                        libc::raise(libc::SIGSEGV);
                    }
                    unreachable!()
                }
                "progress" => {
                    let n = arg(a, "n").and_then(Value::as_u64).unwrap_or(3);
                    for j in 1..=n {
                        if let Some(p) = self.inflight.progress() {
                            if p.report(j as f64, Some(n as f64), Some(&format!("step {j}"))).unwrap() {
                                self.inflight.notify();
                            }
                        }
                        std::thread::sleep(Duration::from_millis(ms));
                    }
                    Ok(ToolResult::text("reported"))
                }
                "meet" => {
                    // Wait until `n` calls are inside this tool at the same
                    // time (one file each in `dir`): proof that they run at once.
                    let dir = PathBuf::from(arg(a, "dir").and_then(Value::as_str).unwrap());
                    let n = arg(a, "n").and_then(Value::as_u64).unwrap() as usize;
                    std::fs::write(dir.join(std::process::id().to_string()), "").unwrap();
                    let t0 = Instant::now();
                    while std::fs::read_dir(&dir).unwrap().count() < n {
                        if t0.elapsed() > PATIENCE {
                            return Err(ToolFailure::Error("the others never came".into()));
                        }
                        std::thread::sleep(Duration::from_millis(2));
                    }
                    Ok(ToolResult::text("met"))
                }
                "mark" => {
                    // Append `tag` to `file` as it starts: the order calls ran in.
                    let file = arg(a, "file").and_then(Value::as_str).unwrap();
                    let tag = arg(a, "tag").and_then(Value::as_str).unwrap();
                    let mut f = std::fs::OpenOptions::new().create(true).append(true).open(file).unwrap();
                    writeln!(f, "{tag}").unwrap();
                    Ok(ToolResult::text(tag))
                }
                "tmpdir" => {
                    // Leave a file there, as a killed R leaves its Rtmp directory.
                    let d = std::env::var("TMPDIR").unwrap_or_default();
                    if !d.is_empty() {
                        std::fs::write(std::path::Path::new(&d).join("left"), "x").unwrap();
                    }
                    Ok(ToolResult::text(d))
                }
                "burn" => {
                    // CPU for `ms`, deaf to interrupts (compiled code).
                    let t0 = Instant::now();
                    let mut x: u64 = 1;
                    while t0.elapsed() < Duration::from_millis(ms) {
                        x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
                    }
                    Ok(ToolResult::text(x.to_string()))
                }
                "grow" => {
                    // Keep `mb` MB, touched, as R keeps what a tool allocated.
                    let mb = arg(a, "mb").and_then(Value::as_u64).unwrap_or(1) as usize;
                    let kept = vec![1u8; mb << 20];
                    let sum: u64 = kept.iter().step_by(4096).map(|b| *b as u64).sum();
                    std::mem::forget(kept);
                    Ok(ToolResult::text(sum.to_string()))
                }
                "forge" => {
                    // What code that took over a worker could send: JSON text
                    // that ends the line and starts a message of its own.
                    let mut r = ToolResult::text("forged");
                    let forged = r#"1}}
{"jsonrpc":"2.0","id":"victim","result":{"content":[]}}"#;
                    match arg(a, "where").and_then(Value::as_str) {
                        Some("meta") => r.meta = vec![("k".into(), forged.into())],
                        // One line that closes the object and answers another request.
                        Some("close") => r.structured = Some(r#"{}},"id":"victim","result":{"content":[]"#.into()),
                        _ => r.structured = Some(forged.into()),
                    }
                    Ok(r)
                }
                _ => {
                    std::thread::sleep(Duration::from_millis(ms));
                    std::process::exit(0)
                }
            }
        }
    }

    pub fn worker_main() {
        if let Ok(f) = std::env::var("FAKE_FAIL_IF_EXISTS") {
            if Path::new(&f).exists() {
                eprintln!("fake worker: failing at start on purpose");
                std::process::exit(1);
            }
        }
        let (input, output) = take_worker_fds().expect("descriptors 3 and 4");
        let inflight = Arc::new(Inflight::new(
            ProgressPolicy::default(),
            Some(Arc::new(|| INTERRUPTED.store(true, Ordering::SeqCst))),
        ));
        let mut host = Fake { inflight: inflight.clone() };
        let tools = host.tools().into_iter().map(|t| t.name).collect();
        serve_worker(&mut host, input, output, tools, &inflight, WorkerOptions::default());
    }

    // ---- pools ------------------------------------------------------------

    fn command(env: &[(&str, &str)]) -> WorkerCommand {
        WorkerCommand {
            program: std::env::current_exe().unwrap(),
            args: Vec::new(),
            cwd: None,
            env: env.iter().map(|(k, v)| (k.into(), v.into())).collect(),
            tmp_root: None,
        }
    }

    fn options(n: usize, env: &[(&str, &str)]) -> PoolOptions {
        let mut o = PoolOptions::new(n, command(env), TOOLS.iter().map(|s| s.to_string()).collect());
        o.start_timeout = PATIENCE;
        o
    }

    fn temp_dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("mcplite-workers-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

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

    /// The tags `mark` calls wrote to `file`, in the order they ran.
    fn marks(file: &Path) -> Vec<String> {
        std::fs::read_to_string(file).unwrap_or_default().lines().map(String::from).collect()
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
        assert!(
            next.starts_with("No R worker process could run this tool call: worker processes keep failing"),
            "{next}"
        );
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
            assert!(
                why.contains("broke the worker protocol (malformed frame: a control character in JSON text)"),
                "{why}"
            );
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
            std::fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_str().unwrap().parse().unwrap())
                .collect()
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
            let pids: Vec<String> = std::fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_str().unwrap().to_string())
                .collect();
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

    // ---- the stdio transport with workers ---------------------------------

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

        fn bare(n: usize, max_queue: usize) -> Client {
            Client::bare_with(n, max_queue, false)
        }

        /// `mixed`: the server also has the tool `here`, which it runs itself
        /// ([`mixed_options`]).
        fn bare_with(n: usize, max_queue: usize, mixed: bool) -> Client {
            let (in_r, in_w) = pipe();
            let (out_r, mut out_w) = pipe();
            let serving = std::thread::spawn(move || {
                let mut o = if mixed { mixed_options(n) } else { options(n, &[]) };
                o.max_queue = max_queue;
                let specs = o.tools.iter().map(|n| ToolSpec::new(n.as_str(), "A test tool.")).collect();
                let pool = Pool::start(o).unwrap();
                let info = ServerInfo { name: "mcplite".into(), version: "1".into(), instructions: None };
                let server = Server::with_tools(info, specs);
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

    struct NoHost;

    impl Host for NoHost {
        fn tools(&mut self) -> Vec<ToolSpec> {
            Vec::new()
        }
        fn call_tool(
            &mut self,
            _: usize,
            _: Option<&Map<String, Value>>,
            _: &CallContext,
        ) -> Result<ToolResult, ToolFailure> {
            panic!("tools run in the workers")
        }
    }

    /// The server's own tool of a mixed server (RULES N7.6): `here`, first
    /// in the server's list, says which process ran it; the workers serve
    /// the others.
    struct Here;

    impl Host for Here {
        fn tools(&mut self) -> Vec<ToolSpec> {
            Vec::new()
        }
        fn call_tool(
            &mut self,
            i: usize,
            _: Option<&Map<String, Value>>,
            _: &CallContext,
        ) -> Result<ToolResult, ToolFailure> {
            assert_eq!(i, 0, "only `here` runs in the server");
            Ok(ToolResult::text(format!("here {}", std::process::id())))
        }
    }

    fn mixed_options(n: usize) -> PoolOptions {
        let mut o = options(n, &[]);
        o.tools.insert(0, "here".into());
        o.host_tools = vec!["here".into()];
        o
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

    // ---- HTTP -------------------------------------------------------------

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
            Http::start_tuned(o, max_queue, recorder, mixed, |_| {})
        }

        fn start_tuned(
            mut o: PoolOptions,
            max_queue: usize,
            recorder: Option<Box<dyn mcplite_engine::telemetry::SpanRecorder>>,
            mixed: bool,
            tune: impl FnOnce(&mut HttpOptions),
        ) -> Http {
            o.max_queue = max_queue;
            let specs = o.tools.iter().map(|n| ToolSpec::new(n.as_str(), "A test tool.")).collect();
            let pool = Arc::new(Pool::start(o).unwrap());
            let info = ServerInfo { name: "mcplite".into(), version: "1".into(), instructions: None };
            let mut server = Server::with_tools(info, specs);
            server.set_recorder(recorder);
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

    fn wait_for(what: &str, mut f: impl FnMut() -> bool) {
        let t0 = Instant::now();
        while !f() {
            assert!(t0.elapsed() < PATIENCE, "never: {what}");
            std::thread::sleep(Duration::from_millis(5));
        }
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
        let h = Http::start_tuned(options(1, &[]), 8, None, false, |o| o.tokens_file = Some(tokens));
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
        let h = Http::start_tuned(options(2, &[]), 4, None, false, tune);
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
        assert!(
            t.contains("did not stop within 1 s of its interrupt as the server was stopping (it was killed)"),
            "{t}"
        );
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
            let r =
                post(Some(&sid), json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}));
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

    pub fn tests() -> Vec<(&'static str, fn())> {
        vec![
            (
                "n1_calls_run_at_the_same_time_each_in_its_own_process",
                n1_calls_run_at_the_same_time_each_in_its_own_process,
            ),
            ("n1_arguments_and_context_reach_the_worker", n1_arguments_and_context_reach_the_worker),
            ("n3_the_queue_is_bounded", n3_the_queue_is_bounded),
            (
                "n3_3_calls_waiting_for_a_worker_are_taken_in_turn_between_tokens",
                n3_3_calls_waiting_for_a_worker_are_taken_in_turn_between_tokens,
            ),
            (
                "n5_a_worker_that_exits_during_a_call_is_a_tool_error_and_is_replaced",
                n5_a_worker_that_exits_during_a_call_is_a_tool_error_and_is_replaced,
            ),
            (
                "n5_a_segfault_is_a_tool_error_that_names_the_signal",
                n5_a_segfault_is_a_tool_error_that_names_the_signal,
            ),
            (
                "n5_a_worker_that_dies_while_idle_is_replaced_before_the_next_call",
                n5_a_worker_that_dies_while_idle_is_replaced_before_the_next_call,
            ),
            ("n6_a_worker_that_cannot_start_fails_the_pool", n6_a_worker_that_cannot_start_fails_the_pool),
            (
                "n6_workers_that_keep_failing_to_start_stop_the_pool",
                n6_workers_that_keep_failing_to_start_stop_the_pool,
            ),
            (
                "c4_a_cancelled_call_interrupts_its_worker_and_one_waiting_never_runs",
                c4_a_cancelled_call_interrupts_its_worker_and_one_waiting_never_runs,
            ),
            (
                "n4_a_worker_that_ignores_a_cancellation_is_killed_and_replaced",
                n4_a_worker_that_ignores_a_cancellation_is_killed_and_replaced,
            ),
            (
                "n5_a_worker_that_keeps_too_much_memory_after_a_call_is_replaced",
                n5_a_worker_that_keeps_too_much_memory_after_a_call_is_replaced,
            ),
            ("n7_5_a_call_over_its_cpu_time_ends_its_worker", n7_5_a_call_over_its_cpu_time_ends_its_worker),
            (
                "n7_8_json_text_from_a_worker_cannot_break_the_servers_framing",
                n7_8_json_text_from_a_worker_cannot_break_the_servers_framing,
            ),
            (
                "n7_7_a_call_over_its_wall_time_is_interrupted_or_its_worker_killed",
                n7_7_a_call_over_its_wall_time_is_interrupted_or_its_worker_killed,
            ),
            ("n6_4_a_workers_temporary_directory_goes_with_it", n6_4_a_workers_temporary_directory_goes_with_it),
            ("c2_progress_reports_reach_the_call", c2_progress_reports_reach_the_call),
            ("n6_workers_end_with_their_pool", n6_workers_end_with_their_pool),
            ("n6_no_orphans_when_the_server_is_killed", n6_no_orphans_when_the_server_is_killed),
            (
                "n2_stdio_answers_calls_as_they_finish_and_other_requests_at_once",
                n2_stdio_answers_calls_as_they_finish_and_other_requests_at_once,
            ),
            ("n2_every_call_received_before_eof_is_answered", n2_every_call_received_before_eof_is_answered),
            ("n3_stdio_refuses_a_call_the_queue_has_no_room_for", n3_stdio_refuses_a_call_the_queue_has_no_room_for),
            ("n4_stdio_progress_from_a_worker", n4_stdio_progress_from_a_worker),
            ("n3_a_waiting_call_gets_heartbeats", n3_a_waiting_call_gets_heartbeats),
            ("n2_a_modern_call_as_the_first_message", n2_a_modern_call_as_the_first_message),
            ("n5_stdio_a_crash_is_the_calls_tool_error", n5_stdio_a_crash_is_the_calls_tool_error),
            (
                "n7_6_stdio_the_servers_own_tools_run_beside_the_workers",
                n7_6_stdio_the_servers_own_tools_run_beside_the_workers,
            ),
            (
                "n7_6_http_the_servers_own_tools_run_beside_the_workers",
                n7_6_http_the_servers_own_tools_run_beside_the_workers,
            ),
            (
                "n2_http_calls_run_at_once_and_health_reports_the_workers",
                n2_http_calls_run_at_once_and_health_reports_the_workers,
            ),
            ("n3_http_a_full_queue_is_503_with_retry_after", n3_http_a_full_queue_is_503_with_retry_after),
            (
                "n3_3_http_a_second_tokens_call_starts_before_the_first_tokens_backlog",
                n3_3_http_a_second_tokens_call_starts_before_the_first_tokens_backlog,
            ),
            (
                "h4_2_http_calls_outliving_the_drain_say_the_server_was_stopping_and_the_stop_counts_them",
                h4_2_http_calls_outliving_the_drain_say_the_server_was_stopping_and_the_stop_counts_them,
            ),
            (
                "n5_http_a_crash_is_the_calls_tool_error_and_others_go_on",
                n5_http_a_crash_is_the_calls_tool_error_and_others_go_on,
            ),
            (
                "c6_http_a_legacy_cancellation_interrupts_the_worker",
                c6_http_a_legacy_cancellation_interrupts_the_worker,
            ),
            ("n5_the_span_records_the_worker", n5_the_span_records_the_worker),
        ]
    }
}

#[cfg(unix)]
fn main() {
    if std::env::var_os("MCPLITE_WORKER").is_some() {
        return unix::worker_main();
    }
    if let Ok(out) = std::env::var("FAKE_PARENT_OUT") {
        return unix::parent_main(&out);
    }
    let filter: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    let mut failed = 0;
    let mut passed = 0;
    let t0 = std::time::Instant::now();
    for (name, f) in unix::tests() {
        if !filter.is_empty() && !filter.iter().any(|p| name.contains(p.as_str())) {
            continue;
        }
        match std::panic::catch_unwind(f) {
            Ok(()) => {
                passed += 1;
                println!("test {name} ... ok");
            }
            Err(_) => {
                failed += 1;
                println!("test {name} ... FAILED");
            }
        }
    }
    let status = if failed == 0 { "ok" } else { "FAILED" };
    println!(
        "\ntest result: {status}. {passed} passed; {failed} failed; 0 ignored; 0 measured; 0 filtered out; finished in {:.2}s",
        t0.elapsed().as_secs_f64()
    );
    if failed > 0 {
        std::process::exit(101);
    }
}

/// Worker processes are not available on this platform.
#[cfg(not(unix))]
fn main() {
    println!("\ntest result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s");
}
