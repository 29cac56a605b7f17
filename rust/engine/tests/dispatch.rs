//! Transcript tests of the dispatcher with a fake host: request lines in,
//! response lines out (RULES sections 3, 4, 5 and the worked examples L9, M6).

use mcplite_engine::host::{Block, CallContext, Content, Host, ToolFailure, ToolResult, ToolSpec};
use mcplite_engine::{LegacyState, Server, ServerInfo};
use serde_json::{Map, Value};

struct Fake {
    calls: Vec<(usize, Option<String>)>,
}

fn specs() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "add_numbers".into(),
            description: "Add two numbers and return the result.".into(),
            input_schema: r#"{"type":"object","properties":{"x":{"type":"number","description":"First number."},"y":{"type":"number","description":"Second number."}},"required":["x","y"],"additionalProperties":false}"#.into(),
            annotations: vec![("title".into(), "\"Add\"".into()), ("readOnlyHint".into(), "true".into())],
            output_schema: None,
        },
        ToolSpec {
            name: "mean_sd".into(),
            description: "Mean and SD.".into(),
            input_schema: r#"{"type":"object","properties":{"values":{"type":"array","items":{"type":"number"}},"na":{"type":"string","enum":["result","error"]}},"required":["values"],"additionalProperties":false}"#.into(),
            annotations: vec![],
            output_schema: Some(r#"{"type":"object","properties":{"mean":{"type":"number"},"sd":{"type":"number"}},"additionalProperties":false}"#.into()),
        },
        ToolSpec {
            name: "boom".into(),
            description: "Always fails.".into(),
            input_schema: r#"{"type":"object","properties":{},"additionalProperties":false}"#.into(),
            annotations: vec![],
            output_schema: None,
        },
        ToolSpec {
            name: "slow".into(),
            description: "Interrupted.".into(),
            input_schema: r#"{"type":"object","properties":{},"additionalProperties":false}"#.into(),
            annotations: vec![],
            output_schema: None,
        },
        ToolSpec {
            name: "audio".into(),
            description: "Returns audio.".into(),
            input_schema: r#"{"type":"object","properties":{},"additionalProperties":false}"#.into(),
            annotations: vec![],
            output_schema: None,
        },
    ]
}

impl Host for Fake {
    fn tools(&mut self) -> Vec<ToolSpec> {
        specs()
    }
    fn call_tool(
        &mut self,
        index: usize,
        arguments: Option<&Map<String, Value>>,
        _ctx: &CallContext,
    ) -> Result<ToolResult, ToolFailure> {
        self.calls.push((index, arguments.map(|a| serde_json::to_string(a).unwrap())));
        match index {
            0 => {
                let a = arguments.unwrap();
                let s = a["x"].as_f64().unwrap() + a["y"].as_f64().unwrap();
                Ok(ToolResult::text(format!("{s}")))
            }
            // `{"values":[], "na": true}`: the mean of nothing, written as
            // R writes NA by default (RULES J4.6), as a result or an error.
            1 if arguments.is_some_and(|a| a.contains_key("na")) => Ok(ToolResult {
                content: vec![Block::text("{\"mean\":\"NA\",\"sd\":\"NA\"}")],
                structured: Some("{\"mean\":\"NA\",\"sd\":\"NA\"}".into()),
                is_error: arguments.unwrap()["na"] == "error",
                meta: vec![],
                changes: vec![],
            }),
            1 => Ok(ToolResult {
                content: vec![Block::text("{\"mean\":2.3333,\"sd\":1.5275}")],
                structured: Some("{\"mean\":2.3333,\"sd\":1.5275}".into()),
                is_error: false,
                meta: vec![("k".into(), "1".into())],
                changes: vec![],
            }),
            2 => Err(ToolFailure::Error("{\"reason\":\"kaboom\"}".into())),
            3 => Err(ToolFailure::Interrupted),
            _ => Ok(ToolResult {
                content: vec![Block {
                    content: Content::Audio { data: "AAAA".into(), mime_type: "audio/wav".into() },
                    annotations: vec![],
                    meta: vec![],
                }],
                ..Default::default()
            }),
        }
    }
}

struct Rig {
    server: Server,
    /// The connection's legacy session, owned by the caller.
    legacy: LegacyState,
    host: Fake,
}

