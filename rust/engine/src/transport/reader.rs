//! The request reader: who reads the request stream, and when (RULES S3).
//!
//! Reading is handed back and forth between two threads. While the serving
//! thread (R's main thread in production) waits for work it reads the stream
//! itself, so a request costs one wake-up, as in a single-threaded server.
//! Once it has been busy with one message (running a tool, or writing a
//! response the client is not reading yet) for longer than [`HANDOFF`], the
//! reader thread reads and queues whatever arrives: a client that writes
//! everything before reading answers never blocks. The reader thread also
//! reads the rest of a long line once the first part is in (a 10 MB
//! argument arrives in many pieces; one thread looping over reads does that
//! best). Short calls never involve the reader thread, so sequential and
//! pipelined traffic pays no thread hand-off.
//!
//! All reading and framing happens under one lock (`Shared::pump`), after
//! a readiness check made under that lock, so lines reach the queue in
//! stream order whichever thread read them, and no thread blocks in `read`
//! while holding the lock.
//!
//! # The hand-off
//!
//! Flags in `Shared`: `busy` (the serving thread handles a message),
//! `turn` (incremented per message), `partial` (the framer holds part of a
//! line), `long_line` (the serving thread waits for the rest of it),
//! `napping` (the reader thread sleeps until woken), `stop`.
//!
//! The serving thread, per message:
//!
//! ```text
//!  WAIT    take a queued line; else read the stream itself: check for up to
//!          `spin`, then sleep in poll for up to `poll` (`partial` set: set
//!          long_line, unpark the reader, wait on the queue, clear long_line)
//!  START   turn += 1, busy = true; unpark the reader if it is napping
//!  HANDLE  dispatch, run the tool, write the reply
//!  END     busy = false; back to WAIT
//! ```
//!
//! The reader thread, one state per pass of its loop, chosen from the flags:
//!
//! ```text
//!                 idle < NAP_AFTER
//!                    +------+
//!                    |      v
//!  +---------+ !busy +----------+ idle >= NAP_AFTER +---------+
//!  | READING |------>| WATCHING |------------------>| NAPPING |
//!  +---------+       +----------+                   +---------+
//!       ^             |        ^                         |
//!       |   busy, new |        | !busy                   | busy, new turn
//!       |        turn v        |                         | (START unparks it)
//!       |            +----------+                        |
//!       +------------|  GRACE   |<-----------------------+
//!   busy, same turn  +----------+
//!   (one HANDOFF on)
//!
//!  WATCHING  park one HANDOFF, look again
//!  NAPPING   napping = true, park up to 100 ms unless woken
//!  GRACE     park one HANDOFF: a short call is over before the reader
//!            thread reads anything
//!  READING   poll (up to 100 ms) and pump whatever arrives, while busy
//!  any state --long_line set--> LONG LINE: poll and pump while long_line,
//!                               then the state the flags give
//!  any state --stop--> exit
//! ```
//!
//! A short call: WAIT reads the line, START, HANDLE and END happen within
//! one HANDOFF, so the reader thread sees at most GRACE and never reads. A
//! long call (a tool running for seconds): after one HANDOFF the reader
//! thread is READING, so a client writing more requests is never blocked;
//! they wait in the queue, and WAIT takes them in order.
//!
//! The reader thread checks its flags at least every 100 ms, so
//! [`Reader::stop`] returns within about that long.

use std::fs::File;
use std::io::{self, Read};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{unbounded, Receiver, Sender};

use super::control::Control;
use super::framer::Framer;
use super::sys::{Readiness, Source};

/// What the reader hands to the serving thread.
#[derive(Debug)]
pub enum Inbound {
    /// One line, without its LF and without one trailing CR.
    Line(Vec<u8>),
    /// End of input (after the final unterminated line, if any).
    Eof,
    /// Reading failed; treated like EOF after a diagnostic.
    Failed(String),
}

/// The request reader, shared by the reader thread and the serving thread
/// (see the module documentation).
pub struct Reader {
    rx: Receiver<Inbound>,
    shared: Arc<Shared>,
    handle: Option<JoinHandle<()>>,
}

