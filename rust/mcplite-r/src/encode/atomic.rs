//! Atomic vectors and the classes jsonlite prints as one: numbers, logicals,
//! strings, factors, `integer64`, raw vectors and blobs (base64), complex
//! numbers, dates and times, `json`, functions (deparsed).

use mcplite_engine::json::{write_shortest_f64, write_str_bytes};
use mcplite_engine::numfmt;

use super::dispatch::{Cls, Kind};
use super::encoder::{Ctx, Encoder, Na, NumMode, Pieces};
use super::options::Digits;
use crate::error::{Error, Result};
use crate::rapi::eval::r_call;
use crate::rapi::strings::{char_bytes, utf8_of, utf8_or_bytes};
use crate::rapi::*;

/// An atomic vector ready to print element by element. The pointers point
/// into R vectors the caller keeps protected.
pub(super) enum Atom {
    Int(*const i32, usize),
    Real(*const f64, usize),
    Lgl(*const i32, usize),
    Str(SEXP, usize),
    Factor(*const i32, usize, Vec<Small>),
    Int64(*const i64, usize),
    Pre(Pieces),
}

impl Atom {
    pub fn len(&self) -> usize {
        match self {
            Atom::Int(_, n) | Atom::Real(_, n) | Atom::Lgl(_, n) | Atom::Str(_, n) | Atom::Int64(_, n) => *n,
            Atom::Factor(_, n, _) => *n,
            Atom::Pre(p) => p.len(),
        }
    }

    /// jsonlite's default `na` for the method this vector reaches.
    pub fn default_na(&self) -> Na {
        match self {
            Atom::Int(..) | Atom::Real(..) | Atom::Int64(..) => Na::Str,
            _ => Na::Null,
        }
    }
}

/// Write an `NA` as `na` says; false when it is dropped.
#[inline]
fn write_na(na: Na, out: &mut Vec<u8>) -> bool {
    match na {
        Na::Null => {
            out.extend_from_slice(b"null");
            true
        }
        Na::Str => {
            out.extend_from_slice(b"\"NA\"");
            true
        }
        Na::Drop => false,
    }
}

/// A short byte string stored padded so that it can be appended with one
/// fixed-size copy (keys and factor levels are written once per cell).
pub(super) struct Small {
    buf: [u8; 32],
    len: usize,
    long: Vec<u8>,
    /// Holds a string marked "bytes" (see `Encoder::encode`).
    bytes: bool,
}

impl Small {
    pub fn new(b: &[u8]) -> Small {
        let mut s = Small { buf: [0; 32], len: b.len(), long: Vec::new(), bytes: false };
        if b.len() <= 32 {
            s.buf[..b.len()].copy_from_slice(b);
        } else {
            s.long = b.to_vec();
        }
        s
    }

    /// Is this the marker of an `NA` factor level (a leading NUL byte,
    /// which no JSON text has)?
    fn is_na_marker(&self) -> bool {
        self.len > 0 && self.buf[0] == 0
    }

    #[inline(always)]
    pub fn push_to(&self, out: &mut Vec<u8>) {
        if self.len <= 32 {
            out.reserve(32);
            // SAFETY: 32 bytes were reserved past the end; only `len` (<= 32)
            // of them become part of the vector, and they were initialised
            // by the copy.
            unsafe {
                let l = out.len();
                std::ptr::copy_nonoverlapping(self.buf.as_ptr(), out.as_mut_ptr().add(l), 32);
                out.set_len(l + self.len);
            }
        } else {
            out.extend_from_slice(&self.long);
        }
    }
}

/// A character vector as an [`Atom`]; R conversions that return something
/// else failed.
///
/// # Safety
/// The SEXP contract holds for `s`.
unsafe fn str_atom(s: SEXP) -> Result<Atom> {
    // SAFETY: caller's contract.
    unsafe {
        if ty(s) != SEXPTYPE::STRSXP {
            return Err(Error::json("conversion to character failed"));
        }
        Ok(Atom::Str(s, xlen(s)))
    }
}

