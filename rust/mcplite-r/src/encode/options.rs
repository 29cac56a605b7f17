//! Options of the payload encoding: jsonlite's `auto_unbox`, `null`, `na`
//! and `digits`, from the `mcplite.json.*` R options (RULES R6) or from the
//! arguments of the encoder's own entry point (J2.2).

use crate::error::{Error, Result};
use crate::rapi::*;

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

/// Options of the payload encoding (RULES R6).
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

thread_local! {
    static OPTION_SYMBOLS: std::cell::Cell<Option<[SEXP; 4]>> = const { std::cell::Cell::new(None) };
}

/// The symbols of the four payload options, installed once (R never frees
/// symbols); every tool call reads the options.
///
/// # Safety
/// Main thread.
unsafe fn option_symbols() -> [SEXP; 4] {
    OPTION_SYMBOLS.with(|c| match c.get() {
        Some(s) => s,
        None => {
            // SAFETY: main thread (caller's contract).
            let s = unsafe {
                [
                    sym("mcplite.json.null"),
                    sym("mcplite.json.na"),
                    sym("mcplite.json.auto_unbox"),
                    sym("mcplite.json.digits"),
                ]
            };
            c.set(Some(s));
            s
        }
    })
}

/// Read and validate the four `mcplite.json.*` options (RULES R6). The
/// error (kind `Option`) names the option in backticks and lists its
/// allowed values.
///
/// # Safety
/// Main thread.
pub unsafe fn payload_options_from_r() -> Result<EncodeOptions> {
    let mut o = EncodeOptions::default();
    // SAFETY: main thread (caller's contract); options are read, not
    // evaluated, and the values are protected by R's options list.
    unsafe {
        let [s_null, s_na, s_au, s_digits] = option_symbols();
        let null = Rf_GetOption1(s_null);
        if !is_nil(null) {
            match scalar_string_bytes(null) {
                Some(b"null") => o.null_list = false,
                Some(b"list") => o.null_list = true,
                _ => {
                    return Err(Error::option(format!(
                        "Option `mcplite.json.null` must be \"null\" or \"list\", not {}.",
                        describe(null)
                    )))
                }
            }
        }
        let na = Rf_GetOption1(s_na);
        if !is_nil(na) {
            o.na = match scalar_string_bytes(na) {
                Some(b"null") => NaMode::Null,
                Some(b"string") => NaMode::String,
                _ => {
                    return Err(Error::option(format!(
                        "Option `mcplite.json.na` must be unset (NULL), \"null\" or \"string\", not {}.",
                        describe(na)
                    )))
                }
            };
        }
        let au = Rf_GetOption1(s_au);
        if !is_nil(au) {
            if ty(au) == SEXPTYPE::LGLSXP && xlen(au) == 1 && *LOGICAL(au) != NA_LGL {
                o.auto_unbox = *LOGICAL(au) != 0;
            } else {
                return Err(Error::option(format!(
                    "Option `mcplite.json.auto_unbox` must be TRUE or FALSE, not {}.",
                    describe(au)
                )));
            }
        }
        let digits = Rf_GetOption1(s_digits);
        if !is_nil(digits) {
            o.digits = match digits_from_r(digits, true) {
                Some(d) => d,
                None => {
                    return Err(Error::option(format!(
                        "Option `mcplite.json.digits` must be unset (NULL), a whole number >= 0, NA (maximum precision) or I(n) with a whole number n >= 1, not {}.",
                        describe(digits)
                    )))
                }
            };
        }
    }
    Ok(o)
}

/// The options given as arguments to the encoder's entry point (RULES
/// J2.2); `na` and `digits` are `NULL` when missing. Errors are of kind
/// `Json`.
///
/// # Safety
/// The SEXP contract holds for every argument.
pub unsafe fn options_from_args(auto_unbox: SEXP, null: SEXP, na: SEXP, digits: SEXP) -> Result<EncodeOptions> {
    // SAFETY: caller's contract.
    unsafe {
        let auto_unbox = if ty(auto_unbox) == SEXPTYPE::LGLSXP && xlen(auto_unbox) >= 1 {
            *LOGICAL(auto_unbox) == 1
        } else {
            return Err(Error::json("`auto_unbox` must be TRUE or FALSE."));
        };
        let null_list = match scalar_string_bytes(null) {
            Some(b"null") => false,
            Some(b"list") => true,
            _ => return Err(Error::json("`null` must be \"null\" or \"list\".")),
        };
        let na = if is_nil(na) {
            NaMode::Unset
        } else {
            match scalar_string_bytes(na) {
                Some(b"null") => NaMode::Null,
                Some(b"string") => NaMode::String,
                _ => return Err(Error::json("`na` must be \"null\" or \"string\".")),
            }
        };
        let digits = if is_nil(digits) {
            Digits::Decimal(4)
        } else {
            digits_from_r(digits, false).ok_or_else(|| Error::json("`digits` must be a number, NA or I(n)."))?
        };
        Ok(EncodeOptions { auto_unbox, null_list, na, digits })
    }
}

/// Interpret an R `digits` value. `strict` applies the option rules of R6
/// (whole numbers, n >= 0, I(n) with n >= 1); otherwise any number is
/// accepted and truncated like C's `asInteger()`.
///
/// # Safety
/// The SEXP contract holds for `d`.
unsafe fn digits_from_r(d: SEXP, strict: bool) -> Option<Digits> {
    // SAFETY: caller's contract; the data pointer is read only for the
    // matching type and a length of 1.
    let (asis, v) = unsafe {
        let asis = has_class(d, b"AsIs");
        if xlen(d) != 1 {
            return None;
        }
        let v: f64 = match ty(d) {
            SEXPTYPE::LGLSXP => {
                if *LOGICAL(d) == NA_LGL {
                    return Some(Digits::Max);
                }
                return None;
            }
            SEXPTYPE::INTSXP => {
                let i = *INTEGER(d);
                if i == NA_INT {
                    return Some(Digits::Max);
                }
                i as f64
            }
            SEXPTYPE::REALSXP => {
                let r = *REAL(d);
                if r.is_nan() {
                    return Some(Digits::Max);
                }
                r
            }
            _ => return None,
        };
        (asis, v)
    };
    digits_from_number(v, asis, strict)
}

/// The `digits` a finite number gives (see [`digits_from_r`]).
fn digits_from_number(v: f64, asis: bool, strict: bool) -> Option<Digits> {
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
///
/// # Safety
/// The SEXP contract holds for `x`.
unsafe fn describe(x: SEXP) -> String {
    // SAFETY: caller's contract.
    unsafe {
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_rules() {
        assert_eq!(digits_from_number(4.0, false, true), Some(Digits::Decimal(4)));
        assert_eq!(digits_from_number(0.0, false, true), Some(Digits::Decimal(0)));
        assert_eq!(digits_from_number(6.0, true, true), Some(Digits::Signif(6)));
        // options: whole numbers only, I(n) with n >= 1
        assert_eq!(digits_from_number(2.5, false, true), None);
        assert_eq!(digits_from_number(-1.0, false, true), None);
        assert_eq!(digits_from_number(0.0, true, true), None);
        assert_eq!(digits_from_number(f64::INFINITY, false, false), None);
        // arguments: truncated like asInteger(); out of int range is NA
        assert_eq!(digits_from_number(2.9, false, false), Some(Digits::Decimal(2)));
        assert_eq!(digits_from_number(3e9, false, false), Some(Digits::Max));
    }
}
