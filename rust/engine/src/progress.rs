//! Calls that take time (RULES C1–C4): progress notifications and
//! cancellation, for every transport.
//!
//! The dispatcher tells a [`CallWatch`] when a `tools/call` starts running
//! its tool and when the tool has returned. The watch the transports use is
//! [`Inflight`]: it knows the call that is running (there is at most one:
//! tools run one at a time on R's thread), makes a [`Progress`] for it when
//! the request carried `_meta.progressToken`, and cancels it when the
//! client asks ([`Inflight::cancel`]).
//!
//! [`Progress`] is the state of one call's notifications, shared by three
//! parties:
//!
//! * the tool (through the R bridge's `mcp_progress()`, or anything else
//!   running in the call, such as a proxied remote tool's progress), which
//!   reports its own values with [`Inflight::report`];
//! * the transport's ticker (a thread on stdio, a task per response stream
//!   on HTTP), which asks [`Progress::poll`] for the line due now and writes
//!   it, sleeping until [`Progress::next_due`] or until a report wakes it
//!   ([`Inflight::wait_after`] on a thread, [`Progress::changed`] in a task);
//! * the dispatcher, which [`Progress::finish`]es it when the tool returns:
//!   from then on `poll` gives nothing, and the transport writes the line
//!   [`Progress::take_final`] gives (the tool's last report, if it was not
//!   sent yet) before the response (RULES C1.3, C2.4).
//!
//! What `poll` sends (RULES C2):
//!
//! * the tool's latest report, as soon as the rate limit allows: a token
//!   bucket of [`ProgressPolicy::burst`] notifications refilled one per
//!   [`ProgressPolicy::min_gap`] (a short burst goes out at once, a tight
//!   loop gets one notification per `min_gap`; reports in between are
//!   coalesced: the latest wins);
//! * otherwise a heartbeat, when nothing was sent for a while: the first
//!   [`ProgressPolicy::first`] after the call started, then every
//!   [`ProgressPolicy::interval`]. A heartbeat never sets the scale: the
//!   first one before the tool's first report is 0 without a total, and
//!   every other one is a hair above the last value sent (too little to
//!   move a progress bar, but the protocol wants every value to increase),
//!   repeating the tool's total and message. Its message says for how long
//!   the tool has run.
//!
//! The values sent always increase. A tool report above everything sent
//! goes out unchanged; one at or below (possible only after heartbeats,
//! whose values are at most a hair above the tool's) goes out just above
//! the last value sent, with the tool's total and message.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::Notify;

pub use crate::ask_state::Asks;
use crate::ask_state::{Asker, Rounds};
use crate::logging::{self, LogEntry, LogLevel};
use crate::projection;
use crate::version::Version;

/// When heartbeats and tool reports are sent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProgressPolicy {
    /// The first heartbeat, after the call started.
    pub first: Duration,
    /// Between heartbeats (since the last notification of any kind).
    pub interval: Duration,
    /// The rate limit of notifications carrying tool reports: the bucket
    /// gains one notification per `min_gap`...
    pub min_gap: Duration,
    /// ...and holds at most `burst` (at least 1). A call starts with a full
    /// bucket.
    pub burst: u32,
}

impl Default for ProgressPolicy {
    fn default() -> Self {
        ProgressPolicy {
            first: Duration::from_secs(1),
            interval: Duration::from_secs(5),
            min_gap: Duration::from_millis(100),
            burst: 10,
        }
    }
}

impl ProgressPolicy {
    /// A policy with heartbeats every `interval` (the first after at most
    /// one second, sooner when the interval is shorter).
    pub fn with_interval(interval: Duration) -> ProgressPolicy {
        let d = ProgressPolicy::default();
        ProgressPolicy { first: d.first.min(interval), interval, min_gap: d.min_gap.min(interval), burst: d.burst }
    }
}

/// The progress token of a request, as raw JSON text, when `params._meta`
/// has a valid one: a string, or an integer (RULES C1). Any other type is
/// ignored: no progress is sent for it.
pub fn progress_token(params: Option<&Value>) -> Option<String> {
    let t = params?.as_object()?.get("_meta")?.as_object()?.get("progressToken")?;
    match t {
        Value::String(_) => serde_json::to_string(t).ok(),
        Value::Number(n) if n.is_i64() || n.is_u64() => Some(n.to_string()),
        _ => None,
    }
}

/// Why [`Progress::report`] refused a value.
#[derive(Debug, Clone, PartialEq)]
pub enum ReportError {
    /// `progress` or `total` is not a finite number.
    NotFinite,
    /// `progress` is not above the tool's previous report.
    NotIncreasing { previous: f64 },
}

#[derive(Debug, Clone, PartialEq)]
struct Report {
    progress: f64,
    total: Option<f64>,
    message: Option<String>,
}

#[derive(Debug)]
struct State {
    /// Notifications sent so far, and the last value and time.
    sent: u64,
    last_value: Option<f64>,
    last_sent: Option<Instant>,
    /// The rate limit (a token bucket kept as a "theoretical arrival time",
    /// GCRA): a report may be sent at `tat - (burst - 1) * min_gap` or
    /// later; each one sent moves `tat` one `min_gap` past `max(tat, now)`.
    tat: Instant,
    /// The tool's last accepted report, and whether it is still to be sent.
    reported: Option<Report>,
    pending: bool,
    /// Earlier reports that came within the burst (RULES C2.2) and are
    /// still to be sent, oldest first: a report waiting when the next one
    /// comes keeps its turn while the bucket has room for it, so a writer
    /// that is late (a busy machine) does not coalesce a short burst.
    burst: std::collections::VecDeque<Report>,
    ended: bool,
    /// What is still owed when the call finished (its log messages, then
    /// the tool's last report, unsent): written by the transport before the
    /// response ([`Progress::take_final`]).
    last_lines: std::collections::VecDeque<Vec<u8>>,
    /// What the call waits for before it runs ("a free worker"), while it
    /// waits; and when it started running after a wait (RULES N3.2).
    waiting: Option<String>,
    running_since: Option<Instant>,
    /// Log messages waiting to be written, oldest first (RULES G3), and
    /// how many were dropped since the last one written.
    logs: std::collections::VecDeque<LogEntry>,
    dropped: u64,
    /// What the waiting messages hold ([`entry_bytes`]), bounded by
    /// [`logging::MAX_PENDING_BYTES`].
    log_bytes: usize,
    /// Requests to the client waiting to be written, with their ids
    /// (RULES A1.2).
    requests: std::collections::VecDeque<(String, Vec<u8>)>,
}

/// "Not before the process ends": when a call without a progress token
/// would send its next heartbeat.
const NEVER: Duration = Duration::from_secs(365 * 24 * 3600);

/// What a client listens to during one call: its progress (the client's
/// token, as raw JSON text) and its log messages (the least severe level it
/// wants, RULES G1).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Listen {
    pub token: Option<String>,
    pub log: Option<LogLevel>,
    /// What the client can be asked while the call runs (RULES A1).
    pub asks: Asks,
}

impl Listen {
    /// Does the client listen to anything?
    pub fn any(&self) -> bool {
        self.token.is_some() || self.log.is_some() || self.asks.any()
    }
}

/// The notifications of one running call (see the module documentation):
/// its progress when the client sent a token, its log messages when the
/// client asked for them (RULES G3).
#[derive(Debug)]
pub struct Progress {
    token: Option<String>,
    log: Option<LogLevel>,
    asks: Asks,
    version: Version,
    started: Instant,
    policy: ProgressPolicy,
    state: Mutex<State>,
    /// Woken (one permit kept) when a report starts waiting: what an async
    /// ticker waits on ([`Progress::changed`]).
    changed: Notify,
    /// A 2026-07-28 call's questions and answers (RULES A2).
    rounds: Mutex<Option<Rounds>>,
    /// The client can no longer answer a question (its input ended).
    no_answers: std::sync::atomic::AtomicBool,
}