/// How long the serving thread may be busy with one message before the
/// reader thread starts reading.
pub const HANDOFF: Duration = Duration::from_millis(1);

/// Without a message for this long the reader thread sleeps until woken.
const NAP_AFTER: Duration = Duration::from_millis(20);

struct Shared {
    ready: Readiness,
    input: Mutex<Input>,
    tx: Sender<Inbound>,
    /// The serving thread is handling a message.
    busy: AtomicBool,
    /// Part of a line has been read; the rest is still to come.
    partial: AtomicBool,
    /// The serving thread waits for the rest of a long line: the reader
    /// thread reads it.
    long_line: AtomicBool,
    /// Incremented for every message the serving thread handles.
    turn: AtomicU64,
    /// The reader thread sleeps until woken (no recent activity).
    napping: AtomicBool,
    stop: AtomicBool,
    /// Looks at each line as it is read (set by `serve`).
    control: OnceLock<Arc<Control>>,
}

struct Input {
    file: Source,
    framer: Framer,
    chunk: Vec<u8>,
    /// EOF or a read error was queued; nothing more is read.
    done: bool,
    /// Lines queued so far: the stream position of the next one.
    seq: u64,
}

/// Queue one framed line, after [`Control::route`] has seen it.
fn queue(tx: &Sender<Inbound>, control: Option<&Control>, seq: &mut u64, line: Vec<u8>) {
    let line = match control {
        Some(c) => match c.route(line, *seq) {
            Some(l) => l,
            None => return,
        },
        None => line,
    };
    *seq += 1;
    let _ = tx.send(Inbound::Line(line));
}

impl Shared {
    /// Read what is available now and queue its complete lines. Never
    /// blocks: readiness is checked again under the lock, where no other
    /// thread can consume the bytes. Returns false once input has ended.
    fn pump(&self) -> bool {
        self.pump_counted().is_some()
    }

    /// [`Shared::pump`], returning how many bytes were read (`None` once
    /// input has ended).
    fn pump_counted(&self) -> Option<usize> {
        let mut guard = self.input.lock().unwrap_or_else(|e| e.into_inner());
        let Input { file, framer, chunk, done, seq } = &mut *guard;
        let control = self.control.get().map(|c| &**c);
        if *done {
            return None;
        }
        if !self.ready.wait(0) {
            return Some(0);
        }
        loop {
            match file.read(chunk) {
                Ok(0) => {
                    if let Some(l) = framer.finish() {
                        queue(&self.tx, control, seq, l);
                    }
                    let _ = self.tx.send(Inbound::Eof);
                    *done = true;
                    if let Some(c) = control {
                        c.input_ended();
                    }
                    return None;
                }
                Ok(n) => {
                    let tx = &self.tx;
                    framer.push(&chunk[..n], &mut |l| queue(tx, control, seq, l));
                    self.partial.store(framer.has_partial(), Ordering::Relaxed);
                    return Some(n);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    let _ = self.tx.send(Inbound::Failed(e.to_string()));
                    *done = true;
                    if let Some(c) = control {
                        c.input_ended();
                    }
                    return None;
                }
            }
        }
    }

    /// The reader thread's loop.
    fn run_reader(&self) {
        let mut seen = u64::MAX;
        let mut last_busy = Instant::now();
        loop {
            if self.stop.load(Ordering::SeqCst) {
                return;
            }
            if self.long_line.load(Ordering::SeqCst) {
                last_busy = Instant::now();
                if self.ready.wait(100) && self.long_line.load(Ordering::SeqCst) && !self.pump() {
                    return;
                }
                continue;
            }
            if self.busy.load(Ordering::SeqCst) {
                last_busy = Instant::now();
                let turn = self.turn.load(Ordering::SeqCst);
                if turn != seen {
                    // A new message: give it one hand-off period first.
                    seen = turn;
                    std::thread::park_timeout(HANDOFF);
                    continue;
                }
                // Busy with the same message for over a period: read.
                if self.ready.wait(100) && self.busy.load(Ordering::SeqCst) && !self.pump() {
                    return;
                }
                continue;
            }
            if last_busy.elapsed() < NAP_AFTER {
                std::thread::park_timeout(HANDOFF);
                continue;
            }
            // Idle for a while: sleep until the serving thread starts a
            // message (it wakes us when `napping` is set) or 100 ms pass.
            self.napping.store(true, Ordering::SeqCst);
            if !self.busy.load(Ordering::SeqCst)
                && !self.long_line.load(Ordering::SeqCst)
                && !self.stop.load(Ordering::SeqCst)
            {
                std::thread::park_timeout(Duration::from_millis(100));
            }
            self.napping.store(false, Ordering::SeqCst);
        }
    }
}

