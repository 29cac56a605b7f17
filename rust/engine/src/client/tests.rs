//! Client logic against scripted in-memory servers, and the stdio link
//! against small shell scripts (real processes, pipes and signals).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::*;

/// A scripted server: given each message the client sends, returns what
/// the server sends back.
type Script = Box<dyn FnMut(&Value) -> Vec<Event> + Send>;

struct FakeLink {
    script: Script,
    /// Pretend to be the HTTP link (`x-mcp-header` arguments are mirrored).
    mirrors: bool,
    queue: VecDeque<Event>,
    sent: Arc<Mutex<Vec<Value>>>,
    cancelled: Arc<Mutex<Vec<u64>>>,
}

impl Link for FakeLink {
    fn send(
        &mut self,
        line: &[u8],
        _out: &Outgoing,
        _deadline: Instant,
        _interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<(), ClientError> {
        assert_eq!(line.last(), Some(&b'\n'));
        let v: Value = serde_json::from_slice(line).expect("client sends JSON");
        self.sent.lock().unwrap().push(v.clone());
        let out = (self.script)(&v);
        self.queue.extend(out);
        Ok(())
    }
    fn recv(&mut self, _id: u64, wait: Duration) -> Option<Event> {
        let e = self.queue.pop_front();
        if e.is_none() {
            std::thread::sleep(wait.min(Duration::from_millis(5)));
        }
        e
    }
    fn cancel(&mut self, id: u64, _reason: &str) {
        self.cancelled.lock().unwrap().push(id);
    }
    fn finish(&mut self, _id: u64) {}
    fn respond(&mut self, line: &[u8]) {
        let v: Value = serde_json::from_slice(line).unwrap();
        self.sent.lock().unwrap().push(v);
    }
    fn context(&mut self) -> FailureContext {
        FailureContext { ended: Some("exited with status 1".into()), status: Some(1), stderr: "boom".into() }
    }
    fn stderr_text(&self) -> String {
        String::new()
    }
    fn set_version(&mut self, _version: &str) {}
    fn close(&mut self) -> String {
        "closed".into()
    }
    fn mirrors_params(&self) -> bool {
        self.mirrors
    }
}

struct Fake {
    sent: Arc<Mutex<Vec<Value>>>,
    cancelled: Arc<Mutex<Vec<u64>>>,
}

fn fake(script: impl FnMut(&Value) -> Vec<Event> + Send + 'static) -> (Box<dyn Link>, Fake) {
    fake_link(Box::new(script), false)
}

/// As [`fake`], for a link that mirrors `x-mcp-header` arguments (HTTP).
fn fake_http(script: impl FnMut(&Value) -> Vec<Event> + Send + 'static) -> (Box<dyn Link>, Fake) {
    fake_link(Box::new(script), true)
}

fn fake_link(script: Script, mirrors: bool) -> (Box<dyn Link>, Fake) {
    let sent = Arc::new(Mutex::new(Vec::new()));
    let cancelled = Arc::new(Mutex::new(Vec::new()));
    let link = FakeLink {
        script,
        mirrors,
        queue: VecDeque::new(),
        sent: Arc::clone(&sent),
        cancelled: Arc::clone(&cancelled),
    };
    (Box::new(link), Fake { sent, cancelled })
}

fn methods(f: &Fake) -> Vec<String> {
    f.sent.lock().unwrap().iter().map(|v| method(v).to_string()).collect()
}

fn msg(v: Value) -> Event {
    Event::Message(v)
}

fn result(id: &Value, r: Value) -> Event {
    msg(json!({"jsonrpc": "2.0", "id": id, "result": r}))
}

fn error(id: &Value, code: i64, message: &str) -> Event {
    msg(json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}))
}

fn method(v: &Value) -> &str {
    v["method"].as_str().unwrap_or("")
}

fn opts() -> Options {
    Options { probe_timeout: Duration::from_millis(100), timeout: Duration::from_secs(5), ..Options::default() }
}

fn never() -> impl FnMut() -> bool {
    || false
}

