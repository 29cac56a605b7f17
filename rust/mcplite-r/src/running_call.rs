//! Calls that take time, on R's side (RULES C2, C4): the [`Inflight`] of
//! the running server, which `mcp_progress()` reports to, and the
//! interrupter that cancels a running tool.
//!
//! A cancellation arrives on a transport thread. It interrupts R the way
//! SIGINT does: on Unix the signal is sent to R's main thread
//! (`pthread_kill`), where R's own handler sets R's interrupt flag; on
//! Windows `raise(SIGINT)` runs the C runtime's handler (R's) on the
//! calling thread, as a console Ctrl-C does. The tool's `on.exit` handlers
//! and `tryCatch(interrupt = )` run as for a user's Ctrl-C.
//!
//! The signal can land after the tool has already returned (the client
//! cancelled at the last moment). [`swallow_stale_interrupt`] consumes
//! such a leftover before the next tool runs, so it never interrupts a
//! call nobody cancelled.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use std::ffi::c_int;

use mcplite_engine::progress::{Inflight, Interrupter, ProgressPolicy, ReportError};
use mcplite_engine::signals::SigintWatch;

use crate::error::{Error, Kind};
use crate::rapi::eval::take_interrupt;
use crate::rapi::*;

/// The running server's calls (`None` when not serving, or serving
/// in-process through `mcp_handler()`).
static SERVING: Mutex<Option<Arc<Inflight>>> = Mutex::new(None);

/// An interrupt was sent for a cancellation and may not have been
/// consumed yet.
static SENT: AtomicBool = AtomicBool::new(false);

