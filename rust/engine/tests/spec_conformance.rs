//! Rule-by-rule conformance transcripts (RULES sections 3, 4, 5, 6 and 10)
//! with a fake host: exact request lines in, exact response lines out. These
//! complement `dispatch.rs` with the cases it does not pin down.

use mcplite_engine::host::{Block, CallContext, Content, Host, ToolFailure, ToolResult, ToolSpec};
use mcplite_engine::{LegacyState, Server, ServerInfo, Version};
use serde_json::{Map, Value};

/// Records every call; tool 0 echoes its arguments as JSON text, tool 1
/// returns a result with every projection-sensitive feature.
struct Fake {
    calls: Vec<Option<String>>,
}

fn empty_schema() -> String {
    r#"{"type":"object","properties":{},"additionalProperties":false}"#.into()
}

impl Host for Fake {
    fn tools(&mut self) -> Vec<ToolSpec> {
        vec![
            ToolSpec {
                name: "echo".into(),
                description: "Echo the arguments.".into(),
                // Open: it takes any arguments (RULES L6.7 checks nothing).
                input_schema: r#"{"type":"object"}"#.into(),
                annotations: vec![],
                output_schema: None,
            },
            ToolSpec {
                name: "rich".into(),
                description: "Every projection-sensitive feature.".into(),
                input_schema: empty_schema(),
                annotations: vec![("title".into(), "\"Rich\"".into())],
                output_schema: Some(r#"{"type":"object"}"#.into()),
            },
        ]
    }

    fn call_tool(
        &mut self,
        index: usize,
        arguments: Option<&Map<String, Value>>,
        _ctx: &CallContext,
    ) -> Result<ToolResult, ToolFailure> {
        let args = arguments.map(|a| serde_json::to_string(a).unwrap());
        self.calls.push(args.clone());
        match index {
            0 => Ok(ToolResult::text(args.unwrap_or_else(|| "none".into()))),
            _ => Ok(ToolResult {
                content: vec![Block {
                    content: Content::Text { text: "t".into() },
                    annotations: vec![
                        ("priority".into(), "0.5".into()),
                        ("last_modified".into(), "\"2025-01-01\"".into()),
                        ("x-ext".into(), "null".into()),
                    ],
                    meta: vec![("b".into(), "1".into())],
                }],
                structured: Some(r#"{"ok":true}"#.into()),
                is_error: false,
                meta: vec![("r".into(), "2".into())],
                changes: vec![],
            }),
        }
    }
}

struct Rig {
    server: Server,
    /// The connection's legacy session, owned by the caller.
    legacy: LegacyState,
    host: Fake,
    /// The stderr diagnostic owed for the last line.
    diagnostic: Option<&'static str>,
}

impl Rig {
    fn new() -> Rig {
        let mut host = Fake { calls: vec![] };
        let server =
            Server::new(ServerInfo { name: "mcplite".into(), version: "9.9.9".into(), instructions: None }, &mut host);
        Rig { server, legacy: LegacyState::default(), host, diagnostic: None }
    }
    fn send(&mut self, line: &str) -> Option<String> {
        let reply = self.server.handle(&mut self.legacy, line.as_bytes(), &mut self.host);
        self.diagnostic = reply.diagnostic();
        reply.into_line().map(|b| String::from_utf8(b).unwrap())
    }
    #[track_caller]
    fn expect(&mut self, line: &str, want: &str) {
        assert_eq!(self.send(line).as_deref(), Some(want), "request: {line}");
    }
    #[track_caller]
    fn silent(&mut self, line: &str) {
        assert_eq!(self.send(line), None, "request: {line}");
    }
    fn init(&mut self, version: &str) -> String {
        self.send(&init_line(version)).unwrap()
    }
}

fn init_line(version: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{version}","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#
    )
}

const M: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
const S: &str = r#""_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcplite","version":"9.9.9"}}"#;
const NOT_INIT: &str = r#"{"code":-32600,"message":"Invalid Request: server not initialized"}"#;
const NOT_FOUND: &str = r#"{"code":-32601,"message":"Method not found"}"#;

fn err(id: &str, e: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{e}}}"#)
}

