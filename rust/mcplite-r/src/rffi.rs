//! R API entry points that extendr-ffi does not declare, and small helpers
//! for raw SEXP work. Everything here runs on R's main thread only.

#![allow(non_snake_case, improper_ctypes, dead_code)]

use std::ffi::{c_char, c_int, c_void, CStr};

pub use extendr_ffi::*;

extern "C" {
    pub fn R_ToplevelExec(f: Option<unsafe extern "C" fn(*mut c_void)>, data: *mut c_void) -> Rboolean;
    pub fn R_CheckUserInterrupt();
    pub fn Rf_installChar(x: SEXP) -> SEXP;
    pub fn Rf_ScalarReal(x: f64) -> SEXP;
    pub fn Rf_ScalarLogical(x: c_int) -> SEXP;
    pub fn Rf_ScalarString(x: SEXP) -> SEXP;
    pub fn Rf_lang2(f: SEXP, a: SEXP) -> SEXP;
    pub fn Rf_lang3(f: SEXP, a: SEXP, b: SEXP) -> SEXP;
    pub fn Rf_getCharCE(x: SEXP) -> c_int;
    pub fn Rf_translateCharUTF8(x: SEXP) -> *const c_char;
    pub fn Rf_inherits(x: SEXP, name: *const c_char) -> Rboolean;
    pub fn Rf_GetOption1(tag: SEXP) -> SEXP;
    pub fn vmaxget() -> *mut c_void;
    pub fn vmaxset(p: *const c_void);
    pub fn R_FlushConsole();
    pub fn Rf_findVarInFrame(rho: SEXP, sym: SEXP) -> SEXP;
    pub fn Rf_defineVar(sym: SEXP, value: SEXP, rho: SEXP);
    pub fn R_curErrorBuf() -> *const c_char;
    /// src/entrypoint.c: evaluate `call` in `env` under R_ToplevelExec()
    /// with a calling error handler that stores the condition in `slot_env`.
    pub fn mcplite_eval_guarded(call: SEXP, env: SEXP, slot_env: SEXP, slot_sym: SEXP, value: *mut SEXP) -> c_int;
}

pub const CE_NATIVE: c_int = 0;
pub const CE_UTF8: c_int = 1;
pub const CE_LATIN1: c_int = 2;
pub const CE_BYTES: c_int = 3;

/// `inherits(x, name)` without evaluation.
pub unsafe fn inherits(x: SEXP, name: &CStr) -> bool {
    Rf_inherits(x, name.as_ptr()) == Rboolean::TRUE
}

/// Does the class attribute of `x` contain an entry starting with `prefix`?
pub unsafe fn class_starts_with(x: SEXP, prefix: &str) -> bool {
    let cls = Rf_getAttrib(x, R_ClassSymbol);
    if TYPEOF(cls) != SEXPTYPE::STRSXP {
        return false;
    }
    (0..Rf_xlength(cls)).any(|i| {
        let c = CStr::from_ptr(R_CHAR(STRING_ELT(cls, i)));
        c.to_bytes().starts_with(prefix.as_bytes())
    })
}

/// Is the session's native encoding UTF-8? Cached by the caller.
pub fn native_is_utf8() -> bool {
    // SAFETY: nl_langinfo returns a static string.
    unsafe {
        let p = libc::nl_langinfo(libc::CODESET);
        if p.is_null() {
            return false;
        }
        let s = CStr::from_ptr(p).to_bytes();
        s.eq_ignore_ascii_case(b"UTF-8") || s.eq_ignore_ascii_case(b"utf8")
    }
}

