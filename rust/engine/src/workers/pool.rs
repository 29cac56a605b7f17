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

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Write};
use std::path::PathBuf;
use std::process::Child;
use std::sync::atomic::{fence, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, TryRecvError};
use serde_json::{Map, Value};

use super::calls::{CallState, Interrupt};
use super::sys;
use super::wire::{CallFrame, Frames, FromWorker, ToWorker, PROTOCOL};
use crate::host::{CallContext, Host, ToolFailure, ToolResult, ToolSpec, WorkerRun};
use crate::telemetry::masked;

/// Failed starts in a row after which the pool gives up.
pub const MAX_FAILED_STARTS: u32 = 3;

/// The fixed detail of the JSON-RPC error for a call the queue has no room
/// for (RULES N3).
pub const SERVER_BUSY: &str = "server busy: every worker is running a call and the queue is full; retry later";

/// How a driver looks for the next job after one: it keeps looking for this
/// long before it parks (waking a parked thread is slow on an idle virtual
/// machine; a client that sends calls one after another sends the next one
/// within this time).
const JOB_SPIN: Duration = Duration::from_micros(500);

/// After sending a call, how long the driver keeps reading its worker's pipe
/// before it sleeps in `poll` (a quick tool's answer comes back within this
/// time, and waking a thread parked in `poll` is slow on a virtual machine).
const RESULT_SPIN: Duration = Duration::from_micros(200);

/// While a call runs, how often its worker process is checked (a worker's
/// pipe can stay open after it died when a process it started holds it).
const CHECK_EVERY: Duration = Duration::from_secs(1);

/// How a worker is started: the program, its arguments, its working
/// directory and the environment added to the server's. The pool adds
/// `MCPLITE_WORKER=<number>`; the pipes are descriptors 3 (from the engine)
/// and 4 (to the engine).
#[derive(Debug, Clone, Default)]
pub struct WorkerCommand {
    pub program: PathBuf,
    pub args: Vec<OsString>,
    pub cwd: Option<PathBuf>,
    pub env: Vec<(OsString, OsString)>,
}

/// Settings of a pool.
#[derive(Debug, Clone)]
pub struct PoolOptions {
    /// Worker processes (at least 1).
    pub workers: usize,
    /// Calls that may wait for a worker when all are busy.
    pub max_queue: usize,
    pub command: WorkerCommand,
    /// The tool names the server lists, in order: every worker must serve
    /// exactly these.
    pub tools: Vec<String>,
    /// A worker must say hello within this time of its start.
    pub start_timeout: Duration,
    /// When stopping, how long a worker may take to exit after its pipe was
    /// closed before it is killed.
    pub stop_grace: Duration,
    /// How long a worker may take to stop a call after its cancellation
    /// before it is killed and replaced (a tool stuck in compiled code that
    /// never checks for interrupts; RULES N4.3).
    pub interrupt_grace: Duration,
}