/// RULES 10: every out-of-scope method, both eras.
const OUT_OF_SCOPE: &[&str] = &[
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "tasks/get",
    "tasks/list",
    "tasks/result",
    "tasks/cancel",
    "subscriptions/listen",
    "sampling/createMessage",
    "elicitation/create",
    "roots/list",
    "no/such/method",
    "",
];

#[test]
fn s10_out_of_scope_methods_legacy_before_and_after_initialize() {
    let mut r = Rig::new();
    for m in OUT_OF_SCOPE {
        r.expect(&format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{m}","params":{{}}}}"#), &err("1", NOT_INIT));
    }
    r.init("2025-11-25");
    // A legacy session sets its log level (RULES G1.1, tests/logging.rs).
    for m in OUT_OF_SCOPE.iter().filter(|m| **m != "logging/setLevel") {
        r.expect(&format!(r#"{{"jsonrpc":"2.0","id":2,"method":"{m}","params":{{}}}}"#), &err("2", NOT_FOUND));
    }
    assert!(r.host.calls.is_empty());
}

#[test]
fn s10_out_of_scope_methods_modern() {
    let mut r = Rig::new();
    for m in OUT_OF_SCOPE.iter().chain(["ping", "initialize", "notifications/initialized"].iter()) {
        r.expect(&format!(r#"{{"jsonrpc":"2.0","id":"m","method":"{m}","params":{{{M}}}}}"#), &err("\"m\"", NOT_FOUND));
    }
    // A claimed notifications/initialized with an id is a modern request
    // (-32601), not the legacy -32600 of L2.1, and leaves legacy state alone.
    assert_eq!(r.legacy, Default::default());
}

#[test]
fn s10_notifications_are_ignored_and_cancel_nothing() {
    let mut r = Rig::new();
    r.init("2025-06-18");
    for m in [
        "notifications/cancelled",
        "notifications/progress",
        "notifications/roots/list_changed",
        "notifications/message",
        "notifications/whatever",
    ] {
        r.silent(&format!(r#"{{"jsonrpc":"2.0","method":"{m}","params":{{"requestId":1,"progressToken":1}}}}"#));
        r.silent(&format!(r#"{{"jsonrpc":"2.0","method":"{m}","params":{{{M}}}}}"#));
    }
    // Still initialized with the same version: notifications change nothing.
    assert!(r.legacy.initialized);
    assert_eq!(r.legacy.version, Some(Version::V2025_06_18));
    assert!(r.host.calls.is_empty());
}

#[test]
fn s10_progress_token_and_log_level_produce_no_extra_messages() {
    let mut r = Rig::new();
    r.init("2025-11-25");
    // Exactly one response line, the ordinary result: no progress or log
    // notifications, and _meta never reaches the tool.
    r.expect(
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"a":1},"_meta":{"progressToken":"p1"}}}"#,
        r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"{\"a\":1}"}],"isError":false}}"#,
    );
    r.expect(
        r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"debug","progressToken":3}}}"#,
        &format!(r#"{{"jsonrpc":"2.0","id":8,"result":{{"resultType":"complete","content":[{{"type":"text","text":"none"}}],"isError":false,{S}}}}}"#),
    );
}

#[test]
fn s10_m4_1_multi_round_trip_inputs_are_ignored() {
    let mut r = Rig::new();
    r.expect(
        &format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"echo","arguments":{{}},"inputResponses":{{"x":1}},"requestState":"abc",{M}}}}}"#),
        &format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"resultType":"complete","content":[{{"type":"text","text":"{{}}"}}],"isError":false,{S}}}}}"#),
    );
    assert_eq!(r.host.calls, vec![Some("{}".to_string())]);
}

