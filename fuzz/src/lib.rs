//! Input grammars for the mcplite engine fuzz targets. The oracle and the
//! fake host are the engine's integration-test helpers, included by path so
//! that the fuzzers and `cargo test` check exactly the same rules.

#[path = "../../rust/engine/tests/common/mod.rs"]
pub mod common;

use arbitrary::{Arbitrary, Result, Unstructured};
use mcplite_engine::host::{Block, Content, ToolResult, ToolSpec};
use serde_json::{Map, Number, Value};

/// Deepest JSON the grammar builds (past the engine's 128 limit on purpose).
const MAX_DEPTH: usize = 140;

/// Strings that matter to the engine, so the fuzzer hits them often.
const WORDS: &[&str] = &[
    "",
    "2.0",
    "1.0",
    "jsonrpc",
    "id",
    "method",
    "params",
    "result",
    "error",
    "_meta",
    "initialize",
    "notifications/initialized",
    "ping",
    "tools/list",
    "tools/call",
    "server/discover",
    "resources/list",
    "2024-11-05",
    "2025-06-18",
    "2025-11-25",
    "2026-07-28",
    "2025-03-26",
    "io.modelcontextprotocol/protocolVersion",
    "io.modelcontextprotocol/clientCapabilities",
    "io.modelcontextprotocol/clientInfo",
    "io.modelcontextprotocol/serverInfo",
    "cursor",
    "name",
    "arguments",
    "protocolVersion",
    "capabilities",
    "clientInfo",
    "version",
    "echo",
    "fail",
    "interrupt",
    "blocks",
    "structured",
    "big.name-1_x",
    "text",
    "image",
    "audio",
    "resource_link",
    "resource",
    "kinds",
    "annotations",
    "last_modified",
    "lastModified",
    "meta",
    "block_meta",
    "is_error",
    "value",
    "message",
    "\u{0}",
    "\n",
    "\r\n",
    "\"",
    "\\",
    "</",
    "\u{2028}",
    "\u{feff}",
    "é",
    "\u{1F600}",
    "\u{7f}",
];

/// A string: mostly interesting words, sometimes arbitrary.
pub fn arb_string(u: &mut Unstructured) -> Result<String> {
    Ok(match u.int_in_range(0u8..=3)? {
        0 | 1 => (*u.choose(WORDS)?).to_string(),
        2 => {
            let a = *u.choose(WORDS)?;
            let b = *u.choose(WORDS)?;
            format!("{a}{b}")
        }
        _ => String::arbitrary(u)?,
    })
}

/// An arbitrary JSON value (finite numbers only; non-finite become null).
pub fn arb_json(u: &mut Unstructured, depth: usize) -> Result<Value> {
    let choice = if depth >= MAX_DEPTH { u.int_in_range(0u8..=4)? } else { u.int_in_range(0u8..=7)? };
    Ok(match choice {
        0 => Value::Null,
        1 => Value::Bool(bool::arbitrary(u)?),
        2 => Value::Number(i64::arbitrary(u)?.into()),
        3 => Number::from_f64(f64::arbitrary(u)?).map(Value::Number).unwrap_or(Value::Null),
        4 => Value::String(arb_string(u)?),
        5 => {
            let n = u.int_in_range(0usize..=4)?;
            let mut a = Vec::with_capacity(n);
            for _ in 0..n {
                a.push(arb_json(u, depth + 1)?);
            }
            Value::Array(a)
        }
        6 => {
            // A chain, to reach deep nesting cheaply.
            let n = u.int_in_range(0usize..=(MAX_DEPTH - depth))?;
            let mut v = arb_json(u, MAX_DEPTH)?;
            for _ in 0..n {
                v = if bool::arbitrary(u)? {
                    Value::Array(vec![v])
                } else {
                    Value::Object(Map::from_iter([("a".to_string(), v)]))
                };
            }
            v
        }
        _ => Value::Object(arb_object(u, depth + 1)?),
    })
}

pub fn arb_object(u: &mut Unstructured, depth: usize) -> Result<Map<String, Value>> {
    let n = u.int_in_range(0usize..=4)?;
    let mut m = Map::new();
    for _ in 0..n {
        m.insert(arb_string(u)?, arb_json(u, depth)?);
    }
    Ok(m)
}

