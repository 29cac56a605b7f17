//! The modern era over HTTP (RULES H1, H2): `/health`, requests with
//! their mirrored headers (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`),
//! and the errors of a version, a method or an HTTP method.

use serde_json::{json, Value};

use super::{agent, call_params, collect, get, health_ok, modern_body, modern_post, opts, post, start, MODERN};

#[test]
fn health_answers_name_version_and_tool_count() {
    let r = start(opts());
    health_ok(&r);
    let g = get(&r.url("/elsewhere"));
    assert_eq!(g.status, 404);
}

#[test]
fn modern_requests_and_mirrored_headers() {
    let r = start(opts());
    let url = r.url("/mcp");
    let g = modern_post(&url, "server/discover", None, json!({}));
    assert_eq!(g.status, 200, "{}", g.body);
    assert_eq!(g.header("content-type"), Some("application/json"));
    assert!(g.json()["result"]["supportedVersions"].is_array() || g.json()["result"].is_object());
    assert!(g.header("mcp-session-id").is_none(), "modern answers mint no session");

    let g = modern_post(&url, "tools/list", None, json!({}));
    assert_eq!(g.status, 200);
    assert_eq!(g.json()["result"]["tools"].as_array().unwrap().len(), 4);

    let g = modern_post(&url, "tools/call", Some("echo"), call_params("echo", json!({"a": 1})));
    assert_eq!(g.status, 200, "{}", g.body);
    assert_eq!(g.json()["result"]["content"][0]["text"], "{\"a\":1}");

    // A tool error is a result, not an HTTP error.
    let g = modern_post(&url, "tools/call", Some("fail"), call_params("fail", json!({})));
    assert_eq!(g.status, 200);
    assert_eq!(g.json()["result"]["isError"], true);

    // Last-Event-ID and Mcp-Session-Id are ignored on modern requests (RULES H2.2,
    // issue 16): answered as without them, as JSON, and no session is minted.
    let mh = [("MCP-Protocol-Version", MODERN), ("Accept", "application/json, text/event-stream")];
    for extra in [vec![("Last-Event-ID", "42")], vec![("Last-Event-ID", "0"), ("Mcp-Session-Id", "no-such-session")]] {
        let mut h = vec![mh[0], mh[1], ("Mcp-Method", "tools/list")];
        h.extend(&extra);
        let g = post(&url, &h, &modern_body(5, "tools/list", json!({})));
        assert_eq!(g.status, 200, "{extra:?}: {}", g.body);
        assert_eq!(g.json()["id"], 5);
        assert_eq!(g.json()["result"]["tools"].as_array().unwrap().len(), 4);
        let mut h = vec![mh[0], mh[1], ("Mcp-Method", "tools/call"), ("Mcp-Name", "echo")];
        h.extend(&extra);
        let g = post(&url, &h, &modern_body(6, "tools/call", call_params("echo", json!({"b": 2}))));
        assert_eq!(g.status, 200, "{extra:?}: {}", g.body);
        assert_eq!(g.header("content-type"), Some("application/json"));
        assert_eq!(g.json()["result"]["content"][0]["text"], "{\"b\":2}");
        assert!(g.header("mcp-session-id").is_none());
    }

    // Mcp-Name in the base64 form, for a name with a space.
    let g = modern_post(&url, "tools/call", Some("=?base64?bmEgbWU=?="), call_params("na me", json!({})));
    assert_eq!(g.status, 200, "{}", g.body);

    // Missing or different mirrored headers: 400 with -32020, with the id.
    let body = modern_body(7, "tools/list", json!({}));
    for headers in [
        vec![("Mcp-Method", "tools/list")],
        vec![("MCP-Protocol-Version", MODERN)],
        vec![("MCP-Protocol-Version", MODERN), ("Mcp-Method", "tools/call")],
    ] {
        let g = post(&url, &headers, &body);
        assert_eq!((g.status, g.code()), (400, -32020), "{headers:?}: {}", g.body);
        assert_eq!(g.json()["id"], 7);
    }
    let call = modern_body(8, "tools/call", call_params("echo", json!({})));
    for name in [None, Some("fail"), Some("=?base64?ZmFpbA==?="), Some("=?base64?%%?=")] {
        let mut h = vec![("MCP-Protocol-Version", MODERN), ("Mcp-Method", "tools/call")];
        if let Some(n) = name {
            h.push(("Mcp-Name", n));
        }
        let g = post(&url, &h, &call);
        assert_eq!((g.status, g.code()), (400, -32020), "{name:?}: {}", g.body);
    }
    // Header version and body claim differ.
    let g = post(&url, &[("MCP-Protocol-Version", "2025-11-25"), ("Mcp-Method", "tools/list")], &body);
    assert_eq!((g.status, g.code()), (400, -32020), "{}", g.body);
    // A modern header with a body that claims nothing.
    let g = post(
        &url,
        &[("MCP-Protocol-Version", MODERN), ("Mcp-Method", "tools/list")],
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#,
    );
    assert_eq!((g.status, g.code()), (400, -32020), "{}", g.body);
}

#[test]
fn modern_version_method_and_http_method_errors() {
    let r = start(opts());
    let url = r.url("/mcp");
    // Unsupported version: 400 with the unsupported-version error listing
    // the supported versions.
    let mut body: Value = serde_json::from_str(&modern_body(2, "tools/list", json!({}))).unwrap();
    body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
    let g = post(&url, &[("MCP-Protocol-Version", "2099-01-01"), ("Mcp-Method", "tools/list")], &body.to_string());
    assert_eq!((g.status, g.code()), (400, -32022), "{}", g.body);
    let supported = g.json()["error"]["data"]["supported"].clone();
    assert!(supported.as_array().unwrap().contains(&json!(MODERN)), "{}", g.body);

    // Unknown method: 404 with -32601.
    let g = modern_post(&url, "resources/list", None, json!({}));
    assert_eq!((g.status, g.code()), (404, -32601), "{}", g.body);

    // A notification: 202, no body.
    let n = json!({"jsonrpc":"2.0","method":"notifications/whatever","params":{"_meta":{
        "io.modelcontextprotocol/protocolVersion": MODERN}}});
    let g = post(&url, &[("MCP-Protocol-Version", MODERN), ("Mcp-Method", "notifications/whatever")], &n.to_string());
    assert_eq!(g.status, 202);
    assert!(g.body.is_empty());

    // GET and DELETE: 405.
    assert_eq!(get(&url).status, 405);
    let g = collect(agent().delete(&url).header("MCP-Protocol-Version", MODERN).call().unwrap());
    assert_eq!(g.status, 405);
    assert!(g.header("allow").is_some());
    // Session ids are ignored on modern requests.
    let g = post(
        &url,
        &[("MCP-Protocol-Version", MODERN), ("Mcp-Method", "tools/list"), ("Mcp-Session-Id", "nope")],
        &modern_body(4, "tools/list", json!({})),
    );
    assert_eq!(g.status, 200, "{}", g.body);
}
