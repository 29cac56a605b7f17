//! Legacy sessions over HTTP (RULES H3): minted by `initialize`, named by
//! `Mcp-Session-Id`, bounded, expiring and led by the replica's name; an
//! unknown method keeps the session, an unknown version header is refused.

use std::sync::Arc;
use std::time::Duration;

use mcplite_engine::transport::http::{HttpError, HttpOptions, HttpServer};
use mcplite_engine::{Server, ServerInfo};

use super::{agent, collect, get, initialize, opts, post, start};

#[test]
fn legacy_sessions() {
    let r = start(opts());
    let url = r.url("/mcp");
    let sid = initialize(&url, "2025-06-18");
    assert!(sid.len() >= 32 && sid.bytes().all(|b| (0x21..=0x7e).contains(&b)), "{sid}");
    assert_ne!(initialize(&url, "2025-06-18"), sid, "ids are random");

    let h = |sid: &'static str| vec![("Mcp-Session-Id", sid), ("MCP-Protocol-Version", "2025-06-18")];
    let sid: &'static str = Box::leak(sid.into_boxed_str());
    let g = post(&url, &h(sid), r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    assert_eq!(g.status, 202);
    let g = post(&url, &h(sid), r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    assert_eq!(g.status, 200, "{}", g.body);
    assert_eq!(g.json()["result"]["tools"].as_array().unwrap().len(), 4);
    let g = post(
        &url,
        &h(sid),
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"x":true}}}"#,
    );
    assert_eq!(g.json()["result"]["content"][0]["text"], "{\"x\":true}", "{}", g.body);
    // Without MCP-Protocol-Version (taken as 2025-03-26): still served.
    let g = post(&url, &[("Mcp-Session-Id", sid)], r#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#);
    assert_eq!(g.status, 200, "{}", g.body);

    // Missing session id: 400; unknown: 404.
    let g = post(&url, &[], r#"{"jsonrpc":"2.0","id":5,"method":"tools/list"}"#);
    assert_eq!(g.status, 400, "{}", g.body);
    let g = post(&url, &h("not-a-session"), r#"{"jsonrpc":"2.0","id":6,"method":"tools/list"}"#);
    assert_eq!(g.status, 404, "{}", g.body);

    // GET: 405. DELETE ends the session; afterwards it is unknown.
    let g = collect(agent().get(&url).header("Mcp-Session-Id", sid).call().unwrap());
    assert_eq!(g.status, 405);
    let g = collect(agent().delete(&url).header("Mcp-Session-Id", sid).call().unwrap());
    assert_eq!(g.status, 200);
    let g = post(&url, &h(sid), r#"{"jsonrpc":"2.0","id":7,"method":"tools/list"}"#);
    assert_eq!(g.status, 404);
    let g = collect(agent().delete(&url).header("Mcp-Session-Id", sid).call().unwrap());
    assert_eq!(g.status, 404);
}

#[test]
fn sessions_are_bounded_and_expire() {
    let r = start(HttpOptions { max_sessions: 2, session_idle: Duration::from_millis(300), ..opts() });
    let url = r.url("/mcp");
    let list =
        |sid: &str| post(&url, &[("Mcp-Session-Id", sid)], r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#).status;
    let a = initialize(&url, "2025-11-25");
    let b = initialize(&url, "2025-11-25");
    let c = initialize(&url, "2025-11-25");
    assert_eq!(list(&a), 404, "the least recently used session was dropped");
    assert_eq!((list(&b), list(&c)), (200, 200));
    std::thread::sleep(Duration::from_millis(600));
    assert_eq!(list(&c), 404, "idle sessions expire");
}

#[test]
fn replica_name_leads_session_ids() {
    // Issue 16 (scale-out): a load balancer routes a legacy session on
    // MCP-Session-Id by the replica name in front of it.
    let r = start(HttpOptions { replica: Some("r-2_b".into()), ..opts() });
    let url = r.url("/mcp");
    let sid = initialize(&url, "2025-11-25");
    let rest = sid.strip_prefix("r-2_b.").expect("the replica name leads the id");
    assert!(rest.len() == 32 && rest.bytes().all(|b| b.is_ascii_hexdigit()), "{sid}");
    let g = post(&url, &[("Mcp-Session-Id", &sid)], r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    assert_eq!(g.status, 200, "{}", g.body);
    // RULES H1.3: /health names the replica (a load balancer's check, or a
    // person behind one, sees which replica answered).
    assert_eq!(get(&r.url("/health")).json()["replica"], "r-2_b");
    let server = Arc::new(Server::with_tools(
        ServerInfo { name: "m".into(), version: "1".into(), instructions: None },
        Vec::new(),
    ));
    for bad in ["", "a.b", "a b", &"r".repeat(33)] {
        let e = HttpServer::bind(server.clone(), HttpOptions { replica: Some(bad.into()), ..opts() });
        assert!(matches!(e, Err(HttpError::Config(ref m)) if m.contains("replica")), "{bad:?}");
    }
}

#[test]
fn legacy_unknown_method_is_200_and_keeps_the_session() {
    // A legacy client reads 404 as "session ended": only a missing session
    // is 404 there; an unknown method is the JSON-RPC error with 200.
    let r = start(opts());
    let url = r.url("/mcp");
    let sid = initialize(&url, "2025-11-25");
    let h = [("Mcp-Session-Id", sid.as_str()), ("MCP-Protocol-Version", "2025-11-25")];
    let g = post(&url, &h, r#"{"jsonrpc":"2.0","id":2,"method":"resources/list"}"#);
    assert_eq!((g.status, g.code()), (200, -32601), "{}", g.body);
    let g = post(&url, &h, r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#);
    assert_eq!(g.status, 200, "{}", g.body);
}

#[test]
fn unknown_protocol_version_header_on_legacy_requests() {
    let r = start(opts());
    let url = r.url("/mcp");
    let sid = initialize(&url, "2025-11-25");
    let g = post(
        &url,
        &[("Mcp-Session-Id", &sid), ("MCP-Protocol-Version", "1999-01-01")],
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    );
    assert_eq!((g.status, g.code()), (400, -32022), "{}", g.body);
}
