//! Number formatting (rust/engine/src/numfmt.rs, raw-pointer writes): any
//! double, precision, digits mode and jsonlite flavor. Under ASan any write
//! past the reserved space is caught; `push_g` must equal C's
//! `snprintf("%.*g")` byte for byte (the function's contract), integers
//! must equal Rust's formatting, and every output is plain ASCII.
#![no_main]

use arbitrary::{Arbitrary, Unstructured};
use libfuzzer_sys::fuzz_target;
use mcplite_engine::numfmt::{push_g, push_i64, push_jsonlite_double, push_modp_dtoa2, Flavor, NumDigits};

fn c_g(val: f64, p: i32) -> Vec<u8> {
    let mut buf = vec![0u8; 512];
    // SAFETY: the buffer is large enough for %.*g with p <= 40 of any double
    // (at most ~330 characters), and the format takes an int and a double.
    let n = unsafe {
        libc::snprintf(
            buf.as_mut_ptr() as *mut libc::c_char,
            buf.len(),
            b"%.*g\0".as_ptr() as *const libc::c_char,
            p as libc::c_int,
            val,
        )
    };
    buf.truncate(n as usize);
    buf
}

fn run(u: &mut Unstructured) -> arbitrary::Result<()> {
    let val = match u.int_in_range(0u8..=3)? {
        0 => f64::from_bits(u64::arbitrary(u)?),
        1 => f64::arbitrary(u)?,
        2 => (i32::arbitrary(u)? as f64) / 10f64.powi(u.int_in_range(0..=12)?),
        _ => *u.choose(&[
            0.0,
            -0.0,
            0.5,
            1.5,
            2.5,
            1e-5,
            9.999999999e-6,
            2147483647.0,
            2147483646.5,
            1e15,
            1e21,
            5e-324,
            f64::MAX,
            0.1,
            1.0 / 3.0,
        ])?,
    };
    let p = if bool::arbitrary(u)? { u.int_in_range(-2i32..=41)? } else { i32::arbitrary(u)? };
    let flavor =
        *u.choose(&[Flavor::from_version(1, 8, 4), Flavor::from_version(1, 8, 5), Flavor::from_version(1, 9, 0)])?;
    let digits = match u.int_in_range(0u8..=2)? {
        0 => NumDigits::Max,
        1 => NumDigits::Signif(i32::arbitrary(u)?),
        _ => NumDigits::Decimal(if bool::arbitrary(u)? { u.int_in_range(-2i32..=12)? } else { i32::arbitrary(u)? }),
    };

    let mut out = b"prefix".to_vec();
    push_g(&mut out, val, p);
    let got = &out[6..];
    assert!(got.is_ascii());
    if (-1..=40).contains(&p) {
        let want = c_g(val, p);
        assert_eq!(
            got,
            &want[..],
            "push_g({val:e}, {p}): {} vs C {}",
            String::from_utf8_lossy(got),
            String::from_utf8_lossy(&want)
        );
    }

    if val.is_finite() {
        let mut out = Vec::new();
        push_jsonlite_double(&mut out, val, digits, flavor);
        assert!(out.is_ascii() && !out.is_empty(), "{val:e} {digits:?}");
        let s = std::str::from_utf8(&out).unwrap();
        let back: f64 = s.parse().unwrap_or_else(|_| panic!("unparsable {s:?} for {val:e} {digits:?}"));
        assert!(back.is_finite() || val.abs() > 1e300, "{s} for {val:e}");
        if back != 0.0 && val != 0.0 {
            assert_eq!(back.is_sign_negative(), val.is_sign_negative(), "{s} for {val:e}");
        }
    }

    let mut out = Vec::new();
    let prec = i32::arbitrary(u)?;
    if val.is_finite() && val.abs() < 2147483647.0 {
        push_modp_dtoa2(&mut out, val, prec);
        let s = std::str::from_utf8(&out).unwrap();
        let back: f64 = s.parse().unwrap_or_else(|_| panic!("modp {s:?} for {val:e} prec {prec}"));
        let places = prec.clamp(0, 9);
        assert!(
            (back - val).abs() <= 0.5 * 10f64.powi(-places) * (1.0 + 1e-9) + 1e-9 * val.abs(),
            "modp {s} for {val:e} prec {prec}"
        );
    }

    let i = i64::arbitrary(u)?;
    let mut out = Vec::new();
    push_i64(&mut out, i);
    assert_eq!(out, i.to_string().into_bytes());
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let _ = run(&mut u);
});
