//! Thin, non-erroring helpers over the R C API used by the encoder.
//!
//! Nothing here may longjmp: reads use accessors that cannot raise, and the
//! few operations that need R evaluation go through `R_tryEvalSilent`, whose
//! failure becomes an `Err`.

#![allow(improper_ctypes)]
#![allow(non_snake_case)]

use extendr_ffi::*;
use std::os::raw::{c_char, c_int, c_void};

extern "C" {
    pub fn Rf_getCharCE(x: SEXP) -> c_int;
    pub fn Rf_translateCharUTF8(x: SEXP) -> *const c_char;
    pub fn vmaxget() -> *mut c_void;
    pub fn vmaxset(p: *const c_void);
    pub fn Rf_GetOption1(tag: SEXP) -> SEXP;
    pub fn Rf_ScalarLogical(x: c_int) -> SEXP;
    pub fn Rf_protect(x: SEXP) -> SEXP;
    pub fn Rf_unprotect(n: c_int);
}

pub const CE_UTF8: c_int = 1;
pub const CE_LATIN1: c_int = 2;
pub const CE_BYTES: c_int = 3;

pub const NA_INT: i32 = i32::MIN;
pub const NA_LGL: i32 = i32::MIN;

/// Unprotects `n` objects when dropped.
pub struct Prot(pub c_int);

impl Prot {
    pub fn new() -> Prot {
        Prot(0)
    }
    /// Protect `x` and return it.
    pub unsafe fn add(&mut self, x: SEXP) -> SEXP {
        Rf_protect(x);
        self.0 += 1;
        x
    }
}

impl Drop for Prot {
    fn drop(&mut self) {
        if self.0 > 0 {
            unsafe { Rf_unprotect(self.0) };
        }
    }
}

#[inline]
pub unsafe fn is_nil(x: SEXP) -> bool {
    x == R_NilValue
}

#[inline]
pub unsafe fn ty(x: SEXP) -> SEXPTYPE {
    TYPEOF(x)
}

#[inline]
pub unsafe fn xlen(x: SEXP) -> usize {
    Rf_xlength(x) as usize
}

pub unsafe fn sym(name: &str) -> SEXP {
    let c = std::ffi::CString::new(name).expect("symbol without NUL");
    Rf_install(c.as_ptr())
}

/// Bytes of a CHARSXP exactly as stored (no translation).
#[inline]
pub unsafe fn char_bytes<'a>(c: SEXP) -> &'a [u8] {
    let p = R_CHAR(c) as *const u8;
    let n = LENGTH(c) as usize;
    std::slice::from_raw_parts(p, n)
}

#[inline]
pub unsafe fn attr(x: SEXP, name: SEXP) -> SEXP {
    Rf_getAttrib(x, name)
}

pub unsafe fn is_object(x: SEXP) -> bool {
    Rf_isObject(x) != Rboolean::FALSE
}

pub unsafe fn is_s4(x: SEXP) -> bool {
    Rf_isS4(x) != Rboolean::FALSE
}

/// Is the current C library character type UTF-8 (then native strings are
/// UTF-8)? Not cached: the locale can change while R runs.
pub fn utf8_locale() -> bool {
    unsafe {
        let p = libc::nl_langinfo(libc::CODESET);
        if p.is_null() {
            return false;
        }
        let s = std::ffi::CStr::from_ptr(p).to_bytes();
        s.eq_ignore_ascii_case(b"UTF-8") || s.eq_ignore_ascii_case(b"UTF8")
    }
}

/// Append the UTF-8 bytes of CHARSXP `c` to `out` (translating latin1 and
/// non-UTF-8 native strings). `bytes`-encoded non-ASCII strings are an
/// error, as in R's `translateCharUTF8()`.
pub unsafe fn push_utf8(c: SEXP, out: &mut Vec<u8>) -> Result<(), String> {
    let b = char_bytes(c);
    if b.is_ascii() {
        out.extend_from_slice(b);
        return Ok(());
    }
    match Rf_getCharCE(c) {
        CE_UTF8 => out.extend_from_slice(b),
        CE_LATIN1 => {
            for &ch in b {
                if ch < 0x80 {
                    out.push(ch);
                } else {
                    out.push(0xc0 | (ch >> 6));
                    out.push(0x80 | (ch & 0x3f));
                }
            }
        }
        CE_BYTES => {
            return Err("translating strings with \"bytes\" encoding is not allowed".into());
        }
        _ => {
            if utf8_locale() {
                out.extend_from_slice(b);
            } else {
                let v = vmaxget();
                let p = Rf_translateCharUTF8(c);
                out.extend_from_slice(std::ffi::CStr::from_ptr(p).to_bytes());
                vmaxset(v);
            }
        }
    }
    Ok(())
}

