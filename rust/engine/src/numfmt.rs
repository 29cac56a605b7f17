//! Number formatting exactly as jsonlite's `num_to_char()` does it.
//!
//! jsonlite turns doubles into text in one of three ways, chosen by its
//! `digits` argument:
//!
//! * `digits = n` (decimal places, default 4): for `1e-5 < |x| < 2^31 - 1`
//!   and `0 <= n < 10` a port of `modp_dtoa2` (round to `n` decimals with
//!   its own rounding quirks, trailing zeros trimmed); otherwise C's
//!   `%.*g` with `ceil(min(cap, max(1, log10|x|) + n))` significant digits;
//! * `digits = NA`: `%.15g` (`%.17g` in jsonlite 1.8.5 and 1.8.6);
//! * `digits = I(n)`: `%.*g` with `ceil(min(cap, n))` significant digits.
//!
//! `cap` is 15 up to jsonlite 1.8.4 and 17 from 1.8.5 on ([`Flavor`]).
//!
//! `%.*g` is emulated without libc: the correctly rounded digits come from
//! the shortest round-trip digits (zmij) when that is provably the same
//! result, and from Rust's exact formatter otherwise (both round half to
//! even on the exact binary value, like glibc).

/// Which jsonlite release's number formatting to reproduce (RULES J2.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavor {
    /// jsonlite <= 1.8.4: significant digits capped at 15, `digits = NA` is `%.15g`.
    V1_8_4,
    /// jsonlite 1.8.5 and 1.8.6: cap 17, `digits = NA` is `%.17g`.
    V1_8_5,
    /// jsonlite >= 1.8.7: cap 17, `digits = NA` is `%.15g` again.
    V1_8_7,
}

impl Flavor {
    /// The flavor for an installed jsonlite version `major.minor.patch`.
    pub fn from_version(major: u32, minor: u32, patch: u32) -> Flavor {
        let v = (major, minor, patch);
        if v < (1, 8, 5) {
            Flavor::V1_8_4
        } else if v < (1, 8, 7) {
            Flavor::V1_8_5
        } else {
            Flavor::V1_8_7
        }
    }

    /// Parse a version string such as `"1.8.4"` or `"2.0.0.9000"`; `None`
    /// when it does not start with two numeric components.
    pub fn from_version_str(s: &str) -> Option<Flavor> {
        let mut it = s.trim().split(['.', '-']).map(|p| p.parse::<u32>());
        let major = it.next()?.ok()?;
        let minor = it.next()?.ok()?;
        let patch = match it.next() {
            Some(Ok(p)) => p,
            _ => 0,
        };
        Some(Flavor::from_version(major, minor, patch))
    }

    fn cap(self) -> f64 {
        match self {
            Flavor::V1_8_4 => 15.0,
            _ => 17.0,
        }
    }

    fn max_digits(self) -> i32 {
        match self {
            Flavor::V1_8_5 => 17,
            _ => 15,
        }
    }
}

/// jsonlite's `digits` argument after R-side normalisation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NumDigits {
    /// `digits = n`: decimal places (`n` as `asInteger()` gives it).
    Decimal(i32),
    /// `digits = NA`: maximum precision.
    Max,
    /// `digits = I(n)`: significant digits.
    Signif(i32),
}

/// Append a finite double the way jsonlite's `num_to_char()` prints it.
pub fn push_jsonlite_double(out: &mut Vec<u8>, val: f64, digits: NumDigits, flavor: Flavor) {
    debug_assert!(val.is_finite());
    match digits {
        NumDigits::Max => push_g(out, val, flavor.max_digits()),
        NumDigits::Signif(n) => {
            let p = (n as f64).min(flavor.cap()).ceil() as i32;
            push_g(out, val, p)
        }
        NumDigits::Decimal(n) => {
            let a = val.abs();
            if (0..10).contains(&n) && in_modp_range(a) {
                push_modp_dtoa2(out, val, n);
            } else {
                let p = (flavor.cap().min(a.log10().max(1.0) + n as f64)).ceil();
                // `(int) ceil(...)` of a NaN/huge value is not reachable for
                // finite input; clamp defensively.
                let p = if p.is_nan() { 6 } else { p.clamp(-1.0, 400.0) as i32 };
                push_g(out, val, p)
            }
        }
    }
}

/// Whether jsonlite prints `|x| = a` with fixed decimals (`modp_dtoa2`)
/// rather than `%g` when `digits` is a number of decimal places.
#[inline]
fn in_modp_range(a: f64) -> bool {
    a < 2147483647.0 && a > 1e-5
}

/// Append the elements of `xs` as jsonlite prints them, each followed by a
/// comma; `other` writes the non-finite ones (`NA`, `NaN`, `Inf`). The same
/// bytes as `push_jsonlite_double()` per element, but the common case of
/// fixed decimals is written with one capacity check per block of values.
pub fn push_jsonlite_doubles(
    out: &mut Vec<u8>,
    xs: &[f64],
    digits: NumDigits,
    flavor: Flavor,
    mut other: impl FnMut(&mut Vec<u8>, f64),
) {
    // bytes one fast value may touch: sign, 10 digits, point, an 8-byte
    // store for the fraction, comma
    const MAX: usize = 21;
    let prec = match digits {
        NumDigits::Decimal(n) if (1..=8).contains(&n) => n as usize,
        _ => 0,
    };
    for block in xs.chunks(256) {
        out.reserve(block.len() * MAX);
        for (i, &v) in block.iter().enumerate() {
            let a = v.abs();
            if prec != 0 && in_modp_range(a) {
                // SAFETY: `MAX` bytes per remaining value of the block are
                // reserved (re-reserved after any slow-path value below).
                unsafe {
                    let len = out.len();
                    let p = out.as_mut_ptr().add(len);
                    let n = modp_dtoa2_fast(p, a, v < 0.0, prec);
                    *p.add(n) = b',';
                    out.set_len(len + n + 1);
                }
            } else {
                if v.is_finite() {
                    push_jsonlite_double(out, v, digits, flavor);
                } else {
                    other(out, v);
                }
                out.push(b',');
                out.reserve((block.len() - i) * MAX);
            }
        }
    }
}

