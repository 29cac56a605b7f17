//! The dispatcher's API as a transport uses it: caller-owned legacy
//! sessions, replies that end their span however they are disposed of, and
//! a server that threads can share.

use std::io::{self, Write};
use std::sync::{Arc, Mutex};

use crate::common::*;
use mcplite_engine::message::{parse_line, Incoming};
use mcplite_engine::server::Carrier;
use mcplite_engine::telemetry::{SpanEnd, SpanRecorder, SpanStart, Started};
use mcplite_engine::{LegacyState, Server, Version};

/// What the recorder saw, in order.
#[derive(Debug, Clone, PartialEq)]
enum Event {
    Start {
        method: String,
        id: Option<String>,
        tool: Option<String>,
    },
    End(SpanEnd),
    /// The response bytes written so far when a span ended.
    WrittenAtEnd(Vec<u8>),
}

/// A recorder that logs starts and ends, and at each end how much of the
/// response had been written to `out`.
struct Log {
    events: Arc<Mutex<Vec<Event>>>,
    out: Arc<Mutex<Vec<u8>>>,
}

impl SpanRecorder for Log {
    fn start(&self, s: &SpanStart) -> Started {
        self.events.lock().unwrap().push(Event::Start {
            method: s.method.into(),
            id: s.id.map(String::from),
            tool: s.tool_name.map(String::from),
        });
        Started::default()
    }
    fn end(&self, _: Started, e: &SpanEnd) {
        let written = self.out.lock().unwrap().clone();
        let mut ev = self.events.lock().unwrap();
        ev.push(Event::End(e.clone()));
        ev.push(Event::WrittenAtEnd(written));
    }
}

