//! Evaluating R code from Rust without letting R's longjmp (error or
//! interrupt) unwind Rust frames it should not.
//!
//! * [`try_eval`] and [`r_call`] evaluate with `R_tryEvalSilent()`: an R
//!   error becomes an `Err` carrying R's message.
//! * [`toplevel`] runs a Rust closure under `R_ToplevelExec()`, the
//!   containment for the rare R errors raised by allocation in Rust code.
//! * [`take_interrupt`] consumes a pending user interrupt (C, in
//!   `src/entrypoint.c`).
//! * [`error_buffer`] reads R's error message buffer through the documented
//!   `geterrmessage()`.

use std::ffi::{c_int, c_void};

use super::*;

/// Evaluate `call` in `env` with `R_tryEvalSilent()`. `Err` holds R's error
/// message without its "Error in ...:" prefix.
///
/// # Safety
/// The SEXP contract holds for `call` and `env`. The value is unprotected.
pub unsafe fn try_eval(call: SEXP, env: SEXP) -> Result<SEXP, String> {
    let mut err: c_int = 0;
    // SAFETY: caller's contract; R_tryEvalSilent never longjmps out.
    let res = unsafe { R_tryEvalSilent(call, env, &mut err) };
    if err != 0 {
        // SAFETY: main thread.
        return Err(unsafe { last_error_message() });
    }
    Ok(res)
}

/// Build and evaluate `fun(args...)` in the base environment with
/// [`try_eval`]. `fun` may be `"pkg::name"` or `"pkg:::name"`. The value is protected in
/// `prot`.
///
/// # Safety
/// The SEXP contract holds for every argument value. Builds the call with
/// allocating entry points: call under an R entry point or [`toplevel`].
pub unsafe fn r_call(prot: &mut Protect, fun: &str, args: &[(Option<&str>, SEXP)]) -> Result<SEXP, String> {
    // SAFETY: caller's contract; every allocation is protected in `local`
    // until the call has been evaluated.
    unsafe {
        let mut local = Protect::new();
        // `pkg:::name` (internal) or `pkg::name` (exported).
        let qualified = match fun.split_once(":::") {
            Some((pkg, name)) => Some((pkg, name, ":::")),
            None => fun.split_once("::").map(|(pkg, name)| (pkg, name, "::")),
        };
        let f = match qualified {
            Some((pkg, name, op)) => {
                let pl = local.add(Rf_cons(sym(pkg), Rf_cons(sym(name), R_NilValue)));
                local.add(Rf_lcons(sym(op), pl))
            }
            None => sym(fun),
        };
        let mut tail = R_NilValue;
        for (name, val) in args.iter().rev() {
            tail = local.add(Rf_cons(*val, tail));
            if let Some(n) = name {
                SET_TAG(tail, sym(n));
            }
        }
        let call = local.add(Rf_lcons(f, tail));
        let res = try_eval(call, R_BaseEnv)?;
        Ok(prot.add(res))
    }
}

/// The current content of R's error message buffer, as `geterrmessage()`
/// returns it ("Error in f() : msg\n"), as bytes.
///
/// # Safety
/// Main thread. Allocates (the call and R's result): call under an R entry
/// point or [`toplevel`].
pub unsafe fn error_buffer() -> Vec<u8> {
    // SAFETY: main thread; `geterrmessage()` is a base function that cannot
    // fail, and R_tryEvalSilent contains it anyway.
    unsafe {
        let mut prot = Protect::new();
        let call = prot.add(Rf_lang1(sym("geterrmessage")));
        let mut err: c_int = 0;
        let res = R_tryEvalSilent(call, R_BaseEnv, &mut err);
        if err != 0 || ty(res) != SEXPTYPE::STRSXP || xlen(res) == 0 {
            return Vec::new();
        }
        strings::char_bytes(STRING_ELT(res, 0)).to_vec()
    }
}

/// The message of the last R error: `geterrmessage()` without the "Error in
/// ...:" prefix and the trailing newline.
///
/// # Safety
/// As [`error_buffer`].
pub unsafe fn last_error_message() -> String {
    // SAFETY: caller's contract.
    let buf = unsafe { error_buffer() };
    if buf.is_empty() {
        return "R error".into();
    }
    strip_error_prefix(&strings::escape_invalid(&buf))
}

/// R's error buffer text without the prefix R's default error handler adds
/// ("Error in <call> : ", "Error: ", "Error : ") and surrounding white
/// space.
pub fn strip_error_prefix(msg: &str) -> String {
    let m = msg.trim_end_matches('\n');
    let rest = if let Some(r) = m.strip_prefix("Error in ") {
        match r.find(" : ") {
            Some(i) => &r[i + 3..],
            None => r,
        }
    } else if let Some(r) = m.strip_prefix("Error: ").or_else(|| m.strip_prefix("Error : ")) {
        r
    } else {
        m
    };
    rest.trim_start_matches('\n').trim().to_string()
}

/// Run `f` under `R_ToplevelExec()`, so that an R error raised by an R entry
/// point inside `f` (allocation failure) stops at R's own context instead of
/// unwinding further. Returns false when R jumped out, in which case `f`
/// did not finish.
///
/// `f` must keep the contract of the module documentation of
/// [`crate::rapi`]: the frames an R error may jump over own nothing that
/// needs dropping beyond memory. A panic inside `f` is caught here (it must
/// not unwind through R's C frames); the caller then sees `f` unfinished.
pub fn toplevel<F: FnMut()>(mut f: F) -> bool {
    unsafe extern "C" fn tramp<F: FnMut()>(data: *mut c_void) {
        // SAFETY: `data` is the `&mut F` passed below, alive for the call.
        let f = unsafe { &mut *(data as *mut F) };
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    }
    // SAFETY: data points to `f`, alive for the duration of the call; R's
    // main thread (every caller is on it: the host and the entry points).
    unsafe { R_ToplevelExec(Some(tramp::<F>), &mut f as *mut F as *mut c_void) == Rboolean::TRUE }
}

/// Has the user asked to interrupt (SIGINT)? Consumes the pending
/// interrupt. R's own handling of an interrupt would write a blank line to
/// stderr (a second diagnostic, RULES S7/S8), so `src/entrypoint.c` runs
/// `R_CheckUserInterrupt()` under an exiting handler for `interrupt`
/// conditions inside `R_ToplevelExec()`.
pub fn take_interrupt() -> bool {
    // A SIGINT that R's own check lost counts too (RULES S7): asked first,
    // so that one arriving in between is R's to report.
    let seen = mcplite_engine::signals::take_sigint();
    // SAFETY: main thread; the C function contains every longjmp.
    let hit = unsafe { mcplite_take_interrupt() != 0 };
    hit || seen
}

#[cfg(test)]
mod tests {
    use super::strip_error_prefix;

    #[test]
    fn error_prefixes_are_stripped() {
        assert_eq!(strip_error_prefix("Error in f(x) : boom\n"), "boom");
        assert_eq!(strip_error_prefix("Error in f(x) : \n  a long message\n"), "a long message");
        assert_eq!(strip_error_prefix("Error : boom\n"), "boom");
        assert_eq!(strip_error_prefix("Error: boom\n"), "boom");
        assert_eq!(strip_error_prefix("Error: a : b\n"), "a : b");
        assert_eq!(strip_error_prefix("Error in g() : a : b\n"), "a : b");
        assert_eq!(
            strip_error_prefix("C stack usage  7969188 is too close to the limit\n"),
            "C stack usage  7969188 is too close to the limit"
        );
    }
}
