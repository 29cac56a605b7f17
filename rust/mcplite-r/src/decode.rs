//! JSON -> R (RULES J6): the values of tool call arguments, and the call
//! `tool(name = value, ...)` built from them; the client's results
//! (`crate::client`) and JSON text read in R (`json_decode()` in
//! `R/decode.R`, [`json_decode_impl`]) are converted by the same
//! [`value`]. The encoder (`crate::encode`) is the other direction.
//!
//! Every function here runs under [`crate::rapi::eval::toplevel`] (the tool
//! host) and allocates with R entry points that raise an R error only when
//! memory is exhausted; the recursion holds only borrowed data, so such a
//! jump skips no destructor. Names R cannot bind are rejected before they
//! reach R: [`check_arg_name`].

use extendr_api::prelude::*;
use serde_json::{Map, Value};

use crate::error::{to_r, Error, Kind, Result};
use crate::rapi::*;

/// The longest symbol R accepts, in bytes (R's "variable names are limited
/// to 10000 bytes").
const MAX_NAME_BYTES: usize = 10000;

/// Can `name` be an argument name of an R call? R cannot bind an empty name
/// (`f("" = 1)` is a parse error) nor one longer than its symbol limit.
/// Other arguments that do not fit the function are left to R, which
/// reports them ("unused argument ...").
pub fn check_arg_name(name: &str) -> Result<()> {
    if name.is_empty() {
        return Err(Error::new(
            Kind::Arguments,
            "The arguments contain an empty name (\"\"); every argument must be named as in the tool's input schema.",
        ));
    }
    if name.len() > MAX_NAME_BYTES {
        return Err(Error::new(
            Kind::Arguments,
            format!(
                "The arguments contain a name of {} bytes; R accepts names of at most {MAX_NAME_BYTES} bytes.",
                name.len()
            ),
        ));
    }
    Ok(())
}

/// The R value of a JSON value: `null` -> `NULL`, booleans -> logical,
/// numbers -> integer or double (below), strings -> character (UTF-8),
/// arrays -> unnamed lists, objects -> named lists. Unprotected.
///
/// # Safety
/// Main thread; under an R entry point or `toplevel()` (allocates). Strings
/// in `v` contain no NUL (the engine rejects such arguments).
pub unsafe fn value(v: &Value) -> SEXP {
    // SAFETY: caller's contract; each new object is protected while its
    // children are allocated.
    unsafe {
        match v {
            Value::Null => R_NilValue,
            Value::Bool(b) => Rf_ScalarLogical(*b as i32),
            Value::Number(n) => number(n.as_str()),
            Value::String(s) => mk_string(s.as_bytes()),
            Value::Array(a) => {
                let mut prot = Protect::new();
                let out = prot.add(Rf_allocVector(SEXPTYPE::VECSXP, a.len() as R_xlen_t));
                for (i, e) in a.iter().enumerate() {
                    SET_VECTOR_ELT(out, i as R_xlen_t, value(e));
                }
                out
            }
            Value::Object(m) => object(m),
        }
    }
}

/// Integer or double from a JSON number token (serde_json keeps it:
/// `arbitrary_precision`). No fraction or exponent and within
/// +-2147483647 -> integer, so `-0` is `0L`; anything else -> double, with
/// +-Inf beyond its range.
///
/// # Safety
/// As [`value`].
unsafe fn number(token: &str) -> SEXP {
    if let Some(i) = integer_token(token) {
        // SAFETY: caller's contract.
        return unsafe { Rf_ScalarInteger(i) };
    }
    // SAFETY: caller's contract.
    unsafe { Rf_ScalarReal(token.parse::<f64>().unwrap_or(f64::NAN)) }
}

/// The `int` a number token stands for, when R gets an integer for it.
fn integer_token(token: &str) -> Option<i32> {
    if token.contains(['.', 'e', 'E']) {
        return None;
    }
    token.parse::<i32>().ok().filter(|&i| i != i32::MIN)
}

