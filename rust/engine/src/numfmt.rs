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

/// Which jsonlite release's number formatting to reproduce (SPEC J2.3).
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
            if (0..10).contains(&n) && a < 2147483647.0 && a > 1e-5 {
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
#[inline]
unsafe fn write_u64_n(p: *mut u8, mut v: u64, n: usize) {
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

/// Write `v` in decimal at `p` (room for 20 bytes); returns the length.
#[inline]
unsafe fn write_u64(p: *mut u8, v: u64) -> usize {
    let n = n_digits(v);
    write_u64_n(p, v, n);
    n
}

/// Reserve `max` bytes and let `f` write at most that many at the end of
/// `out` through a raw pointer; `f` returns how many it wrote.
#[inline]
fn write_with(out: &mut Vec<u8>, max: usize, f: impl FnOnce(*mut u8) -> usize) {
    out.reserve(max);
    let len = out.len();
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
    write_with(out, 21, |p| unsafe {
        if v < 0 {
            *p = b'-';
            1 + write_u64(p.add(1), v.unsigned_abs())
        } else {
            write_u64(p, v as u64)
        }
    })
}

const POW10: [f64; 10] = [1.0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9];
const POW10_INT: [u64; 10] = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000, 1_000_000_000];

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
    // SAFETY: 0 <= value <= 2^31 - 1 and 0 <= tmp < 10^9 (prec <= 9), so
    // both truncations are in range (C: `(int) value`, `(uint32_t) tmp`).
    let mut whole = unsafe { value.to_int_unchecked::<i32>() } as i64;
    let tmp = (value - whole as f64) * POW10[prec];
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
    write_with(out, 24, |p| unsafe {
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
    });
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

/// Digits of positive finite `a` correctly rounded to `p <= 40` significant
/// digits (half to even on the exact value), trailing zeros removed.
#[inline]
fn round_digits(a: f64, p: usize, buf: &mut [u8; 48]) -> (usize, i32) {
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
    lay_out_g(out, &buf[..nd], exp, p);
}

/// `%g` layout of significant `digits` (no trailing zeros) whose first digit
/// has decimal exponent `x`, at precision `p`.
#[inline]
fn lay_out_g(out: &mut Vec<u8>, digits: &[u8], x: i32, p: usize) {
    let nd = digits.len();
    let max = nd + 8 + x.unsigned_abs() as usize;
    write_with(out, max, |o| unsafe {
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
    });
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