fn lock(m: &Mutex<State>) -> MutexGuard<'_, State> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The oldest log message waiting, now taken, or else the warning that
/// messages were dropped after the last one queued (RULES G3.2), at the
/// client's level when that is above `warning`.
fn next_log(s: &mut State, level: Option<LogLevel>) -> Option<LogEntry> {
    if let Some(e) = s.logs.pop_front() {
        s.log_bytes -= entry_bytes(&e);
        return Some(e);
    }
    dropped_warning(s, level)
}

/// The warning that `s.dropped` messages were left out, now counted; `None`
/// when none was.
fn dropped_warning(s: &mut State, level: Option<LogLevel>) -> Option<LogEntry> {
    if s.dropped == 0 {
        return None;
    }
    let n = std::mem::take(&mut s.dropped);
    let text = format!(
        "{n} log message{} left out: the tool logged faster than they could be sent",
        if n == 1 { " was" } else { "s were" }
    );
    Some(LogEntry {
        level: level.map_or(LogLevel::Warning, |l| l.max(LogLevel::Warning)),
        logger: Some(logging::ENGINE_LOGGER.to_owned()),
        data: serde_json::to_string(&text).expect("a string encodes"),
    })
}

/// What a waiting message holds of memory, roughly.
fn entry_bytes(e: &LogEntry) -> usize {
    e.data.len() + e.logger.as_ref().map_or(0, String::len) + 64
}

/// A value a hair above `x`, so that a heartbeat keeps the values
/// increasing without visibly changing them.
fn just_above(x: f64) -> f64 {
    let step = x.abs().max(1.0) * 1e-9;
    let y = x + step;
    if y > x {
        y
    } else {
        f64::from_bits(x.to_bits() + 1)
    }
}

