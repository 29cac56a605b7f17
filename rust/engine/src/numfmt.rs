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

/// Append a 32-bit integer in decimal (jsonlite's `modp_itoa10`).
#[inline]
pub fn push_i32(out: &mut Vec<u8>, v: i32) {
    let mut buf = [0u8; 11];
    let mut i = buf.len();
    let neg = v < 0;
    let mut u = v.unsigned_abs();
    loop {
        i -= 1;
        buf[i] = b'0' + (u % 10) as u8;
        u /= 10;
        if u == 0 {
            break;
        }
    }
    if neg {
        i -= 1;
        buf[i] = b'-';
    }
    out.extend_from_slice(&buf[i..]);
}

/// Append a 64-bit integer in decimal.
#[inline]
pub fn push_i64(out: &mut Vec<u8>, v: i64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    let neg = v < 0;
    let mut u = v.unsigned_abs();
    loop {
        i -= 1;
        buf[i] = b'0' + (u % 10) as u8;
        u /= 10;
        if u == 0 {
            break;
        }
    }
    if neg {
        out.push(b'-');
    }
    out.extend_from_slice(&buf[i..]);
}

const POW10: [f64; 10] = [1.0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9];

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
    let mut whole = value as i32 as i64; // C: (int) value
    let tmp = (value - whole as f64) * POW10[prec];
    let mut frac = tmp as u32 as u64;
    let diff = tmp - frac as f64;
    let lim = POW10[prec] as u64;
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
    if value > 2147483647.0 {
        // Not reachable from push_jsonlite_double; C falls back to "%e".
        let s = format!("{:e}", if neg { -value } else { value });
        out.extend_from_slice(s.as_bytes());
        return;
    }
    let mut fbuf = [0u8; 10];
    let mut flen = 0usize;
    if prec == 0 {
        let diff = value - whole as f64;
        if diff > 0.5 || (diff == 0.5 && whole & 1 == 1) {
            whole += 1;
        }
    } else if frac != 0 {
        let mut count = prec as i32;
        while frac % 10 == 0 {
            count -= 1;
            frac /= 10;
        }
        // digits of frac, least significant first (written reversed below)
        let mut rev = [0u8; 10];
        let mut r = 0usize;
        loop {
            count -= 1;
            rev[r] = b'0' + (frac % 10) as u8;
            r += 1;
            frac /= 10;
            if frac == 0 {
                break;
            }
        }
        // leading zeros of the fraction
        while count > 0 {
            fbuf[flen] = b'0';
            flen += 1;
            count -= 1;
        }
        for k in (0..r).rev() {
            fbuf[flen] = rev[k];
            flen += 1;
        }
    }
    if neg {
        out.push(b'-');
    }
    push_i64(out, whole);
    if flen > 0 {
        out.push(b'.');
        out.extend_from_slice(&fbuf[..flen]);
    }
}

/// Decimal digits of a positive double rounded to at most `p` significant
/// digits: `digits` (no leading zero, trailing zeros allowed) and the
/// decimal exponent of the first digit.
struct Dec {
    digits: [u8; 40],
    len: usize,
    exp: i32,
}

fn exact_digits(a: f64, p: usize) -> Dec {
    use std::io::Write;
    let mut buf = [0u8; 64];
    let mut cur = std::io::Cursor::new(&mut buf[..]);
    let _ = write!(cur, "{:.*e}", p - 1, a);
    let n = cur.position() as usize;
    parse_sci(&buf[..n])
}

