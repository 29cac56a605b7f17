//! The mirrored headers of a modern request (RULES H2.1, 2026-07-28):
//! `MCP-Protocol-Version` equal to the body's claim, `Mcp-Method` equal to
//! `method`, `Mcp-Name` equal to the name of `tools/call` and `prompts/get`,
//! to the URI of `resources/read` and to the `taskId` of `tasks/get`,
//! `tasks/update` and `tasks/cancel` (plain or `=?base64?…?=`). One missing
//! or different is `400` with `-32020`.

use base64::Engine as _;
use hyper::header::HeaderMap;
use hyper::StatusCode;
use serde_json::Value;

use super::response::{error_resp, header, Resp};
use crate::codes::HEADER_MISMATCH;
use crate::message::Message;
use crate::version::{self, Era};

/// The answer to a request whose headers do not mirror its body.
pub(super) fn mismatch(id: Option<&str>, what: &str) -> Resp {
    error_resp(StatusCode::BAD_REQUEST, id, HEADER_MISMATCH, &format!("Header mismatch: {what}"))
}

/// Decode a header value that may use the `=?base64?…?=` form.
fn decode_mirrored(v: &str) -> Option<String> {
    match v.strip_prefix("=?base64?").and_then(|r| r.strip_suffix("?=")) {
        Some(enc) => {
            let raw = base64::engine::general_purpose::STANDARD.decode(enc).ok()?;
            String::from_utf8(raw).ok()
        }
        None => Some(v.to_string()),
    }
}

/// Check the mirrored headers of modern message `msg`, whose body's era
/// ([`version::era_of`]) is `body`; the error says what differs.
pub(super) fn check(h: &HeaderMap, msg: &Message, body: Era<'_>) -> Result<(), String> {
    let id_less = msg.id.is_none();
    let Some(hv) = header(h, "mcp-protocol-version") else {
        return Err("missing MCP-Protocol-Version header".into());
    };
    match body {
        Era::Modern { meta } => {
            if let Some(Value::String(claim)) = meta.get(version::META_VERSION) {
                if claim != hv {
                    return Err(format!(
                        "MCP-Protocol-Version header value '{hv}' does not match body value '{claim}'"
                    ));
                }
            }
        }
        Era::Legacy if id_less => {}
        Era::Legacy => {
            return Err(format!("MCP-Protocol-Version header value '{hv}' but the body claims no version in _meta"))
        }
    }
    if id_less {
        return Ok(());
    }
    match header(h, "mcp-method") {
        None => return Err("missing Mcp-Method header".into()),
        Some(m) if m != msg.method => {
            return Err(format!("Mcp-Method header value '{m}' does not match body value '{}'", msg.method))
        }
        Some(_) => {}
    }
    // The value Mcp-Name mirrors: a tool's or a prompt's name, a resource's
    // URI, a task's id (RULES V4.4: proxies route tasks by it).
    let source = match msg.method.as_str() {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        "tasks/get" | "tasks/update" | "tasks/cancel" => Some("taskId"),
        _ => None,
    };
    if let Some(source) = source {
        let name = msg.params.as_ref().and_then(|p| p.get(source)).and_then(Value::as_str);
        if let Some(name) = name {
            match header(h, "mcp-name") {
                None => return Err("missing Mcp-Name header".into()),
                Some(raw) => match decode_mirrored(raw) {
                    Some(n) if n == name => {}
                    Some(n) => return Err(format!("Mcp-Name header value '{n}' does not match body value '{name}'")),
                    None => return Err("Mcp-Name header value is not valid base64 UTF-8".into()),
                },
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_names() {
        assert_eq!(decode_mirrored("=?base64?SGVsbG8sIOS4lueVjA==?="), Some("Hello, 世界".into()));
        assert_eq!(decode_mirrored("plain"), Some("plain".into()));
        assert_eq!(decode_mirrored("=?base64?***?="), None);
    }

    /// RULES H2.1: Mcp-Name mirrors a prompt's name, a resource's URI and a
    /// task's id.
    #[test]
    fn names_of_prompts_and_uris_of_resources() {
        use crate::message::{parse_line, Incoming};
        let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}"#;
        let cases = [
            ("prompts/get", format!(r#"{{"name":"review",{meta}}}"#), "review"),
            ("resources/read", format!(r#"{{"uri":"data://iris",{meta}}}"#), "data://iris"),
            // RULES V4.4: proxies route a task's requests by it.
            ("tasks/get", format!(r#"{{"taskId":"r1.0a",{meta}}}"#), "r1.0a"),
            ("tasks/update", format!(r#"{{"taskId":"r1.0a",{meta}}}"#), "r1.0a"),
            ("tasks/cancel", format!(r#"{{"taskId":"r1.0a",{meta}}}"#), "r1.0a"),
        ];
        for (method, params, name) in cases {
            let line = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{params}}}"#);
            let Incoming::Message(msg) = parse_line(line.as_bytes()) else { panic!("{line}") };
            let era = version::era_of(msg.params.as_ref());
            let mut h = HeaderMap::new();
            h.insert("mcp-protocol-version", "2026-07-28".parse().unwrap());
            h.insert("mcp-method", method.parse().unwrap());
            assert_eq!(check(&h, &msg, era), Err("missing Mcp-Name header".into()));
            h.insert("mcp-name", "other".parse().unwrap());
            assert!(check(&h, &msg, era).unwrap_err().contains("does not match"));
            h.insert("mcp-name", name.parse().unwrap());
            assert_eq!(check(&h, &msg, era), Ok(()));
        }
    }
}