pub(crate) fn serving() -> Option<Arc<Inflight>> {
    SERVING.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// The progress of the tool call running now, when its client listens
/// (live sessions, Unix only, use it).
#[cfg(unix)]
pub(crate) fn current_progress() -> Option<Arc<mcplite_engine::progress::Progress>> {
    serving().and_then(|i| i.progress())
}

/// While alive, `inflight` is the running server's: `mcp_progress()`
/// reports to it. Dropped, it gives back the one it replaced (an
/// in-memory server called from a tool of a running server, RULES K9).
/// While serving, SIGINT is also watched by the engine (RULES S7), so that
/// an interrupt R's own check loses still reaches the server.
pub struct Installed(Option<Arc<Inflight>>, #[allow(dead_code)] SigintWatch);

impl Drop for Installed {
    fn drop(&mut self) {
        *SERVING.lock().unwrap_or_else(|e| e.into_inner()) = self.0.take();
    }
}

/// Make `inflight` the running server's until the returned guard drops.
pub fn install(inflight: Arc<Inflight>) -> Installed {
    Installed(SERVING.lock().unwrap_or_else(|e| e.into_inner()).replace(inflight), SigintWatch::arm())
}

/// The calls of a server that runs its tools on this thread (R's main
/// thread), with heartbeats every `interval`.
pub fn new_inflight(interval: Duration) -> Arc<Inflight> {
    Arc::new(Inflight::new(ProgressPolicy::with_interval(interval), Some(interrupter())))
}

/// Interrupt R's main thread (the caller's thread now) from any thread.
#[cfg(unix)]
pub(crate) fn interrupter() -> Interrupter {
    // SAFETY: pthread_self has no preconditions.
    let main = unsafe { libc::pthread_self() };
    Arc::new(move || {
        SENT.store(true, Ordering::SeqCst);
        // SAFETY: `main` is R's main thread, alive while serving (the
        // inflight is dropped before serving returns).
        unsafe {
            libc::pthread_kill(main, libc::SIGINT);
        }
    })
}

#[cfg(windows)]
pub(crate) fn interrupter() -> Interrupter {
    Arc::new(|| {
        SENT.store(true, Ordering::SeqCst);
        // SAFETY: runs the C runtime's SIGINT handler (R's), which only sets
        // R's interrupt flags, on this thread, as a console Ctrl-C does.
        unsafe {
            libc::raise(libc::SIGINT);
        }
    })
}

/// Has the engine interrupted the running tool (a cancellation, the end of
/// a stopping server's drain time) without the interrupt being consumed
/// yet? A question waiting for the client stops then (RULES A1.3).
pub fn interrupt_sent() -> bool {
    SENT.load(Ordering::SeqCst)
}

/// Before a tool runs: consume an interrupt left over from a cancellation
/// that came too late to stop its own call. Main thread only.
pub fn swallow_stale_interrupt() {
    if SENT.swap(false, Ordering::SeqCst) {
        take_interrupt();
    }
}

/// The user interrupted a tool (SIGINT, Ctrl+C), as opposed to the engine
/// (a cancellation, the end of a stopping server's drain time).
static USER_INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// A tool call was interrupted and the interrupt consumed: nothing is left
/// over from a cancellation. When the engine sent no interrupt, it was the
/// user's, which [`take_user_interrupt`] then reports.
pub fn interrupt_consumed() {
    if !SENT.swap(false, Ordering::SeqCst) {
        USER_INTERRUPTED.store(true, Ordering::SeqCst);
    }
}

/// Did the user interrupt a tool since the last call? (Over HTTP that
/// interrupt also stops the server, RULES H4.2; on stdio it never does.)
pub fn take_user_interrupt() -> bool {
    USER_INTERRUPTED.swap(false, Ordering::SeqCst)
}

/// A progress report for the tool call that is running, as `mcp_progress()`
/// makes (and a proxied remote tool's progress, forwarded): `Ok(false)`
/// when nobody listens (not serving, or the call has no progress token),
/// `Ok(true)` when it is sent (possibly coalesced with later reports).
pub fn report_running(progress: f64, total: Option<f64>, message: Option<&str>) -> Result<bool, ReportError> {
    match serving() {
        Some(inflight) => inflight.report(progress, total, message),
        None => Ok(false),
    }
}

/// A single finite number (a double, or an integer that is not NA nor a
/// factor), as `mcp_progress()` takes.
///
/// # Safety
/// The SEXP contract holds for `x`.
unsafe fn finite_scalar(x: SEXP) -> Option<f64> {
    // SAFETY: caller's contract; the element read is inside the vector.
    unsafe {
        if xlen(x) != 1 {
            return None;
        }
        match ty(x) {
            SEXPTYPE::REALSXP => Some(*REAL(x)).filter(|v| v.is_finite()),
            SEXPTYPE::INTSXP if !inherits(x, c"factor") => {
                let v = *INTEGER(x);
                (v != i32::MIN).then_some(f64::from(v))
            }
            _ => None,
        }
    }
}

/// What a report came to: sent (or not, nobody listens), an argument the
/// check refused (1, 2, 3: `progress`, `total`, `message`), or an error of
/// the engine's.
enum Outcome {
    Sent(bool),
    Refused(i32),
    Failed(Error),
}

/// Check the arguments of `mcp_progress()` and report to the running call.
///
/// # Safety
/// The SEXP contract holds for the three arguments.
unsafe fn report(progress: SEXP, total: SEXP, message: SEXP) -> Outcome {
    // SAFETY: caller's contract.
    let Some(value) = (unsafe { finite_scalar(progress) }) else { return Outcome::Refused(1) };
    // SAFETY: caller's contract.
    let total = if unsafe { is_nil(total) } {
        None
    } else {
        // SAFETY: caller's contract.
        match unsafe { finite_scalar(total) } {
            Some(t) => Some(t),
            None => return Outcome::Refused(2),
        }
    };
    // SAFETY: caller's contract; a length-1 character vector's element is a
    // CHARSXP.
    let text = unsafe {
        if is_nil(message) {
            None
        } else if ty(message) == SEXPTYPE::STRSXP && xlen(message) == 1 && STRING_ELT(message, 0) != R_NaString {
            match strings::text(STRING_ELT(message, 0)) {
                Ok(t) => Some(t),
                Err(e) => return Outcome::Failed(e),
            }
        } else {
            return Outcome::Refused(3);
        }
    };
    match report_running(value, total, text.as_deref()) {
        Ok(listening) => Outcome::Sent(listening),
        Err(ReportError::NotFinite) => {
            Outcome::Failed(Error::new(Kind::Progress, "`progress` and `total` must be finite numbers.".to_string()))
        }
        Err(ReportError::NotIncreasing { previous }) => Outcome::Failed(Error::new(
            Kind::Progress,
            format!("`progress` must increase: {value} is not above the previous value, {previous}."),
        )),
    }
}

/// The body of `mcp_progress()`, called as `.External(mcplite_progress,
/// progress, total, message)` (registered in `src/entrypoint.c`). A raw
/// entry rather than an `#[extendr]` function: a tool may call it in a
/// tight loop, and the generated wrapper's protection of each argument
/// cost about twice the work of the report itself (bench/README.md).
/// `TRUE` when the running call has a progress token (the report will be
/// sent, possibly coalesced with later ones), `FALSE` when there is nobody
/// to tell; an argument the check refuses gives the integer 1, 2 or 3 and R
/// writes the error; a report the engine refuses is an error marker.
///
/// # Safety
/// Called by R's `.External` on R's main thread with the call's argument
/// list.
#[no_mangle]
pub unsafe extern "C" fn mcplite_progress(args: SEXP) -> SEXP {
    // SAFETY: `.External` passes (name, progress, total, message) as a
    // pairlist it keeps protected; the results are returned to R at once
    // (no allocation in between).
    unsafe {
        let a = CDR(args);
        let (progress, total, message) = (CAR(a), CAR(CDR(a)), CAR(CDR(CDR(a))));
        let outcome = std::panic::catch_unwind(|| report(progress, total, message))
            .unwrap_or_else(|_| Outcome::Failed(Error::new(Kind::Internal, "mcp_progress() failed.".to_string())));
        match outcome {
            Outcome::Sent(b) => Rf_ScalarLogical(b as c_int),
            Outcome::Refused(i) => Rf_ScalarInteger(i),
            Outcome::Failed(e) => extendr_api::GetSexp::get(&e.into_r()),
        }
    }
}

/// Would a report of the running tool call be sent: is a server running
/// one that came with a progress token? (A proxied tool asks its remote
/// server for progress only then, RULES K8.2.)
pub fn listening() -> bool {
    serving().is_some_and(|i| i.progress().is_some_and(|p| p.token().is_some()))
}
