//! While a tool runs, `TRACEPARENT`/`TRACESTATE` carry the server span's
//! context, and `BAGGAGE` the client's W3C baggage, to child processes (RULES
//! T9); previous values are restored.

use std::cell::RefCell;

use mcplite_engine::CallContext;

thread_local! {
    static CURRENT: RefCell<Option<CallContext>> = const { RefCell::new(None) };
}

#[cfg(not(windows))]
fn restore_var(name: &str, value: Option<&str>) {
    match value {
        Some(v) => std::env::set_var(name, v),
        None => std::env::remove_var(name),
    }
}

/// Windows: the C runtime keeps its own copy of the environment, which R's
/// `Sys.getenv()` reads; `SetEnvironmentVariableW` (what `std::env` uses)
/// does not update it. `_putenv_s` updates both that copy and the process
/// environment child processes get; an empty value removes the variable.
#[cfg(windows)]
fn restore_var(name: &str, value: Option<&str>) {
    extern "C" {
        fn _putenv_s(name: *const std::ffi::c_char, value: *const std::ffi::c_char) -> std::ffi::c_int;
    }
    let (Ok(n), Ok(v)) = (std::ffi::CString::new(name), std::ffi::CString::new(value.unwrap_or(""))) else {
        return;
    };
    // SAFETY: two NUL-terminated strings; _putenv_s copies them.
    unsafe {
        _putenv_s(n.as_ptr(), v.as_ptr());
    }
}

/// The variables of the carrier, in slot order.
const VARS: [&str; 3] = ["TRACEPARENT", "TRACESTATE", "BAGGAGE"];

/// Smallest buffer per variable: `NAME=`, the longest value W3C allows that
/// mcplite hands on (a version-00 traceparent; 32 tracestate members; 8192
/// bytes of baggage) and the NUL.
#[cfg(unix)]
const MIN_CAP: [usize; 3] = [12 + 55 + 1, 11 + 32 * 514 + 1, 8 + 8192 + 1];

/// Environment strings that are rewritten in place (unix).
///
/// `setenv()` copies each new value into memory that glibc never frees: it
/// keeps every value ever set in a search tree, consulted on every later
/// `setenv()`. A unique `traceparent` per call therefore leaked about 100
/// bytes per call and made every call a little slower than the last. Here
/// each variable owns one `NAME=value` buffer, allocated once and never
/// freed; a call writes the value into it and hands the same pointer to
/// `putenv()`, which makes the buffer itself part of the environment (POSIX)
/// without copying. Restoring the previous value afterwards goes through
/// `setenv()`/`unsetenv()` as before: that value is the same on every call,
/// so it is stored once.
#[cfg(unix)]
mod slots {
    use std::cell::RefCell;

