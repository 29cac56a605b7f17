//! The tool calls a server with workers runs at the same time: each one's
//! progress and cancellation (RULES C1–C4 hold for every call, however many
//! run at once).
//!
//! With one R process, [`Inflight`] knows the one running call. With
//! workers, a transport registers each `tools/call` it accepts in [`Calls`]
//! before handing it on ([`Calls::register`]); the call's [`CallState`] is
//! then the dispatcher's [`CallWatch`] for it. A cancellation names a request
//! id (and, over HTTP, its scope): [`Calls::cancel`] marks every matching call
//! that has not returned. One still waiting for a worker never runs; one
//! running has its worker interrupted through the [`Interrupt`] the pool
//! attached when the call was sent. The transport's own [`Inflight`] is the
//! waker: a report from a worker wakes the transport's ticker as a report
//! of the in-process tool does.

use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::ask_state::{AskError, AskKind, Rounds};
use crate::asks;
use crate::logging;
use crate::message::Message;
use crate::progress::{progress_token, Asks, CallStart, CallWatch, Inflight, Listen, Progress};
use crate::promotion::Promotion;
use crate::server::LegacyState;
use crate::version::{self, Era, Version};

/// Interrupts call `seq` on the worker running it (a frame to the worker).
pub trait Interrupt: Send + Sync {
    fn interrupt(&self, seq: u64);
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The calls registered and not yet finished (see the module documentation).
pub struct Calls {
    waker: Arc<Inflight>,
    entries: Mutex<Vec<Arc<CallState>>>,
}

#[derive(Default)]
struct Inner {
    progress: Option<Arc<Progress>>,
    cancelled: bool,
    /// The tool returned: a cancellation comes too late.
    done: bool,
    /// The worker running the call, and the call's number there.
    running: Option<(Arc<dyn Interrupt>, u64)>,
    /// Interrupted at the end of a stopping server's drain time (RULES
    /// H4.2): answered as such, and its worker killed if it goes on.
    stopping: Option<Instant>,
    /// Promoted to a task (RULES V2.5): its request is answered, and no
    /// progress is made for it any more.
    promoted: bool,
}

/// One call: its identity for cancellations, when it arrived, its progress
/// and the worker running it.
pub struct CallState {
    scope: Option<String>,
    id: Value,
    arrived: Instant,
    /// The tool's name and the caller's token name, for the lines on
    /// standard error about the call (RULES N5.1).
    who: OnceLock<(Option<String>, Option<Arc<str>>)>,
    /// The task the call runs as (RULES V2.2): its progress messages are
    /// the task's status message.
    task: OnceLock<Arc<crate::tasks::Task>>,
    /// The call becomes a task if it runs long (RULES V2.5).
    promotion: OnceLock<Arc<Promotion>>,
    waker: Arc<Inflight>,
    inner: Mutex<Inner>,
}

/// A registration; dropping it removes the call from the registry (once it
/// was answered, skipped or refused).
pub struct Registered {
    calls: Arc<Calls>,
    state: Arc<CallState>,
}

impl Calls {
    /// A registry whose progress follows `waker`'s policy and wakes it.
    pub fn new(waker: Arc<Inflight>) -> Arc<Calls> {
        Arc::new(Calls { waker, entries: Mutex::new(Vec::new()) })
    }

