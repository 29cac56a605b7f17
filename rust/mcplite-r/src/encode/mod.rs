//! R value -> JSON: the payload encoding (byte-for-byte `jsonlite::toJSON()`
//! of the installed jsonlite, RULES J1.1/J2) and the fixed encoding
//! (J1.2/J5). JSON -> R is `crate::decode`.
//!
//! The encoder walks SEXPs directly. It mirrors jsonlite's `asJSON` S4
//! methods: dispatch on the class vector (an unknown first class is dropped,
//! as jsonlite's `ANY` method does), per-class `na` defaults, `collapse =
//! FALSE` "pieces" for data frame cells and `unbox()`, and the `na`/`oldna`
//! hand-over between data frames, lists and matrices. The few conversions
//! that are R semantics rather than JSON (formatting dates and times,
//! `prettyNum()` of complex numbers, `deparse()` of functions) are evaluated
//! in R with `R_tryEvalSilent`; no R error raised there reaches Rust frames.
//!
//! Layout: [`options`] (the encoding options and where they come from),
//! `encoder` (the [`Encoder`] and its recursion), `dispatch` (the class
//! vector -> jsonlite method), `atomic` (atomic vectors and the classes
//! printed as them: factors, dates, ...), `list`, `data_frame`, `matrix`.
//! Strings are converted to UTF-8 as `enc2utf8()` does
//! (`crate::rapi::strings`).

mod atomic;
mod data_frame;
mod dispatch;
mod encoder;
mod list;
mod matrix;
pub mod options;

use extendr_api::prelude::*;
use mcplite_engine::numfmt::Flavor;

use crate::error::{to_r, Result};
use crate::rapi::*;
pub use encoder::Encoder;
pub use options::{payload_options_from_r, Digits, EncodeOptions, NaMode};

static FLAVOR: std::sync::Mutex<Option<Flavor>> = std::sync::Mutex::new(None);

/// The jsonlite flavor to reproduce: detected from the installed jsonlite
/// the first time it is needed (RULES J2.3), unless set explicitly.
///
/// # Safety
/// Main thread; under an R entry point or `toplevel()` the first time (the
/// detection evaluates R code).
pub(crate) unsafe fn flavor() -> Flavor {
    if let Some(f) = *FLAVOR.lock().unwrap() {
        return f;
    }
    // SAFETY: caller's contract.
    let f = unsafe { detect_flavor() }.unwrap_or(Flavor::V1_8_7);
    *FLAVOR.lock().unwrap() = Some(f);
    f
}

/// The installed jsonlite's version, as a flavor.
///
/// # Safety
/// As [`flavor`].
unsafe fn detect_flavor() -> Option<Flavor> {
    // SAFETY: caller's contract; every value is protected in `prot`.
    unsafe {
        let mut prot = Protect::new();
        let pkg = prot.add(mk_string(b"jsonlite"));
        let v = eval::r_call(&mut prot, "utils::packageVersion", &[(None, pkg)]).ok()?;
        let s = eval::r_call(&mut prot, "as.character", &[(None, v)]).ok()?;
        Flavor::from_version_str(&String::from_utf8_lossy(scalar_string_bytes(s)?))
    }
}

/// Payload encoding of `x` (RULES J1.1), appended to `out`.
///
/// # Safety
/// The SEXP contract holds for `x`; under an R entry point or `toplevel()`.
pub unsafe fn encode_payload(x: SEXP, opts: &EncodeOptions, out: &mut Vec<u8>) -> Result<()> {
    // SAFETY: caller's contract.
    unsafe {
        let mut enc = Encoder::payload(opts, flavor());
        enc.encode(x, out)
    }
}

/// Fixed encoding of `x` (RULES J1.2, J5), appended to `out`.
///
/// # Safety
/// As [`encode_payload`].
pub unsafe fn encode_fixed(x: SEXP, out: &mut Vec<u8>) -> Result<()> {
    let mut enc = Encoder::fixed();
    // SAFETY: caller's contract.
    unsafe { enc.encode(x, out) }
}

// ---------------------------------------------------------------------------
// R entry points (R/bridge-wrappers.R). Each returns its value or the
// marker of an `Error` (crate::error), which the R wrapper raises.

