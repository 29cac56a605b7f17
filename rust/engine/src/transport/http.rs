//! The Streamable HTTP transport (RULES H1–H5): one MCP endpoint (POST),
//! both protocol eras, on the same dispatcher as stdio
//! ([`Server::handle_parsed`]).
//!
//! HTTP is parsed by hyper 1 (HTTP/1.1, the most widely used Rust HTTP
//! implementation) on a small tokio runtime whose threads block every
//! signal. hyper enforces the header-size limit and the header read timeout
//! (slow clients), a semaphore bounds concurrent connections (a connection
//! over the limit is answered `503` with `Retry-After` and closed), and
//! hyper-util's graceful shutdown drains open connections on stop.
//!
//! # Who runs what
//!
//! Requests that need no tool (`initialize`, `ping`, `server/discover`,
//! `tools/list`, notifications) are answered on the HTTP threads, so they
//! never wait behind a running tool. `tools/call` requests go over a channel
//! to the thread that called [`HttpServer::run`] (R's main thread in
//! production), which runs them one at a time in arrival order. A queued
//! call whose client has gone away is skipped. After a call that thread
//! looks for the next one for up to `JOB_SPIN` (500 µs) before it parks.
//!
//! # Eras on one endpoint
//!
//! A request is modern when its body claims a version in `params._meta`
//! (RULES M1.1) or its `MCP-Protocol-Version` header names the modern
//! version. Modern requests need the mirrored headers (`MCP-Protocol-Version`
//! equal to the body's claim, `Mcp-Method` equal to `method`, `Mcp-Name`
//! equal to the tool name of `tools/call`, plain or `=?base64?…?=`): a
//! missing or different one is `400` with `-32020`. `Mcp-Session-Id` and
//! `Last-Event-ID` are ignored on modern requests. An unknown
//! `MCP-Protocol-Version` is `400` with the unsupported-version error
//! listing the supported versions; an unknown method is `404` with `-32601`.
//!
//! Legacy requests (2025-03-26 … 2025-11-25; an absent
//! `MCP-Protocol-Version` means [`version::HTTP_HEADERLESS`]) use sessions: `initialize`
//! without a session id mints one (32 random hex characters, after
//! `<replica>.` when [`HttpOptions::replica`] is set, so a load balancer can
//! route on it) and returns it in `MCP-Session-Id`; every later request must
//! carry it (`400` without, `404` when unknown, ended or expired); `DELETE`
//! with it ends the session. An unknown method is `200` with `-32601` here,
//! since a legacy client reads `404` as the end of its session.
//! Sessions are bounded in number (the least recently used is dropped when
//! full) and expire when idle. `GET` is `405`: this server never pushes.
//!
//! # Progress and cancellation (RULES C6)
//!
//! A `tools/call` that carries a valid `_meta.progressToken` from a client
//! that accepts `text/event-stream` is answered as an SSE stream
//! (`X-Accel-Buffering: no` for proxies): `notifications/progress` events
//! while the tool runs (the engine's heartbeats and the tool's reports, from
//! the call's [`Progress`]), then the response event, then the stream ends.
//! Other calls are answered with `application/json`. Each call is scoped to
//! its HTTP exchange (modern) or its session (legacy) in the [`Inflight`]:
//! a modern client that closes the connection of a running call cancels it
//! (a queued one is skipped), and a legacy client's
//! `notifications/cancelled` cancels a call of its own session only
//! (running or queued). A cancelled call gets no JSON-RPC response: its
//! stream ends without one, or a JSON exchange gets `202` with no body.
//!
//! # Security
//!
//! `Host` must be a loopback name or the bound address when bound to
//! loopback (DNS rebinding), or one of the configured hosts; an `Origin`
//! that is present must be a loopback origin or a configured one (`403`
//! otherwise). With a token, every request to the endpoint needs
//! `Authorization: Bearer <token>` (compared in constant time; `401` with
//! `WWW-Authenticate: Bearer` otherwise); `GET /health` stays open. Binding
//! a non-loopback address without a token is refused unless
//! [`HttpOptions::allow_public_without_token`] is set. Bodies over
//! [`HttpOptions::max_body`] are `413` (a declared length is refused before
//! reading), a wrong `Content-Type` `415`, an `Accept` without
//! `application/json` `406`, invalid JSON `400` with `-32700`.

use std::collections::HashMap;
use std::convert::Infallible;
use std::io;
use std::net::{IpAddr, SocketAddr, TcpListener as StdListener, ToSocketAddrs};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use base64::Engine as _;
use bytes::Bytes;
use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Frame, Incoming as HyperBody};
use hyper::header::{HeaderMap, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use serde_json::{Map, Value};
use subtle::ConstantTimeEq;

use crate::codes::{
    standard_message, HEADER_MISMATCH, INTERNAL_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR,
    UNSUPPORTED_VERSION,
};
use crate::host::{CallContext, Host, ToolFailure, ToolResult, ToolSpec};
use crate::json::write_str;
use crate::message::{parse_line, Incoming, Message};
use crate::progress::{progress_token, CallStart, CallWatch, Inflight, NoWatch, Progress, ProgressPolicy};
use crate::projection;
use crate::server::{add_error_data, error_line, Carrier, LegacyState, Server};
use crate::telemetry::{HttpSpan, HttpStart, HttpVia, Via};
use crate::version::{self, Era, Version};

/// Settings of the HTTP transport.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Address or name to bind (`127.0.0.1` by default).
    pub host: String,
    /// Port; 0 picks a free one (see [`HttpServer::local_addr`]).
    pub port: u16,
    /// Path of the MCP endpoint (`/mcp`).
    pub path: String,
    /// Bearer token every MCP request must carry, if set.
    pub token: Option<String>,
    /// Origins allowed besides loopback ones (`scheme://host[:port]`).
    pub allowed_origins: Vec<String>,
    /// `Host` values allowed besides loopback names and the bound address.
    pub allowed_hosts: Vec<String>,
    /// Permit a non-loopback bind without a token.
    pub allow_public_without_token: bool,
    /// Largest request body in bytes.
    pub max_body: usize,
    /// Largest request head (request line and headers) in bytes; at least
    /// 8192.
    pub max_header_bytes: usize,
    /// A client must send its whole request head within this time.
    pub header_timeout: Duration,
    /// Connections served at once. Up to 64 more are accepted only to be
    /// answered `503` with `Retry-After: 1`; beyond those, connections wait
    /// in the kernel's queue until one ends.
    pub max_connections: usize,
    /// Legacy sessions kept at once.
    pub max_sessions: usize,
    /// A legacy session unused this long is ended.
    pub session_idle: Duration,
    /// Name of this replica, put in front of every session id it mints
    /// (`<replica>.<32 hex>`) so a load balancer can route a legacy session
    /// back to its replica by `MCP-Session-Id` alone. 1 to 32 ASCII letters,
    /// digits, `_` or `-`.
    pub replica: Option<String>,
    /// On stop, how long open connections and queued calls may finish.
    pub drain_timeout: Duration,
    /// HTTP worker threads.
    pub threads: usize,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            host: "127.0.0.1".into(),
            port: 8080,
            path: "/mcp".into(),
            token: None,
            allowed_origins: Vec::new(),
            allowed_hosts: Vec::new(),
            allow_public_without_token: false,
            max_body: 16 << 20,
            max_header_bytes: 16 << 10,
            header_timeout: Duration::from_secs(10),
            max_connections: 256,
            max_sessions: 1000,
            session_idle: Duration::from_secs(3600),
            replica: None,
            drain_timeout: Duration::from_secs(10),
            threads: 2,
        }
    }
}