    /// Register a call with request id `id` (raw JSON text) from `scope`
    /// (an HTTP session or exchange; `None` on stdio). `progress` is the
    /// call's progress token and protocol version when it asked for progress
    /// ([`progress_of`]): its heartbeats start now, while it waits for a
    /// worker (RULES N3).
    pub fn register(
        self: &Arc<Calls>,
        scope: Option<String>,
        raw_id: &str,
        progress: Option<(Listen, Version)>,
    ) -> Registered {
        let id = serde_json::from_str(raw_id).unwrap_or(Value::Null);
        let now = Instant::now();
        let progress = progress.map(|(listen, v)| Arc::new(Progress::new(listen, v, self.waker.policy(), now)));
        if let Some(p) = &progress {
            p.set_waiting("a free worker");
        }
        // Only heartbeats need the ticker to keep time: a call whose client
        // listens to its log messages alone wakes it when it logs.
        let wake = progress.as_ref().is_some_and(|p| p.token().is_some());
        let state = Arc::new(CallState {
            scope,
            id,
            arrived: now,
            who: OnceLock::new(),
            task: OnceLock::new(),
            promotion: OnceLock::new(),
            waker: self.waker.clone(),
            inner: Mutex::new(Inner { progress, ..Inner::default() }),
        });
        if wake {
            self.waker.notify();
        }
        lock(&self.entries).push(state.clone());
        Registered { calls: self.clone(), state }
    }

    /// Cancel every registered call with request id `id` from `scope` that
    /// has not returned (RULES C4). True when there was one. A call whose
    /// request was answered with a task's handle is the task's: only
    /// `tasks/cancel` stops it (RULES V3.4).
    pub fn cancel(&self, scope: Option<&str>, id: &Value) -> bool {
        let hits: Vec<Arc<CallState>> = lock(&self.entries)
            .iter()
            .filter(|c| c.scope.as_deref() == scope && &c.id == id && !c.is_task())
            .cloned()
            .collect();
        let mut any = false;
        for c in hits {
            any |= c.cancel();
        }
        any
    }

    /// Interrupt every running call without cancelling it: each is still
    /// answered, with its interrupted tool's result saying the server was
    /// stopping (the end of a stopping server's drain time, RULES H4.2). True
    /// when one was running.
    pub fn interrupt_all(&self) -> bool {
        let all: Vec<Arc<CallState>> = lock(&self.entries).clone();
        let mut any = false;
        for c in all {
            let running = {
                let mut g = lock(&c.inner);
                g.stopping.get_or_insert_with(Instant::now);
                g.running.clone()
            };
            if let Some((w, seq)) = running {
                w.interrupt(seq);
                any = true;
            }
        }
        any
    }

    /// The calls that run as tasks, queued or running, stop: each task
    /// fails first with `why` (RULES V2.4), then its call is cancelled.
    pub fn end_tasks(&self, why: &str) {
        let tasks: Vec<Arc<CallState>> = lock(&self.entries).iter().filter(|c| c.is_task()).cloned().collect();
        for c in tasks {
            if let Some(t) = c.task() {
                t.finish_interrupted(why);
            }
            c.cancel();
        }
    }

    /// The progress of every call that has one and has not returned (for a
    /// transport's ticker).
    pub fn progresses(&self) -> Vec<Arc<Progress>> {
        lock(&self.entries).iter().filter_map(|c| lock(&c.inner).progress.clone()).filter(|p| !p.is_ended()).collect()
    }

    /// Calls registered and not yet finished.
    pub fn len(&self) -> usize {
        lock(&self.entries).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The transport's [`Inflight`] (policy and waker).
    pub fn waker(&self) -> &Arc<Inflight> {
        &self.waker
    }
}

impl Registered {
    pub fn state(&self) -> &Arc<CallState> {
        &self.state
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        lock(&self.calls.entries).retain(|c| !Arc::ptr_eq(c, &self.state));
    }
}

impl CallState {
    /// Mark the call cancelled: it gets no answer; a running tool is
    /// interrupted. False when already cancelled or returned.
    pub fn cancel(&self) -> bool {
        let mut g = lock(&self.inner);
        if g.cancelled || g.done {
            return false;
        }
        g.cancelled = true;
        if let Some(p) = &g.progress {
            p.end();
        }
        let running = g.running.clone();
        drop(g);
        if let Some((w, seq)) = running {
            w.interrupt(seq);
        }
        self.waker.notify();
        true
    }

    pub fn is_cancelled(&self) -> bool {
        lock(&self.inner).cancelled
    }