impl Rig {
    fn new(instructions: Option<&str>) -> Rig {
        let mut host = Fake { calls: vec![] };
        let server = Server::new(
            ServerInfo {
                name: "mcplite".into(),
                version: "X.Y.Z".into(),
                instructions: instructions.map(String::from),
            },
            &mut host,
        );
        Rig { server, legacy: LegacyState::default(), host }
    }
    fn send(&mut self, line: &str) -> Option<String> {
        let out = self.server.handle(&mut self.legacy, line.as_bytes(), &mut self.host).into_line();
        out.map(|b| String::from_utf8(b).expect("responses are UTF-8"))
    }
    fn expect(&mut self, line: &str, want: &str) {
        let got = self.send(line);
        assert_eq!(got.as_deref(), Some(want), "request: {line}");
    }
    fn silent(&mut self, line: &str) {
        assert_eq!(self.send(line), None, "request: {line}");
    }
    fn init(&mut self, version: &str) {
        let r = self.send(&format!(
            r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{version}","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#
        ));
        assert!(r.unwrap().contains("\"result\""));
    }
}

const M: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
const S: &str = r#""_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcplite","version":"X.Y.Z"}}"#;
const SUPPORTED: &str = r#"["2026-07-28","2025-11-25","2025-06-18","2024-11-05"]"#;

#[test]
fn worked_legacy_exchange_l9() {
    let mut r = Rig::new(Some("Arithmetic helpers."));
    r.expect(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"demo","version":"1.0"}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":false},"logging":{}},"serverInfo":{"name":"mcplite","version":"X.Y.Z"},"instructions":"Arithmetic helpers."}}"#,
    );
    r.silent(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    assert!(r.legacy.client_initialized);
    let list = r.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#).unwrap();
    assert!(list.starts_with(r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"add_numbers","description":"Add two numbers and return the result.","inputSchema":{"type":"object","properties":{"x":{"type":"number","description":"First number."},"y":{"type":"number","description":"Second number."}},"required":["x","y"],"additionalProperties":false},"annotations":{"title":"Add","readOnlyHint":true}},{"name":"mean_sd","#), "{list}");
    assert!(list.contains(r#""outputSchema":{"type":"object""#));
    r.expect(
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add_numbers","arguments":{"x":1.5,"y":2.25}}}"#,
        r#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"3.75"}],"isError":false}}"#,
    );
    r.expect(
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"mean_sd","arguments":{"values":[1,2,4]}}}"#,
        r#"{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"{\"mean\":2.3333,\"sd\":1.5275}"}],"isError":false,"structuredContent":{"mean":2.3333,"sd":1.5275},"_meta":{"k":1}}}"#,
    );
    r.expect(
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"nope"}}"#,
        r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"Invalid params: unknown tool"}}"#,
    );
    r.expect(
        r#"{"jsonrpc":"2.0","id":6,"method":"resources/list"}"#,
        r#"{"jsonrpc":"2.0","id":6,"error":{"code":-32601,"message":"Method not found"}}"#,
    );
}