impl PoolOptions {
    pub fn new(workers: usize, command: WorkerCommand, tools: Vec<String>) -> PoolOptions {
        PoolOptions {
            workers,
            max_queue: 64,
            command,
            tools,
            start_timeout: Duration::from_secs(120),
            stop_grace: Duration::from_secs(2),
            interrupt_grace: Duration::from_secs(5),
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

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The admission counters, shared with the tickets.
#[derive(Debug)]
struct Counters {
    capacity: usize,
    reserved: AtomicUsize,
    busy: AtomicUsize,
    live: AtomicUsize,
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

/// The pipe to one worker, shared with the calls it runs (to interrupt
/// them). Closing it asks the worker to finish.
struct Link {
    to: Mutex<Option<File>>,
}

impl Link {
    fn send(&self, frame: &ToWorker) -> io::Result<()> {
        let mut buf = Vec::with_capacity(64);
        frame.encode(&mut buf);
        match lock(&self.to).as_mut() {
            Some(f) => f.write_all(&buf),
            None => Err(io::Error::new(io::ErrorKind::BrokenPipe, "closed")),
        }
    }

    fn close(&self) {
        lock(&self.to).take();
    }
}

impl Interrupt for Link {
    fn interrupt(&self, seq: u64) {
        // A worker that is gone cannot be interrupted; its call ends anyway.
        let _ = self.send(&ToWorker::Interrupt { seq });
    }
}

/// One live worker process.
struct Worker {
    /// 0-based slot.
    slot: usize,
    child: Child,
    pid: u32,
    link: Arc<Link>,
    from: File,
    frames: Frames,
    /// Calls sent so far (the next one's `seq`).
    seq: u64,
    /// The thread writing the worker's output to stderr (RULES N1.2).
    output: Option<std::thread::JoinHandle<()>>,
}

/// How a worker ended, as a sentence's end: "exited with status 3".
fn ending(child: &mut Child) -> String {
    // The pipe closed as the process exits: give it a moment to be reaped.
    let until = Instant::now() + Duration::from_secs(2);
    loop {
        match child.try_wait() {
            Ok(Some(st)) => return sys::describe(st),
            Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(5)),
            Ok(None) => {
                sys::kill(child);
                let _ = child.wait();
                return "stopped answering (it was killed)".into();
            }
            Err(e) => return format!("ended (its status cannot be read: {e})"),
        }
    }
}

enum Fail {
    /// The process ended (the sentence's end says how).
    Died(String),
    /// It broke the protocol (it was killed).
    Broken(String),
}

impl Worker {
    /// How it ended ([`ending`]), after what it printed last.
    fn ended(&mut self) -> String {
        let how = ending(&mut self.child);
        self.flush_output();
        how
    }

    /// Wait (at most a second) for the worker's last output to be written,
    /// so that it comes before what the engine says of the worker's end.
    fn flush_output(&mut self) {
        if let Some(h) = self.output.take() {
            let until = Instant::now() + Duration::from_secs(1);
            while !h.is_finished() && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(2));
            }
            if h.is_finished() {
                let _ = h.join();
            }
        }
    }

    fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Wait for the next frame until `deadline` (`None`: no limit), checking
    /// every [`CHECK_EVERY`] that the process lives.
    fn next_frame(&mut self, deadline: Option<Instant>) -> Result<Option<FromWorker>, Fail> {
        self.next_frame_spin(deadline, None)
    }

    /// [`Worker::next_frame`], reading the pipe without sleeping until
    /// `spin_until`.
    fn next_frame_spin(
        &mut self,
        deadline: Option<Instant>,
        spin_until: Option<Instant>,
    ) -> Result<Option<FromWorker>, Fail> {
        loop {
            match self.frames.next_frame() {
                Ok(Some(body)) => {
                    return FromWorker::decode(body).map(Some).map_err(|e| self.broken(&e.to_string()));
                }
                Ok(None) => {}
                Err(e) => return Err(self.broken(&e.to_string())),
            }
            let now = Instant::now();
            if deadline.is_some_and(|d| now >= d) {
                return Ok(None);
            }
            if spin_until.is_some_and(|t| now < t) {
                match self.frames.read_from(&mut self.from) {
                    Ok(0) => return Err(Fail::Died(self.ended())),
                    Ok(_) => {}
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => std::thread::yield_now(),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(self.broken(&format!("its pipe failed: {e}"))),
                }
                continue;
            }
            let wait = deadline.map_or(CHECK_EVERY, |d| (d - now).min(CHECK_EVERY));
            if !sys::readable(&self.from, wait.as_millis().max(1) as i32) {
                if !self.alive() {
                    return Err(Fail::Died(self.ended()));
                }
                continue;
            }
            match self.frames.read_from(&mut self.from) {
                Ok(0) => return Err(Fail::Died(self.ended())),
                Ok(_) => {}
                Err(e) if matches!(e.kind(), io::ErrorKind::Interrupted | io::ErrorKind::WouldBlock) => {}
                Err(e) => return Err(self.broken(&format!("its pipe failed: {e}"))),
            }
        }
    }

    fn broken(&mut self, why: &str) -> Fail {
        sys::kill(&mut self.child);
        let _ = self.child.wait();
        self.flush_output();
        Fail::Broken(why.to_string())
    }

    /// Run one call: send it, relay its progress, return its outcome. A call
    /// still running `grace` after its cancellation kills the worker (RULES
    /// N4.3): its outcome is then [`Fail::Died`].
    fn call(
        &mut self,
        frame: CallFrame,
        state: Option<&CallState>,
        grace: Duration,
    ) -> Result<Result<ToolResult, ToolFailure>, Fail> {
        let seq = frame.seq;
        self.link.send(&ToWorker::Call(frame)).map_err(|_| Fail::Died(self.ended()))?;
        // Attached only now, so that a cancellation's interrupt never reaches
        // the worker before the call it is for (the worker would drop it);
        // one cancelled since the caller looked is interrupted here.
        if let Some(c) = state {
            if !c.attach(self.link.clone(), seq) {
                let _ = self.link.send(&ToWorker::Interrupt { seq });
            }
        }
        let spin = Some(Instant::now() + RESULT_SPIN);
        let mut cancelled: Option<Instant> = None;
        loop {
            // With a call state, wake at least every CHECK_EVERY to see
            // whether the call was cancelled and has outlived its grace.
            let deadline = state.map(|_| Instant::now() + CHECK_EVERY);
            match self.next_frame_spin(deadline, spin)? {
                Some(FromWorker::Result { seq: s, outcome }) if s == seq => return Ok(outcome),
                Some(FromWorker::Progress { seq: s, progress, total, message }) if s == seq => {
                    if let Some(c) = state {
                        c.report(progress, total, message.as_deref());
                    }
                }
                // A late report of an earlier call.
                Some(FromWorker::Progress { .. }) => {}
                Some(_) => return Err(self.broken("it sent an unexpected frame")),
                None => {}
            }
            if state.is_some_and(|c| c.is_cancelled()) {
                let since = *cancelled.get_or_insert_with(Instant::now);
                if since.elapsed() >= grace {
                    sys::kill(&mut self.child);
                    let _ = self.child.wait();
                    self.flush_output();
                    return Err(Fail::Died(format!(
                        "did not stop within {} s of the call's cancellation (it was killed)",
                        grace.as_secs_f64()
                    )));
                }
            }
        }
    }

    /// Close its pipe and wait for it to exit, at most `grace`; then kill it.
    fn stop(mut self, grace: Duration) {
        self.link.close();
        let until = Instant::now() + grace;
        while Instant::now() < until {
            if !matches!(self.child.try_wait(), Ok(None)) {
                self.flush_output();
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        sys::kill(&mut self.child);
        let _ = self.child.wait();
        self.flush_output();
    }
}

/// A request to the spawner thread.
type SpawnRequest = (usize, Sender<io::Result<sys::Spawned>>);

/// The pool (see the module documentation).
pub struct Pool {
    opts: PoolOptions,
    counters: Arc<Counters>,
    /// Each slot's worker while no driver holds it (at start and stop).
    slots: Vec<Mutex<Option<Worker>>>,
    spawner: Mutex<Option<(Sender<SpawnRequest>, JoinHandle<()>)>>,
    failed_starts: AtomicU32,
    failure: Mutex<Option<String>>,
    restarts: AtomicU64,
    /// The one driver spinning for the next job ([`NO_SPINNER`]: none); a
    /// driver that finishes a job spins only when no other does. Sequential
    /// calls then mostly stay on one driver and worker, and on a machine with
    /// few cores idle drivers do not spin beside it for nothing.
    spinner: AtomicUsize,
    /// Drivers that do not spin wait here for a job, not in the channel: a
    /// receiver blocked in the channel would be woken by every job, even one
    /// the spinning driver takes (a wasted wake-up per call, on the cores the
    /// client and the worker need). [`Pool::job_sent`] wakes one only when no
    /// driver spins; the count is the wake-ups so far.
    parked: Mutex<u64>,
    unpark: Condvar,
}

const NO_SPINNER: usize = usize::MAX;

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
            parked: Mutex::new(0),
            unpark: Condvar::new(),
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
                } else if tools != self.opts.tools {
                    format!(
                        "serves other tools ({}) than the server ({}): a worker runs the same script, which must \
                         build the same tools every time",
                        list(&tools),
                        list(&self.opts.tools)
                    )
                } else {
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
    fn replace(&self, slot: usize) -> Option<Worker> {
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
                return None;
            }
            match c.reserved.compare_exchange(n, n + 1, Ordering::SeqCst, Ordering::SeqCst) {
                Ok(_) => return Some(Ticket(c.clone())),
                Err(now) => n = now,
            }
        }
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

    /// Drive worker `slot`: run the jobs of `jobs` on it, one at a time, with
    /// `run` (which answers the job through the [`WorkerHost`]), until the
    /// channel is closed and empty. One thread per worker (see
    /// [`Pool::spawn_drivers`]).
    pub fn drive<J>(&self, slot: usize, jobs: &Receiver<J>, run: &(dyn Fn(J, &mut WorkerHost<'_>) + Sync)) {
        let worker = lock(&self.slots[slot]).take();
        let mut host = WorkerHost { pool: self, slot, worker, call: None, last: None, claimed: false };
        let mut spin_until: Option<Instant> = None;
        loop {
            let spun = spin_until.and_then(|t| spin_recv(jobs, t));
            if spin_until.is_some() {
                // The spin is over (with a job or without): another driver
                // may spin while this one runs its job or parks.
                let _ = self.spinner.compare_exchange(slot, NO_SPINNER, Ordering::SeqCst, Ordering::SeqCst);
                // Pairs with the fence in `job_sent`: a job sent while this
                // driver still looked like the spinner is seen below (then a
                // parked driver is woken for it), or this one takes it as it
                // parks.
                fence(Ordering::SeqCst);
            }
            let job = match spun {
                Some(j) => Ok(j),
                None => self.park_recv(jobs),
            };
            if job.is_ok() && !jobs.is_empty() {
                // More jobs wait (sent while a driver spun, or at once): the
                // next parked driver takes one, and wakes the next.
                self.wake_driver();
            }
            match job {
                Ok(job) => {
                    run(job, &mut host);
                    host.call = None;
                    if host.worker.is_none() {
                        // Its worker died during the call: the replacement
                        // starts now that the answer is out.
                        host.ensure_worker();
                    }
                    // Only one driver at a time spins (see `spinner`); this
                    // one may have claimed it as its worker answered.
                    let claimed = std::mem::take(&mut host.claimed)
                        || self.spinner.compare_exchange(NO_SPINNER, slot, Ordering::SeqCst, Ordering::SeqCst).is_ok();
                    spin_until = claimed.then(|| Instant::now() + JOB_SPIN);
                }
                Err(RecvTimeoutError::Timeout) => {
                    spin_until = None;
                    // A worker that died while idle is replaced now, so the
                    // next call does not wait for it.
                    host.ensure_worker();
                }
                Err(RecvTimeoutError::Disconnected) => break,
            }
        }
        if let Some(w) = host.worker.take() {
            *lock(&self.slots[slot]) = Some(w);
        }
    }

    /// Wait up to [`CHECK_EVERY`] for a job, parked until [`Pool::job_sent`]
    /// or [`Pool::wake_drivers`] wakes this driver (see `parked`).
    fn park_recv<J>(&self, jobs: &Receiver<J>) -> Result<J, RecvTimeoutError> {
        let until = Instant::now() + CHECK_EVERY;
        loop {
            // Read before looking at the channel, so that a wake-up in
            // between is not lost.
            let seen = *lock(&self.parked);
            match jobs.try_recv() {
                Ok(j) => return Ok(j),
                Err(TryRecvError::Disconnected) => return Err(RecvTimeoutError::Disconnected),
                Err(TryRecvError::Empty) => {}
            }
            let now = Instant::now();
            if now >= until {
                return Err(RecvTimeoutError::Timeout);
            }
            let g = lock(&self.parked);
            let _ = self.unpark.wait_timeout_while(g, until - now, |n| *n == seen);
        }
    }

    fn wake_driver(&self) {
        let mut n = lock(&self.parked);
        *n = n.wrapping_add(1);
        self.unpark.notify_one();
    }

    /// A transport sent a job to the drivers' channel: wake a parked driver
    /// for it, unless one spins for jobs (it takes this one; see `parked`).
    pub fn job_sent(&self) {
        // Pairs with the fence in `drive` after a driver stops spinning.
        fence(Ordering::SeqCst);
        if self.spinner.load(Ordering::SeqCst) == NO_SPINNER {
            self.wake_driver();
        }
    }

    /// The drivers' channel was closed: wake every parked driver, so that
    /// each finds it closed and returns.
    pub fn wake_drivers(&self) {
        let mut n = lock(&self.parked);
        *n = n.wrapping_add(1);
        self.unpark.notify_all();
    }

    /// Start one driver per worker in `scope` (see [`Pool::drive`]).
    pub fn spawn_drivers<'scope, 'env, J: Send + 'env>(
        &'env self,
        scope: &'scope std::thread::Scope<'scope, 'env>,
        jobs: &'env Receiver<J>,
        run: &'env (dyn Fn(J, &mut WorkerHost<'_>) + Sync),
    ) {
        for slot in 0..self.opts.workers {
            masked(|| {
                std::thread::Builder::new()
                    .name(format!("mcplite-worker-{}", slot + 1))
                    .spawn_scoped(scope, move || self.drive(slot, jobs, run))
                    .expect("spawn a worker's driver thread")
            });
        }
    }

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
        let grace = self.opts.stop_grace;
        for w in workers {
            w.stop(grace);
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

fn spin_recv<J>(jobs: &Receiver<J>, until: Instant) -> Option<J> {
    loop {
        match jobs.try_recv() {
            Ok(j) => return Some(j),
            Err(TryRecvError::Empty) if Instant::now() < until => std::thread::yield_now(),
            Err(_) => return None,
        }
    }
}

/// The [`Host`] a driver hands the transport for one job: runs the call on
/// the driver's worker (see the module documentation).
pub struct WorkerHost<'p> {
    pool: &'p Pool,
    slot: usize,
    worker: Option<Worker>,
    call: Option<Arc<CallState>>,
    last: Option<WorkerRun>,
    /// This driver became the spinner as its worker answered (see
    /// [`Host::call_tool`] below).
    claimed: bool,
}

impl WorkerHost<'_> {
    /// The call the next [`Host::call_tool`] belongs to: it is cancelled
    /// through it, its progress reported to it.
    pub fn set_call(&mut self, call: Arc<CallState>) {
        self.call = Some(call);
    }