/// Why binding failed, or serving ended.
#[derive(Debug)]
pub enum HttpError {
    /// The options are not acceptable (message says why).
    Config(String),
    /// The address cannot be bound or the runtime cannot start.
    Io(io::Error),
}

impl std::fmt::Display for HttpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HttpError::Config(m) => f.write_str(m),
            HttpError::Io(e) => write!(f, "{e}"),
        }
    }
}

/// A tool call handed to the serving thread.
struct Job {
    incoming: Incoming,
    session: LegacyState,
    /// The request, for telemetry (`None` when telemetry is off).
    via: Option<Via>,
    reply: tokio::sync::oneshot::Sender<Answer>,
    /// Who may cancel it (see [`Queued`]).
    queued: Arc<Queued>,
    /// Told the call's progress when its tool starts (SSE responses).
    progress: Option<tokio::sync::oneshot::Sender<Arc<Progress>>>,
}

/// What identifies a tool call for cancellation, while it is queued and
/// while it runs.
struct Queued {
    /// Its number in arrival order (the key of [`Shared::queued`]).
    no: u64,
    /// The legacy session id, or `#<no>` for a modern call (scoped to its
    /// own HTTP exchange).
    scope: String,
    /// The request id, parsed (ids compare as JSON values).
    id: Value,
    /// Cancelled by the client while queued: skip it.
    cancelled: AtomicBool,
}

/// The dispatcher's answer, detached from its span.
struct Answer {
    line: Option<Vec<u8>>,
    code: Option<i64>,
}

struct SessionEntry {
    state: LegacyState,
    used: Instant,
}

struct Shared {
    server: Arc<Server>,
    path: String,
    token: Option<Vec<u8>>,
    allowed_origins: Vec<String>,
    /// Lower-cased `Host` values accepted; `None`: any.
    allowed_hosts: Option<Vec<String>>,
    max_body: usize,
    max_sessions: usize,
    session_idle: Duration,
    replica: Option<String>,
    sessions: Mutex<HashMap<String, SessionEntry>>,
    jobs: Sender<Job>,
    /// The running call (progress, cancellation).
    inflight: Arc<Inflight>,
    /// Tool calls queued and not yet started, by number.
    queued: Mutex<HashMap<u64, Arc<Queued>>>,
    next_job: AtomicU64,
}

/// A bound HTTP server. [`HttpServer::run`] serves tool calls on the calling
/// thread until told to stop.
pub struct HttpServer {
    shared: Arc<Shared>,
    jobs: Receiver<Job>,
    runtime: tokio::runtime::Runtime,
    local_addr: SocketAddr,
    stop: Arc<StopState>,
    drained: Receiver<()>,
    drain_timeout: Duration,
}

/// How long the serving thread looks for the next tool call before it
/// parks, after running one. Waking a parked thread costs tens of
/// microseconds on an idle virtual machine (its vCPU has halted), and a
/// sequential client's next call usually arrives within this time: with it
/// the `tools/call` p50 of bench/http falls from 113-141 to 63-76 µs.
/// The cost is at most this much CPU time after each call.
const JOB_SPIN: Duration = Duration::from_micros(500);

/// Wait for a job until `until` without parking (a parked thread's wake-up
/// is slow on an idle virtual machine), yielding the core to any other
/// thread that is ready (the HTTP threads, the client on the same machine).
fn spin_recv(jobs: &Receiver<Job>, until: Instant) -> Option<Job> {
    loop {
        match jobs.try_recv() {
            Ok(j) => return Some(j),
            Err(crossbeam_channel::TryRecvError::Disconnected) => return None,
            Err(crossbeam_channel::TryRecvError::Empty) if Instant::now() < until => std::thread::yield_now(),
            Err(crossbeam_channel::TryRecvError::Empty) => return None,
        }
    }
}

/// How long answers handed over at the end of the drain time (RULES H4.2)
/// have to reach their clients before the connections are closed.
const ANSWER_GRACE: Duration = Duration::from_secs(1);

/// When the server was told to stop, shared by the serving thread and the
/// stop watcher ([`HttpServer::stop_when`]).
struct StopState {
    tx: tokio::sync::watch::Sender<bool>,
    at: Mutex<Option<Instant>>,
    drain: Duration,
    inflight: Arc<Inflight>,
    runtime: tokio::runtime::Handle,
}

impl StopState {
    /// Stop accepting connections (once), and interrupt the tool that is
    /// still running when the drain time is up.
    fn stop(&self) {
        let mut at = self.at.lock().unwrap_or_else(PoisonError::into_inner);
        if at.is_some() {
            return;
        }
        let began = Instant::now();
        *at = Some(began);
        let _ = self.tx.send(true);
        let inflight = self.inflight.clone();
        let until = began + self.drain;
        self.runtime.spawn(async move {
            tokio::time::sleep_until(until.into()).await;
            inflight.interrupt_running();
        });
    }