impl Progress {
    /// The notifications of a call that started at `started`, for what the
    /// client listens to, in protocol version `version`. Without a token no
    /// progress is sent (not even heartbeats); without a level no log
    /// message.
    pub fn new(listen: Listen, version: Version, policy: ProgressPolicy, started: Instant) -> Progress {
        Progress {
            token: listen.token,
            log: listen.log,
            asks: listen.asks,
            version,
            started,
            policy,
            state: Mutex::new(State {
                sent: 0,
                last_value: None,
                last_sent: None,
                tat: started,
                reported: None,
                pending: false,
                burst: std::collections::VecDeque::new(),
                ended: false,
                last_lines: std::collections::VecDeque::new(),
                waiting: None,
                running_since: None,
                logs: std::collections::VecDeque::new(),
                dropped: 0,
                log_bytes: 0,
                requests: std::collections::VecDeque::new(),
            }),
            changed: Notify::new(),
            rounds: Mutex::new(None),
            no_answers: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// The client can no longer answer questions (RULES A1.3): one waiting
    /// fails at once, and so does any later one.
    pub fn end_questions(&self) {
        self.no_answers.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Can a question of this call still be answered?
    pub fn answers_possible(&self) -> bool {
        !self.no_answers.load(std::sync::atomic::Ordering::SeqCst) && !self.is_ended()
    }

    /// The protocol version the call is answered in.
    pub fn version(&self) -> Version {
        self.version
    }

    /// A 2026-07-28 call's answers from earlier rounds (RULES A2.2).
    pub fn set_rounds(&self, rounds: Rounds) {
        *self.rounds.lock().unwrap_or_else(|e| e.into_inner()) = Some(rounds);
    }

    /// The call's rounds, to ask a question in (see [`crate::asks::ask`]).
    pub fn rounds(&self) -> MutexGuard<'_, Option<Rounds>> {
        self.rounds.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The call waits for `what` ("a free worker") before it runs: its
    /// heartbeats say so, and for how long (RULES N3.2).
    pub fn set_waiting(&self, what: &str) {
        lock(&self.state).waiting = Some(what.to_owned());
    }

    /// The call stopped waiting and runs from `now`: its heartbeats say how
    /// long it has run, and how long it waited.
    pub fn set_running(&self, now: Instant) {
        let mut s = lock(&self.state);
        if s.waiting.take().is_some() {
            s.running_since = Some(now);
        }
    }

    /// The client's token, as raw JSON text, when it listens to progress.
    pub fn token(&self) -> Option<&str> {
        self.token.as_deref()
    }

    /// The least severe level the client wants, when it listens to log
    /// messages.
    pub fn log_level(&self) -> Option<LogLevel> {
        self.log
    }

    /// What the client listens to.
    pub fn listen(&self) -> Listen {
        Listen { token: self.token.clone(), log: self.log, asks: self.asks }
    }

    /// What the client can be asked (RULES A1).
    pub fn asks(&self) -> Asks {
        self.asks
    }

    /// A request to the client (a question, RULES A1.2), written on the
    /// call's stream after the log messages waiting before it. `false` when
    /// the call has ended.
    pub fn send_request(&self, id: &str, line: Vec<u8>) -> bool {
        let mut s = lock(&self.state);
        if s.ended {
            return false;
        }
        s.requests.push_back((id.to_owned(), line));
        drop(s);
        self.changed.notify_one();
        true
    }

    /// Take back request `id` if it is not written yet (its question ended
    /// without an answer).
    pub fn withdraw_request(&self, id: &str) {
        lock(&self.state).requests.retain(|(i, _)| i != id);
    }

    /// A log message from the tool (RULES G2, G3): queued when the client
    /// listens at this level and the call has not ended. `Ok(true)` when
    /// queued and the ticker should be woken (the first message waiting),
    /// `Ok(false)` when queued behind others or not wanted (below the level,
    /// no level asked for, the call ended): [`Progress::wants`] tells those
    /// apart. Messages beyond [`logging::MAX_PENDING`] waiting are dropped
    /// and counted; data longer than [`logging::MAX_DATA_BYTES`] is replaced
    /// by a warning saying so.
    pub fn log(&self, mut entry: LogEntry) -> bool {
        if !self.wants(entry.level) {
            return false;
        }
        if let Some(l) = entry.logger.as_mut() {
            logging::truncate_logger(l);
        }
        let entry = if entry.data.len() > logging::MAX_DATA_BYTES {
            LogEntry {
                level: entry.level.max(LogLevel::Warning),
                logger: Some(logging::ENGINE_LOGGER.to_owned()),
                data: serde_json::to_string(&format!(
                    "a log message of {} bytes was left out (at most {} bytes are sent)",
                    entry.data.len(),
                    logging::MAX_DATA_BYTES
                ))
                .expect("a string encodes"),
            }
        } else {
            entry
        };
        let mut s = lock(&self.state);
        if s.ended {
            return false;
        }
        // Room for it, and for the warning about those dropped before it.
        let room = |s: &State, n: usize, bytes: usize| {
            s.logs.len() + n <= logging::MAX_PENDING && s.log_bytes + bytes <= logging::MAX_PENDING_BYTES
        };
        let need = usize::from(s.dropped > 0);
        if !room(&s, 1 + need, entry_bytes(&entry) + need * 256) {
            s.dropped += 1;
            return false;
        }
        let wake = s.logs.is_empty();
        // RULES G3.2: the client hears of dropped messages where they were
        // dropped, before the first message taken after them.
        if let Some(w) = dropped_warning(&mut s, self.log) {
            s.log_bytes += entry_bytes(&w);
            s.logs.push_back(w);
        }
        s.log_bytes += entry_bytes(&entry);
        s.logs.push_back(entry);
        drop(s);
        if wake {
            self.changed.notify_one();
        }
        wake
    }

    /// Does the client want log messages of `level` for this call?
    pub fn wants(&self, level: LogLevel) -> bool {
        self.log.is_some_and(|l| level >= l)
    }

    /// The log messages waiting, now taken, oldest first: a worker process
    /// forwards them to the engine, whose own [`Progress`] of the call
    /// writes them (RULES N4.1). Messages dropped here are told by a warning
    /// at the end, as [`Progress::poll`] would.
    pub fn forward_logs(&self) -> Vec<LogEntry> {
        let mut s = lock(&self.state);
        std::iter::from_fn(|| next_log(&mut s, self.log)).collect()
    }

    /// The line of the oldest log message waiting (or of the warning about
    /// dropped ones), now taken.
    fn log_line(&self, s: &mut State) -> Option<Vec<u8>> {
        let entry = next_log(s, self.log)?;
        let mut out = Vec::with_capacity(96 + entry.data.len());
        projection::write_log_notification(&mut out, &entry);
        Some(out)
    }

    /// A report from the tool (RULES C2). `progress` must be above the
    /// tool's previous report; both numbers must be finite. A report waits
    /// for [`Progress::poll`]; one still waiting when the next comes keeps
    /// its turn while it fits in the burst, else the latest wins.
    ///
    /// `Ok(true)` when the ticker should be woken ([`Inflight::notify`]; an
    /// async ticker waiting on [`Progress::changed`] is woken here): this
    /// report is the first one waiting since the last notification.
    /// `Ok(false)` when it joins one already waiting (the ticker is already
    /// due to send it) or the call has ended: a tool reporting in a tight
    /// loop then costs no wake-ups beyond one per notification sent.
    /// [`Inflight::report`] does all of this for the running call.
    pub fn report(&self, progress: f64, total: Option<f64>, message: Option<&str>) -> Result<bool, ReportError> {
        self.report_at(Instant::now(), progress, total, message)
    }

    /// [`Progress::report`] at `now` (the rate limit's clock).
    pub(crate) fn report_at(
        &self,
        now: Instant,
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
    ) -> Result<bool, ReportError> {
        if !progress.is_finite() || total.is_some_and(|t| !t.is_finite()) {
            return Err(ReportError::NotFinite);
        }
        if self.token.is_none() {
            return Ok(false);
        }
        let mut s = lock(&self.state);
        if let Some(prev) = &s.reported {
            if progress <= prev.progress {
                return Err(ReportError::NotIncreasing { previous: prev.progress });
            }
        }
        if s.pending && !s.ended && self.keeps_its_turn(&s, now) {
            if let Some(r) = s.reported.clone() {
                s.burst.push_back(r);
            }
        }
        s.reported = Some(Report { progress, total, message: message.map(str::to_owned) });
        let was_pending = Self::report_waiting(&s) || !s.logs.is_empty();
        s.pending = !s.ended;
        let wake = s.pending && !was_pending;
        drop(s);
        if wake {
            self.changed.notify_one();
        }
        Ok(wake)
    }

    /// Wakes an async ticker when a report starts waiting (a permit is kept
    /// when nobody waits, so a report between the ticker's look at the
    /// state and its wait is not missed).
    pub fn changed(&self) -> &Notify {
        &self.changed
    }

    /// Would the report waiting now still go out within the burst, after
    /// the earlier ones of the burst waiting before it (RULES C2.2)? Then a
    /// newer report does not replace it.
    fn keeps_its_turn(&self, s: &State, now: Instant) -> bool {
        let ahead = s.burst.len() as u32;
        if ahead + 1 >= self.policy.burst {
            return false;
        }
        let tolerance = self.policy.min_gap.saturating_mul(self.policy.burst - 1);
        let its_tat = s.tat.max(now) + self.policy.min_gap.saturating_mul(ahead);
        its_tat.checked_sub(tolerance).is_none_or(|t| t <= now)
    }

    /// Is a report waiting to be sent (one of a burst, or the latest)?
    fn report_waiting(s: &State) -> bool {
        s.pending || !s.burst.is_empty()
    }

    /// When the rate limit lets the next report go.
    fn report_allowed_at(&self, s: &State) -> Instant {
        let tolerance = self.policy.min_gap.saturating_mul(self.policy.burst.saturating_sub(1));
        s.tat.checked_sub(tolerance).map_or(self.started, |t| t.max(self.started))
    }

    /// The value, total and message that send the next report waiting
    /// now: the oldest of a burst, else the latest.
    fn take_report(&self, s: &mut State) -> (f64, Option<f64>, Option<String>) {
        let r = match s.burst.pop_front() {
            Some(r) => r,
            None => {
                s.pending = false;
                s.reported.clone().expect("pending implies a report")
            }
        };
        let value = match s.last_value {
            Some(last) if r.progress <= last => just_above(last),
            _ => r.progress,
        };
        (value, r.total, r.message)
    }

    /// Record a notification as sent and write its line.
    fn line(&self, s: &mut State, now: Instant, value: f64, total: Option<f64>, message: Option<&str>) -> Vec<u8> {
        s.sent += 1;
        s.last_value = Some(value);
        s.last_sent = Some(now);
        let mut out = Vec::with_capacity(160);
        let token = self.token.as_deref().expect("progress lines are made for calls with a token");
        projection::write_progress_notification(&mut out, self.version, token, value, total, message);
        out
    }

    /// When the next heartbeat is due (never without a token).
    fn heartbeat_at(&self, s: &State) -> Instant {
        if self.token.is_none() {
            return self.started + NEVER;
        }
        match s.last_sent {
            None => self.started + self.policy.first,
            Some(t) => t + self.policy.interval,
        }
    }

    /// The notification line due at `now`, if any (without LF). Updates the
    /// state as if the line was sent: call it only when it can be written.
    pub fn poll(&self, now: Instant) -> Option<Vec<u8>> {
        let mut s = lock(&self.state);
        if s.ended {
            return None;
        }
        // RULES G3.1: log messages go out at once, in order, before the
        // progress line due at the same time.
        if let Some(line) = self.log_line(&mut s) {
            return Some(line);
        }
        if let Some((_, line)) = s.requests.pop_front() {
            return Some(line);
        }
        self.token.as_ref()?;
        let quiet = now >= self.heartbeat_at(&s);
        if Self::report_waiting(&s) && (quiet || now >= self.report_allowed_at(&s)) {
            // A report takes a heartbeat's turn when the bucket is empty.
            let (value, total, message) = self.take_report(&mut s);
            s.tat = s.tat.max(now) + self.policy.min_gap;
            return Some(self.line(&mut s, now, value, total, message.as_deref()));
        }
        if !quiet {
            return None;
        }
        let secs = now.saturating_duration_since(self.started).as_secs();
        let running = match (&s.waiting, s.running_since) {
            (Some(what), _) => format!("waiting for {what} for {secs} s, not running yet"),
            (None, Some(since)) => format!(
                "still running after {} s (it waited {} s before it started)",
                now.saturating_duration_since(since).as_secs(),
                since.saturating_duration_since(self.started).as_secs()
            ),
            (None, None) => format!("still running after {secs} s"),
        };
        let (value, total, message) = match &s.reported {
            None => (s.last_value.map_or(0.0, just_above), None, running),
            Some(r) => {
                let msg = match &r.message {
                    Some(m) => format!("{m} ({running})"),
                    None => running,
                };
                (just_above(s.last_value.unwrap_or(r.progress)), r.total, msg)
            }
        };
        Some(self.line(&mut s, now, value, total, Some(&message)))
    }

    /// When [`Progress::poll`] may next have something to send (a ticker
    /// sleeps until then, or until woken by a report). `None` once ended.
    pub fn next_due(&self) -> Option<Instant> {
        let s = lock(&self.state);
        if s.ended {
            return None;
        }
        if !s.logs.is_empty() || s.dropped > 0 || !s.requests.is_empty() {
            return Some(self.started);
        }
        let heartbeat = self.heartbeat_at(&s);
        Some(if Self::report_waiting(&s) { heartbeat.min(self.report_allowed_at(&s)) } else { heartbeat })
    }

    /// The call has returned: no notification from [`Progress::poll`] after
    /// this, and the tool's last report, when it is still waiting, becomes
    /// the line [`Progress::take_final`] gives (whatever the rate limit
    /// says: RULES C2.4).
    pub fn finish(&self) {
        let mut s = lock(&self.state);
        if s.ended {
            return;
        }
        let mut last = Vec::new();
        while let Some(line) = self.log_line(&mut s) {
            last.push(line);
        }
        while Self::report_waiting(&s) {
            let (value, total, message) = self.take_report(&mut s);
            last.push(self.line(&mut s, Instant::now(), value, total, message.as_deref()));
        }
        s.last_lines = last.into();
        s.ended = true;
    }

    /// The lines still owed when the call finished (see
    /// [`Progress::finish`]): its log messages waiting, then the tool's last
    /// report if it was still waiting. The transport writes them, one per
    /// call, before the response. Each is given once; `None` after the last.
    pub fn take_final(&self) -> Option<Vec<u8>> {
        lock(&self.state).last_lines.pop_front()
    }

    /// The next report not sent yet (the oldest of a burst, else the
    /// latest), as the tool made it, now taken: a worker process forwards
    /// each to the engine, whose own
    /// [`Progress`] of the call times the notifications (RULES N4.1). `None`
    /// when nothing is waiting.
    pub fn forward_report(&self) -> Option<(f64, Option<f64>, Option<String>)> {
        let mut s = lock(&self.state);
        if let Some(r) = s.burst.pop_front() {
            return Some((r.progress, r.total, r.message));
        }
        if !s.pending {
            return None;
        }
        s.pending = false;
        s.reported.as_ref().map(|r| (r.progress, r.total, r.message.clone()))
    }

    /// No notification after this, not even the last report (the call was
    /// cancelled: it gets no response either).
    pub fn end(&self) {
        let mut s = lock(&self.state);
        s.ended = true;
        s.pending = false;
        s.burst.clear();
        s.last_lines.clear();
        s.logs.clear();
        s.dropped = 0;
        s.log_bytes = 0;
    }

    /// Has the call returned (or been cancelled)?
    pub fn is_ended(&self) -> bool {
        lock(&self.state).ended
    }

    /// Notifications sent so far (the final line included).
    pub fn sent(&self) -> u64 {
        lock(&self.state).sent
    }
}

/// A `tools/call` about to run its tool.
#[derive(Debug, Clone, Copy)]
pub struct CallStart<'a> {
    /// The request id, as raw JSON text.
    pub id: &'a str,
    /// The progress token, as raw JSON text, when the client sent a valid one.
    pub progress_token: Option<&'a str>,
    /// The least severe log level the client wants for this call, when it
    /// asked for log messages (RULES G1).
    pub log_level: Option<LogLevel>,
    /// What the client can be asked during this call (RULES A1).
    pub asks: Asks,
    /// The protocol version the call is answered in.
    pub version: Version,
}

impl CallStart<'_> {
    /// What the client listens to during this call.
    pub fn listen(&self) -> Listen {
        Listen { token: self.progress_token.map(str::to_owned), log: self.log_level, asks: self.asks }
    }
}

/// Told by the dispatcher when a tool starts and when it has returned.
pub trait CallWatch {
    /// The tool of `call` is about to run.
    fn started(&self, call: &CallStart<'_>);
    /// The tool returned. True when the call was cancelled meanwhile: the
    /// dispatcher then sends no response (RULES C4). Otherwise the call's
    /// progress is finished ([`Progress::finish`]) and the transport writes
    /// its final line, if any, before the response (RULES C2.4).
    fn finished(&self) -> bool;
    /// The server is stopping and its drain time is over: an interrupted
    /// tool was interrupted for that, and its answer says so (RULES H4.2).
    fn stopping(&self) -> bool {
        false
    }
    /// A 2026-07-28 call that may ask (RULES A2): the answers of earlier
    /// rounds, given after [`CallWatch::started`]. Ignored by a watch
    /// whose calls cannot ask.
    fn set_rounds(&self, _rounds: Rounds) {}
    /// After the tool returned, before [`CallWatch::finished`]: the call's
    /// rounds, whose unanswered questions make it `input_required`.
    fn take_rounds(&self) -> Option<Rounds> {
        None
    }
}

/// The watch of a transport that sends no progress and cannot cancel.
pub struct NoWatch;

impl CallWatch for NoWatch {
    fn started(&self, _: &CallStart<'_>) {}
    fn finished(&self) -> bool {
        false
    }
}

/// Interrupts the tool that is running (in R: the same interrupt as
/// SIGINT). Called from a transport thread.
pub type Interrupter = Arc<dyn Fn() + Send + Sync>;

#[derive(Debug)]
struct Running {
    /// The request id, parsed (ids compare as JSON values, so `"a"` and
    /// `"\u0061"` are the same id).
    id: Value,
    /// Which client sent it, when one transport serves several (an HTTP
    /// session); `None` on stdio.
    scope: Option<String>,
    progress: Option<Arc<Progress>>,
    cancelled: bool,
    /// What the client can be asked, and in which version: a call whose
    /// client listens to nothing else gets its progress only when it asks
    /// (see [`Inflight::progress_for_asks`]), so that such calls cost no
    /// more than others.
    asks: Asks,
    version: Version,
    started: Instant,
}

/// The call a transport is running, if any: its progress and its
/// cancellation (see the module documentation). Shared between the
/// serving thread and the transport's threads.
pub struct Inflight {
    policy: ProgressPolicy,
    interrupt: Option<Interrupter>,
    running: Mutex<Option<Running>>,
    /// Set by [`Inflight::set_scope`] before the next call starts.
    next_scope: Mutex<Option<String>>,
    /// Woken when a call starts or ends, or when a tool reports.
    wake: std::sync::Condvar,
    wake_lock: Mutex<u64>,
    /// In a worker process: how the running call asks its client, through
    /// the engine (RULES A1.4).
    asker: Mutex<Option<Asker>>,
}

impl Inflight {
    pub fn new(policy: ProgressPolicy, interrupt: Option<Interrupter>) -> Inflight {
        Inflight {
            policy,
            interrupt,
            running: Mutex::new(None),
            next_scope: Mutex::new(None),
            wake: std::sync::Condvar::new(),
            wake_lock: Mutex::new(0),
            asker: Mutex::new(None),
        }
    }