    /// Make sure a live worker is there, replacing a dead one. False when
    /// none can be started (the pool has failed).
    fn ensure_worker(&mut self) -> bool {
        if let Some(w) = self.worker.as_mut() {
            if w.alive() {
                return true;
            }
            let mut w = self.worker.take().expect("checked");
            let how = w.ended();
            eprintln!("mcplite: worker {} (process {}) {how} while idle; starting a new one", w.slot + 1, w.pid);
            self.pool.counters.live.fetch_sub(1, Ordering::SeqCst);
        }
        self.worker = self.pool.replace(self.slot);
        self.worker.is_some()
    }

    fn lost(&mut self, fail: Fail) -> ToolFailure {
        let w = self.worker.take().expect("a worker ran the call");
        self.pool.counters.live.fetch_sub(1, Ordering::SeqCst);
        let how = match fail {
            Fail::Died(how) => how,
            Fail::Broken(why) => format!("broke the worker protocol ({why}) and was stopped"),
        };
        eprintln!("mcplite: worker {} (process {}) {how} during a tool call; starting a new one", w.slot + 1, w.pid);
        ToolFailure::Error(format!(
            "The R worker process running this tool call (worker {}, process {}) {how}, so the call has no result. \
             The server goes on with a new worker; other calls are not affected.",
            w.slot + 1,
            w.pid
        ))
    }
}

