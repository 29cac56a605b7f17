//! The bound server: the tokio runtime (threads with every signal blocked),
//! the accept loop and its connection limit (RULES H1.4), stopping and
//! draining (RULES H4.2), and the loop that runs tool calls on the thread
//! that called [`HttpServer::run`] (R's), or, with worker processes, on the
//! pool's drivers while that thread only watches for a stop (RULES N2).

use std::convert::Infallible;
use std::net::{SocketAddr, TcpListener as StdListener, ToSocketAddrs};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};
use hyper::body::Incoming as HyperBody;
use hyper_util::rt::{TokioIo, TokioTimer};

use super::access::AccessLog;
use super::guard::Guard;
use super::options::{HttpError, HttpOptions};
use super::queue::{Calls, Job, Pooled, StopCounts};
use super::request::{traced_request, Conn};
use super::resume::{Streams, KEEP_STREAM};
use super::sessions::{self, Sessions};
use super::tokens::{RateLimits, Tokens};
use super::Shared;
use crate::host::Host;
use crate::progress::{Inflight, ProgressPolicy};
use crate::server::Server;
use crate::signals::masked;
use crate::workers::fair::{RecvTimeoutError, TryRecvError};
use crate::workers::{FairQueue, Pool, WorkerHost};

/// A bound HTTP server. [`HttpServer::run`] serves tool calls on the calling
/// thread until told to stop.
pub struct HttpServer {
    shared: Arc<Shared>,
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
fn spin_recv(jobs: &FairQueue<Job>, until: Instant) -> Option<Job> {
    loop {
        match jobs.try_recv() {
            Ok(j) => return Some(j),
            Err(TryRecvError::Disconnected) => return None,
            Err(TryRecvError::Empty) if Instant::now() < until => std::thread::yield_now(),
            Err(TryRecvError::Empty) => return None,
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
    /// With workers: the calls they run, interrupted at the end of the drain.
    registry: Option<Arc<crate::workers::Calls>>,
    /// What became of the calls: `began` set now, `drain_over` as the drain
    /// time ends, before the interrupts.
    counts: Arc<StopCounts>,
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
        self.counts.began.store(true, Ordering::SeqCst);
        let _ = self.tx.send(true);
        let inflight = self.inflight.clone();
        let registry = self.registry.clone();
        let counts = self.counts.clone();
        let until = began + self.drain;
        self.runtime.spawn(async move {
            tokio::time::sleep_until(until.into()).await;
            counts.drain_over.store(true, Ordering::SeqCst);
            inflight.interrupt_running();
            if let Some(r) = registry {
                r.interrupt_all();
            }
        });
    }

    fn since(&self) -> Option<Instant> {
        *self.at.lock().unwrap_or_else(PoisonError::into_inner)
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
        HttpServer::bind_with_pool(server, opts, inflight, None)
    }

    /// [`HttpServer::bind_with`], with tool calls run by the worker processes
    /// of `pool` when given (RULES section 14): [`HttpServer::run`] then
    /// runs them on the pool's drivers, several at once, and `/health`
    /// reports the workers.
    pub fn bind_with_pool(
        server: Arc<Server>,
        opts: HttpOptions,
        inflight: Arc<Inflight>,
        pool: Option<Arc<Pool>>,
    ) -> Result<HttpServer, HttpError> {
        let (addr, tokens) = checked(&opts)?;
        let listener = StdListener::bind(addr).map_err(|e| cannot_listen(addr, &e))?;
        listener.set_nonblocking(true).map_err(HttpError::Io)?;
        let local_addr = listener.local_addr().map_err(HttpError::Io)?;
        let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
        let shared = Arc::new(Shared {
            path: opts.path.clone(),
            max_body: opts.max_body,
            guard: Guard::new(&opts, local_addr),
            tokens,
            limits: RateLimits::default(),
            access_log: masked(|| AccessLog::start(opts.access_log)).map_err(HttpError::Io)?,
            trusted_proxies: opts.trusted_proxies.clone(),
            sessions: Sessions::new(server.clone(), &opts),
            // A finished stream is kept a minute (or one hold time, when
            // longer) after a connection last read it.
            streams: Streams::new(opts.stream_hold, opts.stream_hold.map_or(KEEP_STREAM, |h| h.max(KEEP_STREAM))),
            calls: Calls::new(inflight, pool),
            listens: super::listen::Listens::new(stop_rx.clone(), opts.keepalive, opts.max_connections),
            server,
        });
        let runtime = masked(|| {
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
        let (drained_tx, drained_rx) = crossbeam_channel::bounded(1);
        runtime.spawn(accept_loop(listener, shared.clone(), opts.clone(), stop_rx, drained_tx));
        let stop = Arc::new(StopState {
            tx: stop_tx,
            at: Mutex::new(None),
            drain: opts.drain_timeout,
            inflight: shared.inflight().clone(),
            registry: shared.calls.workers().map(|w| w.registry.clone()),
            counts: shared.calls.stop.clone(),
            runtime: runtime.handle().clone(),
        });
        Ok(HttpServer { shared, runtime, local_addr, stop, drained: drained_rx, drain_timeout: opts.drain_timeout })
    }

    /// Check `opts` as [`HttpServer::bind`] does, without serving: the
    /// options, the address, the tokens (a tokens file is read), and, for a
    /// port other than 0, that the address can be bound now (it is let go
    /// again). A server with workers calls this before it starts them, so a
    /// bad configuration is said at once, not after every worker started.
    pub fn check(opts: &HttpOptions) -> Result<(), HttpError> {
        let (addr, _) = checked(opts)?;
        if addr.port() != 0 {
            drop(StdListener::bind(addr).map_err(|e| cannot_listen(addr, &e))?);
        }
        Ok(())
    }

    /// The bound address (with the port picked when 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The line a server prints when it starts serving: where, as which
    /// replica, with how many workers and tokens (RULES H7.3).
    pub fn start_line(&self) -> String {
        let sh = &self.shared;
        let replica = sh.sessions.replica().map_or_else(|| "no replica name".to_string(), |r| format!("replica {r}"));
        let runs = match sh.calls.workers() {
            Some(w) if w.pool.workers() == 1 => "1 worker process".to_string(),
            Some(w) => format!("{} worker processes", w.pool.workers()),
            None => "no worker processes".to_string(),
        };
        let tokens = match sh.tokens.count() {
            0 => "no token".to_string(),
            1 => "1 token".to_string(),
            n => format!("{n} tokens"),
        };
        format!(
            "mcplite: serving MCP over HTTP at http://{}{} ({replica}; {runs}; {tokens}; stop with Ctrl+C or SIGTERM)",
            self.local_addr, sh.path
        )
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

    /// Read the tokens file again whenever `signal` says so (polled every
    /// 50 ms on an engine thread; e.g. a flag set on SIGHUP and cleared by
    /// `signal`), besides on every change (RULES H6.1).
    pub fn reload_tokens_when(&self, signal: impl Fn() -> bool + Send + 'static) {
        let shared = self.shared.clone();
        self.runtime.spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_millis(50));
            loop {
                tick.tick().await;
                if signal() {
                    shared.tokens.reload();
                }
            }
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
    ///
    /// With workers ([`HttpServer::bind_with_pool`]) the calls run on the
    /// pool's drivers instead, and this thread polls `should_stop` and runs
    /// only the calls of the tools the pool leaves to the server (RULES
    /// N7.6; none in most servers); workers that keep failing to start
    /// ([`Pool::failure`]) stop the server as a stop signal does.
    pub fn run(
        self,
        host: &mut dyn Host,
        poll: Duration,
        should_stop: &mut dyn FnMut(&mut dyn Host) -> bool,
    ) -> Stopped {
        if let Some(w) = self.shared.calls.workers().cloned() {
            return self.run_workers(&w, host, poll, should_stop);
        }
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
                if (drained && self.shared.calls.jobs.is_empty()) || t.elapsed() >= self.drain_timeout {
                    break;
                }
            }
            let jobs = &self.shared.calls.jobs;
            let next = match spin_after.and_then(|t| spin_recv(jobs, t + JOB_SPIN)) {
                Some(job) => Ok(job),
                None => jobs.recv_timeout(poll),
            };
            match next {
                Ok(job) => {
                    self.shared.calls.run(&self.shared.server, job, host);
                    spin_after = Some(Instant::now());
                }
                Err(RecvTimeoutError::Timeout) => spin_after = None,
                Err(RecvTimeoutError::Disconnected) => break,
            }
        }
        self.finish()
    }

    /// [`HttpServer::run`] with workers: the drivers take the jobs; this
    /// thread watches for the stop and the drain (RULES N6.1, N6.3).
    fn run_workers(
        self,
        w: &Pooled,
        host: &mut dyn Host,
        poll: Duration,
        should_stop: &mut dyn FnMut(&mut dyn Host) -> bool,
    ) -> Stopped {
        let shared = &self.shared;
        let run = |job: Job, h: &mut WorkerHost<'_>| shared.calls.run_on_worker(&shared.server, job, h);
        std::thread::scope(|drivers| {
            w.pool.spawn_drivers(drivers, &shared.calls.jobs, &run);
            loop {
                if self.stop.since().is_none() {
                    if should_stop(host) {
                        self.stop.stop();
                    } else if let Some(why) = w.pool.failure() {
                        eprintln!("mcplite: {why}; stopping");
                        self.stop.stop();
                    }
                }
                if let Some(t) = self.stop.since() {
                    let drained = !self.drained.is_empty();
                    if (drained && shared.calls.jobs.is_empty() && shared.calls.host_jobs.is_empty())
                        || t.elapsed() >= self.drain_timeout
                    {
                        break;
                    }
                }
                // The calls of the tools the server runs itself (RULES
                // N7.6), one at a time on this thread; none in most servers.
                if let Ok(job) = shared.calls.host_jobs.recv_timeout(poll.min(Duration::from_millis(50))) {
                    shared.calls.run(&shared.server, job, host);
                }
            }
            // The drivers finish the calls they run (interrupted when the
            // drain time is up), drop those still queued, and return.
            shared.calls.close();
        });
        self.finish()
    }

    fn finish(self) -> Stopped {
        // Calls still queued (no workers) are dropped with the queue: 503.
        let counts = &self.shared.calls.stop;
        let left = self.shared.calls.jobs.len() + self.shared.calls.host_jobs.len();
        counts.dropped.fetch_add(left as u64, Ordering::SeqCst);
        // Answers just handed over (e.g. an interrupted call's) are written
        // before the connection threads go.
        let _ = self.drained.recv_timeout(ANSWER_GRACE);
        self.runtime.shutdown_timeout(Duration::from_millis(500));
        // The access log's last lines are written before the server says
        // it stopped.
        self.shared.access_log.flush(Duration::from_secs(1));
        // The legacy sessions still open end with the server.
        self.shared.sessions.end_all();
        Stopped {
            drained: counts.drained.load(Ordering::SeqCst),
            interrupted: counts.interrupted.load(Ordering::SeqCst),
            dropped: counts.dropped.load(Ordering::SeqCst),
        }
    }
}

/// What a server did with its calls as it stopped (RULES H4.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stopped {
    /// Calls answered after the stop began (running or queued then).
    pub drained: u64,
    /// Among them, calls interrupted at the end of the drain time (their
    /// answers say the server was stopping), or whose worker was killed
    /// because it did not stop.
    pub interrupted: u64,
    /// Calls still queued when the drain time ended: not run, answered
    /// `503`.
    pub dropped: u64,
}

impl Stopped {
    /// The end of the last line a stopping server prints, after why it
    /// stopped: "3 calls drained (1 interrupted), 0 not run".
    pub fn summary(&self) -> String {
        let s = |n: u64| if n == 1 { "" } else { "s" };
        format!(
            "{} call{} drained ({} interrupted), {} queued call{} not run",
            self.drained,
            s(self.drained),
            self.interrupted,
            self.dropped,
            s(self.dropped)
        )
    }
}

/// The options checked, the address resolved and the tokens read (RULES
/// H5.1, H6): what binding needs.
fn checked(opts: &HttpOptions) -> Result<(SocketAddr, Tokens), HttpError> {
    opts.check()?;
    // Session ids come from the OS random source only: find out now
    // whether there is one.
    sessions::new_id(None).map_err(|e| {
        HttpError::Config(format!("the operating system's random source (for session ids) failed: {e}"))
    })?;
    let addr = (opts.host.as_str(), opts.port)
        .to_socket_addrs()
        .map_err(|e| HttpError::Config(format!("cannot resolve host \"{}\": {e}", opts.host)))?
        .next()
        .ok_or_else(|| HttpError::Config(format!("host \"{}\" has no address", opts.host)))?;
    let tokens = Tokens::new(opts)?;
    if !addr.ip().is_loopback() && !tokens.any() && !opts.allow_public_without_token {
        return Err(HttpError::Config(format!(
            "refusing to serve on {} (not a loopback address) without a token: set a token \
             (MCPLITE_TOKEN), or allow a public server without one (MCPLITE_ALLOW_PUBLIC=true)",
            addr.ip()
        )));
    }
    Ok((addr, tokens))
}

/// Connections accepted beyond [`HttpOptions::max_connections`] only to be
/// answered `503` at once (RULES H1.4); more wait in the kernel's queue.
const BUSY_CONNECTIONS: usize = 64;

/// What an accepted connection holds: a place among the connections served,
/// or among those answered `503`; or nothing, for one taken from the listen
/// queue after the stop (served for one request).
enum Slot {
    Serve(tokio::sync::OwnedSemaphorePermit),
    Busy(tokio::sync::OwnedSemaphorePermit),
    Drained,
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
    // Every connection's task holds a sender: `recv` returns once all ended.
    let (alive, mut all_ended) = tokio::sync::mpsc::channel::<()>(1);
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(opts.header_timeout)
        .max_buf_size(opts.max_header_bytes.max(8192))
        .keep_alive(true);
    let mut one_request = builder.clone();
    one_request.keep_alive(false);
    let conn_stop = stop.clone();
    let serve = |stream: tokio::net::TcpStream, peer: SocketAddr, slot: Slot| {
        let _ = stream.set_nodelay(true);
        let io = TokioIo::new(stream);
        let conn = Conn { peer, local: io.inner().local_addr().ok() };
        let (permit, busy, builder) = match slot {
            Slot::Busy(permit) => (Some(permit), true, &one_request),
            Slot::Serve(permit) => (Some(permit), false, &builder),
            Slot::Drained => (None, false, &one_request),
        };
        let requested = Arc::new(tokio::sync::Notify::new());
        let seen = requested.clone();
        let sh = shared.clone();
        let svc = hyper::service::service_fn(move |req| {
            seen.notify_one();
            let sh = sh.clone();
            async move { Ok::<_, Infallible>(traced_request(&sh, conn, req, busy).await) }
        });
        let conn = builder.serve_connection(io, svc);
        let (stop, alive) = (conn_stop.clone(), alive.clone());
        tokio::spawn(async move {
            serve_until_stopped(conn, requested, stop).await;
            drop((permit, alive));
        });
    };
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
        serve(stream, peer, slot);
    }
    // RULES H4.2: connections the kernel completed before the stop wait in
    // the listen queue, and closing the listener would reset them, failing
    // requests a proxy may not send elsewhere (a POST). Take every one (the
    // non-blocking accept says when the queue is empty) and serve it.
    if let Ok(queue) = listener.into_std() {
        while let Ok((stream, peer)) = queue.accept() {
            let stream = stream.set_nonblocking(true).and_then(|()| tokio::net::TcpStream::from_std(stream));
            if let Ok(stream) = stream {
                serve(stream, peer, Slot::Drained);
            }
        }
    }
    drop(alive);
    // A tool still running when the drain time is up is interrupted then
    // (StopState::stop), and its worker killed STOP_GRACE later if it has
    // not stopped; its answer gets ANSWER_GRACE more to be written. The
    // serving thread waits for this (`finish`) only after every answer was
    // handed over: a shorter wait here would let it close a connection
    // whose answer is on its way (a killed worker's call lost its answer).
    let cap = opts.drain_timeout + crate::workers::STOP_GRACE + ANSWER_GRACE;
    let _ = tokio::time::timeout(cap, all_ended.recv()).await;
    let _ = drained.send(());
}

/// Why `addr` cannot be bound, in words a person starting a server acts on
/// (RULES S10): the address and the cause, not only the system's message.
fn cannot_listen(addr: SocketAddr, e: &std::io::Error) -> HttpError {
    let why = match e.kind() {
        std::io::ErrorKind::AddrInUse => {
            "the port is in use (another server listens there; choose another port or stop that server)".to_string()
        }
        std::io::ErrorKind::AddrNotAvailable => {
            "the address is not one of this machine's (use 127.0.0.1, 0.0.0.0 or an address of one of its \
             network interfaces)"
                .to_string()
        }
        std::io::ErrorKind::PermissionDenied => {
            "permission denied (ports below 1024 need privileges; use a higher port behind a proxy)".to_string()
        }
        _ => e.to_string(),
    };
    HttpError::Config(format!("cannot listen on {addr}: {why}"))
}

/// How long a connection that is open but has sent no request yet when the
/// server stops may take to send one (RULES H4.2). A proxy connects, then
/// sends its request at once.
const FIRST_REQUEST_GRACE: Duration = Duration::from_secs(1);

/// Serve `conn` until it ends; once the server stops, finish the request in
/// progress and close. hyper's own graceful shutdown would close a
/// connection that has not sent anything yet, unanswered, even when its
/// request is on the way: such a connection first gets
/// [`FIRST_REQUEST_GRACE`] to send it (`requested` is notified by every
/// request). A connection idle after a request closes at once.
async fn serve_until_stopped<I, S, B>(
    conn: hyper::server::conn::http1::Connection<I, S>,
    requested: Arc<tokio::sync::Notify>,
    mut stop: tokio::sync::watch::Receiver<bool>,
) where
    S: hyper::service::HttpService<HyperBody, ResBody = B>,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    I: hyper::rt::Read + hyper::rt::Write + Unpin,
    B: hyper::body::Body + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let mut conn = std::pin::pin!(conn);
    tokio::select! {
        _ = conn.as_mut() => return,
        _ = stop.wait_for(|stopped| *stopped) => {}
    }
    tokio::select! {
        _ = conn.as_mut() => return,
        () = requested.notified() => {}
        () = tokio::time::sleep(FIRST_REQUEST_GRACE) => {}
    }
    conn.as_mut().graceful_shutdown();
    let _ = conn.await;
}
