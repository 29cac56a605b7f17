//! Prompts (RULES section 16): templates a client lists and gets, filled by
//! the engine. A prompt is a list of messages whose text holds
//! `{{argument}}` placeholders; `prompts/get` fills them with the client's
//! arguments. No R code runs when a client gets a prompt, so a prompt can be
//! answered on any thread, and a model that steers the arguments only ever
//! changes text.

use std::borrow::Cow;

use serde_json::{Map, Value};

use crate::host::{Block, Content};
pub use crate::host::{PromptArgument, PromptSpec, Role};
use crate::json::write_str;
use crate::projection;
use crate::version::Version;

/// Why `prompts/get` was refused: the detail of its `-32602`.
#[derive(Debug, Clone, PartialEq)]
pub enum GetError {
    /// `params` is not an object, or `name` is not a string.
    BadParams,
    UnknownPrompt,
    /// `arguments` is not an object of strings.
    BadArguments,
    /// A required argument is missing (its name).
    Missing(String),
    /// A block the version cannot carry (audio or a resource link on
    /// 2024-11-05, RULES P3).
    NotInVersion(&'static str),
}

impl GetError {
    /// The detail of the `-32602` message.
    pub fn detail(&self) -> &'static str {
        match self {
            GetError::BadParams => "prompts/get needs a prompt name",
            GetError::UnknownPrompt => "unknown prompt",
            GetError::BadArguments => "prompt arguments must be strings",
            GetError::Missing(_) => "a required prompt argument is missing",
            GetError::NotInVersion(_) => "this prompt has content this protocol version cannot carry",
        }
    }

    /// The error's `data`: which argument is missing, or which content
    /// cannot be carried.
    pub fn data(&self) -> Option<Vec<u8>> {
        let (key, val) = match self {
            GetError::Missing(n) => ("missing", n.as_str()),
            GetError::NotInVersion(t) => ("content", *t),
            _ => return None,
        };
        let mut out = b"{\"".to_vec();
        out.extend_from_slice(key.as_bytes());
        out.extend_from_slice(b"\":");
        write_str(&mut out, val);
        out.push(b'}');
        Some(out)
    }
}

/// `text` with every `{{name}}` of a declared argument replaced by its value
/// (an optional argument not given becomes empty). Other braces stay. One
/// pass over the template: a value that holds a placeholder is not filled
/// again (RULES Q2.2).
pub fn fill<'a>(text: &'a str, spec: &PromptSpec, args: &Map<String, Value>) -> Cow<'a, str> {
    fill_with(text, |name| {
        spec.arguments.iter().any(|a| a.name == name).then(|| args.get(name).and_then(Value::as_str).unwrap_or(""))
    })
}

