//! R value -> JSON: the payload encoding (byte-for-byte `jsonlite::toJSON()`
//! of the installed jsonlite, SPEC J1.1/J2) and the fixed encoding (J1.2/J5).
//!
//! The encoder walks SEXPs directly. It mirrors jsonlite's `asJSON` S4
//! methods: dispatch on the class vector (an unknown first class is dropped,
//! as jsonlite's `ANY` method does), per-class `na` defaults, `collapse =
//! FALSE` "pieces" for data frame cells and `unbox()`, and the `na`/`oldna`
//! hand-over between data frames, lists and matrices. The few conversions
//! that are R semantics rather than JSON (formatting dates and times,
//! `prettyNum()` of complex numbers, `deparse()` of functions) are evaluated
//! in R with `R_tryEvalSilent`; nothing here can longjmp through Rust frames.

mod rapi;
mod walk;

use extendr_api::prelude::*;
use extendr_ffi::{SEXP, SEXPTYPE};
use mcplite_engine::numfmt::Flavor;
use rapi::*;

pub use walk::Encoder;

/// jsonlite's `na` argument for the payload encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NaMode {
    /// Argument omitted: jsonlite's per-class defaults.
    Unset,
    /// `na = "null"`.
    Null,
    /// `na = "string"`.
    String,
}

/// jsonlite's `digits` argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Digits {
    /// `digits = n`: decimal places (jsonlite's default is 4).
    Decimal(i32),
    /// `digits = NA`: maximum precision.
    Max,
    /// `digits = I(n)`: significant digits.
    Signif(i32),
}

/// Options of the payload encoding (SPEC R6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EncodeOptions {
    pub auto_unbox: bool,
    /// `null = "list"` (`NULL` -> `{}`) when true, `null = "null"` otherwise.
    pub null_list: bool,
    pub na: NaMode,
    pub digits: Digits,
}

impl Default for EncodeOptions {
    fn default() -> Self {
        EncodeOptions { auto_unbox: true, null_list: false, na: NaMode::Unset, digits: Digits::Decimal(4) }
    }
}

static FLAVOR: std::sync::Mutex<Option<Flavor>> = std::sync::Mutex::new(None);

/// The jsonlite flavor to reproduce: detected from the installed jsonlite
/// the first time it is needed (SPEC J2.3), unless set explicitly.
pub(crate) unsafe fn flavor() -> Flavor {
    if let Some(f) = *FLAVOR.lock().unwrap() {
        return f;
    }
    let f = detect_flavor().unwrap_or(Flavor::V1_8_7);
    *FLAVOR.lock().unwrap() = Some(f);
    f
}

unsafe fn detect_flavor() -> Option<Flavor> {
    let mut prot = Prot::new();
    let pkg = prot.add(mk_string_utf8(b"jsonlite"));
    let v = r_call(&mut prot, "utils::packageVersion", &[(None, pkg)]).ok()?;
    let s = r_call(&mut prot, "as.character", &[(None, v)]).ok()?;
    if ty(s) != SEXPTYPE::STRSXP || xlen(s) != 1 {
        return None;
    }
    Flavor::from_version_str(&String::from_utf8_lossy(char_bytes(extendr_ffi::STRING_ELT(s, 0))))
}

unsafe fn mk_string_utf8(s: &[u8]) -> SEXP {
    let mut prot = Prot::new();
    let c = prot.add(mk_char(s));
    let v = extendr_ffi::Rf_allocVector(SEXPTYPE::STRSXP, 1);
    extendr_ffi::SET_STRING_ELT(v, 0, c);
    v
}

/// Payload encoding of `x` (SPEC J1.1), appended to `out`.
///
/// # Safety
/// `x` must be a valid, protected SEXP; call on R's main thread.
pub unsafe fn encode_payload(x: SEXP, opts: &EncodeOptions, out: &mut Vec<u8>) -> Result<(), String> {
    let mut enc = Encoder::payload(opts, flavor());
    enc.encode(x, out)
}

/// Fixed encoding of `x` (SPEC J1.2, J5), appended to `out`.
///
/// # Safety
/// `x` must be a valid, protected SEXP; call on R's main thread.
pub unsafe fn encode_fixed(x: SEXP, out: &mut Vec<u8>) -> Result<(), String> {
    let mut enc = Encoder::fixed();
    enc.encode(x, out)
}

thread_local! {
    static OPTION_SYMBOLS: std::cell::Cell<Option<[SEXP; 4]>> = const { std::cell::Cell::new(None) };
}

/// The symbols of the four payload options, installed once (R never frees
/// symbols); every tool call reads the options.
unsafe fn option_symbols() -> [SEXP; 4] {
    OPTION_SYMBOLS.with(|c| match c.get() {
        Some(s) => s,
        None => {
            let s = [
                sym("mcplite.json.null"),
                sym("mcplite.json.na"),
                sym("mcplite.json.auto_unbox"),
                sym("mcplite.json.digits"),
            ];
            c.set(Some(s));
            s
        }
    })
}

