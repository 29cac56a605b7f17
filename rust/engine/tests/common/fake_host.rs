//! The fake registry and [`FakeHost`], a host whose tools do what their
//! arguments say.

use mcplite_engine::host::{
    Block, CallContext, Content, Host, ResourceBody, ResourceChange, ResourceSpec, ToolFailure, ToolResult, ToolSpec,
};
use mcplite_engine::{Server, ServerInfo};
use serde_json::{Map, Value};

use super::{js, INSTRUCTIONS, SERVER_NAME, SERVER_VERSION};

/// Names of the fake tools, in registry order.
pub const TOOL_NAMES: [&str; 6] = ["echo", "fail", "interrupt", "blocks", "structured", "big.name-1_x"];

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
        changes: changes_of(args.get("changes")),
    }
}

/// Changes to the server's resources (RULES U3.2) from `changes`: an array
/// of `{"set": uri, "text": …}` and `{"remove": uri}`.
pub fn changes_of(v: Option<&Value>) -> Vec<ResourceChange> {
    let Some(Value::Array(a)) = v else { return vec![] };
    a.iter()
        .filter_map(|c| {
            if let Some(uri) = c.get("set").and_then(Value::as_str) {
                let text = c.get("text").and_then(Value::as_str).unwrap_or_default().to_string();
                return Some(ResourceChange::Set(ResourceSpec {
                    uri: uri.into(),
                    name: uri.into(),
                    title: None,
                    description: None,
                    mime_type: "text/plain".into(),
                    size: text.len() as u64,
                    body: ResourceBody::Text(text),
                }));
            }
            c.get("remove").and_then(Value::as_str).map(|u| ResourceChange::Remove(u.into()))
        })
        .collect()
}

/// A server of the fake registry with one resource, `notes://all` (empty
/// text), that the `blocks` tool's `changes` change (RULES U3.2: the server
/// allows it).
pub fn new_server_with_notes(host: &mut FakeHost) -> Server {
    let notes = ResourceSpec {
        uri: "notes://all".into(),
        name: "all".into(),
        title: None,
        description: None,
        mime_type: "text/plain".into(),
        size: 0,
        body: ResourceBody::Text(String::new()),
    };
    let resources = mcplite_engine::host::Resources { resources: vec![notes], templates: vec![] };
    new_server(host).with_catalog(Vec::new(), resources).with_resource_changes(true)
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

pub(super) fn server_info_value() -> Value {
    serde_json::json!({"name": SERVER_NAME, "version": SERVER_VERSION})
}