    fn since(&self) -> Option<Instant> {
        *self.at.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn is_loopback_name(h: &str) -> bool {
    matches!(h, "localhost" | "127.0.0.1" | "[::1]" | "::1") || h.ends_with(".localhost")
}

/// `host[:port]` without the port (IPv6 literals keep their brackets).
fn strip_port(h: &str) -> &str {
    if let Some(end) = h.strip_prefix('[').and_then(|r| r.find(']')) {
        return &h[..end + 2];
    }
    match h.rsplit_once(':') {
        Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => h,
    }
}

impl HttpServer {
    /// Check the options, bind the address and start accepting on
    /// background threads (which block every signal). Progress uses the
    /// default policy, and a cancellation cannot interrupt a tool (see
    /// [`HttpServer::bind_with`]).
    pub fn bind(server: Arc<Server>, opts: HttpOptions) -> Result<HttpServer, HttpError> {
        HttpServer::bind_with(server, opts, Arc::new(Inflight::new(ProgressPolicy::default(), None)))
    }

    /// [`HttpServer::bind`] with the [`Inflight`] that times progress and
    /// interrupts a cancelled tool (the R bridge's interrupts R's thread).
    pub fn bind_with(server: Arc<Server>, opts: HttpOptions, inflight: Arc<Inflight>) -> Result<HttpServer, HttpError> {
        if !opts.path.starts_with('/') || opts.path == "/health" {
            return Err(HttpError::Config(format!(
                "the endpoint path must start with \"/\" and not be \"/health\", not \"{}\"",
                opts.path
            )));
        }
        if let Some(r) = &opts.replica {
            if r.is_empty() || r.len() > 32 || !r.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-') {
                return Err(HttpError::Config(format!(
                    "the replica name must be 1 to 32 ASCII letters, digits, \"_\" or \"-\", not \"{r}\""
                )));
            }
        }
        let addr = (opts.host.as_str(), opts.port)
            .to_socket_addrs()
            .map_err(|e| HttpError::Config(format!("cannot resolve host \"{}\": {e}", opts.host)))?
            .next()
            .ok_or_else(|| HttpError::Config(format!("host \"{}\" has no address", opts.host)))?;
        let loopback = addr.ip().is_loopback();
        if !loopback && opts.token.is_none() && !opts.allow_public_without_token {
            return Err(HttpError::Config(format!(
                "refusing to serve on {} (not a loopback address) without a token: set a token, \
                 or opt out explicitly",
                addr.ip()
            )));
        }
        let listener = StdListener::bind(addr).map_err(HttpError::Io)?;
        listener.set_nonblocking(true).map_err(HttpError::Io)?;
        let local_addr = listener.local_addr().map_err(HttpError::Io)?;
        let allowed_hosts = if loopback || !opts.allowed_hosts.is_empty() {
            let mut hosts: Vec<String> = opts.allowed_hosts.iter().map(|h| h.to_ascii_lowercase()).collect();
            hosts.push(opts.host.to_ascii_lowercase());
            hosts.push(match local_addr.ip() {
                IpAddr::V6(ip) => format!("[{ip}]"),
                ip @ IpAddr::V4(_) => ip.to_string(),
            });
            Some(hosts)
        } else {
            None
        };
        let (jobs_tx, jobs_rx) = crossbeam_channel::unbounded();
        let shared = Arc::new(Shared {
            server,
            path: opts.path.clone(),
            token: opts.token.as_ref().map(|t| t.as_bytes().to_vec()),
            allowed_origins: opts.allowed_origins.iter().map(|o| o.trim_end_matches('/').to_string()).collect(),
            allowed_hosts,
            max_body: opts.max_body,
            max_sessions: opts.max_sessions.max(1),
            session_idle: opts.session_idle,
            replica: opts.replica.clone(),
            sessions: Mutex::new(HashMap::new()),
            jobs: jobs_tx,
            inflight,
            queued: Mutex::new(HashMap::new()),
            next_job: AtomicU64::new(0),
        });
        let runtime = with_signals_blocked(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(opts.threads.max(1))
                .thread_name("mcplite-http")
                .enable_all()
                .build()
        })
        .map_err(HttpError::Io)?;
        let listener = {
            let _g = runtime.enter();
            tokio::net::TcpListener::from_std(listener).map_err(HttpError::Io)?
        };
        let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
        let (drained_tx, drained_rx) = crossbeam_channel::bounded(1);
        runtime.spawn(accept_loop(listener, shared.clone(), opts.clone(), stop_rx, drained_tx));
        let stop = Arc::new(StopState {
            tx: stop_tx,
            at: Mutex::new(None),
            drain: opts.drain_timeout,
            inflight: shared.inflight.clone(),
            runtime: runtime.handle().clone(),
        });
        Ok(HttpServer {
            shared,
            jobs: jobs_rx,
            runtime,
            local_addr,
            stop,
            drained: drained_rx,
            drain_timeout: opts.drain_timeout,
        })
    }

    /// The bound address (with the port picked when 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Also stop when `signal` turns true, polled every 50 ms on an engine
    /// thread, so that the stop does not wait for a tool that is running
    /// (RULES H4.2): accepting ends at once, the running call and those
    /// queued have the drain timeout to finish, and a tool still running
    /// then is interrupted (its call is answered with the interrupted
    /// result). `signal` must be cheap and safe to call from any thread
    /// (e.g. a flag set by a signal handler).
    pub fn stop_when(&self, signal: impl Fn() -> bool + Send + 'static) {
        let stop = self.stop.clone();
        self.runtime.spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_millis(50));
            while !signal() {
                tick.tick().await;
            }
            stop.stop();
        });
    }

    /// Run tool calls on this thread, one at a time in arrival order, until
    /// `should_stop` (polled at most once every `poll`, while idle or
    /// between calls) or the signal given to [`HttpServer::stop_when`] says
    /// so. Then stop accepting, let open connections and queued calls finish
    /// for at most the drain timeout, and shut the threads down.
    ///
    /// `should_stop` may be costly (the bridge asks R whether Ctrl+C was
    /// pressed, which evaluates R code): under load it runs once per `poll`,
    /// not once per call.
    pub fn run(self, host: &mut dyn Host, poll: Duration, should_stop: &mut dyn FnMut(&mut dyn Host) -> bool) {
        let mut spin_after: Option<Instant> = None;
        let mut polled: Option<Instant> = None;
        loop {
            if self.stop.since().is_none() && polled.is_none_or(|t| t.elapsed() >= poll) {
                polled = Some(Instant::now());
                if should_stop(host) {
                    self.stop.stop();
                }
            }
            if let Some(t) = self.stop.since() {
                let drained = !self.drained.is_empty();
                if (drained && self.jobs.is_empty()) || t.elapsed() >= self.drain_timeout {
                    break;
                }
            }
            let next = match spin_after.and_then(|t| spin_recv(&self.jobs, t + JOB_SPIN)) {
                Some(job) => Ok(job),
                None => self.jobs.recv_timeout(poll),
            };
            match next {
                Ok(job) => {
                    self.run_job(job, host);
                    spin_after = Some(Instant::now());
                }
                Err(RecvTimeoutError::Timeout) => spin_after = None,
                Err(RecvTimeoutError::Disconnected) => break,
            }
        }
        // Answers just handed over (e.g. an interrupted call's) are written
        // before the connection threads go.
        let _ = self.drained.recv_timeout(ANSWER_GRACE);
        self.runtime.shutdown_timeout(Duration::from_millis(500));
        // The legacy sessions still open end with the server.
        let sessions = std::mem::take(&mut *self.shared.sessions.lock().unwrap_or_else(PoisonError::into_inner));
        for (_, e) in sessions {
            self.shared.session_over(e, Instant::now());
        }
    }

    /// Run one queued tool call, unless its client has gone away (the
    /// request is skipped) or cancelled it (answered with nothing).
    fn run_job(&self, job: Job, host: &mut dyn Host) {
        let Job { incoming, mut session, via, reply: reply_tx, queued, progress } = job;
        self.shared.queued.lock().unwrap_or_else(PoisonError::into_inner).remove(&queued.no);
        if reply_tx.is_closed() {
            return;
        }
        if queued.cancelled.load(Ordering::SeqCst) {
            let _ = reply_tx.send(Answer { line: None, code: None });
            return;
        }
        let inflight = &self.shared.inflight;
        inflight.set_scope(Some(queued.scope.clone()));
        let watch = JobWatch { inflight, progress: Mutex::new(progress), reply: &reply_tx, queued: &queued };
        let mut reply = self.shared.server.handle_parsed(
            &mut session,
            incoming,
            host,
            &Carrier { watch: &watch, via: via.as_ref() },
        );
        let answer = Answer { line: reply.take_line(), code: reply.error_code() };
        // The message's span ends as the answer leaves for the HTTP thread,
        // inside the request's HTTP span (RULES T10).
        drop(reply);
        let _ = reply_tx.send(answer);
    }
}

