//! Shared by the engine's integration tests and the cargo-fuzz targets
//! (`fuzz/` includes this file by path): a fake [`Host`] whose tools are
//! driven by their arguments, and an independent oracle that says what the
//! server must answer to a line (RULES sections 3–6) and checks what it did
//! answer.
//!
//! The oracle parses lines with `serde_json::Value` and re-implements the
//! dispatch rules from the spec text; it never calls the engine's own
//! classification or projection code.

#![allow(dead_code)]

use std::collections::HashMap;

use mcplite_engine::host::{Block, CallContext, Content, Host, ToolFailure, ToolResult, ToolSpec};
use mcplite_engine::{LegacyState, Server, ServerInfo, Version};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// Nesting limit of the engine (message::MAX_DEPTH; RULES W1.3 asks >= 128).
pub const MAX_DEPTH: usize = 512;
/// How the engine's errors name its nesting limit (W1.4, L8: "names the
/// limit").
pub const DEPTH_LIMIT_DETAIL: &str = "nesting deeper than the limit of 512 levels";
pub const MODERN: &str = "2026-07-28";
pub const LEGACY: [&str; 3] = ["2024-11-05", "2025-06-18", "2025-11-25"];
pub const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub const META_CAPS: &str = "io.modelcontextprotocol/clientCapabilities";
pub const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";
pub const SERVER_NAME: &str = "mcplite";
pub const SERVER_VERSION: &str = "0.0.0-fuzz";
pub const INSTRUCTIONS: &str = "Line one\nline \"two\" </script> \u{2028} é";

/// Names of the fake tools, in registry order.
pub const TOOL_NAMES: [&str; 6] = ["echo", "fail", "interrupt", "blocks", "structured", "big.name-1_x"];

pub fn version_of(s: &str) -> Option<Version> {
    Version::ALL.iter().copied().find(|v| v.as_str() == s)
}

/// Compact JSON text of a value (the host contract: fragments are valid,
/// compact JSON).
pub fn js(v: &Value) -> String {
    serde_json::to_string(v).unwrap()
}

