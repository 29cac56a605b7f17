//! The client's side of JSON-RPC: request and notification lines written as
//! bytes (parameter values arrive already encoded as JSON text), and the
//! classification of what a server sends back.

use serde_json::{Map, Value};

use crate::json::{write_i64, write_members, write_str};

use super::Event;

/// One member of a request's `params`: the key and its value as JSON text.
pub type Member<'a> = (&'a str, &'a str);

/// `{"jsonrpc":"2.0","id":<id>,"method":<method>,"params":{...}}` (without
/// `params` when there are no members and no `_meta`). `meta` members go
/// into `params._meta`.
pub fn request_line(id: u64, method: &str, members: &[Member], meta: &[Member]) -> Vec<u8> {
    let mut out = Vec::with_capacity(96 + members.iter().map(|(k, v)| k.len() + v.len() + 4).sum::<usize>());
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    write_i64(&mut out, id as i64);
    out.extend_from_slice(b",\"method\":");
    write_str(&mut out, method);
    write_params(&mut out, members, meta);
    out.push(b'}');
    out
}

/// A notification line (no id).
pub fn notification_line(method: &str, members: &[Member]) -> Vec<u8> {
    let mut out = Vec::with_capacity(64);
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"method\":");
    write_str(&mut out, method);
    write_params(&mut out, members, &[]);
    out.push(b'}');
    out
}

fn write_params(out: &mut Vec<u8>, members: &[Member], meta: &[Member]) {
    if members.is_empty() && meta.is_empty() {
        return;
    }
    out.extend_from_slice(b",\"params\":{");
    write_members(out, members);
    if !meta.is_empty() {
        if !members.is_empty() {
            out.push(b',');
        }
        out.extend_from_slice(b"\"_meta\":{");
        write_members(out, meta);
        out.push(b'}');
    }
    out.push(b'}');
}

/// A JSON string literal.
pub fn json_string(s: &str) -> String {
    let mut out = Vec::with_capacity(s.len() + 2);
    write_str(&mut out, s);
    String::from_utf8(out).expect("escaped UTF-8 stays UTF-8")
}

/// A response the client sends to a server's request (only `ping` is
/// answered with a result; everything else with an error).
pub fn response_line(id: &Value, result: Option<&str>, error: Option<(i64, &str)>) -> Vec<u8> {
    let mut out = Vec::with_capacity(96);
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    out.extend_from_slice(serde_json::to_string(id).unwrap_or_else(|_| "null".into()).as_bytes());
    match (result, error) {
        (Some(r), _) => {
            out.extend_from_slice(b",\"result\":");
            out.extend_from_slice(r.as_bytes());
        }
        (None, Some((code, message))) => {
            out.extend_from_slice(b",\"error\":{\"code\":");
            write_i64(&mut out, code);
            out.extend_from_slice(b",\"message\":");
            write_str(&mut out, message);
            out.push(b'}');
        }
        (None, None) => out.extend_from_slice(b",\"result\":{}"),
    }
    out.push(b'}');
    out
}

/// What one message from the server is.
#[derive(Debug)]
pub enum Kind {
    /// A response to one of our requests: our numeric id, then the result or
    /// the error object.
    Response { id: Option<u64>, outcome: Result<Value, Value> },
    /// A request from the server (answered by the client).
    Request { id: Value, method: String, params: Option<Value> },
    /// A notification.
    Notification { method: String, params: Option<Value> },
    /// A JSON value that is not a JSON-RPC message.
    Invalid,
}

/// Classify one parsed message.
pub fn classify(v: Value) -> Kind {
    let Value::Object(mut m) = v else {
        return Kind::Invalid;
    };
    if let Some(Value::String(method)) = m.get("method") {
        let method = method.clone();
        return match m.remove("id") {
            Some(id) if !id.is_null() => Kind::Request { id, method, params: m.remove("params") },
            _ => Kind::Notification { method, params: m.remove("params") },
        };
    }
    let has_result = m.contains_key("result");
    let has_error = m.contains_key("error");
    if !(has_result || has_error) || !m.contains_key("id") {
        return Kind::Invalid;
    }
    let id = m.get("id").and_then(id_number);
    let outcome = if has_error { Err(m.remove("error").unwrap_or(Value::Null)) } else { Ok(take(&mut m, "result")) };
    Kind::Response { id, outcome }
}

