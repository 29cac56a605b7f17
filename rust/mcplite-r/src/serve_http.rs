//! Serving over Streamable HTTP from R: the options R passes (typed, with
//! the engine's defaults), SIGTERM handling, and the serve loop on R's main
//! thread (tool calls run here, one at a time; everything else is answered
//! by the engine's HTTP threads).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use extendr_api::{Operators as _, TryFromList};
use std::net::IpAddr;
use std::path::PathBuf;

use mcplite_engine::transport::http::{HttpError, HttpOptions, HttpServer, LogFormat};
use mcplite_engine::workers::Pool;
use mcplite_engine::{Host, Server};

use crate::error::{Error, Kind};
use crate::running_call;

static TERM: AtomicBool = AtomicBool::new(false);
/// SIGHUP: read the tokens file again (RULES H6.1).
static HUP: AtomicBool = AtomicBool::new(false);

#[cfg(unix)]
extern "C" fn on_term(_: libc::c_int) {
    TERM.store(true, Ordering::SeqCst);
}

#[cfg(unix)]
extern "C" fn on_hup(_: libc::c_int) {
    HUP.store(true, Ordering::SeqCst);
}

/// SIGTERM and SIGHUP set a flag (instead of killing R) while serving; the
/// previous dispositions come back on drop. Unix only: on Windows the
/// console's Ctrl-C and Ctrl-Break reach R as an interrupt.
#[cfg(unix)]
struct TermGuard {
    old: libc::sighandler_t,
    old_hup: libc::sighandler_t,
}

#[cfg(not(unix))]
struct TermGuard;

#[cfg(not(unix))]
impl TermGuard {
    fn install() -> TermGuard {
        TERM.store(false, Ordering::SeqCst);
        TermGuard
    }
}

#[cfg(unix)]
impl TermGuard {
    fn install() -> TermGuard {
        TERM.store(false, Ordering::SeqCst);
        HUP.store(false, Ordering::SeqCst);
        let handler = on_term as extern "C" fn(libc::c_int) as libc::sighandler_t;
        let hup = on_hup as extern "C" fn(libc::c_int) as libc::sighandler_t;
        // SAFETY: installs async-signal-safe handlers (one atomic store).
        let (old, old_hup) = unsafe { (libc::signal(libc::SIGTERM, handler), libc::signal(libc::SIGHUP, hup)) };
        TermGuard { old, old_hup }
    }
}

#[cfg(unix)]
impl Drop for TermGuard {
    fn drop(&mut self) {
        // SAFETY: restores the disposition saved by install().
        unsafe {
            libc::signal(libc::SIGTERM, self.old);
            libc::signal(libc::SIGHUP, self.old_hup);
        }
    }
}

/// The HTTP options as R's `http_options()` (R/server.R) hands them over,
/// checked there: an element is `NULL` when neither the argument nor its
/// environment variable was set, and the engine's default
/// ([`HttpOptions::default`], the one place for them) applies.
#[derive(TryFromList)]
pub struct HttpArgs {
    host: Option<String>,
    port: Option<u16>,
    path: Option<String>,
    token: Option<String>,
    tokens_file: Option<String>,
    trusted_proxies: Option<Vec<String>>,
    /// "off", "text" or "json".
    access_log: Option<String>,
    allowed_origins: Option<Vec<String>>,
    allowed_hosts: Option<Vec<String>>,
    allow_public: Option<bool>,
    max_body: Option<usize>,
    max_sessions: Option<usize>,
    /// Seconds.
    session_idle: Option<f64>,
    replica: Option<String>,
    /// Seconds (RULES H8).
    stream_hold: Option<f64>,
}

