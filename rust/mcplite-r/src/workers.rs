//! Worker processes on R's side (RULES section 14): starting the pool R
//! asked for (the command line R worked out in `worker_options()`,
//! R/workers.R), and the worker mode of `mcp_server()`, in which the script
//! re-run by a worker serves the engine's calls over its pipes instead of
//! starting a transport. The calls themselves run through the same
//! `RHost::call_tool` as in a server without workers.

use std::ffi::OsString;
use std::sync::atomic::Ordering;
use std::time::Duration;

use extendr_api::prelude::*;
use mcplite_engine::workers::{serve_worker, take_worker_fds, Pool, PoolOptions, WorkerCommand, WorkerOptions};
use mcplite_engine::{Host, Server};

use crate::error::{self, to_r, Error, Kind};
use crate::{make_host, running_call, SERVING};

/// The pool described by `opts`, a list made by R's `worker_options()`
/// (`NULL`: no workers), started for the tools of `server`. Returns once
/// every worker is ready; a worker that cannot start fails it.
pub fn start_pool(opts: &Robj, server: &Server) -> error::Result<Option<Pool>> {
    if opts.is_null() {
        return Ok(None);
    }
    let l = List::try_from(opts).map_err(|_| Error::internal("the worker options are not a list"))?;
    let m: std::collections::HashMap<&str, Robj> = l.iter().collect();
    let bad = |k: &str| Error::internal(format!("worker option `{k}` is missing or malformed"));
    let num = |k: &str| m.get(k).and_then(|r| r.as_real()).ok_or_else(|| bad(k));
    let string = |k: &str| m.get(k).and_then(|r| r.as_str()).map(String::from).ok_or_else(|| bad(k));
    let args = match m.get("args") {
        Some(r) if r.len() == 0 => Vec::new(),
        Some(r) => r.as_str_vector().ok_or_else(|| bad("args"))?.into_iter().map(OsString::from).collect(),
        None => return Err(bad("args")),
    };
    // `env`: a named character vector of variables to set for the worker.
    let env = match m.get("env") {
        Some(r) if r.len() == 0 => Vec::new(),
        Some(r) => {
            let names = r.names().ok_or_else(|| bad("env"))?;
            let values = r.as_str_vector().ok_or_else(|| bad("env"))?;
            names.zip(values).map(|(k, v)| (OsString::from(k), OsString::from(v))).collect()
        }
        None => Vec::new(),
    };
    let command = WorkerCommand {
        program: string("program")?.into(),
        args,
        cwd: Some(string("cwd")?.into()),
        env,
        // RULES N6.4: beneath the server's own temporary directory.
        tmp_root: m.get("tmp_root").and_then(|r| r.as_str()).map(std::path::PathBuf::from),
    };
    // RULES N7.6: tools the server runs itself (a live-session server's
    // session tools); the workers serve the others.
    let host_tools: Vec<String> = match m.get("host_tools") {
        Some(r) if r.len() > 0 => {
            r.as_str_vector().ok_or_else(|| bad("host_tools"))?.into_iter().map(String::from).collect()
        }
        _ => Vec::new(),
    };
    let tools = server.tools().iter().map(|t| t.name.clone()).collect();
    let mut o = PoolOptions::new(num("workers")? as usize, command, tools);
    o.host_tools = host_tools;
    o.max_queue = num("max_queue")? as usize;
    o.start_timeout = Duration::from_secs_f64(num("start_timeout")?);
    // RULES N5.3: R checked it (a number of bytes, or Inf for no limit).
    if let Some(v) = m.get("max_growth").and_then(|r| r.as_real()) {
        o.max_growth = v.is_finite().then_some(v as u64);
    }
    // RULES N7.5: seconds of CPU time per call (confined workers), or absent.
    if let Some(v) = m.get("call_cpu").and_then(|r| r.as_real()).filter(|v| v.is_finite() && *v > 0.0) {
        o.call_cpu = Duration::try_from_secs_f64(v).ok();
    }
    // RULES N7.7: seconds of wall time per call, or absent.
    if let Some(v) = m.get("call_timeout").and_then(|r| r.as_real()).filter(|v| v.is_finite() && *v > 0.0) {
        o.call_timeout = Duration::try_from_secs_f64(v).ok();
    }
    Pool::start(o).map(Some).map_err(|e| Error::new(Kind::Workers, format!("{e}.")))
}

