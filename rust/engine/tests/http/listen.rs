//! RULES U3 over HTTP: a legacy session's `GET` stream and 2026-07-28
//! `subscriptions/listen` streams hear what tools change in the resources;
//! a listen stream starts with its acknowledgment and, when the server
//! stops, ends with its response.

use std::io::{BufRead, BufReader, Read};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mcplite_engine::transport::http::HttpServer;
use serde_json::{json, Value};

use super::{agent, initialize, modern_body, opts, post, Running, MODERN};
use crate::common::{new_server_with_notes, FakeHost};

fn start_with_resources() -> Running {
    start_with_options(opts())
}

fn start_with_options(o: mcplite_engine::transport::http::HttpOptions) -> Running {
    let mut host = FakeHost::default();
    let server = new_server_with_notes(&mut host);
    let http = HttpServer::bind(Arc::new(server), o).expect("bind");
    let addr = http.local_addr();
    let stop = Arc::new(AtomicBool::new(false));
    let s = stop.clone();
    let thread = std::thread::spawn(move || {
        http.run(&mut host, Duration::from_millis(10), &mut |_| s.load(Ordering::SeqCst));
    });
    Running { addr, stop, thread: Some(thread), order: Default::default() }
}

/// The events of an SSE body, one JSON-RPC message each, as they come.
struct Events(BufReader<Box<dyn Read + Send>>);

impl Events {
    fn next(&mut self) -> Option<Value> {
        let mut line = String::new();
        loop {
            line.clear();
            if self.0.read_line(&mut line).expect("the stream reads") == 0 {
                return None;
            }
            if let Some(data) = line.strip_prefix("data: ") {
                return Some(serde_json::from_str(data.trim_end()).unwrap());
            }
        }
    }
}

fn stream(r: ureq::http::Response<ureq::Body>) -> Events {
    assert_eq!(r.status().as_u16(), 200);
    assert_eq!(r.headers().get("content-type").unwrap(), "text/event-stream");
    Events(BufReader::new(Box::new(r.into_body().into_reader())))
}

fn blocks_call(id: i64, changes: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "blocks", "arguments": {"kinds": ["text"], "changes": changes}}})
}

#[test]
fn u3_1_a_legacy_session_hears_on_its_get_stream() {
    let r = start_with_resources();
    let url = r.url("/mcp");
    let sid = initialize(&url, "2025-11-25");
    let h = [("Accept", "application/json, text/event-stream"), ("Mcp-Session-Id", sid.as_str())];
    let sub = json!({"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe", "params": {"uri": "notes://all"}});
    assert_eq!(post(&url, &h, &sub.to_string()).json()["result"], json!({}));
    let get = || agent().get(&url).header("Accept", "text/event-stream").header("Mcp-Session-Id", &sid).call().unwrap();
    let mut first = stream(get());
    // A second GET replaces the first: it ends.
    let mut events = stream(get());
    assert_eq!(first.next(), None);
    let answer = post(&url, &h, &blocks_call(3, json!([{"set": "notes://all", "text": "xx"}])).to_string());
    assert_eq!(answer.json()["result"]["isError"], false);
    assert_eq!(events.next().unwrap(), json!({"jsonrpc": "2.0", "method": "notifications/resources/list_changed"}));
    assert_eq!(
        events.next().unwrap(),
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "notes://all"}})
    );
    // Ending the session ends its stream; without a session there is none.
    let del = agent().delete(&url).header("Mcp-Session-Id", &sid).call().unwrap();
    assert_eq!(del.status().as_u16(), 200);
    assert_eq!(events.next(), None);
    assert_eq!(get().status().as_u16(), 404);
    let no_sse = agent().get(&url).header("Accept", "application/json").header("Mcp-Session-Id", &sid).call().unwrap();
    assert_eq!(no_sse.status().as_u16(), 406);
}

#[test]
fn u3_3_a_listen_stream_is_acknowledged_then_hears_then_closes_gracefully() {
    let mut r = start_with_resources();
    let url = r.url("/mcp");
    let listen = |accept: &str| {
        let body = modern_body(
            5,
            "subscriptions/listen",
            json!({"notifications": {"resourceSubscriptions": ["notes://all"], "resourcesListChanged": true}}),
        );
        agent()
            .post(&url)
            .header("Content-Type", "application/json")
            .header("Accept", accept)
            .header("MCP-Protocol-Version", MODERN)
            .header("Mcp-Method", "subscriptions/listen")
            .send(&body)
            .unwrap()
    };
    assert_eq!(listen("application/json").status().as_u16(), 406);
    let mut events = stream(listen("application/json, text/event-stream"));
    let meta = json!({"io.modelcontextprotocol/subscriptionId": 5});
    assert_eq!(
        events.next().unwrap(),
        json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
               "params": {"_meta": meta, "notifications": {"resourcesListChanged": true, "resourceSubscriptions": ["notes://all"]}}})
    );
    // The fake tool names the resource by its URI: the list changed too.
    let mut call = blocks_call(6, json!([{"set": "notes://all", "text": ""}]));
    call["params"]["_meta"] =
        json!({"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}});
    let h = [
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", MODERN),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "blocks"),
    ];
    assert_eq!(post(&url, &h, &call.to_string()).json()["result"]["isError"], false);
    assert_eq!(
        events.next().unwrap(),
        json!({"jsonrpc": "2.0", "method": "notifications/resources/list_changed", "params": {"_meta": meta}})
    );
    assert_eq!(
        events.next().unwrap(),
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"_meta": meta, "uri": "notes://all"}})
    );
    // The server stops: the request's response ends the stream.
    r.stop();
    assert_eq!(
        events.next().unwrap(),
        json!({"jsonrpc": "2.0", "id": 5, "result": {"resultType": "complete", "_meta": {
            "io.modelcontextprotocol/subscriptionId": 5,
            "io.modelcontextprotocol/serverInfo": {"name": crate::common::SERVER_NAME, "version": crate::common::SERVER_VERSION}}}})
    );
    assert_eq!(events.next(), None);
}

