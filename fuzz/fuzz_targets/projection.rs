//! Result projection (RULES P1–P3, M4.3): arbitrary tool results and tool
//! specs written for every version. Output must parse as JSON; within the
//! host contract it must also follow the member orders and presence rules.
#![no_main]

use arbitrary::{Arbitrary, Unstructured};
use libfuzzer_sys::fuzz_target;
use mcplite_engine::projection::{write_call_result, write_error_result, write_tool};
use mcplite_engine::Version;
use mcplite_engine_fuzz::{arb_result, arb_string, arb_tool, common};
use serde_json::Value;

const SI: &str = r#"{"name":"mcplite","version":"0.0.0-fuzz"}"#;

/// The output as a `Value`, after checking it is one well-formed JSON value
/// with no raw control byte. `None` when it is valid JSON that serde_json
/// cannot turn into a `Value` (a reserved member name, which a tool's
/// `_meta` or a schema may hold): the member checks are skipped for it.
fn parse(out: &[u8]) -> Option<Value> {
    assert!(!out.iter().any(|b| *b < 0x20), "control byte in {:?}", String::from_utf8_lossy(out));
    let text = std::str::from_utf8(out).expect("UTF-8");
    if let Err(e) = common::well_formed(text) {
        panic!("not JSON ({e}): {text}");
    }
    match common::parse_unbounded(text) {
        Ok(v) => Some(v),
        Err(_) if common::has_reserved_name(text) => None,
        Err(e) => panic!("well-formed but unreadable ({e}): {text}"),
    }
}

/// Can the oracle read every JSON text of `x` back as a `Value`? Not when
/// one holds serde_json's reserved member name (see [`parse`]); the member
/// checks are skipped then (the output is still checked to be JSON).
fn readable(x: &impl std::fmt::Debug) -> bool {
    !common::has_reserved_name(&format!("{x:?}"))
}

fn run(u: &mut Unstructured) -> arbitrary::Result<()> {
    let contract = u.int_in_range(0u8..=7)? > 0;
    let r = arb_result(u, contract)?;
    let t = arb_tool(u, contract)?;
    let (check_result, check_tool) = (contract && readable(&r), contract && readable(&t));
    let text = arb_string(u)?;
    let _ = bool::arbitrary(u)?;
    for v in Version::ALL {
        let mut out = Vec::new();
        let is_error = write_call_result(&mut out, &r, v, SI);
        if let Some(got) = parse(&out) {
            assert_eq!(got["isError"].as_bool(), Some(is_error), "returned isError");
            if check_result {
                if let Err(e) = common::check_call_result(&got, &r, v) {
                    panic!("{e}\n{}", String::from_utf8_lossy(&out));
                }
            }
        }
        let mut out = Vec::new();
        write_tool(&mut out, &t, v);
        let got = parse(&out);
        if let (true, Some(got)) = (check_tool, got) {
            if let Err(e) = common::check_tool(&got, &t, v) {
                panic!("{e}\n{}", String::from_utf8_lossy(&out));
            }
        }
        let mut out = Vec::new();
        write_error_result(&mut out, &text, v, SI);
        let got = parse(&out).expect("an error result holds no member name from the tool");
        if let Err(e) = common::check_error_result(&got, Some(&text), v) {
            panic!("{e}\n{}", String::from_utf8_lossy(&out));
        }
    }
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let _ = run(&mut u);
});
