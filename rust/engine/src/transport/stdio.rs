//! The stdio serve loop (RULES W1, S3–S5, C1–C5): take each line from the
//! [`Reader`], hand it to the dispatcher with this connection's legacy
//! session and call watch, and write each response as one line. The
//! ticker thread beside it (module [`super::control`]) writes progress
//! notifications and answers pings while a tool runs.
//!
//! Resources a tool changed (RULES U3) are heard of by the session's
//! listener (its `resources/subscribe` URIs, and list changes) and by each
//! 2026-07-28 `subscriptions/listen` request's until the client cancels it
//! (`notifications/cancelled`) or the input ends; their notifications wait
//! in a [`Mailbox`] that every writer of a response empties first, so they
//! precede the answer of the call that made the change.
//!
//! With workers ([`serve_with_workers`], RULES N2), a `tools/call` is not
//! run by the loop: it is registered for cancellation, admitted by the pool
//! (or refused at once when its queue is full) and queued for the pool's
//! drivers, which answer it when its worker is done; the loop goes on with
//! the next line. Every other message is handled as without workers.

use std::io::{self, Write};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::control::{lock, Control, Output, PoolWatch, Watch};
use super::reader::{Inbound, Reader};
use super::sys;
use crate::codes::INVALID_PARAMS;
use crate::host::Host;
use crate::message::{parse_line, Incoming, Message};
use crate::progress::Inflight;
use crate::promotion::Promotion;
use crate::server::{Admitted, Carrier, LegacyState, Reply, Server};
use crate::signals::masked;
use crate::subscriptions::{Listener, Sink};
use crate::tasks::{Task, Waiting};
use crate::telemetry::tool_output_gate;
use crate::workers::{progress_of, Busy, CallState, Calls, FairQueue, Pool, Registered, Ticket, WorkerHost};

/// Why serving ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServeEnd {
    Eof,
    BrokenPipe,
    WriteError,
    ReadError,
    /// Worker processes kept failing to start ([`Pool::failure`] says why).
    WorkersFailed,
}

impl ServeEnd {
    pub fn as_str(self) -> &'static str {
        match self {
            ServeEnd::Eof => "eof",
            ServeEnd::BrokenPipe => "broken_pipe",
            ServeEnd::WriteError => "write_error",
            ServeEnd::ReadError => "read_error",
            ServeEnd::WorkersFailed => "workers_failed",
        }
    }
}

/// Options of the serve loop.
pub struct ServeOptions {
    /// How often to check for interrupts while idle.
    pub poll: Duration,
    /// How long to keep checking for the next request before sleeping.
    pub spin: Duration,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions { poll: Duration::from_millis(100), spin: Duration::from_micros(100) }
    }
}

/// Serve one client until EOF or until it stops reading. Every line
/// received before EOF is answered (RULES S5). The stdio connection is one
/// legacy session: its [`LegacyState`] lives here, for as long as serving.
///
/// `inflight` is the call watch of this connection (RULES C1–C5): the
/// running call's progress is written by a ticker thread that lives as long
/// as this function, cancellations and pings are acted on as they are read
/// (see [`super::control`]), and whoever interrupts tools is the
/// `Inflight`'s interrupter. The ticker starts with signals blocked, like
/// the reader thread should be (see [`Reader::spawn`]).
pub fn serve(
    server: &Server,
    host: &mut dyn Host,
    reader: Reader,
    output: &mut (dyn Write + Send),
    opts: &ServeOptions,
    inflight: &Arc<Inflight>,
) -> ServeEnd {
    serve_inner(server, host, None, reader, output, opts, inflight)
}

/// [`serve`], with tool calls run by the worker processes of `pool` (RULES
/// N2): several at once, each answered when it is done. `host` is only asked
/// about interrupts while idle. Every call received before EOF is answered
/// before this returns; it also returns, with
/// [`ServeEnd::WorkersFailed`], when workers keep failing to start.
pub fn serve_with_workers(
    server: &Server,
    host: &mut dyn Host,
    pool: &Pool,
    reader: Reader,
    output: &mut (dyn Write + Send),
    opts: &ServeOptions,
    inflight: &Arc<Inflight>,
) -> ServeEnd {
    serve_inner(server, host, Some(pool), reader, output, opts, inflight)
}