/// Read and validate the four `mcplite.json.*` options (SPEC R6). The error
/// message names the option in backticks and lists its allowed values.
///
/// # Safety
/// Call on R's main thread.
pub unsafe fn payload_options_from_r() -> Result<EncodeOptions, String> {
    let mut o = EncodeOptions::default();
    let [s_null, s_na, s_au, s_digits] = option_symbols();
    let null = Rf_GetOption1(s_null);
    if !is_nil(null) {
        match scalar_string(null).as_deref() {
            Some("null") => o.null_list = false,
            Some("list") => o.null_list = true,
            _ => {
                return Err(format!("Option `mcplite.json.null` must be \"null\" or \"list\", not {}.", describe(null)))
            }
        }
    }
    let na = Rf_GetOption1(s_na);
    if !is_nil(na) {
        o.na = match scalar_string(na).as_deref() {
            Some("null") => NaMode::Null,
            Some("string") => NaMode::String,
            _ => {
                return Err(format!(
                    "Option `mcplite.json.na` must be unset (NULL), \"null\" or \"string\", not {}.",
                    describe(na)
                ))
            }
        };
    }
    let au = Rf_GetOption1(s_au);
    if !is_nil(au) {
        if ty(au) == SEXPTYPE::LGLSXP && xlen(au) == 1 && *extendr_ffi::LOGICAL(au) != NA_LGL {
            o.auto_unbox = *extendr_ffi::LOGICAL(au) != 0;
        } else {
            return Err(format!("Option `mcplite.json.auto_unbox` must be TRUE or FALSE, not {}.", describe(au)));
        }
    }
    let digits = Rf_GetOption1(s_digits);
    if !is_nil(digits) {
        o.digits = match digits_from_r(digits, true) {
            Some(d) => d,
            None => {
                return Err(format!(
                    "Option `mcplite.json.digits` must be unset (NULL), a whole number >= 0, NA (maximum precision) or I(n) with a whole number n >= 1, not {}.",
                    describe(digits)
                ))
            }
        };
    }
    Ok(o)
}

unsafe fn scalar_string(x: SEXP) -> Option<String> {
    if ty(x) != SEXPTYPE::STRSXP || xlen(x) != 1 {
        return None;
    }
    let c = extendr_ffi::STRING_ELT(x, 0);
    if c == extendr_ffi::R_NaString {
        return None;
    }
    Some(String::from_utf8_lossy(char_bytes(c)).into_owned())
}

/// Interpret an R `digits` value. `strict` applies the option rules of R6
/// (whole numbers, n >= 0, I(n) with n >= 1); otherwise any number is
/// accepted and truncated like C's `asInteger()`.
unsafe fn digits_from_r(d: SEXP, strict: bool) -> Option<Digits> {
    let asis = walk::inherits(d, b"AsIs");
    if xlen(d) != 1 {
        return None;
    }
    let v: f64 = match ty(d) {
        SEXPTYPE::LGLSXP => {
            if *extendr_ffi::LOGICAL(d) == NA_LGL {
                return Some(Digits::Max);
            }
            return None;
        }
        SEXPTYPE::INTSXP => {
            let i = *extendr_ffi::INTEGER(d);
            if i == NA_INT {
                return Some(Digits::Max);
            }
            i as f64
        }
        SEXPTYPE::REALSXP => {
            let r = *extendr_ffi::REAL(d);
            if r.is_nan() {
                return Some(Digits::Max);
            }
            r
        }
        _ => return None,
    };
    if !v.is_finite() {
        return None;
    }
    if strict && (v != v.trunc() || v < if asis { 1.0 } else { 0.0 }) {
        return None;
    }
    // C's asInteger(): out of the int range is NA, which jsonlite prints
    // with maximum precision
    if v.trunc() >= 2147483648.0 || v.trunc() <= -2147483648.0 {
        return Some(Digits::Max);
    }
    let n = v.trunc() as i32;
    Some(if asis { Digits::Signif(n) } else { Digits::Decimal(n) })
}

/// A short description of an R value for error messages.
unsafe fn describe(x: SEXP) -> String {
    if is_nil(x) {
        return "NULL".into();
    }
    let cls = class1(x);
    if cls == "function" {
        return "a function".into();
    }
    let atomic = matches!(
        ty(x),
        SEXPTYPE::LGLSXP
            | SEXPTYPE::INTSXP
            | SEXPTYPE::REALSXP
            | SEXPTYPE::CPLXSXP
            | SEXPTYPE::STRSXP
            | SEXPTYPE::RAWSXP
    );
    if atomic && xlen(x) == 1 {
        return format!("a {cls} scalar");
    }
    format!("an object of class <{cls}> and length {}", xlen(x))
}

// ---------------------------------------------------------------------------
// R entry points (unexported R functions in R/json.R call these)