/// The serving thread's [`CallWatch`] for one job: the shared
/// [`Inflight`], which also hands the call's progress to its SSE stream.
struct JobWatch<'a> {
    inflight: &'a Inflight,
    progress: Mutex<Option<tokio::sync::oneshot::Sender<Arc<Progress>>>>,
    reply: &'a tokio::sync::oneshot::Sender<Answer>,
    queued: &'a Queued,
}

impl CallWatch for JobWatch<'_> {
    fn started(&self, call: &CallStart<'_>) {
        self.inflight.started(call);
        let tx = self.progress.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let (Some(tx), Some(p)) = (tx, self.inflight.progress()) {
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
}

/// Run `f` (which starts threads) with every signal blocked, so the threads
/// it starts inherit a full mask and R's handlers only run on R's thread.
#[cfg(unix)]
fn with_signals_blocked<T>(f: impl FnOnce() -> T) -> T {
    // SAFETY: sigset manipulation on stack values; the mask is restored.
    unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_BLOCK, &all, &mut old);
        let r = f();
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        r
    }
}

/// Windows has no signal masks: console control events run on a thread of
/// their own.
#[cfg(not(unix))]
fn with_signals_blocked<T>(f: impl FnOnce() -> T) -> T {
    f()
}

/// Connections accepted beyond [`HttpOptions::max_connections`] only to be
/// answered `503` at once (RULES H1.4); more wait in the kernel's queue.
const BUSY_CONNECTIONS: usize = 64;

/// What an accepted connection holds: a place among the connections served,
/// or among those answered `503`.
enum Slot {
    Serve(tokio::sync::OwnedSemaphorePermit),
    Busy(tokio::sync::OwnedSemaphorePermit),
}

async fn accept_loop(
    listener: tokio::net::TcpListener,
    shared: Arc<Shared>,
    opts: HttpOptions,
    mut stop: tokio::sync::watch::Receiver<bool>,
    drained: Sender<()>,
) {
    let limit = Arc::new(tokio::sync::Semaphore::new(opts.max_connections.max(1)));
    let busy = Arc::new(tokio::sync::Semaphore::new(BUSY_CONNECTIONS));
    let graceful = GracefulShutdown::new();
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(opts.header_timeout)
        .max_buf_size(opts.max_header_bytes.max(8192))
        .keep_alive(true);
    let mut busy_builder = builder.clone();
    busy_builder.keep_alive(false);
    loop {
        // Accept only while the connection can be served or told to retry.
        let slot = tokio::select! {
            biased;
            _ = stop.changed() => break,
            p = limit.clone().acquire_owned() => match p { Ok(p) => Slot::Serve(p), Err(_) => break },
            p = busy.clone().acquire_owned() => match p { Ok(p) => Slot::Busy(p), Err(_) => break },
        };
        let (stream, peer) = tokio::select! {
            r = listener.accept() => match r {
                Ok(x) => x,
                Err(_) => {
                    // Out of descriptors and the like: back off briefly.
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
            },
            _ = stop.changed() => break,
        };
        // A served connection may have ended while this one was awaited.
        let slot = match slot {
            Slot::Busy(b) => match limit.clone().try_acquire_owned() {
                Ok(p) => {
                    drop(b);
                    Slot::Serve(p)
                }
                Err(_) => Slot::Busy(b),
            },
            s => s,
        };
        let _ = stream.set_nodelay(true);
        let io = TokioIo::new(stream);
        let conn = Conn { peer, local: io.inner().local_addr().ok() };
        let (permit, busy, builder) = match slot {
            Slot::Busy(permit) => (permit, true, &busy_builder),
            Slot::Serve(permit) => (permit, false, &builder),
        };
        let sh = shared.clone();
        let svc = hyper::service::service_fn(move |req| {
            let sh = sh.clone();
            async move { Ok::<_, Infallible>(traced_request(&sh, conn, req, busy).await) }
        });
        let conn = graceful.watch(builder.serve_connection(io, svc));
        tokio::spawn(async move {
            let _ = conn.await;
            drop(permit);
        });
    }
    drop(listener);
    // A tool still running when the drain time is up is interrupted then
    // (StopState::stop); its answer gets ANSWER_GRACE more to be written.
    let _ = tokio::time::timeout(opts.drain_timeout + ANSWER_GRACE, graceful.shutdown()).await;
    let _ = drained.send(());
}

/// The answer on a connection over the limit: `503` with `Retry-After`, and
/// the connection closes. What the client sent is read first (briefly, up to
/// 64 kB), so that closing does not reset the connection before the client
/// reads the answer.
async fn too_busy(req: Request<HyperBody>) -> Resp {
    let _ = tokio::time::timeout(Duration::from_secs(1), Limited::new(req.into_body(), 64 << 10).collect()).await;
    let mut r = error_resp(
        StatusCode::SERVICE_UNAVAILABLE,
        None,
        INTERNAL_ERROR,
        "Service Unavailable: too many connections, retry later",
    );
    r.headers_mut().insert(hyper::header::RETRY_AFTER, HeaderValue::from_static("1"));
    r
}

type Resp = Response<BoxBody<Bytes, Infallible>>;

fn respond(status: StatusCode, body: Vec<u8>) -> Resp {
    let mut r = Response::new(Full::new(Bytes::from(body)).boxed());
    *r.status_mut() = status;
    r.headers_mut().insert(hyper::header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

fn empty(status: StatusCode) -> Resp {
    let mut r = Response::new(Full::new(Bytes::new()).boxed());
    *r.status_mut() = status;
    r
}

/// The body of an SSE response: the events its task sends, until the task
/// drops the sender. hyper drops the body when the client goes away, which
/// the task sees as its channel closing.
struct SseBody(tokio::sync::mpsc::Receiver<Bytes>);

impl hyper::body::Body for SseBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.0.poll_recv(cx).map(|event| event.map(|b| Ok(Frame::data(b))))
    }
}

/// One SSE event carrying one JSON-RPC message (a line without LF: the
/// engine's JSON never contains a raw line break).
fn sse_event(line: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(line.len() + 24);
    out.extend_from_slice(b"event: message\ndata: ");
    out.extend_from_slice(line);
    out.extend_from_slice(b"\n\n");
    Bytes::from(out)
}

/// Does the `Accept` header name `text/event-stream`?
fn accepts_sse(h: &HeaderMap) -> bool {
    header(h, "accept").is_some_and(|a| a.split(',').map(media_type).any(|m| m == "text/event-stream"))
}

/// A JSON-RPC error response (`id` is the raw id token, or `null`), with
/// `error.data` (JSON text) when given.
fn rpc_error(id: Option<&str>, code: i64, message: &str, data: Option<&[u8]>) -> Vec<u8> {
    let mut out = error_line(id, code, message, None);
    if let Some(d) = data {
        add_error_data(&mut out, d);
    }
    out
}

fn error_resp(status: StatusCode, id: Option<&str>, code: i64, message: &str) -> Resp {
    respond(status, rpc_error(id, code, message, None))
}

fn header<'h>(h: &'h HeaderMap, name: &str) -> Option<&'h str> {
    h.get(name).map(|v| v.to_str().unwrap_or("\u{fffd}"))
}

