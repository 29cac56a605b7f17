//! Small JSON writing helpers shared by the engine and the R bridge.
//!
//! Strings are escaped exactly as jsonlite escapes them (RULES J2.4), so the
//! payload encoding and the fixed encoding agree byte for byte and no raw
//! newline can ever appear inside a protocol line.

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Append `s` as a JSON string literal (with quotes) using jsonlite's rules:
/// short escapes for `"`, `\`, `\n`, `\r`, `\t`, `\b`, `\f`; `\u00xx` (lower
/// case) for the other C0 controls; `/` escaped only right after `<`;
/// everything else (including non-ASCII) copied as is.
/// `"k":v,...` without the braces; keys are written as JSON strings, values
/// are already JSON text.
pub fn write_members<K: AsRef<str>, V: AsRef<str>>(out: &mut Vec<u8>, members: &[(K, V)]) {
    for (i, (k, v)) in members.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_str(out, k.as_ref());
        out.push(b':');
        out.extend_from_slice(v.as_ref().as_bytes());
    }
}

pub fn write_str(out: &mut Vec<u8>, s: &str) {
    write_str_bytes(out, s.as_bytes());
}

/// Same as [`write_str`] for bytes that are known to be UTF-8 (or that the
/// caller has decided to pass through unchanged). Runs without special
/// bytes are found eight bytes at a time and copied in bulk.
pub fn write_str_bytes(out: &mut Vec<u8>, b: &[u8]) {
    out.reserve(b.len() + 2);
    out.push(b'"');
    let mut start = 0;
    let mut i = 0;
    let n = b.len();
    while i < n {
        // Skip whole words that hold no byte needing attention.
        while i + 8 <= n {
            let w = u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
            if word_needs_attention(w) {
                break;
            }
            i += 8;
        }
        let end = (i + 8).min(n);
        while i < end {
            let c = b[i];
            let esc: Option<&[u8]> = match c {
                b'"' => Some(b"\\\""),
                b'\\' => Some(b"\\\\"),
                b'\n' => Some(b"\\n"),
                b'\r' => Some(b"\\r"),
                b'\t' => Some(b"\\t"),
                0x08 => Some(b"\\b"),
                0x0c => Some(b"\\f"),
                b'/' if i > 0 && b[i - 1] == b'<' => Some(b"\\/"),
                0x00..=0x1f => None,
                _ => {
                    i += 1;
                    continue;
                }
            };
            out.extend_from_slice(&b[start..i]);
            match esc {
                Some(e) => out.extend_from_slice(e),
                None => {
                    out.extend_from_slice(b"\\u00");
                    out.push(HEX[(c >> 4) as usize]);
                    out.push(HEX[(c & 0xf) as usize]);
                }
            }
            i += 1;
            start = i;
        }
    }
    out.extend_from_slice(&b[start..]);
    out.push(b'"');
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

#[inline]
fn has_zero_byte(v: u64) -> bool {
    v.wrapping_sub(ONES) & !v & HIGHS != 0
}

/// Does the word contain a control byte, `"`, `\` or `/`?
#[inline]
fn word_needs_attention(w: u64) -> bool {
    // Bytes < 0x20 (bytes >= 0x80 have their top bit set and cannot match).
    let control = w.wrapping_sub(ONES * 0x20) & !w & HIGHS != 0;
    control
        || has_zero_byte(w ^ (ONES * b'"' as u64))
        || has_zero_byte(w ^ (ONES * b'\\' as u64))
        || has_zero_byte(w ^ (ONES * b'/' as u64))
}

/// Append an `i64` in decimal.
pub fn write_i64(out: &mut Vec<u8>, v: i64) {
    let mut buf = itoa_buf(v);
    out.append(&mut buf);
}

fn itoa_buf(v: i64) -> Vec<u8> {
    v.to_string().into_bytes()
}

/// Append a double in the fixed encoding (RULES J5.1): the shortest digits
/// that read back as the same double, laid out like ECMAScript's
/// `Number.prototype.toString` (plain for 1e-6 <= |x| < 1e21, exponent form
/// `1e+21` / `1.5e-7` otherwise), `-0` as `0`. Non-finite values must be
/// handled by the caller.
pub fn write_shortest_f64(out: &mut Vec<u8>, x: f64) {
    debug_assert!(x.is_finite());
    if x == 0.0 {
        out.push(b'0');
        return;
    }
    // Rust's LowerExp without precision prints the shortest round-trip digits.
    let s = format!("{:e}", x);
    let (mant, exp) = s.split_once('e').expect("LowerExp has an exponent");
    let exp: i32 = exp.parse().expect("exponent is an integer");
    let (neg, mant) = match mant.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, mant),
    };
    let digits: Vec<u8> = mant.bytes().filter(|b| *b != b'.').collect();
    let k = digits.len() as i32; // number of significant digits
    let n = exp + 1; // position of the decimal point relative to the digits
    if neg {
        out.push(b'-');
    }
    if k <= n && n <= 21 {
        out.extend_from_slice(&digits);
        out.extend(std::iter::repeat_n(b'0', (n - k) as usize));
    } else if 0 < n && n <= 21 {
        out.extend_from_slice(&digits[..n as usize]);
        out.push(b'.');
        out.extend_from_slice(&digits[n as usize..]);
    } else if -6 < n && n <= 0 {
        out.extend_from_slice(b"0.");
        out.extend(std::iter::repeat_n(b'0', (-n) as usize));
        out.extend_from_slice(&digits);
    } else {
        out.push(digits[0]);
        if k > 1 {
            out.push(b'.');
            out.extend_from_slice(&digits[1..]);
        }
        out.push(b'e');
        let e = n - 1;
        if e >= 0 {
            out.push(b'+');
        }
        out.extend_from_slice(e.to_string().as_bytes());
    }
}

