//! What the stdio transport does beside the serve loop (RULES C1–C5): the
//! messages it acts on the moment they are read, and the ticker thread that
//! writes while a tool runs.
//!
//! # Seen on arrival
//!
//! Every line the reader frames passes [`Control::route`] before it is
//! queued, under the reader's input lock, on whichever thread read it (the
//! serving thread while it waits, the reader thread while a tool runs). A
//! cheap check picks the few lines worth parsing: at most [`PEEK_MAX`] bytes
//! and containing `notifications/cancelled`, or `"ping"`. Every other line is
//! queued untouched, so the check costs a request two `memmem` scans of a
//! short line.
//!
//! * A cancellation (RULES C4) whose `requestId` (a string or an integer)
//!   names the running call cancels it at once ([`Inflight::cancel`]: the
//!   tool is interrupted, the call gets no answer). Otherwise it is recorded
//!   with its position in the stream: a request with that id queued before
//!   it is dropped unanswered when the serve loop reaches it, and the record
//!   is forgotten when the serve loop reaches the cancellation itself. So
//!   memory is bounded by the queue, and a cancellation naming an id not sent
//!   yet does not touch a later request with that id. The cancellation line
//!   is queued too, and handled in order as the notification it is.
//!   `initialize` is never dropped (clients must not cancel it).
//! * A legacy `ping` read while a `tools/call` is running or queued ahead of
//!   it (RULES C5) is not queued: the ticker answers it at once. A ping with
//!   nothing but quick messages ahead of it keeps its place. (A ping needs
//!   no session; the ticker answers it with a throwaway [`LegacyState`], so
//!   its span, when tracing, names no negotiated protocol version.)
//!
//! Which lines may be a `tools/call` is decided by one pure predicate
//! ([`Control::may_be_call`]: over [`PEEK_MAX`] bytes, or containing
//! `tools/call`), counted when a line is queued and again when the serve
//! loop has answered it; the count is zero exactly when no such line is
//! queued or running.
//!
//! The [`Inflight`]'s interrupter is therefore called on the thread that
//! read the cancellation, with the reader's lock held (or, in the case
//! below, on the serving thread just before the tool starts): it must
//! return quickly and never block.
//!
//! A cancellation for the running call can arrive between the serve loop
//! taking the request and its tool starting. The serve loop's [`Watch`]
//! closes that window: the call is registered with the [`Inflight`] and the
//! records are checked under the same lock that [`Control::route`] holds
//! while it tries the running call and records, so one of the two always
//! sees the other.
//!
//! # The ticker
//!
//! One thread per `serve`, started with signals blocked. It sleeps in
//! [`Inflight::wait_after`] until the running call's next notification is
//! due ([`crate::progress::Progress::next_due`]), a ping is waiting, or
//! 100 ms pass; then it answers the waiting pings and writes the line
//! [`crate::progress::Progress::poll`] gives. A call without a progress token
//! and without pings never wakes it ([`Inflight`] notifies only for calls
//! with progress).
//!
//! # No notification after the response (RULES C1.3)
//!
//! The protocol writer is behind one mutex, held for a whole line by whoever
//! writes: the serve loop for responses and for a call's last report, the
//! ticker for notifications and ping answers. The ticker calls `poll`
//! *while holding the writer lock*. The dispatcher ends the call's progress
//! (`CallWatch::finished` → `Progress::finish`) before
//! `Server::handle_parsed` returns; [`Watch`] does it holding the writer
//! lock and writes the tool's last report if it was still waiting
//! (`Progress::take_final`, RULES C2.4), and the serve loop only then takes
//! the writer lock to write the response. So either the ticker's critical
//! section comes first, and its notification is written before the last
//! report and the response, or it comes after the response's, and then the
//! end happened before it and `poll` gives nothing.

use std::collections::{HashMap, VecDeque};
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use memchr::memmem::Finder;
use serde_json::Value;

use super::NoTools;
use crate::message::{parse_line, Incoming, Message};
use crate::progress::{CallStart, CallWatch, Inflight, Listen, Progress};
use crate::server::{Carrier, LegacyState, Server};
use crate::version::{era_of, Era, Version};
use crate::workers::{CallState, Calls, Registered};