/// The status for a JSON-RPC answer: 404 for an unknown method, 400 for
/// parse, envelope and version errors, 200 otherwise (tool errors included).
fn status_for(code: Option<i64>) -> StatusCode {
    match code {
        Some(METHOD_NOT_FOUND) => StatusCode::NOT_FOUND,
        Some(PARSE_ERROR | INVALID_REQUEST | UNSUPPORTED_VERSION | HEADER_MISMATCH) => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    }
}

impl Shared {
    fn host_allowed(&self, h: &HeaderMap) -> bool {
        let Some(allowed) = &self.allowed_hosts else { return true };
        let Some(host) = header(h, "host") else { return false };
        let host = host.to_ascii_lowercase();
        let name = strip_port(&host);
        is_loopback_name(name) || allowed.iter().any(|a| a == &host || a == name)
    }

    fn origin_allowed(&self, h: &HeaderMap) -> bool {
        let Some(origin) = header(h, "origin") else { return true };
        let origin = origin.trim_end_matches('/');
        if self.allowed_origins.iter().any(|o| o == "*" || o.eq_ignore_ascii_case(origin)) {
            return true;
        }
        let rest = match origin.split_once("://") {
            Some(("http" | "https", rest)) => rest,
            _ => return false,
        };
        !rest.contains('/') && is_loopback_name(&strip_port(rest).to_ascii_lowercase())
    }

    fn token_ok(&self, h: &HeaderMap) -> bool {
        let Some(token) = &self.token else { return true };
        let given = h.get("authorization").map(|v| v.as_bytes()).unwrap_or_default();
        let given = match given.get(..7) {
            Some(p) if p.eq_ignore_ascii_case(b"bearer ") => &given[7..],
            _ => return false,
        };
        bool::from(given.ct_eq(token.as_slice()))
    }

    fn health(&self) -> Resp {
        let info = self.server.info();
        let mut out = Vec::with_capacity(96);
        out.extend_from_slice(b"{\"status\":\"ok\",\"name\":");
        write_str(&mut out, &info.name);
        out.extend_from_slice(b",\"version\":");
        write_str(&mut out, &info.version);
        out.extend_from_slice(format!(",\"tools\":{}}}", self.server.tools().len()).as_bytes());
        respond(StatusCode::OK, out)
    }

    /// Answer a message that needs no tool, on this thread.
    fn answer_here(&self, session: &mut LegacyState, incoming: Incoming, via: Option<&Via>) -> Answer {
        let mut reply = self.server.handle_parsed(session, incoming, &mut NoTools, &Carrier { watch: &NoWatch, via });
        Answer { line: reply.take_line(), code: reply.error_code() }
    }

