//! Envelope parsing (RULES W1.2–W3): any bytes as one line, alone and after a
//! legacy initialize, checked against the independent oracle; plus direct
//! invariants of `message::parse_line`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcplite_engine::message::{parse_line, Incoming};
use mcplite_engine_fuzz::common;

const INIT: &[u8] = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}"#;

fuzz_target!(|data: &[u8]| {
    match parse_line(data) {
        Incoming::Message(m) => {
            if let Some(id) = &m.id {
                // The id token is the raw JSON text: no surrounding space,
                // no raw control bytes, a string or an integer token.
                assert!(!id.is_empty() && !id.bytes().any(|b| b < 0x20), "{id:?}");
                assert!(id.starts_with('"') || id.bytes().all(|b| b == b'-' || b.is_ascii_digit()), "{id:?}");
            }
        }
        Incoming::InvalidRequest { id: Some(id) } => {
            assert!(!id.is_empty() && !id.bytes().any(|b| b < 0x20), "{id:?}");
        }
        _ => {}
    }
    if let Err(e) = common::run_lines(&[data.to_vec()]) {
        panic!("{e}");
    }
    if let Err(e) = common::run_lines(&[INIT.to_vec(), data.to_vec()]) {
        panic!("{e}");
    }
});