const DIGITS2: &[u8; 200] = b"0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Number of decimal digits of `v`.
#[inline]
fn n_digits(v: u64) -> usize {
    if v < 10_000_000_000 {
        n_digits32(v)
    } else {
        v.ilog10() as usize + 1
    }
}

/// Number of decimal digits of `v < 10^10`.
#[inline]
fn n_digits32(v: u64) -> usize {
    if v < 100_000 {
        if v < 100 {
            if v < 10 {
                1
            } else {
                2
            }
        } else if v < 1_000 {
            3
        } else if v < 10_000 {
            4
        } else {
            5
        }
    } else if v < 10_000_000 {
        if v < 1_000_000 {
            6
        } else {
            7
        }
    } else if v < 100_000_000 {
        8
    } else if v < 1_000_000_000 {
        9
    } else {
        10
    }
}

/// Write `v`, which has exactly `n` decimal digits, at `p`.
///
/// # Safety
/// `p` must be valid for writes of `n` bytes, and `n` must be the digit
/// count of `v` (as [`n_digits`] gives it), so no write lands before `p`.
#[inline]
unsafe fn write_u64_n(p: *mut u8, mut v: u64, n: usize) {
    // SAFETY: every index written is below `n` (the caller's contract).
    unsafe {
        let mut i = n;
        while v >= 100 {
            let r = (v % 100) as usize * 2;
            v /= 100;
            i -= 2;
            *p.add(i) = DIGITS2[r];
            *p.add(i + 1) = DIGITS2[r + 1];
        }
        if v >= 10 {
            let r = v as usize * 2;
            *p.add(i - 2) = DIGITS2[r];
            *p.add(i - 1) = DIGITS2[r + 1];
        } else {
            *p.add(i - 1) = b'0' + v as u8;
        }
    }
}

/// Write `v` in decimal at `p`; returns the length.
///
/// # Safety
/// `p` must be valid for writes of `n_digits(v)` bytes (at most 20, the
/// longest `u64`): only the digits are written.
#[inline]
unsafe fn write_u64(p: *mut u8, v: u64) -> usize {
    let n = n_digits(v);
    // SAFETY: `n` is the digit count of `v`, at most 20.
    unsafe { write_u64_n(p, v, n) };
    n
}

/// Reserve `max` bytes and let `f` write at most that many at the end of
/// `out` through a raw pointer; `f` returns how many it wrote.
///
/// # Safety
/// `f` must write only to the first `max` bytes at the pointer it is given,
/// and must return `n <= max` such that it wrote (initialised) every one of
/// the first `n` bytes: `out` then takes those `n` bytes as its new tail.
#[inline]
unsafe fn write_with(out: &mut Vec<u8>, max: usize, f: impl FnOnce(*mut u8) -> usize) {
    out.reserve(max);
    let len = out.len();
    // SAFETY: `reserve` made `len + max` bytes of capacity, so the pointer
    // and the `max` bytes after it are inside the allocation; `f` writes
    // only there and initialises the `n <= max` bytes it reports (the
    // caller's contract), so `len + n` bytes are initialised and within
    // capacity.
    unsafe {
        let n = f(out.as_mut_ptr().add(len));
        debug_assert!(n <= max);
        out.set_len(len + n);
    }
}

/// Append a 32-bit integer in decimal (jsonlite's `modp_itoa10`).
#[inline]
pub fn push_i32(out: &mut Vec<u8>, v: i32) {
    push_i64(out, v as i64)
}

/// Append a 64-bit integer in decimal.
#[inline]
pub fn push_i64(out: &mut Vec<u8>, v: i64) {
    // SAFETY: at most 21 bytes are written (a sign and at most 20 digits),
    // all of them counted in the returned length.
    unsafe {
        write_with(out, 21, |p| {
            if v < 0 {
                *p = b'-';
                1 + write_u64(p.add(1), v.unsigned_abs())
            } else {
                write_u64(p, v as u64)
            }
        })
    }
}

const POW10: [f64; 10] = [1.0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9];
/// 10^k for 0 <= k <= 16.
const POW10_INT: [u64; 17] = [
    1,
    10,
    100,
    1_000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
    1_000_000_000,
    10_000_000_000,
    100_000_000_000,
    1_000_000_000_000,
    10_000_000_000_000,
    100_000_000_000_000,
    1_000_000_000_000_000,
    10_000_000_000_000_000,
];

