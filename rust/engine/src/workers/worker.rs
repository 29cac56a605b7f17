//! The worker's side of the pipes: say hello, then run each call the engine
//! sends with the worker's [`Host`] (R's, in a worker process started by
//! `mcp_server()`; a fake in the tests), forward its progress, send its
//! outcome, until the engine closes the pipe (RULES N1, N4).
//!
//! # Threads
//!
//! The worker's main thread (R's) reads the engine's pipe itself while it
//! waits for a call, so a call costs the worker one wake-up. While a tool
//! runs, a helper thread (started with signals blocked) watches the pipe
//! for an interrupt of that call, which it passes to the [`Inflight`]'s
//! interrupter (in R: SIGINT to the main thread, as a cancellation does in
//! a server without workers), and forwards the tool's `mcp_progress()`
//! reports ([`Progress::forward_report`], at most every 20 ms; the engine's own
//! [`Progress`] of the call times the notifications). When the engine's pipe
//! ends during a call (the server is gone) the tool is interrupted and the
//! worker returns after it.
//!
//! The helper reads the pipe only while the main thread runs a tool, under
//! the same lock as the main thread, and consumes only interrupt frames; the
//! main thread ends a call (clears `running`) before it writes the result,
//! and the helper forwards a report only while holding the output lock and
//! seeing the call still running, so every report is written before the
//! result.

use std::fs::File;
use std::io::{self, Write};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::{Map, Value};

use super::sys;
use super::wire::{CallFrame, Frames, FromWorker, ToWorker, WireError, PROTOCOL};
use crate::ask_state::{AskError, Asker};
use crate::host::{Host, ToolFailure};
use crate::progress::{CallStart, CallWatch, Inflight, Progress};
use crate::signals::masked;
use crate::version::Version;

/// Why a worker stopped serving.
#[derive(Debug)]
pub enum WorkerEnd {
    /// The engine closed the pipe (the server stops, or is gone).
    Eof,
    /// Writing to the engine failed.
    WriteFailed(io::Error),
    /// The engine sent something unreadable.
    Broken(WireError),
}

/// How the worker waits.
#[derive(Debug, Clone, Copy)]
pub struct WorkerOptions {
    /// Between checks for an interrupt of the idle worker itself
    /// ([`Host::interrupt_pending`], which consumes it).
    pub poll: Duration,
    /// After a call, how long to keep looking for the next before sleeping.
    pub spin: Duration,
}