fn serve_inner(
    server: &Server,
    host: &mut dyn Host,
    pool: Option<&Pool>,
    reader: Reader,
    output: &mut (dyn Write + Send),
    opts: &ServeOptions,
    inflight: &Arc<Inflight>,
) -> ServeEnd {
    let calls = pool.map(|_| Calls::new(Arc::clone(inflight)));
    let control = Arc::new(Control::new(Arc::clone(inflight), calls.clone()));
    reader.attach(Arc::clone(&control));
    let out: Output<'_> = Mutex::new(output);
    let mut session = LegacyState::default();
    let mailbox = Mailbox::default();
    // RULES U3.1: the connection's session hears of what it subscribed to.
    let _session_listener = Listener::session(&session.subscriptions, mailbox.sink());
    server.hub().add(&_session_listener);
    let streams = Streams { mailbox: &mailbox, open: Mutex::new(std::collections::HashMap::new()) };
    let end = std::thread::scope(|s| {
        let ticker = masked(|| {
            std::thread::Builder::new()
                .name("mcplite-ticker".into())
                .spawn_scoped(s, || control.run_ticker(server, &out))
                .expect("spawn ticker thread")
        });
        // Stops the ticker however the loop ends (a panic too: the scope
        // would otherwise wait for the ticker forever).
        let stop = StopTicker(&control);
        let end = match (pool, calls) {
            (Some(pool), Some(calls)) => {
                let broken = AtomicU8::new(0);
                // One client: one lane, first in first out.
                let jobs = FairQueue::new();
                let run =
                    |job: Job, h: &mut WorkerHost<'_>| run_job(server, (&out, &mailbox), &control, &broken, job, h);
                let end = std::thread::scope(|drivers| {
                    pool.spawn_drivers(drivers, &jobs, &run);
                    let pooled = Pooled { pool, calls: Arc::clone(&calls), jobs: &jobs, broken: &broken };
                    let end =
                        serve_loop(server, host, &mut session, &reader, (&out, &streams), opts, &control, Some(pooled));
                    // RULES V2.4: the client is gone, and with it anyone who
                    // could fetch a task's result: its calls stop now (the
                    // tasks fail, saying so), not when they would end.
                    calls.end_tasks(crate::tasks::STOPPED_TEXT);
                    // The queue closes with the loop: the drivers answer what is left, then return.
                    jobs.close();
                    pool.wake_drivers();
                    end
                });
                match broken.load(Ordering::SeqCst) {
                    BROKEN_PIPE => ServeEnd::BrokenPipe,
                    WRITE_ERROR => ServeEnd::WriteError,
                    _ => end,
                }
            }
            _ => serve_loop(server, host, &mut session, &reader, (&out, &streams), opts, &control, None),
        };
        drop(stop);
        let _ = ticker.join();
        end
    });
    reader.stop();
    // The connection's legacy session ends with its input.
    server.end_session(&mut session);
    end
}

/// Notifications waiting for the writer (RULES U3): every line a listener
/// hears, with its LF.
#[derive(Default, Clone)]
struct Mailbox(Arc<Mutex<Vec<u8>>>);

impl Mailbox {
    /// A listener's sink: the line waits here.
    fn sink(&self) -> Sink {
        let waiting = Arc::clone(&self.0);
        Box::new(move |mut line| {
            line.push(b'\n');
            lock(&waiting).extend_from_slice(&line);
            true
        })
    }

    /// Write what waits (the caller holds the output).
    fn write_to(&self, w: &mut dyn Write) -> io::Result<()> {
        let waiting = std::mem::take(&mut *lock(&self.0));
        if waiting.is_empty() {
            return Ok(());
        }
        w.write_all(&waiting)?;
        w.flush()
    }
}