/// Raw id tokens, valid and invalid (W3.1).
fn arb_id(u: &mut Unstructured) -> Result<Option<String>> {
    Ok(match u.int_in_range(0u8..=12)? {
        0 => None,
        1 => Some(i64::arbitrary(u)?.to_string()),
        2 => Some(u64::arbitrary(u)?.to_string()),
        3 => Some("-0".into()),
        4 => Some(format!("{}{}", u.int_in_range(1u8..=9)?, "0".repeat(u.int_in_range(0usize..=60)?))),
        5 => Some(serde_json::to_string(&arb_string(u)?).unwrap()),
        6 => Some(format!("\"\\u{:04x}\"", u16::arbitrary(u)?)),
        7 => Some(
            (*u.choose(&["null", "true", "false", "1.5", "1.0", "1e2", "-1E+2", "01", "[]", "{}", "[1]", "\"\""])?)
                .into(),
        ),
        8 => Some(serde_json::to_string(&arb_json(u, 0)?).unwrap()),
        _ => Some(u.int_in_range(0u32..=3)?.to_string()),
    })
}

/// One `_meta` object, modern or not.
fn arb_meta(u: &mut Unstructured) -> Result<Value> {
    Ok(match u.int_in_range(0u8..=5)? {
        0 => arb_json(u, 1)?,
        1 => Value::Object(arb_object(u, 1)?),
        _ => {
            let mut m = Map::new();
            if u.int_in_range(0u8..=5)? > 0 {
                let pv = match u.int_in_range(0u8..=5)? {
                    0 => arb_json(u, 2)?,
                    1 => Value::String(arb_string(u)?),
                    2 => Value::String((*u.choose(&common::LEGACY)?).into()),
                    _ => Value::String(common::MODERN.into()),
                };
                m.insert(common::META_VERSION.into(), pv);
            }
            if u.int_in_range(0u8..=5)? > 0 {
                let caps =
                    if u.int_in_range(0u8..=4)? == 0 { arb_json(u, 2)? } else { Value::Object(arb_object(u, 2)?) };
                m.insert(common::META_CAPS.into(), caps);
            }
            for (k, v) in arb_object(u, 2)? {
                m.insert(k, v);
            }
            Value::Object(m)
        }
    })
}

/// Arguments for the fake tools (see `common::result_from_args`).
fn arb_arguments(u: &mut Unstructured) -> Result<Value> {
    Ok(match u.int_in_range(0u8..=6)? {
        0 => arb_json(u, 1)?,
        1 => Value::Null,
        _ => {
            let mut m = Map::new();
            let kinds = ["text", "image", "audio", "resource_link", "resource"];
            for key in [
                "kinds",
                "text",
                "annotations",
                "last_modified",
                "block_meta",
                "meta",
                "is_error",
                "structured",
                "value",
                "message",
            ] {
                if !bool::arbitrary(u)? {
                    continue;
                }
                let v = match key {
                    "kinds" => {
                        let n = u.int_in_range(0usize..=6)?;
                        let mut a = vec![];
                        for _ in 0..n {
                            a.push(Value::String((*u.choose(&kinds)?).into()));
                        }
                        Value::Array(a)
                    }
                    "annotations" | "block_meta" | "meta" => Value::Object(arb_object(u, 2)?),
                    "is_error" => Value::Bool(bool::arbitrary(u)?),
                    "text" | "last_modified" | "message" => Value::String(arb_string(u)?),
                    _ => arb_json(u, 2)?,
                };
                m.insert(key.into(), v);
            }
            for (k, v) in arb_object(u, 2)? {
                m.insert(k, v);
            }
            Value::Object(m)
        }
    })
}

