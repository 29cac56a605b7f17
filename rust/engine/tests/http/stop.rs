//! Stopping (RULES H4.2): the call in flight finishes, connections opened
//! before the stop are answered, and the stop check is not run per call.

use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mcplite_engine::transport::http::HttpServer;
use mcplite_engine::{Server, ServerInfo};
use serde_json::json;

use super::{call_params, modern_body, modern_post, opts, raw_exchange, start, TestHost, MODERN};

#[test]
fn stop_lets_the_call_in_flight_finish() {
    let mut r = start(opts());
    let url = r.url("/mcp");
    let call = std::thread::spawn(move || {
        modern_post(&url, "tools/call", Some("sleep"), call_params("sleep", json!({"ms": 500})))
    });
    std::thread::sleep(Duration::from_millis(150));
    r.stop();
    let g = call.join().unwrap();
    assert_eq!(g.status, 200, "{}", g.body);
    assert_eq!(g.json()["result"]["content"][0]["text"], "at once: 1");
    assert!(TcpStream::connect(r.addr).is_err(), "no longer accepting");
}

/// RULES H4.2: a connection opened before the stop whose request comes
/// only after it (a proxy connects, then sends) is answered, not closed
/// unanswered: a POST that went out cannot be sent to another replica. A
/// connection still in the listen queue at the stop is served the same way.
#[test]
fn stop_answers_requests_on_connections_opened_before_it() {
    let mut r = start(opts());
    let mut open: Vec<TcpStream> = (0..8).map(|_| TcpStream::connect(r.addr).unwrap()).collect();
    r.stop.store(true, Ordering::SeqCst);
    // The stop has happened once a new connection is refused.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(r.addr).is_ok() {
        assert!(std::time::Instant::now() < deadline, "the server kept accepting after the stop");
        std::thread::sleep(Duration::from_millis(5));
    }
    for (i, s) in open.iter_mut().enumerate() {
        let body = modern_body(i as i64, "tools/call", call_params("echo", json!({"n": i})));
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
             Accept: application/json\r\nMCP-Protocol-Version: {MODERN}\r\nMcp-Method: tools/call\r\n\
             Mcp-Name: echo\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        let out = raw_exchange(s, &request);
        assert!(out.starts_with("HTTP/1.1 200"), "connection {i}: {out:?}");
        assert!(out.contains(&format!("{{\\\"n\\\":{i}}}")), "connection {i}: {out:?}");
    }
    r.stop();
}

/// The stop check may be costly (in R it evaluates R code): it runs at most
/// once per poll interval, not after every call.
#[test]
fn stop_check_runs_once_per_poll_not_once_per_call() {
    let mut host = TestHost { running: Arc::new(AtomicUsize::new(0)), order: Arc::default() };
    let info = ServerInfo { name: "mcplite".into(), version: "9.9.9".into(), instructions: None };
    let server = Arc::new(Server::new(info, &mut host));
    let http = HttpServer::bind(server, opts()).expect("bind");
    let url = format!("http://{}/mcp", http.local_addr());
    let signal = Arc::new(AtomicBool::new(false));
    let s = signal.clone();
    http.stop_when(move || s.load(Ordering::SeqCst));
    let checks = Arc::new(AtomicUsize::new(0));
    let c = checks.clone();
    let poll = Duration::from_secs(2);
    let thread = std::thread::spawn(move || {
        http.run(&mut host, poll, &mut |_| {
            c.fetch_add(1, Ordering::SeqCst);
            false
        })
    });
    let t = std::time::Instant::now();
    for n in 0..40 {
        let g = modern_post(&url, "tools/call", Some("echo"), call_params("echo", json!({"n": n})));
        assert_eq!(g.status, 200, "{}", g.body);
    }
    let elapsed = t.elapsed();
    signal.store(true, Ordering::SeqCst);
    thread.join().unwrap();
    // One check on entry, one more for each poll interval the calls took,
    // and one when the idle wait after them timed out.
    let most = 2 + (elapsed.as_millis() / poll.as_millis()) as usize;
    let n = checks.load(Ordering::SeqCst);
    assert!((1..=most).contains(&n), "{n} stop checks for 40 calls in {elapsed:?}");
}