/// UTF-8 bytes of a CHARSXP, borrowed when no translation is needed.
pub unsafe fn utf8_of<'a>(c: SEXP, scratch: &'a mut Vec<u8>) -> Result<&'a [u8], String> {
    let b: &'a [u8] = char_bytes(c);
    if b.is_ascii() || (Rf_getCharCE(c) == CE_UTF8) || (Rf_getCharCE(c) == 0 && utf8_locale()) {
        return Ok(b);
    }
    scratch.clear();
    push_utf8(c, scratch)?;
    Ok(&scratch[..])
}

/// First class name of `x` as R's `class(x)[1]` would report it (for
/// messages only).
pub unsafe fn class1(x: SEXP) -> String {
    let cls = attr(x, R_ClassSymbol);
    if ty(cls) == SEXPTYPE::STRSXP && xlen(cls) > 0 {
        return String::from_utf8_lossy(char_bytes(STRING_ELT(cls, 0))).into_owned();
    }
    let dim = attr(x, R_DimSymbol);
    if !is_nil(dim) {
        return if xlen(dim) == 2 { "matrix".into() } else { "array".into() };
    }
    type_class(x).to_string()
}

/// The implicit class of a bare object of this type.
pub unsafe fn type_class(x: SEXP) -> &'static str {
    use SEXPTYPE::*;
    match ty(x) {
        NILSXP => "NULL",
        SYMSXP => "name",
        LISTSXP => "pairlist",
        CLOSXP | SPECIALSXP | BUILTINSXP => "function",
        ENVSXP => "environment",
        PROMSXP => "promise",
        LANGSXP => "call",
        LGLSXP => "logical",
        INTSXP => "integer",
        REALSXP => "numeric",
        CPLXSXP => "complex",
        STRSXP => "character",
        DOTSXP => "...",
        VECSXP => "list",
        EXPRSXP => "expression",
        BCODESXP => "bytecode",
        EXTPTRSXP => "externalptr",
        WEAKREFSXP => "weakref",
        RAWSXP => "raw",
        _ => "S4",
    }
}

/// Build and evaluate `fun(args...)` in the base environment with
/// `R_tryEvalSilent`. `fun` may be `"pkg::name"`. The result is protected
/// in `prot`. R errors become `Err` with R's message.
pub unsafe fn r_call(prot: &mut Prot, fun: &str, args: &[(Option<&str>, SEXP)]) -> Result<SEXP, String> {
    let mut local = Prot::new();
    let f = match fun.split_once("::") {
        Some((pkg, name)) => {
            let pl = local.add(Rf_cons(sym(pkg), Rf_cons(sym(name), R_NilValue)));
            local.add(Rf_lcons(sym("::"), pl))
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
    let mut err: c_int = 0;
    let res = R_tryEvalSilent(call, R_BaseEnv, &mut err);
    if err != 0 {
        return Err(last_error_message());
    }
    Ok(prot.add(res))
}

/// The message of the last R error (`geterrmessage()` without the
/// "Error in ...:" prefix and trailing newline).
pub unsafe fn last_error_message() -> String {
    let mut local = Prot::new();
    let call = local.add(Rf_lcons(sym("geterrmessage"), R_NilValue));
    let mut err: c_int = 0;
    let res = R_tryEvalSilent(call, R_BaseEnv, &mut err);
    if err != 0 || ty(res) != SEXPTYPE::STRSXP || xlen(res) == 0 {
        return "R error".into();
    }
    let s = String::from_utf8_lossy(char_bytes(STRING_ELT(res, 0))).into_owned();
    let s = s.trim_end().to_string();
    match s.strip_prefix("Error") {
        Some(rest) => match rest.find(" : ") {
            Some(i) if rest.starts_with(" in ") || rest.starts_with(' ') => rest[i + 3..].trim_start().to_string(),
            _ => rest.trim_start_matches([' ', ':']).to_string(),
        },
        None => s,
    }
}

/// A new protected character vector holding the given CHARSXPs.
pub unsafe fn str_vec(prot: &mut Prot, elems: &[SEXP]) -> SEXP {
    let v = prot.add(Rf_allocVector(SEXPTYPE::STRSXP, elems.len() as R_xlen_t));
    for (i, e) in elems.iter().enumerate() {
        SET_STRING_ELT(v, i as R_xlen_t, *e);
    }
    v
}

/// A CHARSXP (UTF-8) for `s`. Allocates; `s` must not contain NUL.
pub unsafe fn mk_char(s: &[u8]) -> SEXP {
    Rf_mkCharLenCE(s.as_ptr() as *const c_char, s.len() as c_int, cetype_t::CE_UTF8)
}