#[test]
fn l2_2_notifications_of_requests_have_no_effect() {
    let mut r = Rig::new();
    // An initialize notification does not initialize.
    r.silent(&init_line("2025-06-18").replace(r#""id":0,"#, ""));
    assert!(!r.legacy.initialized);
    r.expect(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#, &err("1", NOT_INIT));
    // A tools/call notification never runs the tool, before or after initialize.
    r.silent(r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo","arguments":{}}}"#);
    r.init("2025-06-18");
    r.silent(r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo","arguments":{}}}"#);
    assert!(r.host.calls.is_empty());
    // notifications/initialized sets only the informational flag.
    let before = r.legacy.clone();
    r.silent(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    assert!(r.legacy.client_initialized);
    assert_eq!(r.legacy.version, before.version);
}

#[test]
fn m1_2_claimed_initialized_notification_changes_no_state() {
    let mut r = Rig::new();
    r.init("2025-06-18");
    r.silent(&format!(r#"{{"jsonrpc":"2.0","method":"notifications/initialized","params":{{{M}}}}}"#));
    assert!(!r.legacy.client_initialized);
}

#[test]
fn l3_failed_reinitialize_keeps_state_and_reinitialize_replaces_version() {
    let mut r = Rig::new();
    r.init("2024-11-05");
    r.expect(
        r#"{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{}}}"#,
        r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"Invalid params"}}"#,
    );
    assert!(r.legacy.initialized);
    assert_eq!(r.legacy.version, Some(Version::V2024_11_05));
    // Still 2024-11-05: no annotations, no outputSchema.
    r.expect(
        r#"{"jsonrpc":"2.0","id":6,"method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","id":6,"result":{"tools":[{"name":"echo","description":"Echo the arguments.","inputSchema":{"type":"object"}},{"name":"rich","description":"Every projection-sensitive feature.","inputSchema":{"type":"object","properties":{},"additionalProperties":false}}]}}"#,
    );
    // clientInfo members other than name/version are ignored.
    let out = r.send(r#"{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"roots":{}},"clientInfo":{"name":"c","version":"2","title":"C","extra":[1]},"extra":true}}"#).unwrap();
    assert_eq!(
        out,
        r#"{"jsonrpc":"2.0","id":7,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":false},"logging":{}},"serverInfo":{"name":"mcplite","version":"9.9.9"}}}"#
    );
    assert_eq!(r.legacy.version, Some(Version::V2025_06_18));
}

#[test]
fn l5_1_meta_must_be_an_object_even_null() {
    let mut r = Rig::new();
    r.init("2025-11-25");
    let invalid = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params"}}"#;
    for p in [r#"{"_meta":null}"#, r#"{"_meta":"x"}"#, r#"{"_meta":[]}"#, "1", r#""s""#, "true"] {
        r.expect(&format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{p}}}"#), invalid);
    }
    for c in ["0", r#""""#, "false", "{}", "[]"] {
        r.expect(
            &format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{"cursor":{c}}}}}"#),
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: invalid cursor"}}"#,
        );
    }
}

#[test]
fn l6_1_call_params_shapes() {
    let mut r = Rig::new();
    r.init("2025-11-25");
    let invalid = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params"}}"#;
    for p in [
        "null",
        "[]",
        r#""echo""#,
        r#"{"name":null}"#,
        r#"{"name":["echo"]}"#,
        r#"{"name":"echo","arguments":"{}"}"#,
        r#"{"name":"echo","arguments":1}"#,
    ] {
        r.expect(&format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{p}}}"#), invalid);
    }
    // Exact name match: no case folding, no trimming, no prefix match.
    for name in ["Echo", "echo ", "ech", "echo\\u0000"] {
        r.expect(
            &format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{name}"}}}}"#),
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: unknown tool"}}"#,
        );
    }
    assert!(r.host.calls.is_empty());
    // arguments null == absent; {} is passed as an empty object.
    r.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":null}}"#);
    r.send(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{}}}"#);
    assert_eq!(r.host.calls, vec![None, Some("{}".to_string())]);
}

#[test]
fn w2_envelope_edge_cases() {
    let mut r = Rig::new();
    let null_invalid = err("null", r#"{"code":-32600,"message":"Invalid Request"}"#);
    // jsonrpc must be exactly the string "2.0".
    for j in ["2", "2.0", r#""2.0 ""#, r#""2""#, "null"] {
        r.expect(
            &format!(r#"{{"jsonrpc":{j},"id":4,"method":"ping"}}"#),
            &err("4", r#"{"code":-32600,"message":"Invalid Request"}"#),
        );
    }
    r.expect(r#"{"id":"x","method":"ping"}"#, &err("\"x\"", r#"{"code":-32600,"message":"Invalid Request"}"#));
    // Invalid id and invalid envelope: id null.
    r.expect(r#"{"jsonrpc":"2.0","id":false,"method":3}"#, &null_invalid);
    r.expect("{}", &null_invalid);
    // A method member makes it a request even with result/error present.
    r.expect(r#"{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}"#, r#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
    r.expect(
        r#"{"jsonrpc":"2.0","id":1,"method":5,"error":{}}"#,
        &err("1", r#"{"code":-32600,"message":"Invalid Request"}"#),
    );
    // Client responses are ignored whatever else they hold (W2.2).
    r.silent(r#"{"result":null}"#);
    r.silent(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-1,"message":"x"}}"#);
    r.silent(r#"{"jsonrpc":"1.0","id":[1],"result":1}"#);
    // Other members are ignored; member order does not matter.
    r.expect(
        r#"{"method":"ping","x":[1,{"y":2}],"id":"o","jsonrpc":"2.0"}"#,
        r#"{"jsonrpc":"2.0","id":"o","result":{}}"#,
    );
    // State untouched by all of the above.
    assert_eq!(r.legacy, Default::default());
}

#[test]
fn w3_ids_negative_and_large_are_valid_and_echoed() {
    let mut r = Rig::new();
    for id in ["-5", "0", "99999999999999999999999999999999", r#""\ud83d\ude00""#, r#""\"""#] {
        r.expect(
            &format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#),
            &format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#),
        );
    }
    // Not JSON at all (leading zero, plus sign): parse errors.
    for id in ["01", "+1", "-"] {
        r.expect(
            &format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#),
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#,
        );
    }
    // Valid JSON numbers that are not valid ids.
    for id in ["-1.0", "1E2", "0e0", "-0.5"] {
        r.expect(
            &format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#),
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}"#,
        );
    }
}

#[test]
fn w1_3_strict_json_numbers_of_any_precision_are_accepted() {
    // Long mantissas, huge integers, exponents beyond the double range and
    // underflowing ones are valid JSON and not parse errors.
    let mut r = Rig::new();
    r.expect(
        r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"big":1.7976931348623157e308,"int":123456789012345678901234567890,"tiny":1e-400,"huge":-1e400,"long":0.1000000000000000000000000000001}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
    );
}

#[test]
fn w1_3_parse_errors_for_non_strict_json() {
    let mut r = Rig::new();
    let parse = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#;
    for line in [
        r#"{"jsonrpc":"2.0","id":1,"method":"ping",}"#,
        r#"{'jsonrpc':'2.0'}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"ping"}{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":Infinity}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"ping"} /* c */"#,
        "\u{1}",
        r#"{"a":"tab	inside"}"#,
    ] {
        r.expect(line, parse);
    }
    // Trailing JSON whitespace is fine.
    r.expect("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"} \t ", r#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
}

/// `n` nested arrays around `1`: JSON nesting `n` levels deep.
fn arrays(n: usize) -> String {
    format!("{}1{}", "[".repeat(n), "]".repeat(n))
}

const TOO_DEEP_PARAMS: &str =
    r#"{"code":-32602,"message":"Invalid params: nesting deeper than the limit of 512 levels"}"#;
const TOO_DEEP_REQUEST: &str =
    r#"{"code":-32600,"message":"Invalid Request: nesting deeper than the limit of 512 levels"}"#;

#[test]
fn w1_4_too_deep_requests_are_answered_with_their_id_legacy() {
    let mut r = Rig::new();
    let deep = arrays(10_000);
    // Before initialize too: the limit is checked first.
    r.expect(&format!(r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{deep}}}"#), &err("1", TOO_DEEP_PARAMS));
    r.init("2025-06-18");
    let before = r.legacy.clone();
    // params 10,000 arrays deep
    r.expect(
        &format!(r#"{{"jsonrpc":"2.0","id":"p","method":"tools/call","params":{deep}}}"#),
        &err(r#""p""#, TOO_DEEP_PARAMS),
    );
    // a tool argument that deep: the tool never runs
    r.expect(
        &format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"echo","arguments":{{"x":{deep}}}}}}}"#
        ),
        &err("7", TOO_DEEP_PARAMS),
    );
    // an initialize that deep changes no state
    r.expect(
        &format!(
            r#"{{"jsonrpc":"2.0","id":8,"method":"initialize","params":{{"protocolVersion":"2024-11-05","capabilities":{{"x":{deep}}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#
        ),
        &err("8", TOO_DEEP_PARAMS),
    );
    // outside params: -32600, id still echoed (the id may come last)
    r.expect(
        &format!(r#"{{"jsonrpc":"2.0","method":"tools/list","extra":{deep},"id":-0}}"#),
        &err("-0", TOO_DEEP_REQUEST),
    );
    // just over the limit (512 levels in all with the top object, plus one)
    r.expect(
        &format!(r#"{{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{}}}"#, arrays(512)),
        &err("9", TOO_DEEP_PARAMS),
    );
    // a notification is still never answered, and changes nothing
    r.silent(&format!(r#"{{"jsonrpc":"2.0","method":"notifications/initialized","params":{deep}}}"#));
    assert_eq!(r.host.calls, Vec::<Option<String>>::new());
    assert_eq!(r.legacy, before);
    assert!(!r.legacy.client_initialized);
    // and the session goes on
    r.expect(
        r#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"echo","arguments":{"a":[[1]]}}}"#,
        r#"{"jsonrpc":"2.0","id":10,"result":{"content":[{"type":"text","text":"{\"a\":[[1]]}"}],"isError":false}}"#,
    );
}

#[test]
fn w1_4_too_deep_requests_are_answered_with_their_id_modern() {
    let mut r = Rig::new();
    let deep = arrays(10_000);
    // a tool argument 10,000 arrays deep, with a valid claim
    r.expect(
        &format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"echo","arguments":{{"x":{deep}}},{M}}}}}"#
        ),
        &err("1", TOO_DEEP_PARAMS),
    );
    // params itself 10,000 arrays deep (no claim can be read: still the id)
    r.expect(
        &format!(r#"{{"jsonrpc":"2.0","id":"m","method":"tools/list","params":{deep}}}"#),
        &err(r#""m""#, TOO_DEEP_PARAMS),
    );
    // deep _meta beside the claim
    r.expect(
        &format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"server/discover","params":{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}},"x":{deep}}}}}}}"#
        ),
        &err("2", TOO_DEEP_PARAMS),
    );
    // outside params
    r.expect(
        &format!(r#"{{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{{{M}}},"x":{deep}}}"#),
        &err("3", TOO_DEEP_REQUEST),
    );
    // a modern notification: silent
    r.silent(&format!(
        r#"{{"jsonrpc":"2.0","method":"tools/call","params":{{"name":"echo","arguments":{deep},{M}}}}}"#
    ));
    assert_eq!(r.host.calls, Vec::<Option<String>>::new());
    assert_eq!(r.legacy, Default::default());
}