#[test]
fn u3_a_silent_stream_sends_comments_that_keep_proxies_from_cutting_it() {
    let r = start_with_options(mcplite_engine::transport::http::HttpOptions {
        keepalive: Duration::from_millis(50),
        ..opts()
    });
    let url = r.url("/mcp");
    let sid = initialize(&url, "2025-11-25");
    let resp = agent().get(&url).header("Accept", "text/event-stream").header("Mcp-Session-Id", &sid).call().unwrap();
    let mut body = BufReader::new(resp.into_body().into_reader());
    let mut line = String::new();
    for _ in 0..2 {
        line.clear();
        body.read_line(&mut line).unwrap();
        assert_eq!(line, ": keepalive\n");
        line.clear();
        body.read_line(&mut line).unwrap();
        assert_eq!(line, "\n");
    }
}

#[test]
fn u3_1_a_session_evicted_or_expired_ends_its_get_stream() {
    let r = start_with_options(mcplite_engine::transport::http::HttpOptions {
        keepalive: Duration::from_millis(50),
        max_sessions: 1,
        ..opts()
    });
    let url = r.url("/mcp");
    let a = initialize(&url, "2025-11-25");
    let resp = agent().get(&url).header("Accept", "text/event-stream").header("Mcp-Session-Id", &a).call().unwrap();
    let mut events = stream(resp);
    // A second session takes the only place: the first is evicted, and its
    // stream ends instead of hearing what other sessions change.
    let b = initialize(&url, "2025-11-25");
    let h = [("Accept", "application/json, text/event-stream"), ("Mcp-Session-Id", b.as_str())];
    post(&url, &h, &blocks_call(2, json!([{"set": "notes://all", "text": "xx"}])).to_string());
    assert_eq!(events.next(), None);
}

#[test]
fn u3_3_streams_take_at_most_half_the_connections() {
    let r = start_with_options(mcplite_engine::transport::http::HttpOptions { max_connections: 4, ..opts() });
    let url = r.url("/mcp");
    let listen = || {
        let body = modern_body(1, "subscriptions/listen", json!({"notifications": {"resourcesListChanged": true}}));
        agent()
            .post(&url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", MODERN)
            .header("Mcp-Method", "subscriptions/listen")
            .send(&body)
            .unwrap()
    };
    let (a, b) = (listen(), listen());
    assert_eq!((a.status().as_u16(), b.status().as_u16()), (200, 200));
    let third = listen();
    assert_eq!(third.status().as_u16(), 503);
    assert!(third.headers().get("retry-after").is_some());
    // Requests still have their places; a stream that ends frees one.
    assert_eq!(initialize(&url, "2025-11-25").len(), 32);
    drop(a);
    let mut again = None;
    for _ in 0..100 {
        let r = listen();
        if r.status().as_u16() == 200 {
            again = Some(r);
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(again.is_some(), "a closed stream's place came back");
    drop(b);
}

#[test]
fn u3_streams_need_the_token_and_an_allowed_origin() {
    let r = start_with_options(mcplite_engine::transport::http::HttpOptions {
        token: Some("s3cret-0123456789ab".into()),
        ..opts()
    });
    let url = r.url("/mcp");
    let get = |auth: Option<&str>, origin: Option<&str>| {
        let mut q = agent().get(&url).header("Accept", "text/event-stream").header("Mcp-Session-Id", "x");
        if let Some(a) = auth {
            q = q.header("Authorization", a);
        }
        if let Some(o) = origin {
            q = q.header("Origin", o);
        }
        q.call().unwrap().status().as_u16()
    };
    assert_eq!(get(None, None), 401);
    assert_eq!(get(Some("Bearer wrong-0123456789abcd"), None), 401);
    assert_eq!(get(Some("Bearer s3cret-0123456789ab"), Some("https://evil.example")), 403);
    // With the token: the session is checked (unknown here).
    assert_eq!(get(Some("Bearer s3cret-0123456789ab"), None), 404);
    let body = modern_body(1, "subscriptions/listen", json!({"notifications": {"resourcesListChanged": true}}));
    let listen = agent()
        .post(&url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", MODERN)
        .header("Mcp-Method", "subscriptions/listen")
        .send(&body)
        .unwrap();
    assert_eq!(listen.status().as_u16(), 401);
}
