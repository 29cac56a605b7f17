//! Live R sessions (RULES R10), R's side of both ends. The sockets, the
//! queue and the waiting are the engine's (`mcplite_engine::live`); this
//! module adds what needs R.
//!
//! * The session (`mcp_session()`, `R/live-session.R`): [`live_open`] binds
//!   the listener and registers an input handler on its wake pipe with R's
//!   event loop (`addInputHandler`, `R_ext/eventloop.h`). R runs input
//!   handlers only while it waits for input: at the prompt, and inside
//!   functions that wait (`Sys.sleep()`, `readline()`, the browser). The
//!   handler runs calls only when no R function is active (`sys.nframe()`
//!   is 0), that is when R is idle at the top-level prompt; otherwise the
//!   calls wait in the queue and the server is told the session is busy.
//!   Each call is R's `live_run()` (the runner given to [`live_open`])
//!   evaluated under `R_ToplevelExec`, so nothing it does can unwind into
//!   R's event loop. One live session per process: its state is a
//!   thread-local of R's main thread.
//! * The server (`session_tools = TRUE`): [`live_list`], [`live_connect`],
//!   [`live_call`] over the engine's `live::connect`, waiting in slices so a
//!   pending interrupt (a cancelled tool call) ends the wait.
//!
//! Windows has no Unix-domain sockets in R's event loop: every entry point
//! there returns an error of kind `Session`, which `mcp_session()` reports
//! as "not provided".

use extendr_api::prelude::*;

use crate::error::{Error, Kind};

fn session_error(message: impl Into<String>) -> Robj {
    Error::new(Kind::Session, message).into_r()
}

#[cfg(not(unix))]
const NOT_PROVIDED: &str =
    "Live R sessions need Unix-domain sockets and R's Unix event loop; they are not provided on Windows.";

/// The directories where this user's live sessions may be (RULES R10.2),
/// those that exist, each verified; one that is not private is an error.
/// @noRd
#[extendr]
fn live_dirs() -> Robj {
    #[cfg(unix)]
    {
        match mcplite_engine::live::dir::existing() {
            Ok(v) => Robj::from(v.iter().map(|p| p.to_string_lossy().into_owned()).collect::<Vec<String>>()),
            Err(e) => session_error(e.to_string()),
        }
    }
    #[cfg(not(unix))]
    {
        Robj::from(Vec::<String>::new())
    }
}

/// Open this process's live session as `id`; `info` is a JSON object (what
/// `list_r_sessions` shows that does not change), `wd` the working
/// directory, `runner` R's `live_run(header, body)`. Returns the socket's
/// path. An open session is closed first.
/// @noRd
#[extendr]
fn live_open(id: &str, info: &str, wd: &str, runner: Robj) -> Robj {
    #[cfg(unix)]
    {
        match imp::open(id, info, wd, runner) {
            Ok(path) => Robj::from(path.as_str()),
            Err(e) => e.into_r(),
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (id, info, wd, runner);
        session_error(NOT_PROVIDED)
    }
}

/// Close this process's live session; FALSE when none was open (or when
/// called from a call the session is running).
/// @noRd
#[extendr]
fn live_close() -> bool {
    #[cfg(unix)]
    {
        imp::close()
    }
    #[cfg(not(unix))]
    {
        false
    }
}

/// The socket of the open session, or NULL.
/// @noRd
#[extendr]
fn live_socket() -> Robj {
    #[cfg(unix)]
    {
        imp::socket().map_or(Robj::from(()), |p| Robj::from(p.as_str()))
    }
    #[cfg(not(unix))]
    {
        Robj::from(())
    }
}

/// The user's command ended (R's task callback) in `wd`.
/// @noRd
#[extendr]
fn live_touch(wd: &str) {
    #[cfg(unix)]
    imp::touch(wd);
    #[cfg(not(unix))]
    let _ = wd;
}

/// The sessions in the directory, as JSON: an array of infos, and of
/// `{"id":..,"error":..}` for sessions that could not be asked.
/// @noRd
#[extendr]
fn live_list(dir: &str, timeout: f64) -> Robj {
    #[cfg(unix)]
    {
        use mcplite_engine::live::connect::list;
        let all = list(std::path::Path::new(dir), secs(timeout));
        let out: Vec<serde_json::Value> = all
            .into_iter()
            .map(|r| match r {
                Ok(info) => info,
                Err((id, message)) => serde_json::json!({"id": id, "error": message}),
            })
            .collect();
        Robj::from(serde_json::Value::Array(out).to_string().as_str())
    }
    #[cfg(not(unix))]
    {
        let _ = (dir, timeout);
        Robj::from("[]")
    }
}

#[cfg(unix)]
fn secs(s: f64) -> std::time::Duration {
    std::time::Duration::from_secs_f64(if s.is_finite() && s > 0.0 { s.min(1e6) } else { 0.0 })
}

/// A connection to a session (an external pointer; dropped, it hangs up).
pub struct LiveConn {
    #[cfg(unix)]
    session: Option<mcplite_engine::live::connect::Session>,
}

impl Drop for LiveConn {
    /// Runs in R's finalizer (see `finalize.rs`): a panic is caught.
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(session) = self.session.take() {
            crate::finalize::drop_guarded("a live-session connection", session);
        }
    }
}

