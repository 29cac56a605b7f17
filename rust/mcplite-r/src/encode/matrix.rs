//! Matrices and arrays: nested row-major arrays, as jsonlite's default
//! `matrix = "rowmajor"`; R stores them column-major.

use super::atomic::Atom;
use super::dispatch::Cls;
use super::encoder::{Ctx, Encoder, Na, Pieces, MAX_DEPTH};
use super::list::list_child_ctx;
use crate::error::{Error, Result};
use crate::rapi::*;

/// The elements of `c(x)`: a list, or an atomic vector with its `na`.
enum Elems {
    List(SEXP),
    Atom(Atom, Na),
}

/// The dimensions of an array (negative ones count as 0).
///
/// # Safety
/// The SEXP contract holds for `dimv`.
unsafe fn dims_of(dimv: SEXP) -> Vec<usize> {
    // SAFETY: caller's contract; the data pointer is read for the matching
    // type and the vector's length.
    unsafe {
        match ty(dimv) {
            SEXPTYPE::INTSXP => {
                std::slice::from_raw_parts(INTEGER(dimv), xlen(dimv)).iter().map(|&d| d.max(0) as usize).collect()
            }
            SEXPTYPE::REALSXP => {
                std::slice::from_raw_parts(REAL(dimv), xlen(dimv)).iter().map(|&d| d.max(0.0) as usize).collect()
            }
            _ => Vec::new(),
        }
    }
}

/// Column-major strides of `dims`: element `(i, j, ...)` is at
/// `i * strides[0] + j * strides[1] + ...`.
fn strides_of(dims: &[usize]) -> Vec<usize> {
    let mut strides = vec![1usize; dims.len()];
    for k in 1..dims.len() {
        strides[k] = strides[k - 1] * dims[k - 1];
    }
    strides
}

impl Encoder {
    /// A matrix or array as nested arrays, rows first. With `rows`, the
    /// texts of the rows (first dimension) are collected there instead
    /// (`collapse = FALSE`) and `out` is untouched.
    ///
    /// # Safety
    /// As [`Encoder::encode`].
    pub(super) unsafe fn matrix(
        &mut self,
        x: SEXP,
        ctx: Ctx,
        out: &mut Vec<u8>,
        rows: Option<&mut Pieces>,
    ) -> Result<()> {
        use SEXPTYPE::*;
        // SAFETY: caller's contract; R results are protected in `prot`.
        unsafe {
            let dims = dims_of(attr(x, R_DimSymbol));
            let na2 = if ctx.na == Some(Na::Drop) { ctx.oldna } else { ctx.na };
            let ectx = Ctx { auto_unbox: false, na: na2, oldna: None };
            if dims.len() < 2 {
                // asJSON(c(x)): collapse and auto_unbox are not passed on
                let mut b = Vec::new();
                self.value(x, &Cls::bare(), ectx, &mut b)?;
                match rows {
                    Some(r) => *r = vec![Some(b)],
                    None => out.extend_from_slice(&b),
                }
                return Ok(());
            }
            if dims.len() > MAX_DEPTH {
                return Err(Error::json(format!("the array has more than {MAX_DEPTH} dimensions")));
            }
            let total: usize = dims.iter().product();
            // elements of c(x), as jsonlite renders them with collapse = FALSE
            let mut prot = Protect::new();
            let elems: Elems = match ty(x) {
                VECSXP => Elems::List(x),
                LGLSXP | INTSXP | REALSXP | STRSXP | CPLXSXP | RAWSXP => {
                    let (kind, _) = self.dispatch(x, &Cls::bare())?;
                    let (atom, na) = self.atom_of(&mut prot, x, kind, &Cls::bare(), 0, ectx)?;
                    let na = na.unwrap_or(atom.default_na());
                    Elems::Atom(atom, na)
                }
                _ => return Err(Error::json(format!("No method asJSON S3 class: {}", type_class(x)))),
            };
            let n_el = match &elems {
                Elems::List(l) => xlen(*l),
                Elems::Atom(a, _) => a.len(),
            };
            if n_el != total {
                return Err(Error::json(format!("dims [product {total}] do not match the length of object [{n_el}]")));
            }
            let strides = strides_of(&dims);
            let lctx = list_child_ctx(ectx);
            match rows {
                Some(r) => {
                    let mut v = Vec::with_capacity(dims[0]);
                    for i in 0..dims[0] {
                        let mut b = Vec::new();
                        self.nd(&elems, &dims, &strides, 1, i, lctx, &mut b)?;
                        v.push(Some(b));
                    }
                    *r = v;
                }
                None => {
                    out.reserve(total * 4 + dims[0] * 2 + 2);
                    out.push(b'[');
                    for i in 0..dims[0] {
                        if i > 0 {
                            out.push(b',');
                        }
                        self.nd(&elems, &dims, &strides, 1, i, lctx, out)?;
                    }
                    out.push(b']');
                }
            }
            Ok(())
        }
    }

    /// The array of dimension `level` and below, starting at element
    /// `offset`.
    ///
    /// # Safety
    /// As [`Encoder::encode`]; `elems` is alive and `dims`/`strides` match
    /// its length.
    #[allow(clippy::too_many_arguments)]
    unsafe fn nd(
        &mut self,
        elems: &Elems,
        dims: &[usize],
        strides: &[usize],
        level: usize,
        offset: usize,
        lctx: Ctx,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        out.push(b'[');
        for i in 0..dims[level] {
            if i > 0 {
                out.push(b',');
            }
            let off = offset + i * strides[level];
            // SAFETY: caller's contract: `off` is below the product of
            // `dims`, the length of `elems`.
            unsafe {
                if level + 1 == dims.len() {
                    match elems {
                        Elems::List(l) => {
                            let it = VECTOR_ELT(*l, off as R_xlen_t);
                            self.value(it, &Cls::of(it), lctx, out)?;
                        }
                        Elems::Atom(a, na) => {
                            if !self.write_elem(a, off, *na, out)? {
                                out.extend_from_slice(b"NA");
                            }
                        }
                    }
                } else {
                    self.nd(elems, dims, strides, level + 1, off, lctx, out)?;
                }
            }
        }
        out.push(b']');
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::strides_of;

    #[test]
    fn column_major_strides() {
        assert_eq!(strides_of(&[2, 3]), vec![1, 2]);
        assert_eq!(strides_of(&[2, 3, 4]), vec![1, 2, 6]);
        assert_eq!(strides_of(&[5]), vec![1]);
    }
}