/// Base64 as jsonlite's `base64_enc()` writes it: standard alphabet with
/// padding and a newline after every 72 output characters.
pub(super) fn base64_jsonlite(bytes: &[u8]) -> Vec<u8> {
    use base64::Engine;
    let s = base64::engine::general_purpose::STANDARD.encode(bytes);
    let mut out = Vec::with_capacity(s.len() + s.len() / 72 + 1);
    for chunk in s.as_bytes().chunks(72) {
        out.extend_from_slice(chunk);
        if chunk.len() == 72 {
            out.push(b'\n');
        }
    }
    out
}

/// A raw vector's bytes as a JSON string of jsonlite's base64.
///
/// # Safety
/// The SEXP contract holds for `x`, a raw vector.
unsafe fn base64_piece(x: SEXP) -> Vec<u8> {
    // SAFETY: caller's contract: RAW(x) points at xlen(x) bytes.
    let bytes = unsafe { std::slice::from_raw_parts(RAW(x) as *const u8, xlen(x)) };
    let mut b = Vec::new();
    write_str_bytes(&mut b, &base64_jsonlite(bytes));
    b
}

impl Encoder {
    /// The UTF-8 bytes of a string element (not `NA`), or its bytes as
    /// stored (and `true`) when it is marked "bytes" and this encoding
    /// writes such strings (see `Encoder::encode`).
    ///
    /// # Safety
    /// As [`utf8_of`].
    unsafe fn string_bytes(&mut self, c: SEXP) -> Result<(&[u8], bool)> {
        // SAFETY: caller's contract.
        unsafe {
            if self.bytes_ok {
                utf8_or_bytes(c, &mut self.scratch)
            } else {
                utf8_of(c, &mut self.scratch).map(|b| (b, false))
            }
        }
    }

    /// Convert an atomic-like value to an [`Atom`]; also returns the `na`
    /// to use when the method resolved it itself (complex numbers). Values
    /// made by R (formatting) are protected in `prot`.
    ///
    /// # Safety
    /// As [`Encoder::encode`].
    pub(super) unsafe fn atom_of(
        &mut self,
        prot: &mut Protect,
        x: SEXP,
        kind: Kind,
        cls: &Cls,
        at: usize,
        ctx: Ctx,
    ) -> Result<(Atom, Option<Na>)> {
        use SEXPTYPE::*;
        let na = ctx.na;
        // SAFETY: caller's contract; data pointers are taken only for the
        // matching vector type, and R results are protected in `prot`.
        unsafe {
            let atom = match kind {
                Kind::Num => match ty(x) {
                    INTSXP => Atom::Int(INTEGER(x), xlen(x)),
                    REALSXP => Atom::Real(REAL(x), xlen(x)),
                    _ => return Err(Error::json(format!("is.numeric(x) is not TRUE (class {})", class1(x)))),
                },
                Kind::Lgl => match ty(x) {
                    LGLSXP => Atom::Lgl(LOGICAL(x), xlen(x)),
                    _ => return Err(Error::json(format!("unsupported logical object of class {}", class1(x)))),
                },
                Kind::Chr => match ty(x) {
                    STRSXP => Atom::Str(x, xlen(x)),
                    _ => return Err(Error::json(format!("unsupported character object of class {}", class1(x)))),
                },
                Kind::Int64 => match ty(x) {
                    REALSXP => Atom::Int64(REAL(x) as *const i64, xlen(x)),
                    _ => return Err(Error::json("unsupported integer64 object")),
                },
                Kind::Factor => {
                    let lev = attr(x, R_LevelsSymbol);
                    if ty(x) == INTSXP && ty(lev) == STRSXP {
                        let nl = xlen(lev);
                        let mut levels = Vec::with_capacity(nl);
                        for i in 0..nl {
                            let c = STRING_ELT(lev, i as R_xlen_t);
                            let mut b = Vec::new();
                            let mut bytes = false;
                            if c == R_NaString {
                                b.extend_from_slice(b"\x00NA");
                            } else {
                                let (s, marked) = self.string_bytes(c)?;
                                write_str_bytes(&mut b, s);
                                bytes = marked;
                            }
                            let mut level = Small::new(&b);
                            level.bytes = bytes;
                            levels.push(level);
                        }
                        Atom::Factor(INTEGER(x), xlen(x), levels)
                    } else {
                        self.r_string(prot, "as.character", x, cls, at, &[])?
                    }
                }
                Kind::Date => self.r_string(prot, "format", x, cls, at, &[])?,
                Kind::Posix => {
                    let empty = prot.add(mk_string(b""));
                    self.r_string(prot, "format", x, cls, at, &[(Some("format"), empty)])?
                }
                Kind::Json if ty(x) == STRSXP => Atom::Str(x, xlen(x)),
                Kind::Json | Kind::AsChar => self.r_string(prot, "as.character", x, cls, at, &[])?,
                Kind::Function => str_atom(r_call(prot, "deparse", &[(None, x)]).map_err(Error::json)?)?,
                Kind::Raw => {
                    if ty(x) != RAWSXP {
                        return Err(Error::json(format!("unsupported raw object of class {}", class1(x))));
                    }
                    Atom::Pre(vec![Some(base64_piece(x))])
                }
                Kind::Blob => {
                    if ty(x) != VECSXP {
                        return Err(Error::json("unsupported blob object"));
                    }
                    let n = xlen(x);
                    let mut p = Vec::with_capacity(n);
                    for i in 0..n {
                        let e = VECTOR_ELT(x, i as R_xlen_t);
                        if is_nil(e) {
                            p.push(None);
                        } else if ty(e) == RAWSXP {
                            p.push(Some(base64_piece(e)));
                        } else {
                            return Err(Error::json("is.raw(input) is not TRUE"));
                        }
                    }
                    Atom::Pre(p)
                }
                Kind::Cplx => return self.complex(prot, x, na),
                _ => return Err(Error::internal("internal error: not an atomic kind")),
            };
            Ok((atom, na))
        }
    }

