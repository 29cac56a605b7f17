//! The [`Encoder`]: its state, and the recursion that hands each value to
//! the method of its R type (`value()` writes one JSON value, `pieces()` the
//! per-element texts of jsonlite's `collapse = FALSE`).

use mcplite_engine::numfmt::{Flavor, NumDigits};

use super::dispatch::{scalar_cls, sfc_to_list, Cls, Kind};
use super::list::list_child_ctx;
use super::options::{Digits, EncodeOptions, NaMode};
use crate::error::{Error, Result};
use crate::rapi::strings::BYTES_ERROR;
use crate::rapi::*;

/// jsonlite's `na` after `match.arg()`: `"null"`, `"string"` or `"NA"`
/// (drop the cell; only data frame columns get it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Na {
    Null,
    Str,
    Drop,
}

/// What jsonlite's methods pass down: `auto_unbox`, `na` (None = `NULL`,
/// i.e. the class default) and `oldna` (what lists/matrices inside a data
/// frame use instead of `"NA"`).
#[derive(Clone, Copy, Debug)]
pub(super) struct Ctx {
    pub auto_unbox: bool,
    pub na: Option<Na>,
    pub oldna: Option<Na>,
}

/// How doubles are written.
#[derive(Clone, Copy)]
pub(super) enum NumMode {
    /// jsonlite's `digits` rules of the given jsonlite version.
    Jsonlite(NumDigits, Flavor),
    /// The shortest text that reads back as the same double (fixed encoding).
    Shortest,
}

/// One JSON text per element (`None` = an `NA` that is dropped/unset).
pub(super) type Pieces = Vec<Option<Vec<u8>>>;

/// Maximum nesting of lists/data frames/matrices the encoder accepts.
pub(super) const MAX_DEPTH: usize = 1000;

pub struct Encoder {
    pub(super) num: NumMode,
    pub(super) null_list: bool,
    auto_unbox: bool,
    na: Option<Na>,
    /// `digits` as R would pass it to `prettyNum()` for complex numbers.
    pub(super) digits_r: Digits,
    /// Buffer for strings that need translation to UTF-8.
    pub(super) scratch: Vec<u8>,
    /// Current nesting depth (bounded so that a pathological value cannot
    /// overflow the C stack; jsonlite itself fails far earlier).
    depth: usize,
    /// Strings marked "bytes" are written as stored (the payload encoding)
    /// rather than refused (the fixed encoding), and one was written. See
    /// [`Encoder::encode`].
    pub(super) bytes_ok: bool,
    pub(super) wrote_bytes: bool,
}

impl Encoder {
    /// The payload encoding with options `o`, reproducing jsonlite `flavor`.
    pub fn payload(o: &EncodeOptions, flavor: Flavor) -> Encoder {
        let nd = match o.digits {
            Digits::Decimal(n) => NumDigits::Decimal(n),
            Digits::Max => NumDigits::Max,
            Digits::Signif(n) => NumDigits::Signif(n),
        };
        Encoder {
            num: NumMode::Jsonlite(nd, flavor),
            null_list: o.null_list,
            auto_unbox: o.auto_unbox,
            na: match o.na {
                NaMode::Unset => None,
                NaMode::Null => Some(Na::Null),
                NaMode::String => Some(Na::Str),
            },
            digits_r: o.digits,
            scratch: Vec::new(),
            depth: 0,
            bytes_ok: true,
            wrote_bytes: false,
        }
    }

    /// The fixed encoding.
    pub fn fixed() -> Encoder {
        Encoder {
            num: NumMode::Shortest,
            null_list: false,
            auto_unbox: true,
            na: None,
            digits_r: Digits::Decimal(15),
            scratch: Vec::new(),
            depth: 0,
            bytes_ok: false,
            wrote_bytes: false,
        }
    }

    /// Encode `x` as one JSON value appended to `out`.
    ///
    /// A string marked "bytes" is written as jsonlite writes it (RULES
    /// J1.3): with its bytes as stored when the whole value is that one
    /// string (jsonlite then joins nothing), and otherwise not at all:
    /// jsonlite's joining of pieces refuses to translate it, and so does
    /// this (the fixed encoding refuses it everywhere).
    ///
    /// # Safety
    /// The SEXP contract (see `crate::rapi`) holds for `x`; under an R entry
    /// point or `toplevel()` (a few classes are converted by R code).
    pub unsafe fn encode(&mut self, x: SEXP, out: &mut Vec<u8>) -> Result<()> {
        let ctx = Ctx { auto_unbox: self.auto_unbox, na: self.na, oldna: None };
        let start = out.len();
        self.wrote_bytes = false;
        // SAFETY: caller's contract.
        unsafe {
            let cls = Cls::of(x);
            self.value(x, &cls, ctx, out)?;
        }
        if self.wrote_bytes && out.get(start) != Some(&b'"') {
            return Err(Error::json(BYTES_ERROR));
        }
        Ok(())
    }

    /// Enter one level of nesting; fails beyond [`MAX_DEPTH`].
    fn enter(&mut self) -> Result<()> {
        if self.depth >= MAX_DEPTH {
            return Err(Error::json(format!("the value is nested more than {MAX_DEPTH} levels deep")));
        }
        self.depth += 1;
        Ok(())
    }