#[test]
fn w1_4_id_null_only_when_no_valid_id_can_be_read() {
    let mut r = Rig::new();
    let deep = arrays(10_000);
    let invalid = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}"#;
    // a batch (W2.1), an invalid id (W2.3), an id that is itself too deep
    r.expect(&format!("[{deep}]"), invalid);
    r.expect(&format!(r#"{{"jsonrpc":"2.0","id":1.5,"method":"ping","params":{deep}}}"#), invalid);
    r.expect(&format!(r#"{{"jsonrpc":"2.0","id":{deep},"method":"ping"}}"#), invalid);
    // envelope-invalid with a valid id (W2.3)
    r.expect(
        &format!(r#"{{"jsonrpc":"1.0","id":4,"method":"ping","params":{deep}}}"#),
        r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32600,"message":"Invalid Request"}}"#,
    );
    // a client response that deep is still only a client response (W2.2)
    r.silent(&format!(r#"{{"jsonrpc":"2.0","id":5,"result":{deep}}}"#));
    // not JSON: a parse error however deep (W1.3)
    let parse = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#;
    r.expect(&format!(r#"{{"jsonrpc":"2.0","id":6,"method":"ping","params":{}}}"#, "[".repeat(10_000)), parse);
    r.expect(&format!(r#"{{"jsonrpc":"2.0","id":6,"method":"ping","params":{deep}}} x"#), parse);
    r.expect(&format!(r#"{{"jsonrpc":"2.0","id":6,"method":"ping","params":{deep},}}"#), parse);
}

#[test]
fn m3_discover_ignores_other_params_members() {
    let mut r = Rig::new();
    r.expect(
        &format!(r#"{{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{{"cursor":"x","anything":[1],{M}}}}}"#),
        &format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"resultType":"complete","supportedVersions":["2026-07-28","2025-11-25","2025-06-18","2024-11-05"],"capabilities":{{"tools":{{"listChanged":false}},"logging":{{}}}},"ttlMs":300000,"cacheScope":"public",{S}}}}}"#),
    );
}

#[test]
fn m2_3_version_check_is_exact() {
    let mut r = Rig::new();
    for v in ["2026-07-28 ", "2026-7-28", "", "2026-07-28T00:00"] {
        let got = r.send(&format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"{v}","io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#)).unwrap();
        assert_eq!(
            got,
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"error":{{"code":-32022,"message":"Unsupported protocol version","data":{{"supported":["2026-07-28","2025-11-25","2025-06-18","2024-11-05"],"requested":"{v}"}}}}}}"#
            )
        );
    }
    // Other version types: the string check (M2.2) comes first.
    for v in ["20260728", "{}", "[\"2026-07-28\"]", "true"] {
        r.expect(
            &format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"_meta":{{"io.modelcontextprotocol/protocolVersion":{v}}}}}}}"#),
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: _meta io.modelcontextprotocol/protocolVersion must be a string"}}"#,
        );
    }
    // The requested string is echoed with JSON escaping.
    let got = r.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"a\"b\n"}}}"#).unwrap();
    assert!(got.ends_with(r#""requested":"a\"b\n"}}}"#), "{got}");
}

#[test]
fn m4_modern_tools_call_params_follow_l6() {
    let mut r = Rig::new();
    for p in [r#""name":1"#, r#""arguments":{}"#, r#""name":"echo","arguments":[]"#] {
        r.expect(
            &format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{{p},{M}}}}}"#),
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params"}}"#,
        );
    }
    r.expect(
        &format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{"cursor":"c",{M}}}}}"#),
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: invalid cursor"}}"#,
    );
    assert!(r.host.calls.is_empty());
}

