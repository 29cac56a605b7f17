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
//! * the tool (through the R bridge's `mcp_progress()`), which
//!   [`Progress::report`]s its own values;
//! * the transport's ticker (a thread on stdio, a task per response stream
//!   on HTTP), which asks [`Progress::poll`] for the line due now and writes
//!   it;
//! * the dispatcher, which [`Progress::end`]s it before the response is
//!   written, so that no notification follows the response.
//!
//! What `poll` sends:
//!
//! * the tool's latest report, at most one per [`ProgressPolicy::min_gap`]
//!   (reports in between are coalesced: the latest wins);
//! * otherwise a heartbeat, when nothing was sent for a while: the first
//!   [`ProgressPolicy::first`] after the call started, then every
//!   [`ProgressPolicy::interval`]. Before the tool's first report a heartbeat
//!   counts 1, 2, 3, ...; afterwards it repeats the tool's total and message
//!   with a value a hair above the last one sent (the protocol wants every
//!   value to increase). Its message says for how long the tool has run.
//!
//! The values sent always increase. A tool report at or below the last
//! value sent (only possible when heartbeats ran before the tool's first
//! report) is sent just above it, with the tool's total and message.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::projection;
use crate::version::Version;

/// When heartbeats and tool reports are sent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProgressPolicy {
    /// The first heartbeat, after the call started.
    pub first: Duration,
    /// Between heartbeats (since the last notification of any kind).
    pub interval: Duration,
    /// At least this long between two notifications carrying tool reports.
    pub min_gap: Duration,
}

impl Default for ProgressPolicy {
    fn default() -> Self {
        ProgressPolicy {
            first: Duration::from_secs(1),
            interval: Duration::from_secs(5),
            min_gap: Duration::from_millis(100),
        }
    }
}

impl ProgressPolicy {
    /// A policy with heartbeats every `interval` (the first after at most
    /// one second, sooner when the interval is shorter).
    pub fn with_interval(interval: Duration) -> ProgressPolicy {
        let d = ProgressPolicy::default();
        ProgressPolicy { first: d.first.min(interval), interval, min_gap: d.min_gap.min(interval) }
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
    /// The tool's last accepted report, and whether it is still to be sent.
    reported: Option<Report>,
    pending: bool,
    ended: bool,
}

/// The notifications of one running call (see the module documentation).
#[derive(Debug)]
pub struct Progress {
    token: String,
    version: Version,
    started: Instant,
    policy: ProgressPolicy,
    state: Mutex<State>,
}

fn lock(m: &Mutex<State>) -> MutexGuard<'_, State> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A value a hair above `x`, so that a heartbeat after a tool report keeps
/// the values increasing without visibly changing them.
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
    /// The progress of a call that started at `started`, for the client's
    /// `token` (raw JSON text), notified in protocol version `version`.
    pub fn new(token: String, version: Version, policy: ProgressPolicy, started: Instant) -> Progress {
        Progress {
            token,
            version,
            started,
            policy,
            state: Mutex::new(State {
                sent: 0,
                last_value: None,
                last_sent: None,
                reported: None,
                pending: false,
                ended: false,
            }),
        }
    }

    /// The client's token, as raw JSON text.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// A report from the tool (RULES C2). `progress` must be above the
    /// tool's previous report; both numbers must be finite. Accepted
    /// reports are coalesced until [`Progress::poll`] sends the latest.
    ///
    /// `Ok(true)` when the ticker should be woken ([`Inflight::notify`]):
    /// this report is the first one waiting since the last notification.
    /// `Ok(false)` when it joins one already waiting (the ticker is already
    /// due to send it) or the call has ended: a tool reporting in a tight
    /// loop then costs no wake-ups beyond one per notification sent.
    pub fn report(&self, progress: f64, total: Option<f64>, message: Option<&str>) -> Result<bool, ReportError> {
        if !progress.is_finite() || total.is_some_and(|t| !t.is_finite()) {
            return Err(ReportError::NotFinite);
        }
        let mut s = lock(&self.state);
        if let Some(prev) = &s.reported {
            if progress <= prev.progress {
                return Err(ReportError::NotIncreasing { previous: prev.progress });
            }
        }
        s.reported = Some(Report { progress, total, message: message.map(str::to_owned) });
        let was_pending = s.pending;
        s.pending = !s.ended;
        Ok(s.pending && !was_pending)
    }

