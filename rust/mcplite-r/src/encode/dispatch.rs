//! Class dispatch: which of jsonlite's `asJSON` methods a value reaches,
//! from its class vector (S3, classes registered with `setOldClass()`, S4),
//! and the class vectors that `I()`, `unbox()` and friends leave behind.

use std::cell::RefCell;
use std::collections::HashMap;

use super::encoder::{Ctx, Encoder};
use crate::error::{Error, Result};
use crate::rapi::eval::r_call;
use crate::rapi::strings::{char_bytes, mk_char};
use crate::rapi::*;

/// The class vector a method sees (after jsonlite's `ANY` method dropped
/// unknown leading classes, `AsIs`/`unbox()` removed theirs, ...).
#[derive(Clone)]
pub(super) struct Cls {
    /// Class names (CHARSXPs of the value's class attribute).
    pub v: Vec<SEXP>,
    /// `v` is exactly `x`'s class attribute.
    pub orig: bool,
    /// `c(x)` / `as.vector(x)`: ignore class, dim and S4-ness entirely.
    pub bare: bool,
}

impl Cls {
    /// The class vector of `x` as it is.
    ///
    /// # Safety
    /// The SEXP contract holds for `x`.
    pub unsafe fn of(x: SEXP) -> Cls {
        let mut v = Vec::new();
        // SAFETY: caller's contract.
        unsafe {
            if is_object(x) {
                let c = attr(x, R_ClassSymbol);
                if ty(c) == SEXPTYPE::STRSXP {
                    let n = xlen(c);
                    v.reserve(n);
                    for i in 0..n {
                        v.push(STRING_ELT(c, i as R_xlen_t));
                    }
                }
            }
        }
        Cls { v, orig: true, bare: false }
    }

    /// The class vector of `c(x)`.
    pub fn bare() -> Cls {
        Cls { v: Vec::new(), orig: false, bare: true }
    }

    /// No class attribute: the implicit class of the type decides.
    pub fn implicit() -> Cls {
        Cls { v: Vec::new(), orig: false, bare: false }
    }
}

/// The jsonlite method a value reaches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Null,
    Num,
    Lgl,
    Chr,
    Cplx,
    Raw,
    List,
    Pairlist,
    DataFrame,
    Matrix,
    Factor,
    Date,
    Posix,
    AsIs,
    Scalar,
    Json,
    Ts,
    Function,
    AsChar,
    Blob,
    Int64,
    /// `sfc` geometry lists: converted by jsonlite's own `geom_to_geojson()`.
    Sfc,
}

/// The method of a class name, if jsonlite has one for it.
fn kind_of_class(name: &[u8]) -> Option<Kind> {
    Some(match name {
        b"numeric" | b"integer" | b"double" => Kind::Num,
        b"logical" => Kind::Lgl,
        b"character" => Kind::Chr,
        b"complex" => Kind::Cplx,
        b"raw" => Kind::Raw,
        b"list" => Kind::List,
        b"pairlist" => Kind::Pairlist,
        b"NULL" => Kind::Null,
        b"function" => Kind::Function,
        b"data.frame" => Kind::DataFrame,
        b"matrix" | b"array" => Kind::Matrix,
        b"factor" | b"ordered" => Kind::Factor,
        b"Date" => Kind::Date,
        b"POSIXct" | b"POSIXlt" | b"POSIXt" => Kind::Posix,
        b"AsIs" => Kind::AsIs,
        b"scalar" => Kind::Scalar,
        b"json" => Kind::Json,
        b"ts" => Kind::Ts,
        b"hms" | b"ITime" => Kind::AsChar,
        b"blob" => Kind::Blob,
        b"integer64" => Kind::Int64,
        // jsonlite's sf method with its default sf = "dataframe" is the
        // data frame method
        b"sf" => Kind::DataFrame,
        b"sfc" => Kind::Sfc,
        _ => return None,
    })
}

/// Is `x` an atomic vector?
///
/// # Safety
/// The SEXP contract holds for `x`.
pub(super) unsafe fn is_atomic(x: SEXP) -> bool {
    use SEXPTYPE::*;
    // SAFETY: caller's contract.
    matches!(unsafe { ty(x) }, LGLSXP | INTSXP | REALSXP | CPLXSXP | STRSXP | RAWSXP)
}

