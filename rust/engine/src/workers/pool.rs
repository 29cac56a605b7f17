//! The pool of worker processes: starting them, admitting calls (the bounded
//! queue), running a call on a worker, noticing a worker that died,
//! replacing it, and stopping them all (RULES N1–N6).
//!
//! # Threads and ownership
//!
//! Every worker process is started by one long-lived thread of the pool
//! (the spawner, started with signals blocked): on Linux a worker is killed
//! when the thread that started it ends (`PR_SET_PDEATHSIG`), so workers
//! die with the server even when it is killed with SIGKILL. The spawner
//! ends only after every worker was stopped.
//!
//! A transport runs calls on *drivers*, one thread per worker
//! ([`Pool::drive`]), which take jobs from one channel in arrival order: a
//! job waits there until a driver is free, which is the queue. The
//! transport tells the pool of each job it sends ([`Pool::job_sent`]) and
//! when it closes the channel ([`Pool::wake_drivers`]): an idle driver
//! either spins for the next job (one at a time) or sleeps until then. A driver
//! owns its worker while it drives it and hands the transport a
//! [`WorkerHost`], the [`Host`] that sends a call to that worker and waits
//! for its frames: progress reports go to the call's [`CallState`], the
//! result is the call's outcome. Before a call is queued the transport
//! takes a [`Ticket`] ([`Pool::reserve`]): there are as many as workers plus
//! the queue's length, so a call beyond them is refused at once (a JSON-RPC
//! error, `503` over HTTP).
//!
//! # Crashes
//!
//! A worker whose pipe ends, that sends a malformed frame, or whose process
//! is found to have exited (checked between calls and every second during
//! one), is dead. The call it was running becomes a tool error saying how
//! the process ended; the driver then starts a replacement before it takes
//! its next job (the other drivers go on). A worker found dead before a call
//! was sent to it is replaced first, so the call is not lost. A worker that
//! cannot start (it exits or fails before its hello, does not say hello in
//! time, or serves other tools) counts as a failed start; after
//! [`MAX_FAILED_STARTS`] in a row the pool has failed ([`Pool::failure`]):
//! the transport stops the server with that message instead of starting
//! workers in a loop.

use std::io;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::Sender;

use super::process::{lock, Fail, Link, Worker};
use super::sys::{self, WorkerCommand};
use super::wire::{Frames, FromWorker, PROTOCOL};
use crate::message::Message;
use crate::signals::masked;

/// Failed starts in a row after which the pool gives up.
pub const MAX_FAILED_STARTS: u32 = 3;

/// Settings of a pool.
#[derive(Debug, Clone)]
pub struct PoolOptions {
    /// Worker processes (at least 1).
    pub workers: usize,
    /// Calls that may wait for a worker when all are busy.
    pub max_queue: usize,
    pub command: WorkerCommand,
    /// The tool names the server lists, in order: every worker must serve
    /// exactly these, less [`PoolOptions::host_tools`].
    pub tools: Vec<String>,
    /// Tools the server runs itself, on its own thread, not in workers (a
    /// live-session server's session tools, RULES N7.6); empty: every call
    /// goes to the workers.
    pub host_tools: Vec<String>,
    /// A worker must say hello within this time of its start.
    pub start_timeout: Duration,
    /// When stopping, how long a worker may take to exit after its pipe was
    /// closed before it is killed.
    pub stop_grace: Duration,
    /// How long a worker may take to stop a call after its cancellation
    /// before it is killed and replaced (a tool stuck in compiled code that
    /// never checks for interrupts; RULES N4.3).
    pub interrupt_grace: Duration,
    /// A worker whose resident memory after a call exceeds its memory when
    /// it became ready by more than this many bytes is replaced (RULES
    /// N5.3); `None`: never.
    pub max_growth: Option<u64>,
    /// The most CPU time one call may take in its worker before the kernel
    /// ends the worker (RULES N7.5); `None`: no limit.
    pub call_cpu: Option<Duration>,
    /// The most wall time one call may take in its worker (RULES N7.7):
    /// then it is interrupted, and its worker killed and replaced when it
    /// has not stopped `interrupt_grace` later; `None`: no limit.
    pub call_timeout: Option<Duration>,
}

impl PoolOptions {
    pub fn new(workers: usize, command: WorkerCommand, tools: Vec<String>) -> PoolOptions {
        PoolOptions {
            workers,
            max_queue: 64,
            command,
            tools,
            host_tools: Vec::new(),
            start_timeout: Duration::from_secs(120),
            stop_grace: Duration::from_secs(1),
            interrupt_grace: Duration::from_secs(5),
            max_growth: Some(1 << 30),
            call_cpu: None,
            call_timeout: None,
        }
    }
}

