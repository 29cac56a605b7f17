//! Data frames, as jsonlite's default `dataframe = "rows"`: an array of one
//! object per row, written row by row from per-column writers.

use mcplite_engine::json::write_str_bytes;

use super::atomic::{hex_column, Atom, Small};
use super::dispatch::{Cls, Kind};
use super::encoder::{Ctx, Encoder, Na, Pieces};
use super::list::make_unique;
use crate::error::{Error, Result};
use crate::rapi::strings::{char_bytes, mk_char, push_utf8};
use crate::rapi::*;

/// How one column is written: element by element from the vector, or from
/// texts made beforehand (list, data frame and matrix columns).
enum Col {
    Atom(Atom, Na),
    Pieces(Pieces),
}

impl Col {
    fn len(&self) -> usize {
        match self {
            Col::Atom(a, _) => a.len(),
            Col::Pieces(p) => p.len(),
        }
    }
}

/// How many rows ahead to prefetch the strings of character columns.
const AHEAD: usize = 12;

impl Encoder {
    /// A data frame as an array of row objects (jsonlite `dataframe =
    /// "rows"`). With `rows`, the row texts are collected there instead
    /// (`collapse = FALSE`) and `out` is scratch.
    ///
    /// # Safety
    /// As [`Encoder::encode`].
    pub(super) unsafe fn data_frame(
        &mut self,
        x: SEXP,
        ctx: Ctx,
        out: &mut Vec<u8>,
        rows: Option<&mut Pieces>,
    ) -> Result<()> {
        use SEXPTYPE::*;
        // SAFETY: caller's contract; the expanded row names and the `_row`
        // key are protected in `prot`, the columns are elements of `x`.
        unsafe {
            if ty(x) != VECSXP {
                return Err(Error::json(format!("unsupported data frame of type {}", type_class(x))));
            }
            let mut prot = Protect::new();
            let ncol0 = xlen(x);
            let names = attr(x, R_NamesSymbol);
            let has_names = !is_nil(names) && xlen(names) == ncol0;
            // compact row names are expanded: a new vector
            let rn = prot.add(attr(x, R_RowNamesSymbol));
            let nrow = if is_nil(rn) { 0 } else { xlen(rn) };

            let mut cols: Vec<SEXP> = (0..ncol0).map(|j| VECTOR_ELT(x, j as R_xlen_t)).collect();
            let mut col_names: Vec<SEXP> = Vec::new();
            if has_names {
                col_names = (0..ncol0).map(|j| STRING_ELT(names, j as R_xlen_t)).collect();
                if ty(rn) == STRSXP {
                    let any_non_digit = (0..nrow).any(|i| {
                        let c = STRING_ELT(rn, i as R_xlen_t);
                        let b = char_bytes(c);
                        c == R_NaString || b.is_empty() || !b.iter().all(|d| d.is_ascii_digit())
                    });
                    if any_non_digit {
                        match col_names.iter().position(|c| *c != R_NaString && char_bytes(*c) == b"_row") {
                            Some(j) => cols[j] = rn,
                            None => {
                                cols.push(rn);
                                col_names.push(prot.add(mk_char(b"_row")));
                            }
                        }
                    }
                }
            }
            let ncol = cols.len();

            // na / oldna exactly as jsonlite's data.frame method computes them
            let oldna = match ctx.na {
                None | Some(Na::Drop) => None,
                Some(v) => Some(v),
            };
            let col_na = if has_names { Some(ctx.na.unwrap_or(Na::Drop)) } else { ctx.na };
            let cctx = Ctx { auto_unbox: ctx.auto_unbox, na: col_na, oldna };

            if nrow == 0 {
                if rows.is_none() {
                    out.extend_from_slice(b"[]");
                }
                return Ok(());
            }

            let mut writers: Vec<Col> = Vec::with_capacity(ncol);
            for (j, &c) in cols.iter().enumerate() {
                let w = self.column(&mut prot, c, cctx, col_na)?;
                let len = w.len();
                if len != nrow {
                    return Err(Error::json(format!(
                        "values must be length {nrow},\n but FUN(X[[{}]]) result is length {len}",
                        j + 1
                    )));
                }
                writers.push(w);
            }

            // keys: "name":
            let keys: Vec<Vec<u8>> = if has_names {
                let mut v: Vec<Vec<u8>> = Vec::with_capacity(ncol);
                for (j, c) in col_names.iter().enumerate() {
                    let mut b = Vec::new();
                    if *c != R_NaString {
                        push_utf8(*c, &mut b)?;
                    }
                    if b.is_empty() {
                        b.extend_from_slice((j + 1).to_string().as_bytes());
                    }
                    v.push(b);
                }
                make_unique(&mut v);
                v.into_iter()
                    .map(|k| {
                        let mut b = Vec::with_capacity(k.len() + 3);
                        write_str_bytes(&mut b, &k);
                        b.push(b':');
                        b
                    })
                    .collect()
            } else {
                Vec::new()
            };
            let small_keys: Vec<Small> = keys.iter().map(|k| Small::new(k)).collect();
            // character columns, for prefetching their cells a few rows ahead
            let str_cols: Vec<SEXP> = writers
                .iter()
                .filter_map(|w| match w {
                    Col::Atom(Atom::Str(s, _), _) => Some(*s),
                    _ => None,
                })
                .collect();

            let key_bytes: usize = keys.iter().map(|k| k.len() + 8).sum::<usize>().max(ncol * 8);
            let collect = rows.is_some();
            if !collect {
                out.reserve(nrow * (key_bytes + 3) + 2);
                out.push(b'[');
            }
            let mut row_store: Vec<Option<Vec<u8>>> = Vec::new();
            for i in 0..nrow {
                if i + AHEAD < nrow {
                    for s in &str_cols {
                        prefetch(STRING_ELT(*s, (i + AHEAD) as R_xlen_t));
                    }
                }
                let start = out.len();
                if !collect && i > 0 {
                    out.push(b',');
                }
                out.push(if has_names { b'{' } else { b'[' });
                let mut first = true;
                for (j, w) in writers.iter().enumerate() {
                    let mark = out.len();
                    if !first {
                        out.push(b',');
                    }
                    if has_names {
                        small_keys[j].push_to(out);
                    }
                    let written = match w {
                        Col::Atom(a, na) => self.write_elem(a, i, *na, out)?,
                        Col::Pieces(p) => match &p[i] {
                            Some(b) => {
                                out.extend_from_slice(b);
                                true
                            }
                            None => false,
                        },
                    };
                    if written {
                        first = false;
                    } else {
                        out.truncate(mark);
                    }
                }
                out.push(if has_names { b'}' } else { b']' });
                if collect {
                    row_store.push(Some(out[start..].to_vec()));
                    out.truncate(start);
                }
            }
            if let Some(r) = rows {
                *r = row_store;
            } else {
                out.push(b']');
            }
            Ok(())
        }
    }