/// Port of jsonlite's `modp_dtoa2(value, buf, prec)` for the range it is
/// used in (`|value| < 2^31 - 1`): fixed decimals, trailing zeros removed,
/// the sign kept even when the rounded value is zero (`-0.00002` -> `-0`).
pub fn push_modp_dtoa2(out: &mut Vec<u8>, value: f64, prec: i32) {
    if value.is_nan() {
        out.extend_from_slice(b"nan");
        return;
    }
    let prec = prec.clamp(0, 9) as usize;
    let neg = value < 0.0;
    let value = value.abs();
    if value > 2147483647.0 {
        // Not reachable from push_jsonlite_double; C falls back to "%e".
        let s = format!("{:e}", if neg { -value } else { value });
        out.extend_from_slice(s.as_bytes());
        return;
    }
    if (1..=8).contains(&prec) {
        // the common case (jsonlite's default is 4 decimals) without
        // data-dependent branches
        // SAFETY: `modp_dtoa2_fast` writes at most 20 bytes and returns how
        // many it wrote; 1 <= prec <= 8 and 0 <= value <= 2^31 - 1 hold here
        // (checked above), as its contract asks.
        unsafe { write_with(out, 24, |p| modp_dtoa2_fast(p, value, neg, prec)) };
        return;
    }
    // SAFETY: 0 <= value <= 2^31 - 1 and 0 <= tmp < 10^9 (prec <= 9), so
    // both truncations are in range (C: `(int) value`, `(uint32_t) tmp`).
    let mut whole = unsafe { value.to_int_unchecked::<i32>() } as i64;
    let tmp = (value - whole as f64) * POW10[prec];
    // SAFETY: 0 <= tmp < 10^9 (see above), within `u32`.
    let mut frac = unsafe { tmp.to_int_unchecked::<u32>() } as u64;
    let diff = tmp - frac as f64;
    let lim = POW10_INT[prec];
    if diff > 0.5 {
        frac += 1;
        if frac >= lim {
            frac = 0;
            whole += 1;
        }
    } else if diff == 0.5 && ((prec > 0 && frac & 1 == 1) || (prec == 0 && whole & 1 == 1)) {
        // halfway: round to even (this is the rule of the modp_dtoa2 that
        // jsonlite ships; verified against jsonlite 1.8.4)
        frac += 1;
        if frac >= lim {
            frac = 0;
            whole += 1;
        }
    }
    if prec == 0 {
        let diff = value - whole as f64;
        if diff > 0.5 || (diff == 0.5 && whole & 1 == 1) {
            whole += 1;
        }
        frac = 0;
    }
    // SAFETY: at most 21 bytes are written (a sign, at most 10 digits of
    // `whole` <= 2^31, a point and at most `prec` <= 9 digits of the
    // fraction, leading zeros included), one after another from `p`, and
    // the returned length counts them.
    unsafe {
        write_with(out, 24, |p| {
            let mut n = 0usize;
            if neg {
                *p = b'-';
                n = 1;
            }
            n += write_u64(p.add(n), whole as u64);
            if frac != 0 {
                // digits of the fraction: `prec` of them, trailing zeros removed
                let mut count = prec;
                while frac % 10 == 0 {
                    frac /= 10;
                    count -= 1;
                }
                *p.add(n) = b'.';
                n += 1;
                // leading zeros: count minus the number of digits in frac
                let fd = n_digits(frac);
                for _ in fd..count {
                    *p.add(n) = b'0';
                    n += 1;
                }
                n += write_u64(p.add(n), frac);
            }
            n
        })
    };
}

/// The eight decimal digits of `v < 10^8`, zero-padded, as the raw digit
/// values 0-9 in the bytes of a little-endian word (most significant digit
/// in the lowest byte). Two-digit lanes are split with multiply-and-shift
/// divisions that are exact in this range.
#[inline]
fn eight_digits(v: u32) -> u64 {
    debug_assert!(v < 100_000_000);
    let v = v as u64;
    // [abcd | efgh] in two 32-bit lanes
    quad_digits((v / 10_000) | ((v % 10_000) << 32))
}

/// The digits of two numbers below 10^4 held in the low and high 32-bit
/// lanes of `quads`, four zero-padded digits each, laid out like
/// `eight_digits()`.
#[inline]
fn quad_digits(quads: u64) -> u64 {
    debug_assert!((quads as u32) < 10_000 && (quads >> 32) < 10_000);
    // x / 100 for x < 10^4 is (x * 10486) >> 20
    let hi = ((quads * 10_486) >> 20) & 0x0000_007f_0000_007f;
    // [ab | cd | ef | gh] in four 16-bit lanes
    let pairs = hi | (quads - 100 * hi) << 16;
    // x / 10 for x < 100 is (x * 103) >> 10
    let tens = ((pairs * 103) >> 10) & 0x000f_000f_000f_000f;
    tens | (pairs - 10 * tens) << 8
}

