//! R strings (CHARSXPs) to UTF-8 and back.
//!
//! [`utf8_of`] / [`push_utf8`] give the bytes `enc2utf8()` gives, which are
//! the bytes `jsonlite::toJSON()` writes (it calls `enc2utf8()` first):
//!
//! * ASCII and strings marked UTF-8: as stored (a string marked UTF-8 that
//!   is not valid UTF-8 stays so; jsonlite writes its bytes unchanged);
//! * latin1: translated (R reads latin1 as Windows-1252: 0x80 is the euro
//!   sign);
//! * native strings: as stored when the locale is UTF-8 and they are valid
//!   UTF-8; otherwise translated by R, which writes every byte it cannot
//!   convert as `<xx>` (two hex digits), so `"caf\xe9"` becomes `caf<e9>`;
//! * "bytes": an error, as in R ([`utf8_or_bytes`] gives the bytes as
//!   stored instead, for the one place jsonlite writes them: a value that is
//!   that one string).
//!
//! Text that goes to the client must be valid UTF-8 whatever R holds:
//! [`text`] and [`into_valid_utf8`] additionally write any byte that is
//! still invalid as `<xx>`, the form R itself uses.

use std::borrow::Cow;
use std::ffi::{c_char, c_int, CStr};

use super::*;
use crate::error::{Error, Result};

/// The bytes of CHARSXP `c` exactly as stored (no translation).
///
/// # Safety
/// The SEXP contract holds for `c`, a CHARSXP; the slice is valid while `c`
/// is protected.
#[inline]
pub unsafe fn char_bytes<'a>(c: SEXP) -> &'a [u8] {
    // SAFETY: caller's contract; R_CHAR points at LENGTH(c) bytes.
    unsafe { std::slice::from_raw_parts(R_CHAR(c) as *const u8, LENGTH(c) as usize) }
}

/// Is the C library's character type UTF-8 (then native strings are UTF-8,
/// as R itself decides when the locale is set)? Not cached: R code can
/// change the locale at any time.
#[cfg(unix)]
pub fn utf8_locale() -> bool {
    // SAFETY: nl_langinfo returns a pointer to a static string, valid until
    // the next call that changes the locale (none here).
    unsafe {
        let p = libc::nl_langinfo(libc::CODESET);
        if p.is_null() {
            return false;
        }
        let s = CStr::from_ptr(p).to_bytes();
        s.eq_ignore_ascii_case(b"UTF-8") || s.eq_ignore_ascii_case(b"UTF8")
    }
}

/// Windows: the C runtime's locale code page is UTF-8 (65001), as with R
/// 4.2 and later in a UTF-8 locale.
#[cfg(windows)]
pub fn utf8_locale() -> bool {
    extern "C" {
        fn ___lc_codepage_func() -> std::ffi::c_uint;
    }
    // SAFETY: reads the current C locale's code page.
    unsafe { ___lc_codepage_func() == 65001 }
}

pub(crate) const BYTES_ERROR: &str = "translating strings with \"bytes\" encoding is not allowed";

/// The UTF-8 bytes of CHARSXP `c` as `enc2utf8()` gives them (module
/// documentation), borrowed when no translation is needed, else written to
/// `scratch`.
///
/// # Safety
/// The SEXP contract holds for `c`, a CHARSXP that is not `NA`. May call
/// `Rf_translateCharUTF8()`, which can raise an R error (allocation, or a
/// missing converter in an unusual locale).
pub unsafe fn utf8_of<'a>(c: SEXP, scratch: &'a mut Vec<u8>) -> Result<&'a [u8]> {
    // SAFETY: caller's contract.
    unsafe {
        let b: &'a [u8] = char_bytes(c);
        if b.is_ascii() {
            return Ok(b);
        }
        match Rf_getCharCE(c) {
            CE_UTF8 => Ok(b),
            CE_BYTES => Err(Error::json(BYTES_ERROR)),
            CE_LATIN1 if !has_c1_controls(b) => {
                scratch.clear();
                latin1_to_utf8(b, scratch);
                Ok(&scratch[..])
            }
            CE_NATIVE if utf8_locale() && std::str::from_utf8(b).is_ok() => Ok(b),
            _ => {
                scratch.clear();
                translate_utf8(c, scratch);
                Ok(&scratch[..])
            }
        }
    }
}

/// As [`utf8_of`], except that a string marked "bytes" gives its bytes as
/// stored and `true` (where [`utf8_of`] fails), so that the caller can write
/// them where jsonlite does and fail everywhere else.
///
/// # Safety
/// As [`utf8_of`].
pub unsafe fn utf8_or_bytes<'a>(c: SEXP, scratch: &'a mut Vec<u8>) -> Result<(&'a [u8], bool)> {
    // SAFETY: caller's contract.
    unsafe {
        let b: &'a [u8] = char_bytes(c);
        if !b.is_ascii() && Rf_getCharCE(c) == CE_BYTES {
            return Ok((b, true));
        }
        utf8_of(c, scratch).map(|b| (b, false))
    }
}

/// Append the UTF-8 bytes of CHARSXP `c` ([`utf8_of`]) to `out`.
///
/// # Safety
/// As [`utf8_of`].
pub unsafe fn push_utf8(c: SEXP, out: &mut Vec<u8>) -> Result<()> {
    let mut scratch = Vec::new();
    // SAFETY: caller's contract.
    let b = unsafe { utf8_of(c, &mut scratch)? };
    out.extend_from_slice(b);
    Ok(())
}