/// A character vector of length 1 holding the JSON text.
///
/// # Safety
/// Main thread (an R entry point).
unsafe fn json_string(buf: Vec<u8>) -> Robj {
    // SAFETY: caller's contract; the vector is returned to R at once.
    unsafe { Robj::from_sexp(mk_string(&buf)) }
}

/// Payload encoding with explicit arguments (RULES J2.2). `na` and `digits`
/// are `NULL` when missing. Returns the JSON string.
/// @noRd
#[extendr]
fn json_encode_impl(x: Robj, auto_unbox: Robj, null: Robj, na: Robj, digits: Robj) -> Robj {
    // SAFETY: an R entry point: R's main thread, arguments protected by R.
    unsafe {
        let res = (|| -> Result<Robj> {
            let opts = options::options_from_args(auto_unbox.get(), null.get(), na.get(), digits.get())?;
            let mut out = Vec::new();
            encode_payload(x.get(), &opts, &mut out)?;
            Ok(json_string(out))
        })();
        to_r(res)
    }
}

/// Same as `json_encode_impl()` but returns the UTF-8 bytes as a raw vector
/// (the form the server writes; no R string is built).
/// @noRd
#[extendr]
fn json_encode_raw_impl(x: Robj, auto_unbox: Robj, null: Robj, na: Robj, digits: Robj) -> Robj {
    // SAFETY: an R entry point: R's main thread, arguments protected by R.
    unsafe {
        let res = (|| -> Result<Robj> {
            let opts = options::options_from_args(auto_unbox.get(), null.get(), na.get(), digits.get())?;
            let mut buf = Vec::new();
            encode_payload(x.get(), &opts, &mut buf)?;
            let v = Rf_allocVector(SEXPTYPE::RAWSXP, buf.len() as R_xlen_t);
            std::ptr::copy_nonoverlapping(buf.as_ptr(), RAW(v), buf.len());
            Ok(Robj::from_sexp(v))
        })();
        to_r(res)
    }
}

/// Payload encoding with the current options. Returns the JSON string.
/// With `na_null` TRUE, missing values are `null` unless `mcplite.json.na`
/// is set (the results of package tools, RULES R8.5).
/// @noRd
#[extendr]
fn payload_json_impl(x: Robj, na_null: Robj) -> Robj {
    // SAFETY: an R entry point: R's main thread, arguments protected by R.
    unsafe {
        let res = (|| -> Result<Robj> {
            let mut opts = payload_options_from_r()?;
            let na_null = na_null.get();
            if opts.na == NaMode::Unset
                && ty(na_null) == SEXPTYPE::LGLSXP
                && xlen(na_null) == 1
                && *LOGICAL(na_null) == 1
            {
                opts.na = NaMode::Null;
            }
            let mut out = Vec::new();
            encode_payload(x.get(), &opts, &mut out)?;
            Ok(json_string(out))
        })();
        to_r(res)
    }
}

/// Fixed encoding. Returns the JSON string.
/// @noRd
#[extendr]
fn fixed_json_impl(x: Robj) -> Robj {
    // SAFETY: an R entry point: R's main thread, arguments protected by R.
    unsafe {
        let res = (|| -> Result<Robj> {
            let mut out = Vec::new();
            encode_fixed(x.get(), &mut out)?;
            Ok(json_string(out))
        })();
        to_r(res)
    }
}

/// Validate the payload options: `NULL` when valid.
/// @noRd
#[extendr]
fn payload_options_check_impl() -> Robj {
    // SAFETY: an R entry point: R's main thread.
    to_r(unsafe { payload_options_from_r() }.map(|_| Robj::from(())))
}

/// The jsonlite flavor in use, or set it from a version string (tests).
/// @noRd
#[extendr]
fn json_flavor_impl(version: Robj) -> String {
    // SAFETY: an R entry point: R's main thread, arguments protected by R.
    unsafe {
        if let Some(v) = scalar_string_bytes(version.get()) {
            *FLAVOR.lock().unwrap() = Flavor::from_version_str(&String::from_utf8_lossy(v));
        }
        format!("{:?}", flavor())
    }
}

extendr_module! {
    mod encode;
    fn json_encode_impl;
    fn json_encode_raw_impl;
    fn payload_json_impl;
    fn fixed_json_impl;
    fn payload_options_check_impl;
    fn json_flavor_impl;
}