    /// The notification line due at `now`, if any (without LF). Updates the
    /// state as if the line was sent: call it only when it can be written.
    pub fn poll(&self, now: Instant) -> Option<Vec<u8>> {
        let mut s = lock(&self.state);
        if s.ended {
            return None;
        }
        let since_last = s.last_sent.map(|t| now.saturating_duration_since(t));
        let (value, total, message) = if s.pending && since_last.is_none_or(|d| d >= self.policy.min_gap) {
            let r = s.reported.clone().expect("pending implies a report");
            let value = match s.last_value {
                Some(last) if r.progress <= last => just_above(last),
                _ => r.progress,
            };
            s.pending = false;
            (value, r.total, r.message)
        } else {
            let quiet = match since_last {
                None => now.saturating_duration_since(self.started) >= self.policy.first,
                Some(d) => d >= self.policy.interval,
            };
            if !quiet {
                return None;
            }
            let secs = now.saturating_duration_since(self.started).as_secs();
            let running = format!("still running after {secs} s");
            match &s.reported {
                None => ((s.sent + 1) as f64, None, Some(running)),
                Some(r) => {
                    let last = s.last_value.unwrap_or(r.progress);
                    let msg = match &r.message {
                        Some(m) => format!("{m} ({running})"),
                        None => running,
                    };
                    (just_above(last), r.total, Some(msg))
                }
            }
        };
        s.sent += 1;
        s.last_value = Some(value);
        s.last_sent = Some(now);
        let mut out = Vec::with_capacity(160);
        projection::write_progress_notification(&mut out, self.version, &self.token, value, total, message.as_deref());
        Some(out)
    }

    /// When [`Progress::poll`] may next have something to send (a ticker
    /// sleeps until then, or until woken by a report). `None` once ended.
    pub fn next_due(&self) -> Option<Instant> {
        let s = lock(&self.state);
        if s.ended {
            return None;
        }
        Some(match (s.pending, s.last_sent) {
            (true, None) => self.started,
            (true, Some(t)) => t + self.policy.min_gap,
            (false, None) => self.started + self.policy.first,
            (false, Some(t)) => t + self.policy.interval,
        })
    }

    /// No notification after this (the call has returned).
    pub fn end(&self) {
        let mut s = lock(&self.state);
        s.ended = true;
        s.pending = false;
    }

    /// Has the call returned?
    pub fn is_ended(&self) -> bool {
        lock(&self.state).ended
    }

    /// Notifications sent so far.
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
    /// The protocol version the call is answered in.
    pub version: Version,
}

/// Told by the dispatcher when a tool starts and when it has returned.
pub trait CallWatch {
    /// The tool of `call` is about to run.
    fn started(&self, call: &CallStart<'_>);
    /// The tool returned. True when the call was cancelled meanwhile: the
    /// dispatcher then sends no response (RULES C4).
    fn finished(&self) -> bool;
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
        }
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
    fn started(&self, call: &CallStart<'_>) {
        let now = Instant::now();
        let progress =
            call.progress_token.map(|t| Arc::new(Progress::new(t.to_owned(), call.version, self.policy, now)));
        let id = serde_json::from_str(call.id).unwrap_or(Value::Null);
        let scope = self.next_scope.lock().unwrap_or_else(|e| e.into_inner()).take();
        // A ticker only has work for a call with progress: calls without a
        // token wake no thread (a wake-up per call would cost every call).
        let wake = progress.is_some();
        *self.running() = Some(Running { id, scope, progress, cancelled: false });
        if wake {
            self.notify();
        }
    }

