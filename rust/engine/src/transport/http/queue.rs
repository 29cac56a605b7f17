//! The queue of tool calls to the serving thread (R's, RULES H4.1): a
//! `tools/call` is handed over as a [`Job`], run there one at a time, in
//! turn between tokens and in arrival order within each (a [`FairQueue`],
//! RULES N3.3), and its [`Answer`] comes back on a oneshot channel. A
//! modern call whose HTTP exchange ends before its answer is cancelled
//! ([`CancelOnDrop`]): skipped while queued, interrupted while running. A
//! legacy `notifications/cancelled` cancels a call of its own session.
//!
//! With worker processes (RULES section 14) the same jobs are taken by the
//! pool's drivers instead ([`Calls::run_on_worker`], several at once): a
//! call is first given a place in the pool's bounded queue (none left: `503`
//! with `Retry-After`, RULES N3.1) and registered in the pool's call
//! registry, which carries its progress (heartbeats while it waits) and its
//! cancellation to the worker that runs it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use hyper::header::{HeaderMap, HeaderValue};
use hyper::StatusCode;
use serde_json::Value;

use super::access::{Outcome, PendingOutcome, Reason};
use super::cancel::{CancelOnDrop, Queued};
use super::response::{answer_resp, legacy_resp, respond, unavailable, Answer, Resp};
use super::{sse, Shared};
use crate::codes::INTERNAL_ERROR;
use crate::host::Host;
use crate::message::Incoming;
use crate::progress::{progress_token, CallStart, CallWatch, Inflight, Progress};
use crate::promotion::Promotion;
use crate::server::{Admitted, Carrier, LegacyState, Server};
use crate::tasks::Task;
use crate::telemetry::{tool_output_gate, Via};
use crate::workers::{
    self, progress_of, Busy, CallState, Caller, FairQueue, Pool, Registered, Ticket, WorkerHost, SERVER_BUSY,
};

/// A tool call handed to the serving thread.
pub(super) struct Job {
    incoming: Incoming,
    session: LegacyState,
    /// The request, for telemetry (`None` when telemetry is off).
    via: Option<Via>,
    reply: tokio::sync::oneshot::Sender<Answer>,
    /// Who may cancel it (see [`Queued`]).
    queued: Arc<Queued>,
    /// Told the call's progress when its tool starts (SSE responses).
    progress: Option<tokio::sync::oneshot::Sender<Arc<Progress>>>,
    /// With workers: the call's registration and its place in the queue
    /// (a task's call may wait beyond the queue's bound: the store bounds
    /// tasks, RULES V4.2).
    pooled: Option<(Registered, Option<Ticket>)>,
    /// The call runs as this task (RULES V2.2): its answer is kept there,
    /// and nobody waits for `reply`.
    task: Option<Arc<Task>>,
    /// The call becomes a task if it runs long (RULES V2.5).
    promotion: Option<Arc<Promotion>>,
    /// The name of the token that sent it (the owner of its task).
    caller: Caller,
}

/// The calls of one bound server: the channel to the serving thread, the
/// calls queued and not yet started, and the running call.
pub(super) struct Calls {
    /// Taken by the serving thread, or with workers by the pool's drivers;
    /// closed when a server with workers stops, which ends the drivers.
    pub(super) jobs: FairQueue<Job>,
    /// With workers: the calls of the tools the server runs itself (RULES
    /// N7.6), for the serving thread; without, they go to `jobs`.
    pub(super) host_jobs: FairQueue<Job>,
    /// The running call (progress, cancellation).
    inflight: Arc<Inflight>,
    /// Tool calls queued and not yet started, by number.
    queued: Mutex<HashMap<u64, Arc<Queued>>>,
    next_job: AtomicU64,
    /// With workers: the pool and the calls registered with it.
    workers: Option<Pooled>,
    /// The drain time is up: calls still queued are not started.
    stopping: AtomicBool,
    /// The stop: when it began, when the drain time ended, what became of
    /// the calls meanwhile.
    pub(super) stop: Arc<StopCounts>,
}

