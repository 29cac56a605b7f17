//! Shared by the engine's integration tests and the cargo-fuzz targets
//! (`fuzz/` includes this file by path, and with it the modules below): a
//! fake [`Host`](mcplite_engine::host::Host) whose tools are driven by their
//! arguments, and an independent oracle that says what the server must
//! answer to a line (RULES sections 3–6) and checks what it did answer.
//!
//! The oracle parses lines with `serde_json::Value` and re-implements the
//! dispatch rules from the spec text; it never calls the engine's own
//! classification or projection code. One concept per file:
//!
//! - `fake_host.rs`: the fake registry and [`FakeHost`];
//! - `json.rs`: JSON text read without the engine (no nesting limit, raw
//!   members in order, depth);
//! - `oracle.rs`: [`Oracle`], what the server must answer to a line;
//! - `checks.rs`: checks on what the server wrote (line shape, results,
//!   tools, blocks, contained errors) against what the oracle expects;
//! - here: the constants they share and [`run_lines`], a whole exchange.

#![allow(dead_code)]

mod checks;
mod fake_host;
mod json;
mod oracle;

pub use checks::*;
pub use fake_host::*;
pub use json::*;
pub use oracle::*;

use mcplite_engine::{LegacyState, Version};

/// Nesting limit of the engine (message::MAX_DEPTH; RULES W1.3 asks >= 128).
pub const MAX_DEPTH: usize = 512;
/// How the engine's errors name its nesting limit (W1.4, L8: "names the
/// limit").
pub const DEPTH_LIMIT_DETAIL: &str = "nesting deeper than the limit of 512 levels";
pub const MODERN: &str = "2026-07-28";
pub const LEGACY: [&str; 3] = ["2024-11-05", "2025-06-18", "2025-11-25"];
pub const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub const META_CAPS: &str = "io.modelcontextprotocol/clientCapabilities";
pub const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";
pub const SERVER_NAME: &str = "mcplite";
pub const SERVER_VERSION: &str = "0.0.0-fuzz";
pub const INSTRUCTIONS: &str = "Line one\nline \"two\" </script> \u{2028} é";

pub fn version_of(s: &str) -> Option<Version> {
    Version::ALL.iter().copied().find(|v| v.as_str() == s)
}

/// Run a sequence of lines through a fresh server, checking every exchange.
/// Returns the number of responses written.
pub fn run_lines(lines: &[Vec<u8>]) -> Result<usize, String> {
    let mut host = FakeHost::default();
    let server = new_server(&mut host);
    let mut legacy = LegacyState::default();
    if host.tools_asked != 1 {
        return Err("Host::tools must be called exactly once".into());
    }
    let mut oracle = Oracle::default();
    let mut responses = 0;
    for line in lines {
        let before = host.calls.len();
        let expect = oracle.expect(line);
        let out = server.handle(&mut legacy, line, &mut host).into_line();
        responses += out.is_some() as usize;
        let new_calls = &host.calls[before..];
        let res = match &expect {
            Ok(e) => check_exchange(e, out.as_deref(), new_calls),
            Err(()) => match &out {
                // Open case: only the generic invariants.
                Some(o) => check_line_shape(o).map(|_| ()),
                None => Ok(()),
            },
        };
        if let Err(e) = res {
            return Err(format!("line {:?}: {e}", clip(&String::from_utf8_lossy(line))));
        }
        // Keep the oracle's legacy state in step with the server's view when
        // the spec left the case open.
        if expect.is_err() {
            oracle.initialized = legacy.initialized;
            oracle.version = legacy.version;
        }
    }
    if oracle.initialized != legacy.initialized || (oracle.initialized && oracle.version != legacy.version) {
        return Err(format!("legacy state diverged: oracle {oracle:?}, server {:?}", legacy));
    }
    Ok(responses)
}