/// Lines longer than this are never looked at on arrival (a cancellation
/// or a ping is short); they count as possible `tools/call`s.
pub const PEEK_MAX: usize = 16 * 1024;

/// How long the ticker sleeps with nothing to do.
const IDLE: Duration = Duration::from_millis(100);

/// The protocol writer, shared by the serve loop and the ticker.
pub(super) type Output<'a> = Mutex<&'a mut (dyn Write + Send)>;

pub(super) fn lock<T: ?Sized>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Cancellations of requests that may still be queued.
#[derive(Default)]
struct Cancels {
    /// Request id (compact JSON of the parsed id) → number of records.
    by_id: HashMap<String, usize>,
    /// (stream position of the cancellation, id), in stream order.
    order: VecDeque<(u64, String)>,
}

impl Cancels {
    fn has(&self, raw_id: &str) -> bool {
        !self.by_id.is_empty() && id_key(raw_id).is_some_and(|k| self.by_id.contains_key(&k))
    }
}

/// The id of a request as a map key: ids compare as JSON values, so `"a"`
/// and `"\u0061"` are the same id.
fn id_key(raw: &str) -> Option<String> {
    serde_json::from_str::<Value>(raw).ok().map(|v| v.to_string())
}

/// The `requestId` of a cancellation, when it is a string or an integer.
fn request_id(m: &Message) -> Option<&Value> {
    let id = m.params.as_ref()?.as_object()?.get("requestId")?;
    (id.is_string() || id.is_i64() || id.is_u64()).then_some(id)
}

/// The state shared by the reader, the serve loop and the ticker (see the
/// module documentation).
pub(super) struct Control {
    inflight: Arc<Inflight>,
    /// With workers: the calls running or waiting in them (RULES N4).
    calls: Option<Arc<Calls>>,
    cancel_finder: Finder<'static>,
    ping_finder: Finder<'static>,
    call_finder: Finder<'static>,
    /// The ids of the server's questions (RULES A1.2).
    ask_finder: Finder<'static>,
    /// Lines queued or being handled that may be a `tools/call`.
    calls_ahead: AtomicUsize,
    cancels: Mutex<Cancels>,
    /// `cancels.order.len()`, readable without the lock.
    n_cancels: AtomicUsize,
    /// Pings for the ticker to answer.
    pings: Mutex<Vec<Incoming>>,
    stop: AtomicBool,
}

impl Control {
    pub(super) fn new(inflight: Arc<Inflight>, calls: Option<Arc<Calls>>) -> Control {
        Control {
            inflight,
            calls,
            cancel_finder: Finder::new(b"notifications/cancelled"),
            ping_finder: Finder::new(b"\"ping\""),
            call_finder: Finder::new(b"tools/call"),
            ask_finder: Finder::new(crate::asks::ID_PREFIX.as_bytes()),
            calls_ahead: AtomicUsize::new(0),
            cancels: Mutex::new(Cancels::default()),
            n_cancels: AtomicUsize::new(0),
            pings: Mutex::new(Vec::new()),
            stop: AtomicBool::new(false),
        }
    }

    /// May this line be a `tools/call`? (Pure: the same answer when queued
    /// and when answered.)
    pub(super) fn may_be_call(&self, line: &[u8]) -> bool {
        line.len() > PEEK_MAX || self.call_finder.find(line).is_some()
    }

    /// A line just read, to be queued at stream position `seq`. Returns the
    /// line to queue, or `None` when it was taken here (a ping the ticker
    /// answers).
    pub(super) fn route(&self, line: Vec<u8>, seq: u64) -> Option<Vec<u8>> {
        // RULES A1.2: the client's answer to a question of the running tool
        // goes to the question, not to the queue.
        if crate::asks::pending() && self.ask_finder.find(&line).is_some() && crate::asks::deliver(&line, None) {
            return None;
        }
        let call = self.may_be_call(&line);
        if line.len() <= PEEK_MAX {
            if self.cancel_finder.find(&line).is_some() {
                self.see_cancel(&line, seq);
            } else if !call && self.calls_ahead.load(Ordering::SeqCst) > 0 && self.ping_finder.find(&line).is_some() {
                if let Incoming::Message(m) = parse_line(&line) {
                    let legacy_ping = m.method == "ping"
                        && m.id.is_some()
                        && m.over_limit.is_none()
                        && matches!(era_of(m.params.as_ref()), Era::Legacy);
                    if legacy_ping {
                        lock(&self.pings).push(Incoming::Message(m));
                        self.inflight.notify();
                        return None;
                    }
                }
            }
        }
        if call {
            self.calls_ahead.fetch_add(1, Ordering::SeqCst);
        }
        Some(line)
    }