/// Write what the mailbox holds, then `reply` (RULES U3: the notifications
/// of a call's changes precede its answer).
fn write_reply(reply: Reply<'_>, out: &Output<'_>, mailbox: &Mailbox) -> io::Result<()> {
    let mut w = lock(out);
    mailbox.write_to(&mut **w)?;
    reply.write_line(&mut **w)
}

/// Most `subscriptions/listen` streams open at once on one connection.
const MAX_STREAMS: usize = 64;

/// The message of a listen request over [`MAX_STREAMS`].
const TOO_MANY_STREAMS: &str =
    "Invalid params: 64 subscriptions/listen streams are open on this connection; cancel one first";

/// The open `subscriptions/listen` requests of the connection (RULES
/// U3.3), by id.
struct Streams<'a> {
    mailbox: &'a Mailbox,
    open: Mutex<std::collections::HashMap<String, Arc<Listener>>>,
}

impl Streams<'_> {
    /// Write the reply (the acknowledgment of an accepted listen request),
    /// then open its stream.
    fn write(&self, server: &Server, mut reply: Reply<'_>, out: &Output<'_>) -> io::Result<()> {
        let listen = reply.take_listen();
        let mut w = lock(out);
        self.mailbox.write_to(&mut **w)?;
        if let Some(l) = listen.as_ref().filter(|_| lock(&self.open).len() >= MAX_STREAMS) {
            // RULES U3.3: a connection holds a bounded number of streams.
            let mut line = crate::codes::error_line(Some(&l.id), INVALID_PARAMS, TOO_MANY_STREAMS, None);
            line.push(b'\n');
            w.write_all(&line)?;
            return w.flush();
        }
        reply.write_line(&mut **w)?;
        if let Some(l) = listen {
            // Nothing is heard before the acknowledgment is written.
            let listener = Listener::stream(&l.id, l.filter, self.mailbox.sink());
            server.hub().add(&listener);
            lock(&self.open).insert(id_key(&l.id), listener);
        }
        Ok(())
    }

    /// A `notifications/cancelled` naming an open listen request closes it.
    fn cancel(&self, incoming: &Incoming) {
        let Incoming::Message(m) = incoming else { return };
        if m.id.is_some() || m.method != "notifications/cancelled" || lock(&self.open).is_empty() {
            return;
        }
        if let Some(id) = m.params.as_ref().and_then(|p| p.get("requestId")) {
            lock(&self.open).remove(&id.to_string());
        }
    }
}

/// A request id as `notifications/cancelled` names it: the JSON text
/// serde writes for it (`"\u0062"` and `"b"` are one id).
fn id_key(raw: &str) -> String {
    serde_json::from_str::<serde_json::Value>(raw).map_or_else(|_| raw.to_owned(), |v| v.to_string())
}

struct StopTicker<'a>(&'a Control);

impl Drop for StopTicker<'_> {
    fn drop(&mut self) {
        self.0.stop_ticker();
    }
}

/// A response a driver could not write: the serve loop stops.
const BROKEN_PIPE: u8 = 1;
const WRITE_ERROR: u8 = 2;

/// A `tools/call` queued for the pool's drivers.
struct Job {
    incoming: Incoming,
    session: LegacyState,
    reg: Registered,
    /// A task's call may wait beyond the queue's bound (the store bounds
    /// tasks, RULES V4.2).
    _ticket: Option<Ticket>,
    /// The call runs as this task (RULES V2.2): its answer is kept there.
    task: Option<Arc<Task>>,
    /// The call becomes a task if it runs long (RULES V2.5).
    promotion: Option<Arc<Promotion>>,
    /// The line counted as a possible call (see [`Control::done`]).
    was_call: bool,
}

/// What the serve loop needs to hand calls to workers.
struct Pooled<'a> {
    pool: &'a Pool,
    calls: Arc<Calls>,
    jobs: &'a FairQueue<Job>,
    broken: &'a AtomicU8,
}