/// Connect to session `id` in `dir`.
/// @noRd
#[extendr]
fn live_connect(dir: &str, id: &str, timeout: f64) -> Robj {
    #[cfg(unix)]
    {
        use mcplite_engine::live::connect::Session;
        match Session::connect(std::path::Path::new(dir), id, secs(timeout)) {
            Ok(s) => Robj::from(ExternalPtr::new(LiveConn { session: Some(s) })),
            Err(e) => session_error(e.message(id)),
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (dir, id, timeout);
        session_error(NOT_PROVIDED)
    }
}

/// Hang up.
/// @noRd
#[extendr]
fn live_disconnect(mut conn: ExternalPtr<LiveConn>) {
    #[cfg(unix)]
    {
        conn.session = None;
    }
    #[cfg(not(unix))]
    let _ = &mut conn;
}

/// The connected session's info as JSON.
/// @noRd
#[extendr]
fn live_info(mut conn: ExternalPtr<LiveConn>, timeout: f64) -> Robj {
    #[cfg(unix)]
    {
        let Some(s) = conn.session.as_mut() else { return session_error("the session was disconnected") };
        match s.info(secs(timeout)) {
            Ok(v) => Robj::from(v.to_string().as_str()),
            Err(m) => session_error(m),
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (&mut conn, timeout);
        session_error(NOT_PROVIDED)
    }
}

/// Run one call in the connected session: `fields` (JSON object) go into
/// its header, `body` (raw) is the call. Waits at most `wait` seconds for
/// the session to start it. Returns `list(status, header, body, started,
/// reason)` with status "done", "busy", "gone" or "interrupted".
/// @noRd
#[extendr]
fn live_call(mut conn: ExternalPtr<LiveConn>, fields: &str, body: Robj, wait: f64) -> Robj {
    #[cfg(unix)]
    {
        use mcplite_engine::live::connect::Outcome;
        let Some(s) = conn.session.as_mut() else { return session_error("the session was disconnected") };
        let fields = match serde_json::from_str::<serde_json::Value>(fields) {
            Ok(serde_json::Value::Object(m)) => m,
            _ => return Error::internal("live_call: `fields` is not a JSON object").into_r(),
        };
        let Some(bytes) = body.as_raw_slice() else {
            return Error::internal("live_call: `body` is not a raw vector").into_r();
        };
        let slice = std::time::Duration::from_millis(50);
        // RULES N3.2: heartbeats say the call waits for the session until it
        // starts there.
        let progress = crate::running_call::current_progress();
        if let Some(p) = &progress {
            p.set_waiting("the selected R session to be idle at its prompt");
        }
        let on_started = || {
            if let Some(p) = &progress {
                p.set_running(std::time::Instant::now());
            }
        };
        let out = s.call_watched(fields, bytes, secs(wait), slice, crate::rapi::eval::take_interrupt, on_started);
        let empty: &[u8] = &[];
        let (status, header, body, started, reason) = match &out {
            Outcome::Done(f) => ("done", f.header.to_string(), f.body.as_slice(), true, String::new()),
            Outcome::Busy => ("busy", "{}".into(), empty, false, String::new()),
            Outcome::Gone { started, reason } => ("gone", "{}".into(), empty, *started, reason.clone()),
            Outcome::Interrupted { started } => ("interrupted", "{}".into(), empty, *started, String::new()),
        };
        list!(status = status, header = header, body = Raw::from_bytes(body), started = started, reason = reason).into()
    }
    #[cfg(not(unix))]
    {
        let _ = (&mut conn, fields, body, wait);
        session_error(NOT_PROVIDED)
    }
}

#[cfg(unix)]
mod imp {
    use std::cell::{Cell, RefCell};
    use std::ffi::c_void;
    use std::os::fd::RawFd;

    use extendr_api::prelude::*;
    use mcplite_engine::live::{dir, listen::Job, listen::Listener};
    use serde_json::{Map, Value};

    use crate::error::{Error, Kind};
    use crate::rapi::eval::{toplevel, try_eval};
    use crate::rapi::eventloop::{addInputHandler, removeInputHandler, InputHandler, R_InputHandlers};
    use crate::rapi::strings::text;
    use crate::rapi::*;

    /// The `activity` tag of the input handler (any number; R only keeps it).
    const ACTIVITY: i32 = 31;

    struct Live {
        listener: Listener,
        handler: *mut InputHandler,
        /// R's `live_run()`, preserved while the session is open.
        runner: SEXP,
    }

    thread_local! {
        /// The open session. Borrowed by the input handler while it runs
        /// calls, so a handler run re-entered from inside a call (a tool
        /// that waits, e.g. `Sys.sleep()`) finds it borrowed and returns.
        static LIVE: RefCell<Option<Live>> = const { RefCell::new(None) };
        /// The wake pipe, drained by every handler run, re-entered or not
        /// (a readable pipe would make R's event loop call it again at once).
        static WAKE: Cell<RawFd> = const { Cell::new(-1) };
    }

    fn fail(m: impl Into<String>) -> Error {
        Error::new(Kind::Session, m)
    }

    pub fn open(id: &str, info: &str, wd: &str, runner: Robj) -> Result<String, Error> {
        close();
        let d = dir::open(true).map_err(|e| fail(e.to_string()))?;
        let info: Map<String, Value> = serde_json::from_str(info).map_err(|e| Error::internal(e.to_string()))?;
        let listener = Listener::bind(&d, id, info, wd.to_string())
            .map_err(|e| fail(format!("the session could not listen in {}: {e}", d.display())))?;
        // A cancelled call that runs is interrupted as SIGINT does (RULES
        // R10.6); an interrupt that lands after it ended is consumed in
        // on_input(), before R is back at the prompt.
        listener.set_interrupter(crate::running_call::interrupter());
        let path = listener.path().to_string_lossy().into_owned();
        let fd = listener.wake_fd();
        // SAFETY: R's main thread (a .Call entry point); the handler list is
        // R's global, changed only here and in close(). The runner is
        // preserved until close() releases it.
        let (handler, runner) = unsafe {
            let runner = runner.get();
            R_PreserveObject(runner);
            (addInputHandler(R_InputHandlers, fd, Some(on_input), ACTIVITY), runner)
        };
        WAKE.with(|w| w.set(fd));
        LIVE.with(|l| *l.borrow_mut() = Some(Live { listener, handler, runner }));
        Ok(path)
    }

    pub fn close() -> bool {
        LIVE.with(|l| {
            let Ok(mut b) = l.try_borrow_mut() else { return false };
            let Some(mut live) = b.take() else { return false };
            // SAFETY: main thread; the handler was added by open() and is
            // removed before its descriptor is closed (listener.close()).
            unsafe {
                removeInputHandler(std::ptr::addr_of_mut!(R_InputHandlers), live.handler);
                R_ReleaseObject(live.runner);
            }
            WAKE.with(|w| w.set(-1));
            live.listener.close();
            true
        })
    }

    pub fn socket() -> Option<String> {
        LIVE.with(|l| {
            l.try_borrow().ok().and_then(|b| b.as_ref().map(|x| x.listener.path().to_string_lossy().into_owned()))
        })
    }

    pub fn touch(wd: &str) {
        LIVE.with(|l| {
            if let Ok(b) = l.try_borrow() {
                if let Some(live) = b.as_ref() {
                    live.listener.touch(wd.to_string());
                }
            }
        });
    }

    fn drain(fd: RawFd) {
        if fd < 0 {
            return;
        }
        let mut buf = [0u8; 256];
        // SAFETY: a valid non-blocking descriptor and buffer.
        while unsafe { libc::read(fd, buf.as_mut_ptr() as *mut c_void, buf.len()) } > 0 {}
    }

    /// Is R idle at the top-level prompt (no R function active)?
    ///
    /// # Safety
    /// R's main thread, under `toplevel()`.
    unsafe fn at_top_level() -> bool {
        // SAFETY: caller's contract. Evaluated in the base environment so a
        // user's own `sys.nframe` cannot answer.
        unsafe {
            let mut prot = Protect::new();
            let call = prot.add(Rf_lang1(sym("sys.nframe")));
            match try_eval(call, R_BaseEnv) {
                Ok(v) => Rf_asInteger(v) == 0,
                Err(_) => false,
            }
        }
    }

    /// R's event loop calls this when the wake pipe is readable.
    unsafe extern "C" fn on_input(_data: *mut c_void) {
        WAKE.with(|w| drain(w.get()));
        // A panic must not cross R's C frames.
        let _ = std::panic::catch_unwind(|| {
            LIVE.with(|l| {
                let Ok(b) = l.try_borrow_mut() else { return };
                let Some(live) = b.as_ref() else { return };
                let mut idle = false;
                // SAFETY: main thread; R errors stay inside toplevel().
                toplevel(|| idle = unsafe { at_top_level() });
                if !idle {
                    // Woken again shortly while calls wait (RULES R10.4).
                    live.listener.retry_later();
                    return;
                }
                live.listener.confirm_idle();
                while let Some(job) = live.listener.next_job() {
                    let (header, body) = run(live.runner, &job);
                    let _ = live.listener.finish(job, header, &body);
                    // Never into the user's own code.
                    crate::running_call::swallow_stale_interrupt();
                }
            })
        });
    }

    /// One call through R's `live_run(header, body)`, which returns
    /// `list(header = <JSON text>, body = <raw>)` and never fails; anything
    /// else (a bug) is reported to the server as an error.
    fn run(runner: SEXP, job: &Job) -> (Value, Vec<u8>) {
        let mut out: Option<(Value, Vec<u8>)> = None;
        let header_text = job.header.to_string();
        toplevel(|| {
            // SAFETY: main thread; every object is protected while used;
            // allocation errors end in toplevel().
            unsafe {
                let mut prot = Protect::new();
                let h = prot.add(mk_string(header_text.as_bytes()));
                let b = prot.add(Rf_allocVector(SEXPTYPE::RAWSXP, job.body.len() as R_xlen_t));
                if !job.body.is_empty() {
                    std::ptr::copy_nonoverlapping(job.body.as_ptr(), RAW(b), job.body.len());
                }
                let call = prot.add(Rf_lang3(runner, h, b));
                let v = match try_eval(call, R_GlobalEnv) {
                    Ok(v) => prot.add(v),
                    Err(m) => {
                        out = Some((serde_json::json!({"status": "failed", "message": m}), Vec::new()));
                        return;
                    }
                };
                if ty(v) != SEXPTYPE::VECSXP || xlen(v) != 2 {
                    return;
                }
                let (hv, bv) = (VECTOR_ELT(v, 0), VECTOR_ELT(v, 1));
                if ty(hv) != SEXPTYPE::STRSXP || xlen(hv) != 1 || ty(bv) != SEXPTYPE::RAWSXP {
                    return;
                }
                let header = text(STRING_ELT(hv, 0)).ok().and_then(|t| serde_json::from_str(&t).ok());
                let body = std::slice::from_raw_parts(RAW(bv), xlen(bv)).to_vec();
                if let Some(header) = header {
                    out = Some((header, body));
                }
            }
        });
        out.unwrap_or_else(|| {
            (serde_json::json!({"status": "failed", "message": "the session could not run the call (a bug in mcplite)"}), Vec::new())
        })
    }
}

extendr_module! {
    mod live;
    fn live_dirs;
    fn live_open;
    fn live_close;
    fn live_socket;
    fn live_touch;
    fn live_list;
    fn live_connect;
    fn live_disconnect;
    fn live_info;
    fn live_call;
}