/// `push_modp_dtoa2()` for `1 <= prec <= 8` and `0 <= value <= 2^31 - 1`
/// (sign passed apart), writing at most 20 bytes at `p` with fixed-size
/// stores; returns the length. Same arithmetic as the C code, so the same
/// rounding; the digits are laid out by shifting words instead of loops.
///
/// # Safety
/// `p` must be valid for writes of 20 bytes, `1 <= prec <= 8` and
/// `0 <= value <= 2^31 - 1` (the truncations below rely on the range).
#[inline]
unsafe fn modp_dtoa2_fast(p: *mut u8, value: f64, neg: bool, prec: usize) -> usize {
    // SAFETY: the whole function writes at most 20 bytes at `p` (two 8-byte
    // stores after at most 1 + 8 digit bytes, or `write_u64` + 9 bytes), and
    // the truncations hold: 0 <= value <= 2^31 - 1 and 0 <= tmp < 10^8.
    unsafe {
        let mut whole = value.to_int_unchecked::<i32>() as u32;
        let tmp = (value - whole as f64) * POW10[prec];
        let mut frac = tmp.to_int_unchecked::<u32>();
        let diff = tmp - frac as f64;
        // round half to even on the fraction's last digit
        frac += ((diff > 0.5) | ((diff == 0.5) & (frac & 1 == 1))) as u32;
        let roll = frac as u64 >= POW10_INT[prec];
        whole += roll as u32;
        frac = if roll { 0 } else { frac };

        *p = b'-';
        let mut n = neg as usize;
        if prec <= 4 && whole < 10_000 {
            // whole part and fraction (scaled to four digits, so the scaling
            // only adds trailing zeros) converted together
            let w = quad_digits(whole as u64 | ((frac * POW10_INT[4 - prec] as u32) as u64) << 32);
            let ascii = w + 0x3030_3030_3030_3030;
            let lead = ((w | 1 << 24).trailing_zeros() / 8) as usize;
            std::ptr::write_unaligned(p.add(n) as *mut u64, (ascii >> (8 * lead)).to_le());
            n += 4 - lead;
            let len = 8 - ((w >> 32).leading_zeros() / 8) as usize;
            *p.add(n) = b'.';
            std::ptr::write_unaligned(p.add(n + 1) as *mut u64, (ascii >> 32).to_le());
            return n + len + (len != 0) as usize;
        }
        if whole < 100_000_000 {
            let w = eight_digits(whole);
            // leading zero digits are the low zero bytes; keep at least one digit
            let lead = ((w | 1 << 56).trailing_zeros() / 8) as usize;
            let ascii = (w + 0x3030_3030_3030_3030) >> (8 * lead);
            std::ptr::write_unaligned(p.add(n) as *mut u64, ascii.to_le());
            n += 8 - lead;
        } else {
            n += write_u64(p.add(n), whole as u64);
        }
        // fraction: `prec` digits, then trailing zeros dropped (none at all,
        // and no point, when it is zero)
        let f = eight_digits(frac) >> (8 * (8 - prec));
        let len = 8 - (f.leading_zeros() / 8) as usize;
        *p.add(n) = b'.';
        // (bytes past `len` become '0' too; they lie beyond the length returned)
        let ascii = f + 0x3030_3030_3030_3030;
        std::ptr::write_unaligned(p.add(n + 1) as *mut u64, ascii.to_le());
        n + len + (len != 0) as usize
    }
}

/// Significant digits of the decimal text Rust's and zmij's formatters print
/// (`123.45`, `0.001`, `100.0`, `1.5e-7`, `1e+22`) copied into `buf`
/// without leading or trailing zeros; returns their count and the decimal
/// exponent of the first one. Zero gives `("0", 0)`.
#[inline]
fn parse_digits(s: &[u8], buf: &mut [u8; 48]) -> (usize, i32) {
    let n = s.len();
    // the exponent, if any, is one of the last five bytes: e7, e-7, e+22, e-324
    let mut mant_end = n;
    let mut e = 0i32;
    for back in 2..=5usize {
        if n > back && s[n - back] == b'e' {
            mant_end = n - back;
            let mut j = mant_end + 1;
            let neg = s[j] == b'-';
            if s[j] == b'-' || s[j] == b'+' {
                j += 1;
            }
            while j < n {
                e = e * 10 + (s[j] - b'0') as i32;
                j += 1;
            }
            if neg {
                e = -e;
            }
            break;
        }
    }
    let mant = &s[..mant_end];
    let dot = mant.iter().position(|&c| c == b'.').unwrap_or(mant.len());
    let int = &mant[..dot];
    let frac: &[u8] = if dot < mant.len() { &mant[dot + 1..] } else { &[] };
    let (nd, exp) = if !int.is_empty() && int[0] != b'0' {
        let ni = int.len().min(48);
        buf[..ni].copy_from_slice(&int[..ni]);
        let nf = frac.len().min(48 - ni);
        buf[ni..ni + nf].copy_from_slice(&frac[..nf]);
        (ni + nf, int.len() as i32 - 1 + e)
    } else {
        let lz = frac.iter().take_while(|&&c| c == b'0').count();
        let sig = &frac[lz..];
        if sig.is_empty() {
            buf[0] = b'0';
            return (1, 0);
        }
        let nf = sig.len().min(48);
        buf[..nf].copy_from_slice(&sig[..nf]);
        (nf, -(lz as i32) - 1 + e)
    };
    let mut nd = nd;
    while nd > 1 && buf[nd - 1] == b'0' {
        nd -= 1;
    }
    (nd, exp)
}

fn exact_digits(a: f64, p: usize, buf: &mut [u8; 48]) -> (usize, i32) {
    use std::io::Write;
    let mut tmp = [0u8; 64];
    let mut cur = std::io::Cursor::new(&mut tmp[..]);
    let _ = write!(cur, "{:.*e}", p - 1, a);
    let n = cur.position() as usize;
    parse_digits(&tmp[..n], buf)
}

/// 5^k for 0 <= k <= 32 (5^32 * 2^53 < 2^128).
const POW5: [u128; 33] = {
    let mut t = [1u128; 33];
    let mut i = 1;
    while i < 33 {
        t[i] = t[i - 1] * 5;
        i += 1;
    }
    t
};