/// SIGTERM is ignored by a worker (a handler that does nothing, so that
/// processes the tools start still get the default): the server decides
/// when its workers end, and closes their pipes after its drain time.
#[cfg(unix)]
struct IgnoreTerm(libc::sighandler_t);

#[cfg(unix)]
extern "C" fn ignore(_: libc::c_int) {}

#[cfg(unix)]
impl IgnoreTerm {
    fn install() -> IgnoreTerm {
        let h = ignore as extern "C" fn(libc::c_int) as libc::sighandler_t;
        // SAFETY: installs an async-signal-safe handler that does nothing.
        IgnoreTerm(unsafe { libc::signal(libc::SIGTERM, h) })
    }
}

#[cfg(unix)]
impl Drop for IgnoreTerm {
    fn drop(&mut self) {
        // SAFETY: restores the disposition saved by install().
        unsafe {
            libc::signal(libc::SIGTERM, self.0);
        }
    }
}

/// The worker mode of `mcp_server()`: serve the calls of the server that
/// started this process (through descriptors 3 and 4) until it closes the
/// pipe. Returns why it ended.
/// @noRd
#[extendr]
fn engine_worker(spec: Robj, progress_interval: f64) -> Robj {
    if SERVING.swap(true, Ordering::SeqCst) {
        return Error::new(Kind::ServerRunning, error::SERVER_RUNNING).into_r();
    }
    let res = (|| -> error::Result<String> {
        let (input, output) = take_worker_fds().map_err(|e| {
            Error::new(
                Kind::Workers,
                format!(
                    "`MCPLITE_WORKER` is set, but this R process was not started by an mcplite server as a worker \
                     (its pipes are missing: {e}). Unset the variable."
                ),
            )
        })?;
        let mut host = make_host(&spec)?;
        let tools = host.tools().into_iter().map(|t| t.name).collect();
        let inflight = running_call::new_inflight(Duration::from_secs_f64(progress_interval));
        let _installed = running_call::install(inflight.clone());
        #[cfg(unix)]
        let _term = IgnoreTerm::install();
        let end = serve_worker(&mut host, input, output, tools, &inflight, WorkerOptions::default());
        Ok(format!("{end:?}").to_lowercase())
    })();
    SERVING.store(false, Ordering::SeqCst);
    to_r(res)
}

/// Confine this worker process by the kernel for good (RULES N7): read
/// under `read`, read and write under `write` (character vectors of
/// paths), at most `memory` bytes of address space and files of at most
/// `file_size` bytes (numbers; `NULL` or `Inf`: no limit), no programs, no
/// network, no signals outside. Returns what was enforced, as a named
/// list, or the error of why it could not be.
/// @noRd
#[extendr]
fn engine_confine(read: Robj, write: Robj, memory: Robj, file_size: Robj) -> Robj {
    use mcplite_engine::confine::{confine, Policy};
    let paths = |r: &Robj| -> Vec<std::path::PathBuf> {
        r.as_str_vector().unwrap_or_default().into_iter().map(std::path::PathBuf::from).collect()
    };
    // R checked the numbers (confine_limits() in R/confine.R).
    let bytes = |r: &Robj| -> Option<u64> { r.as_real().filter(|v| v.is_finite() && *v >= 1.0).map(|v| v as u64) };
    let policy =
        Policy { read: paths(&read), write: paths(&write), memory: bytes(&memory), file_size: bytes(&file_size) };
    match confine(&policy) {
        Ok(e) => list!(
            landlock_abi = e.landlock_abi,
            files = e.files,
            tcp = e.tcp,
            scoped = e.scoped,
            seccomp = e.seccomp,
            limits = e.limits
        )
        .into(),
        Err(m) => Error::new(Kind::Workers, format!("This worker cannot be confined: {m}.")).into_r(),
    }
}

/// `NULL` when this process could be confined by the kernel (RULES N7),
/// else why not (a string). Changes nothing.
/// @noRd
#[extendr]
fn engine_confine_available() -> Robj {
    match mcplite_engine::confine::available() {
        Ok(()) => ().into(),
        Err(m) => m.into(),
    }
}

extendr_module! {
    mod workers;
    fn engine_worker;
    fn engine_confine;
    fn engine_confine_available;
}
