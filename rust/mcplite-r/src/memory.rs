//! The in-memory link of the MCP client (`mcp_connect(tools = )`, RULES
//! K9): the engine's client `Connection` talks to an engine `Server` in
//! this process, with no child process, socket or pipe. Every message goes
//! through the same code as over stdio: the client's negotiation, argument
//! shaping and result conversion, the server's parsing, validation,
//! version projection and error mapping, and the progress notifications of
//! the running call (an [`Inflight`] with the serving policy, ticked by a
//! thread while the tool runs, as the stdio transport's ticker does).
//!
//! A request is answered when the client sends it: [`Link::send`] runs the
//! tool on R's main thread (the thread every client entry point runs on)
//! and queues the progress lines and the response, which [`Link::recv`]
//! then hands out in order. So progress callbacks run after the tool
//! returned, in the order the notifications were made. The call's
//! `timeout` holds as over a pipe (RULES K9.1): the ticker interrupts the
//! tool when it passes with no notification (each restarts the clock), the
//! call is cancelled, and the client, finding no answer, times out. There
//! are no heartbeats unless an interval is given (K9.2).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use extendr_api::prelude::*;
use mcplite_engine::client::{ClientError, Event, FailureContext, Link, Outgoing};
use mcplite_engine::message::parse_line;
use mcplite_engine::progress::{CallStart, CallWatch, Inflight, ProgressPolicy};
use mcplite_engine::server::Carrier;
use mcplite_engine::{LegacyState, Server};
use serde_json::Value;

use crate::host::RHost;

/// The server end of an in-memory connection.
pub struct MemoryLink {
    server: Server,
    host: RHost,
    legacy: LegacyState,
    inflight: Arc<Inflight>,
    /// What the server sent and the client has not read yet.
    queue: VecDeque<Event>,
    /// The server spec (R's `server_spec()`), kept protected: `host` points
    /// into it.
    _spec: Robj,
}

// SAFETY: a `MemoryLink` lives inside the client connection of an R
// external pointer: it is made, used and dropped on R's main thread only
// (every client entry point runs there, and R's finalizers too). `Link`
// asks for `Send` because the stdio and HTTP links are; this one is never
// sent to another thread (the ticker thread of `send` borrows only the
// `Inflight`, which is `Sync`).
unsafe impl Send for MemoryLink {}

impl MemoryLink {
    /// A server for `spec` (kept alive by the link), reporting progress
    /// with heartbeats every `interval` (`None`: no heartbeats, only the
    /// tool's own reports). Made on R's main thread, which its
    /// interrupter interrupts.
    pub fn new(spec: Robj, server: Server, host: RHost, interval: Option<Duration>) -> MemoryLink {
        let policy = match interval {
            Some(i) => ProgressPolicy::with_interval(i),
            None => ProgressPolicy { first: NEVER, interval: NEVER, ..ProgressPolicy::default() },
        };
        MemoryLink {
            server,
            host,
            legacy: LegacyState::default(),
            inflight: Arc::new(Inflight::new(policy, Some(crate::running_call::interrupter()))),
            queue: VecDeque::new(),
            _spec: spec,
        }
    }
}

/// The call watch of an in-memory call: the [`Inflight`], and the tool's
/// last report written before the response (RULES C2.4).
struct Watch<'a> {
    inflight: &'a Inflight,
    lines: &'a Mutex<Vec<Vec<u8>>>,
}

impl CallWatch for Watch<'_> {
    fn started(&self, call: &CallStart<'_>) {
        self.inflight.started(call);
    }

    fn finished(&self) -> bool {
        let progress = self.inflight.progress();
        // The lock first, so the ticker cannot add a line after this one.
        let mut lines = self.lines.lock().unwrap_or_else(|e| e.into_inner());
        let cancelled = self.inflight.finished();
        if let Some(line) = progress.and_then(|p| p.take_final()) {
            lines.push(line);
        }
        cancelled
    }
}

/// "No heartbeats": later than any call lasts (and far from overflowing
/// an `Instant`).
const NEVER: Duration = Duration::from_secs(10 * 365 * 24 * 3600);