    /// The writer of column `c`, with the context the data frame method
    /// gives its columns.
    ///
    /// # Safety
    /// As [`Encoder::encode`], for `c`; R results are protected in `prot`.
    unsafe fn column(&mut self, prot: &mut Protect, c: SEXP, cctx: Ctx, col_na: Option<Na>) -> Result<Col> {
        use SEXPTYPE::*;
        // SAFETY: caller's contract.
        unsafe {
            if ty(c) == RAWSXP {
                return Ok(Col::Atom(hex_column(prot, c)?, col_na.unwrap_or(Na::Null)));
            }
            let cls = Cls::of(c);
            let (kind, at) = self.dispatch(c, &cls)?;
            let unname =
                matches!(ty(c), VECSXP | LISTSXP) && !has_class(c, b"data.frame") && !is_nil(attr(c, R_NamesSymbol));
            Ok(match kind {
                Kind::Num
                | Kind::Lgl
                | Kind::Chr
                | Kind::Factor
                | Kind::Int64
                | Kind::Date
                | Kind::Posix
                | Kind::Json
                | Kind::Function
                | Kind::AsChar
                | Kind::Cplx
                | Kind::Raw
                | Kind::Blob => {
                    let (atom, na) = self.atom_of(prot, c, kind, &cls, at, cctx)?;
                    let na = na.unwrap_or(atom.default_na());
                    Col::Atom(atom, na)
                }
                _ => Col::Pieces(self.pieces(c, &cls, cctx, unname)?),
            })
        }
    }
}

/// Hint the CPU to fetch the string data of CHARSXP `c` (row-wise walks
/// over character columns otherwise stall on every cell).
#[inline(always)]
fn prefetch(c: SEXP) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch is a hint: it never faults, whatever the
        // address.
        unsafe {
            _mm_prefetch::<_MM_HINT_T0>(c as *const i8);
            _mm_prefetch::<_MM_HINT_T0>((c as *const i8).wrapping_add(64));
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = c;
}