fn arb_params(u: &mut Unstructured, method: &str) -> Result<Option<Value>> {
    Ok(match u.int_in_range(0u8..=7)? {
        0 => None,
        1 => Some(arb_json(u, 1)?),
        _ => {
            let mut p = Map::new();
            match method {
                "initialize" => {
                    let pv = match u.int_in_range(0u8..=4)? {
                        0 => arb_json(u, 2)?,
                        1 => Value::String(arb_string(u)?),
                        _ => Value::String((*u.choose(&common::LEGACY)?).into()),
                    };
                    if u.int_in_range(0u8..=6)? > 0 {
                        p.insert("protocolVersion".into(), pv);
                    }
                    if u.int_in_range(0u8..=6)? > 0 {
                        let c = if u.int_in_range(0u8..=5)? == 0 {
                            arb_json(u, 2)?
                        } else {
                            Value::Object(arb_object(u, 2)?)
                        };
                        p.insert("capabilities".into(), c);
                    }
                    if u.int_in_range(0u8..=6)? > 0 {
                        let ci = if u.int_in_range(0u8..=5)? == 0 {
                            arb_json(u, 2)?
                        } else {
                            let mut ci = arb_object(u, 2)?;
                            ci.insert(
                                "name".into(),
                                if bool::arbitrary(u)? { Value::String(arb_string(u)?) } else { arb_json(u, 3)? },
                            );
                            if u.int_in_range(0u8..=5)? > 0 {
                                ci.insert("version".into(), Value::String(arb_string(u)?));
                            }
                            Value::Object(ci)
                        };
                        p.insert("clientInfo".into(), ci);
                    }
                }
                "tools/call" => {
                    if u.int_in_range(0u8..=8)? > 0 {
                        let name = match u.int_in_range(0u8..=5)? {
                            0 => arb_json(u, 2)?,
                            1 => Value::String(arb_string(u)?),
                            _ => Value::String((*u.choose(&common::TOOL_NAMES)?).into()),
                        };
                        p.insert("name".into(), name);
                    }
                    if u.int_in_range(0u8..=5)? > 0 {
                        p.insert("arguments".into(), arb_arguments(u)?);
                    }
                }
                "tools/list" => {
                    if u.int_in_range(0u8..=3)? == 0 {
                        p.insert("cursor".into(), if bool::arbitrary(u)? { Value::Null } else { arb_json(u, 2)? });
                    }
                }
                _ => {}
            }
            if u.int_in_range(0u8..=2)? > 0 {
                p.insert("_meta".into(), arb_meta(u)?);
            }
            for (k, v) in arb_object(u, 2)? {
                if bool::arbitrary(u)? {
                    p.insert(k, v);
                }
            }
            Some(Value::Object(p))
        }
    })
}

/// One input line.
pub fn arb_line(u: &mut Unstructured) -> Result<Vec<u8>> {
    match u.int_in_range(0u8..=15)? {
        0 => return Ok(Vec::<u8>::arbitrary(u)?),
        1 => {
            let ws = [" ", "\t", "\r", ""];
            let n = u.int_in_range(0usize..=4)?;
            let mut s = String::new();
            for _ in 0..n {
                s.push_str(u.choose(&ws)?);
            }
            return Ok(s.into_bytes());
        }
        2 => return Ok(serde_json::to_vec(&arb_json(u, 0)?).unwrap()),
        _ => {}
    }
    // A message-shaped object, members in a chosen order, raw id token.
    let method = match u.int_in_range(0u8..=9)? {
        0 => None,
        1 => Some(serde_json::to_string(&arb_json(u, 1)?).unwrap()),
        2 => Some(serde_json::to_string(&arb_string(u)?).unwrap()),
        _ => Some(
            serde_json::to_string(*u.choose(&[
                "initialize",
                "notifications/initialized",
                "ping",
                "tools/list",
                "tools/call",
                "tools/call",
                "tools/call",
                "server/discover",
                "resources/list",
                "notifications/cancelled",
            ])?)
            .unwrap(),
        ),
    };
    let method_name: String = method.as_deref().and_then(|m| serde_json::from_str(m).ok()).unwrap_or_default();
    let mut members: Vec<(String, String)> = vec![];
    match u.int_in_range(0u8..=9)? {
        0 => {}
        1 => members.push(("jsonrpc".into(), serde_json::to_string(&arb_json(u, 1)?).unwrap())),
        _ => members.push(("jsonrpc".into(), "\"2.0\"".into())),
    }
    if let Some(id) = arb_id(u)? {
        members.push(("id".into(), id));
    }
    if let Some(m) = method {
        members.push(("method".into(), m));
    }
    if let Some(p) = arb_params(u, &method_name)? {
        members.push(("params".into(), serde_json::to_string(&p).unwrap()));
    }
    if u.int_in_range(0u8..=9)? == 0 {
        let k = if bool::arbitrary(u)? { "result" } else { "error" };
        members.push((k.into(), serde_json::to_string(&arb_json(u, 1)?).unwrap()));
    }
    if u.int_in_range(0u8..=9)? == 0 {
        // A duplicate or unknown member.
        let k = arb_string(u)?;
        members.push((k, serde_json::to_string(&arb_json(u, 1)?).unwrap()));
    }
    // Shuffle a little.
    for i in (1..members.len()).rev() {
        let j = u.int_in_range(0..=i)?;
        members.swap(i, j);
    }
    let pad = u.int_in_range(0u8..=7)? == 0;
    let sep = if pad { " : " } else { ":" };
    let mut s = String::from(if pad { " { " } else { "{" });
    for (i, (k, v)) in members.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push_str(&serde_json::to_string(k).unwrap());
        s.push_str(sep);
        s.push_str(v);
    }
    s.push('}');
    let mut b = s.into_bytes();
    match u.int_in_range(0u8..=15)? {
        0 => b.push(b'\r'),
        1 => b.extend_from_slice(b" \t"),
        2 => b.extend_from_slice(b"x"),
        3 => {
            // Corrupt one byte.
            if !b.is_empty() {
                let i = u.int_in_range(0..=b.len() - 1)?;
                b[i] = u8::arbitrary(u)?;
            }
        }
        4 => {
            // Truncate.
            let i = u.int_in_range(0..=b.len())?;
            b.truncate(i);
        }
        _ => {}
    }
    Ok(b)
}