/// A writer into a shared buffer (what the recorder inspects).
struct Shared(Arc<Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A writer whose client went away.
struct Closed;

impl Write for Closed {
    fn write(&mut self, _: &[u8]) -> io::Result<usize> {
        Err(io::Error::from(io::ErrorKind::BrokenPipe))
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

struct Rig {
    server: Server,
    host: FakeHost,
    events: Arc<Mutex<Vec<Event>>>,
    out: Arc<Mutex<Vec<u8>>>,
}

impl Rig {
    fn traced() -> Rig {
        let mut host = FakeHost::default();
        let mut server = new_server(&mut host);
        let events = Arc::new(Mutex::new(vec![]));
        let out = Arc::new(Mutex::new(vec![]));
        server.set_recorder(Some(Box::new(Log { events: Arc::clone(&events), out: Arc::clone(&out) })));
        Rig { server, host, events, out }
    }
    fn events(&self) -> Vec<Event> {
        self.events.lock().unwrap().clone()
    }
    fn ends(&self) -> usize {
        self.events().iter().filter(|e| matches!(e, Event::End(_))).count()
    }
}

const PING: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
const INIT: &[u8] = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
const LIST: &[u8] = br#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;

#[test]
fn a_dropped_reply_ends_its_span() {
    let mut r = Rig::traced();
    let mut legacy = LegacyState::default();
    let reply = r.server.handle(&mut legacy, PING, &mut r.host);
    assert_eq!(reply.line(), Some(&br#"{"jsonrpc":"2.0","id":1,"result":{}}"#[..]));
    // Started, not yet ended: the response has not gone out.
    assert_eq!(r.events().len(), 1);
    assert_eq!(r.ends(), 0);
    drop(reply);
    assert_eq!(r.ends(), 1, "dropping the reply without writing it ends the span");
    assert_eq!(
        r.events(),
        vec![
            Event::Start { method: "ping".into(), id: Some("1".into()), tool: None },
            Event::End(SpanEnd::default()),
            Event::WrittenAtEnd(vec![]),
        ]
    );
}

#[test]
fn a_written_reply_ends_its_span_after_the_line_is_out() {
    let mut r = Rig::traced();
    let mut legacy = LegacyState::default();
    let mut w = Shared(Arc::clone(&r.out));
    r.server.handle(&mut legacy, INIT, &mut r.host).write_line(&mut w).unwrap();
    let first = r.out.lock().unwrap().clone();
    assert!(first.starts_with(br#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18""#));
    assert_eq!(first.last(), Some(&b'\n'), "one line, LF-terminated");
    assert_eq!(first.iter().filter(|b| **b == b'\n').count(), 1);
    let ev = r.events();
    assert_eq!(ev.len(), 3);
    assert_eq!(ev[2], Event::WrittenAtEnd(first.clone()), "the span ended after the whole line was written");
    match &ev[1] {
        Event::End(e) => assert_eq!(e.protocol_version, Some(Version::V2025_06_18)),
        other => panic!("{other:?}"),
    }
    // Exactly once per message: another message, another single end.
    r.server.handle(&mut legacy, LIST, &mut r.host).write_line(&mut w).unwrap();
    assert_eq!(r.ends(), 2);
}

#[test]
fn failed_writes_and_taken_lines_still_end_the_span_once() {
    let mut r = Rig::traced();
    let mut legacy = LegacyState::default();
    let err = r.server.handle(&mut legacy, PING, &mut r.host).write_line(&mut Closed).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::BrokenPipe);
    assert_eq!(r.ends(), 1);
    // Taking the line out (an HTTP body) keeps the span open until the
    // reply goes.
    let mut reply = r.server.handle(&mut legacy, PING, &mut r.host);
    let line = reply.take_line().unwrap();
    assert!(reply.line().is_none());
    assert_eq!(r.ends(), 1);
    r.out.lock().unwrap().extend_from_slice(&line);
    drop(reply);
    assert_eq!(r.ends(), 2);
    assert_eq!(r.events().last(), Some(&Event::WrittenAtEnd(line)));
    // into_line: the in-process path; the span ends at once.
    let line = r.server.handle(&mut legacy, PING, &mut r.host).into_line();
    assert!(line.is_some());
    assert_eq!(r.ends(), 3);
}

#[test]
fn notifications_and_unspanned_lines() {
    let mut r = Rig::traced();
    let mut legacy = LegacyState::default();
    // A notification: no line, a span that ends when the reply goes.
    let reply = r.server.handle(&mut legacy, br#"{"jsonrpc":"2.0","method":"notifications/x"}"#, &mut r.host);
    assert!(reply.line().is_none() && reply.is_notification());
    reply.write_line(&mut Shared(Arc::clone(&r.out))).unwrap();
    assert_eq!(r.ends(), 1);
    assert!(r.out.lock().unwrap().is_empty(), "nothing written for a notification");
    // No span at all (T2) for blank lines, parse errors, invalid envelopes
    // and client responses; the diagnostic rides on the reply.
    for line in [&b""[..], b"{", b"[]", br#"{"jsonrpc":"2.0","id":1,"result":{}}"#] {
        let reply = r.server.handle(&mut legacy, line, &mut r.host);
        drop(reply);
    }
    assert_eq!(r.events().len(), 3, "{:?}", r.events());
    let reply = r.server.handle(&mut legacy, br#"{"jsonrpc":"2.0","id":1,"result":{}}"#, &mut r.host);
    assert_eq!(reply.diagnostic(), Some(mcplite_engine::server::CLIENT_RESPONSE_DIAGNOSTIC));
    let reply = r.server.handle(&mut legacy, b"{", &mut r.host);
    assert_eq!(reply.error_code(), Some(-32700));
    assert_eq!(reply.diagnostic(), None);
}

#[test]
fn too_deep_requests_get_a_span_with_their_error() {
    let mut r = Rig::traced();
    let mut legacy = LegacyState::default();
    drop(r.server.handle(&mut legacy, INIT, &mut r.host));
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"echo","arguments":{{"x":{deep}}}}}}}"#
    );
    let reply = r.server.handle(&mut legacy, line.as_bytes(), &mut r.host);
    assert_eq!(reply.error_code(), Some(-32602));
    assert_eq!(reply.protocol_version(), Some(Version::V2025_06_18));
    drop(reply);
    let ev = r.events();
    assert_eq!(ev[3], Event::Start { method: "tools/call".into(), id: Some("3".into()), tool: Some("echo".into()) });
    match &ev[4] {
        Event::End(e) => {
            assert_eq!(e.error_code, Some(-32602));
            assert_eq!(e.protocol_version, Some(Version::V2025_06_18));
        }
        other => panic!("{other:?}"),
    }
    assert!(r.host.calls.is_empty());
}

#[test]
fn sessions_belong_to_the_caller() {
    let mut host = FakeHost::default();
    let server = new_server(&mut host);
    let (mut a, mut b) = (LegacyState::default(), LegacyState::default());
    let not_init =
        br#"{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"Invalid Request: server not initialized"}}"#;
    assert_eq!(
        server.handle(&mut a, INIT, &mut host).line().map(|l| l.starts_with(br#"{"jsonrpc":"2.0","id":0,"result""#)),
        Some(true)
    );
    assert!(a.initialized && a.version == Some(Version::V2025_06_18));
    // Session b is untouched by a's handshake.
    assert_eq!(b, LegacyState::default());
    assert_eq!(server.handle(&mut b, LIST, &mut host).into_line().as_deref(), Some(&not_init[..]));
    assert!(server
        .handle(&mut a, LIST, &mut host)
        .into_line()
        .unwrap()
        .starts_with(br#"{"jsonrpc":"2.0","id":2,"result":{"tools":["#));
    // Modern requests never read or write the session passed.
    let modern = br#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let before = a.clone();
    let with_a = server.handle(&mut a, modern, &mut host).into_line();
    let with_b = server.handle(&mut b, modern, &mut host).into_line();
    assert_eq!(with_a, with_b);
    assert_eq!(a, before);
    assert_eq!(b, LegacyState::default());
}

#[test]
fn a_parsed_message_can_be_inspected_before_it_is_handled() {
    let mut host = FakeHost::default();
    let server = new_server(&mut host);
    let mut legacy = LegacyState::default();
    let line = br#"{"jsonrpc":"2.0","id":"q","method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let incoming = parse_line(line);
    match &incoming {
        Incoming::Message(m) => {
            assert_eq!(m.method, "server/discover");
            assert!(matches!(
                mcplite_engine::version::era_of(m.params.as_ref()),
                mcplite_engine::version::Era::Modern { .. }
            ));
        }
        other => panic!("{other:?}"),
    }
    let via_parsed = server.handle_parsed(&mut legacy, incoming, &mut host, &Carrier::NONE).into_line();
    let direct = server.handle(&mut legacy, line, &mut host).into_line();
    assert_eq!(via_parsed, direct);
    assert!(via_parsed.unwrap().starts_with(br#"{"jsonrpc":"2.0","id":"q","result":{"resultType":"complete""#));
}

#[test]
fn one_server_serves_threads_at_once() {
    let mut host = FakeHost::default();
    let server = Arc::new(new_server(&mut host));
    assert_eq!(server.info().name, SERVER_NAME);
    let handles: Vec<_> = (0..4)
        .map(|t| {
            let server = Arc::clone(&server);
            std::thread::spawn(move || {
                let mut host = FakeHost::default();
                let mut legacy = LegacyState::default();
                drop(server.handle(&mut legacy, INIT, &mut host));
                let call = format!(
                    r#"{{"jsonrpc":"2.0","id":{t},"method":"tools/call","params":{{"name":"echo","arguments":{{"t":{t}}}}}}}"#
                );
                let out = server.handle(&mut legacy, call.as_bytes(), &mut host).into_line().unwrap();
                (t, String::from_utf8(out).unwrap(), host.calls.len())
            })
        })
        .collect();
    for h in handles {
        let (t, out, calls) = h.join().unwrap();
        assert!(out.starts_with(&format!(r#"{{"jsonrpc":"2.0","id":{t},"result":"#)), "{out}");
        assert!(out.contains(&format!(r#"{{\"t\":{t}}}"#)), "{out}");
        assert_eq!(calls, 1);
    }
}