    /// When the call was interrupted because the server is stopping
    /// ([`Calls::interrupt_all`]).
    pub fn stopping_since(&self) -> Option<Instant> {
        lock(&self.inner).stopping
    }

    /// When the transport registered the call.
    pub fn arrived(&self) -> Instant {
        self.arrived
    }

    /// Name the call's tool and the token that sent it (once), for the
    /// lines on standard error about it.
    pub fn set_who(&self, tool: Option<&str>, token: Option<Arc<str>>) {
        let _ = self.who.set((tool.map(String::from), token));
    }

    /// The call runs as `task` (RULES V2.2): a `tasks/cancel` cancels the
    /// call, and the tool's progress messages become the task's status
    /// message.
    pub fn set_task(self: &Arc<Self>, task: Arc<crate::tasks::Task>) {
        let me = Arc::downgrade(self);
        task.set_cancel(Box::new(move || {
            if let Some(c) = me.upgrade() {
                c.cancel();
            }
        }));
        let _ = self.task.set(task);
    }

    /// The call becomes a task if it runs long (RULES V2.5); set once,
    /// before it is queued.
    pub fn set_promotion(&self, promotion: Arc<Promotion>) {
        let _ = self.promotion.set(promotion);
    }

    /// May the call become a task while it runs (RULES V2.5)?
    pub fn may_become_task(&self) -> bool {
        self.promotion.get().is_some_and(|p| p.is_open() || p.is_promoted())
    }

    /// The transport promotes the call to `task` (RULES V2.5), its request
    /// to be answered with the task's handle: from now on it runs as the
    /// task's call (V2.2, V2.3), and sends no more progress notifications.
    /// False when the call was cancelled or has returned (then it is not
    /// promoted).
    pub fn promoted_to(self: &Arc<Self>, task: &Arc<crate::tasks::Task>) -> bool {
        let mut g = lock(&self.inner);
        if g.cancelled || g.done {
            return false;
        }
        g.promoted = true;
        if let Some(p) = &g.progress {
            p.end();
        }
        drop(g);
        self.set_task(Arc::clone(task));
        true
    }

    /// Does the call run as a task?
    pub fn is_task(&self) -> bool {
        self.task.get().is_some()
    }

    /// The call's task, if it runs as one.
    pub fn task(&self) -> Option<&Arc<crate::tasks::Task>> {
        self.task.get()
    }

    /// What the client of the call's task can be asked (RULES V2.3), when
    /// the call runs as a task.
    pub fn task_asks(&self) -> Option<crate::ask_state::Asks> {
        self.task.get().map(|t| t.asks())
    }

    /// The call's tool and the token that sent it, when the transport
    /// said ([`CallState::set_who`]).
    pub fn who(&self) -> (Option<&str>, Option<&str>) {
        self.who.get().map_or((None, None), |(t, k)| (t.as_deref(), k.as_deref()))
    }

    /// The call is being sent to a worker as call `seq`: a cancellation
    /// from now on interrupts it there. False when it was cancelled already
    /// (then it must not be sent).
    pub fn attach(&self, worker: Arc<dyn Interrupt>, seq: u64) -> bool {
        let mut g = lock(&self.inner);
        if g.cancelled {
            return false;
        }
        g.running = Some((worker, seq));
        if let Some(p) = &g.progress {
            p.set_running(Instant::now());
        }
        true
    }

    /// The worker returned (or lost) the call.
    pub fn detach(&self) {
        lock(&self.inner).running = None;
    }

    /// Does the client listen to this call's progress?
    pub fn has_progress(&self) -> bool {
        lock(&self.inner).progress.is_some()
    }

    /// The call's progress, when the client listens to it.
    pub fn progress(&self) -> Option<Arc<Progress>> {
        lock(&self.inner).progress.clone()
    }

    /// A log message the worker forwarded (RULES G2.3).
    pub fn log(&self, entry: logging::LogEntry) {
        let p = lock(&self.inner).progress.clone();
        if let Some(p) = p {
            if p.log(entry) {
                self.waker.notify();
            }
        }
    }