#[test]
fn legacy_2024_omits_annotations_structured_and_rejects_audio() {
    let mut r = Rig::new(None);
    r.init("2024-11-05");
    let list = r.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#).unwrap();
    assert!(!list.contains("annotations"));
    assert!(!list.contains("outputSchema"));
    r.expect(
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"mean_sd","arguments":{"values":[1]}}}"#,
        r#"{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"{\"mean\":2.3333,\"sd\":1.5275}"}],"isError":false,"_meta":{"k":1}}}"#,
    );
    let a = r.send(r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"audio"}}"#).unwrap();
    assert!(a.contains("2024-11-05") && a.contains("audio") && a.ends_with(r#""isError":true}}"#), "{a}");
    // The same tool works on 2025-06-18.
    r.init("2025-06-18");
    let a = r.send(r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"audio"}}"#).unwrap();
    assert!(a.contains(r#"{"type":"audio","data":"AAAA","mimeType":"audio/wav"}"#), "{a}");
}

#[test]
fn negotiation() {
    for (asked, got) in [
        ("2025-11-25", "2025-11-25"),
        ("2025-06-18", "2025-06-18"),
        ("2024-11-05", "2024-11-05"),
        ("2025-03-26", "2025-11-25"),
        ("2026-07-28", "2025-11-25"),
        ("9999-01-01", "2025-11-25"),
    ] {
        let mut r = Rig::new(None);
        let out = r
            .send(&format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"{asked}","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#
            ))
            .unwrap();
        assert!(out.contains(&format!(r#""protocolVersion":"{got}""#)), "{asked} -> {out}");
        assert!(!out.contains("instructions"));
    }
}

#[test]
fn initialize_params_are_checked() {
    let bad = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":[]}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"","capabilities":{},"clientInfo":{"name":"a","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","clientInfo":{"name":"a","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":[],"clientInfo":{"name":"a","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"a"}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":1,"version":"1"}}}"#,
    ];
    for line in bad {
        let mut r = Rig::new(None);
        r.expect(line, r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params"}}"#);
        assert!(!r.legacy.initialized, "state untouched for {line}");
    }
}

#[test]
fn legacy_dispatch_order() {
    let mut r = Rig::new(None);
    // L2.1: notifications/initialized with an id.
    r.expect(
        r#"{"jsonrpc":"2.0","id":9,"method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":9,"error":{"code":-32600,"message":"Invalid Request"}}"#,
    );
    // L2.2: notifications do nothing, even tools/call; initialized before initialize is ignored.
    r.silent(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    assert!(!r.legacy.client_initialized);
    r.silent(r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"add_numbers","arguments":{"x":1,"y":2}}}"#);
    r.silent(r#"{"jsonrpc":"2.0","method":"whatever"}"#);
    assert!(r.host.calls.is_empty());
    // L2.4: ping before initialize, with any params.
    r.expect(r#"{"jsonrpc":"2.0","id":"p","method":"ping","params":[1]}"#, r#"{"jsonrpc":"2.0","id":"p","result":{}}"#);
    // L2.5
    r.expect(
        r#"{"jsonrpc":"2.0","id":2,"method":"server/discover"}"#,
        r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Invalid params: missing _meta io.modelcontextprotocol/protocolVersion"}}"#,
    );
    // L2.6: before initialize.
    for m in ["tools/list", "tools/call", "resources/list", "prompts/get"] {
        r.expect(
            &format!(r#"{{"jsonrpc":"2.0","id":3,"method":"{m}"}}"#),
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"Invalid Request: server not initialized"}}"#,
        );
    }
    r.init("2025-11-25");
    r.expect(
        r#"{"jsonrpc":"2.0","id":4,"method":"prompts/list"}"#,
        r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"Method not found"}}"#,
    );
}

#[test]
fn tools_list_params() {
    let mut r = Rig::new(None);
    r.init("2025-11-25");
    for ok in [
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":null}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":null,"_meta":{},"other":1}}"#,
    ] {
        assert!(r.send(ok).unwrap().contains("\"tools\":["), "{ok}");
    }
    r.expect(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"abc"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: invalid cursor"}}"#,
    );
    for bad in [
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":[]}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":1}}"#,
    ] {
        r.expect(bad, r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params"}}"#);
    }
}

