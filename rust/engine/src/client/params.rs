//! `x-mcp-header` (2026-07-28, Streamable HTTP): a tool's input schema may
//! ask for some argument values to be mirrored into `Mcp-Param-{name}`
//! headers. The client must send them, and must drop from `tools/list` a
//! tool whose annotations break the rules:
//! - the value is a non-empty HTTP token (RFC 9110 `tchar`s), unique among
//!   the tool's annotations ignoring case;
//! - the annotated property has type `string`, `integer` or `boolean`;
//! - the property is reached from the root through `properties` keys only
//!   (never through `items`, composition, conditionals, `$ref`, ...).

use serde_json::{Map, Value};

/// One mirrored argument: the chain of property names, and the header's
/// name part.
#[derive(Debug, Clone, PartialEq)]
pub struct HeaderParam {
    pub path: Vec<String>,
    pub name: String,
}

fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// Keywords whose value is a subschema or a list of them, and keywords whose
/// value maps names to subschemas.
const SUBS: [&str; 14] = [
    "items",
    "additionalProperties",
    "unevaluatedProperties",
    "unevaluatedItems",
    "propertyNames",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "prefixItems",
    "allOf",
    "anyOf",
    "oneOf",
];
const MAPS: [&str; 4] = ["patternProperties", "dependentSchemas", "$defs", "definitions"];

/// The mirrored arguments of an input schema, or why the tool is invalid.
pub fn header_params(schema: &Value) -> Result<Vec<HeaderParam>, String> {
    let mut out = Vec::new();
    walk(schema, &mut Vec::new(), true, &mut out)?;
    let mut seen = std::collections::HashSet::new();
    for p in &out {
        if !seen.insert(p.name.to_ascii_lowercase()) {
            return Err(format!("x-mcp-header \"{}\" is used twice", p.name));
        }
    }
    Ok(out)
}

fn walk(node: &Value, path: &mut Vec<String>, reachable: bool, out: &mut Vec<HeaderParam>) -> Result<(), String> {
    let Value::Object(m) = node else {
        return Ok(());
    };
    if let Some(h) = m.get("x-mcp-header") {
        annotation(m, h, path, reachable, out)?;
    }
    if let Some(Value::Object(props)) = m.get("properties") {
        for (k, v) in props {
            path.push(k.clone());
            walk(v, path, reachable, out)?;
            path.pop();
        }
    }
    for (k, v) in m {
        let sub = SUBS.contains(&k.as_str());
        let map = MAPS.contains(&k.as_str());
        match v {
            Value::Object(sub) if map => {
                for s in sub.values() {
                    walk(s, path, false, out)?;
                }
            }
            Value::Object(_) if sub => walk(v, path, false, out)?,
            Value::Array(items) if sub => {
                for s in items {
                    walk(s, path, false, out)?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

fn annotation(
    m: &Map<String, Value>,
    h: &Value,
    path: &[String],
    reachable: bool,
    out: &mut Vec<HeaderParam>,
) -> Result<(), String> {
    let Value::String(name) = h else {
        return Err("an x-mcp-header value is not a string".into());
    };
    if name.is_empty() || !name.bytes().all(is_tchar) {
        return Err(format!("x-mcp-header \"{name}\" is not a valid header name"));
    }
    if !reachable || path.is_empty() {
        return Err(format!("x-mcp-header \"{name}\" is not on a property reached through `properties` only"));
    }
    match m.get("type").and_then(Value::as_str) {
        Some("string" | "integer" | "boolean") => {}
        _ => return Err(format!("x-mcp-header \"{name}\" is on a property that is not a string, integer or boolean")),
    }
    out.push(HeaderParam { path: path.to_vec(), name: name.clone() });
    Ok(())
}

/// The `Mcp-Param-*` headers for one call's arguments (absent or `null`
/// values send no header; values of another type than declared send none
/// either, and the server judges the call).
pub fn headers_for(params: &[HeaderParam], arguments: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for p in params {
        let mut v = arguments;
        for k in &p.path {
            match v.get(k) {
                Some(x) => v = x,
                None => {
                    v = &Value::Null;
                    break;
                }
            }
        }
        let text = match v {
            Value::String(s) => s.clone(),
            Value::Bool(b) => b.to_string(),
            Value::Number(n) => match n.as_i64() {
                Some(i) if i.unsigned_abs() < (1u64 << 53) => i.to_string(),
                _ => continue,
            },
            _ => continue,
        };
        out.push((format!("Mcp-Param-{}", p.name), super::http_link::header_value(&text)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn annotations_are_found_and_checked() {
        let s = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "opts": {"type": "object", "properties": {"tenant": {"type": "integer", "x-mcp-header": "Tenant"}}},
            "query": {"type": "string", "default": {"x-mcp-header": "not a schema"}}
        }});
        let p = header_params(&s).unwrap();
        assert_eq!(
            p,
            vec![
                HeaderParam { path: vec!["region".into()], name: "Region".into() },
                HeaderParam { path: vec!["opts".into(), "tenant".into()], name: "Tenant".into() },
            ]
        );
        let args = json!({"region": "Hello, 世界", "opts": {"tenant": 42}, "query": "x"});
        assert_eq!(
            headers_for(&p, &args),
            vec![
                ("Mcp-Param-Region".to_string(), "=?base64?SGVsbG8sIOS4lueVjA==?=".to_string()),
                ("Mcp-Param-Tenant".to_string(), "42".to_string())
            ]
        );
        assert_eq!(headers_for(&p, &json!({"region": null})), vec![]);
        assert_eq!(header_params(&json!({"type": "object"})).unwrap(), vec![]);

        let bad = [
            json!({"properties": {"a": {"type": "number", "x-mcp-header": "A"}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": "has space"}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": ""}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": "A"}, "b": {"type": "string", "x-mcp-header": "a"}}}),
            json!({"properties": {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}}}),
            json!({"properties": {"a": {"anyOf": [{"type": "string", "x-mcp-header": "A"}]}}}),
            json!({"$defs": {"d": {"type": "string", "x-mcp-header": "A"}}}),
            json!({"type": "object", "x-mcp-header": "Root"}),
        ];
        for b in bad {
            assert!(header_params(&b).is_err(), "{b}");
        }
    }
}