    /// A report the worker forwarded (already checked there).
    /// A question of the call's tool, from its worker (RULES A1.4): asked
    /// of the client as a question of a tool the server runs itself, with
    /// the call's progress (its stream) and session, until answered,
    /// cancelled or `timeout`.
    pub fn ask(&self, kind: AskKind, params: &str, timeout: Duration) -> Result<Value, AskError> {
        let parsed = || -> Result<Value, AskError> {
            let params: Value = serde_json::from_str(params).map_err(|_| AskError::BadParams)?;
            if !params.is_object() {
                return Err(AskError::BadParams);
            }
            Ok(params)
        };
        let params = parsed()?;
        // RULES V2.5: not promoted while a question is asked; a question
        // that waits for the request's next round keeps the call ordinary.
        if let Some(p) = self.promotion.get() {
            let asked = p.asking(|| {
                let answer = self.ask_of_request(kind, params.clone(), timeout);
                let waits = matches!(answer, Err(AskError::InputRequired));
                (answer, waits)
            });
            if let Some(answer) = asked {
                return answer;
            }
            // Promoted: a question the request's earlier rounds answered
            // (RULES A2.2) keeps that answer; a new one is the task's.
            let earlier = self.progress().and_then(|pr| pr.rounds().as_mut().and_then(Rounds::answered_next));
            match earlier {
                Some(a @ Value::Object(_)) => return Ok(a),
                Some(_) => return Err(AskError::Refused("the answer in inputResponses is not an object".into())),
                None => {}
            }
        }
        // RULES V2.3: a task's question is the task's, answered with
        // tasks/update.
        if let Some(t) = self.task.get() {
            return t.ask(kind, params, timeout, &|| self.is_cancelled());
        }
        self.ask_of_request(kind, params, timeout)
    }

    /// A question asked on the call's request (its progress, its stream).
    fn ask_of_request(&self, kind: AskKind, params: Value, timeout: Duration) -> Result<Value, AskError> {
        let Some(progress) = self.progress() else { return Err(AskError::Unsupported(kind)) };
        let wake = || self.waker.notify();
        asks::ask_on(&progress, self.scope.clone(), &wake, kind, params, timeout, &|| self.is_cancelled())
    }

    pub fn report(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        if let (Some(t), Some(m)) = (self.task.get(), message) {
            t.set_message(m);
        }
        let p = lock(&self.inner).progress.clone();
        if let Some(p) = p {
            if p.report(progress, total, message) == Ok(true) {
                self.waker.notify();
            }
        }
    }
}

/// What the client of a `tools/call` listens to (its progress token, its
/// log level: RULES C1, G1) and the protocol version, as the dispatcher will
/// answer it (`session` is its legacy session): for [`Calls::register`].
/// `None` when it listens to nothing, or the call will not run.
pub fn progress_of(msg: &Message, session: &LegacyState) -> Option<(Listen, Version)> {
    let params = msg.params.as_ref();
    let token = progress_token(params);
    let (log, asks, v) = match version::era_of(params) {
        // What the dispatcher will make of the call (RULES A1.1): a
        // different `Listen` would give the call a second `Progress`, and
        // its log messages would go to the one the transport does not read.
        Era::Modern { meta } => (
            logging::requested_level(meta).ok()?,
            Asks::from_capabilities(meta.get(version::META_CAPS)),
            version::check_modern_claim(meta).ok()?,
        ),
        Era::Legacy => (session.log_level, session.asks, session.negotiated()?),
    };
    let listen = Listen { token, log, asks };
    listen.any().then_some((listen, v))
}

impl CallWatch for CallState {
    fn set_rounds(&self, rounds: Rounds) {
        if let Some(p) = self.progress() {
            p.set_rounds(rounds);
        }
    }

    fn take_rounds(&self) -> Option<Rounds> {
        self.progress().and_then(|p| p.rounds().take())
    }