impl Reader {
    /// Start the reader thread for `input`. The caller should block signals
    /// around this call if the thread must not receive them.
    pub fn spawn(input: File) -> Reader {
        let (tx, rx) = unbounded();
        let (ready, input) = super::sys::open(input);
        let shared = Arc::new(Shared {
            ready,
            input: Mutex::new(Input {
                file: input,
                framer: Framer::new(),
                chunk: vec![0u8; 64 * 1024],
                done: false,
                seq: 0,
            }),
            tx,
            busy: AtomicBool::new(false),
            partial: AtomicBool::new(false),
            long_line: AtomicBool::new(false),
            turn: AtomicU64::new(0),
            napping: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            control: OnceLock::new(),
        });
        let s = Arc::clone(&shared);
        let handle = std::thread::Builder::new()
            .name("mcplite-reader".into())
            .spawn(move || s.run_reader())
            .expect("spawn reader thread");
        Reader { rx, shared, handle: Some(handle) }
    }

    /// The next queued message, reading stdin on this thread while the queue
    /// is empty: first by checking for up to `spin` (a client that answers
    /// quickly finds this thread still running), then by sleeping in poll()
    /// for up to `timeout`. There is no spinning once part of a line has
    /// arrived: the rest of a long line is waited for without taking the CPU
    /// its writer needs. `None` when no complete line arrived.
    pub(super) fn next(&self, spin: Duration, timeout: Duration) -> Option<Inbound> {
        if let Ok(m) = self.rx.try_recv() {
            return Some(m);
        }
        if self.shared.partial.load(Ordering::Relaxed) {
            return self.rest_of_long_line(timeout);
        }
        if !spin.is_zero() {
            let t0 = Instant::now();
            loop {
                if self.shared.ready.wait(0) {
                    let read = self.shared.pump_counted();
                    if let Ok(m) = self.rx.try_recv() {
                        return Some(m);
                    }
                    if read != Some(0) {
                        break;
                    }
                }
                if t0.elapsed() >= spin {
                    break;
                }
                std::hint::spin_loop();
            }
        }
        let ms = timeout.as_millis().min(i32::MAX as u128) as i32;
        if self.shared.ready.wait(ms) {
            self.shared.pump();
        }
        self.rx.try_recv().ok()
    }

    /// Part of a line is in: let the reader thread read the rest (which
    /// takes many reads for a long line) and wait for it on the channel.
    fn rest_of_long_line(&self, timeout: Duration) -> Option<Inbound> {
        let s = &self.shared;
        s.long_line.store(true, Ordering::SeqCst);
        if let Some(h) = &self.handle {
            h.thread().unpark();
        }
        let got = self.rx.recv_timeout(timeout).ok();
        s.long_line.store(false, Ordering::SeqCst);
        got
    }

    /// Have every line read from now on seen by `control` on arrival.
    pub(super) fn attach(&self, control: Arc<Control>) {
        let _ = self.shared.control.set(control);
    }

    /// The serving thread starts (`true`) or finished handling a message.
    pub(super) fn set_busy(&self, busy: bool) {
        let s = &self.shared;
        if busy {
            s.turn.fetch_add(1, Ordering::SeqCst);
            s.busy.store(true, Ordering::SeqCst);
            if s.napping.load(Ordering::SeqCst) {
                if let Some(h) = &self.handle {
                    h.thread().unpark();
                }
            }
        } else {
            s.busy.store(false, Ordering::SeqCst);
        }
    }

    /// Stop the reader thread and wait for it (at most about 100 ms).
    pub fn stop(mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        if let Some(h) = self.handle.take() {
            h.thread().unpark();
            let _ = h.join();
        }
    }
}
