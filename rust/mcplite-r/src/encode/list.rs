//! Lists and pairlists: arrays, or objects keyed by jsonlite's cleaned
//! names.

use mcplite_engine::json::write_str_bytes;

use super::dispatch::Cls;
use super::encoder::{Ctx, Encoder, Na};
use crate::error::{Error, Result};
use crate::rapi::strings::push_utf8;
use crate::rapi::*;

/// The context the list method gives its elements.
pub(super) fn list_child_ctx(ctx: Ctx) -> Ctx {
    let na = if ctx.na == Some(Na::Drop) { ctx.oldna } else { ctx.na };
    Ctx { auto_unbox: ctx.auto_unbox, na, oldna: None }
}

impl Encoder {
    /// Elements and names of a list or pairlist. The names are a character
    /// vector, `NULL`, or for a pairlist with tags the pairlist itself
    /// (its tags are the names).
    ///
    /// # Safety
    /// As [`Encoder::encode`].
    pub(super) unsafe fn list_items(&mut self, x: SEXP) -> Result<(Vec<SEXP>, SEXP)> {
        // SAFETY: caller's contract.
        unsafe {
            if ty(x) == SEXPTYPE::VECSXP {
                let n = xlen(x);
                let items = (0..n).map(|i| VECTOR_ELT(x, i as R_xlen_t)).collect();
                return Ok((items, attr(x, R_NamesSymbol)));
            }
            if ty(x) == SEXPTYPE::LISTSXP {
                // names come from the tags (as.vector(x, "list"))
                let mut items = Vec::new();
                let mut any_tag = false;
                let mut p = x;
                while ty(p) == SEXPTYPE::LISTSXP {
                    items.push(CAR(p));
                    if !is_nil(TAG(p)) {
                        any_tag = true;
                    }
                    p = CDR(p);
                }
                return Ok((items, if any_tag { x } else { R_NilValue }));
            }
            Err(Error::json(format!("unsupported list object of class {}", class1(x))))
        }
    }

    /// Cleaned names (jsonlite's `cleannames()`): UTF-8, "" and NA replaced
    /// by the 1-based position, then `make.unique()`.
    ///
    /// # Safety
    /// As [`Encoder::encode`], for `names` as [`Encoder::list_items`]
    /// returns it.
    unsafe fn clean_names(&mut self, names: SEXP, n: usize) -> Result<Vec<Vec<u8>>> {
        let mut v: Vec<Vec<u8>> = Vec::with_capacity(n);
        // SAFETY: caller's contract.
        unsafe {
            if ty(names) == SEXPTYPE::LISTSXP {
                let mut p = names;
                while ty(p) == SEXPTYPE::LISTSXP {
                    let t = TAG(p);
                    let mut b = Vec::new();
                    if !is_nil(t) {
                        push_utf8(PRINTNAME(t), &mut b)?;
                    }
                    v.push(b);
                    p = CDR(p);
                }
            } else {
                for i in 0..n {
                    let c = if i < xlen(names) { STRING_ELT(names, i as R_xlen_t) } else { R_NaString };
                    let mut b = Vec::new();
                    if c != R_NaString {
                        push_utf8(c, &mut b)?;
                    }
                    v.push(b);
                }
            }
        }
        for (i, b) in v.iter_mut().enumerate() {
            if b.is_empty() {
                b.extend_from_slice((i + 1).to_string().as_bytes());
            }
        }
        make_unique(&mut v);
        Ok(v)
    }

    /// A list as a JSON object (named) or array.
    ///
    /// # Safety
    /// As [`Encoder::encode`].
    pub(super) unsafe fn list_value(&mut self, x: SEXP, ctx: Ctx, out: &mut Vec<u8>) -> Result<()> {
        // SAFETY: caller's contract; the items are elements of `x`.
        unsafe {
            let (items, names) = self.list_items(x)?;
            let cctx = list_child_ctx(ctx);
            if !is_nil(names) {
                let keys = self.clean_names(names, items.len())?;
                out.push(b'{');
                for (i, it) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    write_str_bytes(out, &keys[i]);
                    out.push(b':');
                    self.value(*it, &Cls::of(*it), cctx, out)?;
                }
                out.push(b'}');
            } else {
                out.push(b'[');
                for (i, it) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    self.value(*it, &Cls::of(*it), cctx, out)?;
                }
                out.push(b']');
            }
            Ok(())
        }
    }
}

/// R's `make.unique(names)` with sep ".".
pub(super) fn make_unique(v: &mut [Vec<u8>]) {
    use std::collections::{HashMap, HashSet};
    let n = v.len();
    if n < 2 {
        return;
    }
    // fast path: no duplicates
    let dup = if n <= 8 {
        (1..n).any(|i| (0..i).any(|k| v[k] == v[i]))
    } else {
        let mut seen = HashSet::with_capacity(n);
        !v.iter().all(|s| seen.insert(s.as_slice()))
    };
    if !dup {
        return;
    }
    let orig: Vec<Vec<u8>> = v.to_vec();
    let mut first: HashMap<&[u8], usize> = HashMap::new();
    for (i, s) in orig.iter().enumerate() {
        first.entry(s.as_slice()).or_insert(i);
    }
    let mut used: HashSet<Vec<u8>> = orig.iter().cloned().collect();
    let mut cnts: HashMap<usize, usize> = HashMap::new();
    for i in 1..n {
        let f = first[orig[i].as_slice()];
        if f == i {
            continue;
        }
        let mut cnt = *cnts.get(&f).unwrap_or(&1);
        let mut cand = Vec::new();
        while cnt < n {
            cand = orig[i].clone();
            cand.push(b'.');
            cand.extend_from_slice(cnt.to_string().as_bytes());
            if !used.contains(&cand) {
                break;
            }
            cnt += 1;
        }
        used.insert(cand.clone());
        v[i] = cand;
        cnts.insert(f, cnt + 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn make_unique_like_r() {
        let mut v: Vec<Vec<u8>> = ["a", "a", "a.1"].iter().map(|s| s.as_bytes().to_vec()).collect();
        make_unique(&mut v);
        assert_eq!(v, vec![b"a".to_vec(), b"a.2".to_vec(), b"a.1".to_vec()]);
        let mut v: Vec<Vec<u8>> = ["x", "x", "x", "y"].iter().map(|s| s.as_bytes().to_vec()).collect();
        make_unique(&mut v);
        assert_eq!(v, vec![b"x".to_vec(), b"x.1".to_vec(), b"x.2".to_vec(), b"y".to_vec()]);
    }

    #[test]
    fn children_of_a_data_frame_cell_get_oldna() {
        let ctx = Ctx { auto_unbox: true, na: Some(Na::Drop), oldna: Some(Na::Str) };
        let c = list_child_ctx(ctx);
        assert_eq!(c.na, Some(Na::Str));
        assert_eq!(c.oldna, None);
        let c = list_child_ctx(Ctx { auto_unbox: false, na: Some(Na::Null), oldna: None });
        assert_eq!(c.na, Some(Na::Null));
        assert!(!c.auto_unbox);
    }
}