// ---------------------------------------------------------------------------
// Host values for the projection target. `contract` = respect the host
// contract (valid compact JSON fragments, unique keys, no `lastModified`
// annotation key); otherwise fragments are arbitrary JSON and keys repeat.

fn frag(u: &mut Unstructured) -> Result<String> {
    Ok(serde_json::to_string(&arb_json(u, 3)?).unwrap())
}

fn members(u: &mut Unstructured, contract: bool, forbid: &[&str]) -> Result<Vec<(String, String)>> {
    let n = u.int_in_range(0usize..=4)?;
    let mut out: Vec<(String, String)> = vec![];
    for _ in 0..n {
        let k = arb_string(u)?;
        if contract && (out.iter().any(|(x, _)| *x == k) || forbid.contains(&k.as_str())) {
            continue;
        }
        out.push((k, frag(u)?));
    }
    Ok(out)
}

fn opt_string(u: &mut Unstructured) -> Result<Option<String>> {
    Ok(if bool::arbitrary(u)? { Some(arb_string(u)?) } else { None })
}

pub fn arb_block(u: &mut Unstructured, contract: bool) -> Result<Block> {
    let content = match u.int_in_range(0u8..=4)? {
        0 => Content::Text { text: arb_string(u)? },
        1 => Content::Image { data: arb_string(u)?, mime_type: arb_string(u)? },
        2 => Content::Audio { data: arb_string(u)?, mime_type: arb_string(u)? },
        3 => Content::ResourceLink {
            uri: arb_string(u)?,
            name: arb_string(u)?,
            title: opt_string(u)?,
            description: opt_string(u)?,
            mime_type: opt_string(u)?,
            size: if bool::arbitrary(u)? { Some(u64::arbitrary(u)?.to_string()) } else { None },
        },
        _ => {
            let text = bool::arbitrary(u)?;
            Content::Resource {
                uri: arb_string(u)?,
                mime_type: opt_string(u)?,
                text: if text { Some(arb_string(u)?) } else { None },
                blob: if text { None } else { Some(arb_string(u)?) },
            }
        }
    };
    let mut annotations = members(u, contract, &["lastModified"])?;
    if bool::arbitrary(u)? && !(contract && annotations.iter().any(|(k, _)| k == "last_modified")) {
        let at = u.int_in_range(0..=annotations.len())?;
        annotations.insert(at, ("last_modified".into(), serde_json::to_string(&arb_string(u)?).unwrap()));
    }
    Ok(Block { content, annotations, meta: members(u, contract, &[])? })
}

pub fn arb_result(u: &mut Unstructured, contract: bool) -> Result<ToolResult> {
    let n = u.int_in_range(0usize..=6)?;
    let mut content = vec![];
    for _ in 0..n {
        content.push(arb_block(u, contract)?);
    }
    Ok(ToolResult {
        content,
        structured: if bool::arbitrary(u)? { Some(frag(u)?) } else { None },
        is_error: bool::arbitrary(u)?,
        meta: members(u, contract, &[])?,
        // Resource changes are applied by the dispatcher, never projected.
        changes: Vec::new(),
    })
}

pub fn arb_tool(u: &mut Unstructured, contract: bool) -> Result<ToolSpec> {
    let schema = |u: &mut Unstructured| -> Result<String> {
        Ok(match u.int_in_range(0u8..=3)? {
            0 => frag(u)?,
            1 => {
                let mut m = arb_object(u, 2)?;
                m.insert("type".into(), Value::String("object".into()));
                serde_json::to_string(&Value::Object(m)).unwrap()
            }
            _ => {
                let mut m = Map::new();
                m.insert("type".into(), Value::String(arb_string(u)?));
                for (k, v) in arb_object(u, 2)? {
                    m.insert(k, v);
                }
                serde_json::to_string(&Value::Object(m)).unwrap()
            }
        })
    };
    Ok(ToolSpec {
        name: arb_string(u)?,
        description: arb_string(u)?,
        input_schema: schema(u)?,
        annotations: members(u, contract, &[])?,
        output_schema: if bool::arbitrary(u)? { Some(schema(u)?) } else { None },
    })
}