/// The fake registry: a mix of annotations and output schemas.
pub fn tool_specs() -> Vec<ToolSpec> {
    let input = r#"{"type":"object","properties":{},"additionalProperties":true}"#.to_string();
    vec![
        ToolSpec {
            name: "echo".into(),
            description: "Echo the arguments as JSON text.\nSecond line \"quoted\".".into(),
            input_schema: input.clone(),
            annotations: vec![("title".into(), "\"Echo\"".into()), ("readOnlyHint".into(), "true".into())],
            output_schema: Some(r#"{"type":"object"}"#.into()),
        },
        ToolSpec {
            name: "fail".into(),
            description: "Always fails.".into(),
            input_schema: input.clone(),
            annotations: vec![],
            output_schema: None,
        },
        ToolSpec {
            name: "interrupt".into(),
            description: "Reports an interrupt.".into(),
            input_schema: input.clone(),
            annotations: vec![("destructiveHint".into(), "false".into())],
            output_schema: None,
        },
        ToolSpec {
            name: "blocks".into(),
            description: "Returns blocks of every type.".into(),
            input_schema: input.clone(),
            annotations: vec![],
            output_schema: Some(r#"{"type":"array","items":{}}"#.into()),
        },
        ToolSpec {
            name: "structured".into(),
            description: "Returns its `value` argument as structured content.".into(),
            input_schema: input.clone(),
            annotations: vec![("openWorldHint".into(), "false".into())],
            output_schema: Some(r#"{"type":"object","properties":{"a":{"type":"number"}}}"#.into()),
        },
        ToolSpec {
            name: "big.name-1_x".into(),
            description: "\u{0}\u{1f}\u{7f} odd description".into(),
            input_schema: r#"{"type":"object"}"#.into(),
            annotations: vec![],
            output_schema: None,
        },
    ]
}

fn as_text(v: Option<&Value>, default: &str) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(other) => js(other),
        None => default.to_string(),
    }
}

fn members_of(v: Option<&Value>, drop: &[&str]) -> Vec<(String, String)> {
    match v {
        Some(Value::Object(m)) => {
            m.iter().filter(|(k, _)| !drop.contains(&k.as_str())).map(|(k, v)| (k.clone(), js(v))).collect()
        }
        _ => vec![],
    }
}

/// Build a tool result from arguments (used by the `blocks` tool and by the
/// fuzzers): `kinds` (array of type names), `text`, `annotations`, `meta`,
/// `block_meta`, `is_error`, `structured`.
pub fn result_from_args(args: &Map<String, Value>) -> ToolResult {
    let text = as_text(args.get("text"), "t");
    let mut annotations = members_of(args.get("annotations"), &["lastModified"]);
    if let Some(Value::String(lm)) = args.get("last_modified") {
        annotations.retain(|(k, _)| k != "last_modified");
        annotations.push(("last_modified".into(), js(&Value::String(lm.clone()))));
    }
    let block_meta = members_of(args.get("block_meta"), &[]);
    let kinds: Vec<String> = match args.get("kinds") {
        Some(Value::Array(a)) => a.iter().map(|k| as_text(Some(k), "")).collect(),
        _ => vec!["text".into(), "image".into(), "audio".into(), "resource_link".into(), "resource".into()],
    };
    let mut content = Vec::new();
    for (i, k) in kinds.iter().enumerate() {
        let c = match k.as_str() {
            "image" => Content::Image { data: text.clone(), mime_type: "image/png".into() },
            "audio" => Content::Audio { data: text.clone(), mime_type: "audio/wav".into() },
            "resource_link" => Content::ResourceLink {
                uri: format!("file:///{text}"),
                name: text.clone(),
                title: if i % 2 == 0 { Some(text.clone()) } else { None },
                description: if i % 3 == 0 { None } else { Some(text.clone()) },
                mime_type: Some("text/plain".into()),
                size: if i % 2 == 1 { Some(format!("{}", text.len())) } else { None },
            },
            "resource" => Content::Resource {
                uri: "mem:1".into(),
                mime_type: if i % 2 == 0 { None } else { Some("text/plain".into()) },
                text: if i % 2 == 0 { Some(text.clone()) } else { None },
                blob: if i % 2 == 0 { None } else { Some("QUJD".into()) },
            },
            _ => Content::Text { text: text.clone() },
        };
        content.push(Block { content: c, annotations: annotations.clone(), meta: block_meta.clone() });
        if content.len() >= 64 {
            break;
        }
    }
    let structured = match args.get("structured") {
        Some(v) if !v.is_null() => Some(js(v)),
        _ => None,
    };
    ToolResult {
        content,
        structured,
        is_error: matches!(args.get("is_error"), Some(Value::Bool(true))),
        meta: members_of(args.get("meta"), &[]),
    }
}

/// What one host call saw and returned.
#[derive(Debug, Clone)]
pub struct CallRecord {
    pub index: usize,
    pub arguments: Option<Map<String, Value>>,
    pub outcome: Result<ToolResult, ToolFailure>,
}

/// A host whose tools do what their arguments say.
#[derive(Default)]
pub struct FakeHost {
    pub calls: Vec<CallRecord>,
    pub tools_asked: usize,
}

impl Host for FakeHost {
    fn tools(&mut self) -> Vec<ToolSpec> {
        self.tools_asked += 1;
        tool_specs()
    }

    fn call_tool(
        &mut self,
        index: usize,
        arguments: Option<&Map<String, Value>>,
        _ctx: &CallContext,
    ) -> Result<ToolResult, ToolFailure> {
        let empty = Map::new();
        let args = arguments.unwrap_or(&empty);
        let outcome = match TOOL_NAMES[index] {
            "echo" => {
                let text = arguments.map(|a| js(&Value::Object(a.clone()))).unwrap_or_else(|| "null".into());
                Ok(ToolResult { structured: Some(text.clone()), ..ToolResult::text(text) })
            }
            "fail" => Err(ToolFailure::Error(as_text(args.get("message"), "boom: \"quoted\"\nsecond line\t\u{1}"))),
            "interrupt" => Err(ToolFailure::Interrupted),
            "blocks" => Ok(result_from_args(args)),
            "structured" => {
                let v = args.get("value").cloned().unwrap_or(Value::Null);
                Ok(ToolResult {
                    structured: if v.is_null() { None } else { Some(js(&v)) },
                    meta: members_of(args.get("meta"), &[]),
                    ..ToolResult::text(js(&v))
                })
            }
            _ => Ok(ToolResult::text("")),
        };
        self.calls.push(CallRecord { index, arguments: arguments.cloned(), outcome: outcome.clone() });
        outcome
    }
}

pub fn server_info() -> ServerInfo {
    ServerInfo { name: SERVER_NAME.into(), version: SERVER_VERSION.into(), instructions: Some(INSTRUCTIONS.into()) }
}

pub fn new_server(host: &mut FakeHost) -> Server {
    Server::new(server_info(), host)
}

fn server_info_value() -> Value {
    serde_json::json!({"name": SERVER_NAME, "version": SERVER_VERSION})
}

// ---------------------------------------------------------------------------
// Independent oracle

/// Top-level members with their raw text, in order, duplicates included;
/// `None` when the text is not an object.
fn members_in_order(text: &str) -> Option<Vec<(String, &RawValue)>> {
    struct Members<'a>(Vec<(String, &'a RawValue)>);
    impl<'de> serde::Deserialize<'de> for Members<'de> {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> serde::de::Visitor<'de> for V {
                type Value = Members<'de>;
                fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    f.write_str("an object")
                }
                fn visit_map<A: serde::de::MapAccess<'de>>(self, mut m: A) -> Result<Members<'de>, A::Error> {
                    let mut out = vec![];
                    while let Some((k, v)) = m.next_entry::<String, &'de RawValue>()? {
                        out.push((k, v));
                    }
                    Ok(Members(out))
                }
            }
            d.deserialize_map(V)
        }
    }
    serde_json::from_str::<Members>(text).ok().map(|m| m.0)
}

/// Top-level members with their raw text (last duplicate wins, like a map).
fn raw_members(text: &str) -> Option<HashMap<String, &RawValue>> {
    serde_json::from_str::<HashMap<String, &RawValue>>(text).ok()
}

/// W3.1, written from the spec text.
pub fn valid_id(raw: &str, v: &Value) -> bool {
    match v {
        Value::String(_) => true,
        Value::Number(_) => {
            let d = raw.strip_prefix('-').unwrap_or(raw);
            !d.is_empty() && d.bytes().all(|c| c.is_ascii_digit()) && (d == "0" || !d.starts_with('0'))
        }
        _ => false,
    }
}