    fn started(&self, call: &CallStart<'_>) {
        let mut g = lock(&self.inner);
        // RULES V2.5: promoted while it waited, it listens to nothing.
        if g.promoted {
            return;
        }
        // Registered with its progress (heartbeats while it waited): kept.
        let listen = call.listen();
        if g.progress.as_ref().is_some_and(|p| p.listen() == listen) {
            return;
        }
        let progress =
            listen.any().then(|| Arc::new(Progress::new(listen, call.version, self.waker.policy(), Instant::now())));
        // Only heartbeats need the ticker to keep time: a call whose client
        // listens to its log messages alone wakes it when it logs.
        let wake = progress.as_ref().is_some_and(|p| p.token().is_some());
        if g.cancelled {
            if let Some(p) = &progress {
                p.end();
            }
        }
        g.progress = progress;
        drop(g);
        if wake {
            self.waker.notify();
        }
    }

    fn stopping(&self) -> bool {
        self.stopping_since().is_some()
    }

    fn finished(&self) -> bool {
        let mut g = lock(&self.inner);
        g.done = true;
        g.running = None;
        // A cancelled call's progress has ended already; this keeps the last
        // report of any other for the response (RULES C2.4).
        if let Some(p) = &g.progress {
            p.finish();
        }
        let cancelled = g.cancelled;
        // A ticker only has work for a call with progress: a call without
        // one wakes no thread as it ends (a wake-up per call, on the cores
        // the client and the workers need; as `Inflight::finished`).
        let wake = g.progress.as_ref().is_some_and(|p| p.token().is_some());
        drop(g);
        if wake {
            self.waker.notify();
        }
        cancelled
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::ProgressPolicy;
    use crate::version::Version;
    use std::sync::atomic::{AtomicU64, Ordering};

    struct Hits(AtomicU64);
    impl Interrupt for Hits {
        fn interrupt(&self, seq: u64) {
            self.0.store(seq + 1, Ordering::SeqCst);
        }
    }

    fn registry() -> Arc<Calls> {
        Calls::new(Arc::new(Inflight::new(ProgressPolicy::default(), None)))
    }

    #[test]
    fn c4_cancels_the_named_calls_in_their_scope_only() {
        let calls = registry();
        let a = calls.register(None, "1", None);
        let b = calls.register(Some("s".into()), "1", None);
        let c = calls.register(None, "\"x\"", None);
        assert_eq!(calls.len(), 3);
        let hits = Arc::new(Hits(AtomicU64::new(0)));
        assert!(c.state().attach(hits.clone(), 9));
        assert!(!calls.cancel(None, &Value::from(2)), "unknown id");
        assert!(calls.cancel(None, &Value::from(1)));
        assert!(a.state().is_cancelled() && !b.state().is_cancelled());
        assert!(!a.state().attach(hits.clone(), 1), "a cancelled call is never sent");
        assert!(calls.cancel(None, &serde_json::from_str::<Value>("\"\\u0078\"").unwrap()), "ids compare as JSON");
        assert_eq!(hits.0.load(Ordering::SeqCst), 10, "the running call's worker is interrupted");
        assert!(!calls.cancel(None, &Value::from(1)), "once");
        drop(a);
        assert_eq!(calls.len(), 2);
    }

    /// RULES V3.4, V2.5: a call answered with a task's handle (made a task
    /// at once, or promoted) is not cancelled by its request id; its task's
    /// cancellation stops it.
    #[test]
    fn v3_4_a_tasks_call_is_not_cancelled_by_its_request_id() {
        use crate::tasks::{Support, TaskOptions, Tasks};
        let calls = registry();
        let tasks = Tasks::new(TaskOptions::default(), vec![Support::Optional]).unwrap();
        let a = calls.register(None, "1", None);
        let task = tasks.create(None, false, None, Asks::NONE).unwrap();
        a.state().set_task(Arc::clone(&task));
        let b = calls.register(None, "2", None);
        let later = tasks.create(None, true, None, Asks::NONE).unwrap();
        assert!(b.state().promoted_to(&later));
        let c = calls.register(None, "3", None);
        assert!(!calls.cancel(None, &Value::from(1)) && !a.state().is_cancelled());
        assert!(!calls.cancel(None, &Value::from(2)) && !b.state().is_cancelled());
        assert!(calls.cancel(None, &Value::from(3)) && c.state().is_cancelled(), "an ordinary call is");
        let params = serde_json::json!({"taskId": task.id});
        let answer = tasks.answer("9", "tasks/cancel", Some(&params), Version::V2025_11_25, None, "");
        assert!(answer.is_ok());
        assert!(a.state().is_cancelled(), "tasks/cancel stops the call");
    }

    #[test]
    fn c1_progress_per_call_and_no_cancel_after_return() {
        let calls = registry();
        let a = calls.register(None, "1", None);
        let b = calls.register(None, "2", None);
        a.state().started(&CallStart {
            id: "1",
            progress_token: Some("\"t\""),
            log_level: None,
            asks: Asks::NONE,
            version: Version::V2025_11_25,
        });
        b.state().started(&CallStart {
            id: "2",
            progress_token: None,
            log_level: None,
            asks: Asks::NONE,
            version: Version::V2025_11_25,
        });
        assert!(a.state().has_progress() && !b.state().has_progress());
        a.state().report(1.0, None, Some("one"));
        let ps = calls.progresses();
        assert_eq!(ps.len(), 1);
        let line = String::from_utf8(ps[0].poll(Instant::now()).unwrap()).unwrap();
        assert!(line.contains(r#""progressToken":"t","progress":1"#), "{line}");
        assert!(!a.state().finished(), "not cancelled");
        assert!(calls.progresses().is_empty(), "ended with its call");
        assert!(!calls.cancel(None, &Value::from(1)), "too late");
        assert!(calls.cancel(None, &Value::from(2)));
        assert!(b.state().finished(), "the dispatcher learns it was cancelled");
        let hits = Arc::new(Hits(AtomicU64::new(0)));
        let c = calls.register(None, "3", None);
        let d = calls.register(
            None,
            "4",
            Some((Listen { token: Some("7".into()), log: None, asks: Asks::NONE }, Version::V2024_11_05)),
        );
        assert_eq!(calls.progresses().len(), 1, "heartbeats while it waits");
        d.state().started(&CallStart {
            id: "4",
            progress_token: Some("7"),
            log_level: None,
            asks: Asks::NONE,
            version: Version::V2024_11_05,
        });
        assert_eq!(calls.progresses().len(), 1, "the same progress goes on");
        assert!(c.state().attach(hits.clone(), 4));
        assert!(calls.interrupt_all());
        assert_eq!(hits.0.load(Ordering::SeqCst), 5);
        assert!(!c.state().is_cancelled(), "a drain interrupt is not a cancellation");
        assert!(c.state().stopping(), "its answer says the server was stopping");
    }

    #[test]
    fn g3_a_modern_call_from_a_client_that_can_be_asked_keeps_the_progress_it_was_registered_with() {
        use crate::message::{parse_line, Incoming};
        let line = br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"t","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},"io.modelcontextprotocol/logLevel":"info"}}}"#;
        let Incoming::Message(msg) = parse_line(line) else { panic!("a message") };
        let (listen, v) = progress_of(&msg, &LegacyState::default()).expect("it listens");
        assert_eq!(listen.asks, Asks { elicitation: true, sampling: false });
        let calls = registry();
        let a = calls.register(None, "5", Some((listen.clone(), v)));
        let registered = a.state().progress().expect("registered with its progress");
        // What the dispatcher says as the tool starts: the same listener, so
        // the progress the transport reads is the one the tool logs to.
        a.state().started(&CallStart {
            id: "5",
            progress_token: None,
            log_level: listen.log,
            asks: Asks { elicitation: true, sampling: false },
            version: v,
        });
        assert!(Arc::ptr_eq(&registered, &a.state().progress().unwrap()));
    }
}