fn discover_result() -> Value {
    json!({"resultType": "complete", "supportedVersions": ["2026-07-28", "2025-11-25"],
           "capabilities": {"tools": {}}, "instructions": "Be nice.",
           "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "modern", "version": "1.0"}}})
}

/// A modern server with one `echo` tool.
fn modern_server(v: &Value) -> Vec<Event> {
    let id = &v["id"];
    match method(v) {
        "server/discover" => vec![result(id, discover_result())],
        "tools/call" => {
            assert_eq!(v["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"], "2026-07-28");
            assert_eq!(v["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"], json!({}));
            let text = v["params"]["arguments"]["text"].clone();
            vec![result(id, json!({"resultType": "complete", "content": [{"type": "text", "text": text}]}))]
        }
        m => vec![error(id, -32601, &format!("no {m}"))],
    }
}

/// A legacy server: errors before `initialize`, echoes a supported version.
fn legacy_server(answer_version: &'static str) -> impl FnMut(&Value) -> Vec<Event> + Send {
    let mut initialized = false;
    move |v| {
        let id = &v["id"];
        match method(v) {
            "initialize" => {
                initialized = true;
                vec![result(
                    id,
                    json!({"protocolVersion": answer_version, "capabilities": {"tools": {}},
                           "serverInfo": {"name": "legacy", "version": "0.1"}}),
                )]
            }
            "notifications/initialized" => vec![],
            _ if !initialized => vec![error(id, -32600, "not initialized")],
            "tools/list" => vec![result(id, json!({"tools": [{"name": "a", "inputSchema": {"type": "object"}}]}))],
            _ => vec![error(id, -32601, "Method not found")],
        }
    }
}

#[test]
fn modern_servers_are_recognised_by_discovery() {
    let (link, f) = fake(modern_server);
    let mut c = Connection::establish(link, &opts(), &mut never()).unwrap();
    assert_eq!(c.era(), Era::Modern);
    assert_eq!(c.version(), "2026-07-28");
    assert_eq!(c.server_info().unwrap()["name"], "modern");
    assert_eq!(c.instructions(), Some("Be nice."));
    let sent = f.sent.lock().unwrap().clone();
    assert_eq!(sent.len(), 1);
    assert_eq!(method(&sent[0]), "server/discover");
    assert_eq!(sent[0]["params"]["_meta"]["io.modelcontextprotocol/clientInfo"]["name"], "mcplite");
    let r = c.call_tool("echo", r#"{"text":"hi"}"#, Duration::from_secs(1), &mut never()).unwrap();
    assert_eq!(r["content"][0]["text"], "hi");
}

#[test]
fn legacy_servers_get_initialize_after_a_failed_probe() {
    let (link, f) = fake(legacy_server("2025-06-18"));
    let mut c = Connection::establish(link, &opts(), &mut never()).unwrap();
    assert_eq!(c.era(), Era::Legacy);
    assert_eq!(c.version(), "2025-06-18");
    assert_eq!(c.server_info().unwrap()["name"], "legacy");
    let methods: Vec<String> = f.sent.lock().unwrap().iter().map(|v| method(v).to_string()).collect();
    assert_eq!(methods, ["server/discover", "initialize", "notifications/initialized"]);
    let init = f.sent.lock().unwrap()[1].clone();
    assert_eq!(init["params"]["protocolVersion"], "2025-11-25");
    assert_eq!(init["params"]["capabilities"], json!({}));
    assert!(init["params"].get("_meta").is_none());
    let tools = c.list_tools(Duration::from_secs(1), &mut never()).unwrap();
    assert_eq!(tools.len(), 1);
    // legacy requests carry no modern _meta
    let last = f.sent.lock().unwrap().last().cloned().unwrap();
    assert!(last.get("params").is_none(), "{last}");
}

#[test]
fn a_silent_probe_falls_back_after_the_probe_timeout() {
    let mut inner = legacy_server("2025-11-25");
    let (link, f) = fake(move |v| if method(v) == "server/discover" { vec![] } else { inner(v) });
    let t0 = Instant::now();
    let c = Connection::establish(link, &opts(), &mut never()).unwrap();
    assert!(t0.elapsed() >= Duration::from_millis(100));
    assert_eq!(c.era(), Era::Legacy);
    assert_eq!(c.version(), "2025-11-25");
    // the probe was not cancelled (a legacy server never saw it as a request)
    assert!(f.cancelled.lock().unwrap().is_empty());
}

#[test]
fn handshake_timeouts_name_the_time_they_were_given() {
    // Protocol 2026-07-28 asked for, and the probe is never answered: the
    // error says the server did not answer within the probe's time (it
    // once read "timed out writing to the server").
    let (link, _f) = fake(|_| vec![]);
    let o = Options { protocol: Some(MODERN.into()), ..opts() };
    let e = Connection::establish(link, &o, &mut never()).err().unwrap();
    assert_eq!(
        e.error.to_string(),
        format!("the server does not speak protocol {MODERN}: server/discover failed (no answer within 100 ms)")
    );
    // A legacy server that never answers initialize: the whole handshake's time.
    let (link, _f) = fake(|_| vec![]);
    let o = Options { protocol: Some("2025-11-25".into()), timeout: Duration::from_millis(150), ..opts() };
    let e = Connection::establish(link, &o, &mut never()).err().unwrap();
    assert_eq!(e.error, ClientError::Timeout(Duration::from_millis(150)));
}

#[test]
fn a_late_discover_answer_wins_over_initialize() {
    // The server reads the probe only after the client gave up waiting:
    // it answers both, discover first.
    let mut probe_id = Value::Null;
    let (link, _f) = fake(move |v| match method(v) {
        "server/discover" => {
            probe_id = v["id"].clone();
            vec![]
        }
        "initialize" => vec![result(&probe_id, discover_result()), error(&v["id"], -32601, "Method not found")],
        _ => vec![],
    });
    let c = Connection::establish(link, &opts(), &mut never()).unwrap();
    assert_eq!(c.era(), Era::Modern);
}

#[test]
fn unsupported_version_errors_follow_the_supported_list() {
    let (link, f) = fake(|v| {
        let id = &v["id"];
        match method(v) {
            "server/discover" => vec![msg(json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32022,
                "message": "Unsupported protocol version",
                "data": {"supported": ["2025-06-18"], "requested": "2026-07-28"}}}))],
            "initialize" => vec![result(id, json!({"protocolVersion": "2025-06-18", "capabilities": {}}))],
            _ => vec![],
        }
    });
    let c = Connection::establish(link, &opts(), &mut never()).unwrap();
    assert_eq!(c.version(), "2025-06-18");
    assert_eq!(f.sent.lock().unwrap()[1]["params"]["protocolVersion"], "2025-06-18");

    let (link, _) = fake(|v| {
        vec![msg(json!({"jsonrpc": "2.0", "id": v["id"], "error": {"code": -32022, "message": "Unsupported",
            "data": {"supported": ["2099-01-01"], "requested": "2026-07-28"}}}))]
    });
    let e = Connection::establish(link, &opts(), &mut never()).err().unwrap();
    assert_eq!(e.kind(), "protocol");
    assert!(e.to_string().contains("2099-01-01"), "{e}");
}

#[test]
fn an_explicit_version_skips_or_forbids_the_fallback() {
    let (link, f) = fake(legacy_server("2024-11-05"));
    let o = Options { protocol: Some("2024-11-05".into()), ..opts() };
    let c = Connection::establish(link, &o, &mut never()).unwrap();
    assert_eq!(c.version(), "2024-11-05");
    assert_eq!(method(&f.sent.lock().unwrap()[0]), "initialize");

    let (link, _) = fake(legacy_server("2025-11-25"));
    let o = Options { protocol: Some(MODERN.into()), ..opts() };
    let e = Connection::establish(link, &o, &mut never()).err().unwrap();
    assert!(e.to_string().contains("does not speak protocol 2026-07-28"), "{e}");
}

#[test]
fn initialize_answers_are_checked() {
    let (link, _) = fake(legacy_server("1999-01-01"));
    let e = Connection::establish(link, &opts(), &mut never()).err().unwrap();
    assert!(e.to_string().contains("\"1999-01-01\""), "{e}");
    let (link, _) = fake(|v| vec![error(&v["id"], -32603, "broken")]);
    let e = Connection::establish(link, &opts(), &mut never()).err().unwrap();
    assert!(e.to_string().contains("rejected `initialize` (-32603: broken)"), "{e}");
}