    /// Answer a `tools/call` request: queue it for the serving thread, then
    /// wait for its answer (JSON) or stream its progress and answer (SSE,
    /// when it has a progress token and the client accepts SSE). `scope` is
    /// the legacy session id, `None` for a modern call, which is cancelled
    /// when its client goes away.
    async fn call_tool(
        &self,
        h: &HeaderMap,
        session: LegacyState,
        incoming: Incoming,
        scope: Option<&str>,
        via: Option<Via>,
    ) -> Resp {
        let Incoming::Message(msg) = &incoming else { unreachable!("only messages reach here") };
        let raw_id = msg.id.clone().unwrap_or_else(|| "null".into());
        let id = serde_json::from_str(&raw_id).unwrap_or(Value::Null);
        let sse = accepts_sse(h) && progress_token(msg.params.as_ref()).is_some();
        let legacy = scope.is_some();
        let no = self.next_job.fetch_add(1, Ordering::SeqCst);
        let scope = scope.map_or_else(|| format!("#{no}"), str::to_owned);
        let queued = Arc::new(Queued { no, scope, id, cancelled: AtomicBool::new(false) });
        let (reply_tx, reply_rx) = tokio::sync::oneshot::channel();
        let (progress_tx, progress_rx) = if sse {
            let (tx, rx) = tokio::sync::oneshot::channel();
            (Some(tx), Some(rx))
        } else {
            (None, None)
        };
        self.queued.lock().unwrap_or_else(PoisonError::into_inner).insert(no, queued.clone());
        let mut guard = CancelOnDrop {
            inflight: self.inflight.clone(),
            queued: queued.clone(),
            armed: queued.scope.starts_with('#'),
        };
        let job = Job { incoming, session, via, reply: reply_tx, queued, progress: progress_tx };
        if self.jobs.send(job).is_err() {
            self.queued.lock().unwrap_or_else(PoisonError::into_inner).remove(&no);
            guard.armed = false;
            return unavailable();
        }
        match progress_rx {
            None => {
                // Dropped here when the client goes away: the guard cancels.
                let answer = reply_rx.await;
                guard.armed = false;
                let to_resp = if legacy { legacy_resp } else { answer_resp };
                answer.map_or_else(|_| unavailable(), to_resp)
            }
            Some(progress_rx) => {
                let (tx, rx) = tokio::sync::mpsc::channel(8);
                let min_gap = self.inflight.policy().min_gap;
                tokio::spawn(stream_call(reply_rx, progress_rx, tx, guard, raw_id, min_gap));
                let mut r = Response::new(SseBody(rx).boxed());
                let hs = r.headers_mut();
                hs.insert(hyper::header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
                hs.insert(hyper::header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
                hs.insert("x-accel-buffering", HeaderValue::from_static("no"));
                r
            }
        }
    }

    /// A legacy `notifications/cancelled` of session `sid`: cancel the call
    /// it names if that call came from the same session, running or queued.
    fn cancel_in_session(&self, sid: &str, params: Option<&Value>) {
        let Some(id) = params.and_then(|p| p.get("requestId")) else { return };
        for q in self.queued.lock().unwrap_or_else(PoisonError::into_inner).values() {
            if q.scope == sid && &q.id == id {
                q.cancelled.store(true, Ordering::SeqCst);
            }
        }
        self.inflight.cancel(Some(sid), id);
    }

    /// A legacy session is over (`DELETE`, idle expiry, eviction,
    /// shutdown): `mcp.server.session.duration` is recorded. An expired one
    /// ended when its idle time ran out.
    fn session_over(&self, mut e: SessionEntry, now: Instant) {
        let end =
            if now.saturating_duration_since(e.used) >= self.session_idle { e.used + self.session_idle } else { now };
        self.server.end_session_at(&mut e.state, end, true);
    }

    fn mint_session(&self, state: LegacyState) -> String {
        let mut raw = [0u8; 16];
        if getrandom::fill(&mut raw).is_err() {
            // The OS random source failed: mix time and address so ids stay
            // unique, though not secret.
            let t = Instant::now().elapsed().as_nanos() ^ (std::ptr::addr_of!(raw) as usize as u128);
            raw.copy_from_slice(&t.to_le_bytes());
        }
        let mut id = self.replica.as_ref().map(|r| format!("{r}.")).unwrap_or_default();
        id.extend(raw.iter().map(|b| format!("{b:02x}")));
        let mut sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        let idle = self.session_idle;
        let now = Instant::now();
        let expired: Vec<String> = sessions
            .iter()
            .filter(|(_, e)| now.saturating_duration_since(e.used) >= idle)
            .map(|(k, _)| k.clone())
            .collect();
        for k in expired {
            if let Some(e) = sessions.remove(&k) {
                self.session_over(e, now);
            }
        }
        while sessions.len() >= self.max_sessions {
            let oldest = sessions.iter().min_by_key(|(_, e)| e.used).map(|(k, _)| k.clone());
            match oldest.and_then(|k| sessions.remove(&k)) {
                Some(e) => self.session_over(e, now),
                None => break,
            };
        }
        sessions.insert(id.clone(), SessionEntry { state, used: now });
        id
    }

    /// Run `f` on a live session (touching it), or `None` when unknown or
    /// expired.
    fn with_session<T>(&self, id: &str, f: impl FnOnce(&mut LegacyState) -> T) -> Option<T> {
        let mut sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        let expired = sessions.get(id).map(|e| e.used.elapsed() >= self.session_idle)?;
        if expired {
            if let Some(e) = sessions.remove(id) {
                self.session_over(e, Instant::now());
            }
            return None;
        }
        let e = sessions.get_mut(id)?;
        e.used = Instant::now();
        Some(f(&mut e.state))
    }

    fn end_session(&self, id: &str) -> bool {
        let removed = self.sessions.lock().unwrap_or_else(PoisonError::into_inner).remove(id);
        match removed {
            Some(e) => {
                self.session_over(e, Instant::now());
                true
            }
            None => false,
        }
    }
}

/// Cancels a modern call when its HTTP exchange ends before the answer
/// (the client went away): a queued call is skipped, a running one
/// interrupted. Legacy calls are not armed: for them a disconnect is not a
/// cancellation.
struct CancelOnDrop {
    inflight: Arc<Inflight>,
    queued: Arc<Queued>,
    armed: bool,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if self.armed {
            self.queued.cancelled.store(true, Ordering::SeqCst);
            self.inflight.cancel(Some(&self.queued.scope), &self.queued.id);
        }
    }
}

/// The task behind an SSE response: progress events while the tool runs
/// (polled when due, when a report wakes it, and at least every `min_gap`),
/// then the tool's last report if it was still waiting (RULES C2.4) and the
/// response event; the stream ends when the task returns. Progress ends
/// before the response is made, and this task writes both in order, so no
/// notification follows the response.
async fn stream_call(
    mut reply: tokio::sync::oneshot::Receiver<Answer>,
    mut started: tokio::sync::oneshot::Receiver<Arc<Progress>>,
    tx: tokio::sync::mpsc::Sender<Bytes>,
    mut guard: CancelOnDrop,
    raw_id: String,
    min_gap: Duration,
) {
    let mut progress: Option<Arc<Progress>> = None;
    let mut waiting = true;
    loop {
        let due = progress.as_ref().and_then(|p| p.next_due()).map(|d| d.min(Instant::now() + min_gap));
        let watched = progress.clone();
        let tick = async move {
            let sleep = async {
                match due {
                    Some(d) => tokio::time::sleep_until(tokio::time::Instant::from_std(d)).await,
                    None => std::future::pending().await,
                }
            };
            match &watched {
                // Or sooner, when a report starts waiting.
                Some(p) => tokio::select! {
                    () = sleep => {}
                    () = p.changed().notified() => {}
                },
                None => sleep.await,
            }
        };
        tokio::select! {
            biased;
            answer = &mut reply => {
                guard.armed = false;
                let line = match answer {
                    Ok(a) => a.line,
                    Err(_) => Some(rpc_error(Some(&raw_id), INTERNAL_ERROR, "Service Unavailable: the server is stopping", None)),
                };
                if let Some(line) = line {
                    // The call started before it was answered.
                    if waiting {
                        progress = started.try_recv().ok();
                    }
                    if let Some(last) = progress.as_ref().and_then(|p| p.take_final()) {
                        if tx.send(sse_event(&last)).await.is_err() {
                            return;
                        }
                    }
                    let _ = tx.send(sse_event(&line)).await;
                }
                return;
            }
            () = tx.closed() => return,
            p = &mut started, if waiting => {
                waiting = false;
                progress = p.ok();
            }
            () = tick => {
                if let Some(line) = progress.as_ref().and_then(|p| p.poll(Instant::now())) {
                    if tx.send(sse_event(&line)).await.is_err() {
                        return;
                    }
                }
            }
        }
    }
}

/// A host for messages that run no tool (never called). Also the stdio
/// ticker's, for the pings it answers.
pub(super) struct NoTools;

impl Host for NoTools {
    fn tools(&mut self) -> Vec<ToolSpec> {
        Vec::new()
    }
    fn call_tool(
        &mut self,
        _: usize,
        _: Option<&Map<String, Value>>,
        _: &CallContext,
    ) -> Result<ToolResult, ToolFailure> {
        Err(ToolFailure::Error("internal error".into()))
    }
}

fn media_type(v: &str) -> String {
    v.split(';').next().unwrap_or("").trim().to_ascii_lowercase()
}

fn accepts_json(accept: &str) -> bool {
    accept.split(',').map(media_type).any(|m| m == "application/json" || m == "application/*" || m == "*/*")
}

fn method_not_allowed() -> Resp {
    let mut r = error_resp(StatusCode::METHOD_NOT_ALLOWED, None, INVALID_REQUEST, "Method Not Allowed: use POST");
    r.headers_mut().insert(hyper::header::ALLOW, HeaderValue::from_static("POST, DELETE"));
    r
}

/// The two ends of a connection.
#[derive(Debug, Clone, Copy)]
struct Conn {
    peer: SocketAddr,
    local: Option<SocketAddr>,
}

fn http_version(v: hyper::Version) -> &'static str {
    match v {
        hyper::Version::HTTP_09 => "0.9",
        hyper::Version::HTTP_10 => "1.0",
        hyper::Version::HTTP_2 => "2",
        hyper::Version::HTTP_3 => "3",
        _ => "1.1",
    }
}

/// Serve one request (or, on a connection over the limit, answer it `503`:
/// `busy`); with telemetry on, inside its HTTP server span (RULES T10), which
/// parents the span of the MCP message it carries.
async fn traced_request(sh: &Shared, conn: Conn, req: Request<HyperBody>, busy: bool) -> Resp {
    let Some(recorder) = sh.server.recorder() else {
        return if busy { too_busy(req).await } else { handle_request(sh, req, None).await };
    };
    let h = req.headers();
    let path = req.uri().path();
    let route = if path == sh.path {
        Some(sh.path.as_str())
    } else if path == "/health" {
        Some("/health")
    } else {
        None
    };
    let host = header(h, "host");
    let port = host.and_then(|v| v.strip_prefix(strip_port(v))).and_then(|p| p.strip_prefix(':')?.parse().ok());
    let protocol_version = http_version(req.version());
    let span = recorder.http_start(&HttpStart {
        method: req.method().as_str(),
        path,
        route,
        scheme: "http",
        server_address: host.map(strip_port),
        server_port: port.or(conn.local.map(|l| l.port())),
        client: Some(conn.peer),
        protocol_version,
        traceparent: header(h, "traceparent"),
        tracestate: header(h, "tracestate"),
    });
    let via = Via {
        http: Some(HttpVia {
            span: span.as_ref().and_then(|s| s.context()),
            session_id: None,
            client: Some(conn.peer),
            protocol_version,
            baggage: header(h, "baggage").map(String::from),
        }),
    };
    let resp = if busy { too_busy(req).await } else { handle_request(sh, req, Some(via)).await };
    let Some(span) = span else { return resp };
    let status = resp.status().as_u16();
    if !is_sse(&resp) {
        span.finish(status);
        return resp;
    }
    // An SSE answer is still being sent: its span ends with the stream, so
    // that it covers the tool call it carries (RULES T10, C6).
    resp.map(|body| SpanUntilEnd { body, span: Some(span), status }.boxed())
}