#[test]
fn tools_call_params_and_containment() {
    let mut r = Rig::new(None);
    r.init("2025-06-18");
    let invalid = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params"}}"#;
    for bad in [
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":1}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add_numbers","arguments":[1,2]}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add_numbers","arguments":{"x":"a\u0000b"}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add_numbers","arguments":{"x\u0000":1}}}"#,
    ] {
        r.expect(bad, invalid);
    }
    r.expect(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":""}}"#,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: unknown tool"}}"#,
    );
    assert!(r.host.calls.is_empty());
    // Tool error text is exactly the message; stays parseable JSON.
    r.expect(
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"boom","arguments":null}}"#,
        r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"{\"reason\":\"kaboom\"}"}],"isError":true}}"#,
    );
    r.expect(
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow"}}"#,
        r#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"The tool call was interrupted."}],"isError":true}}"#,
    );
    // _meta and task never reach the tool; argument order is kept.
    r.send(r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"add_numbers","arguments":{"y":2,"x":1},"_meta":{"progressToken":1},"task":{}}}"#);
    assert_eq!(r.host.calls.last().unwrap().1.as_deref(), Some(r#"{"y":2,"x":1}"#));
}

#[test]
fn j4_6_structured_content_must_match_the_output_schema() {
    let mut r = Rig::new(None);
    r.init("2025-11-25");
    let call = |id: u32, na: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"mean_sd","arguments":{{"values":[],"na":"{na}"}}}}}}"#
        )
    };
    let text = "The result of tool `mean_sd` does not match its output schema: at `/mean`, \\\"NA\\\" is not of type \\\"number\\\", so the result was not sent. R writes a missing number (NA, NaN, Inf) as a string by default: set options(mcplite.json.na = \\\"null\\\") to write null (a nullable type such as type_number(nullable = TRUE) accepts it), or return NULL for the value.";
    for id in [5, 6] {
        r.expect(
            &call(id, "result"),
            &format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"{text}"}}],"isError":true}}}}"#),
        );
    }
    // A result marked as an error is sent as it is: its structured content
    // is not the tool's output.
    r.expect(
        &call(7, "error"),
        r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"{\"mean\":\"NA\",\"sd\":\"NA\"}"}],"isError":true,"structuredContent":{"mean":"NA","sd":"NA"}}}"#,
    );
    // A conforming result, and a tool without a schema, are unchanged.
    let ok = r.send(
        r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"mean_sd","arguments":{"values":[1]}}}"#,
    );
    assert!(ok.unwrap().contains(r#""isError":false,"structuredContent":{"mean":2.3333,"sd":1.5275}"#));
}

#[test]
fn framing_and_envelope_errors() {
    let mut r = Rig::new(None);
    let parse = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#;
    let invalid_null = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}"#;
    r.silent("");
    r.silent("   \t");
    r.expect("{not json", parse);
    r.expect(r#"{"jsonrpc":"2.0","id":1,"method":"ping"} trailing"#, parse);
    r.expect("[]", invalid_null);
    r.expect(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#, invalid_null);
    r.expect("42", invalid_null);
    r.expect(r#"{"method":"ping"}"#, invalid_null);
    r.expect(
        r#"{"jsonrpc":"2.0","id":73}"#,
        r#"{"jsonrpc":"2.0","id":73,"error":{"code":-32600,"message":"Invalid Request"}}"#,
    );
    for bad_id in ["null", "true", "1.5", "1.0", "1e2", "[1]", "{}"] {
        r.expect(&format!(r#"{{"jsonrpc":"2.0","id":{bad_id},"method":"ping"}}"#), invalid_null);
    }
    r.silent(r#"{"jsonrpc":"2.0","id":5,"result":{}}"#);
    r.silent(r#"{"jsonrpc":"2.0","id":5,"error":{"code":1,"message":"x"}}"#);
    for id in [r#""a\u0041""#, "12345678901234567890", "-0", r#""""#] {
        r.expect(
            &format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#),
            &format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#),
        );
    }
    let bytes = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"x\":\"\xff\"}";
    let out = r.server.handle(&mut r.legacy, bytes, &mut r.host).into_line().unwrap();
    assert_eq!(String::from_utf8(out).unwrap(), parse);
}

#[test]
fn worked_modern_exchange_m6() {
    let mut r = Rig::new(Some("Arithmetic helpers."));
    r.expect(
        r#"{"jsonrpc":"2.0","id":"a","method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"demo","version":"1.0"}}}}"#,
        &format!(r#"{{"jsonrpc":"2.0","id":"a","result":{{"resultType":"complete","supportedVersions":{SUPPORTED},"capabilities":{{"tools":{{"listChanged":false}},"logging":{{}}}},"instructions":"Arithmetic helpers.","ttlMs":300000,"cacheScope":"public",{S}}}}}"#),
    );
    r.expect(
        &format!(r#"{{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{{"name":"add_numbers","arguments":{{"x":2,"y":3}},{M}}}}}"#),
        &format!(r#"{{"jsonrpc":"2.0","id":"b","result":{{"resultType":"complete","content":[{{"type":"text","text":"5"}}],"isError":false,{S}}}}}"#),
    );
    let list = r.send(&format!(r#"{{"jsonrpc":"2.0","id":"c","method":"tools/list","params":{{{M}}}}}"#)).unwrap();
    assert!(list
        .starts_with(r#"{"jsonrpc":"2.0","id":"c","result":{"resultType":"complete","tools":[{"name":"add_numbers""#));
    assert!(list.ends_with(&format!(r#"],"ttlMs":300000,"cacheScope":"public",{S}}}}}"#)), "{list}");
    r.expect(
        &format!(r#"{{"jsonrpc":"2.0","id":"d","method":"ping","params":{{{M}}}}}"#),
        r#"{"jsonrpc":"2.0","id":"d","error":{"code":-32601,"message":"Method not found"}}"#,
    );
    r.expect(
        r#"{"jsonrpc":"2.0","id":"e","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
        &format!(r#"{{"jsonrpc":"2.0","id":"e","error":{{"code":-32022,"message":"Unsupported protocol version","data":{{"supported":{SUPPORTED},"requested":"2025-11-25"}}}}}}"#),
    );
    r.expect(
        r#"{"jsonrpc":"2.0","id":"f","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
        r#"{"jsonrpc":"2.0","id":"f","error":{"code":-32602,"message":"Invalid params: _meta io.modelcontextprotocol/clientCapabilities must be an object"}}"#,
    );
    r.expect(
        r#"{"jsonrpc":"2.0","id":"g","method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","id":"g","error":{"code":-32600,"message":"Invalid Request: server not initialized"}}"#,
    );
    assert!(!r.legacy.initialized);
}

#[test]
fn modern_check_order_m2() {
    let mut r = Rig::new(None);
    // 1. Method first, even with a broken version claim.
    for m in ["ping", "initialize", "resources/list", "notifications/initialized"] {
        r.expect(
            &format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{m}","params":{{"_meta":{{"io.modelcontextprotocol/protocolVersion":5}}}}}}"#),
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}"#,
        );
    }
    // 2. Version type.
    r.expect(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":null}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: _meta io.modelcontextprotocol/protocolVersion must be a string"}}"#,
    );
    // 3. Version value before capabilities.
    r.expect(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2024-11-05"}}}"#,
        &format!(r#"{{"jsonrpc":"2.0","id":1,"error":{{"code":-32022,"message":"Unsupported protocol version","data":{{"supported":{SUPPORTED},"requested":"2024-11-05"}}}}}}"#),
    );
    // 4. Capabilities must be an object.
    r.expect(
        r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":[]}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: _meta io.modelcontextprotocol/clientCapabilities must be an object"}}"#,
    );
    // 5. clientInfo malformed, logLevel, traceparent, unknown keys: fine.
    let ok = r.send(r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":7,"io.modelcontextprotocol/logLevel":"debug","progressToken":1,"traceparent":"bogus","x":{}}}}"#).unwrap();
    assert!(ok.contains(r#""resultType":"complete""#));
    assert!(!ok.contains("instructions"));
    // A _meta without the version key is not a claim: legacy rules.
    r.expect(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"Invalid Request: server not initialized"}}"#,
    );
    // Claimed notifications are never answered.
    r.silent(&format!(r#"{{"jsonrpc":"2.0","method":"tools/call","params":{{"name":"add_numbers",{M}}}}}"#));
    assert!(r.host.calls.is_empty());
}

#[test]
fn modern_results_have_resulttype_and_server_meta() {
    let mut r = Rig::new(None);
    let err =
        r.send(&format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"boom",{M}}}}}"#)).unwrap();
    assert_eq!(
        err,
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"resultType":"complete","content":[{{"type":"text","text":"{{\"reason\":\"kaboom\"}}"}}],"isError":true,{S}}}}}"#
        )
    );
    let sc = r.send(&format!(r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"mean_sd","arguments":{{"values":[]}},{M}}}}}"#)).unwrap();
    assert!(sc.ends_with(r#""structuredContent":{"mean":2.3333,"sd":1.5275},"_meta":{"k":1,"io.modelcontextprotocol/serverInfo":{"name":"mcplite","version":"X.Y.Z"}}}}"#), "{sc}");
    assert!(!sc.contains("ttlMs"));
    let unknown =
        r.send(&format!(r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"zz",{M}}}}}"#)).unwrap();
    assert_eq!(unknown, r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Invalid params: unknown tool"}}"#);
}

#[test]
fn eras_interleave_without_sharing_state() {
    let mut r = Rig::new(None);
    r.init("2024-11-05");
    let modern = r.send(&format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{{M}}}}}"#)).unwrap();
    // Modern sees annotations and output schemas regardless of the legacy version.
    assert!(modern.contains("annotations") && modern.contains("outputSchema"));
    assert_eq!(r.legacy.version, Some(mcplite_engine::Version::V2024_11_05));
    let legacy = r.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#).unwrap();
    assert!(!legacy.contains("annotations") && !legacy.contains("resultType") && !legacy.contains("ttlMs"));
    // A claimed initialize is a modern request: -32601, legacy state kept.
    r.expect(
        &format!(r#"{{"jsonrpc":"2.0","id":3,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{{}},"clientInfo":{{"name":"a","version":"1"}},{M}}}}}"#),
        r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"Method not found"}}"#,
    );
    assert_eq!(r.legacy.version, Some(mcplite_engine::Version::V2024_11_05));
    let call = r.send(r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"add_numbers","arguments":{"x":1,"y":1}}}"#).unwrap();
    assert_eq!(call, r#"{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"2"}],"isError":false}}"#);
    r.expect(r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#, r#"{"jsonrpc":"2.0","id":5,"result":{}}"#);
}

#[test]
fn every_response_is_one_line_of_valid_json() {
    let mut r = Rig::new(Some("line1\nline2 </script>"));
    let lines = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#.to_string(),
        format!(r#"{{"jsonrpc":"2.0","id":2,"method":"server/discover","params":{{{M}}}}}"#),
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"boom"}}"#.to_string(),
    ];
    for l in &lines {
        let out = r.send(l).unwrap();
        assert!(!out.contains('\n'));
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["jsonrpc"], "2.0");
    }
}

#[test]
fn l6_7_arguments_that_do_not_match_the_input_schema_never_reach_the_host() {
    let mut r = Rig::new(None);
    r.init("2025-11-25");
    let refused = |id: u32, text: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"{text}"}}],"isError":true}}}}"#
        )
    };
    // An undeclared member (the way a function-name argument left out of
    // the schema would be smuggled in), a missing one, a wrong type.
    r.expect(
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add_numbers","arguments":{"x":1,"y":2,"FUN":"system"}}}"#,
        &refused(2, "Invalid arguments for tool `add_numbers`: unexpected argument `FUN` (the tool takes `x`, `y`). The tool was not run."),
    );
    r.expect(
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add_numbers","arguments":{"x":1}}}"#,
        &refused(3, "Invalid arguments for tool `add_numbers`: missing required argument `y`. The tool was not run."),
    );
    r.expect(
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"add_numbers"}}"#,
        &refused(4, "Invalid arguments for tool `add_numbers`: missing required argument `x`; missing required argument `y`. The tool was not run."),
    );
    r.expect(
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"mean_sd","arguments":{"values":[1,"2"],"na":"system"}}}"#,
        &refused(5, r#"Invalid arguments for tool `mean_sd`: `values/1` must be of type \"number\", got \"2\"; `na` must be one of \"result\", \"error\", got \"system\". The tool was not run."#),
    );
    r.expect(
        r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"boom","arguments":{"a":1}}}"#,
        &refused(6, "Invalid arguments for tool `boom`: unexpected argument `a` (the tool takes no arguments). The tool was not run."),
    );
    assert!(r.host.calls.is_empty(), "the host was called: {:?}", r.host.calls);
    // A null for an optional argument is dropped; the call runs.
    r.expect(
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"mean_sd","arguments":{"values":[1],"na":null}}}"#,
        r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"{\"mean\":2.3333,\"sd\":1.5275}"}],"isError":false,"structuredContent":{"mean":2.3333,"sd":1.5275},"_meta":{"k":1}}}"#,
    );
    assert_eq!(r.host.calls, vec![(1, Some(r#"{"values":[1]}"#.to_owned()))]);
    // The modern era answers the same way, with its own members.
    let m = r
        .send(&format!(
            r#"{{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{{"name":"add_numbers","arguments":{{"x":"1","y":2}},{M}}}}}"#
        ))
        .unwrap();
    assert_eq!(
        m,
        format!(
            r#"{{"jsonrpc":"2.0","id":8,"result":{{"resultType":"complete","content":[{{"type":"text","text":"Invalid arguments for tool `add_numbers`: `x` must be of type \"number\", got \"1\". The tool was not run."}}],"isError":true,{S}}}}}"#
        )
    );
    assert_eq!(r.host.calls.len(), 1);
}

/// RULES section 17: a server with resources lists and reads them, fills
/// templates and accepts legacy subscriptions, without the host.
#[test]
fn u_resources_in_both_eras() {
    use mcplite_engine::host::{PromptArgument, ResourceBody, ResourceSpec, Resources, TemplateSpec};
    use mcplite_engine::uri_template::UriTemplate;
    let mut r = Rig::new(None);
    let info = ServerInfo { name: "mcplite".into(), version: "X.Y.Z".into(), instructions: None };
    let resources = Resources {
        resources: vec![ResourceSpec {
            uri: "test://static-text".into(),
            name: "static-text".into(),
            title: None,
            description: Some("Some text.".into()),
            mime_type: "text/plain".into(),
            size: 5,
            body: ResourceBody::Text("hello".into()),
        }],
        templates: vec![TemplateSpec {
            template: UriTemplate::parse("test://template/{id}/data").unwrap(),
            uri_template: "test://template/{id}/data".into(),
            name: "data".into(),
            title: None,
            description: None,
            mime_type: "text/plain".into(),
            body: ResourceBody::Text("id={{id}}".into()),
            variables: vec![PromptArgument {
                name: "id".into(),
                description: None,
                required: true,
                values: vec!["123".into()],
            }],
        }],
    };
    r.server = Server::with_tools(info, specs()).with_catalog(Vec::new(), resources);
    let init = r
        .send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#)
        .unwrap();
    assert!(init.contains(r#""resources":{"subscribe":true,"listChanged":false},"completions":{}}"#), "{init}");
    assert!(!init.contains("\"prompts\""));
    r.expect(
        r#"{"jsonrpc":"2.0","id":1,"method":"resources/list"}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{"resources":[{"uri":"test://static-text","name":"static-text","description":"Some text.","mimeType":"text/plain","size":5}]}}"#,
    );
    r.expect(
        r#"{"jsonrpc":"2.0","id":2,"method":"resources/templates/list","params":{"cursor":null}}"#,
        r#"{"jsonrpc":"2.0","id":2,"result":{"resourceTemplates":[{"uriTemplate":"test://template/{id}/data","name":"data","mimeType":"text/plain"}]}}"#,
    );
    r.expect(
        r#"{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"test://template/123/data"}}"#,
        r#"{"jsonrpc":"2.0","id":3,"result":{"contents":[{"uri":"test://template/123/data","mimeType":"text/plain","text":"id=123"}]}}"#,
    );
    r.expect(
        r#"{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"test://nope"}}"#,
        r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32002,"message":"Resource not found","data":{"uri":"test://nope"}}}"#,
    );
    r.expect(
        r#"{"jsonrpc":"2.0","id":5,"method":"resources/subscribe","params":{"uri":"test://static-text"}}"#,
        r#"{"jsonrpc":"2.0","id":5,"result":{}}"#,
    );
    r.expect(
        r#"{"jsonrpc":"2.0","id":6,"method":"resources/unsubscribe","params":{"uri":"test://template/1/data"}}"#,
        r#"{"jsonrpc":"2.0","id":6,"result":{}}"#,
    );
    r.expect(
        r#"{"jsonrpc":"2.0","id":7,"method":"resources/list","params":{"cursor":"x"}}"#,
        r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"Invalid params: invalid cursor"}}"#,
    );
    r.expect(
        r#"{"jsonrpc":"2.0","id":8,"method":"resources/read","params":{"uri":7}}"#,
        r#"{"jsonrpc":"2.0","id":8,"error":{"code":-32602,"message":"Invalid params: the request needs a `uri` string"}}"#,
    );
    r.expect(
        r#"{"jsonrpc":"2.0","id":9,"method":"completion/complete","params":{"ref":{"type":"ref/resource","uri":"test://template/{id}/data"},"argument":{"name":"id","value":"1"}}}"#,
        r#"{"jsonrpc":"2.0","id":9,"result":{"completion":{"values":["123"],"total":1,"hasMore":false}}}"#,
    );
    r.expect(
        r#"{"jsonrpc":"2.0","id":10,"method":"prompts/list"}"#,
        r#"{"jsonrpc":"2.0","id":10,"error":{"code":-32601,"message":"Method not found"}}"#,
    );
    // 2026-07-28: the same capability (subscribing is subscriptions/listen;
    // the tools may not change the resources, so no list changes), results
    // complete and cacheable, a URI not found is -32602, no
    // resources/subscribe.
    let d = r.send(&format!(r#"{{"jsonrpc":"2.0","id":11,"method":"server/discover","params":{{{M}}}}}"#)).unwrap();
    assert!(d.contains(r#""resources":{"subscribe":true,"listChanged":false},"completions":{}"#), "{d}");
    r.expect(
        &format!(r#"{{"jsonrpc":"2.0","id":12,"method":"resources/read","params":{{"uri":"test://static-text",{M}}}}}"#),
        &format!(
            r#"{{"jsonrpc":"2.0","id":12,"result":{{"resultType":"complete","contents":[{{"uri":"test://static-text","mimeType":"text/plain","text":"hello"}}],"ttlMs":300000,"cacheScope":"public",{S}}}}}"#
        ),
    );
    r.expect(
        &format!(r#"{{"jsonrpc":"2.0","id":13,"method":"resources/read","params":{{"uri":"test://x",{M}}}}}"#),
        r#"{"jsonrpc":"2.0","id":13,"error":{"code":-32602,"message":"Resource not found","data":{"uri":"test://x"}}}"#,
    );
    r.expect(
        &format!(
            r#"{{"jsonrpc":"2.0","id":14,"method":"resources/subscribe","params":{{"uri":"test://static-text",{M}}}}}"#
        ),
        r#"{"jsonrpc":"2.0","id":14,"error":{"code":-32601,"message":"Method not found"}}"#,
    );
    assert!(r.host.calls.is_empty());
}

/// The names (or URIs) on each page of `method` when every `nextCursor` is
/// followed, and the cursors seen.
fn follow_pages(r: &mut Rig, method: &str, key: &str, id_key: &str, meta: &str) -> (Vec<Vec<String>>, Vec<String>) {
    let (mut pages, mut cursors) = (Vec::new(), Vec::new());
    let mut cursor: Option<String> = None;
    loop {
        let c = cursor.as_ref().map_or(String::new(), |c| format!(r#","cursor":"{c}""#));
        let line =
            r.send(&format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{"_meta":{{{meta}}}{c}}}}}"#));
        let v: Value = serde_json::from_str(&line.unwrap()).unwrap();
        let result = &v["result"];
        pages.push(result[key].as_array().unwrap().iter().map(|i| i[id_key].as_str().unwrap().to_string()).collect());
        match result.get("nextCursor") {
            Some(Value::String(next)) => {
                cursors.push(next.clone());
                cursor = Some(next.clone());
            }
            None => return (pages, cursors),
            Some(other) => panic!("nextCursor {other}"),
        }
    }
}

#[test]
fn l5_2_listings_come_in_pages_of_the_page_size() {
    use mcplite_engine::host::{ResourceBody, ResourceSpec, Resources};
    use std::num::NonZeroUsize;
    let resource = |i: usize| ResourceSpec {
        uri: format!("test://r{i}"),
        name: format!("r{i}"),
        title: None,
        description: None,
        mime_type: "text/plain".into(),
        size: 1,
        body: ResourceBody::Text("x".into()),
    };
    let resources = Resources { resources: (0..5).map(resource).collect(), templates: vec![] };
    let info = || ServerInfo { name: "mcplite".into(), version: "X.Y.Z".into(), instructions: None };
    let mut r = Rig::new(None);
    r.server = Server::with_tools(info(), specs())
        .with_page_size(NonZeroUsize::new(2))
        .with_catalog(Vec::new(), resources.clone());
    let modern =
        r#""io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}"#;
    // Both eras, the same pages: every item once, in order, at most two a page.
    for meta in [modern, ""] {
        if meta.is_empty() {
            r.init("2025-11-25");
        }
        let (pages, cursors) = follow_pages(&mut r, "tools/list", "tools", "name", meta);
        assert_eq!(pages, [vec!["add_numbers", "mean_sd"], vec!["boom", "slow"], vec!["audio"]], "{meta}");
        assert_eq!(cursors, ["page-1", "page-2"]);
        let (pages, _) = follow_pages(&mut r, "resources/list", "resources", "uri", meta);
        assert_eq!(pages, [vec!["test://r0", "test://r1"], vec!["test://r2", "test://r3"], vec!["test://r4"]]);
    }
    // A cursor this server did not give is refused, a null one is the first page.
    for bad in [r#""page-3""#, r#""page-0""#, r#""abc""#, "7"] {
        r.expect(
            &format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{"cursor":{bad}}}}}"#),
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: invalid cursor"}}"#,
        );
        r.expect(
            &format!(r#"{{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{{"cursor":{bad}}}}}"#),
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: invalid cursor"}}"#,
        );
    }
    r.expect(
        r#"{"jsonrpc":"2.0","id":1,"method":"resources/templates/list","params":{"cursor":null}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{"resourceTemplates":[]}}"#,
    );
    // Without a page size: one page, no cursor.
    r.server = Server::with_tools(info(), specs()).with_catalog(Vec::new(), resources);
    let (pages, cursors) = follow_pages(&mut r, "tools/list", "tools", "name", "");
    assert_eq!((pages.len(), pages[0].len(), cursors.len()), (1, 5, 0));
}
