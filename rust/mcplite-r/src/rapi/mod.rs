//! The one layer over R's C API. Every other module of the bridge reaches R
//! through this module: it re-exports the bindings of `extendr-ffi`,
//! declares the few documented entry points `extendr-ffi` lacks and the C
//! helpers of `src/entrypoint.c`, and holds the helpers for raw `SEXP` work:
//! GC protection ([`Protect`]), type and attribute access, classes, lists,
//! strings ([`strings`]) and evaluation that cannot longjmp into Rust
//! ([`eval`]).
//!
//! # The SEXP contract
//!
//! The `unsafe fn`s of the bridge that take a `SEXP` share one safety
//! contract, referred to as "the SEXP contract" in their `# Safety`
//! sections:
//!
//! * they run on R's main thread (the thread that called into the package),
//!   never on the stdin reader thread;
//! * every `SEXP` argument is a valid R object that stays protected from the
//!   garbage collector (reachable from a protected object or an R variable,
//!   or on the protect stack) for the duration of the call;
//! * a `SEXP` returned is unprotected unless the function says otherwise: the
//!   caller protects it before the next allocation.
//!
//! R entry points that can raise an R error (allocation, symbol creation)
//! longjmp to the nearest R context. Code that calls them runs either under
//! an R entry point (`.Call`) or under [`eval::toplevel`], so the jump ends
//! in R's own frames; the Rust frames it crosses own nothing that needs
//! dropping beyond memory (a failed allocation at most leaks a buffer).
//! [`Protect`] guards stay consistent across such a jump: R restores its
//! protect stack to the level saved by the context the jump ends in.

#![allow(non_snake_case)]
// `SEXP` is a pointer to an opaque struct that extendr-ffi marks
// non-exhaustive; only the pointer crosses the C boundary.
#![allow(improper_ctypes)]

pub mod eval;
pub mod strings;

use std::ffi::{c_char, c_int, c_void, CStr};

pub use extendr_ffi::*;

extern "C" {
    // Documented R API that extendr-ffi 0.9 does not declare.
    pub fn R_ToplevelExec(f: Option<unsafe extern "C" fn(*mut c_void)>, data: *mut c_void) -> Rboolean;
    pub fn Rf_installChar(x: SEXP) -> SEXP;
    pub fn Rf_ScalarReal(x: f64) -> SEXP;
    pub fn Rf_ScalarLogical(x: c_int) -> SEXP;
    pub fn Rf_ScalarString(x: SEXP) -> SEXP;
    pub fn Rf_lang2(f: SEXP, a: SEXP) -> SEXP;
    // The live session's input handler (live.rs, Unix only).
    #[cfg(unix)]
    pub fn Rf_lang3(f: SEXP, a: SEXP, b: SEXP) -> SEXP;
    #[cfg(unix)]
    pub fn Rf_asInteger(x: SEXP) -> c_int;
    pub fn Rf_getCharCE(x: SEXP) -> c_int;
    pub fn Rf_translateCharUTF8(x: SEXP) -> *const c_char;
    pub fn Rf_inherits(x: SEXP, name: *const c_char) -> Rboolean;
    pub fn Rf_GetOption1(tag: SEXP) -> SEXP;
    pub fn vmaxget() -> *mut c_void;
    pub fn vmaxset(p: *const c_void);
    pub fn R_FlushConsole();
    pub fn Rf_findVarInFrame(rho: SEXP, sym: SEXP) -> SEXP;

    // src/entrypoint.c (C, so that R's longjmps never cross Rust frames).

    /// Evaluate `call` in `env` under `R_ToplevelExec()` with a calling
    /// error handler that stores the condition in `slot_env` under
    /// `slot_sym`. Returns 1 and sets `*value` (unprotected) when the call
    /// returned, 0 when R jumped out (error or interrupt).
    pub fn mcplite_eval_guarded(call: SEXP, env: SEXP, slot_env: SEXP, slot_sym: SEXP, value: *mut SEXP) -> c_int;

    /// Consume a pending user interrupt (SIGINT) without R's default
    /// handling; 1 when there was one.
    pub fn mcplite_take_interrupt() -> c_int;
}

/// R's event loop (`R_ext/eventloop.h`, Unix): the input handlers R runs
/// while it waits for input (the live session's wake-up, `live.rs`).
#[cfg(unix)]
pub mod eventloop {
    use std::ffi::{c_int, c_void};

    /// R's `InputHandler`, used only through pointers R hands out.
    #[repr(C)]
    pub struct InputHandler {
        _opaque: [u8; 0],
    }

    pub type InputHandlerProc = Option<unsafe extern "C" fn(*mut c_void)>;

    extern "C" {
        pub static mut R_InputHandlers: *mut InputHandler;
        pub fn addInputHandler(
            handlers: *mut InputHandler,
            fd: c_int,
            handler: InputHandlerProc,
            activity: c_int,
        ) -> *mut InputHandler;
        pub fn removeInputHandler(handlers: *mut *mut InputHandler, it: *mut InputHandler) -> c_int;
    }
}

