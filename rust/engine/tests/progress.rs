//! The dispatcher with a call watch (RULES C1–C4): what it tells the
//! watch, the progress a tool can report, and no answer for a call
//! cancelled while its tool ran.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::common::*;
use mcplite_engine::host::CallContext;
use mcplite_engine::message::parse_line;
use mcplite_engine::progress::{Inflight, ProgressPolicy};
use mcplite_engine::server::Carrier;
use mcplite_engine::{Host, LegacyState, ToolFailure, ToolResult, ToolSpec};
use serde_json::{Map, Value};

/// A host whose tool does what a transport thread and an R tool would do
/// while it runs: look at the running call's progress, report, and (when
/// told) have the client's cancellation arrive.
struct Watched<'a> {
    inflight: &'a Inflight,
    cancel_with: Option<Value>,
    saw_progress: Vec<Option<String>>,
}

impl Host for Watched<'_> {
    fn tools(&mut self) -> Vec<ToolSpec> {
        tool_specs()
    }
    fn call_tool(
        &mut self,
        _: usize,
        _: Option<&Map<String, Value>>,
        _: &CallContext,
    ) -> Result<ToolResult, ToolFailure> {
        let p = self.inflight.progress();
        if let Some(p) = &p {
            p.report(1.0, Some(2.0), Some("half")).unwrap();
        }
        self.saw_progress.push(p.and_then(|p| p.token().map(str::to_owned)));
        if let Some(id) = &self.cancel_with {
            if self.inflight.cancel(None, id) {
                return Err(ToolFailure::Interrupted);
            }
        }
        Ok(ToolResult::text("done"))
    }
}

fn call(id: &str, meta: &str) -> Vec<u8> {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{}}{meta}}}}}"#)
        .into_bytes()
}

fn init(server: &mcplite_engine::Server, session: &mut LegacyState, host: &mut dyn Host) {
    let line = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    assert!(server.handle(session, line, host).take_line().is_some());
}

#[test]
fn c1_c2_progress_exists_only_for_a_valid_token_while_the_tool_runs() {
    let inflight = Inflight::new(ProgressPolicy::default(), None);
    let mut host = Watched { inflight: &inflight, cancel_with: None, saw_progress: vec![] };
    let server = mcplite_engine::Server::new(server_info(), &mut host);
    let mut session = LegacyState::default();
    init(&server, &mut session, &mut host);
    for (meta, want) in [
        (r#","_meta":{"progressToken":"p1"}"#, Some(r#""p1""#)),
        (r#","_meta":{"progressToken":12}"#, Some("12")),
        (r#","_meta":{"progressToken":1.5}"#, None),
        (r#","_meta":{"progressToken":null}"#, None),
        ("", None),
    ] {
        let mut r =
            server.handle_parsed(&mut session, parse_line(&call("1", meta)), &mut host, &Carrier::watched(&inflight));
        let line = String::from_utf8(r.take_line().expect("answered")).unwrap();
        assert!(line.contains(r#""text":"done""#), "{line}");
        assert_eq!(host.saw_progress.pop().unwrap().as_deref(), want, "{meta}");
        assert!(!inflight.is_running(), "the call is over once answered");
    }
    // Modern calls too, answered in 2026-07-28.
    let modern = r#","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":"m"}"#;
    let mut r = server.handle_parsed(
        &mut LegacyState::default(),
        parse_line(&call("\"x\"", modern)),
        &mut host,
        &Carrier::watched(&inflight),
    );
    assert!(r.take_line().is_some());
    assert_eq!(host.saw_progress.pop().unwrap().as_deref(), Some(r#""m""#));
}

#[test]
fn c4_a_call_cancelled_while_running_gets_no_answer_and_the_next_one_does() {
    let interrupts = Arc::new(AtomicUsize::new(0));
    let n = interrupts.clone();
    let inflight = Inflight::new(
        ProgressPolicy::default(),
        Some(Arc::new(move || {
            n.fetch_add(1, Ordering::SeqCst);
        })),
    );
    let mut host = Watched { inflight: &inflight, cancel_with: Some(Value::from("c")), saw_progress: vec![] };
    let server = mcplite_engine::Server::new(server_info(), &mut host);
    let mut session = LegacyState::default();
    init(&server, &mut session, &mut host);
    let mut r =
        server.handle_parsed(&mut session, parse_line(&call("\"c\"", "")), &mut host, &Carrier::watched(&inflight));
    assert_eq!(r.take_line(), None, "no response for the cancelled call");
    assert_eq!(interrupts.load(Ordering::SeqCst), 1, "the tool was interrupted");
    // Another id: the cancellation does not match, the call is answered.
    let mut r =
        server.handle_parsed(&mut session, parse_line(&call("\"d\"", "")), &mut host, &Carrier::watched(&inflight));
    let line = String::from_utf8(r.take_line().expect("answered")).unwrap();
    assert!(line.contains(r#""id":"d""#) && line.contains("done"), "{line}");
    assert_eq!(interrupts.load(Ordering::SeqCst), 1);
    // Without a watch (the in-process API), nothing is ever cancelled.
    let mut r = server.handle(&mut session, &call("\"c\"", ""), &mut host);
    assert!(r.take_line().is_some());
}