    thread_local! {
        static SLOTS: RefCell<[Option<&'static mut [u8]>; 3]> = const { RefCell::new([None, None, None]) };
    }

    /// Put `NAME=value` in the environment through slot `i`. Values holding
    /// a NUL are not set (W3C values never do).
    pub(super) fn put(i: usize, value: &str) {
        let name = super::VARS[i];
        if value.as_bytes().contains(&0) {
            return;
        }
        let need = name.len() + 1 + value.len() + 1;
        SLOTS.with(|s| {
            let mut s = s.borrow_mut();
            if s[i].as_ref().is_none_or(|b| b.len() < need) {
                // Never freed: the environment may still point at an older
                // buffer (after an unwind skipped the restore).
                s[i] = Some(Box::leak(vec![0u8; need.max(super::MIN_CAP[i])].into_boxed_slice()));
            }
            let Some(buf) = s[i].as_mut() else { return };
            buf[..name.len()].copy_from_slice(name.as_bytes());
            buf[name.len()] = b'=';
            buf[name.len() + 1..need - 1].copy_from_slice(value.as_bytes());
            buf[need - 1] = 0;
            // SAFETY: `buf` is a NUL-terminated `NAME=value` string that lives
            // for the rest of the process, as putenv() requires. Only the
            // thread running tools (R's main thread) changes these variables.
            unsafe {
                libc::putenv(buf.as_mut_ptr().cast());
            }
        });
    }
}

#[cfg(unix)]
fn put_var(i: usize, value: &str) {
    slots::put(i, value);
}

#[cfg(not(unix))]
fn put_var(i: usize, value: &str) {
    restore_var(VARS[i], Some(value));
}

/// Run `f` with the trace environment of `ctx` in place.
pub fn with_trace_env<T>(ctx: &CallContext, f: impl FnOnce() -> T) -> T {
    let tp = match &ctx.traceparent {
        None => return f(),
        Some(tp) => tp,
    };
    let old = VARS.map(|v| std::env::var(v).ok());
    let new =
        [Some(tp.as_str()), ctx.tracestate.as_deref(), ctx.baggage.as_deref()].map(|v| v.filter(|v| !v.is_empty()));
    // Each environment call scans the whole environment: a variable that is
    // unset before and during the call is left alone.
    let touched = [0, 1, 2].map(|i| new[i].is_some() || old[i].is_some());
    for i in 0..3 {
        match new[i] {
            Some(v) => put_var(i, v),
            None if touched[i] => restore_var(VARS[i], None),
            None => {}
        }
    }
    CURRENT.with(|c| *c.borrow_mut() = Some(ctx.clone()));
    let out = f();
    CURRENT.with(|c| *c.borrow_mut() = None);
    for i in (0..3).filter(|&i| touched[i]) {
        restore_var(VARS[i], old[i].as_deref());
    }
    out
}

/// The context of the call in progress, if tracing is on.
pub fn current() -> Option<CallContext> {
    CURRENT.with(|c| c.borrow().clone())
}

/// The recorders configured by the process environment (spans, metrics,
/// `MCPLITE_LOG`; RULES T8), read once when a server or session starts;
/// `None` when all are off.
pub fn recorder_from_process_env() -> Option<Box<dyn mcplite_engine::telemetry::SpanRecorder>> {
    mcplite_engine::telemetry::recorder_from_env(&|k| std::env::var(k).ok())
}

/// `mcp_trace_context()`: the running call's W3C context as a named
/// character vector (`traceparent`, then `tracestate` and `baggage` when not
/// empty), or NULL when tracing is off or no tool call is running.
/// @noRd
#[extendr_api::extendr]
fn engine_trace_context() -> extendr_api::Robj {
    use extendr_api::prelude::*;
    match current() {
        Some(CallContext { traceparent: Some(tp), tracestate, baggage }) => {
            let mut names = vec!["traceparent"];
            let mut values = vec![tp];
            if let Some(ts) = tracestate.filter(|s| !s.is_empty()) {
                names.push("tracestate");
                values.push(ts);
            }
            if let Some(b) = baggage.filter(|s| !s.is_empty()) {
                names.push("baggage");
                values.push(b);
            }
            let mut r = Robj::from(values);
            match r.set_names(names) {
                Ok(_) => r,
                Err(_) => Robj::from(()),
            }
        }
        _ => Robj::from(()),
    }
}

extendr_api::extendr_module! {
    mod trace_env;
    fn engine_trace_context;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(i: usize, ts: &str, bg: &str) -> CallContext {
        CallContext {
            traceparent: Some(format!("00-{:032x}-{:016x}-01", i + 1, i + 1)),
            tracestate: Some(ts.to_string()),
            baggage: Some(bg.to_string()),
        }
    }

    fn env3() -> [Option<String>; 3] {
        VARS.map(|v| std::env::var(v).ok())
    }

    // One test: the environment is process-global.
    #[test]
    fn carrier_values_restore_and_no_growth_per_call() {
        std::env::remove_var("TRACEPARENT");
        std::env::set_var("TRACESTATE", "outer=1");
        std::env::remove_var("BAGGAGE");
        let c = ctx(7, "a=1", "k=v");
        let (inside, cur) = with_trace_env(&c, || (env3(), current()));
        assert_eq!(inside, [c.traceparent.clone(), Some("a=1".into()), Some("k=v".into())]);
        assert_eq!(cur, Some(c));
        assert_eq!(env3(), [None, Some("outer=1".into()), None]);
        assert_eq!(current(), None);
        // An empty tracestate unsets the variable for the call; a longer
        // value than any before fits.
        let long = format!("k={}", "v".repeat(9000));
        let inside = with_trace_env(&ctx(8, "", &long), env3);
        assert_eq!(inside[1], None);
        assert_eq!(inside[2].as_deref(), Some(long.as_str()));
        assert_eq!(env3(), [None, Some("outer=1".into()), None]);
        // A child process sees the values.
        let out = with_trace_env(&ctx(9, "b=2", "x=y"), || {
            std::process::Command::new("sh")
                .args(["-c", "printf '%s %s %s' \"$TRACEPARENT\" \"$TRACESTATE\" \"$BAGGAGE\""])
                .output()
                .unwrap()
        });
        assert_eq!(String::from_utf8(out.stdout).unwrap(), format!("{} b=2 x=y", ctx(9, "", "").traceparent.unwrap()));

        // A distinct context per call costs no memory per call (setenv()
        // kept a copy of every value ever set).
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        {
            // SAFETY: mallinfo2() only reads allocator statistics.
            let heap = || unsafe { libc::mallinfo2() }.uordblks as i64;
            let before = heap();
            for i in 0..20_000 {
                let c = ctx(i, &format!("t={i}"), &format!("b={i}"));
                with_trace_env(&c, || assert_eq!(std::env::var("TRACEPARENT").ok(), c.traceparent));
            }
            let grown = heap() - before;
            assert!(grown < 256 * 1024, "heap grew by {grown} bytes over 20,000 calls");
        }
        std::env::remove_var("TRACESTATE");
    }
}