/// Turn an encoder result into an R value: the JSON string, or a list
/// holding the error message (R raises it as a classed error).
unsafe fn result_to_r(res: Result<Vec<u8>, String>) -> Robj {
    let mut prot = Prot::new();
    let sexp = match res {
        Ok(buf) => {
            let c = prot.add(mk_char(&buf));
            drop(buf);
            let v = prot.add(extendr_ffi::Rf_allocVector(SEXPTYPE::STRSXP, 1));
            extendr_ffi::SET_STRING_ELT(v, 0, c);
            v
        }
        Err(msg) => {
            let msg = msg.replace('\0', "");
            let c = prot.add(mk_char(msg.as_bytes()));
            let s = prot.add(extendr_ffi::Rf_allocVector(SEXPTYPE::STRSXP, 1));
            extendr_ffi::SET_STRING_ELT(s, 0, c);
            let v = prot.add(extendr_ffi::Rf_allocVector(SEXPTYPE::VECSXP, 1));
            extendr_ffi::SET_VECTOR_ELT(v, 0, s);
            v
        }
    };
    Robj::from_sexp(sexp)
}

/// Payload encoding with explicit R arguments (SPEC J2.2); `na` and
/// `digits` are `NULL` when missing.
unsafe fn json_encode_args(
    x: &Robj,
    auto_unbox: &Robj,
    null: &Robj,
    na: &Robj,
    digits: &Robj,
) -> Result<Vec<u8>, String> {
    let au = auto_unbox.get();
    let auto_unbox = if ty(au) == SEXPTYPE::LGLSXP && xlen(au) >= 1 {
        *extendr_ffi::LOGICAL(au) == 1
    } else {
        return Err("`auto_unbox` must be TRUE or FALSE.".into());
    };
    let null_list = match scalar_string(null.get()).as_deref() {
        Some("null") => false,
        Some("list") => true,
        _ => return Err("`null` must be \"null\" or \"list\".".into()),
    };
    let na = if is_nil(na.get()) {
        NaMode::Unset
    } else {
        match scalar_string(na.get()).as_deref() {
            Some("null") => NaMode::Null,
            Some("string") => NaMode::String,
            _ => return Err("`na` must be \"null\" or \"string\".".into()),
        }
    };
    let digits = if is_nil(digits.get()) {
        Digits::Decimal(4)
    } else {
        digits_from_r(digits.get(), false).ok_or_else(|| "`digits` must be a number, NA or I(n).".to_string())?
    };
    let opts = EncodeOptions { auto_unbox, null_list, na, digits };
    let mut out = Vec::new();
    encode_payload(x.get(), &opts, &mut out)?;
    Ok(out)
}

/// Payload encoding with explicit arguments (SPEC J2.2). `na` and `digits`
/// are `NULL` when missing. Returns the JSON string, or `list(message)`.
/// @noRd
#[extendr]
fn json_encode_impl(x: Robj, auto_unbox: Robj, null: Robj, na: Robj, digits: Robj) -> Robj {
    unsafe { result_to_r(json_encode_args(&x, &auto_unbox, &null, &na, &digits)) }
}

/// Same as `json_encode_impl()` but returns the UTF-8 bytes as a raw vector
/// (the form the server writes; no R string is built).
/// @noRd
#[extendr]
fn json_encode_raw_impl(x: Robj, auto_unbox: Robj, null: Robj, na: Robj, digits: Robj) -> Robj {
    unsafe {
        match json_encode_args(&x, &auto_unbox, &null, &na, &digits) {
            Ok(buf) => {
                let v = extendr_ffi::Rf_allocVector(SEXPTYPE::RAWSXP, buf.len() as extendr_ffi::R_xlen_t);
                let mut prot = Prot::new();
                prot.add(v);
                std::ptr::copy_nonoverlapping(buf.as_ptr(), extendr_ffi::RAW(v), buf.len());
                Robj::from_sexp(v)
            }
            Err(e) => result_to_r(Err(e)),
        }
    }
}

/// Payload encoding with the current options. Returns the JSON string, or
/// `list(message)`.
/// @noRd
#[extendr]
fn payload_json_impl(x: Robj) -> Robj {
    unsafe {
        let res = (|| -> Result<Vec<u8>, String> {
            let opts = payload_options_from_r()?;
            let mut out = Vec::new();
            encode_payload(x.get(), &opts, &mut out)?;
            Ok(out)
        })();
        result_to_r(res)
    }
}

/// Fixed encoding. Returns the JSON string, or `list(message)`.
/// @noRd
#[extendr]
fn fixed_json_impl(x: Robj) -> Robj {
    unsafe {
        let res = (|| -> Result<Vec<u8>, String> {
            let mut out = Vec::new();
            encode_fixed(x.get(), &mut out)?;
            Ok(out)
        })();
        result_to_r(res)
    }
}

/// Validate the payload options: `NULL` when valid, else the message.
/// @noRd
#[extendr]
fn payload_options_check_impl() -> Robj {
    unsafe {
        match payload_options_from_r() {
            Ok(_) => Robj::from(()),
            Err(msg) => Robj::from(msg),
        }
    }
}

/// The jsonlite flavor in use, or set it from a version string (tests).
/// @noRd
#[extendr]
fn json_flavor_impl(version: Robj) -> String {
    unsafe {
        if let Some(v) = scalar_string(version.get()) {
            *FLAVOR.lock().unwrap() = Flavor::from_version_str(&v);
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