impl Default for WorkerOptions {
    fn default() -> Self {
        WorkerOptions { poll: Duration::from_millis(100), spin: Duration::from_micros(500) }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// How long a call runs before the helper watches the pipe for its interrupt
/// (and forwards its progress): a quick call never wakes the helper again,
/// which on a machine with few cores takes CPU from the call itself.
const HELPER_ARM: Duration = Duration::from_millis(5);

#[derive(Default)]
struct State {
    /// The call the main thread is running, and whether it forwards progress.
    running: Option<(u64, bool)>,
    /// When the running call started.
    since: Option<Instant>,
    /// The helper waits for a call with no time limit: a new call must wake it.
    parked: bool,
    /// The engine's pipe ended.
    gone: bool,
    stop: bool,
}

struct Shared<'a> {
    input: File,
    frames: Mutex<Frames>,
    output: Arc<Mutex<File>>,
    state: Mutex<State>,
    wake: Condvar,
    inflight: &'a Inflight,
    answers: Arc<Answers>,
}

/// The engine's answer to the running call's question (RULES A1.4), put
/// here by the helper thread, which reads the pipe while a tool runs.
#[derive(Default)]
struct Answers {
    answer: Mutex<Option<(u64, Result<String, String>)>>,
    ready: Condvar,
}

/// How the running call `seq` asks its client: the question goes to the
/// engine as a `Q` frame, and the tool waits for the `A` frame the helper
/// thread receives (or `stop`: the call was interrupted, the engine went
/// away). The engine keeps the time.
fn asker(output: Arc<Mutex<File>>, answers: Arc<Answers>, seq: u64) -> Asker {
    Arc::new(move |kind, params: &Value, timeout: Duration, stop: &dyn Fn() -> bool| {
        *lock(&answers.answer) = None;
        let q = FromWorker::Ask { seq, kind, timeout: timeout.as_secs_f64(), params: params.to_string() };
        write_frame(&mut lock(&output), &q).map_err(|_| AskError::Cancelled)?;
        let mut g = lock(&answers.answer);
        loop {
            match g.take() {
                Some((s, Ok(json))) if s == seq => {
                    return serde_json::from_str(&json).map_err(|_| AskError::Remote("the answer is not JSON".into()))
                }
                Some((s, Err(why))) if s == seq => return Err(AskError::Remote(why)),
                _ => {}
            }
            if stop() {
                return Err(AskError::Cancelled);
            }
            g = answers.ready.wait_timeout(g, Duration::from_millis(100)).unwrap_or_else(PoisonError::into_inner).0;
        }
    })
}

fn write_frame(out: &mut File, f: &FromWorker) -> io::Result<()> {
    let mut buf = Vec::with_capacity(128);
    f.encode(&mut buf);
    out.write_all(&buf)
}

/// Serve the engine over `input` (its frames) and `output` (ours) with
/// `host`, whose tools are `tools` (their names, for the hello). `inflight`
/// is the worker's own: `mcp_progress()` reports to it, and its interrupter
/// interrupts the tool. Returns when the engine closes the pipe.
pub fn serve_worker(
    host: &mut dyn Host,
    input: File,
    output: File,
    tools: Vec<String>,
    inflight: &Inflight,
    opts: WorkerOptions,
) -> WorkerEnd {
    sys::set_nonblocking(&input);
    let shared = Shared {
        input,
        frames: Mutex::new(Frames::new()),
        output: Arc::new(Mutex::new(output)),
        state: Mutex::new(State::default()),
        wake: Condvar::new(),
        inflight,
        answers: Arc::default(),
    };
    let hello = FromWorker::Hello { protocol: PROTOCOL, pid: std::process::id(), tools };
    if let Err(e) = write_frame(&mut lock(&shared.output), &hello) {
        return WorkerEnd::WriteFailed(e);
    }
    std::thread::scope(|s| {
        let helper = masked(|| {
            std::thread::Builder::new()
                .name("mcplite-worker-watch".into())
                .spawn_scoped(s, || helper(&shared))
                .expect("spawn the worker's helper thread")
        });
        // Stops the helper however the loop ends (a panic too: the scope
        // would otherwise wait for it forever).
        let stop = StopHelper(&shared);
        let end = main_loop(host, &shared, opts);
        drop(stop);
        let _ = helper.join();
        end
    })
}

struct StopHelper<'a, 'b>(&'a Shared<'b>);

impl Drop for StopHelper<'_, '_> {
    fn drop(&mut self) {
        lock(&self.0.state).stop = true;
        self.0.wake.notify_all();
    }
}

fn main_loop(host: &mut dyn Host, sh: &Shared<'_>, opts: WorkerOptions) -> WorkerEnd {
    let mut spin_until = Instant::now();
    loop {
        let frame = match next_frame(host, sh, opts, spin_until) {
            Ok(Some(f)) => f,
            Ok(None) => return WorkerEnd::Eof,
            Err(e) => return e,
        };
        match frame {
            ToWorker::Call(c) => {
                if let Err(e) = run_call(host, sh, c) {
                    return WorkerEnd::WriteFailed(e);
                }
                spin_until = Instant::now() + opts.spin;
            }
            // An interrupt for a call that has already returned, or an
            // answer that came too late.
            ToWorker::Interrupt { .. } | ToWorker::Answer { .. } => {}
        }
    }
}

/// The next frame from the engine (`None` at EOF), read on this thread.
fn next_frame(
    host: &mut dyn Host,
    sh: &Shared<'_>,
    opts: WorkerOptions,
    spin_until: Instant,
) -> Result<Option<ToWorker>, WorkerEnd> {
    loop {
        {
            let mut frames = lock(&sh.frames);
            match frames.next_frame() {
                Ok(Some(body)) => return ToWorker::decode(body).map(Some).map_err(WorkerEnd::Broken),
                Ok(None) => {}
                Err(e) => return Err(WorkerEnd::Broken(e)),
            }
            if lock(&sh.state).gone {
                return Ok(None);
            }
            match frames.read_from(&mut &sh.input) {
                Ok(0) => return Ok(None),
                Ok(_) => continue,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(_) => return Ok(None),
            }
        }
        if Instant::now() < spin_until {
            std::thread::yield_now();
            continue;
        }
        if !sys::readable(&sh.input, opts.poll.as_millis() as i32) {
            // Idle: an interrupt now (a Ctrl+C meant for the server) must not
            // interrupt the next call.
            host.interrupt_pending();
        }
    }
}

/// The arguments object sent as JSON text, parsed as the engine parses a
/// request (no recursion limit: the engine bounded the depth already).
fn parse_arguments(text: &str) -> Result<Map<String, Value>, String> {
    let mut de = serde_json::Deserializer::from_str(text);
    de.disable_recursion_limit();
    let m = Map::deserialize(&mut de).map_err(|e| e.to_string())?;
    de.end().map_err(|e| e.to_string())?;
    Ok(m)
}

fn run_call(host: &mut dyn Host, sh: &Shared<'_>, c: CallFrame) -> io::Result<()> {
    let id = c.seq.to_string();
    sh.inflight.started(&CallStart {
        id: &id,
        progress_token: c.progress.then_some("0"),
        log_level: c.log,
        asks: c.asks,
        version: Version::V2026_07_28,
    });
    if c.asks.any() {
        sh.inflight.set_asker(Some(asker(sh.output.clone(), sh.answers.clone(), c.seq)));
    }
    let progress = sh.inflight.progress();
    let wake = {
        let mut st = lock(&sh.state);
        st.running = Some((c.seq, c.progress || c.log.is_some()));
        st.since = Some(Instant::now());
        st.parked
    };
    if wake {
        sh.wake.notify_one();
    }
    let outcome = match c.arguments.as_deref().map(parse_arguments).transpose() {
        Ok(args) => host.call_tool(c.tool as usize, args.as_ref(), &c.context),
        Err(e) => Err(ToolFailure::Error(format!("The worker could not read the arguments: {e}"))),
    };
    lock(&sh.state).running = None;
    sh.inflight.set_asker(None);
    // What the tool printed through C stdio goes out now.
    // SAFETY: fflush(NULL) flushes every open C output stream.
    unsafe {
        libc::fflush(std::ptr::null_mut());
    }
    let mut out = lock(&sh.output);
    forward(&mut out, progress.as_deref(), c.seq)?;
    sh.inflight.finished();
    write_frame(&mut out, &FromWorker::Result { seq: c.seq, outcome })
}

/// Send the tool's log messages and report waiting, if any.
fn forward(out: &mut File, progress: Option<&Progress>, seq: u64) -> io::Result<()> {
    for entry in progress.map(Progress::forward_logs).unwrap_or_default() {
        write_frame(out, &FromWorker::Log { seq, entry })?;
    }
    while let Some((progress, total, message)) = progress.and_then(Progress::forward_report) {
        write_frame(out, &FromWorker::Progress { seq, progress, total, message })?;
    }
    Ok(())
}

/// The helper thread (see the module documentation).
fn helper(sh: &Shared<'_>) {
    // The call the helper looked at last.
    let mut seen: Option<u64> = None;
    loop {
        let (seq, progress) = {
            let mut st = lock(&sh.state);
            loop {
                if st.stop {
                    return;
                }
                if let (Some(r), false) = (st.running, st.gone) {
                    let left =
                        st.since.map_or(Duration::ZERO, |t| (t + HELPER_ARM).saturating_duration_since(Instant::now()));
                    if left.is_zero() {
                        break r;
                    }
                    st = sh.wake.wait_timeout(st, left).unwrap_or_else(PoisonError::into_inner).0;
                    continue;
                }
                st.parked = true;
                st = sh.wake.wait(st).unwrap_or_else(PoisonError::into_inner);
                st.parked = false;
            }
        };
        // The first look at a call does not wait: its interrupt may have
        // been read with the call itself and wait in the buffer.
        let tick = if seen == Some(seq) {
            if progress {
                20
            } else {
                200
            }
        } else {
            0
        };
        seen = Some(seq);
        let readable = sys::readable(&sh.input, tick);
        {
            let mut frames = lock(&sh.frames);
            if lock(&sh.state).running.map(|r| r.0) != Some(seq) {
                continue;
            }
            let gone = readable
                && match frames.read_from(&mut &sh.input) {
                    Ok(0) => true,
                    Err(e) => !matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted),
                    Ok(_) => false,
                };
            while let Ok(Some(body)) = frames.next_if(|b| b.first() == Some(&b'I')) {
                if let Ok(ToWorker::Interrupt { seq: s }) = ToWorker::decode(body) {
                    if s == seq {
                        sh.inflight.interrupt_running();
                    }
                }
            }
            while let Ok(Some(body)) = frames.next_if(|b| b.first() == Some(&b'A')) {
                if let Ok(ToWorker::Answer { seq: s, outcome }) = ToWorker::decode(body) {
                    *lock(&sh.answers.answer) = Some((s, outcome));
                    sh.answers.ready.notify_all();
                }
            }
            if gone {
                // The server is gone: stop the tool, then the worker.
                lock(&sh.state).gone = true;
                sh.inflight.interrupt_running();
            }
        }
        if progress {
            let mut out = lock(&sh.output);
            if lock(&sh.state).running.map(|r| r.0) == Some(seq) {
                let p = sh.inflight.progress();
                if forward(&mut out, p.as_deref(), seq).is_err() {
                    // The engine is gone; the main thread finds out.
                    lock(&sh.state).gone = true;
                }
            }
        }
    }
}