/// `cetype_t` values as `Rf_getCharCE()` returns them.
pub const CE_NATIVE: c_int = 0;
pub const CE_UTF8: c_int = 1;
pub const CE_LATIN1: c_int = 2;
pub const CE_BYTES: c_int = 3;

/// `NA_integer_` and `NA` (logical) as stored.
pub const NA_INT: i32 = i32::MIN;
pub const NA_LGL: i32 = i32::MIN;

/// Keeps `SEXP`s protected from R's garbage collector until dropped, then
/// unprotects them all with one `Rf_unprotect()`. Guards live on the Rust
/// stack and are dropped in the reverse order of their creation, as R's
/// protect stack requires; do not move one out of the scope that made it.
pub struct Protect {
    n: c_int,
}

impl Protect {
    pub fn new() -> Protect {
        Protect { n: 0 }
    }

    /// Protect `x` and return it.
    ///
    /// # Safety
    /// The SEXP contract (module documentation) holds for `x`.
    pub unsafe fn add(&mut self, x: SEXP) -> SEXP {
        // SAFETY: `x` is a valid SEXP on the main thread (caller's contract).
        unsafe { Rf_protect(x) };
        self.n += 1;
        x
    }
}

impl Default for Protect {
    fn default() -> Self {
        Protect::new()
    }
}

impl Drop for Protect {
    fn drop(&mut self) {
        if self.n > 0 {
            // SAFETY: exactly `n` objects were protected by this guard, and
            // guards are dropped in stack order (type documentation).
            unsafe { Rf_unprotect(self.n) };
        }
    }
}

/// Is `x` `NULL`?
///
/// # Safety
/// Main thread (reads R's `R_NilValue`).
#[inline]
pub unsafe fn is_nil(x: SEXP) -> bool {
    // SAFETY: reading a global of R on the main thread.
    x == unsafe { R_NilValue }
}

/// `TYPEOF(x)`.
///
/// # Safety
/// The SEXP contract holds for `x`.
#[inline]
pub unsafe fn ty(x: SEXP) -> SEXPTYPE {
    // SAFETY: caller's contract.
    unsafe { TYPEOF(x) }
}

/// The length of a vector, list or pairlist.
///
/// # Safety
/// The SEXP contract holds for `x`.
#[inline]
pub unsafe fn xlen(x: SEXP) -> usize {
    // SAFETY: caller's contract.
    unsafe { Rf_xlength(x) as usize }
}

/// Attribute `name` (a symbol) of `x`, `NULL` when absent.
///
/// # Safety
/// The SEXP contract holds for `x` and `name`.
#[inline]
pub unsafe fn attr(x: SEXP, name: SEXP) -> SEXP {
    // SAFETY: caller's contract; Rf_getAttrib does not allocate for the
    // attributes read here (only `row.names` may be expanded, see R's docs).
    unsafe { Rf_getAttrib(x, name) }
}

/// Has `x` a class attribute (`is.object()`)?
///
/// # Safety
/// The SEXP contract holds for `x`.
pub unsafe fn is_object(x: SEXP) -> bool {
    // SAFETY: caller's contract.
    unsafe { Rf_isObject(x) != Rboolean::FALSE }
}

/// Is `x` an S4 object?
///
/// # Safety
/// The SEXP contract holds for `x`.
pub unsafe fn is_s4(x: SEXP) -> bool {
    // SAFETY: caller's contract.
    unsafe { Rf_isS4(x) != Rboolean::FALSE }
}

/// The symbol `name` (created on first use; R never frees symbols).
///
/// # Safety
/// Main thread. Allocates the first time: may raise an R error when memory
/// is exhausted.
pub unsafe fn sym(name: &str) -> SEXP {
    let c = std::ffi::CString::new(name).expect("symbol without NUL");
    // SAFETY: NUL-terminated name; main thread.
    unsafe { Rf_install(c.as_ptr()) }
}

// ---------------------------------------------------------------------------
// classes

/// `inherits(x, name)` without evaluation.
///
/// # Safety
/// The SEXP contract holds for `x`.
pub unsafe fn inherits(x: SEXP, name: &CStr) -> bool {
    // SAFETY: caller's contract; `name` is NUL-terminated.
    unsafe { Rf_inherits(x, name.as_ptr()) == Rboolean::TRUE }
}

/// Does the class attribute of `x` contain `name` exactly? (Byte
/// comparison, no allocation; for names that are not NUL-terminated.)
///
/// # Safety
/// The SEXP contract holds for `x`.
pub unsafe fn has_class(x: SEXP, name: &[u8]) -> bool {
    // SAFETY: caller's contract; class attributes are character vectors of
    // CHARSXPs.
    unsafe {
        if !is_object(x) {
            return false;
        }
        let c = attr(x, R_ClassSymbol);
        ty(c) == SEXPTYPE::STRSXP && (0..xlen(c)).any(|i| strings::char_bytes(STRING_ELT(c, i as R_xlen_t)) == name)
    }
}

