//! The independent oracle: what the server must answer to a line (RULES
//! sections 3–6 and W1–W3), written from the spec text, with the legacy
//! session state it implies.

use mcplite_engine::Version;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::json::{members_in_order, raw_members};
use super::{
    has_reserved_name, nesting_depth, parse_unbounded, version_of, DEPTH_LIMIT_DETAIL, MAX_DEPTH, META_CAPS,
    META_VERSION, MODERN, TOOL_NAMES,
};

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
