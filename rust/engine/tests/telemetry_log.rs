//! `MCPLITE_LOG` lines inside the engine: a real `Server` with the log
//! recorder writing through a `tracing` subscriber whose output the test
//! captures.

use std::io::Write;
use std::sync::{Arc, Mutex};

use crate::common::{new_server, FakeHost};
use mcplite_engine::server::LegacyState;
use mcplite_engine::telemetry::{Fanout, LogRecorder, OtelRecorder, SpanRecorder};
use opentelemetry_sdk::trace::SdkTracerProvider;
use serde_json::{json, Value};
use tracing::Level;

/// A `MakeWriter` that appends to a shared buffer.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<u8>>>);

impl Write for Capture {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Capture {
    type Writer = Capture;
    fn make_writer(&'a self) -> Capture {
        self.clone()
    }
}

impl Capture {
    fn lines(&self) -> Vec<String> {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap().lines().map(String::from).collect()
    }
}

fn log_recorder(level: Level) -> (LogRecorder, Capture) {
    let cap = Capture::default();
    let sub = tracing_subscriber::fmt().with_writer(cap.clone()).with_max_level(level).finish();
    (LogRecorder::with_dispatch(tracing::Dispatch::new(sub)), cap)
}

fn line(v: Value) -> String {
    v.to_string()
}

const SECRET: &str = "s3cr3t-argument";

fn transcript() -> Vec<String> {
    vec![
        line(json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
            "protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}})),
        line(json!({"jsonrpc":"2.0","method":"notifications/initialized"})),
        line(json!({"jsonrpc":"2.0","id":2,"method":"tools/list"})),
        line(json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"x":SECRET}}})),
        line(json!({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"nope","arguments":{}}})),
        line(
            json!({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"fail","arguments":{"message":SECRET}}}),
        ),
        "{not json".into(),
    ]
}

fn run(rec: Box<dyn SpanRecorder>) -> Vec<Option<Vec<u8>>> {
    let mut host = FakeHost::default();
    let mut srv = new_server(&mut host);
    let mut legacy = LegacyState::default();
    srv.set_recorder(Some(rec));
    let mut out = Vec::new();
    for l in transcript() {
        out.push(srv.handle(&mut legacy, l.as_bytes(), &mut host).into_line());
    }
    srv.shutdown_recorder();
    out
}

#[test]
fn debug_logs_every_message_received_and_answered() {
    let (rec, cap) = log_recorder(Level::DEBUG);
    run(Box::new(rec));
    let lines = cap.lines();
    let received: Vec<&String> = lines.iter().filter(|l| l.contains(" received")).collect();
    let answered: Vec<&String> = lines.iter().filter(|l| l.contains(" answered") || l.contains(" handled")).collect();
    // Six envelope-valid messages; the parse error is not a message.
    assert_eq!(received.len(), 6, "{lines:#?}");
    assert_eq!(answered.len(), 6, "{lines:#?}");
    for l in &lines {
        assert!(l.contains("mcplite"), "{l}");
        assert!(!l.contains(SECRET), "tool arguments leaked: {l}");
    }
    assert!(received[0].contains("DEBUG") && received[0].contains(r#"method="initialize""#), "{}", received[0]);
    assert!(received[0].contains("id=\"1\"") && received[0].contains(r#"era="legacy""#), "{}", received[0]);
    let a = answered[0];
    assert!(a.contains("INFO") && a.contains(r#"version="2025-06-18""#) && a.contains(r#"outcome="ok""#), "{a}");
    assert!(a.contains("duration_ms="), "{a}");
    assert!(answered[1].contains("handled") && answered[1].contains("notifications/initialized"), "{}", answered[1]);
    assert!(received[3].contains(r#"tool="echo""#) && received[3].contains("known_tool=true"), "{}", received[3]);
    let unknown = answered[4];
    assert!(unknown.contains(r#"outcome="error""#) && unknown.contains("code=-32602"), "{unknown}");
    assert!(unknown.contains(r#"error="Invalid params: unknown tool""#), "{unknown}");
    assert!(answered[5].contains(r#"outcome="tool_error""#), "{}", answered[5]);
    assert!(lines.last().unwrap().contains("stopped") && lines.last().unwrap().contains("messages=6"));
}

#[test]
fn info_logs_answers_only() {
    let (rec, cap) = log_recorder(Level::INFO);
    run(Box::new(rec));
    let lines = cap.lines();
    assert!(lines.iter().all(|l| !l.contains(" received")), "{lines:#?}");
    assert_eq!(lines.iter().filter(|l| l.contains(" answered") || l.contains(" handled")).count(), 6);
}

#[test]
fn logging_beside_spans_changes_no_response() {
    let (rec, cap) = log_recorder(Level::DEBUG);
    let spans = OtelRecorder::from_provider(SdkTracerProvider::builder().build());
    let with_both = run(Box::new(Fanout(vec![Box::new(spans), Box::new(rec)])));
    let (alone, _) = log_recorder(Level::DEBUG);
    assert_eq!(with_both, run(Box::new(alone)));
    let mut host = FakeHost::default();
    let srv = new_server(&mut host);
    let mut legacy = LegacyState::default();
    let plain: Vec<Option<Vec<u8>>> =
        transcript().iter().map(|l| srv.handle(&mut legacy, l.as_bytes(), &mut host).into_line()).collect();
    assert_eq!(with_both, plain);
    assert!(!cap.lines().is_empty());
}
