//! The SEXP walker behind the payload and fixed encodings.

use super::rapi::*;
use super::{Digits, EncodeOptions, NaMode};
use extendr_ffi::*;
use mcplite_engine::json::{write_shortest_f64, write_str_bytes};
use mcplite_engine::numfmt::{self, Flavor, NumDigits};

/// jsonlite's `na` after `match.arg()`: `"null"`, `"string"` or `"NA"`
/// (drop the cell; only data frame columns get it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Na {
    Null,
    Str,
    Drop,
}

/// What jsonlite's methods pass down: `auto_unbox`, `na` (None = `NULL`,
/// i.e. the class default) and `oldna` (what lists/matrices inside a data
/// frame use instead of `"NA"`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ctx {
    auto_unbox: bool,
    na: Option<Na>,
    oldna: Option<Na>,
}

#[derive(Clone, Copy)]
enum NumMode {
    Jsonlite(NumDigits, Flavor),
    Shortest,
}

/// One JSON text per element (`None` = an `NA` that is dropped/unset).
type Pieces = Vec<Option<Vec<u8>>>;

/// The class vector a method sees (after jsonlite's `ANY` method dropped
/// unknown leading classes, `AsIs`/`unbox()` removed theirs, ...).
#[derive(Clone)]
struct Cls {
    v: Vec<SEXP>,
    /// `v` is exactly `x`'s class attribute.
    orig: bool,
    /// `c(x)` / `as.vector(x)`: ignore class, dim and S4-ness entirely.
    bare: bool,
}

impl Cls {
    unsafe fn of(x: SEXP) -> Cls {
        let mut v = Vec::new();
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
        Cls { v, orig: true, bare: false }
    }
    fn bare() -> Cls {
        Cls { v: Vec::new(), orig: false, bare: true }
    }
    fn implicit() -> Cls {
        Cls { v: Vec::new(), orig: false, bare: false }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
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

pub(crate) unsafe fn inherits(x: SEXP, name: &[u8]) -> bool {
    if !is_object(x) {
        return false;
    }
    let c = attr(x, R_ClassSymbol);
    if ty(c) != SEXPTYPE::STRSXP {
        return false;
    }
    (0..xlen(c)).any(|i| char_bytes(STRING_ELT(c, i as R_xlen_t)) == name)
}

unsafe fn is_atomic(x: SEXP) -> bool {
    use SEXPTYPE::*;
    matches!(ty(x), LGLSXP | INTSXP | REALSXP | CPLXSXP | STRSXP | RAWSXP)
}

/// An atomic vector ready to print element by element.
enum Atom {
    Int(*const i32, usize),
    Real(*const f64, usize),
    Lgl(*const i32, usize),
    Str(SEXP, usize),
    Factor(*const i32, usize, Vec<Small>),
    Int64(*const i64, usize),
    Pre(Pieces),
}

impl Atom {
    fn len(&self) -> usize {
        match self {
            Atom::Int(_, n) | Atom::Real(_, n) | Atom::Lgl(_, n) | Atom::Str(_, n) | Atom::Int64(_, n) => *n,
            Atom::Factor(_, n, _) => *n,
            Atom::Pre(p) => p.len(),
        }
    }
    /// jsonlite's default `na` for the method this vector reaches.
    fn default_na(&self) -> Na {
        match self {
            Atom::Int(..) | Atom::Real(..) | Atom::Int64(..) => Na::Str,
            _ => Na::Null,
        }
    }
}

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

pub struct Encoder {
    num: NumMode,
    null_list: bool,
    auto_unbox: bool,
    na: Option<Na>,
    /// `digits` as R would pass it to `prettyNum()` for complex numbers.
    digits_r: Digits,
    scratch: Vec<u8>,
    /// Current nesting depth (bounded so that a pathological value cannot
    /// overflow the C stack; jsonlite itself fails far earlier).
    depth: usize,
}

/// Maximum nesting of lists/data frames/matrices the encoder accepts.
const MAX_DEPTH: usize = 1000;

impl Encoder {
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
        }
    }

    pub fn fixed() -> Encoder {
        Encoder {
            num: NumMode::Shortest,
            null_list: false,
            auto_unbox: true,
            na: None,
            digits_r: Digits::Decimal(15),
            scratch: Vec::new(),
            depth: 0,
        }
    }

