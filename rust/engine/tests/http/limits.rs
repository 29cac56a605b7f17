//! Limits and hostile clients (RULES H1): media types, body and header
//! sizes, slow and garbage clients, early refusals on a connection that goes
//! on, and connections over the limit.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use mcplite_engine::transport::http::HttpOptions;
use serde_json::json;

use super::{call_params, health_ok, modern_body, modern_post, opts, post, raw_exchange, start, Running, MODERN};

#[test]
fn media_types_body_limits_and_parse_errors() {
    let r = start(HttpOptions { max_body: 1000, ..opts() });
    let url = r.url("/mcp");
    let list = modern_body(1, "tools/list", json!({}));
    let mh = [("MCP-Protocol-Version", MODERN), ("Mcp-Method", "tools/list")];
    let g = post(&url, &[mh[0], mh[1], ("Content-Type", "text/plain")], &list);
    assert_eq!(g.status, 415);
    let g = post(&url, &[mh[0], mh[1], ("Accept", "text/event-stream")], &list);
    assert_eq!(g.status, 406);
    let g = post(&url, &[mh[0], mh[1], ("Content-Type", "application/json; charset=utf-8"), ("Accept", "*/*")], &list);
    assert_eq!(g.status, 200, "{}", g.body);
    let g = post(&url, &mh, "{not json");
    assert_eq!((g.status, g.code()), (400, -32700));
    let g = post(&url, &mh, "");
    assert_eq!((g.status, g.code()), (400, -32700));
    let g = post(&url, &mh, "[]");
    assert_eq!((g.status, g.code()), (400, -32600));
    let big = format!("{{\"pad\":\"{}\"}}", "x".repeat(2000));
    let g = post(&url, &mh, &big);
    assert_eq!(g.status, 413);
    health_ok(&r);
    // A chunked body declares no length: it is read up to the limit, then 413.
    let mut s = TcpStream::connect(r.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nMCP-Protocol-Version: {MODERN}\r\n\
         Mcp-Method: tools/list\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{big}\r\n0\r\n\r\n",
        big.len()
    )
    .unwrap();
    let mut buf = [0u8; 64];
    let n = s.read(&mut buf).unwrap();
    assert!(buf[..n].starts_with(b"HTTP/1.1 413 "), "{}", String::from_utf8_lossy(&buf[..n]));
    health_ok(&r);
}

