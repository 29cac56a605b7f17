//! Checks on what the server wrote: the shape of every response line, and
//! each result, tool object, block and contained error against what it came
//! from (RULES P1–P3, J4.6, L6.6, M4.3, W3.3).

use mcplite_engine::host::{Block, Content, ToolFailure, ToolResult, ToolSpec};
use mcplite_engine::Version;
use serde_json::{Map, Value};

use super::fake_host::server_info_value;
use super::json::raw_members;
use super::{
    clip, js, keys, parse_unbounded, tool_specs, valid_id, CallRecord, Expect, ResultKind, INSTRUCTIONS,
    SERVER_INFO_KEY, TOOL_NAMES,
};

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