/// Why the pool could not start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolError(pub String);

impl std::fmt::Display for PoolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PoolError {}

/// What `/health` reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PoolStats {
    pub workers: usize,
    /// Workers running a call.
    pub busy: usize,
    /// Workers ready for a call.
    pub idle: usize,
    /// Calls admitted and waiting for a worker.
    pub queued: usize,
    /// Workers started to replace one that ended.
    pub restarts: u64,
}

/// The admission counters, shared with the tickets.
#[derive(Debug)]
pub(super) struct Counters {
    capacity: usize,
    reserved: AtomicUsize,
    pub(super) busy: AtomicUsize,
    pub(super) live: AtomicUsize,
}

/// A place among the calls the pool admits (running or queued); given back
/// when dropped.
#[derive(Debug)]
pub struct Ticket(Arc<Counters>);

impl Drop for Ticket {
    fn drop(&mut self) {
        self.0.reserved.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A request to the spawner thread.
type SpawnRequest = (usize, Sender<io::Result<sys::Spawned>>);

/// The pool (see the module documentation).
pub struct Pool {
    pub(super) opts: PoolOptions,
    pub(super) counters: Arc<Counters>,
    /// Each slot's worker while no driver holds it (at start and stop).
    pub(super) slots: Vec<Mutex<Option<Worker>>>,
    spawner: Mutex<Option<(Sender<SpawnRequest>, JoinHandle<()>)>>,
    failed_starts: AtomicU32,
    failure: Mutex<Option<String>>,
    restarts: AtomicU64,
    /// The one driver spinning for the next job ([`NO_SPINNER`]: none); a
    /// driver that finishes a job spins only when no other does. Sequential
    /// calls then mostly stay on one driver and worker, and on a machine with
    /// few cores idle drivers do not spin beside it for nothing.
    pub(super) spinner: AtomicUsize,
    /// Drivers that do not spin wait here for a job, not in the channel: a
    /// receiver blocked in the channel would be woken by every job, even one
    /// the spinning driver takes (a wasted wake-up per call, on the cores the
    /// client and the worker need). [`Pool::job_sent`] wakes one only when no
    /// driver spins; the count is the wake-ups so far.
    pub(super) parked: Mutex<u64>,
    pub(super) unpark: Condvar,
    /// Each server tool's number in a worker's list ([`Pool::worker_index`]).
    worker_index: Vec<Option<u32>>,
    /// Calls refused for want of room since the last line that said so, and
    /// when that line was written (RULES N3.1: at most one per
    /// [`FULL_SAID_EVERY`]).
    refused: AtomicU64,
    full_said: Mutex<Option<Instant>>,
}

/// How often a full queue is said on standard error, at most.
const FULL_SAID_EVERY: Duration = Duration::from_secs(10);

pub(super) const NO_SPINNER: usize = usize::MAX;

impl Pool {
    /// Start the workers and wait until each has said hello. Any that cannot
    /// start fails the whole pool (every worker started is stopped).
    pub fn start(opts: PoolOptions) -> Result<Pool, PoolError> {
        if opts.workers == 0 {
            return Err(PoolError("a pool needs at least one worker".into()));
        }
        let (tx, rx) = crossbeam_channel::unbounded::<SpawnRequest>();
        let command = opts.command.clone();
        let handle = masked(|| {
            std::thread::Builder::new().name("mcplite-spawner".into()).spawn(move || {
                for (slot, reply) in rx {
                    let _ = reply.send(sys::spawn(&command, slot));
                }
            })
        })
        .map_err(|e| PoolError(format!("cannot start the worker pool's thread: {e}")))?;
        let n = opts.workers;
        let pool = Pool {
            counters: Arc::new(Counters {
                capacity: n + opts.max_queue,
                reserved: AtomicUsize::new(0),
                busy: AtomicUsize::new(0),
                live: AtomicUsize::new(0),
            }),
            slots: (0..n).map(|_| Mutex::new(None)).collect(),
            spawner: Mutex::new(Some((tx, handle))),
            failed_starts: AtomicU32::new(0),
            failure: Mutex::new(None),
            restarts: AtomicU64::new(0),
            spinner: AtomicUsize::new(NO_SPINNER),
            refused: AtomicU64::new(0),
            full_said: Mutex::new(None),
            parked: Mutex::new(0),
            unpark: Condvar::new(),
            worker_index: {
                let mut next = 0u32;
                opts.tools
                    .iter()
                    .map(|t| {
                        (!opts.host_tools.contains(t)).then(|| {
                            next += 1;
                            next - 1
                        })
                    })
                    .collect()
            },
            opts,
        };
        // Start all, then greet all: they start up in parallel.
        let deadline = Instant::now() + pool.opts.start_timeout;
        let mut started = Vec::with_capacity(n);
        for slot in 0..n {
            match pool.launch(slot) {
                Ok(w) => started.push(w),
                Err(e) => {
                    pool.stop_all(started);
                    return Err(PoolError(format!("worker 1 of {n} could not be started: {e}")));
                }
            }
        }
        let mut ready = Vec::with_capacity(n);
        let mut why = None;
        for mut w in started {
            if why.is_some() {
                ready.push(w);
                continue;
            }
            match pool.greet(&mut w, deadline) {
                Ok(()) => ready.push(w),
                Err(e) => {
                    why = Some(format!("worker {} of {n} (process {}) {e}", w.slot + 1, w.pid));
                    ready.push(w);
                }
            }
        }
        if let Some(why) = why {
            pool.stop_all(ready);
            return Err(PoolError(why));
        }
        for w in ready {
            let slot = w.slot;
            *lock(&pool.slots[slot]) = Some(w);
        }
        pool.counters.live.store(n, Ordering::SeqCst);
        Ok(pool)
    }

    fn launch(&self, slot: usize) -> io::Result<Worker> {
        let (tx, rx) = crossbeam_channel::bounded(1);
        {
            let g = lock(&self.spawner);
            let (spawn, _) = g.as_ref().ok_or_else(|| io::Error::other("the pool is stopped"))?;
            spawn.send((slot, tx)).map_err(|_| io::Error::other("the pool's thread is gone"))?;
        }
        let s = rx.recv().map_err(|_| io::Error::other("the pool's thread is gone"))??;
        sys::set_nonblocking(&s.from);
        let pid = s.child.id();
        Ok(Worker {
            slot,
            child: s.child,
            pid,
            link: Arc::new(Link { to: Mutex::new(Some(s.to)) }),
            from: s.from,
            frames: Frames::new(),
            seq: 0,
            output: s.output,
            ready_rss: None,
            tmp: s.tmp,
            cpu_limit: None,
        })
    }

    /// Wait for the worker's hello; on failure it is stopped and the error
    /// ends a sentence ("exited with status 1 before it was ready").
    fn greet(&self, w: &mut Worker, deadline: Instant) -> Result<(), String> {
        let why = match w.next_frame(Some(deadline)) {
            Ok(Some(FromWorker::Hello { protocol, tools, .. })) => {
                if protocol != PROTOCOL {
                    format!(
                        "speaks worker protocol {protocol}, not {PROTOCOL}: the worker loaded another version of \
                         mcplite"
                    )
                } else if tools != self.worker_tools() {
                    format!(
                        "serves other tools ({}) than the server ({}): a worker runs the same script, which must \
                         build the same tools every time",
                        list(&tools),
                        list(&self.worker_tools())
                    )
                } else {
                    w.ready_rss = sys::resident_bytes(w.pid);
                    return Ok(());
                }
            }
            Ok(Some(_)) => "sent something else than its hello".into(),
            Ok(None) => format!("was not ready within {} s", self.opts.start_timeout.as_secs()),
            Err(Fail::Died(how)) => format!("{how} before it was ready"),
            Err(Fail::Broken(why)) => format!("failed before it was ready: {why}"),
        };
        sys::kill(&mut w.child);
        let _ = w.child.wait();
        w.flush_output();
        Err(why)
    }

    /// Start a worker for `slot` to replace one that ended, trying again
    /// after a failed start until [`MAX_FAILED_STARTS`] failed in a row
    /// (then the pool has failed and `None` is returned).
    pub(super) fn replace(&self, slot: usize) -> Option<Worker> {
        let mut backoff = Duration::from_millis(100);
        loop {
            if self.failure().is_some() || lock(&self.spawner).is_none() {
                return None;
            }
            let started = self.launch(slot);
            let result = match started {
                Ok(mut w) => match self.greet(&mut w, Instant::now() + self.opts.start_timeout) {
                    Ok(()) => Ok(w),
                    Err(e) => Err(format!("worker {} (process {}) {e}", slot + 1, w.pid)),
                },
                Err(e) => Err(format!("worker {} could not be started: {e}", slot + 1)),
            };
            match result {
                Ok(w) => {
                    self.failed_starts.store(0, Ordering::SeqCst);
                    self.restarts.fetch_add(1, Ordering::SeqCst);
                    self.counters.live.fetch_add(1, Ordering::SeqCst);
                    return Some(w);
                }
                Err(why) => {
                    let n = self.failed_starts.fetch_add(1, Ordering::SeqCst) + 1;
                    if n >= MAX_FAILED_STARTS {
                        let msg = format!(
                            "worker processes keep failing to start ({n} in a row; the last: {why}), so the \
                             server stops"
                        );
                        lock(&self.failure).get_or_insert(msg);
                        return None;
                    }
                    eprintln!("mcplite: {why}; starting it again");
                    std::thread::sleep(backoff);
                    backoff *= 2;
                }
            }
        }
    }

    /// A place for one more call, running or queued; `None` when the queue
    /// is full (RULES N3).
    pub fn reserve(&self) -> Option<Ticket> {
        let c = &self.counters;
        let mut n = c.reserved.load(Ordering::SeqCst);
        loop {
            if n >= c.capacity {
                self.say_full();
                return None;
            }
            match c.reserved.compare_exchange(n, n + 1, Ordering::SeqCst, Ordering::SeqCst) {
                Ok(_) => return Some(Ticket(c.clone())),
                Err(now) => n = now,
            }
        }
    }

    /// RULES N3.1: a refusal for want of room is said on standard error,
    /// the first at once, then at most once every [`FULL_SAID_EVERY`] with
    /// the number refused since.
    fn say_full(&self) {
        self.refused.fetch_add(1, Ordering::SeqCst);
        let mut said = lock(&self.full_said);
        if said.is_some_and(|t| t.elapsed() < FULL_SAID_EVERY) {
            return;
        }
        *said = Some(Instant::now());
        let n = self.refused.swap(0, Ordering::SeqCst);
        eprintln!(
            "mcplite: server busy: every worker process ({}) is running a tool call and {} calls wait for one (the \
             limit, max_queue), so tool calls are refused (503 over HTTP) until one finishes; {n} refused{}",
            self.opts.workers,
            self.opts.max_queue,
            if said.is_some() && n > 1 { " since the last such line" } else { "" }
        );
    }

    /// The tools a worker serves, in the server's order (RULES N7.6).
    pub fn worker_tools(&self) -> Vec<String> {
        self.opts.tools.iter().filter(|t| !self.opts.host_tools.contains(t)).cloned().collect()
    }

    /// The number of the server's tool `index` in a worker's list: its
    /// index less the tools the server runs itself before it; `None` for
    /// one of those (RULES N7.6).
    pub(super) fn worker_index(&self, index: usize) -> Option<u32> {
        self.worker_index.get(index).copied().flatten()
    }

    /// Does tool call `msg` run in a worker? Every call does, except one
    /// naming a tool the server runs itself ([`PoolOptions::host_tools`]).
    pub fn runs(&self, msg: &Message) -> bool {
        if self.opts.host_tools.is_empty() {
            return true;
        }
        let name = msg.params.as_ref().and_then(|p| p.get("name")).and_then(serde_json::Value::as_str);
        name.is_none_or(|n| !self.opts.host_tools.iter().any(|h| h == n))
    }

    /// Set when workers kept failing to start: why the server must stop.
    pub fn failure(&self) -> Option<String> {
        lock(&self.failure).clone()
    }

    pub fn workers(&self) -> usize {
        self.opts.workers
    }

    pub fn stats(&self) -> PoolStats {
        let c = &self.counters;
        let busy = c.busy.load(Ordering::SeqCst);
        let live = c.live.load(Ordering::SeqCst);
        PoolStats {
            workers: self.opts.workers,
            busy,
            idle: live.saturating_sub(busy),
            queued: c.reserved.load(Ordering::SeqCst).saturating_sub(busy),
            restarts: self.restarts.load(Ordering::SeqCst),
        }
    }
}

impl Pool {
    /// Stop every worker (close its pipe, wait up to the grace, kill it),
    /// then the spawner. Drivers must have returned.
    pub fn shutdown(&self) {
        let workers: Vec<Worker> = self.slots.iter().filter_map(|s| lock(s).take()).collect();
        self.stop_all(workers);
        if let Some((tx, handle)) = lock(&self.spawner).take() {
            drop(tx);
            let _ = handle.join();
        }
    }

    fn stop_all(&self, workers: Vec<Worker>) {
        for w in &workers {
            w.link.close();
        }
        // Every pipe is closed: they exit side by side, within one grace.
        let until = Instant::now() + self.opts.stop_grace;
        for w in workers {
            w.stop_by(until);
        }
        self.counters.live.store(0, Ordering::SeqCst);
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.shutdown();
    }
}

fn list(names: &[String]) -> String {
    if names.is_empty() {
        return "none".into();
    }
    let shown: Vec<String> = names.iter().take(5).map(|n| format!("\"{n}\"")).collect();
    let more = if names.len() > 5 { format!(" and {} more", names.len() - 5) } else { String::new() };
    format!("{}{more}", shown.join(", "))
}