    fn finished(&self) -> bool {
        let r = self.running().take();
        match r {
            Some(r) => {
                if let Some(p) = &r.progress {
                    p.end();
                    self.notify();
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
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn policy() -> ProgressPolicy {
        ProgressPolicy {
            first: Duration::from_secs(1),
            interval: Duration::from_secs(5),
            min_gap: Duration::from_millis(100),
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
    fn c1_heartbeat_waits_then_counts_at_the_interval() {
        let t0 = Instant::now();
        let p = Progress::new("\"t\"".into(), Version::V2025_11_25, policy(), t0);
        assert_eq!(p.poll(t0), None);
        assert_eq!(p.poll(t0 + Duration::from_millis(999)), None, "a quick call gets nothing");
        let first = params(&text(p.poll(t0 + Duration::from_secs(1)).unwrap()));
        assert_eq!(first["progressToken"], "t");
        assert_eq!(first["progress"], 1);
        assert!(first.get("total").is_none());
        assert_eq!(first["message"], "still running after 1 s");
        assert_eq!(p.poll(t0 + Duration::from_secs(5)), None, "not before the interval");
        let second = params(&text(p.poll(t0 + Duration::from_secs(6)).unwrap()));
        assert_eq!(second["progress"], 2);
        assert_eq!(second["message"], "still running after 6 s");
        assert_eq!(p.next_due(), Some(t0 + Duration::from_secs(11)));
        p.end();
        assert_eq!(p.poll(t0 + Duration::from_secs(60)), None, "nothing after the end");
        assert_eq!(p.next_due(), None);
        assert_eq!(p.sent(), 2);
    }

    #[test]
    fn c2_reports_are_checked_coalesced_and_rate_limited() {
        let t0 = Instant::now();
        let p = Progress::new("7".into(), Version::V2025_11_25, policy(), t0);
        p.report(1.0, Some(10.0), Some("one")).unwrap();
        assert_eq!(p.report(1.0, None, None), Err(ReportError::NotIncreasing { previous: 1.0 }));
        assert_eq!(p.report(0.5, None, None), Err(ReportError::NotIncreasing { previous: 1.0 }));
        assert_eq!(p.report(f64::NAN, None, None), Err(ReportError::NotFinite));
        assert_eq!(p.report(2.0, Some(f64::INFINITY), None), Err(ReportError::NotFinite));
        p.report(2.0, Some(10.0), Some("two")).unwrap();
        let a = params(&text(p.poll(t0).unwrap()));
        assert_eq!((a["progressToken"].clone(), a["progress"].clone()), (Value::from(7), Value::from(2)));
        assert_eq!(a["total"], 10);
        assert_eq!(a["message"], "two");
        for i in 3..1000 {
            p.report(f64::from(i), Some(1000.0), None).unwrap();
        }
        assert_eq!(p.poll(t0 + Duration::from_millis(50)), None, "rate limited");
        let b = params(&text(p.poll(t0 + Duration::from_millis(100)).unwrap()));
        assert_eq!(b["progress"], 999, "the latest report wins");
        assert_eq!(p.poll(t0 + Duration::from_millis(300)), None, "nothing new, no heartbeat yet");
        assert_eq!(p.sent(), 2);
    }

    #[test]
    fn c2_only_the_first_waiting_report_asks_for_a_wake_up() {
        let t0 = Instant::now();
        let p = Progress::new("1".into(), Version::V2025_11_25, policy(), t0);
        assert_eq!(p.report(1.0, None, None), Ok(true));
        assert_eq!(p.report(2.0, None, None), Ok(false), "coalesced with the waiting one");
        assert_eq!(p.report(3.0, None, None), Ok(false));
        p.poll(t0).unwrap();
        assert_eq!(p.report(4.0, None, None), Ok(true), "the first after a notification");
        p.end();
        assert_eq!(p.report(5.0, None, None), Ok(false), "nothing is sent after the end");
    }

    #[test]
    fn c2_heartbeat_adapts_to_reports_and_values_always_increase() {
        let t0 = Instant::now();
        let p = Progress::new("\"x\"".into(), Version::V2025_11_25, policy(), t0);
        // Two heartbeats before the tool's first report: values 1 and 2.
        p.poll(t0 + Duration::from_secs(1)).unwrap();
        p.poll(t0 + Duration::from_secs(6)).unwrap();
        // The tool reports 1 of 4: at or below what was sent, so it goes out
        // just above 2, with the tool's total and message.
        p.report(1.0, Some(4.0), Some("fold 1")).unwrap();
        let a = params(&text(p.poll(t0 + Duration::from_secs(7)).unwrap()));
        let av = a["progress"].as_f64().unwrap();
        assert!(av > 2.0 && av < 2.001, "{av}");
        assert_eq!(a["total"], 4);
        assert_eq!(a["message"], "fold 1");
        p.report(3.0, Some(4.0), Some("fold 3")).unwrap();
        let b = params(&text(p.poll(t0 + Duration::from_secs(8)).unwrap()));
        assert_eq!(b["progress"], 3);
        // A silent tool: the heartbeat repeats its total and message, just above 3.
        let c = params(&text(p.poll(t0 + Duration::from_secs(13)).unwrap()));
        let cv = c["progress"].as_f64().unwrap();
        assert!(cv > 3.0 && cv < 3.001, "{cv}");
        assert_eq!(c["total"], 4);
        assert_eq!(c["message"], "fold 3 (still running after 13 s)");
    }

    #[test]
    fn c3_message_only_where_the_version_has_it() {
        let t0 = Instant::now();
        let old = Progress::new("1".into(), Version::V2024_11_05, policy(), t0);
        old.report(1.0, None, Some("m")).unwrap();
        let line = text(old.poll(t0).unwrap());
        assert_eq!(
            line,
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}"#
        );
        let new = Progress::new("1".into(), Version::V2026_07_28, policy(), t0);
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
        f.started(&CallStart { id: "\"a\"", progress_token: Some("5"), version: Version::V2025_11_25 });
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
        f.started(&CallStart { id: "2", progress_token: None, version: Version::V2026_07_28 });
        assert!(f.progress().is_none());
        assert!(!f.cancel(None, &id("2")), "scope must match");
        assert!(!f.finished());
        assert!(!f.cancel(Some("s"), &id("2")), "finished calls are not cancelled");
        assert_eq!(hits.load(Ordering::SeqCst), 1);
    }
}