#[test]
fn declared_huge_body_is_refused_before_reading() {
    let r = start(HttpOptions { max_body: 1000, ..opts() });
    let mut s = TcpStream::connect(r.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(
        s,
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 10000000000\r\n\r\n"
    )
    .unwrap();
    let mut buf = [0u8; 64];
    let n = s.read(&mut buf).unwrap();
    assert!(buf[..n].starts_with(b"HTTP/1.1 413 "), "{}", String::from_utf8_lossy(&buf[..n]));
    health_ok(&r);
}

#[test]
fn hostile_clients_leave_the_server_serving() {
    let r = start(HttpOptions { header_timeout: Duration::from_millis(500), max_connections: 64, ..opts() });
    // Slow headers: cut off after the header timeout while others are served.
    let mut slow = TcpStream::connect(r.addr).unwrap();
    slow.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n").unwrap();
    health_ok(&r);
    std::thread::sleep(Duration::from_millis(1200));
    slow.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let _ = slow.write_all(b"X-Slow: 1\r\n");
    let mut out = Vec::new();
    // The server closes the connection (a read timeout here would be Err).
    let closed = slow.read_to_end(&mut out);
    assert!(closed.is_ok(), "slow client was not cut off: {closed:?}");
    assert!(!String::from_utf8_lossy(&out).contains("200"), "slow client was served");
    health_ok(&r);

    // Garbage request line.
    let mut s = TcpStream::connect(r.addr).unwrap();
    s.write_all(b"\x00\x01GARBAGE nonsense\r\n\r\n").unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    assert!(out.is_empty() || out.starts_with(b"HTTP/1.1 400"), "{}", String::from_utf8_lossy(&out));
    health_ok(&r);

    // Headers over the size limit (RULES H1.2): 431, then the connection ends.
    for size in [20_000, 100_000] {
        let mut s = TcpStream::connect(r.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let huge = format!("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: {}\r\n\r\n", "a".repeat(size));
        let _ = s.write_all(huge.as_bytes());
        let mut out = Vec::new();
        let _ = s.read_to_end(&mut out);
        assert!(out.starts_with(b"HTTP/1.1 431 "), "{size}: {}", String::from_utf8_lossy(&out));
        health_ok(&r);
    }

    // 1,000 concurrent connections (far more than the connection limit):
    // those over the limit wait to be accepted; health is still answered.
    let conns: Vec<TcpStream> = (0..1000).filter_map(|_| TcpStream::connect(r.addr).ok()).collect();
    drop(conns);
    served_again(&r);

    // A client that disconnects mid-call.
    let mut s = TcpStream::connect(r.addr).unwrap();
    let body = modern_body(1, "tools/call", call_params("sleep", json!({"ms": 300})));
    write!(
        s,
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nMCP-Protocol-Version: {MODERN}\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: sleep\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(50));
    drop(s);
    health_ok(&r);
    let g = modern_post(&r.url("/mcp"), "tools/call", Some("echo"), call_params("echo", json!({"after": 1})));
    assert_eq!(g.status, 200);
}

/// An early refusal (415, 406, 404, 405, 401) is given before the body is
/// read. Found by the soak run: when the body had not arrived yet, the
/// connection was closed after the answer without `Connection: close`, and
/// a client reusing it lost its next request. Now a small body is read first
/// and the connection carries the next request; a large or slow one closes
/// the connection and the answer says so.
#[test]
fn early_refusals_keep_the_connection_usable_or_say_close() {
    let r = start(opts());
    let locked = start(HttpOptions { token: Some("s3cret-0123456789ab".into()), ..opts() });
    let list = modern_body(1, "tools/list", json!({}));
    let good = |auth: &str| {
        format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json\r\n\
             MCP-Protocol-Version: {MODERN}\r\nMcp-Method: tools/list\r\n{auth}Content-Length: {}\r\n\r\n{list}",
            list.len()
        )
    };
    let json = "Content-Type: application/json\r\nAccept: application/json";
    let refusals = [
        (&r, "POST /mcp", "Content-Type: text/plain\r\nAccept: application/json", "415", ""),
        (&r, "POST /mcp", "Content-Type: application/json\r\nAccept: text/html", "406", ""),
        (&r, "POST /elsewhere", json, "404", ""),
        (&r, "PUT /mcp", json, "405", ""),
        (&locked, "POST /mcp", json, "401", "Authorization: Bearer s3cret-0123456789ab\r\n"),
    ];
    for (server, line, headers, status, auth) in refusals {
        // The headers first, the body 100 ms later (as a client writing them
        // separately may send them).
        let mut s = TcpStream::connect(server.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let head = format!("{line} HTTP/1.1\r\nHost: 127.0.0.1\r\n{headers}\r\nContent-Length: {}\r\n\r\n", list.len());
        s.write_all(head.as_bytes()).unwrap();
        std::thread::sleep(Duration::from_millis(100));
        s.write_all(list.as_bytes()).unwrap();
        let mut buf = vec![0u8; 4096];
        let n = s.read(&mut buf).unwrap();
        let out = String::from_utf8_lossy(&buf[..n]).to_ascii_lowercase();
        assert!(out.starts_with(&format!("http/1.1 {status} ")), "{out}");
        assert!(!out.contains("connection: close"), "{out}");
        // The same connection serves the next request.
        let out = raw_exchange(&mut s, &good(auth));
        assert!(out.starts_with("HTTP/1.1 200 "), "after {status}: {out:?}");
    }
    // A body too large to read before refusing: the answer says the
    // connection closes.
    let mut s = TcpStream::connect(r.addr).unwrap();
    let head = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: 500000\r\n\r\n";
    let out = raw_exchange(&mut s, head).to_ascii_lowercase();
    assert!(out.starts_with("http/1.1 415 "), "{out}");
    assert!(out.contains("\r\nconnection: close\r\n"), "{out}");
    // A body that stops arriving: answered after the drain time (1 s), and
    // the answer says the connection closes.
    let mut s = TcpStream::connect(r.addr).unwrap();
    let head = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\n{\"js";
    let out = raw_exchange(&mut s, head).to_ascii_lowercase();
    assert!(out.starts_with("http/1.1 415 "), "{out}");
    assert!(out.contains("\r\nconnection: close\r\n"), "{out}");
    // A declared body over the limit: 413, and the connection closes.
    let mut s = TcpStream::connect(r.addr).unwrap();
    let head =
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 999999999\r\n\r\n";
    let out = raw_exchange(&mut s, head).to_ascii_lowercase();
    assert!(out.starts_with("http/1.1 413 "), "{out}");
    assert!(out.contains("\r\nconnection: close\r\n"), "{out}");
    health_ok(&r);
}

/// After clients over the connection limit went away, the next client is
/// served. The server notices closed connections asynchronously, so until
/// it has, a health check may be told to retry (503, RULES H1.4): ask again
/// (for a bounded number of times) until it is served.
fn served_again(r: &Running) {
    for _ in 0..400 {
        let mut s = TcpStream::connect(r.addr).unwrap();
        let out = raw_exchange(&mut s, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
        if out.starts_with("HTTP/1.1 200 ") {
            return health_ok(r);
        }
        assert!(out.starts_with("HTTP/1.1 503 "), "neither served nor told to retry: {out}");
        std::thread::sleep(Duration::from_millis(25));
    }
    panic!("the server did not serve again after the connections over its limit closed");
}

#[test]
fn connections_over_the_limit_are_told_to_retry() {
    // RULES H1.4: with the limit held by open connections, a new client is
    // answered 503 with Retry-After at once, instead of waiting unanswered
    // until a held connection ends.
    let r = start(HttpOptions { max_connections: 4, header_timeout: Duration::from_secs(60), ..opts() });
    let health = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    // Four keep-alive connections, each served once and left open.
    let mut held: Vec<TcpStream> = Vec::new();
    for _ in 0..4 {
        let mut s = TcpStream::connect(r.addr).unwrap();
        let out = raw_exchange(&mut s, health);
        assert!(out.starts_with("HTTP/1.1 200 "), "{out}");
        held.push(s);
    }
    // More connections beyond the limit that send nothing, also held.
    let idle: Vec<TcpStream> = (0..10).map(|_| TcpStream::connect(r.addr).unwrap()).collect();
    // A new client, on /health and on the endpoint: 503, Retry-After, closed.
    let body = modern_body(1, "tools/list", json!({}));
    let list = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nMCP-Protocol-Version: {MODERN}\r\n\
         Mcp-Method: tools/list\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    for req in [health, list.as_str()] {
        let mut s = TcpStream::connect(r.addr).unwrap();
        let out = raw_exchange(&mut s, req).to_ascii_lowercase();
        assert!(out.starts_with("http/1.1 503 "), "{out}");
        assert!(out.contains("\r\nretry-after: 1\r\n"), "{out}");
        assert!(out.contains("\r\nconnection: close\r\n"), "{out}");
        assert!(out.contains("too many connections"), "{out}");
    }
    // The held connections are still served.
    let out = raw_exchange(&mut held[0], health);
    assert!(out.starts_with("HTTP/1.1 200 "), "{out}");
    // Once they close, new clients are served again.
    drop(held);
    drop(idle);
    served_again(&r);
}