/// `round_digits()` by exact integer arithmetic for `p <= 16` and normal
/// `a` whose scaling to `p` digits needs a factor 10^k with `0 <= k <= 32`
/// (about 1e-17 <= a < 10^p): `a * 10^k = m * 5^k / 2^s` with the 53-bit
/// significand `m`, so the scaled value's integer part and the remainder
/// are exact, and so is the half-to-even rounding. `None` outside that range.
#[inline]
fn round_digits_exact(a: f64, p: usize, buf: &mut [u8; 48]) -> Option<(usize, i32)> {
    debug_assert!((1..=16).contains(&p) && a > 0.0);
    let bits = a.to_bits();
    let biased = (bits >> 52) as i32;
    if biased == 0 {
        return None; // subnormal
    }
    let m = (bits & ((1 << 52) - 1)) | 1 << 52;
    let e = biased - 1075; // a = m * 2^e
                           // floor(log10(a)) is floor(e2 * log10(2)) or one more, e2 = floor(log2(a))
    let mut x = ((e + 52) * 78_913) >> 18;
    let top = POW10_INT[p];
    let scaled = |x: i32| -> Option<(u64, u128, u32)> {
        let k = p as i32 - 1 - x;
        let s = -(e + k);
        if !(0..=32).contains(&k) || !(1..=127).contains(&s) {
            return None;
        }
        let prod = m as u128 * POW5[k as usize];
        let q = prod >> s;
        // q < 10^(p+1) here, so it fits in 64 bits
        Some((q as u64, prod & ((1u128 << s) - 1), s as u32))
    };
    let (mut q, mut rem, mut s) = scaled(x)?;
    if q >= top {
        x += 1;
        (q, rem, s) = scaled(x)?;
    }
    if q >= top || q < POW10_INT[p - 1] {
        return None;
    }
    let half = 1u128 << (s - 1);
    q += ((rem > half) | ((rem == half) & (q & 1 == 1))) as u64;
    if q == top {
        q = POW10_INT[p - 1];
        x += 1;
    }
    // the p digits, left-aligned in sixteen
    let q = q * POW10_INT[16 - p];
    let hi = eight_digits((q / 100_000_000) as u32);
    let lo = eight_digits((q % 100_000_000) as u32);
    buf[..8].copy_from_slice(&(hi + 0x3030_3030_3030_3030).to_le_bytes());
    buf[8..16].copy_from_slice(&(lo + 0x3030_3030_3030_3030).to_le_bytes());
    // trailing zero digits are the high zero bytes of the raw words
    let zeros = if lo == 0 { 8 + hi.leading_zeros() / 8 } else { lo.leading_zeros() / 8 };
    Some((16 - zeros as usize, x))
}

/// Digits of positive finite `a` correctly rounded to `p <= 40` significant
/// digits (half to even on the exact value), trailing zeros removed.
#[inline]
fn round_digits(a: f64, p: usize, buf: &mut [u8; 48]) -> (usize, i32) {
    if p <= 16 {
        if let Some(r) = round_digits_exact(a, p, buf) {
            return r;
        }
    }
    if p <= 15 && a >= f64::MIN_POSITIVE {
        let mut zb = zmij::Buffer::new();
        let (nd, exp) = parse_digits(zb.format_finite(a).as_bytes(), buf);
        if nd <= p {
            return (nd, exp);
        }
        // More than p digits: round the shortest digits at p, which is the
        // correctly rounded result unless they end in a single 5 right after
        // position p (then the exact binary value decides).
        let next = buf[p];
        if !(next == b'5' && nd == p + 1) {
            let mut nd = p;
            let mut exp = exp;
            if next >= b'5' {
                let mut i = p;
                loop {
                    if i == 0 {
                        buf[0] = b'1';
                        nd = 1;
                        exp += 1;
                        break;
                    }
                    i -= 1;
                    if buf[i] == b'9' {
                        buf[i] = b'0';
                    } else {
                        buf[i] += 1;
                        break;
                    }
                }
            }
            while nd > 1 && buf[nd - 1] == b'0' {
                nd -= 1;
            }
            return (nd, exp);
        }
    }
    exact_digits(a, p, buf)
}

/// Append `val` formatted like C `printf("%.*g", p, val)`.
pub fn push_g(out: &mut Vec<u8>, val: f64, p: i32) {
    if val.is_nan() {
        out.extend_from_slice(if val.is_sign_negative() { b"-nan" } else { b"nan" });
        return;
    }
    if val.is_infinite() {
        out.extend_from_slice(if val < 0.0 { b"-inf" } else { b"inf" });
        return;
    }
    let p: usize = if p < 0 {
        6
    } else if p == 0 {
        1
    } else {
        p as usize
    };
    if val.is_sign_negative() {
        out.push(b'-');
    }
    let a = val.abs();
    if a == 0.0 {
        out.push(b'0');
        return;
    }
    let mut buf = [0u8; 48];
    let (nd, exp) = round_digits(a, p.min(40), &mut buf);
    if nd <= 32 && (-4..16).contains(&exp) && exp < p as i32 && nd as i32 > exp + 1 {
        // the common fixed layouts with fractional digits, by fixed-size
        // copies (`buf` has 48 bytes, so 32 can always be read from 16 on)
        // SAFETY: `buf` has 48 bytes, so the 16 bytes from 0 and the 32 from
        // `int_len` <= 16 (or from 0) can be read. The writes end before byte
        // `int_len + 33` (< nd + 33, as nd > int_len) or `zeros + 34` (<= 37),
        // inside the `nd + 40` reserved, and they cover the first `nd + 1`
        // (nd <= 32) or `nd + 2 + zeros` bytes, the length returned.
        unsafe {
            write_with(out, nd + 40, |o| {
                let src = buf.as_ptr();
                if exp >= 0 {
                    let int_len = exp as usize + 1;
                    std::ptr::copy_nonoverlapping(src, o, 16);
                    *o.add(int_len) = b'.';
                    std::ptr::copy_nonoverlapping(src.add(int_len), o.add(int_len + 1), 32);
                    nd + 1
                } else {
                    let zeros = (-exp - 1) as usize;
                    std::ptr::copy_nonoverlapping(b"0.000000".as_ptr(), o, 8);
                    std::ptr::copy_nonoverlapping(src, o.add(2 + zeros), 32);
                    nd + 2 + zeros
                }
            })
        };
        return;
    }
    lay_out_g(out, &buf[..nd], exp, p);
}