/// A named list from a JSON object. Unprotected.
///
/// # Safety
/// As [`value`].
unsafe fn object(m: &Map<String, Value>) -> SEXP {
    // SAFETY: caller's contract; `out` and `names` are protected while the
    // members are converted.
    unsafe {
        let mut prot = Protect::new();
        let out = prot.add(Rf_allocVector(SEXPTYPE::VECSXP, m.len() as R_xlen_t));
        let names = prot.add(Rf_allocVector(SEXPTYPE::STRSXP, m.len() as R_xlen_t));
        for (i, (k, e)) in m.iter().enumerate() {
            SET_STRING_ELT(names, i as R_xlen_t, strings::mk_char(k.as_bytes()));
            SET_VECTOR_ELT(out, i as R_xlen_t, value(e));
        }
        Rf_setAttrib(out, R_NamesSymbol, names);
        out
    }
}

/// The call `fun(name = value, ...)` with the arguments in their JSON order.
/// `fun` is the tool's symbol (or the function itself). Unprotected.
/// Fails, before allocating anything, when an argument name cannot be bound
/// ([`check_arg_name`]).
///
/// # Safety
/// As [`value`]; the SEXP contract holds for `fun`.
pub unsafe fn call(fun: SEXP, args: Option<&Map<String, Value>>) -> Result<SEXP> {
    let Some(args) = args else {
        // SAFETY: caller's contract.
        return Ok(unsafe { Rf_lcons(fun, R_NilValue) });
    };
    for k in args.keys() {
        check_arg_name(k)?;
    }
    // SAFETY: caller's contract; the growing argument list is protected.
    unsafe {
        let mut prot = Protect::new();
        let mut tail = R_NilValue;
        for (k, v) in args.iter().rev() {
            let val = prot.add(value(v));
            tail = prot.add(Rf_lcons(val, tail));
            let name = prot.add(strings::mk_char(k.as_bytes()));
            SET_TAG(tail, Rf_installChar(name));
        }
        Ok(Rf_lcons(fun, tail))
    }
}

/// JSON text -> R value (RULES J6), for JSON read in R: the text is read
/// as the values of a protocol line are (`mcplite_engine::message::read_json`)
/// and converted by [`value`]. Text that is not one JSON value, and text
/// holding U+0000 (J6.2), is an error of kind `json` saying why.
/// @noRd
#[extendr]
fn json_decode_impl(text: Robj) -> Robj {
    // SAFETY: an R entry point: R's main thread, arguments protected by R.
    unsafe {
        let res = (|| -> Result<Robj> {
            let bytes = scalar_string_bytes(text.get())
                .ok_or_else(|| Error::internal("json_decode_impl() needs a single string"))?;
            let text = std::str::from_utf8(bytes).map_err(|_| Error::json("the text is not valid UTF-8"))?;
            let v = mcplite_engine::message::read_json(text).map_err(Error::json)?;
            if mcplite_engine::message::contains_nul(&v) {
                return Err(Error::json("it contains a U+0000 character, which R strings cannot hold"));
            }
            // The allocations in `value` raise an R error only when memory
            // is exhausted; `v` is then leaked, nothing else is skipped.
            Ok(Robj::from_sexp(value(&v)))
        })();
        to_r(res)
    }
}

extendr_module! {
    mod decode;
    fn json_decode_impl;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argument_names_r_cannot_bind() {
        let e = check_arg_name("").unwrap_err();
        assert_eq!(e.kind(), Kind::Arguments);
        assert!(e.message().contains("empty name"), "{}", e.message());
        assert!(!e.message().contains("inside mcplite"));
        assert!(check_arg_name(&"x".repeat(10000)).is_ok());
        let e = check_arg_name(&"x".repeat(10001)).unwrap_err();
        assert!(e.message().contains("10001 bytes"), "{}", e.message());
        assert!(check_arg_name("x").is_ok());
        assert!(check_arg_name("...").is_ok());
        assert!(check_arg_name("gr\u{f6}\u{df}e").is_ok());
    }

    #[test]
    fn integer_tokens() {
        assert_eq!(integer_token("1"), Some(1));
        assert_eq!(integer_token("-0"), Some(0));
        assert_eq!(integer_token("2147483647"), Some(i32::MAX));
        assert_eq!(integer_token("-2147483647"), Some(-i32::MAX));
        // NA_integer_ in R: a double instead
        assert_eq!(integer_token("-2147483648"), None);
        assert_eq!(integer_token("2147483648"), None);
        assert_eq!(integer_token("1.0"), None);
        assert_eq!(integer_token("1e3"), None);
        assert_eq!(integer_token("1E3"), None);
    }
}