    /// In a worker process: ask the client through `asker` (the engine)
    /// from now on.
    pub fn set_asker(&self, asker: Option<Asker>) {
        *self.asker.lock().unwrap_or_else(|e| e.into_inner()) = asker;
    }

    /// How the running call asks, when not by itself (a worker's).
    pub fn asker(&self) -> Option<Asker> {
        self.asker.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub fn policy(&self) -> ProgressPolicy {
        self.policy
    }

    fn running(&self) -> MutexGuard<'_, Option<Running>> {
        self.running.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The scope (e.g. HTTP session id) of the call that starts next.
    pub fn set_scope(&self, scope: Option<String>) {
        *self.next_scope.lock().unwrap_or_else(|e| e.into_inner()) = scope;
    }

    /// The progress of the running call, when it has one.
    pub fn progress(&self) -> Option<Arc<Progress>> {
        self.running().as_ref().and_then(|r| r.progress.clone())
    }

    /// The progress of the running call, made now when its client can be
    /// asked and it has none yet (RULES A1): what a question is sent on.
    pub fn progress_for_asks(&self) -> Option<Arc<Progress>> {
        let mut g = self.running();
        let r = g.as_mut()?;
        if r.progress.is_none() && r.asks.any() && !r.cancelled {
            let listen = Listen { token: None, log: None, asks: r.asks };
            r.progress = Some(Arc::new(Progress::new(listen, r.version, self.policy, r.started)));
        }
        r.progress.clone()
    }

    /// A report for the running call (RULES C2.1), from whatever runs in
    /// it: the tool's own `mcp_progress()`, or the progress of a remote tool
    /// it proxies. `Ok(false)` when nobody listens (no call runs, or it has
    /// no progress token), `Ok(true)` when the report is sent (possibly
    /// coalesced with later ones); the ticker is woken when it has to be.
    pub fn report(&self, progress: f64, total: Option<f64>, message: Option<&str>) -> Result<bool, ReportError> {
        let Some(p) = self.progress().filter(|p| p.token.is_some()) else { return Ok(false) };
        if p.report(progress, total, message)? {
            // Only the first report waiting since the last notification
            // wakes the ticker: a tight loop of reports costs no wake-ups.
            self.notify();
        }
        Ok(true)
    }

    /// A log message for the running call (RULES G2): `true` when its
    /// client wants it (it is then sent), `false` when nobody listens at
    /// that level. The ticker is woken when it has to be.
    pub fn log(&self, entry: LogEntry) -> bool {
        let Some(p) = self.progress() else { return false };
        if !p.wants(entry.level) {
            return false;
        }
        if p.log(entry) {
            self.notify();
        }
        true
    }

    /// The least severe level the running call's client wants, when it
    /// asked for log messages: the tool's side installs its handlers for
    /// `message()` and `warning()` only then.
    pub fn log_level(&self) -> Option<LogLevel> {
        self.progress().and_then(|p| p.log_level())
    }

    /// The scope of the running call (its HTTP session), if any.
    pub fn scope(&self) -> Option<String> {
        self.running().as_ref().and_then(|r| r.scope.clone())
    }

    /// Is a call running?
    pub fn is_running(&self) -> bool {
        self.running().is_some()
    }

    /// Cancel the running call if its id is `request_id` (and, when
    /// `scope` is given, it came from that scope): mark it cancelled and
    /// interrupt the tool. True when it was running. Unknown or finished
    /// requests are ignored (RULES C4).
    pub fn cancel(&self, scope: Option<&str>, request_id: &Value) -> bool {
        let mut g = self.running();
        let Some(r) = g.as_mut() else { return false };
        if &r.id != request_id || r.scope.as_deref() != scope || r.cancelled {
            return false;
        }
        r.cancelled = true;
        if let Some(p) = &r.progress {
            p.end();
        }
        drop(g);
        if let Some(i) = &self.interrupt {
            i();
        }
        self.notify();
        true
    }

    /// Interrupt the running call's tool without cancelling the call: it is
    /// still answered (with the interrupted tool's result). Used when a
    /// stopping server's drain time is up. True when a call was running.
    pub fn interrupt_running(&self) -> bool {
        if !self.is_running() {
            return false;
        }
        if let Some(i) = &self.interrupt {
            i();
        }
        true
    }

    /// Wake whoever waits in [`Inflight::wait`] (a tool reported progress).
    pub fn notify(&self) {
        let mut n = self.wake_lock.lock().unwrap_or_else(|e| e.into_inner());
        *n = n.wrapping_add(1);
        self.wake.notify_all();
    }

    /// Sleep until `deadline` or until [`Inflight::notify`] is called.
    pub fn wait(&self, deadline: Instant) {
        self.wait_after(self.epoch(), deadline);
    }

    /// How many times [`Inflight::notify`] was called so far. A ticker reads
    /// it before looking at the state, then sleeps with
    /// [`Inflight::wait_after`], so that a wake-up in between is not lost.
    pub fn epoch(&self) -> u64 {
        *self.wake_lock.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sleep until `deadline`, unless [`Inflight::notify`] was called since
    /// [`Inflight::epoch`] returned `epoch` (then return at once).
    pub fn wait_after(&self, epoch: u64, deadline: Instant) {
        let g = self.wake_lock.lock().unwrap_or_else(|e| e.into_inner());
        let timeout = deadline.saturating_duration_since(Instant::now());
        let _ = self.wake.wait_timeout_while(g, timeout, |n| *n == epoch);
    }
}

impl CallWatch for Inflight {
    fn set_rounds(&self, rounds: Rounds) {
        if let Some(p) = self.progress_for_asks() {
            p.set_rounds(rounds);
        }
    }

    fn take_rounds(&self) -> Option<Rounds> {
        self.progress().and_then(|p| p.rounds().take())
    }

    fn started(&self, call: &CallStart<'_>) {
        let now = Instant::now();
        let listen = call.listen();
        let (asks, version) = (listen.asks, call.version);
        let eager = listen.token.is_some() || listen.log.is_some();
        let progress = eager.then(|| Arc::new(Progress::new(listen, call.version, self.policy, now)));
        let id = serde_json::from_str(call.id).unwrap_or(Value::Null);
        let scope = self.next_scope.lock().unwrap_or_else(|e| e.into_inner()).take();
        // A ticker only has work for a call with progress: calls without a
        // token wake no thread (a wake-up per call would cost every call; a
        // call that listens to log messages alone wakes it when it logs).
        let wake = progress.as_ref().is_some_and(|p| p.token.is_some());
        *self.running() = Some(Running { id, scope, progress, cancelled: false, asks, version, started: now });
        if wake {
            self.notify();
        }
    }

    fn finished(&self) -> bool {
        let r = self.running().take();
        match r {
            Some(r) => {
                if let Some(p) = &r.progress {
                    // A cancelled call's progress has ended already; this
                    // keeps the last report of any other for the response.
                    p.finish();
                    // The ticker keeps time for heartbeats only; what a
                    // call still owes, the transport writes itself.
                    if p.token.is_some() {
                        self.notify();
                    }
                }
                r.cancelled
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn tok(t: &str) -> Listen {
        Listen { token: Some(t.to_owned()), log: None, asks: Asks::NONE }
    }

    fn policy() -> ProgressPolicy {
        ProgressPolicy {
            first: Duration::from_secs(1),
            interval: Duration::from_secs(5),
            min_gap: Duration::from_millis(100),
            burst: 10,
        }
    }

    fn text(line: Vec<u8>) -> String {
        String::from_utf8(line).unwrap()
    }

    fn params(line: &str) -> Value {
        let v: Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["method"], "notifications/progress");
        v["params"].clone()
    }

    fn value(line: Vec<u8>) -> f64 {
        params(&text(line))["progress"].as_f64().unwrap()
    }

    /// The value, total and message of a notification.
    fn sent(line: Vec<u8>) -> (f64, Value, Value) {
        let p = params(&text(line));
        (p["progress"].as_f64().unwrap(), p["total"].clone(), p["message"].clone())
    }

    /// Above `base`, by too little to move a progress bar.
    fn hair_above(v: f64, base: f64) -> bool {
        v > base && v < base + 1e-6
    }

    #[test]
    fn token_is_a_string_or_an_integer() {
        let p = |s: &str| progress_token(Some(&serde_json::from_str(s).unwrap()));
        assert_eq!(p(r#"{"_meta":{"progressToken":"a\"b"}}"#).as_deref(), Some(r#""a\"b""#));
        assert_eq!(p(r#"{"_meta":{"progressToken":42}}"#).as_deref(), Some("42"));
        assert_eq!(p(r#"{"_meta":{"progressToken":-7}}"#).as_deref(), Some("-7"));
        for bad in ["1.5", "true", "null", "[1]", "{}", "1e3"] {
            assert_eq!(p(&format!(r#"{{"_meta":{{"progressToken":{bad}}}}}"#)), None, "{bad}");
        }
        assert_eq!(p(r#"{"progressToken":1}"#), None);
        assert_eq!(p(r#"{"_meta":[]}"#), None);
    }

    #[test]
    fn c1_heartbeat_waits_then_repeats_at_the_interval_without_moving() {
        let t0 = Instant::now();
        let p = Progress::new(tok("\"t\""), Version::V2025_11_25, policy(), t0);
        assert_eq!(p.poll(t0), None);
        assert_eq!(p.poll(t0 + Duration::from_millis(999)), None, "a quick call gets nothing");
        let first = params(&text(p.poll(t0 + Duration::from_secs(1)).unwrap()));
        assert_eq!(first["progressToken"], "t");
        assert_eq!(first["progress"], 0, "a heartbeat sets no scale");
        assert!(first.get("total").is_none());
        assert_eq!(first["message"], "still running after 1 s");
        assert_eq!(p.poll(t0 + Duration::from_secs(5)), None, "not before the interval");
        let second = params(&text(p.poll(t0 + Duration::from_secs(6)).unwrap()));
        let v = second["progress"].as_f64().unwrap();
        assert!(hair_above(v, 0.0), "a hair above the last value: {v}");
        assert_eq!(second["message"], "still running after 6 s");
        assert_eq!(p.next_due(), Some(t0 + Duration::from_secs(11)));
        p.finish();
        assert_eq!(p.take_final(), None, "no report was waiting");
        assert_eq!(p.poll(t0 + Duration::from_secs(60)), None, "nothing after the end");
        assert_eq!(p.next_due(), None);
        assert_eq!(p.sent(), 2);
    }

    #[test]
    fn c2_reports_are_checked() {
        let p = Progress::new(tok("7"), Version::V2025_11_25, policy(), Instant::now());
        p.report(1.0, Some(10.0), Some("one")).unwrap();
        assert_eq!(p.report(1.0, None, None), Err(ReportError::NotIncreasing { previous: 1.0 }));
        assert_eq!(p.report(0.5, None, None), Err(ReportError::NotIncreasing { previous: 1.0 }));
        assert_eq!(p.report(f64::NAN, None, None), Err(ReportError::NotFinite));
        assert_eq!(p.report(2.0, Some(f64::INFINITY), None), Err(ReportError::NotFinite));
        p.report(2.0, Some(10.0), Some("two")).unwrap();
        // Both within the burst: each is sent, in order (RULES C2.2).
        let a = params(&text(p.poll(Instant::now()).unwrap()));
        assert_eq!((a["progressToken"].clone(), a["progress"].clone()), (Value::from(7), Value::from(1)));
        assert_eq!(a["message"], "one");
        let b = params(&text(p.poll(Instant::now()).unwrap()));
        assert_eq!((b["progress"].clone(), b["total"].clone()), (Value::from(2), Value::from(10)));
        assert_eq!(b["message"], "two");
    }

    #[test]
    fn c2_a_burst_is_not_coalesced_when_the_writer_is_late() {
        // The conformance suite's 0, 50 and 100, reported 50 ms apart while
        // the writer does not run (a busy machine): all three are sent, in
        // order, when it does.
        let t0 = Instant::now();
        let p = Progress::new(tok("7"), Version::V2025_11_25, policy(), t0);
        for (i, v) in [0.0, 50.0, 100.0].into_iter().enumerate() {
            p.report_at(t0 + Duration::from_millis(50 * i as u64), v, Some(100.0), None).unwrap();
        }
        let late = t0 + Duration::from_millis(400);
        let sent: Vec<f64> = std::iter::from_fn(|| p.poll(late)).map(value).collect();
        assert_eq!(sent, [0.0, 50.0, 100.0]);
        // A burst longer than the bucket: the first ten keep their turn, the
        // rest coalesce into the latest, which waits for the rate limit.
        let t1 = t0 + Duration::from_secs(10);
        let p = Progress::new(tok("7"), Version::V2025_11_25, policy(), t1);
        for i in 0..50 {
            p.report_at(t1, f64::from(i), None, None).unwrap();
        }
        let sent: Vec<f64> = std::iter::from_fn(|| p.poll(t1)).map(value).collect();
        assert_eq!(sent, [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 49.0]);
        // and finish() sends what is still waiting, burst and latest alike
        let p = Progress::new(tok("7"), Version::V2025_11_25, policy(), t1);
        p.report_at(t1, 1.0, None, None).unwrap();
        p.report_at(t1, 2.0, None, None).unwrap();
        p.finish();
        let last: Vec<f64> = std::iter::from_fn(|| p.take_final()).map(value).collect();
        assert_eq!(last, [1.0, 2.0]);
    }

    #[test]
    fn c2_a_burst_goes_out_at_once_then_the_rate_is_limited() {
        let t0 = Instant::now();
        let p = Progress::new(tok("7"), Version::V2025_11_25, policy(), t0);
        // Ten reports polled as they come, all at the same instant: the burst.
        for i in 1..=10 {
            p.report(f64::from(i), Some(100.0), None).unwrap();
            assert_eq!(p.next_due(), Some(t0), "report {i} is due at once");
            assert_eq!(value(p.poll(t0).unwrap()), f64::from(i));
        }
        p.report(11.0, Some(100.0), None).unwrap();
        assert_eq!(p.poll(t0), None, "the bucket is empty");
        assert_eq!(p.poll(t0 + Duration::from_millis(99)), None);
        assert_eq!(p.next_due(), Some(t0 + Duration::from_millis(100)));
        assert_eq!(value(p.poll(t0 + Duration::from_millis(100)).unwrap()), 11.0);
        // A tight loop: 100,000 reports within a second, each polled (the
        // most a ticker could do), send one notification per 100 ms.
        let mut sent = 0;
        let mut last = 11.0;
        for i in 0..100_000u32 {
            let now = t0 + Duration::from_millis(100) + Duration::from_micros(10 * u64::from(i));
            p.report_at(now, f64::from(i) + 12.0, Some(2e6), None).unwrap();
            if let Some(l) = p.poll(now) {
                let v = value(l);
                assert!(v > last);
                last = v;
                sent += 1;
            }
        }
        assert!((9..=10).contains(&sent), "{sent} notifications for 100,000 reports in a second");
        // A quiet spell refills the bucket: the next burst goes out at once.
        let later = t0 + Duration::from_secs(3);
        for i in 0..10 {
            p.report(2e6 + f64::from(i), Some(4e6), None).unwrap();
            assert!(p.poll(later).is_some(), "report {i} after a quiet spell");
        }
    }

    #[test]
    fn n3_2_heartbeats_say_what_a_call_waits_for_then_how_long_it_runs() {
        let t0 = Instant::now();
        let p = Progress::new(tok("\"t\""), Version::V2025_11_25, policy(), t0);
        p.set_waiting("a free worker");
        let first: Value = serde_json::from_slice(&p.poll(t0 + Duration::from_secs(2)).unwrap()).unwrap();
        assert_eq!(first["params"]["message"], "waiting for a free worker for 2 s, not running yet");
        p.set_running(t0 + Duration::from_secs(3));
        let next: Value = serde_json::from_slice(&p.poll(t0 + Duration::from_secs(20)).unwrap()).unwrap();
        assert_eq!(next["params"]["message"], "still running after 17 s (it waited 3 s before it started)");
    }

    #[test]
    fn c2_only_the_first_waiting_report_asks_for_a_wake_up() {
        let t0 = Instant::now();
        let p = Progress::new(tok("1"), Version::V2025_11_25, policy(), t0);
        assert_eq!(p.report(1.0, None, None), Ok(true));
        assert_eq!(p.report(2.0, None, None), Ok(false), "joins the waiting one");
        assert_eq!(p.report(3.0, None, None), Ok(false));
        // (all three within the burst: each is sent)
        let sent: Vec<f64> = std::iter::from_fn(|| p.poll(t0)).map(value).collect();
        assert_eq!(sent, [1.0, 2.0, 3.0]);
        assert_eq!(p.report(4.0, None, None), Ok(true), "the first after the notifications");
        p.finish();
        assert_eq!(p.report(5.0, None, None), Ok(false), "nothing is sent after the end");
    }

    #[test]
    fn c2_heartbeats_never_set_the_scale() {
        let t0 = Instant::now();
        let p = Progress::new(tok("\"x\""), Version::V2025_11_25, policy(), t0);
        // Two heartbeats before the tool's first report.
        assert_eq!(value(p.poll(t0 + Duration::from_secs(1)).unwrap()), 0.0);
        let hb = value(p.poll(t0 + Duration::from_secs(6)).unwrap());
        assert!(hair_above(hb, 0.0), "{hb}");
        // The tool reports half of 1: above everything sent, so unchanged.
        p.report(0.5, Some(1.0), Some("half")).unwrap();
        assert_eq!(sent(p.poll(t0 + Duration::from_secs(7)).unwrap()), (0.5, json!(1), json!("half")));
        // A silent tool: the heartbeat repeats its total and message, a hair above 0.5.
        let (cv, total, message) = sent(p.poll(t0 + Duration::from_secs(12)).unwrap());
        assert!(hair_above(cv, 0.5), "{cv}");
        assert_eq!((total, message), (json!(1), json!("half (still running after 12 s)")));
        // The tool's next value is above the heartbeat's: unchanged again.
        p.report(0.75, Some(1.0), None).unwrap();
        assert_eq!(value(p.poll(t0 + Duration::from_secs(13)).unwrap()), 0.75);
    }

    #[test]
    fn c2_a_report_at_or_below_a_heartbeat_goes_out_just_above_it() {
        let t0 = Instant::now();
        let p = Progress::new(tok("\"x\""), Version::V2025_11_25, policy(), t0);
        assert_eq!(value(p.poll(t0 + Duration::from_secs(1)).unwrap()), 0.0);
        // The tool starts at 0 of 100 (as the conformance suite's tool does).
        p.report(0.0, Some(100.0), Some("start")).unwrap();
        let (av, total, message) = sent(p.poll(t0 + Duration::from_millis(1100)).unwrap());
        assert!(hair_above(av, 0.0), "{av}");
        assert_eq!((total, message), (json!(100), json!("start")));
        p.report(50.0, Some(100.0), None).unwrap();
        assert_eq!(value(p.poll(t0 + Duration::from_millis(1150)).unwrap()), 50.0);
    }

    #[test]
    fn c2_the_last_report_is_kept_for_the_response() {
        let t0 = Instant::now();
        let p = Progress::new(tok("1"), Version::V2025_11_25, policy(), t0);
        for i in 1..=10 {
            p.report(f64::from(i), Some(20.0), None).unwrap();
            p.poll(t0).unwrap();
        }
        // The bucket is empty: the ticker would wait 100 ms for this one.
        p.report(19.0, Some(20.0), Some("almost")).unwrap();
        p.report(20.0, Some(20.0), Some("done")).unwrap();
        assert_eq!(p.poll(t0), None);
        p.finish();
        assert_eq!(p.poll(t0 + Duration::from_secs(1)), None, "the ticker sends nothing after the end");
        assert_eq!(sent(p.take_final().expect("the last report")), (20.0, json!(20), json!("done")));
        assert_eq!(p.take_final(), None, "given once");
        assert_eq!(p.sent(), 11);
        // A report already sent is not sent again.
        let q = Progress::new(tok("2"), Version::V2025_11_25, policy(), t0);
        q.report(1.0, None, None).unwrap();
        q.poll(t0).unwrap();
        q.finish();
        assert_eq!(q.take_final(), None);
        // A cancelled call sends nothing more, not even its last report.
        let r = Progress::new(tok("3"), Version::V2025_11_25, policy(), t0);
        r.report(1.0, None, None).unwrap();
        r.end();
        r.finish();
        assert_eq!(r.take_final(), None);
        assert_eq!(r.sent(), 0);
    }

    #[test]
    fn c3_message_only_where_the_version_has_it() {
        let t0 = Instant::now();
        let old = Progress::new(tok("1"), Version::V2024_11_05, policy(), t0);
        old.report(1.0, None, Some("m")).unwrap();
        let line = text(old.poll(t0).unwrap());
        assert_eq!(
            line,
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}"#
        );
        let new = Progress::new(tok("1"), Version::V2026_07_28, policy(), t0);
        new.report(0.25, Some(1.0), Some("m")).unwrap();
        assert_eq!(
            text(new.poll(t0).unwrap()),
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":0.25,"total":1,"message":"m"}}"#
        );
    }

    #[test]
    fn just_above_is_above() {
        for x in [0.0, 1.0, -1.0, 1e-300, 1e300, 123.456, f64::MAX / 2.0] {
            assert!(just_above(x) > x, "{x}");
        }
    }

    #[test]
    fn c2_inflight_reports_to_the_running_call() {
        let f = Inflight::new(policy(), None);
        assert_eq!(f.report(1.0, None, None), Ok(false), "no call runs");
        f.started(&CallStart {
            id: "1",
            progress_token: None,
            log_level: None,
            asks: Asks::NONE,
            version: Version::V2025_11_25,
        });
        assert_eq!(f.report(1.0, None, None), Ok(false), "a call without a token");
        assert!(!f.finished());
        f.started(&CallStart {
            id: "2",
            progress_token: Some("9"),
            log_level: None,
            asks: Asks::NONE,
            version: Version::V2025_11_25,
        });
        let p = f.progress().unwrap();
        let epoch = f.epoch();
        assert_eq!(f.report(1.0, Some(2.0), None), Ok(true));
        assert_ne!(f.epoch(), epoch, "the first waiting report wakes the ticker");
        let epoch = f.epoch();
        assert_eq!(f.report(2.0, Some(2.0), None), Ok(true));
        assert_eq!(f.epoch(), epoch, "a report joining a waiting one does not");
        assert_eq!(f.report(2.0, None, None), Err(ReportError::NotIncreasing { previous: 2.0 }));
        assert!(!f.finished());
        let last: Vec<f64> = std::iter::from_fn(|| p.take_final()).map(value).collect();
        assert_eq!(last, [1.0, 2.0], "kept for the response, both (a burst)");
    }

    #[test]
    fn c4_inflight_cancels_only_the_running_call() {
        let hits = Arc::new(AtomicUsize::new(0));
        let h = hits.clone();
        let f = Inflight::new(
            policy(),
            Some(Arc::new(move || {
                h.fetch_add(1, Ordering::SeqCst);
            })),
        );
        let id = |s: &str| serde_json::from_str::<Value>(s).unwrap();
        assert!(!f.cancel(None, &id("1")), "nothing running");
        f.started(&CallStart {
            id: "\"a\"",
            progress_token: Some("5"),
            log_level: None,
            asks: Asks::NONE,
            version: Version::V2025_11_25,
        });
        assert!(f.progress().is_some());
        assert!(!f.cancel(None, &id("1")), "another id");
        assert!(!f.cancel(Some("s"), &id("\"a\"")), "another scope");
        assert!(f.cancel(None, &id("\"\\u0061\"")), "the same id, spelled differently");
        assert!(!f.cancel(None, &id("\"a\"")), "cancelled once");
        assert_eq!(hits.load(Ordering::SeqCst), 1);
        assert!(f.progress().unwrap().is_ended(), "no progress after a cancel");
        assert!(f.finished(), "the dispatcher learns it was cancelled");
        assert!(!f.is_running());
        // The next call is not cancelled, and has no progress without a token.
        f.set_scope(Some("s".into()));
        f.started(&CallStart {
            id: "2",
            progress_token: None,
            log_level: None,
            asks: Asks::NONE,
            version: Version::V2026_07_28,
        });
        assert!(f.progress().is_none());
        assert!(!f.cancel(None, &id("2")), "scope must match");
        assert!(!f.finished());
        assert!(!f.cancel(Some("s"), &id("2")), "finished calls are not cancelled");
        assert_eq!(hits.load(Ordering::SeqCst), 1);
    }

    fn logged(level: LogLevel, text: &str) -> LogEntry {
        LogEntry { level, logger: Some("t".into()), data: serde_json::to_string(text).unwrap() }
    }

    fn listen_log(level: LogLevel) -> Listen {
        Listen { token: None, log: Some(level), asks: Asks::NONE }
    }

    #[test]
    fn g2_messages_below_the_level_or_without_one_are_not_wanted() {
        let t0 = Instant::now();
        let p = Progress::new(listen_log(LogLevel::Warning), Version::V2025_11_25, policy(), t0);
        assert!(!p.log(logged(LogLevel::Info, "quiet")));
        assert!(p.log(logged(LogLevel::Error, "loud")), "the first one waiting wakes the ticker");
        assert!(!p.log(logged(LogLevel::Warning, "also")), "queued behind: no second wake-up");
        let lines: Vec<Value> =
            std::iter::from_fn(|| p.poll(t0)).map(|l| serde_json::from_slice(&l).unwrap()).collect();
        assert_eq!(
            lines,
            [
                json!({"jsonrpc":"2.0","method":"notifications/message","params":{"level":"error","logger":"t","data":"loud"}}),
                json!({"jsonrpc":"2.0","method":"notifications/message","params":{"level":"warning","logger":"t","data":"also"}}),
            ]
        );
        // No token: no heartbeat, however long the call runs.
        assert_eq!(p.poll(t0 + Duration::from_secs(3600)), None);
        let q = Progress::new(tok("1"), Version::V2025_11_25, policy(), t0);
        assert!(!q.log(logged(LogLevel::Emergency, "x")), "no level asked for");
        assert!(!q.wants(LogLevel::Emergency));
    }

    #[test]
    fn g3_messages_come_before_the_progress_due_and_all_before_the_response() {
        let t0 = Instant::now();
        let listen = Listen { token: Some("7".into()), log: Some(LogLevel::Debug), asks: Asks::NONE };
        let p = Progress::new(listen, Version::V2025_11_25, policy(), t0);
        p.report(1.0, Some(2.0), None).unwrap();
        p.log(logged(LogLevel::Debug, "a"));
        assert_eq!(p.next_due(), Some(t0), "due at once");
        let first: Value = serde_json::from_slice(&p.poll(t0).unwrap()).unwrap();
        assert_eq!(first["method"], "notifications/message");
        let second: Value = serde_json::from_slice(&p.poll(t0).unwrap()).unwrap();
        assert_eq!(second["method"], "notifications/progress");
        // At the end: the messages waiting, then the last report.
        p.log(logged(LogLevel::Info, "b"));
        p.log(logged(LogLevel::Info, "c"));
        p.report(2.0, Some(2.0), None).unwrap();
        p.finish();
        assert_eq!(p.poll(t0), None, "ended");
        let owed: Vec<Value> =
            std::iter::from_fn(|| p.take_final()).map(|l| serde_json::from_slice(&l).unwrap()).collect();
        let kinds: Vec<&str> = owed.iter().map(|v| v["method"].as_str().unwrap()).collect();
        assert_eq!(kinds, ["notifications/message", "notifications/message", "notifications/progress"]);
        assert_eq!(owed[1]["params"]["data"], "c");
        assert!(!p.log(logged(LogLevel::Info, "late")), "nothing after the end");
        assert_eq!(p.take_final(), None);
    }

    #[test]
    fn g3_a_flood_is_bounded_and_the_client_is_told() {
        let t0 = Instant::now();
        let p = Progress::new(listen_log(LogLevel::Info), Version::V2025_11_25, policy(), t0);
        for i in 0..logging::MAX_PENDING + 25 {
            p.log(logged(LogLevel::Info, &format!("m{i}")));
        }
        let lines: Vec<Value> =
            std::iter::from_fn(|| p.poll(t0)).map(|l| serde_json::from_slice(&l).unwrap()).collect();
        assert_eq!(lines.len(), logging::MAX_PENDING + 1);
        assert_eq!(lines[logging::MAX_PENDING - 1]["params"]["data"], format!("m{}", logging::MAX_PENDING - 1));
        let last = &lines[logging::MAX_PENDING]["params"];
        assert_eq!(last["level"], "warning");
        assert_eq!(last["logger"], logging::ENGINE_LOGGER);
        assert!(last["data"].as_str().unwrap().starts_with("25 log messages were left out"), "{last}");
        // An oversized message is replaced by a warning saying so.
        p.log(LogEntry {
            level: LogLevel::Info,
            logger: None,
            data: serde_json::to_string(&"x".repeat(logging::MAX_DATA_BYTES + 1)).unwrap(),
        });
        let big: Value = serde_json::from_slice(&p.poll(t0).unwrap()).unwrap();
        assert_eq!(big["params"]["level"], "warning");
        assert!(big["params"]["data"].as_str().unwrap().contains("was left out"));
        // A worker forwards what waits, the drop warning included.
        for i in 0..logging::MAX_PENDING + 1 {
            p.log(logged(LogLevel::Info, &format!("w{i}")));
        }
        let fwd = p.forward_logs();
        assert_eq!(fwd.len(), logging::MAX_PENDING + 1);
        assert_eq!(fwd[logging::MAX_PENDING].logger.as_deref(), Some(logging::ENGINE_LOGGER));
        assert!(p.forward_logs().is_empty());
    }

    #[test]
    fn g2_the_inflight_logs_to_the_running_call_only() {
        let f = Inflight::new(policy(), None);
        assert!(!f.log(logged(LogLevel::Emergency, "idle")), "no call runs");
        f.started(&CallStart {
            id: "1",
            progress_token: None,
            log_level: Some(LogLevel::Notice),
            asks: Asks::NONE,
            version: Version::V2026_07_28,
        });
        assert_eq!(f.log_level(), Some(LogLevel::Notice));
        assert!(f.log(logged(LogLevel::Notice, "yes")));
        assert!(!f.log(logged(LogLevel::Info, "no")));
        assert_eq!(f.report(1.0, None, None), Ok(false), "no token: nobody listens to progress");
        assert!(!f.finished());
        assert_eq!(f.log_level(), None);
    }

    #[test]
    fn g3_the_drop_warning_comes_where_messages_were_dropped_at_the_clients_level() {
        let t0 = Instant::now();
        let p = Progress::new(listen_log(LogLevel::Error), Version::V2025_11_25, policy(), t0);
        for i in 0..logging::MAX_PENDING + 5 {
            p.log(logged(LogLevel::Error, &format!("m{i}")));
        }
        for _ in 0..10 {
            p.poll(t0).unwrap();
        }
        p.log(logged(LogLevel::Critical, "after"));
        let rest: Vec<Value> = std::iter::from_fn(|| p.poll(t0)).map(|l| serde_json::from_slice(&l).unwrap()).collect();
        let n = rest.len();
        assert_eq!(rest[n - 1]["params"]["data"], "after");
        let w = &rest[n - 2]["params"];
        assert_eq!(w["level"], "error", "at the client's level, not below it");
        assert!(w["data"].as_str().unwrap().starts_with("5 log messages were left out"), "{w}");
        // A long logger's name is cut.
        p.log(LogEntry { level: LogLevel::Error, logger: Some("é".repeat(200)), data: "1".into() });
        let l: Value = serde_json::from_slice(&p.poll(t0).unwrap()).unwrap();
        assert!(l["params"]["logger"].as_str().unwrap().len() <= logging::MAX_LOGGER_BYTES);
    }
}