impl Host for WorkerHost<'_> {
    fn tools(&mut self) -> Vec<ToolSpec> {
        Vec::new()
    }

    fn call_tool(
        &mut self,
        index: usize,
        arguments: Option<&Map<String, Value>>,
        ctx: &CallContext,
    ) -> Result<ToolResult, ToolFailure> {
        self.last = None;
        let call = self.call.clone();
        if call.as_ref().is_some_and(|c| c.is_cancelled()) {
            return Err(ToolFailure::Interrupted);
        }
        if !self.ensure_worker() {
            let why = self.pool.failure().unwrap_or_else(|| "the server is stopping".into());
            return Err(ToolFailure::Error(format!("No R worker process could run this tool call: {why}.")));
        }
        let w = self.worker.as_mut().expect("ensured");
        w.seq += 1;
        let seq = w.seq;
        let frame = CallFrame {
            seq,
            tool: index as u32,
            arguments: arguments.map(|a| serde_json::to_string(a).unwrap_or_else(|_| "{}".into())),
            context: ctx.clone(),
            progress: call.as_ref().is_some_and(|c| c.has_progress()),
        };
        self.last = Some(WorkerRun {
            worker: (self.slot + 1) as u32,
            pid: w.pid,
            queue_wait: call.as_ref().map_or(Duration::ZERO, |c| c.arrived().elapsed()),
        });
        let busy = &self.pool.counters.busy;
        busy.fetch_add(1, Ordering::SeqCst);
        let out = w.call(frame, call.as_deref(), self.pool.opts.interrupt_grace);
        busy.fetch_sub(1, Ordering::SeqCst);
        if out.is_ok() {
            // The driver is free once the answer is out, and a client that
            // calls one tool after another sends the next call as soon as it
            // reads it: this driver spins for it from now on, so that call
            // wakes no other driver (see `spinner`). Not after a crash: the
            // replacement starts first.
            if !self.claimed {
                let spinner = &self.pool.spinner;
                self.claimed =
                    spinner.compare_exchange(NO_SPINNER, self.slot, Ordering::SeqCst, Ordering::SeqCst).is_ok();
            }
        }
        if let Some(c) = &call {
            c.detach();
        }
        match out {
            Ok(outcome) => outcome,
            Err(fail) => {
                let failure = self.lost(fail);
                // Replaced before the next job (the answer goes out first).
                Err(failure)
            }
        }
    }

    fn worker_run(&self) -> Option<WorkerRun> {
        self.last
    }
}

/// The host of a call the queue had no room for: refused before it runs
/// (RULES N3).
pub struct Busy;

impl Host for Busy {
    fn tools(&mut self) -> Vec<ToolSpec> {
        Vec::new()
    }

    fn call_tool(
        &mut self,
        _: usize,
        _: Option<&Map<String, Value>>,
        _: &CallContext,
    ) -> Result<ToolResult, ToolFailure> {
        Err(ToolFailure::Error(SERVER_BUSY.into()))
    }

    fn admit(&mut self) -> Result<(), &'static str> {
        Err(SERVER_BUSY)
    }
}