impl Encoder {
    /// The method `x` reaches with class vector `cls`, and the position in
    /// `cls` of the class that chose it (`usize::MAX` for S4).
    ///
    /// # Safety
    /// As [`Encoder::encode`].
    pub(super) unsafe fn dispatch(&mut self, x: SEXP, cls: &Cls) -> Result<(Kind, usize)> {
        use SEXPTYPE::*;
        // SAFETY: caller's contract.
        unsafe {
            if cls.bare || cls.v.is_empty() {
                if !cls.bare {
                    if is_s4(x) {
                        return self.dispatch_s4(x);
                    }
                    if !is_nil(attr(x, R_DimSymbol)) {
                        return Ok((Kind::Matrix, 0));
                    }
                }
                let k = match ty(x) {
                    NILSXP => Kind::Null,
                    LGLSXP => Kind::Lgl,
                    INTSXP | REALSXP => Kind::Num,
                    CPLXSXP => Kind::Cplx,
                    STRSXP => Kind::Chr,
                    RAWSXP => Kind::Raw,
                    VECSXP => Kind::List,
                    LISTSXP => Kind::Pairlist,
                    CLOSXP | BUILTINSXP | SPECIALSXP => Kind::Function,
                    _ => return Err(Error::json(format!("No method asJSON S3 class: {}", type_class(x)))),
                };
                return Ok((k, 0));
            }
            if is_s4(x) {
                return self.dispatch_s4(x);
            }
            for (i, c) in cls.v.iter().enumerate() {
                let name = char_bytes(*c);
                if let Some(k) = kind_of_class(name) {
                    return Ok((k, i));
                }
                // A class registered with setOldClass() (e.g. "mts") reaches
                // the method of its nearest registered superclass; an
                // unregistered one goes to jsonlite's ANY method, which drops
                // it.
                for sup in registered_superclasses(name) {
                    if let Some(k) = kind_of_class(sup.as_bytes()) {
                        return Ok((k, i));
                    }
                }
            }
            let last = cls.v.last().map(|c| String::from_utf8_lossy(char_bytes(*c)).into_owned()).unwrap_or_default();
            Err(Error::json(format!("No method asJSON S3 class: {last}")))
        }
    }

    /// S4 objects: jsonlite has methods for a few basic classes an S4 class
    /// may extend; anything else is "No method for S4 class".
    ///
    /// # Safety
    /// As [`Encoder::encode`].
    unsafe fn dispatch_s4(&mut self, x: SEXP) -> Result<(Kind, usize)> {
        // SAFETY: caller's contract; `sup` is protected in `prot`.
        unsafe {
            let mut prot = Protect::new();
            let name = class1(x);
            if let Ok(sup) = r_call(&mut prot, "methods::is", &[(None, x)]) {
                if ty(sup) == SEXPTYPE::STRSXP {
                    for i in 0..xlen(sup) {
                        let c = char_bytes(STRING_ELT(sup, i as R_xlen_t));
                        if let Some(k) = kind_of_class(c) {
                            if matches!(
                                k,
                                Kind::Num
                                    | Kind::Lgl
                                    | Kind::Chr
                                    | Kind::List
                                    | Kind::Cplx
                                    | Kind::Raw
                                    | Kind::Function
                            ) {
                                return Ok((k, usize::MAX));
                            }
                        }
                    }
                }
            }
            Err(Error::json(format!("No method for S4 class:{name}")))
        }
    }

    /// `x` with class attribute `cls.v[from..]`, for calling R methods.
    ///
    /// # Safety
    /// As [`Encoder::encode`]; the value is protected in `prot`.
    pub(super) unsafe fn obj_with_class(
        &mut self,
        prot: &mut Protect,
        x: SEXP,
        cls: &Cls,
        from: usize,
    ) -> Result<SEXP> {
        if from == usize::MAX || (cls.orig && from == 0) || cls.bare {
            return Ok(x);
        }
        // SAFETY: caller's contract.
        unsafe {
            if cls.v.len() <= from {
                return r_call(prot, "unclass", &[(None, x)]).map_err(Error::json);
            }
            let cv = str_vec(prot, &cls.v[from..]);
            r_call(prot, "structure", &[(None, x), (Some("class"), cv)]).map_err(Error::json)
        }
    }