/// `%g` layout of significant `digits` (no trailing zeros) whose first digit
/// has decimal exponent `x`, at precision `p`.
#[inline]
fn lay_out_g(out: &mut Vec<u8>, digits: &[u8], x: i32, p: usize) {
    let nd = digits.len();
    let max = nd + 8 + x.unsigned_abs() as usize;
    // SAFETY: each layout below writes, one byte after another from `o`, at
    // most `nd + 8 + |x|` bytes and returns how many: the exponent form
    // `nd + 3 + max(2, digits of |x|)`, the fixed forms `x + 1`, `nd + 1` or
    // `nd + 1 + |x|`. The reads stay within `digits`.
    unsafe {
        write_with(out, max, |o| {
            let src = digits.as_ptr();
            let mut n: usize;
            if x < -4 || x >= p as i32 {
                *o = *src;
                n = 1;
                if nd > 1 {
                    *o.add(1) = b'.';
                    std::ptr::copy_nonoverlapping(src.add(1), o.add(2), nd - 1);
                    n = nd + 1;
                }
                *o.add(n) = b'e';
                *o.add(n + 1) = if x < 0 { b'-' } else { b'+' };
                n += 2;
                let ax = x.unsigned_abs() as u64;
                if ax < 10 {
                    *o.add(n) = b'0';
                    n += 1;
                }
                n += write_u64(o.add(n), ax);
            } else if x >= 0 {
                let int_len = x as usize + 1;
                if nd <= int_len {
                    std::ptr::copy_nonoverlapping(src, o, nd);
                    n = nd;
                    while n < int_len {
                        *o.add(n) = b'0';
                        n += 1;
                    }
                } else {
                    std::ptr::copy_nonoverlapping(src, o, int_len);
                    *o.add(int_len) = b'.';
                    std::ptr::copy_nonoverlapping(src.add(int_len), o.add(int_len + 1), nd - int_len);
                    n = nd + 1;
                }
            } else {
                *o = b'0';
                *o.add(1) = b'.';
                n = 2;
                for _ in 0..(-x - 1) {
                    *o.add(n) = b'0';
                    n += 1;
                }
                std::ptr::copy_nonoverlapping(src, o.add(n), nd);
                n += nd;
            }
            n
        })
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(x: f64, p: i32) -> String {
        let mut o = Vec::new();
        push_g(&mut o, x, p);
        String::from_utf8(o).unwrap()
    }

    fn j(x: f64, d: NumDigits) -> String {
        let mut o = Vec::new();
        push_jsonlite_double(&mut o, x, d, Flavor::V1_8_4);
        String::from_utf8(o).unwrap()
    }

    fn m(x: f64, p: i32) -> String {
        let mut o = Vec::new();
        push_modp_dtoa2(&mut o, x, p);
        String::from_utf8(o).unwrap()
    }

    #[test]
    fn printf_g() {
        // expected values are glibc printf output
        assert_eq!(g(0.0, 15), "0");
        assert_eq!(g(-0.0, 15), "-0");
        assert_eq!(g(1.0 / 3.0, 15), "0.333333333333333");
        assert_eq!(g(0.1 + 0.2, 15), "0.3");
        assert_eq!(g(2f64.powi(53), 15), "9.00719925474099e+15");
        assert_eq!(g(5e-324, 15), "4.94065645841247e-324");
        assert_eq!(g(1e-20, 15), "1e-20");
        assert_eq!(g(1e22, 15), "1e+22");
        assert_eq!(g(123456789.123, 15), "123456789.123");
        assert_eq!(g(f64::MAX, 15), "1.79769313486232e+308");
        assert_eq!(g(1e-5, 5), "1e-05");
        assert_eq!(g(0.0001, 5), "0.0001");
        assert_eq!(g(3e9, 14), "3000000000");
        assert_eq!(g(1e15, 15), "1e+15");
        assert_eq!(g(2.5, 1), "2");
        assert_eq!(g(3.5, 1), "4");
        assert_eq!(g(0.125, 2), "0.12");
        assert_eq!(g(123456789012345.5, 15), "123456789012346");
        assert_eq!(g(123456789012344.5, 15), "123456789012344");
        assert_eq!(g(999999.5, 6), "1e+06");
        assert_eq!(g(9.9999999, 3), "10");
        assert_eq!(g(0.1, 17), "0.10000000000000001");
        assert_eq!(g(1.5, 0), "2");
        assert_eq!(g(123.456, -3), "123.456");
        assert_eq!(g(-1234.5, 2), "-1.2e+03");
        assert_eq!(g(0.1, 25), "0.1000000000000000055511151");
        assert_eq!(g(1e-5, 15), "1e-05");
        assert_eq!(g(123456.0, 15), "123456");
        assert_eq!(g(9.5, 1), "1e+01");
        assert_eq!(g(0.000123456789, 4), "0.0001235");
        assert_eq!(g(1e300, 15), "1e+300");
        assert_eq!(g(1.25e-300, 3), "1.25e-300");
        assert_eq!(g(100.0, 15), "100");
        assert_eq!(g(0.001, 15), "0.001");
        assert_eq!(g(1e16, 15), "1e+16");
        assert_eq!(g(123456789012345680.0, 15), "1.23456789012346e+17");
    }

    #[test]
    #[allow(clippy::approx_constant)] // a long decimal that happens to start like pi, rounded to 4 places
    fn modp() {
        assert_eq!(m(3.14159265, 4), "3.1416");
        assert_eq!(m(2.0, 4), "2");
        assert_eq!(m(0.00012345, 4), "0.0001");
        assert_eq!(m(123456.789, 4), "123456.789");
        assert_eq!(m(-0.00002, 4), "-0");
        assert_eq!(m(0.99999, 4), "1");
        assert_eq!(m(2.5, 0), "2");
        assert_eq!(m(3.5, 0), "4");
        assert_eq!(m(0.95, 1), "1");
        assert_eq!(m(1.05, 2), "1.05");
        assert_eq!(m(-7.25, 1), "-7.2");
        assert_eq!(m(0.05, 1), "0");
        assert_eq!(m(0.35, 1), "0.4");
        assert_eq!(m(0.0625, 3), "0.062");
        assert_eq!(m(1.5, 0), "2");
    }

    /// jsonlite's C `modp_dtoa2()` transliterated as is (digits written
    /// backwards, then reversed), for `|value| <= 2^31 - 1`.
    fn modp_reference(value: f64, prec: i32) -> String {
        let prec = prec.clamp(0, 9) as usize;
        let neg = value < 0.0;
        let value = value.abs();
        let mut whole = value as i32 as i64;
        let tmp = (value - whole as f64) * POW10[prec];
        let mut frac = tmp as u32 as u64;
        let diff = tmp - frac as f64;
        let bump =
            diff > 0.5 || (diff == 0.5 && prec > 0 && frac & 1 == 1) || (diff == 0.5 && prec == 0 && whole & 1 == 1);
        if bump {
            frac += 1;
            if frac >= POW10_INT[prec] {
                frac = 0;
                whole += 1;
            }
        }
        let mut rev = Vec::new();
        if prec == 0 {
            let diff = value - whole as f64;
            if diff > 0.5 || (diff == 0.5 && whole & 1 == 1) {
                whole += 1;
            }
        } else if frac != 0 {
            let mut count = prec as i64;
            while frac % 10 == 0 {
                count -= 1;
                frac /= 10;
            }
            loop {
                count -= 1;
                rev.push(b'0' + (frac % 10) as u8);
                frac /= 10;
                if frac == 0 {
                    break;
                }
            }
            while count > 0 {
                rev.push(b'0');
                count -= 1;
            }
            rev.push(b'.');
        }
        loop {
            rev.push(b'0' + (whole % 10) as u8);
            whole /= 10;
            if whole == 0 {
                break;
            }
        }
        if neg {
            rev.push(b'-');
        }
        rev.reverse();
        String::from_utf8(rev).unwrap()
    }

    /// A fixed-seed xorshift64 stream for the randomised comparisons.
    fn xorshift(mut s: u64) -> impl FnMut() -> u64 {
        move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        }
    }

    #[test]
    fn eight_digit_words() {
        for v in [0u32, 1, 9, 10, 99, 100, 1234, 9999, 10_000, 12_345_678, 99_999_999, 10_203_040] {
            let w = eight_digits(v).to_le_bytes();
            let text: String = w.iter().map(|d| (b'0' + d) as char).collect();
            assert_eq!(text, format!("{v:08}"));
        }
    }

    #[test]
    fn modp_matches_the_c_algorithm() {
        // a fixed-seed xorshift stream: random bit patterns in range, values
        // with few decimals (rollover, halfway and trailing-zero cases) and
        // the boundaries of the eight-digit whole part
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        let mut values =
            vec![0.0, -0.0, 0.5, 1.5, 2.5, 0.99995, 0.00005, 99_999_999.999_99, 100_000_000.0, 2_147_483_646.9];
        for _ in 0..400_000 {
            let r = next();
            let unit = (r >> 11) as f64 / (1u64 << 53) as f64;
            let scale = [1e-4, 1e-2, 1.0, 1e3, 1e6, 1e8, 2.1e9][(r % 7) as usize];
            values.push(unit * scale);
            values.push(-((r >> 20) as f64) / [1.0, 2.0, 8.0, 16.0, 100.0, 1e4][(r % 6) as usize] / 1024.0);
            values.push((r % 100_000) as f64 / 10_000.0 + (r >> 40) as f64 % 1000.0);
            values.push(99_999_999.0 + unit * 2.0);
        }
        for &v in &values {
            if v.abs() >= 2147483647.0 {
                continue;
            }
            for prec in 0..=9 {
                assert_eq!(m(v, prec), modp_reference(v, prec), "value {v:e}, prec {prec}");
            }
        }
    }

    /// `round_digits()` through Rust's exact formatter only.
    fn digits_reference(a: f64, p: usize) -> (String, i32) {
        let mut buf = [0u8; 48];
        let (nd, x) = exact_digits(a, p, &mut buf);
        (String::from_utf8(buf[..nd].to_vec()).unwrap(), x)
    }

    #[test]
    fn exact_integer_rounding_matches_the_exact_formatter() {
        let mut next = xorshift(0x2545_f491_4f6c_dd1d);
        let mut values =
            vec![1.0, 0.5, 0.125, 9.5, 99.5, 0.3, 1e-17, 1e-18, 1e15, 999999999999999.5, 123456789012345.5, 2.5e-5];
        for _ in 0..150_000 {
            let r = next();
            // random bit patterns over the range it accepts and a little
            // beyond (2^-60 to 2^56)
            let bits = (r >> 12) | (((r % 116) + 1023 - 60) << 52);
            values.push(f64::from_bits(bits));
            // short decimals and exact ties at some precision
            values.push((r % 1_000_000) as f64 / [1.0, 8.0, 100.0, 1024.0, 1e4][(r >> 40) as usize % 5]);
        }
        let mut checked = 0;
        for &a in &values {
            for p in 1..=16 {
                let mut buf = [0u8; 48];
                if let Some((nd, x)) = round_digits_exact(a, p, &mut buf) {
                    checked += 1;
                    let got = (String::from_utf8(buf[..nd].to_vec()).unwrap(), x);
                    assert_eq!(got, digits_reference(a, p), "value {a:e}, p {p}");
                }
            }
        }
        assert!(checked > values.len() * 10, "only {checked} values took the exact path");
    }

    #[test]
    fn fixed_layout_shortcut_matches_the_general_layout() {
        let mut next = xorshift(0x1234_5678_9abc_def1);
        for i in 0..200_000u64 {
            let s = next();
            let a = match i % 3 {
                0 => f64::from_bits((s >> 12) | (((s % 70) + 1023 - 20) << 52)),
                1 => (s % 100_000_000) as f64 / 10f64.powi((s >> 50) as i32 % 12),
                _ => (s % 1000 + 1) as f64,
            };
            for p in [1, 2, 6, 10, 15, 16, 17, 20] {
                let mut general = Vec::new();
                let mut buf = [0u8; 48];
                let (nd, x) = round_digits(a, p, &mut buf);
                lay_out_g(&mut general, &buf[..nd], x, p);
                assert_eq!(g(a, p as i32), String::from_utf8(general).unwrap(), "value {a:e}, p {p}");
            }
        }
    }

    #[test]
    #[allow(clippy::approx_constant)] // sample doubles, not pi
    fn batch_matches_single_values() {
        let mut xs = vec![f64::NAN, f64::INFINITY, -0.0, 0.0, 1e-6, -2.5e9, 3.14159, -1234.56789, 1e300];
        let mut next = xorshift(7);
        for _ in 0..5000 {
            let s = next();
            xs.push(f64::from_bits(s >> 2) % 1e7 - 5e6);
            xs.push((s >> 11) as f64 / (1u64 << 40) as f64);
        }
        for digits in [
            NumDigits::Decimal(4),
            NumDigits::Decimal(0),
            NumDigits::Decimal(8),
            NumDigits::Decimal(9),
            NumDigits::Max,
            NumDigits::Signif(6),
        ] {
            let mut batch = Vec::new();
            push_jsonlite_doubles(&mut batch, &xs, digits, Flavor::V1_8_4, |o, _| o.extend_from_slice(b"null"));
            let mut single = Vec::new();
            for &x in &xs {
                if x.is_finite() {
                    push_jsonlite_double(&mut single, x, digits, Flavor::V1_8_4);
                } else {
                    single.extend_from_slice(b"null");
                }
                single.push(b',');
            }
            assert_eq!(String::from_utf8(batch).unwrap(), String::from_utf8(single).unwrap());
        }
    }

    #[test]
    fn jsonlite_defaults() {
        let d4 = NumDigits::Decimal(4);
        assert_eq!(j(std::f64::consts::PI, d4), "3.1416");
        assert_eq!(j(1.0 / 3.0, d4), "0.3333");
        assert_eq!(j(1e-5, d4), "1e-05");
        assert_eq!(j(1.5e-5, d4), "0");
        assert_eq!(j(3e9, d4), "3000000000");
        assert_eq!(j(1e15, d4), "1e+15");
        assert_eq!(j(5e-324, d4), "4.9407e-324");
        assert_eq!(j(-0.0, d4), "-0");
        assert_eq!(j(std::f64::consts::PI, NumDigits::Signif(20)), "3.14159265358979");
        assert_eq!(j(std::f64::consts::PI, NumDigits::Signif(3)), "3.14");
        assert_eq!(j(1.0 / 3.0, NumDigits::Max), "0.333333333333333");
    }

    #[test]
    fn flavors() {
        assert_eq!(Flavor::from_version_str("1.8.4"), Some(Flavor::V1_8_4));
        assert_eq!(Flavor::from_version_str("1.8.6"), Some(Flavor::V1_8_5));
        assert_eq!(Flavor::from_version_str("1.8.7"), Some(Flavor::V1_8_7));
        assert_eq!(Flavor::from_version_str("2.0.0"), Some(Flavor::V1_8_7));
        assert_eq!(Flavor::from_version_str("1.7"), Some(Flavor::V1_8_4));
        assert_eq!(Flavor::from_version_str("x"), None);
        let mut o = Vec::new();
        push_jsonlite_double(&mut o, 0.1, NumDigits::Max, Flavor::V1_8_5);
        assert_eq!(o, b"0.10000000000000001");
        let mut o = Vec::new();
        push_jsonlite_double(&mut o, std::f64::consts::PI, NumDigits::Signif(20), Flavor::V1_8_7);
        assert_eq!(o, b"3.1415926535897931");
    }

    #[test]
    fn integers() {
        let mut o = Vec::new();
        for v in [0, -1, 7, i32::MAX, -2147483647] {
            push_i32(&mut o, v);
            o.push(b',');
        }
        assert_eq!(o, b"0,-1,7,2147483647,-2147483647,");
    }
}