/// Is `raw` a valid JSON-RPC id token (RULES W3.1): a string, or an integer
/// number token without fraction or exponent.
pub fn is_valid_id_token(raw: &str) -> bool {
    let b = raw.as_bytes();
    if b.first() == Some(&b'"') {
        return true;
    }
    let digits = match b.first() {
        Some(b'-') => &b[1..],
        _ => b,
    };
    match digits {
        [] => false,
        [b'0'] => true,
        [b'0', ..] => false,
        _ => digits.iter().all(|c| c.is_ascii_digit()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: &str) -> String {
        let mut o = Vec::new();
        write_str(&mut o, x);
        String::from_utf8(o).unwrap()
    }

    fn f(x: f64) -> String {
        let mut o = Vec::new();
        write_shortest_f64(&mut o, x);
        String::from_utf8(o).unwrap()
    }

    #[test]
    fn escapes_like_jsonlite() {
        assert_eq!(s("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(s("l1\nl2\r\t\u{8}\u{c}"), r#""l1\nl2\r\t\b\f""#);
        assert_eq!(s("\u{1}\u{1f}"), r#""\u0001\u001f""#);
        assert_eq!(s("</script> a/b"), r#""<\/script> a/b""#);
        assert_eq!(s("café ☃"), "\"café ☃\"");
        assert_eq!(s(""), "\"\"");
        assert_eq!(s("\u{7f}"), "\"\u{7f}\"");
        // Long runs (word-at-a-time path), specials at every offset.
        let long = "abcdefgh".repeat(5);
        assert_eq!(s(&long), format!("\"{long}\""));
        for pos in 0..20 {
            for special in ["\"", "\\", "\n", "\u{1}", "</", "é", "\u{7f}"] {
                let mut t = "x".repeat(20);
                t.insert_str(pos, special);
                let mut want = Vec::new();
                write_str_reference(&mut want, t.as_bytes());
                assert_eq!(s(&t), String::from_utf8(want).unwrap(), "{t:?}");
            }
        }
    }

    /// The byte-at-a-time definition the fast path must match.
    fn write_str_reference(out: &mut Vec<u8>, b: &[u8]) {
        out.push(b'"');
        for (i, &c) in b.iter().enumerate() {
            match c {
                b'"' => out.extend_from_slice(b"\\\""),
                b'\\' => out.extend_from_slice(b"\\\\"),
                b'\n' => out.extend_from_slice(b"\\n"),
                b'\r' => out.extend_from_slice(b"\\r"),
                b'\t' => out.extend_from_slice(b"\\t"),
                0x08 => out.extend_from_slice(b"\\b"),
                0x0c => out.extend_from_slice(b"\\f"),
                b'/' if i > 0 && b[i - 1] == b'<' => out.extend_from_slice(b"\\/"),
                0..=0x1f => out.extend_from_slice(format!("\\u{:04x}", c).as_bytes()),
                _ => out.push(c),
            }
        }
        out.push(b'"');
    }

    #[test]
    fn shortest_numbers_like_ecmascript() {
        assert_eq!(f(0.123456789), "0.123456789");
        assert_eq!(f(0.1), "0.1");
        assert_eq!(f(2.0), "2");
        assert_eq!(f(-0.0), "0");
        assert_eq!(f(1e21), "1e+21");
        assert_eq!(f(1e20), "100000000000000000000");
        assert_eq!(f(1e-7), "1e-7");
        assert_eq!(f(1.5e-7), "1.5e-7");
        assert_eq!(f(1e-6), "0.000001");
        assert_eq!(f(-3.75), "-3.75");
        assert_eq!(f(123456.789), "123456.789");
        assert_eq!(f(5e-324), "5e-324");
        assert_eq!(f(1.7976931348623157e308), "1.7976931348623157e+308");
    }

    #[test]
    fn id_tokens() {
        for ok in ["1", "0", "-0", "12345678901234567890", "\"\"", "\"a\\u0041\"", "-7"] {
            assert!(is_valid_id_token(ok), "{ok}");
        }
        for bad in ["1.5", "1.0", "1e2", "01", "-", "null", "true", "[]", "{}", "-01"] {
            assert!(!is_valid_id_token(bad), "{bad}");
        }
    }
}