#[test]
fn tool_lists_follow_cursors_and_stop_on_loops() {
    let (link, f) = fake(|v| {
        let id = &v["id"];
        match (method(v), v["params"]["cursor"].as_str()) {
            ("server/discover", _) => vec![result(id, discover_result())],
            ("tools/list", None) => vec![result(id, json!({"tools": [{"name": "a"}], "nextCursor": "p2"}))],
            ("tools/list", Some("p2")) => vec![result(id, json!({"tools": [{"name": "b"}], "nextCursor": "p3"}))],
            ("tools/list", Some("p3")) => vec![result(id, json!({"tools": [{"name": "c"}]}))],
            _ => vec![error(id, -32602, "bad cursor")],
        }
    });
    let mut c = Connection::establish(link, &opts(), &mut never()).unwrap();
    let tools = c.list_tools(Duration::from_secs(1), &mut never()).unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["a", "b", "c"]);
    assert_eq!(f.sent.lock().unwrap().len(), 4);

    let (link, _) = fake(|v| {
        let id = &v["id"];
        match method(v) {
            "server/discover" => vec![result(id, discover_result())],
            _ => vec![result(id, json!({"tools": [], "nextCursor": "same"}))],
        }
    });
    let mut c = Connection::establish(link, &opts(), &mut never()).unwrap();
    let e = c.list_tools(Duration::from_secs(1), &mut never()).err().unwrap();
    assert!(e.to_string().contains("does not end"), "{e}");
}

#[test]
fn progress_is_reported_and_extends_the_timeout() {
    let (link, f) = fake(|v| {
        let id = &v["id"];
        match method(v) {
            "server/discover" => vec![result(id, discover_result())],
            "tools/call" => {
                let token = v["params"]["_meta"]["progressToken"].clone();
                assert_eq!(token, *id);
                vec![
                    msg(json!({"jsonrpc": "2.0", "method": "notifications/progress",
                               "params": {"progressToken": 999, "progress": 7}})),
                    msg(json!({"jsonrpc": "2.0", "method": "notifications/progress",
                               "params": {"progressToken": token, "progress": 1, "total": 2}})),
                    msg(json!({"jsonrpc": "2.0", "method": "notifications/progress",
                               "params": {"progressToken": token, "progress": 2, "total": 2, "message": "done"}})),
                    result(id, json!({"content": []})),
                ]
            }
            _ => vec![],
        }
    });
    let mut c = Connection::establish(link, &opts(), &mut never()).unwrap();
    let id = c
        .start("tools/call", Some("slow"), &[("name", "\"slow\"")], true, Duration::from_secs(1), &mut never())
        .unwrap();
    let mut seen = Vec::new();
    let r = c
        .wait(
            id,
            Duration::from_secs(1),
            Duration::from_secs(2),
            &mut |p| seen.push(p["progress"].clone()),
            &mut never(),
        )
        .unwrap();
    assert_eq!(r["content"], json!([]));
    assert_eq!(seen, [json!(1), json!(2)]);
    assert!(f.cancelled.lock().unwrap().is_empty());
}

#[test]
fn timeouts_and_interrupts_cancel_the_request() {
    let (link, f) = fake(|v| match method(v) {
        "server/discover" => vec![result(&v["id"], discover_result())],
        _ => vec![],
    });
    let mut c = Connection::establish(link, &opts(), &mut never()).unwrap();
    let e = c.call_tool("slow", "{}", Duration::from_millis(60), &mut never()).err().unwrap();
    assert_eq!(e, ClientError::Timeout(Duration::from_millis(60)));
    assert_eq!(*f.cancelled.lock().unwrap(), [2]);
    let mut n = 0;
    let e = c
        .call_tool("slow", "{}", Duration::from_secs(10), &mut || {
            n += 1;
            n > 2
        })
        .err()
        .unwrap();
    assert_eq!(e, ClientError::Interrupted);
    assert_eq!(*f.cancelled.lock().unwrap(), [2, 3]);
    // the connection is still usable
    assert!(c.is_open());
}

#[test]
fn server_requests_are_answered_and_noise_is_noted() {
    let (link, f) = fake(|v| {
        let id = &v["id"];
        match method(v) {
            "server/discover" => vec![result(id, discover_result())],
            "tools/call" => vec![
                msg(json!({"jsonrpc": "2.0", "id": "s1", "method": "ping"})),
                msg(json!({"jsonrpc": "2.0", "id": "s2", "method": "sampling/createMessage", "params": {}})),
                Event::Garbage("hello from print()".into()),
                msg(json!({"jsonrpc": "2.0", "id": 12345, "result": {}})),
                result(id, json!({"content": [], "isError": false})),
            ],
            _ => vec![],
        }
    });
    let mut c = Connection::establish(link, &opts(), &mut never()).unwrap();
    c.call_tool("x", "{}", Duration::from_secs(1), &mut never()).unwrap();
    let sent = f.sent.lock().unwrap().clone();
    let replies: Vec<&Value> = sent.iter().filter(|v| v.get("method").is_none()).collect();
    assert_eq!(replies.len(), 2);
    assert_eq!(*replies[0], json!({"jsonrpc": "2.0", "id": "s1", "result": {}}));
    assert_eq!(replies[1]["error"]["code"], -32601);
    assert_eq!(c.garbage(), (1, Some("hello from print()")));
}