fn take(m: &mut Map<String, Value>, k: &str) -> Value {
    m.remove(k).unwrap_or(Value::Null)
}

/// Our ids are non-negative integers; a server echoes them back.
fn id_number(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64(),
        _ => None,
    }
}

/// The pieces of a JSON-RPC error object, tolerating sloppy servers: a
/// missing message becomes empty, a non-integer code becomes 0.
pub fn error_parts(e: &Value) -> (i64, String, Option<Box<Value>>) {
    let code = e.get("code").and_then(|c| c.as_i64().or_else(|| c.as_f64().map(|f| f as i64))).unwrap_or(0);
    let message = match e.get("message") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    };
    (code, message, e.get("data").cloned().map(Box::new))
}

/// A short, printable excerpt of a line that is not a JSON-RPC message.
pub(crate) fn excerpt(line: &[u8]) -> String {
    const MAX: usize = 200;
    let s = String::from_utf8_lossy(&line[..line.len().min(MAX)]).into_owned();
    if line.len() > MAX {
        format!("{s}... ({} bytes)", line.len())
    } else {
        s
    }
}

/// Parse one framed line and deliver what it holds.
pub(crate) fn emit_line(line: &[u8], emit: &mut dyn FnMut(Event)) {
    if line.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n')) {
        return;
    }
    match serde_json::from_slice::<Value>(line) {
        Ok(Value::Array(items)) if !items.is_empty() => {
            for v in items {
                emit(Event::Message(v));
            }
        }
        Ok(v @ Value::Object(_)) => emit(Event::Message(v)),
        _ => emit(Event::Garbage(excerpt(line))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_lines() {
        let l = request_line(7, "tools/call", &[("name", "\"add\""), ("arguments", "{\"x\":1}")], &[]);
        assert_eq!(
            String::from_utf8(l).unwrap(),
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"add","arguments":{"x":1}}}"#
        );
        let l = request_line(1, "tools/list", &[], &[]);
        assert_eq!(String::from_utf8(l).unwrap(), r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
        let l = request_line(2, "tools/list", &[], &[("progressToken", "2")]);
        assert_eq!(
            String::from_utf8(l).unwrap(),
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"progressToken":2}}}"#
        );
        let n = notification_line("notifications/cancelled", &[("requestId", "3")]);
        assert_eq!(
            String::from_utf8(n).unwrap(),
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}"#
        );
        let r = response_line(&Value::from("p1"), Some("{}"), None);
        assert_eq!(String::from_utf8(r).unwrap(), r#"{"jsonrpc":"2.0","id":"p1","result":{}}"#);
        let r = response_line(&Value::from(4), None, Some((-32601, "Method not found")));
        assert_eq!(
            String::from_utf8(r).unwrap(),
            r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"Method not found"}}"#
        );
        assert_eq!(json_string("a\"b\n"), r#""a\"b\n""#);
    }

    fn parse(s: &str) -> Value {
        serde_json::from_str(s).unwrap()
    }

    #[test]
    fn classifies_messages() {
        match classify(parse(r#"{"jsonrpc":"2.0","id":3,"result":{"a":1}}"#)) {
            Kind::Response { id: Some(3), outcome: Ok(v) } => assert_eq!(v["a"], 1),
            k => panic!("{k:?}"),
        }
        match classify(parse(r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"nope"}}"#)) {
            Kind::Response { id: Some(3), outcome: Err(e) } => {
                assert_eq!(error_parts(&e), (-32601, "nope".to_string(), None))
            }
            k => panic!("{k:?}"),
        }
        assert!(matches!(
            classify(parse(r#"{"jsonrpc":"2.0","id":null,"error":{}}"#)),
            Kind::Response { id: None, .. }
        ));
        assert!(matches!(
            classify(parse(r#"{"jsonrpc":"2.0","id":"s1","method":"ping"}"#)),
            Kind::Request { method, .. } if method == "ping"
        ));
        assert!(matches!(
            classify(parse(r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}"#)),
            Kind::Notification { method, params: Some(_) } if method == "notifications/progress"
        ));
        assert!(matches!(classify(parse("[1,2]")), Kind::Invalid));
        assert!(matches!(classify(parse(r#"{"jsonrpc":"2.0"}"#)), Kind::Invalid));
        assert!(matches!(classify(parse(r#"{"result":1}"#)), Kind::Invalid));
    }
}