    /// Encode `x` as one JSON value appended to `out`.
    pub unsafe fn encode(&mut self, x: SEXP, out: &mut Vec<u8>) -> Result<(), String> {
        let ctx = Ctx { auto_unbox: self.auto_unbox, na: self.na, oldna: None };
        let cls = Cls::of(x);
        self.value(x, &cls, ctx, out)
    }

    // -- dispatch ---------------------------------------------------------

    unsafe fn dispatch(&mut self, x: SEXP, cls: &Cls) -> Result<(Kind, usize), String> {
        use SEXPTYPE::*;
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
                _ => return Err(format!("No method asJSON S3 class: {}", type_class(x))),
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
            // A class registered with setOldClass() (e.g. "mts") reaches the
            // method of its nearest registered superclass; an unregistered
            // one goes to jsonlite's ANY method, which drops it.
            for sup in registered_superclasses(name) {
                if let Some(k) = kind_of_class(sup.as_bytes()) {
                    return Ok((k, i));
                }
            }
        }
        let last = cls.v.last().map(|c| String::from_utf8_lossy(char_bytes(*c)).into_owned()).unwrap_or_default();
        Err(format!("No method asJSON S3 class: {last}"))
    }

    /// S4 objects: jsonlite has methods for a few basic classes an S4 class
    /// may extend; anything else is "No method for S4 class".
    unsafe fn dispatch_s4(&mut self, x: SEXP) -> Result<(Kind, usize), String> {
        let mut prot = Prot::new();
        let name = class1(x);
        if let Ok(sup) = r_call(&mut prot, "methods::is", &[(None, x)]) {
            if ty(sup) == SEXPTYPE::STRSXP {
                for i in 0..xlen(sup) {
                    let c = char_bytes(STRING_ELT(sup, i as R_xlen_t));
                    if let Some(k) = kind_of_class(c) {
                        if matches!(
                            k,
                            Kind::Num | Kind::Lgl | Kind::Chr | Kind::List | Kind::Cplx | Kind::Raw | Kind::Function
                        ) {
                            return Ok((k, usize::MAX));
                        }
                    }
                }
            }
        }
        Err(format!("No method for S4 class:{name}"))
    }

    /// `x` with class attribute `cls.v[from..]` for calling R methods.
    unsafe fn obj_with_class(&mut self, prot: &mut Prot, x: SEXP, cls: &Cls, from: usize) -> Result<SEXP, String> {
        if from == usize::MAX || (cls.orig && from == 0) || cls.bare {
            return Ok(x);
        }
        if cls.v.len() <= from {
            return r_call(prot, "unclass", &[(None, x)]);
        }
        let cv = str_vec(prot, &cls.v[from..]);
        r_call(prot, "structure", &[(None, x), (Some("class"), cv)])
    }

    // -- values -----------------------------------------------------------

    unsafe fn value(&mut self, x: SEXP, cls: &Cls, ctx: Ctx, out: &mut Vec<u8>) -> Result<(), String> {
        if self.depth >= MAX_DEPTH {
            return Err(format!("the value is nested more than {MAX_DEPTH} levels deep"));
        }
        self.depth += 1;
        let res = self.value_inner(x, cls, ctx, out);
        self.depth -= 1;
        res
    }

    unsafe fn value_inner(&mut self, x: SEXP, cls: &Cls, ctx: Ctx, out: &mut Vec<u8>) -> Result<(), String> {
        let (kind, at) = self.dispatch(x, cls)?;
        match kind {
            Kind::Null => {
                out.extend_from_slice(if self.null_list { b"{}" } else { b"null" });
                Ok(())
            }
            Kind::List => self.list_value(x, ctx, out, false),
            Kind::Pairlist => self.pairlist_value(x, ctx, out),
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
                    return Err(format!("values must be length 1, but the unboxed value has length {}", p.len()));
                }
                match &p[0] {
                    Some(b) => out.extend_from_slice(b),
                    None => out.extend_from_slice(b"null"),
                }
                Ok(())
            }
            Kind::Ts => self.value(x, &Cls::bare(), ctx, out),
            Kind::Sfc => {
                let mut prot = Prot::new();
                let y = sfc_to_list(&mut prot, x)?;
                self.value(y, &Cls::of(y), ctx, out)
            }
            _ => {
                let mut prot = Prot::new();
                let (atom, na) = self.to_atom(&mut prot, x, kind, cls, at, ctx)?;
                self.atom_value(&atom, na, ctx.auto_unbox, out)
            }
        }
    }

    unsafe fn asis(&mut self, x: SEXP, cls: &Cls, at: usize, ctx: Ctx) -> (Cls, Ctx) {
        let mut v: Vec<SEXP> = Vec::new();
        for c in &cls.v[at..] {
            let b = char_bytes(*c);
            if b != b"AsIs" && !v.iter().any(|o| char_bytes(*o) == b) {
                v.push(*c);
            }
        }
        let ncls = Cls { v, orig: false, bare: false };
        let mut ctx2 = ctx;
        if is_atomic(x) && xlen(x) == 1 {
            ctx2.auto_unbox = false;
        }
        (ncls, ctx2)
    }

    /// jsonlite's `collapse = FALSE` output of `x`.
    unsafe fn pieces(&mut self, x: SEXP, cls: &Cls, ctx: Ctx, unname: bool) -> Result<Pieces, String> {
        if self.depth >= MAX_DEPTH {
            return Err(format!("the value is nested more than {MAX_DEPTH} levels deep"));
        }
        self.depth += 1;
        let res = self.pieces_inner(x, cls, ctx, unname);
        self.depth -= 1;
        res
    }

    unsafe fn pieces_inner(&mut self, x: SEXP, cls: &Cls, ctx: Ctx, unname: bool) -> Result<Pieces, String> {
        let (kind, at) = self.dispatch(x, cls)?;
        match kind {
            Kind::Null => Ok(vec![Some(if self.null_list { b"{}".to_vec() } else { b"null".to_vec() })]),
            Kind::List | Kind::Pairlist => {
                let (items, names) = self.list_items(x)?;
                if !is_nil(names) && !unname {
                    let mut b = Vec::new();
                    self.list_value(x, ctx, &mut b, false)?;
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
                let mut b = Vec::new();
                self.data_frame(x, ctx, &mut b, Some(&mut p))?;
                Ok(p)
            }
            Kind::Matrix => {
                let mut p = Vec::new();
                let mut b = Vec::new();
                let rows = self.matrix(x, ctx, &mut b, Some(&mut p));
                rows?;
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
                let mut prot = Prot::new();
                let y = sfc_to_list(&mut prot, x)?;
                self.pieces(y, &Cls::of(y), ctx, unname)
            }
            _ => {
                let mut prot = Prot::new();
                let (atom, na) = self.to_atom(&mut prot, x, kind, cls, at, ctx)?;
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

    /// Convert an atomic-like value to an [`Atom`]; also returns the `na`
    /// to use when the method resolved it itself (complex numbers).
    unsafe fn to_atom(
        &mut self,
        prot: &mut Prot,
        x: SEXP,
        kind: Kind,
        cls: &Cls,
        at: usize,
        ctx: Ctx,
    ) -> Result<(Atom, Option<Na>), String> {
        use SEXPTYPE::*;
        let na = ctx.na;
        let atom = match kind {
            Kind::Num => match ty(x) {
                INTSXP => Atom::Int(INTEGER(x), xlen(x)),
                REALSXP => Atom::Real(REAL(x), xlen(x)),
                _ => return Err(format!("is.numeric(x) is not TRUE (class {})", class1(x))),
            },
            Kind::Lgl => match ty(x) {
                LGLSXP => Atom::Lgl(LOGICAL(x), xlen(x)),
                _ => return Err(format!("unsupported logical object of class {}", class1(x))),
            },
            Kind::Chr => match ty(x) {
                STRSXP => Atom::Str(x, xlen(x)),
                _ => return Err(format!("unsupported character object of class {}", class1(x))),
            },
            Kind::Int64 => match ty(x) {
                REALSXP => Atom::Int64(REAL(x) as *const i64, xlen(x)),
                _ => return Err("unsupported integer64 object".into()),
            },
            Kind::Factor => {
                let lev = attr(x, R_LevelsSymbol);
                if ty(x) == INTSXP && ty(lev) == STRSXP {
                    let nl = xlen(lev);
                    let mut levels = Vec::with_capacity(nl);
                    for i in 0..nl {
                        let c = STRING_ELT(lev, i as R_xlen_t);
                        let mut b = Vec::new();
                        if c == R_NaString {
                            b.extend_from_slice(b"\x00NA");
                        } else {
                            let s = utf8_of(c, &mut self.scratch)?;
                            write_str_bytes(&mut b, s);
                        }
                        levels.push(Small::new(&b));
                    }
                    Atom::Factor(INTEGER(x), xlen(x), levels)
                } else {
                    let obj = self.obj_with_class(prot, x, cls, at)?;
                    let s = r_call(prot, "as.character", &[(None, obj)])?;
                    str_atom(s)?
                }
            }
            Kind::Date => {
                let obj = self.obj_with_class(prot, x, cls, at)?;
                let s = r_call(prot, "format", &[(None, obj)])?;
                str_atom(s)?
            }
            Kind::Posix => {
                let obj = self.obj_with_class(prot, x, cls, at)?;
                let empty = prot.add(Rf_allocVector(STRSXP, 1));
                SET_STRING_ELT(empty, 0, mk_char(b""));
                let s = r_call(prot, "format", &[(None, obj), (Some("format"), empty)])?;
                str_atom(s)?
            }
            Kind::Json => {
                if ty(x) == STRSXP {
                    Atom::Str(x, xlen(x))
                } else {
                    let obj = self.obj_with_class(prot, x, cls, at)?;
                    let s = r_call(prot, "as.character", &[(None, obj)])?;
                    str_atom(s)?
                }
            }
            Kind::Function => {
                let s = r_call(prot, "deparse", &[(None, x)])?;
                str_atom(s)?
            }
            Kind::AsChar => {
                let obj = self.obj_with_class(prot, x, cls, at)?;
                let s = r_call(prot, "as.character", &[(None, obj)])?;
                str_atom(s)?
            }
            Kind::Raw => {
                if ty(x) != RAWSXP {
                    return Err(format!("unsupported raw object of class {}", class1(x)));
                }
                let bytes = std::slice::from_raw_parts(RAW(x) as *const u8, xlen(x));
                let mut b = Vec::new();
                write_str_bytes(&mut b, &base64_jsonlite(bytes));
                Atom::Pre(vec![Some(b)])
            }
            Kind::Blob => {
                if ty(x) != VECSXP {
                    return Err("unsupported blob object".into());
                }
                let n = xlen(x);
                let mut p = Vec::with_capacity(n);
                for i in 0..n {
                    let e = VECTOR_ELT(x, i as R_xlen_t);
                    if is_nil(e) {
                        p.push(None);
                    } else if ty(e) == RAWSXP {
                        let bytes = std::slice::from_raw_parts(RAW(e) as *const u8, xlen(e));
                        let mut b = Vec::new();
                        write_str_bytes(&mut b, &base64_jsonlite(bytes));
                        p.push(Some(b));
                    } else {
                        return Err("is.raw(input) is not TRUE".into());
                    }
                }
                Atom::Pre(p)
            }
            Kind::Cplx => {
                if ty(x) != CPLXSXP {
                    return Err(format!("unsupported complex object of class {}", class1(x)));
                }
                let d = match self.digits_r {
                    Digits::Decimal(n) | Digits::Signif(n) => Rf_ScalarInteger(n),
                    Digits::Max => Rf_ScalarLogical(NA_LGL),
                };
                let d = prot.add(d);
                let s = r_call(prot, "prettyNum", &[(None, x), (Some("digits"), d)])?;
                if ty(s) != STRSXP || xlen(s) != xlen(x) {
                    return Err("prettyNum() of a complex vector failed".into());
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
                        let sb = utf8_of(c, &mut self.scratch)?;
                        write_str_bytes(&mut b, sb);
                        p.push(Some(b));
                    }
                }
                return Ok((Atom::Pre(p), Some(na_c)));
            }
            _ => return Err("internal error: not an atomic kind".into()),
        };
        Ok((atom, na))
    }

    unsafe fn atom_value(
        &mut self,
        atom: &Atom,
        na: Option<Na>,
        auto_unbox: bool,
        out: &mut Vec<u8>,
    ) -> Result<(), String> {
        let na = na.unwrap_or(atom.default_na());
        let n = atom.len();
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
                    if let NumMode::Jsonlite(digits, flavor) = self.num {
                        let xs = std::slice::from_raw_parts(*p, n);
                        numfmt::push_jsonlite_doubles(out, xs, digits, flavor, |out, v| {
                            self.write_double(v, na, out);
                        });
                        // the last comma becomes the closing bracket
                        *out.last_mut().unwrap() = b']';
                        return Ok(());
                    }
                    let xs = std::slice::from_raw_parts(*p, n);
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

    #[inline]
    fn write_double(&self, v: f64, na: Na, out: &mut Vec<u8>) -> bool {
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
    #[inline(always)]
    unsafe fn write_elem(&mut self, atom: &Atom, i: usize, na: Na, out: &mut Vec<u8>) -> Result<bool, String> {
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
                        let b = utf8_of(c, &mut self.scratch)?;
                        write_str_bytes(out, b);
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
                    if l.len > 0 && l.buf[0] == 0 {
                        write_na(na, out)
                    } else {
                        l.push_to(out);
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

    // -- lists ------------------------------------------------------------

    /// Elements and names (a STRSXP or R_NilValue) of a list or pairlist.
    unsafe fn list_items(&mut self, x: SEXP) -> Result<(Vec<SEXP>, SEXP), String> {
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
            if !any_tag {
                return Ok((items, R_NilValue));
            }
            // build names later from tags: signal with x itself
            return Ok((items, x));
        }
        Err(format!("unsupported list object of class {}", class1(x)))
    }

    /// Cleaned names (jsonlite's `cleannames()`): UTF-8, "" and NA replaced
    /// by the 1-based position, then `make.unique()`.
    unsafe fn clean_names(&mut self, names: SEXP, n: usize) -> Result<Vec<Vec<u8>>, String> {
        let mut v: Vec<Vec<u8>> = Vec::with_capacity(n);
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
        for (i, b) in v.iter_mut().enumerate() {
            if b.is_empty() {
                b.extend_from_slice((i + 1).to_string().as_bytes());
            }
        }
        make_unique(&mut v);
        Ok(v)
    }

    unsafe fn list_value(&mut self, x: SEXP, ctx: Ctx, out: &mut Vec<u8>, unname: bool) -> Result<(), String> {
        let (items, names) = self.list_items(x)?;
        let cctx = list_child_ctx(ctx);
        if !is_nil(names) && !unname {
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

    unsafe fn pairlist_value(&mut self, x: SEXP, ctx: Ctx, out: &mut Vec<u8>) -> Result<(), String> {
        self.list_value(x, ctx, out, false)
    }

    // -- data frames --------------------------------------------------------

    /// A data frame as an array of row objects (jsonlite `dataframe =
    /// "rows"`). With `rows`, the row texts are collected there instead
    /// (`collapse = FALSE`) and `out` is scratch.
    unsafe fn data_frame(
        &mut self,
        x: SEXP,
        ctx: Ctx,
        out: &mut Vec<u8>,
        rows: Option<&mut Pieces>,
    ) -> Result<(), String> {
        use SEXPTYPE::*;
        if ty(x) != VECSXP {
            return Err(format!("unsupported data frame of type {}", type_class(x)));
        }
        let mut prot = Prot::new();
        let ncol0 = xlen(x);
        let names = attr(x, R_NamesSymbol);
        let has_names = !is_nil(names) && xlen(names) == ncol0;
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

        // column writers
        enum Col {
            Atom(Atom, Na),
            Pieces(Pieces),
        }
        let mut writers: Vec<Col> = Vec::with_capacity(ncol);
        for (j, &c) in cols.iter().enumerate() {
            let w = if ty(c) == RAWSXP {
                let s = r_call(&mut prot, "as.character.hexmode", &[(None, c)])?;
                let a = str_atom(s)?;
                Col::Atom(a, col_na.unwrap_or(Na::Null))
            } else {
                let cls = Cls::of(c);
                let (kind, at) = self.dispatch(c, &cls)?;
                let unname =
                    matches!(ty(c), VECSXP | LISTSXP) && !inherits(c, b"data.frame") && !is_nil(attr(c, R_NamesSymbol));
                match kind {
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
                        let (atom, na) = self.to_atom(&mut prot, c, kind, &cls, at, cctx)?;
                        let na = na.unwrap_or(atom.default_na());
                        Col::Atom(atom, na)
                    }
                    _ => Col::Pieces(self.pieces(c, &cls, cctx, unname)?),
                }
            };
            let len = match &w {
                Col::Atom(a, _) => a.len(),
                Col::Pieces(p) => p.len(),
            };
            if len != nrow {
                return Err(format!("values must be length {nrow},\n but FUN(X[[{}]]) result is length {len}", j + 1));
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
        const AHEAD: usize = 12;

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

    // -- matrices and arrays --------------------------------------------------

    unsafe fn matrix(&mut self, x: SEXP, ctx: Ctx, out: &mut Vec<u8>, rows: Option<&mut Pieces>) -> Result<(), String> {
        use SEXPTYPE::*;
        let dimv = attr(x, R_DimSymbol);
        let dims: Vec<usize> = match ty(dimv) {
            INTSXP => {
                std::slice::from_raw_parts(INTEGER(dimv), xlen(dimv)).iter().map(|&d| d.max(0) as usize).collect()
            }
            REALSXP => {
                std::slice::from_raw_parts(REAL(dimv), xlen(dimv)).iter().map(|&d| d.max(0.0) as usize).collect()
            }
            _ => Vec::new(),
        };
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
            return Err(format!("the array has more than {MAX_DEPTH} dimensions"));
        }
        let total: usize = dims.iter().product();
        // elements of c(x), as jsonlite renders them with collapse = FALSE
        let mut prot = Prot::new();
        let elems: Elems = match ty(x) {
            VECSXP => Elems::List(x),
            LGLSXP | INTSXP | REALSXP | STRSXP | CPLXSXP | RAWSXP => {
                let (kind, _) = self.dispatch(x, &Cls::bare())?;
                let (atom, na) = self.to_atom(&mut prot, x, kind, &Cls::bare(), 0, ectx)?;
                let na = na.unwrap_or(atom.default_na());
                Elems::Atom(atom, na)
            }
            _ => return Err(format!("No method asJSON S3 class: {}", type_class(x))),
        };
        let n_el = match &elems {
            Elems::List(l) => xlen(*l),
            Elems::Atom(a, _) => a.len(),
        };
        if n_el != total {
            return Err(format!("dims [product {total}] do not match the length of object [{n_el}]"));
        }
        let mut strides = vec![1usize; dims.len()];
        for k in 1..dims.len() {
            strides[k] = strides[k - 1] * dims[k - 1];
        }
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
    ) -> Result<(), String> {
        out.push(b'[');
        for i in 0..dims[level] {
            if i > 0 {
                out.push(b',');
            }
            let off = offset + i * strides[level];
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
        out.push(b']');
        Ok(())
    }
}

/// A short byte string stored padded so that it can be appended with one
/// fixed-size copy (keys and factor levels are written once per cell).
struct Small {
    buf: [u8; 32],
    len: usize,
    long: Vec<u8>,
}

impl Small {
    fn new(b: &[u8]) -> Small {
        let mut s = Small { buf: [0; 32], len: b.len(), long: Vec::new() };
        if b.len() <= 32 {
            s.buf[..b.len()].copy_from_slice(b);
        } else {
            s.long = b.to_vec();
        }
        s
    }
    #[inline(always)]
    fn push_to(&self, out: &mut Vec<u8>) {
        if self.len <= 32 {
            out.reserve(32);
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

/// Hint the CPU to fetch the string data of CHARSXP `c` (row-wise walks
/// over character columns otherwise stall on every cell).
#[inline(always)]
unsafe fn prefetch(c: SEXP) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(c as *const i8);
        _mm_prefetch::<_MM_HINT_T0>((c as *const i8).add(64));
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = c;
}

enum Elems {
    List(SEXP),
    Atom(Atom, Na),
}

/// The context the list method gives its elements.
fn list_child_ctx(ctx: Ctx) -> Ctx {
    let na = if ctx.na == Some(Na::Drop) { ctx.oldna } else { ctx.na };
    Ctx { auto_unbox: ctx.auto_unbox, na, oldna: None }
}

/// `lapply(unclass(x), jsonlite:::geom_to_geojson)`: what jsonlite's `sfc`
/// method encodes.
unsafe fn sfc_to_list(prot: &mut Prot, x: SEXP) -> Result<SEXP, String> {
    let u = r_call(prot, "unclass", &[(None, x)])?;
    let ns = {
        let s = prot.add(Rf_allocVector(SEXPTYPE::STRSXP, 1));
        SET_STRING_ELT(s, 0, mk_char(b"jsonlite"));
        s
    };
    let env = r_call(prot, "asNamespace", &[(None, ns)])?;
    let name = {
        let s = prot.add(Rf_allocVector(SEXPTYPE::STRSXP, 1));
        SET_STRING_ELT(s, 0, mk_char(b"geom_to_geojson"));
        s
    };
    let fun = r_call(prot, "get", &[(None, name), (Some("envir"), env)])?;
    r_call(prot, "lapply", &[(None, u), (None, fun)])
}

/// Superclasses (nearest first) of an S3 class registered with
/// `setOldClass()`, as `methods::extends()` lists them; empty for an
/// unregistered class. Cached per class name.
unsafe fn registered_superclasses(name: &[u8]) -> Vec<String> {
    use std::cell::RefCell;
    use std::collections::HashMap;
    thread_local! {
        static CACHE: RefCell<HashMap<Vec<u8>, Vec<String>>> = RefCell::new(HashMap::new());
    }
    if let Some(v) = CACHE.with(|c| c.borrow().get(name).cloned()) {
        return v;
    }
    let mut prot = Prot::new();
    let arg = prot.add(Rf_allocVector(SEXPTYPE::STRSXP, 1));
    SET_STRING_ELT(arg, 0, mk_char(name));
    let mut sup = Vec::new();
    if let Ok(r) = r_call(&mut prot, "methods::extends", &[(None, arg)]) {
        if ty(r) == SEXPTYPE::STRSXP {
            for i in 1..xlen(r) {
                sup.push(String::from_utf8_lossy(char_bytes(STRING_ELT(r, i as R_xlen_t))).into_owned());
            }
        }
    }
    CACHE.with(|c| c.borrow_mut().insert(name.to_vec(), sup.clone()));
    sup
}

/// Class vector after `unbox()`'s `scalar` method removed its class.
fn scalar_cls(cls: &Cls, at: usize) -> Cls {
    if at == usize::MAX || cls.v.len() <= at + 1 {
        Cls::implicit()
    } else {
        Cls { v: cls.v[at + 1..].to_vec(), orig: false, bare: false }
    }
}

unsafe fn str_atom(s: SEXP) -> Result<Atom, String> {
    if ty(s) != SEXPTYPE::STRSXP {
        return Err("conversion to character failed".into());
    }
    Ok(Atom::Str(s, xlen(s)))
}

/// R's `make.unique(names)` with sep ".".
pub(crate) fn make_unique(v: &mut [Vec<u8>]) {
    let n = v.len();
    if n < 2 {
        return;
    }
    // fast path: no duplicates
    let dup = if n <= 8 {
        (1..n).any(|i| (0..i).any(|k| v[k] == v[i]))
    } else {
        let mut seen = std::collections::HashSet::with_capacity(n);
        !v.iter().all(|s| seen.insert(s.as_slice()))
    };
    if !dup {
        return;
    }
    use std::collections::{HashMap, HashSet};
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

/// Base64 as jsonlite's `base64_enc()` writes it: standard alphabet with
/// padding and a newline after every 72 output characters.
pub(crate) fn base64_jsonlite(bytes: &[u8]) -> Vec<u8> {
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
    fn base64_lines() {
        assert_eq!(base64_jsonlite(&[1]), b"AQ==");
        assert_eq!(base64_jsonlite(&[]), b"");
        let v: Vec<u8> = (1..=54).collect();
        let b = base64_jsonlite(&v);
        assert_eq!(b.len(), 73);
        assert_eq!(b[72], b'\n');
    }
}