/// Options of a client that answers elicitation (RULES K12.1).
fn asking_opts() -> Options {
    Options { capabilities: r#"{"elicitation":{"form":{}}}"#.into(), ..opts() }
}

/// A legacy server (after a refused probe) with `caps`, which accepts any
/// log level and answers each `tools/call` with what `call` makes of it.
fn legacy_with(caps: Value, mut call: impl FnMut(&Value) -> Vec<Event> + Send + 'static) -> Script {
    Box::new(move |v| {
        let id = &v["id"];
        match method(v) {
            "server/discover" => vec![error(id, -32601, "no")],
            "initialize" => vec![result(
                id,
                json!({"protocolVersion": "2025-11-25", "capabilities": caps, "serverInfo": {"name": "s", "version": "1"}}),
            )],
            "logging/setLevel" => vec![result(id, json!({}))],
            "tools/call" => call(v),
            _ => vec![],
        }
    })
}

/// The next thing request `id` brings that is not `Pending`.
fn next_poll(c: &mut Connection, id: u64) -> Poll {
    loop {
        match c.poll(id, Duration::from_millis(50), &mut never()) {
            Poll::Pending => {}
            p => return p,
        }
    }
}

#[test]
fn legacy_questions_reach_the_caller_and_the_answer_goes_back() {
    let (link, f) = fake_link(
        legacy_with(json!({}), |v| {
            vec![
                msg(json!({"jsonrpc": "2.0", "id": "q", "method": "elicitation/create", "params": {"message": "Ok?"}})),
                // not declared: refused as before
                msg(json!({"jsonrpc": "2.0", "id": "s", "method": "sampling/createMessage", "params": {}})),
                result(&v["id"], json!({"content": []})),
            ]
        }),
        false,
    );
    let mut c = Connection::establish(link, &asking_opts(), &mut never()).unwrap();
    assert_eq!(f.sent.lock().unwrap()[1]["params"]["capabilities"], json!({"elicitation": {"form": {}}}));
    let id = c.start_call("t", "{}", false, Duration::from_secs(1), &mut never()).unwrap();
    let Poll::Ask(ask) = next_poll(&mut c, id) else { panic!("no question") };
    assert_eq!(
        ask,
        ServerAsk { id: json!("q"), method: "elicitation/create".into(), params: json!({"message": "Ok?"}) }
    );
    c.answer(&ask.id, Ok(r#"{"action":"decline"}"#));
    let Poll::Done(done) = next_poll(&mut c, id) else { panic!("not done") };
    assert_eq!(done.unwrap(), json!({"content": []}));
    let sent = f.sent.lock().unwrap().clone();
    let replies: Vec<&Value> = sent.iter().filter(|v| v.get("method").is_none()).collect();
    assert_eq!(*replies[0], json!({"jsonrpc": "2.0", "id": "q", "result": {"action": "decline"}}));
    assert_eq!(replies[1]["error"]["code"], -32601);
    // A question during a request that is not a tool call is refused.
    assert!(c.request("tools/list", &[], Duration::from_millis(200), &mut never()).is_err());
}

#[test]
fn input_required_calls_are_sent_again_with_the_answers() {
    let mut calls = 0;
    let (link, f) = fake(move |v| {
        let id = &v["id"];
        match method(v) {
            "server/discover" => vec![result(id, discover_result())],
            "tools/call" => {
                calls += 1;
                assert_eq!(
                    v["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"],
                    json!({"elicitation": {"form": {}}})
                );
                if calls == 1 {
                    vec![result(
                        id,
                        json!({"resultType": "input_required", "requestState": "s1",
                        "inputRequests": {"k": {"method": "elicitation/create", "params": {"message": "Ok?"}}}}),
                    )]
                } else {
                    vec![result(id, json!({"resultType": "complete", "content": [], "echo": v["params"]}))]
                }
            }
            _ => vec![],
        }
    });
    let mut c = Connection::establish(link, &asking_opts(), &mut never()).unwrap();
    let id = c.start_call("t", r#"{"a":1}"#, false, Duration::from_secs(1), &mut never()).unwrap();
    let Poll::Input(requests) = next_poll(&mut c, id) else { panic!("no input_required") };
    assert_eq!(requests["k"]["method"], "elicitation/create");
    c.retry(id, r#"{"k":{"action":"cancel"}}"#, &mut never()).unwrap();
    let Poll::Done(done) = next_poll(&mut c, id) else { panic!("not done") };
    let done = done.unwrap();
    assert_eq!(done["echo"]["requestState"], "s1");
    assert_eq!(done["echo"]["inputResponses"], json!({"k": {"action": "cancel"}}));
    assert_eq!(done["echo"]["arguments"], json!({"a": 1}));
    let ids: Vec<Value> =
        f.sent.lock().unwrap().iter().filter(|v| method(v) == "tools/call").map(|v| v["id"].clone()).collect();
    assert_eq!(ids.len(), 2);
    assert_ne!(ids[0], ids[1]);

    // Without the capability, input_required ends the call with a reason.
    let (link, _) = fake(|v| match method(v) {
        "server/discover" => vec![result(&v["id"], discover_result())],
        _ => vec![result(&v["id"], json!({"resultType": "input_required", "requestState": "x"}))],
    });
    let mut c = Connection::establish(link, &opts(), &mut never()).unwrap();
    let e = c.call_tool("t", "{}", Duration::from_secs(1), &mut never()).unwrap_err();
    assert!(e.to_string().contains("answers no questions"), "{e}");
}

/// RULES K12.3: `prompts/get` and `resources/read` may come back
/// `input_required` too; they are sent again with the answers, their
/// `params` as before.
#[test]
fn input_required_prompts_and_reads_are_sent_again() {
    let mut rounds = 0;
    let (link, f) = fake(move |v| {
        let id = &v["id"];
        match method(v) {
            "server/discover" => vec![result(id, discover_result())],
            "prompts/get" | "resources/read" if v["params"].get("inputResponses").is_none() => {
                rounds += 1;
                vec![result(
                    id,
                    json!({"resultType": "input_required", "requestState": format!("s{rounds}"),
                    "inputRequests": {"q": {"method": "elicitation/create", "params": {"message": "Which?"}}}}),
                )]
            }
            _ => vec![result(id, json!({"resultType": "complete", "echo": v["params"]}))],
        }
    });
    let mut c = Connection::establish(link, &asking_opts(), &mut never()).unwrap();
    let t = Duration::from_secs(1);
    let ids = [
        c.start_get_prompt("p", Some(r#"{"x":"1"}"#), t, &mut never()).unwrap(),
        c.start_read_resource("a://b", t, &mut never()).unwrap(),
    ];
    for (i, id) in ids.into_iter().enumerate() {
        let Poll::Input(requests) = next_poll(&mut c, id) else { panic!("no input_required") };
        assert_eq!(requests["q"]["params"]["message"], "Which?");
        c.retry(id, r#"{"q":{"action":"accept","content":{"v":"x"}}}"#, &mut never()).unwrap();
        let Poll::Done(done) = next_poll(&mut c, id) else { panic!("not done") };
        let echo = done.unwrap()["echo"].clone();
        assert_eq!(echo["requestState"], format!("s{}", i + 1));
        assert_eq!(echo["inputResponses"]["q"]["action"], "accept");
        if i == 0 {
            assert_eq!((echo["name"].clone(), echo["arguments"].clone()), (json!("p"), json!({"x": "1"})));
        } else {
            assert_eq!(echo["uri"], "a://b");
        }
    }
    let sent = f.sent.lock().unwrap().clone();
    let methods: Vec<&str> = sent.iter().map(method).filter(|m| *m != "server/discover").collect();
    assert_eq!(methods, ["prompts/get", "resources/read", "prompts/get", "resources/read"]);
}

#[test]
fn questions_are_bounded() {
    // Legacy: 70 questions in one call; the caller gets 64, the rest are refused.
    let (link, f) = fake_link(
        legacy_with(json!({}), |v| {
            let mut out: Vec<Event> = (0..70)
                .map(|i| {
                    msg(json!({"jsonrpc": "2.0", "id": format!("q{i}"), "method": "elicitation/create",
                               "params": {"message": "?"}}))
                })
                .collect();
            out.push(result(&v["id"], json!({"content": []})));
            out
        }),
        false,
    );
    let mut c = Connection::establish(link, &asking_opts(), &mut never()).unwrap();
    let id = c.start_call("t", "{}", false, Duration::from_secs(1), &mut never()).unwrap();
    let mut asked = 0;
    while let Poll::Ask(a) = next_poll(&mut c, id) {
        asked += 1;
        c.answer(&a.id, Ok(r#"{"action":"decline"}"#));
    }
    assert_eq!(asked, MAX_QUESTIONS);
    let refused = f.sent.lock().unwrap().iter().filter(|v| v["error"]["code"] == -32600).count();
    assert_eq!(refused, 70 - MAX_QUESTIONS as usize);

    // 2026-07-28: more inputRequests in one round than that end the call.
    let (link, _) = fake(|v| {
        let id = &v["id"];
        match method(v) {
            "server/discover" => vec![result(id, discover_result())],
            _ => {
                let many: serde_json::Map<String, Value> = (0..65)
                    .map(|i| (format!("k{i}"), json!({"method": "elicitation/create", "params": {"message": "?"}})))
                    .collect();
                vec![result(id, json!({"resultType": "input_required", "inputRequests": many}))]
            }
        }
    });
    let mut c = Connection::establish(link, &asking_opts(), &mut never()).unwrap();
    let id = c.start_call("t", "{}", false, Duration::from_secs(1), &mut never()).unwrap();
    let Poll::Done(Err(e)) = next_poll(&mut c, id) else { panic!("not refused") };
    assert!(e.to_string().contains("65 questions at once"), "{e}");
}

#[test]
fn log_messages_are_asked_for_and_handed_over() {
    let log_opts = || Options { log_level: LogLevel::parse("notice"), ..opts() };
    // Legacy: logging/setLevel after initialize when the server logs.
    let (link, f) = fake_link(
        legacy_with(json!({"logging": {}}), |v| {
            vec![
                msg(json!({"jsonrpc": "2.0", "method": "notifications/message",
                           "params": {"level": "warning", "data": "careful"}})),
                result(&v["id"], json!({"content": []})),
            ]
        }),
        false,
    );
    let mut c = Connection::establish(link, &log_opts(), &mut never()).unwrap();
    assert_eq!(methods(&f), ["server/discover", "initialize", "notifications/initialized", "logging/setLevel"]);
    assert_eq!(f.sent.lock().unwrap()[3]["params"], json!({"level": "notice"}));
    let id = c.start_call("t", "{}", false, Duration::from_secs(1), &mut never()).unwrap();
    let Poll::Log(log) = next_poll(&mut c, id) else { panic!("no log message") };
    assert_eq!(log, json!({"level": "warning", "data": "careful"}));
    assert!(matches!(next_poll(&mut c, id), Poll::Done(Ok(_))));

    // Modern: the level in every request's _meta; a server without
    // logging gets no setLevel.
    let (link, f) = fake(|v| match method(v) {
        "server/discover" => vec![result(&v["id"], discover_result())],
        _ => vec![result(&v["id"], json!({"resultType": "complete", "content": []}))],
    });
    let mut c = Connection::establish(link, &log_opts(), &mut never()).unwrap();
    c.call_tool("t", r#"{"text":"x"}"#, Duration::from_secs(1), &mut never()).unwrap();
    let sent = f.sent.lock().unwrap().clone();
    assert!(sent.iter().all(|v| v["params"]["_meta"]["io.modelcontextprotocol/logLevel"] == "notice"));
    assert!(!methods(&f).contains(&"logging/setLevel".to_string()));
}

#[test]
fn failures_are_reported() {
    // the server exits mid-call
    let (link, _) = fake(|v| match method(v) {
        "server/discover" => vec![result(&v["id"], discover_result())],
        _ => vec![Event::Garbage("partial output".into()), Event::Closed(None)],
    });
    let mut c = Connection::establish(link, &opts(), &mut never()).unwrap();
    let e = c.call_tool("x", "{}", Duration::from_secs(1), &mut never()).err().unwrap();
    assert_eq!(e.kind(), "closed");
    assert!(e.to_string().contains("exited with status 1"), "{e}");
    assert_eq!((c.garbage(), c.exit_status()), ((1, Some("partial output")), Some(1)));
    assert!(!c.is_open());
    let again = c.call_tool("x", "{}", Duration::from_secs(1), &mut never()).err().unwrap();
    assert_eq!(again.kind(), "closed");

    // JSON-RPC errors keep code, message and data
    let (link, _) = fake(|v| match method(v) {
        "server/discover" => vec![result(&v["id"], discover_result())],
        _ => vec![msg(json!({"jsonrpc": "2.0", "id": v["id"],
                             "error": {"code": -32602, "message": "Invalid params", "data": {"why": 1}}}))],
    });
    let mut c = Connection::establish(link, &opts(), &mut never()).unwrap();
    match c.call_tool("x", "{}", Duration::from_secs(1), &mut never()) {
        Err(ClientError::Rpc { code: -32602, message, data: Some(d) }) => {
            assert_eq!(message, "Invalid params");
            assert_eq!(d["why"], 1);
        }
        other => panic!("{other:?}"),
    }

    // oversize lines and unsupported results
    let (link, f) = fake(|v| match method(v) {
        "server/discover" => vec![result(&v["id"], discover_result())],
        "tools/list" => vec![Event::Oversize(1000)],
        _ => vec![result(&v["id"], json!({"resultType": "input_required", "inputRequests": {}}))],
    });
    let mut c = Connection::establish(link, &opts(), &mut never()).unwrap();
    let e = c.list_tools(Duration::from_secs(1), &mut never()).err().unwrap();
    assert!(e.to_string().contains("longer than 1000 bytes"), "{e}");
    assert_eq!(f.cancelled.lock().unwrap().len(), 1);
    let e = c.call_tool("x", "{}", Duration::from_secs(1), &mut never()).err().unwrap();
    assert!(e.to_string().contains("multi round-trip"), "{e}");
}

// ---------------------------------------------------------------------------
// The stdio link with real processes. The client numbers its requests 1, 2,
// 3, ..., so a shell script can answer them without parsing JSON.
#[cfg(unix)]
mod process {
    use super::*;

    fn sh(script: &str) -> StdioSpec {
        let mut s = StdioSpec::new("/bin/sh", vec!["-c".into(), script.into()]);
        s.grace = Duration::from_millis(300);
        s
    }

    const LEGACY_SH: &str = r#"
    read probe; echo '{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}'
    read init; echo '{"jsonrpc":"2.0","id":2,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"sh","version":"1"}}}'
    read initialized
    "#;

    /// Is `pid` a live process (not gone, not a zombie waiting for a reaper)?
    fn alive(pid: i32) -> bool {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Ok(stat) => !stat.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
            Err(_) => false,
        }
    }

    #[test]
    fn stdio_round_trip_and_clean_close() {
        let script = format!(
            "{LEGACY_SH}
    read call; echo 'not json'; echo '{{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\"hi\"}}]}}}}'
    echo 'bye' >&2
    cat >/dev/null"
        );
        let mut c = Connection::stdio(&sh(&script), &opts(), &mut never()).unwrap();
        assert_eq!(c.version(), "2025-06-18");
        let r = c.call_tool("x", "{}", Duration::from_secs(5), &mut never()).unwrap();
        assert_eq!(r["content"][0]["text"], "hi");
        assert_eq!(c.garbage(), (1, Some("not json")));
        let how = c.close();
        assert_eq!(how, "exited with status 0");
        assert!(c.stderr_text().contains("bye"));
        assert_eq!(c.close(), how);
        assert_eq!(c.call_tool("x", "{}", Duration::from_secs(1), &mut never()).err().unwrap().kind(), "closed");
    }

    #[test]
    fn stdio_exit_mid_call_names_the_status_and_keeps_stderr() {
        let script = format!("{LEGACY_SH}\nread call; echo 'fatal: out of cheese' >&2; exit 3");
        let mut c = Connection::stdio(&sh(&script), &opts(), &mut never()).unwrap();
        let t0 = Instant::now();
        let e = c.call_tool("x", "{}", Duration::from_secs(30), &mut never()).err().unwrap();
        assert!(t0.elapsed() < Duration::from_secs(5));
        assert_eq!(e.kind(), "closed");
        assert!(e.to_string().contains("exited with status 3"), "{e}");
        assert!(c.stderr_text().contains("out of cheese"));
        // writing to the dead server does not raise SIGPIPE
        assert_eq!(c.call_tool("x", "{}", Duration::from_secs(1), &mut never()).err().unwrap().kind(), "closed");
    }

    #[test]
    fn stdio_spawn_failures() {
        let e =
            Connection::stdio(&StdioSpec::new("/nonexistent/mcp-server", vec![]), &opts(), &mut never()).err().unwrap();
        assert_eq!(e.kind(), "spawn");
        assert!(e.to_string().contains("/nonexistent/mcp-server"), "{e}");
        let mut s = sh("true");
        s.cwd = Some("/nonexistent-dir".into());
        let e = Connection::stdio(&s, &opts(), &mut never()).err().unwrap();
        assert!(e.to_string().contains("working directory"), "{e}");
        // a program that exits at once
        let e =
            Connection::stdio(&sh("echo 'usage: server --token' >&2; exit 2"), &opts(), &mut never()).err().unwrap();
        assert_eq!(e.kind(), "closed");
        assert!(e.to_string().contains("exited with status 2"), "{e}");
        assert_eq!(e.stderr, "usage: server --token\n");
    }

    /// RULES K7.2: the lines that are not JSON-RPC are noted once, also when
    /// the server hangs after them; the exit status is known; a path that
    /// does not exist is not looked up on the PATH.
    #[test]
    fn stdio_failures_report_junk_once_and_the_exit_status() {
        use super::super::report::{report, Context, What};
        let cx = |e: &ConnectError| {
            let g = (e.garbage.0, e.garbage.1.as_deref());
            report(
                &e.error,
                &Context {
                    server: "s",
                    what: What::Connect,
                    stderr: &e.stderr,
                    exit_status: e.exit_status,
                    garbage: g,
                },
            )
        };
        for script in ["echo 'not json'; exit 3", "echo 'not json'; sleep 0.2; exit 3"] {
            let e = Connection::stdio(&sh(script), &opts(), &mut never()).err().unwrap();
            let r = cx(&e);
            assert_eq!(r.message.matches("not JSON-RPC").count(), 1, "{}", r.message);
            assert!(r.message.contains("the last: not json"), "{}", r.message);
            assert_eq!(r.status, Some(3), "{}", r.message);
        }
        let o = Options { timeout: Duration::from_millis(300), ..opts() };
        let t0 = Instant::now();
        let e = Connection::stdio(
            &StdioSpec::new("/bin/sh", vec!["-c".into(), "echo junk; sleep 100".into()]),
            &o,
            &mut never(),
        )
        .err()
        .unwrap();
        // RULES K2.7: the timeout, plus a short shutdown
        assert!(t0.elapsed() < Duration::from_millis(800), "{:?}", t0.elapsed());
        assert_eq!(e.kind(), "timeout");
        let r = cx(&e);
        assert!(r.message.contains("within 300 ms") && r.message.contains("the last: junk"), "{}", r.message);

        let e =
            Connection::stdio(&StdioSpec::new("/nonexistent/mcp-server", vec![]), &opts(), &mut never()).err().unwrap();
        assert!(e.to_string().ends_with("no such file"), "{e}");
        let e =
            Connection::stdio(&StdioSpec::new("no-such-mcp-server-here", vec![]), &opts(), &mut never()).err().unwrap();
        assert!(e.to_string().ends_with("no such program on the PATH"), "{e}");
    }

    #[test]
    fn stdio_environment_and_directory() {
        let script = format!(
            "{LEGACY_SH}\nread call; printf '{{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{{\"env\":\"%s\",\"home\":\"%s\",\"dir\":\"%s\"}}}}\\n' \"$MCP_TEST\" \"${{HOME:-unset}}\" \"$(pwd)\"; cat >/dev/null"
        );
        let mut s = sh(&script);
        s.env = Some(vec![("MCP_TEST".into(), "yes".into()), ("PATH".into(), "/usr/bin:/bin".into())]);
        s.cwd = Some("/tmp".into());
        let mut c = Connection::stdio(&s, &opts(), &mut never()).unwrap();
        let r = c.call_tool("x", "{}", Duration::from_secs(5), &mut never()).unwrap();
        assert_eq!(r, json!({"env": "yes", "home": "unset", "dir": "/tmp"}));
    }

    #[test]
    fn stdio_close_escalates_and_leaves_no_process() {
        // ignores EOF and SIGTERM, and has a child of its own
        let script = format!("{LEGACY_SH}\ntrap '' TERM; sleep 100 & echo $! >&2; while :; do sleep 1; done");
        let mut s = sh(&script);
        s.grace = Duration::from_millis(200);
        let mut c = Connection::stdio(&s, &opts(), &mut never()).unwrap();
        std::thread::sleep(Duration::from_millis(100));
        let grandchild: i32 = c.stderr_text().trim().parse().expect("pid on stderr");
        assert!(alive(grandchild));
        let how = c.close();
        assert!(how.contains("SIGKILL"), "{how}");
        std::thread::sleep(Duration::from_millis(100));
        assert!(!alive(grandchild), "the server's own child survived");
    }

    #[test]
    fn stdio_timeouts_and_oversize_lines() {
        let script = format!(
            "{LEGACY_SH}\nread call; head -c 300000 /dev/zero | tr '\\0' a; echo; \
             read cancel; echo \"$cancel\" >&2; \
             read call2; echo '{{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{{\"ok\":true}}}}'; cat >/dev/null"
        );
        let mut s = sh(&script);
        s.max_line = 100_000;
        let mut c = Connection::stdio(&s, &opts(), &mut never()).unwrap();
        let e = c.call_tool("x", "{}", Duration::from_secs(5), &mut never()).err().unwrap();
        assert!(e.to_string().contains("longer than 100000 bytes"), "{e}");
        // the dropped line was followed by a notification of cancellation
        let r = c.call_tool("y", "{}", Duration::from_secs(5), &mut never()).unwrap();
        assert_eq!(r["ok"], true);
        let t0 = Instant::now();
        while !c.stderr_text().contains("requestId") && t0.elapsed() < Duration::from_secs(2) {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(c.stderr_text().contains("\"notifications/cancelled\""), "{}", c.stderr_text());
        assert!(c.stderr_text().contains("\"requestId\":3"));

        let script = format!("{LEGACY_SH}\ncat >/dev/null");
        let mut c = Connection::stdio(&sh(&script), &opts(), &mut never()).unwrap();
        let t0 = Instant::now();
        let e = c.call_tool("x", "{}", Duration::from_millis(200), &mut never()).err().unwrap();
        assert_eq!(e.kind(), "timeout");
        assert!(t0.elapsed() < Duration::from_secs(2));
    }

    #[test]
    fn stdio_writes_to_a_server_that_stops_reading_time_out() {
        let script = format!("{LEGACY_SH}\nsleep 30");
        let mut c = Connection::stdio(&sh(&script), &opts(), &mut never()).unwrap();
        let big = format!("{{\"text\":\"{}\"}}", "x".repeat(4 << 20));
        let t0 = Instant::now();
        let e = c.call_tool("x", &big, Duration::from_millis(300), &mut never()).err().unwrap();
        assert_eq!(e.kind(), "timeout");
        assert!(t0.elapsed() < Duration::from_secs(3));
        // half a message went out: the connection is unusable, and says so
        assert!(c.call_tool("x", "{}", Duration::from_secs(1), &mut never()).is_err());
    }
}

/// RULES K2.2, K2.4: whatever answers `server/discover` without a valid
/// discover result is a legacy server.
#[test]
fn answers_that_are_no_discover_result_fall_back_to_initialize() {
    let answers: Vec<fn(&Value) -> Vec<Event>> = vec![
        |id| vec![result(id, json!({}))],
        |id| vec![result(id, json!({"supportedVersions": []}))],
        |id| vec![result(id, json!({"supportedVersions": "2026-07-28"}))],
        |id| vec![result(id, json!({"supportedVersions": ["2026-07-28", 7]}))],
        |id| vec![error(id, -32601, "Method not found")],
        |id| vec![error(id, -32000, "Bad Request: Server not initialized")],
        |_| vec![Event::Failed(ClientError::Http { status: 404, message: "not found".into() })],
        |_| vec![Event::Failed(ClientError::Http { status: 500, message: "oops".into() })],
        |_| vec![Event::Failed(ClientError::Protocol("content type \"text/html\"".into()))],
    ];
    for (i, answer) in answers.into_iter().enumerate() {
        let mut inner = legacy_server("2025-11-25");
        let (link, f) = fake(move |v| if method(v) == "server/discover" { answer(&v["id"]) } else { inner(v) });
        let c = Connection::establish(link, &opts(), &mut never()).unwrap_or_else(|e| panic!("answer {i}: {e}"));
        assert_eq!((c.era(), c.version()), (Era::Legacy, "2025-11-25"), "answer {i}");
        assert_eq!(methods(&f), ["server/discover", "initialize", "notifications/initialized"], "answer {i}");
    }
    // insisting on the modern version, the same answers are errors
    let (link, _) = fake(|v| vec![result(&v["id"], json!({}))]);
    let o = Options { protocol: Some(MODERN.into()), ..opts() };
    let e = Connection::establish(link, &o, &mut never()).err().unwrap();
    assert!(e.to_string().contains("not a discover result"), "{e}");
    // not reaching the server at all is not a legacy server
    let (link, f) = fake(|_| vec![Event::Failed(ClientError::Connect("connection refused".into()))]);
    let e = Connection::establish(link, &opts(), &mut never()).err().unwrap();
    assert_eq!((e.kind(), methods(&f).len()), ("connect", 1));
}

/// RULES K4.3: a HeaderMismatch refreshes the tool list and sends the call
/// again, once, under the id the caller knows.
#[test]
fn header_mismatch_lists_the_tools_and_sends_the_call_again() {
    let mut calls = 0;
    let (link, f) = fake_http(move |v| {
        let id = &v["id"];
        match method(v) {
            "server/discover" => vec![result(id, discover_result())],
            "tools/list" => vec![result(
                id,
                json!({"tools": [{"name": "t", "inputSchema": {"type": "object",
                "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}}}]}),
            )],
            "tools/call" => {
                calls += 1;
                match calls {
                    1 | 3 | 4 => vec![error(id, -32020, "Header mismatch")],
                    _ => vec![result(id, json!({"content": [], "n": calls}))],
                }
            }
            _ => vec![],
        }
    });
    let mut c = Connection::establish(link, &opts(), &mut never()).unwrap();
    let t = Duration::from_secs(1);
    let id = c.start_call("t", r#"{"region":"eu"}"#, true, t, &mut never()).unwrap();
    let r = c.wait(id, t, t, &mut |_| {}, &mut never()).unwrap();
    assert_eq!(r["n"], 2);
    assert_eq!(methods(&f), ["server/discover", "tools/call", "tools/list", "tools/call"]);
    let sent = f.sent.lock().unwrap().clone();
    assert_ne!(sent[1]["id"], sent[3]["id"]);
    assert_eq!(sent[3]["params"]["_meta"]["progressToken"], sent[3]["id"]);
    // a second mismatch is the caller's error
    match c.call_tool("t", "{}", t, &mut never()) {
        Err(ClientError::Rpc { code: -32020, .. }) => {}
        other => panic!("{other:?}"),
    }
    assert_eq!(methods(&f).len(), 7);

    // over stdio there are no mirrored headers: no second attempt
    let (link, f) = fake(|v| match method(v) {
        "server/discover" => vec![result(&v["id"], discover_result())],
        _ => vec![error(&v["id"], -32020, "Header mismatch")],
    });
    let mut c = Connection::establish(link, &opts(), &mut never()).unwrap();
    assert!(c.call_tool("t", "{}", t, &mut never()).is_err());
    assert_eq!(methods(&f), ["server/discover", "tools/call"]);
}

/// RULES K5.2: input schemas come from the last listing; a connection that
/// never listed its tools lists them once.
#[test]
fn input_schemas_are_listed_once_and_cached() {
    let (link, f) = fake(|v| {
        let id = &v["id"];
        match method(v) {
            "server/discover" => vec![result(id, discover_result())],
            "tools/list" => vec![result(
                id,
                json!({"tools": [
                    {"name": "a", "inputSchema": {"type": "object", "properties": {"v": {"type": "array"}}}},
                    {"name": "b", "inputSchema": {"type": "object", "properties": {"x": {"type": "number"}}}}
                ]}),
            )],
            _ => vec![],
        }
    });
    let mut c = Connection::establish(link, &opts(), &mut never()).unwrap();
    let t = Duration::from_secs(1);
    let a = json!({"type": "object", "properties": {"v": {"type": "array"}}});
    assert_eq!(c.input_schema("a", t, &mut never()).unwrap(), Some(a));
    // a schema of scalars shapes nothing; an unlisted tool has no schema
    assert_eq!(c.input_schema("b", t, &mut never()).unwrap(), None);
    assert_eq!(c.input_schema("c", t, &mut never()).unwrap(), None);
    assert_eq!(methods(&f), ["server/discover", "tools/list"]);
    c.list_tools(t, &mut never()).unwrap();
    assert_eq!(methods(&f).len(), 3);

    // a server that cannot list tools: no schema, asked once
    let (link, f) = fake(|v| match method(v) {
        "server/discover" => vec![result(&v["id"], discover_result())],
        _ => vec![error(&v["id"], -32601, "Method not found")],
    });
    let mut c = Connection::establish(link, &opts(), &mut never()).unwrap();
    assert_eq!(c.input_schema("a", t, &mut never()).unwrap(), None);
    assert_eq!(c.input_schema("a", t, &mut never()).unwrap(), None);
    assert_eq!(methods(&f).len(), 2);
}

/// RULES K5.2: only schemas that can change the encoding reach R.
#[test]
fn schemas_that_shape_arguments() {
    let shapes = |s: Value| shapes_arguments(&s);
    assert!(!shapes(json!({"type": "object"})));
    assert!(!shapes(
        json!({"type": "object", "properties": {"x": {"type": "number"}, "s": {"type": ["string", "integer"]}}})
    ));
    assert!(shapes(json!({"properties": {"v": {"type": "array", "items": {"type": "number"}}}})));
    assert!(shapes(json!({"properties": {"o": {"type": "object"}}})));
    assert!(shapes(json!({"properties": {"n": {"type": ["number", "null"]}}})));
    assert!(shapes(json!({"properties": {"n": {"type": "number", "nullable": true}}})));
    assert!(shapes(json!({"properties": {"e": {"enum": ["a", null]}}})));
    assert!(shapes(json!({"properties": {"u": {"anyOf": [{"type": "string"}, {"type": "array"}]}}})));
    assert!(shapes(json!({"type": "object", "additionalProperties": {"type": "array"}})));
    assert!(!shapes(json!({"type": "object", "additionalProperties": true})));
}

/// RULES K14.1, K14.2: a 2026-07-28 call that may become a task declares the
/// extension, also when it is sent again with answers (review of issue 46:
/// the retry dropped it); a task's handle is its answer only where the call
/// allowed one; requests about the task carry its id in `Mcp-Name`.
#[test]
fn calls_that_may_become_tasks_declare_the_extension_every_time() {
    let mut calls = 0;
    let (link, f) = fake(move |v| {
        let id = &v["id"];
        let ext = &v["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]["extensions"]
            ["io.modelcontextprotocol/tasks"];
        match method(v) {
            "server/discover" => {
                let mut d = discover_result();
                d["capabilities"]["extensions"] = json!({"io.modelcontextprotocol/tasks": {}});
                vec![result(id, d)]
            }
            "tools/call" if v["params"]["name"] == "plain" => {
                vec![result(id, json!({"resultType": "task", "taskId": "t1", "status": "working"}))]
            }
            "tools/call" => {
                calls += 1;
                assert!(ext.is_object(), "the extension is declared: {v}");
                if calls == 1 {
                    vec![result(
                        id,
                        json!({"resultType": "input_required", "requestState": "s1",
                        "inputRequests": {"k": {"method": "elicitation/create", "params": {"message": "Ok?"}}}}),
                    )]
                } else {
                    vec![result(
                        id,
                        json!({"resultType": "task", "taskId": "t2", "status": "working",
                        "createdAt": "x", "lastUpdatedAt": "x", "ttlMs": 60000}),
                    )]
                }
            }
            "tasks/get" => {
                assert!(ext.is_object());
                vec![result(
                    id,
                    json!({"resultType": "complete", "taskId": v["params"]["taskId"], "status": "completed"}),
                )]
            }
            _ => vec![],
        }
    });
    let mut c = Connection::establish(link, &asking_opts(), &mut never()).unwrap();
    let id = c.start_call_as("t", "{}", false, Duration::from_secs(1), TaskAsk::Auto, &mut never()).unwrap();
    let Poll::Input(_) = next_poll(&mut c, id) else { panic!("no input_required") };
    c.retry(id, r#"{"k":{"action":"accept","content":{}}}"#, &mut never()).unwrap();
    let Poll::Done(done) = next_poll(&mut c, id) else { panic!("not done") };
    let handle = done.unwrap();
    assert_eq!(task_of(&handle).unwrap()["taskId"], "t2");
    let got = c.task_request("tasks/get", "t2", None, Duration::from_secs(1), &mut never()).unwrap();
    assert_eq!(got["status"], "completed");
    let sent = f.sent.lock().unwrap().clone();
    assert!(sent.iter().any(|v| method(v) == "tasks/get" && v["params"]["taskId"] == "t2"));
    // A call that did not allow a task: its handle is a protocol error.
    let e = c.call_tool("plain", "{}", Duration::from_secs(1), &mut never()).unwrap_err();
    assert!(e.to_string().contains("did not allow"), "{e}");
}