fn is_sse(r: &Resp) -> bool {
    r.headers().get(hyper::header::CONTENT_TYPE).is_some_and(|v| v.as_bytes() == b"text/event-stream")
}

/// A response body that ends the request's HTTP span when it is dropped:
/// after its last frame, or when the client went away.
struct SpanUntilEnd {
    body: BoxBody<Bytes, Infallible>,
    span: Option<HttpSpan>,
    status: u16,
}

impl hyper::body::Body for SpanUntilEnd {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }
}

impl Drop for SpanUntilEnd {
    fn drop(&mut self) {
        if let Some(span) = self.span.take() {
            span.finish(self.status);
        }
    }
}

/// The answer to a request refused (or, for `/health` and `DELETE`,
/// answered) on its request line and headers alone, before its body is read.
fn preflight(sh: &Shared, req: &hyper::http::request::Parts) -> Option<Resp> {
    let h = &req.headers;
    if !sh.host_allowed(h) {
        return Some(error_resp(StatusCode::FORBIDDEN, None, INVALID_REQUEST, "Forbidden: Host header not allowed"));
    }
    if !sh.origin_allowed(h) {
        return Some(error_resp(StatusCode::FORBIDDEN, None, INVALID_REQUEST, "Forbidden: Origin not allowed"));
    }
    let path = req.uri.path();
    if path == "/health" && (req.method == Method::GET || req.method == Method::HEAD) {
        return Some(sh.health());
    }
    if path != sh.path {
        return Some(error_resp(StatusCode::NOT_FOUND, None, INVALID_REQUEST, "Not Found"));
    }
    if !sh.token_ok(h) {
        let mut r = error_resp(StatusCode::UNAUTHORIZED, None, INVALID_REQUEST, "Unauthorized: bearer token required");
        r.headers_mut().insert(hyper::header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        return Some(r);
    }
    let modern_header = header(h, "mcp-protocol-version").and_then(Version::parse).is_some_and(Version::is_modern);
    match req.method {
        Method::POST => {}
        Method::DELETE if !modern_header => {
            return Some(match header(h, "mcp-session-id") {
                None => method_not_allowed(),
                Some(id) if sh.end_session(id) => empty(StatusCode::OK),
                Some(_) => error_resp(StatusCode::NOT_FOUND, None, INVALID_REQUEST, "Session not found"),
            });
        }
        _ => return Some(method_not_allowed()),
    }
    if header(h, "content-type").map(media_type).as_deref() != Some("application/json") {
        return Some(error_resp(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            None,
            INVALID_REQUEST,
            "Unsupported Media Type: Content-Type must be application/json",
        ));
    }
    if let Some(accept) = header(h, "accept") {
        if !accepts_json(accept) {
            return Some(error_resp(
                StatusCode::NOT_ACCEPTABLE,
                None,
                INVALID_REQUEST,
                "Not Acceptable: Accept must include application/json",
            ));
        }
    }
    None
}

/// How much of a body is read, and for how long, before an answer given on
/// the headers alone ([`preflight`]), so that the connection can carry the
/// client's next request. Hyper closes a connection whose request body was
/// not read to its end, without telling the client; a client that then
/// reuses it loses its next request.
const DRAIN_LIMIT: usize = 64 << 10;
const DRAIN_TIME: Duration = Duration::from_secs(1);

/// `r` after the rest of the request's body is read (RULES H1.2); when it is larger than
/// [`DRAIN_LIMIT`] or slower than [`DRAIN_TIME`], `r` says the connection
/// closes.
async fn after_draining(body: HyperBody, r: Resp) -> Resp {
    match tokio::time::timeout(DRAIN_TIME, Limited::new(body, DRAIN_LIMIT).collect()).await {
        Ok(Ok(_)) => r,
        _ => closing(r),
    }
}

/// `r`, saying that the connection closes after it (hyper then closes it).
fn closing(mut r: Resp) -> Resp {
    r.headers_mut().insert(hyper::header::CONNECTION, HeaderValue::from_static("close"));
    r
}

async fn handle_request(sh: &Shared, req: Request<HyperBody>, via: Option<Via>) -> Resp {
    let (parts, body) = req.into_parts();
    if let Some(r) = preflight(sh, &parts) {
        return after_draining(body, r).await;
    }
    let too_large = || {
        error_resp(
            StatusCode::PAYLOAD_TOO_LARGE,
            None,
            INVALID_REQUEST,
            "Payload Too Large: request body over the limit",
        )
    };
    // A body declared over the limit is not read (RULES H1.2): the
    // connection closes after the answer.
    let declared = header(&parts.headers, "content-length").and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > sh.max_body as u64) {
        return closing(too_large());
    }
    let body = match Limited::new(body, sh.max_body).collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => return closing(too_large()),
        Err(_) => {
            return closing(error_resp(StatusCode::BAD_REQUEST, None, INVALID_REQUEST, "Bad Request: body not read"))
        }
    };
    let h = &parts.headers;
    let modern_header = header(h, "mcp-protocol-version").and_then(Version::parse).is_some_and(Version::is_modern);
    let incoming = match parse_line(&body) {
        Incoming::Blank => Incoming::ParseError,
        i => i,
    };
    let msg = match &incoming {
        Incoming::Message(m) => m,
        Incoming::ClientResponse => return empty(StatusCode::ACCEPTED),
        _ => {
            let a = sh.answer_here(&mut LegacyState::default(), incoming, None);
            return respond(StatusCode::BAD_REQUEST, a.line.unwrap_or_default());
        }
    };
    // An MCP-Protocol-Version header naming no version we know: the
    // unsupported-version error, which a probing client recognises.
    if let Some(v) = header(h, "mcp-protocol-version") {
        if !version::known_http_header(v) {
            let mut data = Vec::new();
            projection::write_unsupported_version_data(&mut data, v);
            let line =
                rpc_error(msg.id.as_deref(), UNSUPPORTED_VERSION, standard_message(UNSUPPORTED_VERSION), Some(&data));
            return respond(StatusCode::BAD_REQUEST, line);
        }
    }
    let body_modern = matches!(version::era_of(msg.params.as_ref()), Era::Modern { .. });
    if body_modern || modern_header {
        modern(sh, h, incoming, via).await
    } else {
        legacy(sh, h, incoming, via).await
    }
}