    /// The client's input ended (EOF or a read error): a question of the
    /// running call can no longer be answered and fails at once (RULES
    /// A1.3); the call itself runs on and is answered.
    pub(super) fn input_ended(&self) {
        let running = self.inflight.progress_for_asks().into_iter();
        let pooled = self.calls.iter().flat_map(|c| c.progresses());
        for p in running.chain(pooled) {
            if p.asks().any() {
                p.end_questions();
            }
        }
    }

    /// A line that may be a cancellation, at stream position `seq`.
    fn see_cancel(&self, line: &[u8], seq: u64) {
        let Incoming::Message(m) = parse_line(line) else { return };
        if m.id.is_some() || m.method != "notifications/cancelled" || m.over_limit.is_some() {
            return;
        }
        let Some(id) = request_id(&m) else { return };
        let mut c = lock(&self.cancels);
        if self.inflight.cancel(None, id) || self.calls.as_ref().is_some_and(|calls| calls.cancel(None, id)) {
            return;
        }
        let key = id.to_string();
        *c.by_id.entry(key.clone()).or_default() += 1;
        c.order.push_back((seq, key));
        self.n_cancels.store(c.order.len(), Ordering::SeqCst);
    }

    /// Are cancellations recorded? (The serve loop then looks at each
    /// line's id with [`Control::reached`].)
    pub(super) fn has_cancels(&self) -> bool {
        self.n_cancels.load(Ordering::SeqCst) > 0
    }

    /// The serve loop reached the line at `seq`, parsed as `incoming`:
    /// forget the cancellations up to it. True when it is a request
    /// cancelled while queued: it is dropped unanswered.
    pub(super) fn reached(&self, incoming: &Incoming, seq: u64) -> bool {
        let mut c = lock(&self.cancels);
        while c.order.front().is_some_and(|(s, _)| *s <= seq) {
            let (_, key) = c.order.pop_front().expect("front exists");
            if let Some(n) = c.by_id.get_mut(&key) {
                *n -= 1;
                if *n == 0 {
                    c.by_id.remove(&key);
                }
            }
        }
        self.n_cancels.store(c.order.len(), Ordering::SeqCst);
        match incoming {
            Incoming::Message(Message { id: Some(id), method, .. }) if method != "initialize" => c.has(id),
            _ => false,
        }
    }

    /// With workers: register a `tools/call` (raw id `raw_id`) handed to the
    /// pool, so that a cancellation reaches it; one recorded between the
    /// serve loop taking the line and now cancels it at once (the same race
    /// as [`Watch::started`] closes).
    pub(super) fn register_call(
        &self,
        calls: &Arc<Calls>,
        raw_id: &str,
        progress: Option<(Listen, Version)>,
    ) -> Registered {
        let (reg, hit) = {
            let g = lock(&self.cancels);
            let reg = calls.register(None, raw_id, progress);
            let hit = g.has(raw_id);
            (reg, hit)
        };
        if hit {
            reg.state().cancel();
        }
        reg
    }