/// What a stopping server did with its calls (the last line on stderr says
/// it, RULES H4.2).
#[derive(Default)]
pub(super) struct StopCounts {
    /// The server is stopping: calls answered from now on were drained.
    pub(super) began: AtomicBool,
    /// The drain time is up and running tools were interrupted for it: an
    /// interrupted call's answer says the server was stopping.
    pub(super) drain_over: AtomicBool,
    /// Calls answered after the stop began (the interrupted among them).
    pub(super) drained: AtomicU64,
    /// Calls interrupted (or whose worker was killed) at the drain's end.
    pub(super) interrupted: AtomicU64,
    /// Calls still queued when the drain time ended: not run, `503`.
    pub(super) dropped: AtomicU64,
}

impl StopCounts {
    /// Count a call answered with `outcome`, if the server is stopping.
    fn answered(&self, outcome: &str) {
        if !self.began.load(Ordering::SeqCst) {
            return;
        }
        self.drained.fetch_add(1, Ordering::SeqCst);
        if self.drain_over.load(Ordering::SeqCst) && matches!(outcome, "interrupted" | "crashed") {
            self.interrupted.fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// The worker pool of a server with workers, and its call registry.
#[derive(Clone)]
pub(super) struct Pooled {
    pub(super) pool: Arc<Pool>,
    pub(super) registry: Arc<workers::Calls>,
}

impl Calls {
    pub(super) fn new(inflight: Arc<Inflight>, pool: Option<Arc<Pool>>) -> Calls {
        let workers = pool.map(|pool| Pooled { pool, registry: workers::Calls::new(inflight.clone()) });
        Calls {
            jobs: FairQueue::new(),
            host_jobs: FairQueue::new(),
            inflight,
            queued: Mutex::new(HashMap::new()),
            next_job: AtomicU64::new(0),
            workers,
            stopping: AtomicBool::new(false),
            stop: Arc::default(),
        }
    }

    pub(super) fn workers(&self) -> Option<&Pooled> {
        self.workers.as_ref()
    }

    /// Stop handing calls on (a server with workers that stops): calls
    /// still queued are dropped (answered `503`), and the drivers end once
    /// they finish the calls they run.
    pub(super) fn close(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        self.jobs.close();
        self.host_jobs.close();
        if let Some(w) = &self.workers {
            w.pool.wake_drivers();
        }
    }

    pub(super) fn inflight(&self) -> &Arc<Inflight> {
        &self.inflight
    }

    fn queued(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Queued>>> {
        self.queued.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A legacy `notifications/cancelled` of session `sid`: cancel the call
    /// it names if that call came from the same session, running or queued.
    pub(super) fn cancel_in_session(&self, sid: &str, params: Option<&Value>) {
        let Some(id) = params.and_then(|p| p.get("requestId")) else { return };
        for q in self.queued().values() {
            if q.scope == sid && &q.id == id {
                q.cancelled.store(true, Ordering::SeqCst);
            }
        }
        self.inflight.cancel(Some(sid), id);
        if let Some(w) = &self.workers {
            w.registry.cancel(Some(sid), id);
        }
    }

    /// Run one queued tool call on this (the serving) thread, unless its
    /// client has gone away (the request is skipped) or cancelled it
    /// (answered with nothing).
    pub(super) fn run(&self, server: &Server, job: Job, host: &mut dyn Host) {
        let Job { incoming, mut session, via, reply: reply_tx, queued, progress, .. } = job;
        self.queued().remove(&queued.no);
        if reply_tx.is_closed() {
            return;
        }
        if queued.cancelled.load(Ordering::SeqCst) {
            let _ = reply_tx.send(Answer::cancelled());
            return;
        }
        let inflight = &self.inflight;
        inflight.set_scope(Some(queued.scope.clone()));
        let watch = JobWatch {
            inflight,
            progress: Mutex::new(progress),
            reply: &reply_tx,
            queued: &queued,
            drain_over: &self.stop.drain_over,
        };
        // RULES T8: telemetry lines on stderr wait while the tool prints
        // there (released before the reply ends the span).
        let gate = tool_output_gate();
        let mut reply =
            server.handle_parsed(&mut session, incoming, host, &Carrier::watched(&watch).with_via(via.as_ref()));
        // What the tool printed through C stdio goes out first.
        crate::transport::sys::flush_c_stdio();
        drop(gate);
        let answer = Answer::of(&mut reply);
        // The message's span ends as the answer leaves for the HTTP thread,
        // inside the request's HTTP span (RULES T10).
        drop(reply);
        self.stop.answered(answer.outcome);
        let _ = reply_tx.send(answer);
    }

    /// Run one queued tool call on the worker of `host` (a driver of the
    /// pool, RULES N2), with the same skips as [`Calls::run`].
    pub(super) fn run_on_worker(&self, server: &Server, job: Job, host: &mut WorkerHost<'_>) {
        let Job { incoming, mut session, via, reply: reply_tx, queued, progress, pooled, task, promotion, caller } =
            job;
        self.queued().remove(&queued.no);
        let Some((reg, ticket)) = pooled else { return };
        // RULES V2.5: a call skipped below is never promoted; a task it was
        // promoted to ends with it.
        let skipped = || {
            if let Some(t) = promotion.as_ref().and_then(|p| p.settle()) {
                t.cancel_quietly();
            }
        };
        if reply_tx.is_closed() && task.is_none() {
            skipped();
            return;
        }
        // A stopping server's drain time is up: dropped, answered 503 (a
        // task fails, saying why; so does a call promoted to one, V2.5).
        if self.stopping.load(Ordering::SeqCst) || self.stop.drain_over.load(Ordering::SeqCst) {
            self.stop.dropped.fetch_add(1, Ordering::SeqCst);
            if let Some(t) = task.or_else(|| promotion.as_ref().and_then(|p| p.settle())) {
                t.finish_interrupted(crate::server::STOPPING_TEXT);
            }
            return;
        }
        let state = reg.state();
        if queued.cancelled.load(Ordering::SeqCst) || state.is_cancelled() {
            skipped();
            let _ = reply_tx.send(Answer::cancelled());
            return;
        }
        host.set_call(state.clone());
        let watch = PooledWatch { state, progress: Mutex::new(progress), reply: &reply_tx, queued: &queued };
        let carrier = Carrier::watched(&watch)
            .with_via(via.as_ref())
            .owned_by(caller.as_deref())
            .as_task(task.as_ref())
            .promotable(promotion.as_ref());
        let mut reply = server.handle_parsed(&mut session, incoming, host, &carrier);
        let answer = Answer::of(&mut reply);
        drop(reply);
        // The worker is free before its answer leaves: a client that sends
        // its next call as soon as it reads this answer finds room for it
        // (with `max_queue` 0 it was refused 503 now and then).
        drop(ticket);
        self.stop.answered(answer.outcome);
        let _ = reply_tx.send(answer);
    }
}

/// The answer to a call the pool's queue has no room for (RULES N3.1): the
/// dispatcher checks it as usual (an invalid call keeps its own error) with
/// the [`Busy`] host, and the busy error is `503` with `Retry-After: 1`.
fn refuse_busy(sh: &Shared, mut session: LegacyState, incoming: Incoming, via: Option<&Via>, legacy: bool) -> Resp {
    let mut reply = sh.server.handle_parsed(&mut session, incoming, &mut Busy, &Carrier::NONE.with_via(via));
    let answer = Answer::of(&mut reply);
    drop(reply);
    match (answer.code, answer.line) {
        (Some(INTERNAL_ERROR), Some(line)) => {
            let mut r = respond(StatusCode::SERVICE_UNAVAILABLE, line);
            r.headers_mut().insert(hyper::header::RETRY_AFTER, HeaderValue::from_static("1"));
            // RULES H7.1: the access log says why.
            r.extensions_mut().insert(Reason(SERVER_BUSY.into()));
            r.extensions_mut().insert(Outcome(answer.outcome));
            r
        }
        (code, line) if legacy => legacy_resp(Answer { line, code, outcome: answer.outcome }),
        (code, line) => answer_resp(Answer { line, code, outcome: answer.outcome }),
    }
}

/// Answer a `tools/call` request: queue it for the serving thread, then
/// wait for its answer (JSON) or stream its progress, log messages and
/// answer (SSE, when it has a progress token or a log level and the client
/// accepts SSE). `scope` is the
/// legacy session id, `None` for a modern call, which is cancelled when its
/// client goes away.
pub(super) async fn call_tool(
    sh: &Shared,
    h: &HeaderMap,
    session: LegacyState,
    incoming: Incoming,
    scope: Option<&str>,
    via: Option<Via>,
    caller: Caller,
) -> Resp {
    let calls = &sh.calls;
    let Incoming::Message(msg) = &incoming else { unreachable!("only messages reach here") };
    let raw_id = msg.id.clone().unwrap_or_else(|| "null".into());
    let id = serde_json::from_str(&raw_id).unwrap_or(Value::Null);
    // RULES C6.1, G3.1: a call whose client listens to its progress or its
    // log messages, and accepts SSE, is answered with a stream.
    // A client that can be asked questions (RULES A1.2) gets a stream when
    // the call asks one: a question is a request on it.
    let token = progress_token(msg.params.as_ref()).is_some();
    let listen = progress_of(msg, &session).map(|(l, _)| l);
    let logs = listen.as_ref().is_some_and(|l| l.log.is_some());
    let asks = listen.as_ref().is_some_and(|l| l.asks.any());
    let streamed = sse::accepts_sse(h) && (token || logs || asks);
    // Asked questions alone: a stream only once there is something for it.
    let lazy = streamed && !token && !logs;
    let legacy = scope.is_some();
    // RULES H8: a 2025-11-25 session's call, from a client that accepts
    // SSE, is resumable when the server holds connections for a time.
    // Its log is made when the call turns out to need a stream.
    let resumable_in = match (scope, session.negotiated(), sh.streams.hold()) {
        (Some(sid), Some(v), Some(hold)) if v.features().sse_polling && sse::accepts_sse(h) => {
            Some((sid.to_string(), hold))
        }
        _ => None,
    };
    let open = || {
        let (sid, hold) = resumable_in.as_ref()?;
        let (key, log) = sh.streams.open(sid)?;
        Some(sse::Resumable { key, log, hold: *hold })
    };
    let no = calls.next_job.fetch_add(1, Ordering::SeqCst);
    let scope = scope.map_or_else(|| format!("#{no}"), str::to_owned);
    let (reply_tx, reply_rx) = tokio::sync::oneshot::channel();
    let (mut progress_tx, progress_rx) = if streamed {
        let (tx, rx) = tokio::sync::oneshot::channel();
        (Some(tx), Some(rx))
    } else {
        (None, None)
    };
    let mut later = None;
    if let Some(w) = calls.workers.as_ref().filter(|w| w.pool.runs(msg)) {
        // RULES V2.1: a call that runs as a task is answered with its
        // handle now, and queued.
        match sh.server.admit_task(msg, &session, caller.as_deref()) {
            Some(Ok(Admitted::Task(task, line))) => {
                let reg = w.registry.register(Some(format!("task:{}", task.id)), &raw_id, None);
                let tool = msg.params.as_ref().and_then(|p| p.get("name")).and_then(Value::as_str);
                reg.state().set_who(tool, caller.clone());
                reg.state().set_task(Arc::clone(&task));
                let no = calls.next_job.fetch_add(1, Ordering::SeqCst);
                let queued =
                    Arc::new(Queued { no, scope: format!("task:{}", task.id), id, cancelled: AtomicBool::new(false) });
                let (reply_tx, _) = tokio::sync::oneshot::channel();
                // RULES V2.1: no place in the queue of calls (the store
                // bounds tasks), and a lane of their own per token, so its
                // calls take turns with its tasks.
                let pooled = Some((reg, None));
                let job = Job {
                    incoming,
                    session,
                    via,
                    reply: reply_tx,
                    queued,
                    progress: None,
                    pooled,
                    task: Some(task),
                    promotion: None,
                    caller: caller.clone(),
                };
                let lane: Arc<str> = Arc::from(format!("{}\u{0}tasks", caller.as_deref().unwrap_or("")).as_str());
                if calls.jobs.send(Some(lane), job).is_err() {
                    return unavailable();
                }
                w.pool.job_sent();
                return era_resp(legacy, Answer { line: Some(line), code: None, outcome: "ok" });
            }
            // RULES V2.5: queued as any call, promoted in time.
            Some(Ok(Admitted::Later(p))) => later = Some(p),
            Some(Err(line)) => {
                return era_resp(legacy, Answer { line: Some(line), code: Some(INTERNAL_ERROR), outcome: "error" })
            }
            None => {}
        }
    }
    let pooled = match &calls.workers {
        Some(w) if w.pool.runs(msg) => {
            let Some(ticket) = w.pool.reserve() else {
                return refuse_busy(sh, session, incoming, via.as_ref(), legacy);
            };
            // A streamed call's progress starts now: heartbeats while it
            // waits for a worker (RULES N3.2).
            let progress = if streamed { progress_of(msg, &session) } else { None };
            let reg = w.registry.register(Some(scope.clone()), &raw_id, progress);
            let tool = msg.params.as_ref().and_then(|p| p.get("name")).and_then(Value::as_str);
            reg.state().set_who(tool, caller.clone());
            if let Some(p) = &later {
                reg.state().set_promotion(Arc::clone(p));
            }
            if let Some(p) = reg.state().progress() {
                if let Some(tx) = progress_tx.take() {
                    let _ = tx.send(p);
                }
            }
            Some((reg, Some(ticket)))
        }
        // No workers, or a tool the server runs itself (RULES N7.6).
        _ => None,
    };
    // The pool's drivers take `jobs`; a server with workers runs its own
    // tools' calls from `host_jobs`.
    let queue = if pooled.is_none() && calls.workers.is_some() { &calls.host_jobs } else { &calls.jobs };
    let queued = Arc::new(Queued { no, scope, id, cancelled: AtomicBool::new(false) });
    calls.queued().insert(no, queued.clone());
    let mut guard = CancelOnDrop {
        inflight: calls.inflight.clone(),
        queued: queued.clone(),
        state: pooled.as_ref().map(|(reg, _)| reg.state().clone()),
        armed: queued.scope.starts_with('#'),
    };
    let job = Job {
        incoming,
        session,
        via,
        reply: reply_tx,
        queued,
        progress: progress_tx,
        pooled,
        task: None,
        promotion: later.clone(),
        caller: caller.clone(),
    };
    let to_pool = job.pooled.is_some();
    // RULES N3.3: the job waits in its token's lane.
    let sent = queue.send(caller, job).is_ok();
    if let (true, true, Some(w)) = (sent, to_pool, &calls.workers) {
        w.pool.job_sent();
    }
    if !sent {
        calls.queued().remove(&no);
        guard.armed = false;
        return unavailable();
    }
    // RULES V2.5: answered with a task's handle if it runs long.
    let reply_rx = match (later, &guard.state) {
        (Some(p), Some(state)) => super::promote::in_time(reply_rx, p, Arc::clone(state)),
        _ => reply_rx,
    };
    match progress_rx {
        None if resumable_in.is_some() => {
            let pending = PendingOutcome::default();
            let hold = resumable_in.as_ref().map_or(Duration::ZERO, |(_, h)| *h);
            match sse::json_or_resumable(reply_rx, guard, raw_id, pending.clone(), &open, hold).await {
                sse::First::Answer(answer) => answer.map_or_else(|_| unavailable(), legacy_resp),
                sse::First::Stream(mut r) => {
                    r.extensions_mut().insert(pending);
                    r
                }
            }
        }
        None => {
            // Dropped here when the client goes away: the guard cancels.
            let answer = reply_rx.await;
            guard.armed = false;
            let to_resp = if legacy { legacy_resp } else { answer_resp };
            answer.map_or_else(|_| unavailable(), to_resp)
        }
        Some(progress_rx) if lazy => {
            let min_gap = calls.inflight.policy().min_gap;
            let pending = PendingOutcome::default();
            let hold = resumable_in.as_ref().map(|(_, h)| *h);
            match sse::json_or_stream(reply_rx, progress_rx, guard, raw_id, min_gap, pending.clone(), &open, hold).await
            {
                sse::First::Answer(answer) => {
                    let to_resp = if legacy { legacy_resp } else { answer_resp };
                    answer.map_or_else(|_| unavailable(), to_resp)
                }
                sse::First::Stream(mut r) => {
                    r.extensions_mut().insert(pending);
                    r
                }
            }
        }
        Some(progress_rx) => {
            let min_gap = calls.inflight.policy().min_gap;
            // The access log's line waits for the stream's end, which
            // tells the call's outcome (RULES H7.1).
            let pending = PendingOutcome::default();
            let mut r = sse::stream(reply_rx, progress_rx, guard, raw_id, min_gap, pending.clone(), open());
            r.extensions_mut().insert(pending);
            r
        }
    }
}

/// An answer made here, for a legacy session's request or a modern one.
fn era_resp(legacy: bool, answer: Answer) -> Resp {
    if legacy {
        legacy_resp(answer)
    } else {
        answer_resp(answer)
    }
}

/// The serving thread's [`CallWatch`] for one job: the shared
/// [`Inflight`], which also hands the call's progress to its SSE stream.
struct JobWatch<'a> {
    inflight: &'a Inflight,
    progress: Mutex<Option<tokio::sync::oneshot::Sender<Arc<Progress>>>>,
    reply: &'a tokio::sync::oneshot::Sender<Answer>,
    queued: &'a Queued,
    drain_over: &'a AtomicBool,
}

impl CallWatch for JobWatch<'_> {
    fn set_rounds(&self, rounds: crate::ask_state::Rounds) {
        self.inflight.set_rounds(rounds);
    }

    fn take_rounds(&self) -> Option<crate::ask_state::Rounds> {
        self.inflight.take_rounds()
    }

    fn started(&self, call: &CallStart<'_>) {
        self.inflight.started(call);
        // A streamed call gets its progress now, also one whose client can
        // only be asked (its stream starts with a question, RULES A1.2).
        let tx = self.progress.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let (Some(tx), Some(p)) = (tx, self.inflight.progress_for_asks()) {
            let _ = tx.send(p);
        }
        // The client went away between the queue and now: the call is
        // cancelled (its exchange's own guard ran before it started).
        if self.reply.is_closed() && self.queued.scope.starts_with('#') {
            self.inflight.cancel(Some(&self.queued.scope), &self.queued.id);
        }
    }

    fn finished(&self) -> bool {
        self.inflight.finished()
    }

    fn stopping(&self) -> bool {
        self.drain_over.load(Ordering::SeqCst)
    }
}

/// The driver's [`CallWatch`] for a job run by a worker: the call's
/// [`CallState`], which also hands the call's progress to its SSE stream
/// (unless it was handed over when the call was queued).
struct PooledWatch<'a> {
    state: &'a CallState,
    progress: Mutex<Option<tokio::sync::oneshot::Sender<Arc<Progress>>>>,
    reply: &'a tokio::sync::oneshot::Sender<Answer>,
    queued: &'a Queued,
}

impl CallWatch for PooledWatch<'_> {
    fn set_rounds(&self, rounds: crate::ask_state::Rounds) {
        self.state.set_rounds(rounds);
    }

    fn take_rounds(&self) -> Option<crate::ask_state::Rounds> {
        self.state.take_rounds()
    }

    fn started(&self, call: &CallStart<'_>) {
        self.state.started(call);
        let tx = self.progress.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let (Some(tx), Some(p)) = (tx, self.state.progress()) {
            let _ = tx.send(p);
        }
        if self.reply.is_closed() && self.queued.scope.starts_with('#') {
            self.state.cancel();
        }
    }

    fn finished(&self) -> bool {
        self.state.finished()
    }

    fn stopping(&self) -> bool {
        self.state.stopping()
    }
}