fn mismatch(id: Option<&str>, what: String) -> Resp {
    error_resp(StatusCode::BAD_REQUEST, id, HEADER_MISMATCH, &format!("Header mismatch: {what}"))
}

/// Decode a header value that may use the `=?base64?…?=` form.
fn decode_mirrored(v: &str) -> Option<String> {
    match v.strip_prefix("=?base64?").and_then(|r| r.strip_suffix("?=")) {
        Some(enc) => {
            let raw = base64::engine::general_purpose::STANDARD.decode(enc).ok()?;
            String::from_utf8(raw).ok()
        }
        None => Some(v.to_string()),
    }
}

/// Check the mirrored headers of a modern message (2026-07-28).
fn check_mirrored(h: &HeaderMap, msg: &Message) -> Result<(), String> {
    let id_less = msg.id.is_none();
    let Some(hv) = header(h, "mcp-protocol-version") else {
        return Err("missing MCP-Protocol-Version header".into());
    };
    match version::era_of(msg.params.as_ref()) {
        Era::Modern { meta } => {
            if let Some(Value::String(claim)) = meta.get(version::META_VERSION) {
                if claim != hv {
                    return Err(format!(
                        "MCP-Protocol-Version header value '{hv}' does not match body value '{claim}'"
                    ));
                }
            }
        }
        Era::Legacy if id_less => {}
        Era::Legacy => {
            return Err(format!("MCP-Protocol-Version header value '{hv}' but the body claims no version in _meta"))
        }
    }
    if id_less {
        return Ok(());
    }
    match header(h, "mcp-method") {
        None => return Err("missing Mcp-Method header".into()),
        Some(m) if m != msg.method => {
            return Err(format!("Mcp-Method header value '{m}' does not match body value '{}'", msg.method))
        }
        Some(_) => {}
    }
    if msg.method == "tools/call" {
        let name = msg.params.as_ref().and_then(|p| p.get("name")).and_then(Value::as_str);
        if let Some(name) = name {
            match header(h, "mcp-name") {
                None => return Err("missing Mcp-Name header".into()),
                Some(raw) => match decode_mirrored(raw) {
                    Some(n) if n == name => {}
                    Some(n) => return Err(format!("Mcp-Name header value '{n}' does not match body value '{name}'")),
                    None => return Err("Mcp-Name header value is not valid base64 UTF-8".into()),
                },
            }
        }
    }
    Ok(())
}

fn answer_resp(a: Answer) -> Resp {
    match a.line {
        Some(line) => respond(status_for(a.code), line),
        None => empty(StatusCode::ACCEPTED),
    }
}

/// A legacy answer: as [`answer_resp`], except that an unknown method is
/// `200` with the `-32601` error in the body. A legacy client takes `404`
/// to mean that its session ended (and starts a new one).
fn legacy_resp(a: Answer) -> Resp {
    match (a.code, a.line) {
        (Some(METHOD_NOT_FOUND), Some(line)) => respond(StatusCode::OK, line),
        (code, line) => answer_resp(Answer { line, code }),
    }
}

fn unavailable() -> Resp {
    error_resp(StatusCode::SERVICE_UNAVAILABLE, None, INTERNAL_ERROR, "Service Unavailable: the server is stopping")
}

async fn modern(sh: &Shared, h: &HeaderMap, incoming: Incoming, via: Option<Via>) -> Resp {
    let Incoming::Message(msg) = &incoming else { unreachable!("only messages reach here") };
    if let Err(what) = check_mirrored(h, msg) {
        if msg.id.is_none() {
            return respond(
                StatusCode::BAD_REQUEST,
                rpc_error(None, HEADER_MISMATCH, &format!("Header mismatch: {what}"), None),
            );
        }
        return mismatch(msg.id.as_deref(), what);
    }
    if msg.id.is_none() {
        // Accepted and ignored (no modern client notification exists).
        let _ = sh.answer_here(&mut LegacyState::default(), incoming, via.as_ref());
        return empty(StatusCode::ACCEPTED);
    }
    if msg.method == "tools/call" {
        return sh.call_tool(h, LegacyState::default(), incoming, None, via).await;
    }
    answer_resp(sh.answer_here(&mut LegacyState::default(), incoming, via.as_ref()))
}

async fn legacy(sh: &Shared, h: &HeaderMap, incoming: Incoming, mut via: Option<Via>) -> Resp {
    let Incoming::Message(msg) = &incoming else { unreachable!("only messages reach here") };
    let id = msg.id.clone();
    let Some(sid) = header(h, "mcp-session-id") else {
        if msg.method == "initialize" && id.is_some() {
            let mut state = LegacyState::default();
            let a = sh.answer_here(&mut state, incoming, via.as_ref());
            let mut r = legacy_resp(a);
            if state.initialized {
                let sid = sh.mint_session(state);
                if let Ok(v) = HeaderValue::from_str(&sid) {
                    r.headers_mut().insert("mcp-session-id", v);
                }
            }
            return r;
        }
        return error_resp(
            StatusCode::BAD_REQUEST,
            id.as_deref(),
            INVALID_REQUEST,
            "Bad Request: missing Mcp-Session-Id header",
        );
    };
    let not_found = || error_resp(StatusCode::NOT_FOUND, id.as_deref(), INVALID_REQUEST, "Session not found");
    if let Some(HttpVia { session_id, .. }) = via.as_mut().and_then(|v| v.http.as_mut()) {
        *session_id = Some(sid.to_string());
    }
    if msg.method == "tools/call" && id.is_some() {
        let Some(state) = sh.with_session(sid, |s| s.clone()) else { return not_found() };
        return sh.call_tool(h, state, incoming, Some(sid), via).await;
    }
    if msg.method == "notifications/cancelled" && id.is_none() && sh.with_session(sid, |_| ()).is_some() {
        sh.cancel_in_session(sid, msg.params.as_ref());
    }
    match sh.with_session(sid, |s| sh.answer_here(s, incoming, via.as_ref())) {
        Some(a) => legacy_resp(a),
        None => not_found(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_helpers() {
        assert_eq!(strip_port("localhost:8080"), "localhost");
        assert_eq!(strip_port("[::1]:80"), "[::1]");
        assert_eq!(strip_port("example.org"), "example.org");
        assert_eq!(decode_mirrored("=?base64?SGVsbG8sIOS4lueVjA==?="), Some("Hello, 世界".into()));
        assert_eq!(decode_mirrored("plain"), Some("plain".into()));
        assert_eq!(decode_mirrored("=?base64?***?="), None);
        assert!(accepts_json("application/json, text/event-stream"));
        assert!(accepts_json("*/*"));
        assert!(!accepts_json("text/event-stream"));
    }

    #[test]
    fn sse_helpers() {
        let mut h = HeaderMap::new();
        assert!(!accepts_sse(&h));
        h.insert("accept", HeaderValue::from_static("application/json, Text/Event-Stream; q=0.9"));
        assert!(accepts_sse(&h));
        h.insert("accept", HeaderValue::from_static("application/json, */*"));
        assert!(!accepts_sse(&h), "only an explicit text/event-stream");
        assert_eq!(&sse_event(b"{\"a\":1}")[..], b"event: message\ndata: {\"a\":1}\n\n");
    }
}