/// The bytes of a CHARSXP as UTF-8, translating when needed. Errors when the
/// string cannot be represented as valid UTF-8 (SPEC J1.3).
pub unsafe fn charsxp_utf8(c: SEXP) -> Result<String, String> {
    let bytes = std::slice::from_raw_parts(R_CHAR(c) as *const u8, Rf_xlength(c) as usize);
    let enc = Rf_getCharCE(c);
    let ascii = bytes.is_ascii();
    if ascii || enc == CE_UTF8 || (enc == CE_NATIVE && native_is_utf8()) {
        return match std::str::from_utf8(bytes) {
            Ok(s) => Ok(s.to_owned()),
            Err(_) => Err("a string is not valid UTF-8".to_owned()),
        };
    }
    if enc == CE_BYTES {
        return Err("a string has \"bytes\" encoding and cannot be sent as UTF-8".to_owned());
    }
    // latin1 or another native encoding: translate (allocates with R_alloc).
    let v = vmaxget();
    let t = Rf_translateCharUTF8(c);
    let out = std::str::from_utf8(CStr::from_ptr(t).to_bytes())
        .map(str::to_owned)
        .map_err(|_| "a string could not be translated to UTF-8".to_owned());
    vmaxset(v);
    out
}

/// A UTF-8 CHARSXP for `s` (must not contain NUL).
pub unsafe fn mkchar(s: &str) -> SEXP {
    Rf_mkCharLenCE(s.as_ptr() as *const c_char, s.len() as c_int, cetype_t::CE_UTF8)
}

/// Look up a member of a named list by exact name.
pub unsafe fn list_get(list: SEXP, name: &str) -> Option<SEXP> {
    if TYPEOF(list) != SEXPTYPE::VECSXP {
        return None;
    }
    let names = Rf_getAttrib(list, R_NamesSymbol);
    if TYPEOF(names) != SEXPTYPE::STRSXP {
        return None;
    }
    for i in 0..Rf_xlength(names) {
        let n = CStr::from_ptr(R_CHAR(STRING_ELT(names, i))).to_bytes();
        if n == name.as_bytes() {
            return Some(VECTOR_ELT(list, i));
        }
    }
    None
}

/// Names of a list (empty strings for missing names).
pub unsafe fn list_names(list: SEXP) -> Vec<String> {
    let n = Rf_xlength(list);
    let names = Rf_getAttrib(list, R_NamesSymbol);
    (0..n)
        .map(|i| {
            if TYPEOF(names) == SEXPTYPE::STRSXP {
                charsxp_utf8(STRING_ELT(names, i)).unwrap_or_default()
            } else {
                String::new()
            }
        })
        .collect()
}

/// A scalar string's value (first element of a character vector).
pub unsafe fn scalar_string(x: SEXP) -> Option<Result<String, String>> {
    if TYPEOF(x) != SEXPTYPE::STRSXP || Rf_xlength(x) < 1 {
        return None;
    }
    let c = STRING_ELT(x, 0);
    if c == R_NaString {
        return None;
    }
    Some(charsxp_utf8(c))
}

/// Run `f` under `R_ToplevelExec`, so that an R error (longjmp) raised inside
/// stops at R's own context instead of unwinding Rust frames. `f` must only
/// borrow state owned by the caller. Returns false if R jumped out.
pub fn toplevel<F: FnMut()>(mut f: F) -> bool {
    unsafe extern "C" fn tramp<F: FnMut()>(data: *mut c_void) {
        let f = &mut *(data as *mut F);
        // A panic must not unwind through R's C frames (it would abort the
        // process); the caller sees an incomplete result instead.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    }
    // SAFETY: data points to `f`, alive for the duration of the call.
    unsafe { R_ToplevelExec(Some(tramp::<F>), &mut f as *mut F as *mut c_void) == Rboolean::TRUE }
}

extern "C" {
    // Declared by R's public header R_ext/GraphicsDevice.h.
    static mut R_interrupts_pending: c_int;
    static mut R_interrupts_suspended: Rboolean;
}

/// Has the user asked to interrupt? (Consumes the pending interrupt.) The
/// flag R's SIGINT handler sets is read and cleared directly: going through
/// R_CheckUserInterrupt() would run R's interrupt machinery, which writes a
/// blank line to stderr (SPEC S7/S8: one diagnostic only).
pub fn interrupt_pending() -> bool {
    // SAFETY: main-thread access to R's interrupt flags.
    unsafe {
        let pending = std::ptr::addr_of_mut!(R_interrupts_pending);
        if *pending != 0 && *std::ptr::addr_of!(R_interrupts_suspended) == Rboolean::FALSE {
            *pending = 0;
            true
        } else {
            false
        }
    }
}

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