    /// `fun(x, extra...)` in R, for `x` with the class vector its method
    /// sees, as a character vector.
    ///
    /// # Safety
    /// As [`Encoder::encode`]; the result is protected in `prot`.
    unsafe fn r_string(
        &mut self,
        prot: &mut Protect,
        fun: &str,
        x: SEXP,
        cls: &Cls,
        at: usize,
        extra: &[(Option<&str>, SEXP)],
    ) -> Result<Atom> {
        // SAFETY: caller's contract.
        unsafe {
            let obj = self.obj_with_class(prot, x, cls, at)?;
            let mut args = vec![(None, obj)];
            args.extend_from_slice(extra);
            str_atom(r_call(prot, fun, &args).map_err(Error::json)?)
        }
    }

    /// Complex numbers: `prettyNum(x, digits)` of each element, with the
    /// `na` the method resolves (non-finite values are `NA` unless
    /// `na = "string"`).
    ///
    /// # Safety
    /// As [`Encoder::encode`].
    unsafe fn complex(&mut self, prot: &mut Protect, x: SEXP, na: Option<Na>) -> Result<(Atom, Option<Na>)> {
        use SEXPTYPE::*;
        // SAFETY: caller's contract; `s` is protected in `prot` and has the
        // length of `x` (checked).
        unsafe {
            if ty(x) != CPLXSXP {
                return Err(Error::json(format!("unsupported complex object of class {}", class1(x))));
            }
            let d = match self.digits_r {
                Digits::Decimal(n) | Digits::Signif(n) => Rf_ScalarInteger(n),
                Digits::Max => Rf_ScalarLogical(NA_LGL),
            };
            let d = prot.add(d);
            let s = r_call(prot, "prettyNum", &[(None, x), (Some("digits"), d)]).map_err(Error::json)?;
            if ty(s) != STRSXP || xlen(s) != xlen(x) {
                return Err(Error::json("prettyNum() of a complex vector failed"));
            }
            let na_c = na.unwrap_or(Na::Str);
            let z = std::slice::from_raw_parts(COMPLEX(x), xlen(x));
            let mut p = Vec::with_capacity(z.len());
            for (i, zi) in z.iter().enumerate() {
                let c = STRING_ELT(s, i as R_xlen_t);
                let finite = zi.r.is_finite() && zi.i.is_finite();
                if (!finite && na_c != Na::Str) || c == R_NaString {
                    p.push(None);
                } else {
                    let mut b = Vec::new();
                    write_str_bytes(&mut b, utf8_of(c, &mut self.scratch)?);
                    p.push(Some(b));
                }
            }
            Ok((Atom::Pre(p), Some(na_c)))
        }
    }

