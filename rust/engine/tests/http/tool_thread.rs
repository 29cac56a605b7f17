//! Who runs what (RULES H4.1): tool calls run one at a time on the tool
//! thread, in the order they arrived, and requests that run no tool are
//! answered while a tool runs.

use std::time::Duration;

use serde_json::{json, Value};

use super::{agent, call_params, collect, initialize, modern_body, modern_post, opts, post, start, MODERN};

#[test]
fn metadata_requests_do_not_wait_behind_a_running_tool() {
    let r = start(opts());
    let url = r.url("/mcp");
    let u = url.clone();
    let slow = std::thread::spawn(move || {
        modern_post(&u, "tools/call", Some("sleep"), call_params("sleep", json!({"ms": 1500})))
    });
    std::thread::sleep(Duration::from_millis(200));
    let g = modern_post(&url, "tools/list", None, json!({}));
    assert_eq!(g.status, 200);
    let sid = initialize(&url, "2025-11-25");
    let g = post(&url, &[("Mcp-Session-Id", &sid)], r#"{"jsonrpc":"2.0","id":9,"method":"ping"}"#);
    assert_eq!(g.status, 200);
    assert!(!slow.is_finished(), "metadata answered while the tool is still running");
    let g = slow.join().unwrap();
    assert_eq!(g.json()["result"]["content"][0]["text"], "at once: 1");
}

#[test]
fn tool_calls_run_one_at_a_time_in_arrival_order() {
    let r = start(opts());
    let url = r.url("/mcp");
    // Each call asks for a response stream (a progress token, RULES C6.1),
    // whose headers come once the call is queued; the next call is sent only
    // then, so the order of arrival is the order of sending.
    let mut streams = Vec::new();
    for n in 0..6 {
        let mut body: Value =
            serde_json::from_str(&modern_body(n, "tools/call", call_params("sleep", json!({"ms": 50, "n": n}))))
                .unwrap();
        body["params"]["_meta"]["progressToken"] = json!(n);
        let resp = agent()
            .post(&url)
            .header("Content-Type", "application/json")
            .header("MCP-Protocol-Version", MODERN)
            .header("Mcp-Method", "tools/call")
            .header("Mcp-Name", "sleep")
            .header("Accept", "application/json, text/event-stream")
            .send(body.to_string())
            .expect("request");
        assert_eq!(resp.headers().get("content-type").and_then(|v| v.to_str().ok()), Some("text/event-stream"));
        streams.push(resp);
    }
    for s in streams {
        let g = collect(s);
        assert!(g.body.contains(r#""text":"at once: 1""#), "{}", g.body);
    }
    assert_eq!(*r.order.lock().unwrap(), vec![0, 1, 2, 3, 4, 5]);
}
