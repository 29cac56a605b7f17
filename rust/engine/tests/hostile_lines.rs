//! Hostile and edge-case input lines through `Server::handle_line`, each
//! checked against the independent oracle in `common` (RULES sections 3–6).

use crate::common::*;

fn lines(v: &[&str]) -> Vec<Vec<u8>> {
    v.iter().map(|s| s.as_bytes().to_vec()).collect()
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
const M: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

#[test]
fn spec_exchanges_pass_the_oracle() {
    let modern_call = format!(
        r#"{{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{{"name":"blocks","arguments":{{"text":"x"}},{M}}}}}"#
    );
    let modern_list = format!(r#"{{"jsonrpc":"2.0","id":"c","method":"tools/list","params":{{{M}}}}}"#);
    let modern_ping = format!(r#"{{"jsonrpc":"2.0","id":"d","method":"ping","params":{{{M}}}}}"#);
    let ls = vec![
        r#"{"jsonrpc":"2.0","id":"g","method":"tools/list"}"#.to_string(),
        modern_call.clone(),
        modern_list.clone(),
        modern_ping,
        r#"{"jsonrpc":"2.0","id":"e","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/clientCapabilities":{}}}}"#.into(),
        r#"{"jsonrpc":"2.0","id":"f","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#.into(),
        INIT.into(),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.into(),
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#.into(),
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"x":1.5,"y":2.25}}}"#.into(),
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"structured","arguments":{"value":{"mean":2.3333}}}}"#.into(),
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"nope"}}"#.into(),
        r#"{"jsonrpc":"2.0","id":6,"method":"resources/list"}"#.into(),
        modern_call,
        modern_list,
    ];
    let ls: Vec<Vec<u8>> = ls.into_iter().map(String::into_bytes).collect();
    assert_eq!(run_lines(&ls).unwrap(), 14);
}

#[test]
fn malformed_blank_bom_batches() {
    let ls = lines(&[
        "",
        "   \t ",
        "\r",
        "{",
        "{\"a\":1} x",
        "NaN",
        "[]",
        "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]",
        "null",
        "\"str\"",
        "42",
        "true",
        "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"} ",
        " {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\u{0}",
        "{\"jsonrpc\":\"2.0\",\r\"id\":1,\"method\":\"ping\"}",
    ]);
    let mut ls = ls;
    ls.push(b"\xff\xfe{}".to_vec());
    ls.push(b"{\"jsonrpc\":\"2.0\",\"id\":\"\xc3\x28\",\"method\":\"ping\"}".to_vec());
    run_lines(&ls).unwrap();
}

#[test]
fn every_id_type() {
    let ids = [
        "1",
        "0",
        "-0",
        "-7",
        "\"\"",
        "\"a\\u0041\"",
        "12345678901234567890123456789012345678901234567890",
        "null",
        "true",
        "false",
        "1.5",
        "1.0",
        "1e2",
        "-1E-2",
        "[]",
        "[1]",
        "{}",
        "{\"a\":1}",
        "\"\\ud800\"",
        "\"\\n\\u2028\"",
        "\"</script>\"",
    ];
    let mut ls = vec![];
    for id in ids {
        ls.push(format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#).into_bytes());
        ls.push(format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"bogus"}}"#).into_bytes());
        ls.push(format!(r#"{{"jsonrpc":"2.0","id":{id}}}"#).into_bytes());
        ls.push(format!(r#"{{"jsonrpc":"1.0","id":{id},"method":"ping"}}"#).into_bytes());
        ls.push(format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#).into_bytes());
    }
    run_lines(&ls).unwrap();
    // A 1 MB string id and a 100,000-digit number id are echoed unchanged.
    let huge_s = format!("\"{}\"", "x".repeat(1 << 20));
    let huge_n = "9".repeat(100_000);
    for id in [huge_s, huge_n] {
        let l = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#).into_bytes();
        run_lines(&[l]).unwrap();
    }
}

#[test]
fn notifications_and_client_responses_are_silent() {
    let ls = lines(&[
        r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo"}}"#,
        r#"{"jsonrpc":"2.0","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","id":9,"method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"x"}}"#,
        r#"{"error":null}"#,
        INIT,
        r#"{"jsonrpc":"2.0","id":1,"method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"fail"}}"#,
    ]);
    assert_eq!(run_lines(&ls).unwrap(), 3);
}

#[test]
fn tool_calls_errors_and_projection() {
    let mut ls = vec![INIT.as_bytes().to_vec()];
    for args in [
        r#"{"message":"line1\nline2 \"q\" \u0001"}"#,
        r#"{"x":"\u0000"}"#,
        r#"{"\u0000":1}"#,
        r#"null"#,
        r#"[1]"#,
        r#""s""#,
        r#"{}"#,
    ] {
        for tool in TOOL_NAMES {
            ls.push(format!(r#"{{"jsonrpc":"2.0","id":"{tool}","method":"tools/call","params":{{"name":"{tool}","arguments":{args},"_meta":{{"progressToken":1}}}}}}"#).into_bytes());
        }
    }
    for v in LEGACY {
        ls.push(format!(r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{v}","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#).into_bytes());
        ls.push(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":null,"_meta":{}}}"#.to_vec());
        ls.push(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"x"}}"#.to_vec());
        ls.push(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":1}}"#.to_vec());
        ls.push(br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"blocks","arguments":{"kinds":["text","image","resource","resource"],"annotations":{"audience":["user"],"priority":0.5,"x-ext":{"a":[1,null]}},"last_modified":"2025-01-01","block_meta":{"k":null},"meta":{"m":1,"io.modelcontextprotocol/serverInfo":2},"structured":[1,2],"is_error":true}}}"#.to_vec());
        ls.push(br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"blocks","arguments":{"kinds":["resource_link","audio","text","audio"]}}}"#.to_vec());
        ls.push(br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"structured","arguments":{"value":{"a":1},"meta":{"z":"z"}}}}"#.to_vec());
    }
    run_lines(&ls).unwrap();
}

#[test]
fn deep_nesting_is_a_parse_error_or_fine() {
    let mut ls = vec![];
    for depth in [10usize, 100, 128, 129, 509, 510, 511, 512, 513, 10_000, 100_000] {
        ls.push(format!("{}{}", "[".repeat(depth), "]".repeat(depth)).into_bytes());
        ls.push(
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{}{}}}"#,
                "{\"a\":".repeat(depth),
                "}".repeat(depth)
            )
            .into_bytes(),
        );
        ls.push(
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"ping","x":{}{}}}"#, "[".repeat(depth), "]".repeat(depth))
                .into_bytes(),
        );
    }
    run_lines(&ls).unwrap();
}

#[test]
fn modern_claim_variants() {
    let ls = lines(&[
        r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":7}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":null}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"x\"\n\u0000y"}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":[]}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"fail","arguments":{"message":"m"}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"interrupt"}}"#,
        r#"{"jsonrpc":"2.0","method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"fail"}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    ]);
    assert_eq!(run_lines(&ls).unwrap(), 9);
}