    /// The JSON of a whole atomic vector: a scalar when `auto_unbox` and of
    /// length 1, else an array.
    ///
    /// # Safety
    /// The pointers and vectors in `atom` are alive (protected by the
    /// caller).
    pub(super) unsafe fn atom_value(
        &mut self,
        atom: &Atom,
        na: Option<Na>,
        auto_unbox: bool,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        let na = na.unwrap_or(atom.default_na());
        let n = atom.len();
        // SAFETY: caller's contract; the slices have the vector's length.
        unsafe {
            if auto_unbox && n == 1 {
                if !self.write_elem(atom, 0, na, out)? {
                    out.extend_from_slice(b"null");
                }
                return Ok(());
            }
            out.reserve(n * 6 + 2);
            out.push(b'[');
            // tight loops for the common plain vectors (no NA is ever dropped
            // here: `na` is never "NA" outside data frame cells)
            if na != Na::Drop {
                match atom {
                    Atom::Real(p, _) if n > 0 => {
                        let xs = std::slice::from_raw_parts(*p, n);
                        if let NumMode::Jsonlite(digits, flavor) = self.num {
                            numfmt::push_jsonlite_doubles(out, xs, digits, flavor, |out, v| {
                                self.write_double(v, na, out);
                            });
                            // the last comma becomes the closing bracket
                            *out.last_mut().unwrap() = b']';
                            return Ok(());
                        }
                        for (i, &v) in xs.iter().enumerate() {
                            if i > 0 {
                                out.push(b',');
                            }
                            self.write_double(v, na, out);
                        }
                        out.push(b']');
                        return Ok(());
                    }
                    Atom::Int(p, _) => {
                        let xs = std::slice::from_raw_parts(*p, n);
                        for (i, &v) in xs.iter().enumerate() {
                            if i > 0 {
                                out.push(b',');
                            }
                            if v == NA_INT {
                                write_na(na, out);
                            } else {
                                numfmt::push_i32(out, v);
                            }
                        }
                        out.push(b']');
                        return Ok(());
                    }
                    _ => {}
                }
            }
            let mut first = true;
            for i in 0..n {
                let mark = out.len();
                if !first {
                    out.push(b',');
                }
                if self.write_elem(atom, i, na, out)? {
                    first = false;
                } else {
                    out.truncate(mark);
                }
            }
            out.push(b']');
            Ok(())
        }
    }

    /// Write one double; false when it is an `NA` (or non-finite value)
    /// that `na` drops.
    #[inline]
    pub(super) fn write_double(&self, v: f64, na: Na, out: &mut Vec<u8>) -> bool {
        if v.is_finite() {
            match self.num {
                NumMode::Jsonlite(d, f) => numfmt::push_jsonlite_double(out, v, d, f),
                NumMode::Shortest => write_shortest_f64(out, v),
            }
            return true;
        }
        match na {
            Na::Null => {
                out.extend_from_slice(b"null");
                true
            }
            Na::Str => {
                // SAFETY: R_IsNA only inspects the bits of a double.
                let s: &[u8] = if unsafe { R_IsNA(v) } != 0 {
                    b"\"NA\""
                } else if v.is_nan() {
                    b"\"NaN\""
                } else if v > 0.0 {
                    b"\"Inf\""
                } else {
                    b"\"-Inf\""
                };
                out.extend_from_slice(s);
                true
            }
            Na::Drop => false,
        }
    }