/// The call's clock: it is cancelled (its tool interrupted) when `timeout`
/// passes with no notification, as a client over a pipe would cancel it.
struct Clock<'a> {
    id: &'a Value,
    timeout: Duration,
}

/// The ticker: the progress lines due while the tool runs, until `stop`;
/// the call cancelled when its clock runs out.
fn tick(inflight: &Inflight, stop: &AtomicBool, lines: &Mutex<Vec<Vec<u8>>>, clock: &Clock<'_>) {
    let mut deadline = Instant::now() + clock.timeout;
    let mut sent = 0;
    let mut cancelled = false;
    loop {
        let epoch = inflight.epoch();
        if stop.load(Ordering::SeqCst) {
            return;
        }
        let now = Instant::now();
        let mut due = now + Duration::from_secs(3600);
        if let Some(p) = inflight.progress() {
            {
                let mut lines = lines.lock().unwrap_or_else(|e| e.into_inner());
                if let Some(line) = p.poll(now) {
                    lines.push(line);
                }
            }
            if p.sent() != sent {
                // A notification restarts the clock (RULES K3).
                sent = p.sent();
                deadline = now + clock.timeout;
            }
            if let Some(d) = p.next_due() {
                due = due.min(d.max(now + Duration::from_millis(1)));
            }
        }
        if !cancelled && now >= deadline && inflight.is_running() {
            cancelled = inflight.cancel(None, clock.id);
        }
        if !cancelled {
            due = due.min(deadline);
        }
        inflight.wait_after(epoch, due);
    }
}

fn message(line: &[u8]) -> Event {
    match serde_json::from_slice::<Value>(line) {
        Ok(v) if v.is_object() => Event::Message(v),
        _ => Event::Garbage(String::from_utf8_lossy(&line[..line.len().min(200)]).into_owned()),
    }
}

impl Link for MemoryLink {
    fn send(
        &mut self,
        line: &[u8],
        out: &Outgoing,
        deadline: Instant,
        _interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<(), ClientError> {
        let text = line.strip_suffix(b"\n").unwrap_or(line);
        let incoming = parse_line(text);
        let id = out.id.map_or(Value::Null, Value::from);
        let clock = Clock { id: &id, timeout: deadline.saturating_duration_since(Instant::now()) };
        let MemoryLink { server, host, legacy, inflight, queue, .. } = self;
        let inflight: &Arc<Inflight> = inflight;
        let lines = Mutex::new(Vec::new());
        let reply = if out.method == "tools/call" {
            let stop = AtomicBool::new(false);
            let watch = Watch { inflight, lines: &lines };
            let reply = std::thread::scope(|scope| {
                scope.spawn(|| tick(inflight, &stop, &lines, &clock));
                // mcp_progress() reports to this call while it runs.
                let installed = crate::running_call::install(inflight.clone());
                let reply = server.handle_parsed(legacy, incoming, host, &Carrier::watched(&watch)).into_line();
                drop(installed);
                stop.store(true, Ordering::SeqCst);
                inflight.notify();
                reply
            });
            // The ticker has ended: an interrupt it sent too late to stop
            // the tool must not reach the caller's R code.
            crate::running_call::swallow_stale_interrupt();
            reply
        } else {
            server.handle_parsed(legacy, incoming, host, &Carrier::NONE).into_line()
        };
        for l in lines.into_inner().unwrap_or_else(|e| e.into_inner()) {
            queue.push_back(message(&l));
        }
        if let Some(r) = reply {
            queue.push_back(message(&r));
        }
        Ok(())
    }

    fn recv(&mut self, _id: u64, _wait: Duration) -> Option<Event> {
        self.queue.pop_front()
    }

    /// A call has always ended when its request was sent.
    fn cancel(&mut self, _id: u64, _reason: &str) {}

    fn finish(&mut self, _id: u64) {}

    /// The server sends no requests.
    fn respond(&mut self, _line: &[u8]) {}

    fn context(&mut self) -> FailureContext {
        FailureContext::default()
    }

    fn stderr_text(&self) -> String {
        String::new()
    }

    fn set_version(&mut self, _version: &str) {}

    fn close(&mut self) -> String {
        self.queue.clear();
        "closed (in memory)".into()
    }
}