    /// One JSON value for `x` seen with class vector `cls`.
    ///
    /// # Safety
    /// As [`Encoder::encode`].
    pub(super) unsafe fn value(&mut self, x: SEXP, cls: &Cls, ctx: Ctx, out: &mut Vec<u8>) -> Result<()> {
        self.enter()?;
        // SAFETY: caller's contract.
        let res = unsafe { self.value_inner(x, cls, ctx, out) };
        self.depth -= 1;
        res
    }

    /// # Safety
    /// As [`Encoder::encode`].
    unsafe fn value_inner(&mut self, x: SEXP, cls: &Cls, ctx: Ctx, out: &mut Vec<u8>) -> Result<()> {
        // SAFETY: caller's contract.
        unsafe {
            let (kind, at) = self.dispatch(x, cls)?;
            match kind {
                Kind::Null => {
                    out.extend_from_slice(if self.null_list { b"{}" } else { b"null" });
                    Ok(())
                }
                Kind::List | Kind::Pairlist => self.list_value(x, ctx, out),
                Kind::DataFrame => self.data_frame(x, ctx, out, None),
                Kind::Matrix => self.matrix(x, ctx, out, None),
                Kind::AsIs => {
                    let (ncls, ctx2) = self.asis(x, cls, at, ctx);
                    self.value(x, &ncls, ctx2, out)
                }
                Kind::Scalar => {
                    let ncls = scalar_cls(cls, at);
                    let p = self.pieces(x, &ncls, ctx, false)?;
                    if p.len() != 1 {
                        return Err(Error::json(format!(
                            "values must be length 1, but the unboxed value has length {}",
                            p.len()
                        )));
                    }
                    match &p[0] {
                        Some(b) => out.extend_from_slice(b),
                        None => out.extend_from_slice(b"null"),
                    }
                    Ok(())
                }
                Kind::Ts => self.value(x, &Cls::bare(), ctx, out),
                Kind::Sfc => {
                    let mut prot = Protect::new();
                    let y = sfc_to_list(&mut prot, x)?;
                    self.value(y, &Cls::of(y), ctx, out)
                }
                _ => {
                    let mut prot = Protect::new();
                    let (atom, na) = self.atom_of(&mut prot, x, kind, cls, at, ctx)?;
                    self.atom_value(&atom, na, ctx.auto_unbox, out)
                }
            }
        }
    }

    /// jsonlite's `collapse = FALSE` output of `x`.
    ///
    /// # Safety
    /// As [`Encoder::encode`].
    pub(super) unsafe fn pieces(&mut self, x: SEXP, cls: &Cls, ctx: Ctx, unname: bool) -> Result<Pieces> {
        self.enter()?;
        // SAFETY: caller's contract.
        let res = unsafe { self.pieces_inner(x, cls, ctx, unname) };
        self.depth -= 1;
        res
    }

    /// # Safety
    /// As [`Encoder::encode`].
    unsafe fn pieces_inner(&mut self, x: SEXP, cls: &Cls, ctx: Ctx, unname: bool) -> Result<Pieces> {
        // SAFETY: caller's contract.
        unsafe {
            let (kind, at) = self.dispatch(x, cls)?;
            match kind {
                Kind::Null => Ok(vec![Some(if self.null_list { b"{}".to_vec() } else { b"null".to_vec() })]),
                Kind::List | Kind::Pairlist => {
                    let (items, names) = self.list_items(x)?;
                    if !is_nil(names) && !unname {
                        let mut b = Vec::new();
                        self.list_value(x, ctx, &mut b)?;
                        return Ok(vec![Some(b)]);
                    }
                    let cctx = list_child_ctx(ctx);
                    let mut p = Vec::with_capacity(items.len());
                    for it in items {
                        let mut b = Vec::new();
                        self.value(it, &Cls::of(it), cctx, &mut b)?;
                        p.push(Some(b));
                    }
                    Ok(p)
                }
                Kind::DataFrame => {
                    let mut p = Vec::new();
                    self.data_frame(x, ctx, &mut Vec::new(), Some(&mut p))?;
                    Ok(p)
                }
                Kind::Matrix => {
                    let mut p = Vec::new();
                    self.matrix(x, ctx, &mut Vec::new(), Some(&mut p))?;
                    Ok(p)
                }
                Kind::AsIs => {
                    let (ncls, ctx2) = self.asis(x, cls, at, ctx);
                    self.pieces(x, &ncls, ctx2, unname)
                }
                Kind::Scalar => {
                    let ncls = scalar_cls(cls, at);
                    self.pieces(x, &ncls, ctx, unname)
                }
                Kind::Ts => self.pieces(x, &Cls::bare(), ctx, unname),
                Kind::Sfc => {
                    let mut prot = Protect::new();
                    let y = sfc_to_list(&mut prot, x)?;
                    self.pieces(y, &Cls::of(y), ctx, unname)
                }
                _ => {
                    let mut prot = Protect::new();
                    let (atom, na) = self.atom_of(&mut prot, x, kind, cls, at, ctx)?;
                    let na = na.unwrap_or(atom.default_na());
                    let n = atom.len();
                    let mut p = Vec::with_capacity(n);
                    for i in 0..n {
                        let mut b = Vec::new();
                        if self.write_elem(&atom, i, na, &mut b)? {
                            p.push(Some(b));
                        } else {
                            p.push(None);
                        }
                    }
                    Ok(p)
                }
            }
        }
    }
}