    /// Write element `i`; false when it is an `NA` that `na` drops.
    ///
    /// # Safety
    /// As [`Encoder::atom_value`]; `i < atom.len()`.
    #[inline(always)]
    pub(super) unsafe fn write_elem(&mut self, atom: &Atom, i: usize, na: Na, out: &mut Vec<u8>) -> Result<bool> {
        // SAFETY: caller's contract: `i` is within the vector.
        unsafe {
            Ok(match atom {
                Atom::Int(p, _) => {
                    let v = *p.add(i);
                    if v == NA_INT {
                        write_na(na, out)
                    } else {
                        numfmt::push_i32(out, v);
                        true
                    }
                }
                Atom::Real(p, _) => self.write_double(*p.add(i), na, out),
                Atom::Lgl(p, _) => {
                    let v = *p.add(i);
                    if v == NA_LGL {
                        write_na(na, out)
                    } else {
                        out.extend_from_slice(if v != 0 { b"true" } else { b"false" });
                        true
                    }
                }
                Atom::Str(s, _) => {
                    let c = STRING_ELT(*s, i as R_xlen_t);
                    if c == R_NaString {
                        write_na(na, out)
                    } else {
                        let b = char_bytes(c);
                        if b.is_ascii() {
                            write_str_bytes(out, b);
                        } else {
                            let (s, bytes) = self.string_bytes(c)?;
                            write_str_bytes(out, s);
                            self.wrote_bytes |= bytes;
                        }
                        true
                    }
                }
                Atom::Factor(p, _, levels) => {
                    let v = *p.add(i);
                    if v == NA_INT || v < 1 || v as usize > levels.len() {
                        write_na(na, out)
                    } else {
                        let l = &levels[v as usize - 1];
                        if l.is_na_marker() {
                            write_na(na, out)
                        } else {
                            l.push_to(out);
                            self.wrote_bytes |= l.bytes;
                            true
                        }
                    }
                }
                Atom::Int64(p, _) => {
                    let v = *p.add(i);
                    if v == i64::MIN {
                        write_na(na, out)
                    } else {
                        numfmt::push_i64(out, v);
                        true
                    }
                }
                Atom::Pre(p) => match &p[i] {
                    Some(b) => {
                        out.extend_from_slice(b);
                        true
                    }
                    None => write_na(na, out),
                },
            })
        }
    }
}

/// `as.character.hexmode(x)` of a raw column (jsonlite writes raw data
/// frame columns as hex strings), protected in `prot`.
///
/// # Safety
/// The SEXP contract holds for `x`; under an R entry point or `toplevel()`.
pub(super) unsafe fn hex_column(prot: &mut Protect, x: SEXP) -> Result<Atom> {
    // SAFETY: caller's contract.
    unsafe { str_atom(r_call(prot, "as.character.hexmode", &[(None, x)]).map_err(Error::json)?) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_lines() {
        assert_eq!(base64_jsonlite(&[1]), b"AQ==");
        assert_eq!(base64_jsonlite(&[]), b"");
        let v: Vec<u8> = (1..=54).collect();
        let b = base64_jsonlite(&v);
        assert_eq!(b.len(), 73);
        assert_eq!(b[72], b'\n');
    }

    #[test]
    fn small_strings_append_exactly() {
        let mut out = b"x".to_vec();
        Small::new(b"\"level\"").push_to(&mut out);
        assert_eq!(out, b"x\"level\"");
        let long = vec![b'a'; 40];
        Small::new(&long).push_to(&mut out);
        assert_eq!(out.len(), 1 + 7 + 40);
        assert!(Small::new(b"\x00NA").is_na_marker());
        assert!(!Small::new(b"\"NA\"").is_na_marker());
    }

    #[test]
    fn na_writing() {
        let mut out = Vec::new();
        assert!(write_na(Na::Null, &mut out));
        assert!(write_na(Na::Str, &mut out));
        assert!(!write_na(Na::Drop, &mut out));
        assert_eq!(out, b"null\"NA\"");
    }
}