    /// The serve loop answered (or dropped) a line.
    pub(super) fn done(&self, was_call: bool) {
        if was_call {
            self.calls_ahead.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// Ask the ticker to answer the last pings and return.
    pub(super) fn stop_ticker(&self) {
        self.stop.store(true, Ordering::SeqCst);
        self.inflight.notify();
    }

    /// The ticker thread (see the module documentation).
    pub(super) fn run_ticker(&self, server: &Server, out: &Output<'_>) {
        loop {
            let epoch = self.inflight.epoch();
            let stopping = self.stop.load(Ordering::SeqCst);
            let pings = std::mem::take(&mut *lock(&self.pings));
            for ping in pings {
                // A ping needs no session: a throwaway one will do.
                let reply = server.handle_parsed(&mut LegacyState::default(), ping, &mut NoTools, &Carrier::NONE);
                // A failed write ends serving at the serve loop's next write.
                let _ = reply.write_line(&mut **lock(out));
            }
            if stopping {
                return;
            }
            let mut due = Instant::now() + IDLE;
            if let Some(p) = self.inflight.progress() {
                tick(&p, out, &mut due);
            }
            if let Some(calls) = &self.calls {
                for p in calls.progresses() {
                    tick(&p, out, &mut due);
                }
            }
            self.inflight.wait_after(epoch, due);
        }
    }
}

/// The most notification lines the ticker writes for one call while it
/// holds the writer.
const BATCH: usize = 64;

/// Write the notifications of `p` due now, if any, and bring `due` forward
/// to its next one.
fn tick(p: &Progress, out: &Output<'_>, due: &mut Instant) {
    {
        let mut w = lock(out);
        // What is due now, log messages together (RULES G3.1), but at most
        // BATCH lines per hold of the writer: a tool logging as fast as
        // standard output drains does not keep pings and other calls'
        // answers waiting (the rest is due at once, after them).
        let mut written = 0;
        while written < BATCH {
            let Some(mut line) = p.poll(Instant::now()) else { break };
            written += 1;
            line.push(b'\n');
            if w.write_all(&line).and_then(|()| w.flush()).is_err() {
                break;
            }
        }
    }
    if let Some(d) = p.next_due() {
        *due = (*due).min(d.max(Instant::now() + Duration::from_millis(1)));
    }
}

/// Write what a finished call still owes before its response (RULES C2.4,
/// G3.1). A failed write ends serving at the response's write.
fn write_final(p: &Progress, w: &mut dyn Write) {
    while let Some(mut line) = p.take_final() {
        line.push(b'\n');
        if w.write_all(&line).and_then(|()| w.flush()).is_err() {
            return;
        }
    }
}

/// The serve loop's call watch: the [`Inflight`], plus the cancellation
/// that arrived between taking the request and starting its tool, and the
/// writer, for the last report of a call (written before its response).
pub(super) struct Watch<'a, 'w> {
    pub(super) control: &'a Control,
    pub(super) out: &'a Output<'w>,
}

impl CallWatch for Watch<'_, '_> {
    fn set_rounds(&self, rounds: crate::ask_state::Rounds) {
        self.control.inflight.set_rounds(rounds);
    }

    fn take_rounds(&self) -> Option<crate::ask_state::Rounds> {
        self.control.inflight.take_rounds()
    }

    fn started(&self, call: &CallStart<'_>) {
        let c = self.control;
        let hit = {
            let g = lock(&c.cancels);
            c.inflight.started(call);
            g.has(call.id)
        };
        if hit {
            if let Ok(id) = serde_json::from_str::<Value>(call.id) {
                c.inflight.cancel(None, &id);
            }
        }
    }

    fn finished(&self) -> bool {
        let inflight = &self.control.inflight;
        let progress = inflight.progress();
        // RULES C2.4: the tool's last report, if the ticker has not sent it,
        // is written now, before the serve loop writes the response. The
        // writer lock is taken first, so the ticker cannot write a line
        // between the end of the call's progress and this one.
        let mut w = lock(self.out);
        let cancelled = inflight.finished();
        if let Some(p) = progress {
            write_final(&p, &mut **w);
        }
        cancelled
    }
}

/// The call watch of a call run by a worker (RULES N2): its [`CallState`],
/// with the tool's last report written before the response as [`Watch`]
/// writes it (RULES C2.4).
pub(super) struct PoolWatch<'a, 'w> {
    pub(super) state: &'a CallState,
    pub(super) out: &'a Output<'w>,
}

impl CallWatch for PoolWatch<'_, '_> {
    fn set_rounds(&self, rounds: crate::ask_state::Rounds) {
        self.state.set_rounds(rounds);
    }

    fn take_rounds(&self) -> Option<crate::ask_state::Rounds> {
        self.state.take_rounds()
    }

    fn started(&self, call: &CallStart<'_>) {
        self.state.started(call);
    }

    fn finished(&self) -> bool {
        let mut w = lock(self.out);
        let cancelled = self.state.finished();
        if let Some(p) = self.state.progress() {
            write_final(&p, &mut **w);
        }
        cancelled
    }
}