/// What the server must answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Expect {
    Nothing,
    /// An error with this exact id text, code and message.
    Error {
        id: String,
        code: i64,
        message: String,
        data: Option<Value>,
    },
    /// A result (checked structurally by kind).
    Result {
        id: String,
        kind: ResultKind,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub enum ResultKind {
    Initialize(Version),
    Ping,
    Discover,
    List(Version),
    /// A tool call that reaches the host.
    Call(Version, usize, Option<Map<String, Value>>),
}

/// Legacy session state as the oracle tracks it.
#[derive(Debug, Default, Clone)]
pub struct Oracle {
    pub initialized: bool,
    pub version: Option<Version>,
}

fn err(id: &str, code: i64, message: &str) -> Expect {
    Expect::Error { id: id.to_string(), code, message: message.to_string(), data: None }
}

/// Parse JSON text without serde_json's nesting limit (for responses, which
/// may nest a little deeper than the request that produced them).
pub fn parse_unbounded(text: &str) -> serde_json::Result<Value> {
    use serde::Deserialize;
    let mut de = serde_json::Deserializer::from_str(text);
    de.disable_recursion_limit();
    let v = Value::deserialize(&mut de)?;
    de.end()?;
    Ok(v)
}

/// Check that text is one JSON value without building it. serde_json's
/// `Value` reader treats the member names `$serde_json::private::Number` and
/// `$serde_json::private::RawValue` as its own markers (the engine enables
/// the `arbitrary_precision` and `raw_value` features), so valid JSON that
/// holds them cannot become a `Value`; `IgnoredAny` reads them as names.
pub fn well_formed(text: &str) -> serde_json::Result<()> {
    use serde::Deserialize;
    let mut de = serde_json::Deserializer::from_str(text);
    de.disable_recursion_limit();
    serde::de::IgnoredAny::deserialize(&mut de)?;
    de.end()
}

/// True when text holds a member name serde_json reserves (see
/// [`well_formed`]).
pub fn has_reserved_name(text: &str) -> bool {
    text.contains("$serde_json::private::")
}

/// Deepest bracket nesting of JSON text (strings skipped).
pub fn nesting_depth(text: &str) -> usize {
    let (mut depth, mut max, mut in_str, mut esc) = (0usize, 0usize, false, false);
    for b in text.bytes() {
        if in_str {
            match (esc, b) {
                (true, _) => esc = false,
                (false, b'\\') => esc = true,
                (false, b'"') => in_str = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_str = true,
            b'[' | b'{' => {
                depth += 1;
                max = max.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// Shorten text for messages.
pub fn clip(s: &str) -> String {
    if s.len() <= 400 {
        return s.to_string();
    }
    let mut end = 400;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…({} bytes)", &s[..end], s.len())
}

fn has_lone_surrogate_escape(line: &[u8]) -> bool {
    let s = String::from_utf8_lossy(line).to_ascii_lowercase();
    (0xd8..=0xdf).any(|b| s.contains(&format!("\\u{b:02x}")))
}

impl Oracle {
    /// The expected answer to `line`, updating the legacy state as the
    /// server must. `Err` means "the spec leaves this open" (only lone
    /// surrogate escapes, which serde_json refuses in values but not in a
    /// skipped id token); the caller then only checks generic invariants.
    pub fn expect(&mut self, line: &[u8]) -> Result<Expect, ()> {
        if line.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n')) {
            return Ok(Expect::Nothing);
        }
        let text = match std::str::from_utf8(line) {
            Ok(t) => t,
            Err(_) => return Ok(err("null", -32700, "Parse error")),
        };
        // W1.3/W1.4: the engine's nesting limit is MAX_DEPTH (the spec asks
        // for at least 128); deeper well-formed lines are not parse errors.
        if nesting_depth(text) > MAX_DEPTH {
            return self.over_depth_limit(line, text);
        }
        let value: Value = match parse_unbounded(text) {
            Ok(v) => v,
            Err(e) => {
                // Cases this model does not predict, where the generic
                // invariants still apply: lone surrogate escapes, which
                // serde_json refuses and the engine reads as U+FFFD (RFC 8259
                // leaves their meaning open; tests/regressions.rs,
                // `lone_surrogates`), numbers out of range for a parser
                // without `arbitrary_precision` (`huge_numbers_outside_ids`)
                // and serde_json's reserved member name (raw_value feature;
                // `serde_json_raw_value_marker_key`).
                if has_lone_surrogate_escape(line)
                    || e.to_string().contains("number out of range")
                    || has_reserved_name(text)
                {
                    return Err(());
                }
                return Ok(err("null", -32700, "Parse error"));
            }
        };
        let obj = match &value {
            Value::Object(o) => o,
            _ => return Ok(err("null", -32600, "Invalid Request")),
        };
        let raw = raw_members(text).expect("an object that parsed as a Value parses as raw members");
        let id_raw: Option<&str> = raw.get("id").map(|r| r.get());
        let id_ok = match (id_raw, obj.get("id")) {
            (Some(r), Some(v)) => Some(valid_id(r, v)),
            _ => None,
        };
        let method = obj.get("method");
        if method.is_none() && (obj.contains_key("result") || obj.contains_key("error")) {
            return Ok(Expect::Nothing);
        }
        let jsonrpc_ok = obj.get("jsonrpc") == Some(&Value::String("2.0".into()));
        let method = match method {
            Some(Value::String(m)) if jsonrpc_ok && id_ok != Some(false) => m.as_str(),
            _ => {
                let id = if id_ok == Some(true) { id_raw.unwrap() } else { "null" };
                return Ok(err(id, -32600, "Invalid Request"));
            }
        };
        let params = obj.get("params");
        let meta = match params {
            Some(Value::Object(p)) => match p.get("_meta") {
                Some(Value::Object(m)) if m.contains_key(META_VERSION) => Some(m),
                _ => None,
            },
            _ => None,
        };
        let id = match id_raw {
            None => {
                // Notifications: no answer; only initialized flips a flag.
                return Ok(Expect::Nothing);
            }
            Some(id) => id,
        };
        Ok(match meta {
            Some(meta) => self.modern(id, method, params, meta),
            None => self.legacy(id, method, params),
        })
    }

    /// W1.4, for a line nesting deeper than MAX_DEPTH: W1.3 and W2 still
    /// apply; an envelope-valid request is answered with its id, `-32602`
    /// when the excess is only inside `params`, else `-32600`, the message
    /// naming the limit; a notification is not answered (W3.2). Nothing is
    /// run and the legacy state is unchanged.
    fn over_depth_limit(&self, line: &[u8], text: &str) -> Result<Expect, ()> {
        if has_lone_surrogate_escape(line) {
            // Strings serde_json refuses: left open, as on the main path.
            return Err(());
        }
        // Strict JSON, read without recursion (raw values are skipped
        // iteratively).
        if serde_json::from_str::<&RawValue>(text).is_err() {
            return Ok(err("null", -32700, "Parse error"));
        }
        let Some(members) = members_in_order(text) else {
            return Ok(err("null", -32600, "Invalid Request"));
        };
        let last = |k: &str| members.iter().rposition(|(name, _)| name == k);
        let string = |k: &str| last(k).and_then(|i| serde_json::from_str::<String>(members[i].1.get()).ok());
        let id_raw = last("id").map(|i| members[i].1.get());
        let id_ok = id_raw.map(|r| nesting_depth(r) < MAX_DEPTH && parse_unbounded(r).is_ok_and(|v| valid_id(r, &v)));
        if last("method").is_none() && (last("result").is_some() || last("error").is_some()) {
            return Ok(Expect::Nothing);
        }
        let envelope_ok = string("jsonrpc").as_deref() == Some("2.0") && string("method").is_some();
        if !envelope_ok || id_ok == Some(false) {
            let id = if id_ok == Some(true) { id_raw.unwrap() } else { "null" };
            return Ok(err(id, -32600, "Invalid Request"));
        }
        let Some(id) = id_raw else {
            return Ok(Expect::Nothing);
        };
        let params_at = last("params");
        let outside = members
            .iter()
            .enumerate()
            .any(|(i, (_, raw))| Some(i) != params_at && nesting_depth(raw.get()) >= MAX_DEPTH);
        Ok(if outside {
            err(id, -32600, &format!("Invalid Request: {DEPTH_LIMIT_DETAIL}"))
        } else {
            err(id, -32602, &format!("Invalid params: {DEPTH_LIMIT_DETAIL}"))
        })
    }

    fn modern(&self, id: &str, method: &str, params: Option<&Value>, meta: &Map<String, Value>) -> Expect {
        if !matches!(method, "server/discover" | "tools/list" | "tools/call") {
            return err(id, -32601, "Method not found");
        }
        let claimed = match meta.get(META_VERSION) {
            Some(Value::String(s)) => s,
            _ => {
                return err(
                    id,
                    -32602,
                    "Invalid params: _meta io.modelcontextprotocol/protocolVersion must be a string",
                )
            }
        };
        if claimed != MODERN {
            return Expect::Error {
                id: id.into(),
                code: -32022,
                message: "Unsupported protocol version".into(),
                data: Some(serde_json::json!({
                    "supported": ["2026-07-28", "2025-11-25", "2025-06-18", "2024-11-05"],
                    "requested": claimed,
                })),
            };
        }
        if !matches!(meta.get(META_CAPS), Some(Value::Object(_))) {
            return err(
                id,
                -32602,
                "Invalid params: _meta io.modelcontextprotocol/clientCapabilities must be an object",
            );
        }
        let v = Version::V2026_07_28;
        match method {
            "server/discover" => Expect::Result { id: id.into(), kind: ResultKind::Discover },
            "tools/list" => list(id, params, v),
            _ => call(id, params, v),
        }
    }

    fn legacy(&mut self, id: &str, method: &str, params: Option<&Value>) -> Expect {
        match method {
            "notifications/initialized" => err(id, -32600, "Invalid Request"),
            "initialize" => match initialize_version(params) {
                Some(requested) => {
                    let v = match requested {
                        "2024-11-05" | "2025-06-18" | "2025-11-25" => version_of(requested).unwrap(),
                        _ => Version::V2025_11_25,
                    };
                    self.initialized = true;
                    self.version = Some(v);
                    Expect::Result { id: id.into(), kind: ResultKind::Initialize(v) }
                }
                None => err(id, -32602, "Invalid params"),
            },
            "ping" => Expect::Result { id: id.into(), kind: ResultKind::Ping },
            "server/discover" => {
                err(id, -32602, "Invalid params: missing _meta io.modelcontextprotocol/protocolVersion")
            }
            _ if !self.initialized => err(id, -32600, "Invalid Request: server not initialized"),
            "tools/list" => list(id, params, self.version.unwrap()),
            "tools/call" => call(id, params, self.version.unwrap()),
            _ => err(id, -32601, "Method not found"),
        }
    }
}

fn initialize_version(params: Option<&Value>) -> Option<&str> {
    let p = params?.as_object()?;
    let pv = p.get("protocolVersion")?.as_str()?;
    if pv.is_empty() {
        return None;
    }
    p.get("capabilities")?.as_object()?;
    let ci = p.get("clientInfo")?.as_object()?;
    ci.get("name")?.as_str()?;
    ci.get("version")?.as_str()?;
    Some(pv)
}

fn list(id: &str, params: Option<&Value>, v: Version) -> Expect {
    match params {
        None | Some(Value::Null) => {}
        Some(Value::Object(p)) => {
            if matches!(p.get("_meta"), Some(m) if !m.is_object()) {
                return err(id, -32602, "Invalid params");
            }
            if matches!(p.get("cursor"), Some(c) if !c.is_null()) {
                return err(id, -32602, "Invalid params: invalid cursor");
            }
        }
        Some(_) => return err(id, -32602, "Invalid params"),
    }
    Expect::Result { id: id.into(), kind: ResultKind::List(v) }
}

fn has_nul(v: &Value) -> bool {
    match v {
        Value::String(s) => s.contains('\0'),
        Value::Array(a) => a.iter().any(has_nul),
        Value::Object(m) => m.iter().any(|(k, v)| k.contains('\0') || has_nul(v)),
        _ => false,
    }
}

fn call(id: &str, params: Option<&Value>, v: Version) -> Expect {
    let p = match params {
        Some(Value::Object(p)) => p,
        _ => return err(id, -32602, "Invalid params"),
    };
    let name = match p.get("name") {
        Some(Value::String(n)) => n,
        _ => return err(id, -32602, "Invalid params"),
    };
    let args = match p.get("arguments") {
        None | Some(Value::Null) => None,
        Some(Value::Object(a)) => Some(a.clone()),
        Some(_) => return err(id, -32602, "Invalid params"),
    };
    let index = match TOOL_NAMES.iter().position(|t| t == name) {
        Some(i) => i,
        None => return err(id, -32602, "Invalid params: unknown tool"),
    };
    if let Some(a) = &args {
        if has_nul(&Value::Object(a.clone())) {
            return err(id, -32602, "Invalid params");
        }
    }
    Expect::Result { id: id.into(), kind: ResultKind::Call(v, index, args) }
}

// ---------------------------------------------------------------------------
// Checks on what the server wrote

pub fn keys(v: &Value) -> Vec<&str> {
    match v {
        Value::Object(m) => m.keys().map(String::as_str).collect(),
        _ => vec![],
    }
}

/// Generic invariants of any response line: UTF-8, no control bytes (so no
/// raw newline), one JSON object with `jsonrpc`, `id`, then `result` or
/// `error`.
pub fn check_line_shape(out: &[u8]) -> Result<Value, String> {
    let text = std::str::from_utf8(out).map_err(|e| format!("response is not UTF-8: {e}"))?;
    if let Some(b) = out.iter().find(|b| **b < 0x20) {
        return Err(format!("response contains control byte {b:#04x}: {}", clip(text)));
    }
    // W3.3: members in order, so every response starts like this.
    const PREFIX: &str = "{\"jsonrpc\":\"2.0\",\"id\":";
    if !text.starts_with(PREFIX) {
        return Err(format!("response does not start with {PREFIX}: {}", clip(text)));
    }
    let raw = raw_members(text).ok_or_else(|| format!("response is not a JSON object: {}", clip(text)))?;
    let id = raw.get("id").ok_or("no id")?.get();
    // The id token is checked as text (it may be a number of any magnitude
    // or hold a lone surrogate escape, which serde_json cannot hold as a
    // Value); the rest is parsed with the id replaced by 0.
    let id_ok = id == "null"
        || id.starts_with('"')
        || serde_json::from_str::<Value>(id).map(|v| valid_id(id, &v)).unwrap_or_else(|_| {
            let d = id.strip_prefix('-').unwrap_or(id);
            !d.is_empty() && d.bytes().all(|c| c.is_ascii_digit()) && (d == "0" || !d.starts_with('0'))
        });
    if !id_ok || !text[PREFIX.len()..].starts_with(id) {
        return Err(format!("bad response id {}: {}", clip(id), clip(text)));
    }
    let rest = format!("{PREFIX}0{}", &text[PREFIX.len() + id.len()..]);
    let v: Value = parse_unbounded(&rest).map_err(|e| format!("response is not JSON ({e}): {}", clip(text)))?;
    let k = keys(&v);
    if k != ["jsonrpc", "id", "result"] && k != ["jsonrpc", "id", "error"] {
        return Err(format!("bad top-level members {k:?}: {text}"));
    }
    if v["jsonrpc"] != "2.0" {
        return Err(format!("bad jsonrpc member: {text}"));
    }
    if let Some(e) = v.get("error") {
        let ek = keys(e);
        let code = e["code"].as_i64().ok_or_else(|| format!("error without integer code: {text}"))?;
        let want: &[&str] = if code == -32022 { &["code", "message", "data"] } else { &["code", "message"] };
        if ek != want {
            return Err(format!("error members {ek:?} for code {code}: {text}"));
        }
        if !e["message"].is_string() {
            return Err(format!("error message not a string: {text}"));
        }
    }
    Ok(v)
}

/// The raw text of the `id` member of a response line.
pub fn raw_id(out: &[u8]) -> String {
    let text = std::str::from_utf8(out).unwrap();
    raw_members(text).unwrap()["id"].get().to_string()
}

/// Check one exchange against the oracle's expectation.
pub fn check_exchange(expect: &Expect, out: Option<&[u8]>, new_calls: &[CallRecord]) -> Result<(), String> {
    let calls_expected = matches!(expect, Expect::Result { kind: ResultKind::Call(..), .. }) as usize;
    if new_calls.len() != calls_expected {
        return Err(format!("host called {} times, expected {calls_expected} ({expect:?})", new_calls.len()));
    }
    let out = match (expect, out) {
        (Expect::Nothing, None) => return Ok(()),
        (Expect::Nothing, Some(o)) => return Err(format!("unexpected response {}", clip(&String::from_utf8_lossy(o)))),
        (_, None) => return Err(format!("no response, expected {expect:?}")),
        (_, Some(o)) => o,
    };
    let v = check_line_shape(out)?;
    let text = clip(&String::from_utf8_lossy(out));
    match expect {
        Expect::Nothing => unreachable!(),
        Expect::Error { id, code, message, data } => {
            let got_id = raw_id(out);
            if &got_id != id {
                return Err(format!("id {got_id} != {id}: {text}"));
            }
            let e = v.get("error").ok_or_else(|| format!("expected error {code} {message}: {text}"))?;
            if e["code"].as_i64() != Some(*code) || e["message"].as_str() != Some(message.as_str()) {
                return Err(format!("expected error {code} {message:?}: {text}"));
            }
            if e.get("data") != data.as_ref() {
                return Err(format!("error data mismatch, expected {data:?}: {text}"));
            }
            // Byte-exact form for errors without data (W3.3).
            if data.is_none() {
                let want = format!(
                    "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"error\":{{\"code\":{code},\"message\":{}}}}}",
                    js(&Value::String(message.clone()))
                );
                if want.as_bytes() != out {
                    return Err(format!("error line not byte-exact:\n want {want}\n got  {text}"));
                }
            }
            Ok(())
        }
        Expect::Result { id, kind } => {
            let got_id = raw_id(out);
            if &got_id != id {
                return Err(format!("id {got_id} != {id}: {text}"));
            }
            let r = v.get("result").ok_or_else(|| format!("expected a result ({kind:?}): {text}"))?;
            check_result(kind, r, new_calls).map_err(|e| format!("{e}\n  in {text}"))
        }
    }
}

fn check_server_meta(m: &Value) -> Result<(), String> {
    if keys(m) != [SERVER_INFO_KEY] || m[SERVER_INFO_KEY] != server_info_value() {
        return Err(format!("bad server _meta {m}"));
    }
    Ok(())
}

fn check_result(kind: &ResultKind, r: &Value, calls: &[CallRecord]) -> Result<(), String> {
    let supported = serde_json::json!(["2026-07-28", "2025-11-25", "2025-06-18", "2024-11-05"]);
    match kind {
        ResultKind::Ping => {
            if r != &serde_json::json!({}) {
                return Err("ping result is not {}".into());
            }
        }
        ResultKind::Initialize(v) => {
            if keys(r) != ["protocolVersion", "capabilities", "serverInfo", "instructions"] {
                return Err(format!("initialize members {:?}", keys(r)));
            }
            if r["protocolVersion"] != v.as_str()
                || r["capabilities"] != serde_json::json!({"tools": {"listChanged": false}, "logging": {}})
                || r["serverInfo"] != server_info_value()
                || r["instructions"] != INSTRUCTIONS
            {
                return Err("initialize result values".into());
            }
        }
        ResultKind::Discover => {
            if keys(r)
                != ["resultType", "supportedVersions", "capabilities", "instructions", "ttlMs", "cacheScope", "_meta"]
            {
                return Err(format!("discover members {:?}", keys(r)));
            }
            if r["resultType"] != "complete"
                || r["supportedVersions"] != supported
                || r["capabilities"] != serde_json::json!({"tools": {"listChanged": false}, "logging": {}})
                || r["instructions"] != INSTRUCTIONS
                || r["ttlMs"] != 300000
                || r["cacheScope"] != "public"
            {
                return Err("discover values".into());
            }
            check_server_meta(&r["_meta"])?;
        }
        ResultKind::List(v) => {
            let want: &[&str] =
                if v.is_modern() { &["resultType", "tools", "ttlMs", "cacheScope", "_meta"] } else { &["tools"] };
            if keys(r) != want {
                return Err(format!("tools/list members {:?} for {}", keys(r), v.as_str()));
            }
            if v.is_modern() {
                if r["resultType"] != "complete" || r["ttlMs"] != 300000 || r["cacheScope"] != "public" {
                    return Err("modern list values".into());
                }
                check_server_meta(&r["_meta"])?;
            }
            let tools = r["tools"].as_array().ok_or("tools not an array")?;
            let specs = tool_specs();
            if tools.len() != specs.len() {
                return Err("tool count".into());
            }
            for (t, s) in tools.iter().zip(&specs) {
                check_tool(t, s, *v)?;
            }
        }
        ResultKind::Call(v, index, args) => {
            let rec = &calls[0];
            if rec.index != *index || &rec.arguments != args {
                return Err(format!("host got tool {} args {:?}, expected {index} {args:?}", rec.index, rec.arguments));
            }
            match &rec.outcome {
                Ok(res) if !conforms(*index, res) => {
                    check_error_result(r, None, *v)?;
                    let want = format!("The result of tool `{}` does not match its output schema", TOOL_NAMES[*index]);
                    if !r["content"][0]["text"].as_str().is_some_and(|t| t.starts_with(&want)) {
                        return Err(format!("J4.6: {} is not a schema mismatch error", r["content"][0]["text"]));
                    }
                }
                Ok(res) => check_call_result(r, res, *v)?,
                Err(ToolFailure::Error(t)) => check_error_result(r, Some(t), *v)?,
                Err(ToolFailure::Interrupted) => check_error_result(r, None, *v)?,
            }
        }
    }
    Ok(())
}

/// RULES J4.6 for the fake registry: does the result of tool `index` send
/// its structured content, or is it a schema mismatch? Written for the
/// three output schemas of [`tool_specs`] (`echo`: an object; `blocks`: an
/// array; `structured`: an object whose `a`, if any, is a number), not as a
/// JSON Schema implementation. Results marked as errors, without
/// structured content, or whose text the oracle cannot read are sent.
pub fn conforms(index: usize, res: &ToolResult) -> bool {
    let Some(sc) = res.structured.as_deref().filter(|_| !res.is_error) else { return true };
    let Ok(x) = parse_unbounded(sc) else { return true };
    match TOOL_NAMES[index] {
        "echo" => x.is_object(),
        "blocks" => x.is_array(),
        "structured" => x.as_object().is_some_and(|o| o.get("a").is_none_or(Value::is_number)),
        _ => true,
    }
}

/// A projected tool object (RULES P1) against the spec it came from.
pub fn check_tool(t: &Value, s: &ToolSpec, v: Version) -> Result<(), String> {
    let mut want = vec!["name", "description", "inputSchema"];
    let ann = v != Version::V2024_11_05 && !s.annotations.is_empty();
    if ann {
        want.push("annotations");
    }
    let out_schema = s.output_schema.as_ref().map(|o| parse_unbounded(o).unwrap());
    let emit_out = match (&out_schema, v) {
        (None, _) | (Some(_), Version::V2024_11_05) => false,
        (Some(o), Version::V2026_07_28) => {
            let _ = o;
            true
        }
        (Some(o), _) => o.get("type") == Some(&Value::String("object".into())),
    };
    if emit_out {
        want.push("outputSchema");
    }
    if keys(t) != want {
        return Err(format!("tool members {:?}, expected {want:?} ({})", keys(t), v.as_str()));
    }
    if t["name"] != s.name.as_str() || t["description"] != s.description.as_str() {
        return Err("tool name/description".into());
    }
    if t["inputSchema"] != parse_unbounded(&s.input_schema).unwrap() {
        return Err("inputSchema".into());
    }
    if ann {
        let a = &t["annotations"];
        let k: Vec<&str> = s.annotations.iter().map(|(k, _)| k.as_str()).collect();
        if keys(a) != k {
            return Err("annotation order".into());
        }
        for (k, val) in &s.annotations {
            if a[k] != parse_unbounded(val).unwrap() {
                return Err(format!("annotation {k}"));
            }
        }
    }
    if emit_out && t["outputSchema"] != out_schema.unwrap() {
        return Err("outputSchema".into());
    }
    Ok(())
}

fn check_members(got: &Value, want: &[(String, String)], what: &str) -> Result<(), String> {
    let k: Vec<&str> = want.iter().map(|(k, _)| k.as_str()).collect();
    if keys(got) != k {
        return Err(format!("{what} keys {:?} != {k:?}", keys(got)));
    }
    for (k, val) in want {
        if got[k] != parse_unbounded(val).unwrap() {
            return Err(format!("{what} value of {k}"));
        }
    }
    Ok(())
}

/// A projected block (RULES P2) against the block it came from.
pub fn check_block(got: &Value, b: &Block, v: Version) -> Result<(), String> {
    let mut want: Vec<&str> = vec!["type"];
    let s = |x: &str| Value::String(x.to_string());
    let mut fields: Vec<(&str, Value)> = vec![];
    match &b.content {
        Content::Text { text } => fields.push(("text", s(text))),
        Content::Image { data, mime_type } | Content::Audio { data, mime_type } => {
            fields.push(("data", s(data)));
            fields.push(("mimeType", s(mime_type)));
        }
        Content::ResourceLink { uri, name, title, description, mime_type, size } => {
            fields.push(("uri", s(uri)));
            fields.push(("name", s(name)));
            for (k, o) in [("title", title), ("description", description), ("mimeType", mime_type)] {
                if let Some(x) = o {
                    fields.push((k, s(x)));
                }
            }
            if let Some(sz) = size {
                fields.push(("size", parse_unbounded(sz).unwrap()));
            }
        }
        Content::Resource { uri, mime_type, text, blob } => {
            let mut inner = Map::new();
            inner.insert("uri".into(), s(uri));
            for (k, o) in [("mimeType", mime_type), ("text", text), ("blob", blob)] {
                if let Some(x) = o {
                    inner.insert(k.into(), s(x));
                }
            }
            fields.push(("resource", Value::Object(inner)));
        }
    }
    for (k, _) in &fields {
        want.push(k);
    }
    let anns: Vec<(String, String)> = b
        .annotations
        .iter()
        .filter(|(k, _)| k != "last_modified" || v != Version::V2024_11_05)
        .map(|(k, val)| (if k == "last_modified" { "lastModified".to_string() } else { k.clone() }, val.clone()))
        .collect();
    if !anns.is_empty() {
        want.push("annotations");
    }
    let meta = v != Version::V2024_11_05 && !b.meta.is_empty();
    if meta {
        want.push("_meta");
    }
    if keys(got) != want {
        return Err(format!("block members {:?} != {want:?} ({})", keys(got), v.as_str()));
    }
    if got["type"] != b.content.type_name() {
        return Err("block type".into());
    }
    for (k, val) in &fields {
        if &got[*k] != val || keys(&got[*k]) != keys(val) {
            return Err(format!("block field {k}: {} != {val}", got[*k]));
        }
    }
    if !anns.is_empty() {
        check_members(&got["annotations"], &anns, "annotations")?;
    }
    if meta {
        check_members(&got["_meta"], &b.meta, "block _meta")?;
    }
    Ok(())
}

/// A projected `CallToolResult` against the tool result it came from
/// (RULES P1–P3, M4.3).
pub fn check_call_result(r: &Value, res: &ToolResult, v: Version) -> Result<(), String> {
    if v == Version::V2024_11_05 {
        let mut bad: Vec<&str> = vec![];
        for b in &res.content {
            let t = b.content.type_name();
            if (t == "audio" || t == "resource_link") && !bad.contains(&t) {
                bad.push(t);
            }
        }
        if !bad.is_empty() {
            check_error_result(r, None, v)?;
            let text = r["content"][0]["text"].as_str().unwrap();
            let mut pos = 0;
            for t in &bad {
                match text[pos..].find(t) {
                    Some(p) => pos += p + t.len(),
                    None => return Err(format!("P3 text {text:?} does not name {bad:?} in order")),
                }
            }
            if !text.contains("2024-11-05") {
                return Err("P3 text does not name the version".into());
            }
            return Ok(());
        }
    }
    let mut want = vec![];
    if v.is_modern() {
        want.push("resultType");
    }
    want.push("content");
    want.push("isError");
    let sc = res.structured.as_ref().map(|s| parse_unbounded(s).unwrap());
    let emit_sc = match (&sc, v) {
        (None, _) | (Some(_), Version::V2024_11_05) => false,
        (Some(_), Version::V2026_07_28) => true,
        (Some(x), _) => x.is_object(),
    };
    if emit_sc {
        want.push("structuredContent");
    }
    if v.is_modern() || !res.meta.is_empty() {
        want.push("_meta");
    }
    if keys(r) != want {
        return Err(format!("result members {:?} != {want:?} ({})", keys(r), v.as_str()));
    }
    if v.is_modern() && r["resultType"] != "complete" {
        return Err("resultType".into());
    }
    if r["isError"] != res.is_error {
        return Err("isError".into());
    }
    let content = r["content"].as_array().ok_or("content not an array")?;
    if content.len() != res.content.len() {
        return Err("content length".into());
    }
    for (g, b) in content.iter().zip(&res.content) {
        check_block(g, b, v)?;
    }
    if emit_sc {
        let x = sc.unwrap();
        if r["structuredContent"] != x || keys(&r["structuredContent"]) != keys(&x) {
            return Err("structuredContent".into());
        }
    }
    if v.is_modern() {
        let mut m: Vec<(String, String)> = res.meta.iter().filter(|(k, _)| k != SERVER_INFO_KEY).cloned().collect();
        m.push((SERVER_INFO_KEY.into(), js(&server_info_value())));
        check_members(&r["_meta"], &m, "result _meta")?;
    } else if !res.meta.is_empty() {
        check_members(&r["_meta"], &res.meta, "result _meta")?;
    }
    Ok(())
}

/// A contained tool error (RULES L6.6): `text` is the exact text when known.
pub fn check_error_result(r: &Value, text: Option<&str>, v: Version) -> Result<(), String> {
    let want: &[&str] =
        if v.is_modern() { &["resultType", "content", "isError", "_meta"] } else { &["content", "isError"] };
    if keys(r) != want {
        return Err(format!("error result members {:?} != {want:?}", keys(r)));
    }
    let c = r["content"].as_array().ok_or("content")?;
    if c.len() != 1 || keys(&c[0]) != ["type", "text"] || c[0]["type"] != "text" || !c[0]["text"].is_string() {
        return Err("error result content".into());
    }
    if let Some(t) = text {
        if c[0]["text"] != t {
            return Err(format!("error text {} != {t:?}", c[0]["text"]));
        }
    }
    if r["isError"] != true {
        return Err("isError must be true".into());
    }
    if v.is_modern() {
        if r["resultType"] != "complete" {
            return Err("resultType".into());
        }
        check_server_meta(&r["_meta"])?;
    }
    Ok(())
}

/// Run a sequence of lines through a fresh server, checking every exchange.
/// Returns the number of responses written.
pub fn run_lines(lines: &[Vec<u8>]) -> Result<usize, String> {
    let mut host = FakeHost::default();
    let server = new_server(&mut host);
    let mut legacy = LegacyState::default();
    if host.tools_asked != 1 {
        return Err("Host::tools must be called exactly once".into());
    }
    let mut oracle = Oracle::default();
    let mut responses = 0;
    for line in lines {
        let before = host.calls.len();
        let expect = oracle.expect(line);
        let out = server.handle(&mut legacy, line, &mut host).into_line();
        responses += out.is_some() as usize;
        let new_calls = &host.calls[before..];
        let res = match &expect {
            Ok(e) => check_exchange(e, out.as_deref(), new_calls),
            Err(()) => match &out {
                // Open case: only the generic invariants.
                Some(o) => check_line_shape(o).map(|_| ()),
                None => Ok(()),
            },
        };
        if let Err(e) = res {
            return Err(format!("line {:?}: {e}", clip(&String::from_utf8_lossy(line))));
        }
        // Keep the oracle's legacy state in step with the server's view when
        // the spec left the case open.
        if expect.is_err() {
            oracle.initialized = legacy.initialized;
            oracle.version = legacy.version;
        }
    }
    if oracle.initialized != legacy.initialized || (oracle.initialized && oracle.version != legacy.version) {
        return Err(format!("legacy state diverged: oracle {oracle:?}, server {:?}", legacy));
    }
    Ok(responses)
}
