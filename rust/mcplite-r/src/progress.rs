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

use extendr_api::prelude::*;
use mcplite_engine::progress::{Inflight, Interrupter, ProgressPolicy, ReportError};

use crate::error::{to_r, Error, Kind};
use crate::rapi::eval::take_interrupt;

/// The running server's calls (`None` when not serving, or serving
/// in-process through `mcp_session()`).
static SERVING: Mutex<Option<Arc<Inflight>>> = Mutex::new(None);

/// An interrupt was sent for a cancellation and may not have been
/// consumed yet.
static SENT: AtomicBool = AtomicBool::new(false);

fn serving() -> Option<Arc<Inflight>> {
    SERVING.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// While alive, `inflight` is the running server's: `mcp_progress()`
/// reports to it.
pub struct Installed(());

impl Drop for Installed {
    fn drop(&mut self) {
        *SERVING.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
}

/// Make `inflight` the running server's until the returned guard drops.
pub fn install(inflight: Arc<Inflight>) -> Installed {
    *SERVING.lock().unwrap_or_else(|e| e.into_inner()) = Some(inflight);
    Installed(())
}

/// The calls of a server that runs its tools on this thread (R's main
/// thread), with heartbeats every `interval`.
pub fn new_inflight(interval: Duration) -> Arc<Inflight> {
    Arc::new(Inflight::new(ProgressPolicy::with_interval(interval), Some(interrupter())))
}

/// Interrupt R's main thread (the caller's thread now) from any thread.
#[cfg(unix)]
fn interrupter() -> Interrupter {
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
fn interrupter() -> Interrupter {
    Arc::new(|| {
        SENT.store(true, Ordering::SeqCst);
        // SAFETY: runs the C runtime's SIGINT handler (R's), which only sets
        // R's interrupt flags, on this thread, as a console Ctrl-C does.
        unsafe {
            libc::raise(libc::SIGINT);
        }
    })
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

/// A single finite number (a double, or an integer that is not NA nor a
/// factor), as `mcp_progress()` takes.
fn finite_scalar(x: &Robj) -> Option<f64> {
    if x.len() != 1 {
        return None;
    }
    match x.rtype() {
        Rtype::Doubles => x.as_real().filter(|v| v.is_finite()),
        Rtype::Integers if !x.inherits("factor") => x.as_integer().map(f64::from),
        _ => None,
    }
}

/// Report a tool's progress to the client (the body of `mcp_progress()`).
/// `TRUE` when the running call has a progress token (the report will be
/// sent, possibly coalesced with later ones), `FALSE` when there is nobody
/// to tell. An argument this check refuses gives the integer 1, 2 or 3
/// (`progress`, `total`, `message`), and R writes the error; a report the
/// engine refuses is an error marker.
/// @noRd
#[extendr]
fn engine_progress(progress: Robj, total: Robj, message: Robj) -> Robj {
    let Some(value) = finite_scalar(&progress) else { return 1i32.into() };
    let total = if total.is_null() {
        None
    } else {
        match finite_scalar(&total) {
            Some(t) => Some(t),
            None => return 2i32.into(),
        }
    };
    let message = if message.is_null() {
        None
    } else if message.rtype() == Rtype::Strings && message.len() == 1 && !message.is_na() {
        message.as_str()
    } else {
        return 3i32.into();
    };
    let Some(inflight) = serving() else { return false.into() };
    let Some(p) = inflight.progress() else { return false.into() };
    let res = match p.report(value, total, message) {
        Ok(wake) => {
            // Only the first report waiting since the last notification
            // wakes the ticker: a tight loop of reports costs no wake-ups.
            if wake {
                inflight.notify();
            }
            Ok(true)
        }
        Err(ReportError::NotFinite) => {
            Err(Error::new(Kind::Progress, "`progress` and `total` must be finite numbers.".to_string()))
        }
        Err(ReportError::NotIncreasing { previous }) => Err(Error::new(
            Kind::Progress,
            format!("`progress` must increase: {value} is not above the previous value, {previous}."),
        )),
    };
    to_r(res)
}

extendr_module! {
    mod progress;
    fn engine_progress;
}