#[test]
fn p1_rich_result_per_version() {
    // Legacy versions, then the modern one, for the same tool result.
    let expected = [
        (
            "2024-11-05",
            r#"{"content":[{"type":"text","text":"t","annotations":{"priority":0.5,"x-ext":null}}],"isError":false,"_meta":{"r":2}}"#,
        ),
        (
            "2025-06-18",
            r#"{"content":[{"type":"text","text":"t","annotations":{"priority":0.5,"lastModified":"2025-01-01","x-ext":null},"_meta":{"b":1}}],"isError":false,"structuredContent":{"ok":true},"_meta":{"r":2}}"#,
        ),
        (
            "2025-11-25",
            r#"{"content":[{"type":"text","text":"t","annotations":{"priority":0.5,"lastModified":"2025-01-01","x-ext":null},"_meta":{"b":1}}],"isError":false,"structuredContent":{"ok":true},"_meta":{"r":2}}"#,
        ),
    ];
    for (v, want) in expected {
        let mut r = Rig::new();
        r.init(v);
        r.expect(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"rich"}}"#,
            &format!(r#"{{"jsonrpc":"2.0","id":1,"result":{want}}}"#),
        );
    }
    let mut r = Rig::new();
    r.expect(
        &format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"rich",{M}}}}}"#),
        r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"t","annotations":{"priority":0.5,"lastModified":"2025-01-01","x-ext":null},"_meta":{"b":1}}],"isError":false,"structuredContent":{"ok":true},"_meta":{"r":2,"io.modelcontextprotocol/serverInfo":{"name":"mcplite","version":"9.9.9"}}}}"#,
    );
}