/// Parse `d[.ddd]e[+-]x` or plain `ddd.ddd` (as Rust and zmij print them).
fn parse_sci(s: &[u8]) -> Dec {
    let mut d = Dec { digits: [0; 40], len: 0, exp: 0 };
    let (mant, e) = match s.iter().position(|&c| c == b'e' || c == b'E') {
        Some(i) => {
            let es = &s[i + 1..];
            let (neg, es) = match es.first() {
                Some(b'-') => (true, &es[1..]),
                Some(b'+') => (false, &es[1..]),
                _ => (false, es),
            };
            let mut v = 0i32;
            for &c in es {
                v = v * 10 + (c - b'0') as i32;
            }
            (&s[..i], if neg { -v } else { v })
        }
        None => (s, 0),
    };
    // position of the decimal point within mant
    let dot = mant.iter().position(|&c| c == b'.').unwrap_or(mant.len());
    let mut first_nz: Option<usize> = None; // index in mant
    for (i, &c) in mant.iter().enumerate() {
        if c == b'.' {
            continue;
        }
        if first_nz.is_none() {
            if c == b'0' {
                continue;
            }
            first_nz = Some(i);
        }
        if d.len < d.digits.len() {
            d.digits[d.len] = c;
            d.len += 1;
        }
    }
    match first_nz {
        None => {
            d.digits[0] = b'0';
            d.len = 1;
            d.exp = 0;
        }
        Some(i) => {
            // exponent of digit at index i relative to the point
            let pos = if i < dot { (dot - i - 1) as i32 } else { -((i - dot) as i32) };
            d.exp = pos + e;
        }
    }
    // drop trailing zeros
    while d.len > 1 && d.digits[d.len - 1] == b'0' {
        d.len -= 1;
    }
    d
}

/// Digits of positive finite `a` correctly rounded to `p` significant
/// digits (half to even on the exact value), trailing zeros removed.
fn round_digits(a: f64, p: usize) -> Dec {
    if p <= 15 && a >= f64::MIN_POSITIVE {
        let mut zb = zmij::Buffer::new();
        let s = parse_sci(zb.format_finite(a).as_bytes());
        if s.len <= p {
            return s;
        }
        // s has more than p digits: round it at p unless it ends exactly
        // in a 5 right after position p (then the exact value decides).
        let next = s.digits[p];
        if !(next == b'5' && s.len == p + 1) {
            let mut d = Dec { digits: [0; 40], len: p, exp: s.exp };
            d.digits[..p].copy_from_slice(&s.digits[..p]);
            if next >= b'5' {
                // round up with carry
                let mut i = p;
                loop {
                    if i == 0 {
                        // all nines: becomes 1 followed by zeros
                        d.digits[0] = b'1';
                        for k in 1..p {
                            d.digits[k] = b'0';
                        }
                        d.exp += 1;
                        break;
                    }
                    i -= 1;
                    if d.digits[i] == b'9' {
                        d.digits[i] = b'0';
                    } else {
                        d.digits[i] += 1;
                        break;
                    }
                }
            }
            while d.len > 1 && d.digits[d.len - 1] == b'0' {
                d.len -= 1;
            }
            return d;
        }
    }
    exact_digits(a, p)
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
    let d = round_digits(a, p.min(40));
    let x = d.exp;
    let digits = &d.digits[..d.len];
    if x < -4 || x >= p as i32 {
        // exponential: d[.ddd]e[+-]XX
        out.push(digits[0]);
        if digits.len() > 1 {
            out.push(b'.');
            out.extend_from_slice(&digits[1..]);
        }
        out.push(b'e');
        out.push(if x < 0 { b'-' } else { b'+' });
        let ax = x.unsigned_abs();
        if ax < 10 {
            out.push(b'0');
        }
        push_i64(out, ax as i64);
    } else if x >= 0 {
        let int_len = x as usize + 1;
        if digits.len() <= int_len {
            out.extend_from_slice(digits);
            for _ in digits.len()..int_len {
                out.push(b'0');
            }
        } else {
            out.extend_from_slice(&digits[..int_len]);
            out.push(b'.');
            out.extend_from_slice(&digits[int_len..]);
        }
    } else {
        out.extend_from_slice(b"0.");
        for _ in 0..(-x - 1) {
            out.push(b'0');
        }
        out.extend_from_slice(digits);
    }
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
