//! Legacy and modern dispatch (RULES sections 3–6): sequences of lines,
//! mostly message-shaped, through `Server::handle_line` with the fake host.
//! Every exchange is checked against the independent oracle: one line of
//! valid JSON per request, the id echoed byte for byte, nothing for
//! notifications, blank lines and client responses, the host called exactly
//! when a tool must run, and the projected result shapes per version.
#![no_main]

use arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;
use mcplite_engine_fuzz::{arb_line, common};

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let mut lines = vec![];
    while !u.is_empty() && lines.len() < 24 {
        match arb_line(&mut u) {
            Ok(l) => lines.push(l),
            Err(_) => break,
        }
    }
    if let Err(e) = common::run_lines(&lines) {
        panic!("{e}");
    }
});