    /// The class vector and context after `I()`'s `AsIs` method.
    ///
    /// # Safety
    /// As [`Encoder::encode`].
    pub(super) unsafe fn asis(&mut self, x: SEXP, cls: &Cls, at: usize, ctx: Ctx) -> (Cls, Ctx) {
        let mut v: Vec<SEXP> = Vec::new();
        // SAFETY: caller's contract; the class names are CHARSXPs of `x`.
        unsafe {
            for c in &cls.v[at..] {
                let b = char_bytes(*c);
                if b != b"AsIs" && !v.iter().any(|o| char_bytes(*o) == b) {
                    v.push(*c);
                }
            }
        }
        let ncls = Cls { v, orig: false, bare: false };
        let mut ctx2 = ctx;
        // SAFETY: caller's contract.
        if unsafe { is_atomic(x) && xlen(x) == 1 } {
            ctx2.auto_unbox = false;
        }
        (ncls, ctx2)
    }
}

/// Class vector after `unbox()`'s `scalar` method removed its class.
pub(super) fn scalar_cls(cls: &Cls, at: usize) -> Cls {
    if at == usize::MAX || cls.v.len() <= at + 1 {
        Cls::implicit()
    } else {
        Cls { v: cls.v[at + 1..].to_vec(), orig: false, bare: false }
    }
}

/// `lapply(unclass(x), jsonlite:::geom_to_geojson)`: what jsonlite's `sfc`
/// method encodes. Protected in `prot`.
///
/// # Safety
/// The SEXP contract holds for `x`; under an R entry point or `toplevel()`.
pub(super) unsafe fn sfc_to_list(prot: &mut Protect, x: SEXP) -> Result<SEXP> {
    // SAFETY: caller's contract; every value is protected in `prot`.
    unsafe {
        let u = r_call(prot, "unclass", &[(None, x)]).map_err(Error::json)?;
        let ns = prot.add(mk_string(b"jsonlite"));
        let env = r_call(prot, "asNamespace", &[(None, ns)]).map_err(Error::json)?;
        let name = prot.add(mk_string(b"geom_to_geojson"));
        let fun = r_call(prot, "get", &[(None, name), (Some("envir"), env)]).map_err(Error::json)?;
        r_call(prot, "lapply", &[(None, u), (None, fun)]).map_err(Error::json)
    }
}

/// Superclasses (nearest first) of an S3 class registered with
/// `setOldClass()`, as `methods::extends()` lists them; empty for an
/// unregistered class. Cached per class name.
///
/// # Safety
/// Main thread; under an R entry point or `toplevel()`.
unsafe fn registered_superclasses(name: &[u8]) -> Vec<String> {
    thread_local! {
        static CACHE: RefCell<HashMap<Vec<u8>, Vec<String>>> = RefCell::new(HashMap::new());
    }
    if let Some(v) = CACHE.with(|c| c.borrow().get(name).cloned()) {
        return v;
    }
    let mut sup = Vec::new();
    // SAFETY: caller's contract; values are protected in `prot`.
    unsafe {
        let mut prot = Protect::new();
        let arg = prot.add(Rf_allocVector(SEXPTYPE::STRSXP, 1));
        SET_STRING_ELT(arg, 0, mk_char(name));
        if let Ok(r) = r_call(&mut prot, "methods::extends", &[(None, arg)]) {
            if ty(r) == SEXPTYPE::STRSXP {
                for i in 1..xlen(r) {
                    sup.push(String::from_utf8_lossy(char_bytes(STRING_ELT(r, i as R_xlen_t))).into_owned());
                }
            }
        }
    }
    CACHE.with(|c| c.borrow_mut().insert(name.to_vec(), sup.clone()));
    sup
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jsonlite_methods_of_classes() {
        assert_eq!(kind_of_class(b"integer"), Some(Kind::Num));
        assert_eq!(kind_of_class(b"ordered"), Some(Kind::Factor));
        assert_eq!(kind_of_class(b"POSIXlt"), Some(Kind::Posix));
        assert_eq!(kind_of_class(b"sf"), Some(Kind::DataFrame));
        assert_eq!(kind_of_class(b"hms"), Some(Kind::AsChar));
        assert_eq!(kind_of_class(b"tbl_df"), None);
    }

    #[test]
    fn unbox_drops_its_class() {
        assert!(scalar_cls(&Cls::bare(), usize::MAX).v.is_empty());
        let c = scalar_cls(&Cls { v: Vec::new(), orig: true, bare: false }, 0);
        assert!(c.v.is_empty() && !c.orig && !c.bare);
    }
}