#[test]
fn m5_modern_requests_never_need_or_touch_legacy_state() {
    let mut r = Rig::new();
    let list = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{{M}}}}}"#);
    let before = r.send(&list).unwrap();
    assert_eq!(r.legacy, Default::default());
    r.init("2024-11-05");
    // The legacy handshake does not change modern answers.
    assert_eq!(r.send(&list).unwrap(), before);
    assert_eq!(r.legacy.version, Some(Version::V2024_11_05));
}

#[test]
fn w2_2_client_responses_owe_one_stderr_diagnostic() {
    use mcplite_engine::server::CLIENT_RESPONSE_DIAGNOSTIC;
    let mut r = Rig::new();
    r.silent(r#"{"jsonrpc":"2.0","id":5,"result":{}}"#);
    assert_eq!(r.diagnostic.take(), Some(CLIENT_RESPONSE_DIAGNOSTIC));
    // Taken once; other lines (blank, notification, request) owe none.
    assert_eq!(r.diagnostic.take(), None);
    r.silent(r#"{"jsonrpc":"2.0","id":6,"error":{"code":1,"message":"x"}}"#);
    r.silent("");
    assert_eq!(r.diagnostic.take(), None, "a later line clears an untaken diagnostic");
    for line in [r#"{"jsonrpc":"2.0","method":"x"}"#, r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#, "[]", "{"] {
        r.send(line);
        assert_eq!(r.diagnostic.take(), None, "{line}");
    }
}

/// A host whose tool panics (an engine-side bug stand-in).
struct Panicky;

impl Host for Panicky {
    fn tools(&mut self) -> Vec<ToolSpec> {
        vec![ToolSpec {
            name: "boom".into(),
            description: "Panics.".into(),
            input_schema: empty_schema(),
            annotations: vec![],
            output_schema: None,
        }]
    }
    fn call_tool(
        &mut self,
        _: usize,
        _: Option<&Map<String, Value>>,
        _: &CallContext,
    ) -> Result<ToolResult, ToolFailure> {
        panic!("engine bug stand-in");
    }
}

#[test]
fn l8_unexpected_failure_is_internal_error_for_that_request_only() {
    let mut host = Panicky;
    let server =
        Server::new(ServerInfo { name: "mcplite".into(), version: "9.9.9".into(), instructions: None }, &mut host);
    let mut legacy = LegacyState::default();
    let mut send = |line: &str| {
        let out = server.handle(&mut legacy, line.as_bytes(), &mut host).into_line();
        out.map(|b| String::from_utf8(b).unwrap())
    };
    assert!(send(&init_line("2025-11-25")).unwrap().contains("\"result\""));
    assert_eq!(
        send(r#"{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"boom"}}"#).as_deref(),
        Some(r#"{"jsonrpc":"2.0","id":"x","error":{"code":-32603,"message":"Internal error"}}"#)
    );
    // A notification that fails is still never answered.
    assert_eq!(send(r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"boom"}}"#), None);
    // The server keeps serving with its legacy state intact.
    assert_eq!(
        send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#).as_deref(),
        Some(
            r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"boom","description":"Panics.","inputSchema":{"type":"object","properties":{},"additionalProperties":false}}]}}"#
        )
    );
}