/// `text` with every `{{name}}` for which `value(name)` is `Some` replaced
/// by that value, in one pass; other placeholders and braces stay (RULES
/// Q2.2, U2.2).
pub fn fill_with<'a, 'v>(text: &'a str, value: impl Fn(&str) -> Option<&'v str>) -> Cow<'a, str> {
    if !text.contains("{{") {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 64);
    let mut rest = text;
    while let Some(open) = rest.find("{{") {
        out.push_str(&rest[..open]);
        let after = &rest[open + 2..];
        let found = after.find("}}").and_then(|close| value(&after[..close]).map(|v| (v, close)));
        match found {
            Some((v, close)) => {
                out.push_str(v);
                rest = &after[close + 2..];
            }
            None => {
                out.push_str("{{");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// The block with its text fields filled.
fn fill_block(b: &Block, spec: &PromptSpec, args: &Map<String, Value>) -> Block {
    let f = |s: &str| fill(s, spec, args).into_owned();
    let fo = |s: &Option<String>| s.as_deref().map(f);
    let content = match &b.content {
        Content::Text { text } => Content::Text { text: f(text) },
        Content::Resource { uri, mime_type, text, blob } => {
            Content::Resource { uri: f(uri), mime_type: mime_type.clone(), text: fo(text), blob: blob.clone() }
        }
        Content::ResourceLink { uri, name, title, description, mime_type, size } => Content::ResourceLink {
            uri: f(uri),
            name: f(name),
            title: fo(title),
            description: fo(description),
            mime_type: mime_type.clone(),
            size: size.clone(),
        },
        other => other.clone(),
    };
    Block { content, annotations: b.annotations.clone(), meta: b.meta.clone() }
}

/// The `prompts` array of a `prompts/list` result (the same in every
/// version).
pub fn list_array(prompts: &[PromptSpec]) -> Vec<u8> {
    let mut out = Vec::with_capacity(128 * prompts.len() + 2);
    out.push(b'[');
    for (i, p) in prompts.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"name\":");
        write_str(&mut out, &p.name);
        out.extend_from_slice(b",\"description\":");
        write_str(&mut out, &p.description);
        out.extend_from_slice(b",\"arguments\":[");
        for (j, a) in p.arguments.iter().enumerate() {
            if j > 0 {
                out.push(b',');
            }
            out.extend_from_slice(b"{\"name\":");
            write_str(&mut out, &a.name);
            if let Some(d) = &a.description {
                out.extend_from_slice(b",\"description\":");
                write_str(&mut out, d);
            }
            out.extend_from_slice(if a.required { b",\"required\":true}" } else { b",\"required\":false}" });
        }
        out.extend_from_slice(b"]}");
    }
    out.push(b']');
    out
}

/// The `GetPromptResult` of `params` (a `prompts/get` request's) in version
/// `v`, or why not.
pub fn write_get_result(
    out: &mut Vec<u8>,
    prompts: &[PromptSpec],
    params: Option<&Value>,
    v: Version,
    server_info: &str,
) -> Result<(), GetError> {
    let p = params.and_then(Value::as_object).ok_or(GetError::BadParams)?;
    let name = p.get("name").and_then(Value::as_str).ok_or(GetError::BadParams)?;
    let spec = prompts.iter().find(|s| s.name == name).ok_or(GetError::UnknownPrompt)?;
    let empty = Map::new();
    let args = match p.get("arguments") {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(m)) if m.values().all(Value::is_string) => m,
        Some(_) => return Err(GetError::BadArguments),
    };
    if let Some(a) = spec.arguments.iter().find(|a| a.required && !args.contains_key(&a.name)) {
        return Err(GetError::Missing(a.name.clone()));
    }
    let f = v.features();
    if !f.audio_and_links {
        for (_, b) in &spec.messages {
            if let t @ ("audio" | "resource_link") = b.content.type_name() {
                return Err(GetError::NotInVersion(t));
            }
        }
    }
    projection::open_result(out, v);
    out.extend_from_slice(b"\"description\":");
    write_str(out, &spec.description);
    out.extend_from_slice(b",\"messages\":[");
    for (i, (role, b)) in spec.messages.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"role\":");
        write_str(out, role.as_str());
        out.extend_from_slice(b",\"content\":");
        projection::write_block(out, &fill_block(b, spec, args), v);
        out.push(b'}');
    }
    out.push(b']');
    projection::close_result(out, v, server_info, false);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec() -> PromptSpec {
        PromptSpec {
            name: "review".into(),
            description: "Review a file.".into(),
            arguments: vec![
                PromptArgument {
                    name: "path".into(),
                    description: Some("The file.".into()),
                    required: true,
                    values: vec![],
                },
                PromptArgument {
                    name: "focus".into(),
                    description: None,
                    required: false,
                    values: vec!["speed".into(), "Safety".into(), "style".into()],
                },
            ],
            messages: vec![
                (Role::User, Block::text("Review {{path}} for {{focus}}; keep {braces} and {{unknown}}.")),
                (
                    Role::Assistant,
                    Block {
                        content: Content::Resource {
                            uri: "file://{{path}}".into(),
                            mime_type: Some("text/plain".into()),
                            text: Some("{{path}}".into()),
                            blob: None,
                        },
                        annotations: vec![],
                        meta: vec![],
                    },
                ),
            ],
        }
    }

    fn get(params: Value, v: Version) -> Result<Value, GetError> {
        let mut out = Vec::new();
        write_get_result(&mut out, &[spec()], Some(&params), v, r#"{"name":"s","version":"1"}"#)?;
        Ok(serde_json::from_slice(&out).unwrap())
    }

    #[test]
    fn g_fills_declared_placeholders_only() {
        let r = get(json!({"name": "review", "arguments": {"path": "a}}b", "focus": "speed"}}), Version::V2025_11_25)
            .unwrap();
        assert_eq!(
            r,
            json!({"description": "Review a file.", "messages": [
                {"role": "user", "content": {"type": "text",
                    "text": "Review a}}b for speed; keep {braces} and {{unknown}}."}},
                {"role": "assistant", "content": {"type": "resource",
                    "resource": {"uri": "file://a}}b", "mimeType": "text/plain", "text": "a}}b"}}}
            ]})
        );
        // An optional argument not given is empty; the modern result is complete.
        let r = get(json!({"name": "review", "arguments": {"path": "x"}}), Version::V2026_07_28).unwrap();
        assert_eq!(r["resultType"], "complete");
        assert_eq!(r["messages"][0]["content"]["text"], "Review x for ; keep {braces} and {{unknown}}.");
        assert!(r["_meta"]["io.modelcontextprotocol/serverInfo"].is_object());
    }

    #[test]
    fn g_a_value_is_never_filled_again() {
        let r = get(
            json!({"name": "review", "arguments": {"path": "{{focus}}", "focus": "{{path}}"}}),
            Version::V2025_11_25,
        )
        .unwrap();
        assert_eq!(
            r["messages"][0]["content"]["text"],
            "Review {{focus}} for {{path}}; keep {braces} and {{unknown}}."
        );
        let spec = spec();
        let args = json!({"path": "p"});
        let m = args.as_object().unwrap();
        assert_eq!(fill("{{{{path}}}}", &spec, m), "{{p}}");
        assert_eq!(fill("{{path", &spec, m), "{{path");
        assert_eq!(fill("}}{{path}}{{", &spec, m), "}}p{{");
    }

    #[test]
    fn g_refusals() {
        let v = Version::V2025_11_25;
        assert_eq!(get(json!({"name": "nope"}), v), Err(GetError::UnknownPrompt));
        assert_eq!(get(json!({"name": "review"}), v), Err(GetError::Missing("path".into())));
        assert_eq!(get(json!({"name": "review", "arguments": {"path": 1}}), v), Err(GetError::BadArguments));
        assert_eq!(get(json!({"name": 3}), v), Err(GetError::BadParams));
        assert_eq!(get(json!([]), v), Err(GetError::BadParams));
    }

    #[test]
    fn g_listing() {
        let l: Value = serde_json::from_slice(&list_array(&[spec()])).unwrap();
        assert_eq!(
            l,
            json!([{"name": "review", "description": "Review a file.", "arguments": [
                {"name": "path", "description": "The file.", "required": true},
                {"name": "focus", "required": false}]}])
        );
    }
}