impl HttpArgs {
    /// The engine's options: the defaults, with what R gave in their place.
    /// The proxies' addresses are checked here (R does not parse them).
    pub fn options(self) -> crate::error::Result<HttpOptions> {
        let d = HttpOptions::default();
        let trusted_proxies = match self.trusted_proxies {
            None => d.trusted_proxies,
            Some(v) => v
                .iter()
                .map(|a| {
                    a.trim().parse::<IpAddr>().map_err(|_| {
                        Error::new(
                            Kind::Http,
                            format!("`trusted_proxies` must hold IP addresses such as \"10.0.0.1\", not \"{a}\"."),
                        )
                    })
                })
                .collect::<crate::error::Result<Vec<_>>>()?,
        };
        let access_log = match self.access_log.as_deref() {
            None => d.access_log,
            Some("off") => LogFormat::Off,
            Some("json") => LogFormat::Json,
            Some(_) => LogFormat::Text,
        };
        Ok(HttpOptions {
            host: self.host.unwrap_or(d.host),
            port: self.port.unwrap_or(d.port),
            path: self.path.unwrap_or(d.path),
            token: self.token.or(d.token),
            tokens_file: self.tokens_file.map(PathBuf::from).or(d.tokens_file),
            trusted_proxies,
            access_log,
            allowed_origins: self.allowed_origins.unwrap_or(d.allowed_origins),
            allowed_hosts: self.allowed_hosts.unwrap_or(d.allowed_hosts),
            allow_public_without_token: self.allow_public.unwrap_or(d.allow_public_without_token),
            max_body: self.max_body.unwrap_or(d.max_body),
            max_sessions: self.max_sessions.unwrap_or(d.max_sessions),
            session_idle: self.session_idle.map_or(d.session_idle, Duration::from_secs_f64),
            replica: self.replica.or(d.replica),
            stream_hold: self.stream_hold.map(Duration::from_secs_f64).or(d.stream_hold),
            ..d
        })
    }
}

/// Bind, print the URL on stderr, serve until SIGINT or SIGTERM, drain.
/// Calls that ask for progress get heartbeats every `progress_interval`;
/// `mcp_progress()` reports to the running call, and a cancelled call's
/// tool is interrupted (RULES C6). With `pool`, tool calls run in its worker
/// processes (RULES section 14), and workers that keep failing to start
/// stop the server with an error saying why (RULES N6.3).
pub fn serve(
    server: Server,
    host: &mut dyn Host,
    opts: HttpOptions,
    progress_interval: Duration,
    pool: Option<Pool>,
) -> crate::error::Result<String> {
    let pool = pool.map(Arc::new);
    let server = Arc::new(server);
    let inflight = running_call::new_inflight(progress_interval);
    let _installed = running_call::install(inflight.clone());
    let http = HttpServer::bind_with_pool(server.clone(), opts, inflight, pool.clone()).map_err(http_error)?;
    let _term = TermGuard::install();
    running_call::take_user_interrupt();
    // SIGTERM is acted on by an engine thread, also while a tool runs.
    http.stop_when(|| TERM.load(Ordering::SeqCst));
    http.reload_tokens_when(|| HUP.swap(false, Ordering::SeqCst));
    // RULES H7.3: where, as which replica, with how many workers and tokens.
    eprintln!("{}", http.start_line());
    let mut why = "";
    let stopped = http.run(host, Duration::from_millis(100), &mut |h| {
        if TERM.load(Ordering::SeqCst) {
            why = "sigterm";
        } else if running_call::take_user_interrupt() || h.interrupt_pending() {
            // Ctrl+C interrupts the tool that runs (as in R) and stops the
            // server. (An interrupt left over from a cancellation is
            // consumed by interrupt_pending and is not a stop.)
            why = "interrupt";
        }
        !why.is_empty()
    });
    // The engine thread may have acted on SIGTERM before the poll above saw
    // it (RULES H4.2).
    if why.is_empty() && TERM.load(Ordering::SeqCst) {
        why = "sigterm";
    }
    let failed = pool.as_ref().and_then(|p| p.failure());
    // The workers end with the server (RULES N6.1): their pipes close, and
    // any still there after the grace time is killed.
    drop(pool);
    server.shutdown_recorder();
    if let Some(failed) = failed {
        // RULES N6.3: a failure, so that a supervisor restarts the server.
        eprintln!("mcplite: HTTP server stopped (worker processes keep failing to start): {}", stopped.summary());
        return Err(Error::new(Kind::Workers, format!("{failed}.")));
    }
    let reason = match why {
        "sigterm" => "SIGTERM",
        "interrupt" => "interrupt: SIGINT or Ctrl+C",
        _ => "its threads ended",
    };
    // RULES H7.3: what became of the calls in progress.
    eprintln!("mcplite: HTTP server stopped ({reason}): {}", stopped.summary());
    Ok(why.to_string())
}

/// Check the HTTP options without serving (RULES S10): called before the
/// workers start, so a bad configuration is said at once.
pub fn check(opts: &HttpOptions) -> crate::error::Result<()> {
    HttpServer::check(opts).map_err(http_error)
}

fn http_error(e: HttpError) -> Error {
    match e {
        HttpError::Config(m) => Error::new(Kind::Http, format!("{m}.")),
        HttpError::Io(e) => Error::new(Kind::Http, format!("cannot start: {e}.")),
    }
}