/// Does the class attribute of `x` contain an entry starting with `prefix`?
///
/// # Safety
/// The SEXP contract holds for `x`.
pub unsafe fn class_starts_with(x: SEXP, prefix: &[u8]) -> bool {
    // SAFETY: caller's contract.
    unsafe {
        let cls = attr(x, R_ClassSymbol);
        ty(cls) == SEXPTYPE::STRSXP
            && (0..xlen(cls)).any(|i| strings::char_bytes(STRING_ELT(cls, i as R_xlen_t)).starts_with(prefix))
    }
}

/// First class name of `x` as R's `class(x)[1]` reports it (for messages).
///
/// # Safety
/// The SEXP contract holds for `x`.
pub unsafe fn class1(x: SEXP) -> String {
    // SAFETY: caller's contract.
    unsafe {
        let cls = attr(x, R_ClassSymbol);
        if ty(cls) == SEXPTYPE::STRSXP && xlen(cls) > 0 {
            return String::from_utf8_lossy(strings::char_bytes(STRING_ELT(cls, 0))).into_owned();
        }
        let dim = attr(x, R_DimSymbol);
        if !is_nil(dim) {
            return if xlen(dim) == 2 { "matrix".into() } else { "array".into() };
        }
        type_class(x).to_string()
    }
}

/// The implicit class of an object of `x`'s type.
///
/// # Safety
/// The SEXP contract holds for `x`.
pub unsafe fn type_class(x: SEXP) -> &'static str {
    use SEXPTYPE::*;
    // SAFETY: caller's contract.
    match unsafe { ty(x) } {
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

// ---------------------------------------------------------------------------
// lists and scalars

/// The member of list `list` named exactly `name` (no partial matching).
///
/// # Safety
/// The SEXP contract holds for `list`.
pub unsafe fn list_get(list: SEXP, name: &str) -> Option<SEXP> {
    // SAFETY: caller's contract; names are a character vector of the list's
    // length.
    unsafe {
        if ty(list) != SEXPTYPE::VECSXP {
            return None;
        }
        let names = attr(list, R_NamesSymbol);
        if ty(names) != SEXPTYPE::STRSXP {
            return None;
        }
        (0..xlen(names))
            .find(|&i| strings::char_bytes(STRING_ELT(names, i as R_xlen_t)) == name.as_bytes())
            .map(|i| VECTOR_ELT(list, i as R_xlen_t))
    }
}

/// The names of `x` as text ("" where a name is missing), one per element.
///
/// # Safety
/// The SEXP contract holds for `x`.
pub unsafe fn names_of(x: SEXP) -> Vec<String> {
    // SAFETY: caller's contract.
    unsafe {
        let n = xlen(x);
        let names = attr(x, R_NamesSymbol);
        if ty(names) != SEXPTYPE::STRSXP {
            return vec![String::new(); n];
        }
        (0..n)
            .map(|i| {
                let c = STRING_ELT(names, i as R_xlen_t);
                if c == R_NaString {
                    String::new()
                } else {
                    strings::text(c).unwrap_or_default()
                }
            })
            .collect()
    }
}

/// The value of a scalar string (a character vector of length 1 that is
/// not `NA`) as bytes, as stored; `None` for anything else.
///
/// # Safety
/// The SEXP contract holds for `x`.
pub unsafe fn scalar_string_bytes<'a>(x: SEXP) -> Option<&'a [u8]> {
    // SAFETY: caller's contract; the bytes live as long as `x` is protected.
    unsafe {
        if ty(x) != SEXPTYPE::STRSXP || xlen(x) != 1 {
            return None;
        }
        let c = STRING_ELT(x, 0);
        if c == R_NaString {
            None
        } else {
            Some(strings::char_bytes(c))
        }
    }
}

/// A character vector of length 1 holding `s` (UTF-8). Unprotected.
///
/// # Safety
/// Main thread. Allocates: may raise an R error when memory is exhausted.
pub unsafe fn mk_string(s: &[u8]) -> SEXP {
    // SAFETY: main thread; the CHARSXP is protected while the vector is
    // allocated.
    unsafe {
        let mut prot = Protect::new();
        let c = prot.add(strings::mk_char(s));
        Rf_ScalarString(c)
    }
}

/// A new character vector holding the given CHARSXPs, protected in `prot`.
///
/// # Safety
/// The SEXP contract holds for every element of `elems`. Allocates: may
/// raise an R error when memory is exhausted.
pub unsafe fn str_vec(prot: &mut Protect, elems: &[SEXP]) -> SEXP {
    // SAFETY: caller's contract; the new vector is protected before use.
    unsafe {
        let v = prot.add(Rf_allocVector(SEXPTYPE::STRSXP, elems.len() as R_xlen_t));
        for (i, e) in elems.iter().enumerate() {
            SET_STRING_ELT(v, i as R_xlen_t, *e);
        }
        v
    }
}

/// Flush R's console and every C stdio stream.
pub fn flush_console() {
    // SAFETY: R_FlushConsole and fflush(NULL) only flush buffers.
    unsafe {
        R_FlushConsole();
        libc::fflush(std::ptr::null_mut());
    }
}
