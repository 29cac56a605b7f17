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

fn parse(out: &[u8]) -> Value {
    assert!(!out.iter().any(|b| *b < 0x20), "control byte in {:?}", String::from_utf8_lossy(out));
    let text = std::str::from_utf8(out).expect("UTF-8");
    common::parse_unbounded(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

fn run(u: &mut Unstructured) -> arbitrary::Result<()> {
    let contract = u.int_in_range(0u8..=7)? > 0;
    let r = arb_result(u, contract)?;
    let t = arb_tool(u, contract)?;
    let text = arb_string(u)?;
    let _ = bool::arbitrary(u)?;
    for v in Version::ALL {
        let mut out = Vec::new();
        let is_error = write_call_result(&mut out, &r, v, SI);
        let got = parse(&out);
        assert_eq!(got["isError"].as_bool(), Some(is_error), "returned isError");
        if contract {
            if let Err(e) = common::check_call_result(&got, &r, v) {
                panic!("{e}\n{}", String::from_utf8_lossy(&out));
            }
        }
        let mut out = Vec::new();
        write_tool(&mut out, &t, v);
        let got = parse(&out);
        if contract {
            if let Err(e) = common::check_tool(&got, &t, v) {
                panic!("{e}\n{}", String::from_utf8_lossy(&out));
            }
        }
        let mut out = Vec::new();
        write_error_result(&mut out, &text, v, SI);
        let got = parse(&out);
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