impl Pooled<'_> {
    /// Why serving must end now, if it must.
    fn ended(&self) -> Option<ServeEnd> {
        match self.broken.load(Ordering::SeqCst) {
            BROKEN_PIPE => return Some(ServeEnd::BrokenPipe),
            WRITE_ERROR => return Some(ServeEnd::WriteError),
            _ => {}
        }
        self.pool.failure().map(|why| {
            eprintln!("mcplite: {why}");
            ServeEnd::WorkersFailed
        })
    }
}

/// A driver answers one queued call (see [`serve_with_workers`]).
fn run_job(
    server: &Server,
    (out, mailbox): (&Output<'_>, &Mailbox),
    control: &Control,
    broken: &AtomicU8,
    job: Job,
    host: &mut WorkerHost<'_>,
) {
    let Job { incoming, mut session, reg, _ticket, task, promotion, was_call } = job;
    // RULES C4.3: cancelled while it waited, it is never answered (and,
    // V2.5, never promoted; a task it was promoted to ends cancelled).
    if reg.state().is_cancelled() || broken.load(Ordering::SeqCst) != 0 {
        if let Some(t) = promotion.as_ref().and_then(|p| p.settle()) {
            t.cancel_quietly();
        }
    } else {
        host.set_call(reg.state().clone());
        let watch = PoolWatch { state: reg.state(), out };
        let carrier = Carrier::watched(&watch).as_task(task.as_ref()).promotable(promotion.as_ref());
        let reply = server.handle_parsed(&mut session, incoming, host, &carrier);
        if let Some(d) = reply.diagnostic() {
            eprintln!("mcplite: {d}");
        }
        let written = write_reply(reply, out, mailbox);
        if let Err(e) = written {
            let code = if e.kind() == io::ErrorKind::BrokenPipe { BROKEN_PIPE } else { WRITE_ERROR };
            if broken.compare_exchange(0, code, Ordering::SeqCst, Ordering::SeqCst).is_ok() {
                report_write_error(&e);
            }
        }
    }
    drop(reg);
    // RULES V2.5: a promoted call's request was answered by the serve loop.
    control.done(was_call && !promotion.is_some_and(|p| p.is_promoted()));
}

fn report_write_error(e: &io::Error) {
    if e.kind() == io::ErrorKind::BrokenPipe {
        eprintln!("mcplite: the client closed stdout (broken pipe); stopping");
    } else {
        eprintln!("mcplite: writing a response failed ({e}); stopping");
    }
}

/// A legacy or modern `tools/call` request, which workers run.
fn is_call(incoming: &Incoming) -> Option<&Message> {
    match incoming {
        Incoming::Message(m) if m.id.is_some() && m.over_limit.is_none() && m.method == "tools/call" => Some(m),
        _ => None,
    }
}

#[allow(clippy::too_many_arguments)]
fn serve_loop(
    server: &Server,
    host: &mut dyn Host,
    session: &mut LegacyState,
    reader: &Reader,
    (out, streams): (&Output<'_>, &Streams<'_>),
    opts: &ServeOptions,
    control: &Control,
    pooled: Option<Pooled<'_>>,
) -> ServeEnd {
    let watch = Watch { control, out };
    // The stream position of the next queued line (as the reader counts).
    let mut seq = 0u64;
    // A call was just handed to the drivers: its client usually sends
    // nothing more until the answer, so this thread does not spin for the
    // next line (on a machine with few cores the spin took the CPU the
    // driver and the worker need).
    let mut dispatched = false;
    // 2025-11-25 `tasks/result` requests waiting for their task (RULES
    // V3.2), answered when it ends.
    let mut waits: Vec<Waiting> = Vec::new();
    // Calls that become tasks if they run long (RULES V2.5).
    let mut promotions: Vec<(Arc<Promotion>, Arc<CallState>)> = Vec::new();
    loop {
        if let Some(end) = pooled.as_ref().and_then(Pooled::ended) {
            return end;
        }
        if let Err(e) = answer_waits(&mut waits, out, streams.mailbox) {
            return write_failed(&e);
        }
        if let Err(e) = promote_due(&mut promotions, (out, streams.mailbox), control) {
            return write_failed(&e);
        }
        let spin = if dispatched { std::time::Duration::ZERO } else { opts.spin };
        dispatched = false;
        let mut poll = if waits.is_empty() { opts.poll } else { opts.poll.min(WAIT_POLL) };
        if let Some(due) = promotions.iter().map(|(p, _)| p.due).min() {
            poll = poll.min(due.saturating_duration_since(std::time::Instant::now()));
        }
        let msg = match reader.next(spin, poll) {
            Some(m) => m,
            None => {
                // Idle: what listeners heard meanwhile goes out now.
                if let Err(e) = streams.mailbox.write_to(&mut **lock(out)) {
                    return write_failed(&e);
                }
                if host.interrupt_pending() {
                    eprintln!("mcplite: interrupt ignored while waiting for requests; close stdin to stop the server");
                }
                continue;
            }
        };
        match msg {
            Inbound::Eof => return ServeEnd::Eof,
            Inbound::Failed(e) => {
                eprintln!("mcplite: reading stdin failed ({e}); stopping");
                return ServeEnd::ReadError;
            }
            Inbound::Line(line) => {
                let at = seq;
                seq += 1;
                let call = control.may_be_call(&line);
                if let (Some(p), true) = (&pooled, call) {
                    let incoming = parse_line(&line);
                    if control.has_cancels() && control.reached(&incoming, at) {
                        control.done(call);
                        continue;
                    }
                    // A tool the server runs itself (RULES N7.6) is handled below.
                    if let Some(msg) = is_call(&incoming).filter(|m| p.pool.runs(m)) {
                        // RULES V2.1: a call that runs as a task is answered
                        // with its handle now, and queued.
                        let mut later = None;
                        match server.admit_task(msg, session, None) {
                            Some(Ok(Admitted::Task(task, line))) => {
                                let reg = control.register_call(&p.calls, msg.id.as_deref().unwrap_or("null"), None);
                                reg.state().set_task(Arc::clone(&task));
                                let written = write_line_now(line, out, streams.mailbox);
                                // Answered: a ping no longer waits behind it
                                // (RULES C5 is about calls not yet answered).
                                control.done(call);
                                // RULES V2.1: no place in the queue of calls
                                // (the store bounds tasks), and a lane of
                                // their own, so calls take turns with them.
                                let job = Job {
                                    incoming,
                                    session: session.clone(),
                                    reg,
                                    _ticket: None,
                                    task: Some(task),
                                    promotion: None,
                                    was_call: false,
                                };
                                let _ = p.jobs.send(Some(Arc::from(TASK_LANE)), job);
                                p.pool.job_sent();
                                if let Err(e) = written {
                                    return write_failed(&e);
                                }
                                continue;
                            }
                            // RULES V2.5: queued as any call, promoted in time.
                            Some(Ok(Admitted::Later(p))) => later = Some(p),
                            Some(Err(line)) => {
                                let written = write_line_now(line, out, streams.mailbox);
                                control.done(call);
                                if let Err(e) = written {
                                    return write_failed(&e);
                                }
                                continue;
                            }
                            None => {}
                        }
                        let Some(ticket) = p.pool.reserve() else {
                            // No room: refused at once, in order (RULES N3).
                            let reply = server.handle_parsed(session, incoming, &mut Busy, &Carrier::watched(&watch));
                            let written = write_reply(reply, out, streams.mailbox);
                            control.done(call);
                            if let Err(e) = written {
                                return write_failed(&e);
                            }
                            continue;
                        };
                        let progress = progress_of(msg, session);
                        let reg = control.register_call(&p.calls, msg.id.as_deref().unwrap_or("null"), progress);
                        if let Some(later) = &later {
                            reg.state().set_promotion(Arc::clone(later));
                            promotions.push((Arc::clone(later), Arc::clone(reg.state())));
                        }
                        let job = Job {
                            incoming,
                            session: session.clone(),
                            reg,
                            _ticket: Some(ticket),
                            task: None,
                            promotion: later,
                            was_call: call,
                        };
                        // The drivers outlive this loop: the queue is open.
                        let _ = p.jobs.send(None, job);
                        p.pool.job_sent();
                        dispatched = true;
                        continue;
                    }
                    // Not a call after all (a long line), or one the server
                    // runs: handled below.
                }
                reader.set_busy(true);
                // RULES T8: telemetry lines on stderr wait while the tool
                // prints there (released before the reply ends the span).
                let gate = tool_output_gate();
                let incoming = parse_line(&line);
                if control.has_cancels() && control.reached(&incoming, at) {
                    // RULES C4: cancelled while queued, never answered.
                    drop(gate);
                    control.done(call);
                    reader.set_busy(false);
                    continue;
                }
                streams.cancel(&incoming);
                let mut reply = server.handle_parsed(session, incoming, host, &Carrier::watched(&watch).streaming());
                if let Some(w) = reply.take_wait() {
                    waits.push(w);
                }
                // What a tool printed through C stdio goes out before the
                // response.
                sys::flush_c_stdio();
                drop(gate);
                if let Some(d) = reply.diagnostic() {
                    eprintln!("mcplite: {d}");
                }
                // Ends the message's span once the line is written. The
                // writer lock keeps the ticker's lines whole and, with the
                // call's progress ended by now, before the response.
                let written = streams.write(server, reply, out);
                control.done(call);
                if let Err(e) = written {
                    return write_failed(&e);
                }
                reader.set_busy(false);
            }
        }
    }
}

/// The lane of the queue that tasks' calls wait in (RULES V2.1): calls
/// take turns with them.
const TASK_LANE: &str = "\u{0}tasks";

/// How often waiting `tasks/result` requests are looked at while idle.
const WAIT_POLL: std::time::Duration = std::time::Duration::from_millis(10);

/// Answer the waiting `tasks/result` requests whose task ended.
fn answer_waits(waits: &mut Vec<Waiting>, out: &Output<'_>, mailbox: &Mailbox) -> io::Result<()> {
    if waits.is_empty() {
        return Ok(());
    }
    let (ready, still): (Vec<Waiting>, Vec<Waiting>) = std::mem::take(waits).into_iter().partition(Waiting::ready);
    *waits = still;
    for w in ready {
        write_line_now(w.line(), out, mailbox)?;
    }
    Ok(())
}

/// Promote the calls whose time is up and that have not answered (RULES
/// V2.5): each request is answered with its task's handle, and no longer
/// counted as a call waiting for its answer. Those that answered or were
/// promoted are forgotten.
fn promote_due(
    promotions: &mut Vec<(Arc<Promotion>, Arc<CallState>)>,
    (out, mailbox): (&Output<'_>, &Mailbox),
    control: &Control,
) -> io::Result<()> {
    if promotions.is_empty() {
        return Ok(());
    }
    let now = std::time::Instant::now();
    let mut written = Ok(());
    promotions.retain(|(p, state)| {
        if !p.is_open() || state.is_cancelled() {
            return false;
        }
        if p.due > now {
            return true;
        }
        if let Some(line) = p.promote(|task| state.promoted_to(task)) {
            control.done(true);
            if written.is_ok() {
                written = write_line_now(line, out, mailbox);
            }
        }
        false
    });
    written
}

/// Write a line the dispatcher did not make a reply of (a task's handle,
/// a waiting `tasks/result`'s answer), after what the mailbox holds.
fn write_line_now(mut line: Vec<u8>, out: &Output<'_>, mailbox: &Mailbox) -> io::Result<()> {
    let mut w = lock(out);
    mailbox.write_to(&mut **w)?;
    line.push(b'\n');
    w.write_all(&line)?;
    w.flush()
}

fn write_failed(e: &io::Error) -> ServeEnd {
    report_write_error(e);
    if e.kind() == io::ErrorKind::BrokenPipe {
        ServeEnd::BrokenPipe
    } else {
        ServeEnd::WriteError
    }
}