/// The text of CHARSXP `c` for the client: [`utf8_of`], with any byte that
/// is still not valid UTF-8 written as `<xx>`.
///
/// # Safety
/// As [`utf8_of`].
pub unsafe fn text(c: SEXP) -> Result<String> {
    let mut scratch = Vec::new();
    // SAFETY: caller's contract.
    let b = unsafe { utf8_of(c, &mut scratch)? };
    Ok(match std::str::from_utf8(b) {
        Ok(s) => s.to_owned(),
        Err(_) => into_valid_utf8(b.to_vec()),
    })
}

/// `bytes` as a `String`, every byte of an invalid UTF-8 sequence written
/// as `<xx>` (lower-case hex, R's notation for bytes it cannot convert).
/// No copy when `bytes` is valid.
pub fn into_valid_utf8(bytes: Vec<u8>) -> String {
    match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => escape_invalid(e.as_bytes()).into_owned(),
    }
}

/// `bytes` with every byte of each invalid UTF-8 sequence written as
/// `<xx>`. Each invalid byte is replaced on its own, which is what R's
/// translation does (it converts byte by byte after a failure).
pub fn escape_invalid(bytes: &[u8]) -> Cow<'_, str> {
    if let Ok(s) = std::str::from_utf8(bytes) {
        return Cow::Borrowed(s);
    }
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() + 16);
    let mut rest = bytes;
    loop {
        match std::str::from_utf8(rest) {
            Ok(s) => {
                out.push_str(s);
                break;
            }
            Err(e) => {
                let (valid, after) = rest.split_at(e.valid_up_to());
                out.push_str(std::str::from_utf8(valid).unwrap_or_default());
                // None: an incomplete sequence at the end
                let bad = e.error_len().unwrap_or(after.len());
                for &b in &after[..bad] {
                    out.push('<');
                    out.push(HEX[(b >> 4) as usize] as char);
                    out.push(HEX[(b & 15) as usize] as char);
                    out.push('>');
                }
                rest = &after[bad..];
            }
        }
    }
    Cow::Owned(out)
}

/// Does latin1 text contain bytes 0x80-0x9F? R reads latin1 as
/// Windows-1252, where these are letters and signs, not C1 controls; such
/// strings are translated by R itself.
fn has_c1_controls(b: &[u8]) -> bool {
    b.iter().any(|&x| (0x80..0xa0).contains(&x))
}

/// ISO-8859-1 bytes (no 0x80-0x9F, see [`has_c1_controls`]) to UTF-8.
fn latin1_to_utf8(b: &[u8], out: &mut Vec<u8>) {
    out.reserve(b.len() + b.len() / 2);
    for &ch in b {
        if ch < 0x80 {
            out.push(ch);
        } else {
            out.push(0xc0 | (ch >> 6));
            out.push(0x80 | (ch & 0x3f));
        }
    }
}

/// `translateCharUTF8(c)` appended to `out` (R's allocation is released).
///
/// # Safety
/// As [`utf8_of`]; `c` is not "bytes"-encoded.
unsafe fn translate_utf8(c: SEXP, out: &mut Vec<u8>) {
    // SAFETY: caller's contract; the translation lives in R_alloc memory
    // until vmaxset() releases it, after it was copied.
    unsafe {
        let v = vmaxget();
        let p = Rf_translateCharUTF8(c);
        out.extend_from_slice(CStr::from_ptr(p).to_bytes());
        vmaxset(v);
    }
}

/// A CHARSXP marked UTF-8 holding `s` (which must not contain NUL).
/// Unprotected.
///
/// # Safety
/// Main thread. Allocates: may raise an R error when memory is exhausted or
/// `s` is longer than R's string limit (2^31 - 1 bytes).
pub unsafe fn mk_char(s: &[u8]) -> SEXP {
    // SAFETY: pointer and length describe `s`.
    unsafe { Rf_mkCharLenCE(s.as_ptr() as *const c_char, s.len() as c_int, cetype_t::CE_UTF8) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_bytes_become_hex_like_r() {
        // R (enc2utf8() in a UTF-8 locale) gives exactly these
        assert_eq!(escape_invalid(b"caf\xe9"), "caf<e9>");
        assert_eq!(escape_invalid(b"a\xff\xfeb\xc3\xa9\xe2\x82"), "a<ff><fe>b\u{e9}<e2><82>");
        assert_eq!(escape_invalid(b"\xed\xa0\x80"), "<ed><a0><80>");
        assert_eq!(escape_invalid(b"\xc0\xaf"), "<c0><af>");
        assert_eq!(escape_invalid(b"\xe2\x28\xa1"), "<e2>(<a1>");
        assert!(matches!(escape_invalid("d\u{e9}j\u{e0}".as_bytes()), Cow::Borrowed(_)));
    }

    #[test]
    fn into_valid_utf8_keeps_valid_text() {
        assert_eq!(into_valid_utf8(b"plain".to_vec()), "plain");
        assert_eq!(into_valid_utf8("\u{65e5}\u{672c}".as_bytes().to_vec()), "\u{65e5}\u{672c}");
        assert_eq!(into_valid_utf8(b"{\"a\":\"caf\xe9\"}".to_vec()), "{\"a\":\"caf<e9>\"}");
    }

    #[test]
    fn latin1_letters() {
        let mut out = Vec::new();
        latin1_to_utf8(b"caf\xe9 na\xefve \xa0", &mut out);
        assert_eq!(out, "caf\u{e9} na\u{ef}ve \u{a0}".as_bytes());
        assert!(!has_c1_controls(b"caf\xe9"));
        assert!(has_c1_controls(b"\x80 euro"));
    }
}
