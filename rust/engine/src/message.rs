//! Parsing one input line into a classified JSON-RPC message (SPEC W1–W3).

use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::Value;
use std::fmt;

use crate::json::is_valid_id_token;

/// What one line turned out to be.
#[derive(Debug)]
pub enum Incoming {
    /// Empty or whitespace only: ignored.
    Blank,
    /// Not strict JSON, invalid UTF-8, or too deep: `-32700`, id null.
    ParseError,
    /// A batch, a non-object, or an envelope-invalid object: `-32600`, with
    /// the id token when a valid one was present.
    InvalidRequest { id: Option<String> },
    /// An object without `method` that has `result` or `error`: ignored.
    ClientResponse,
    /// Envelope-valid: a request (with id) or a notification.
    Message(Message),
}

/// An envelope-valid message.
#[derive(Debug)]
pub struct Message {
    /// Raw id token, exactly as received; `None` for notifications.
    pub id: Option<String>,
    pub method: String,
    /// `params` member, when present (any JSON value, including `null`).
    pub params: Option<Value>,
}

fn is_json_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// Classify one line (already stripped of its LF and one trailing CR).
pub fn parse_line(line: &[u8]) -> Incoming {
    if line.iter().all(|b| is_json_ws(*b)) {
        return Incoming::Blank;
    }
    let text = match std::str::from_utf8(line) {
        Ok(t) => t,
        Err(_) => return Incoming::ParseError,
    };
    if too_deep(line) {
        return Incoming::ParseError;
    }
    let top = match parse_top(text) {
        Some(t) => t,
        None => {
            // A lone surrogate escape ("\ud800") is valid JSON grammar that
            // serde_json refuses: such escapes are read as U+FFFD, and the id
            // token is still echoed exactly as received (W3.4).
            let Some(fixed) = repair_lone_surrogates(text) else {
                return Incoming::ParseError;
            };
            let Some(mut top) = parse_top(&fixed) else {
                return Incoming::ParseError;
            };
            if let Top::Object(Envelope { id: Some(id), id_at, .. }) = &mut top {
                // `fixed` has the original's layout: same offsets, same lengths
                if let Some(original) = text.get(*id_at..*id_at + id.len()) {
                    *id = original.to_owned();
                }
            }
            top
        }
    };
    match top {
        Top::NotObject => Incoming::InvalidRequest { id: None },
        Top::Object(env) => classify(env),
    }
}

/// The top-level value of `text`, if it is one strict JSON value.
fn parse_top(text: &str) -> Option<Top> {
    let mut de = serde_json::Deserializer::from_str(text);
    de.disable_recursion_limit();
    let top = TopSeed { base: text.as_ptr() as usize }.deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(top)
}

/// `text` with every `\uD800`-`\uDFFF` escape that is not half of a
/// high-low pair replaced by `\uFFFD` (same length, so offsets are kept);
/// `None` when there is none. Only escapes inside strings count.
fn repair_lone_surrogates(text: &str) -> Option<String> {
    let b = text.as_bytes();
    if !b.contains(&b'\\') {
        return None;
    }
    // the code unit of a `\uXXXX` escape starting at `i`
    let unit = |i: usize| -> Option<u32> {
        if b.get(i) != Some(&b'\\') || b.get(i + 1) != Some(&b'u') {
            return None;
        }
        std::str::from_utf8(b.get(i + 2..i + 6)?).ok().and_then(|h| u32::from_str_radix(h, 16).ok())
    };
    let mut out: Option<Vec<u8>> = None;
    let (mut i, mut in_str) = (0, false);
    while i < b.len() {
        match (in_str, b[i]) {
            (_, b'"') => {
                in_str = !in_str;
                i += 1;
            }
            (true, b'\\') => match unit(i) {
                Some(0xD800..=0xDBFF) if matches!(unit(i + 6), Some(0xDC00..=0xDFFF)) => i += 12,
                Some(0xD800..=0xDFFF) => {
                    out.get_or_insert_with(|| b.to_vec())[i..i + 6].copy_from_slice(b"\\uFFFD");
                    i += 6;
                }
                // another escape: skip the backslash and the escaped byte
                _ => i += 2,
            },
            _ => i += 1,
        }
    }
    // only ASCII bytes were replaced by ASCII bytes
    out.map(|v| String::from_utf8(v).expect("still UTF-8"))
}

/// Deepest nesting of arrays and objects a message may have (SPEC W1.3 asks
/// for at least 128).
pub const MAX_DEPTH: usize = 512;

/// Does the line nest arrays/objects deeper than [`MAX_DEPTH`]? Brackets
/// inside strings do not count. Lines with few brackets skip the scan.
fn too_deep(line: &[u8]) -> bool {
    let opens = line.iter().filter(|b| matches!(b, b'[' | b'{')).count();
    if opens <= MAX_DEPTH {
        return false;
    }
    let mut depth = 0usize;
    let mut in_str = false;
    let mut escaped = false;
    for &b in line {
        if in_str {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_str = false;
            }
            continue;
        }
        match b {
            b'"' => in_str = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

fn classify(env: Envelope) -> Incoming {
    let id_valid = env.id.as_deref().map(is_valid_id_token);
    let method = match env.method {
        Some(Value::String(m)) => Some(m),
        Some(_) => None,
        None => {
            if env.has_result_or_error {
                return Incoming::ClientResponse;
            }
            None
        }
    };
    let jsonrpc_ok = matches!(&env.jsonrpc, Some(Value::String(s)) if s == "2.0");
    match (method, jsonrpc_ok, id_valid) {
        (Some(method), true, None) => Incoming::Message(Message { id: None, method, params: env.params }),
        (Some(method), true, Some(true)) => Incoming::Message(Message { id: env.id, method, params: env.params }),
        (_, _, Some(true)) => Incoming::InvalidRequest { id: env.id },
        _ => Incoming::InvalidRequest { id: None },
    }
}

/// Like serde's `IgnoredAny`, but through `deserialize_any`, so that
/// serde_json's nesting limit applies to skipped values too.
struct Skip;

impl<'de> Deserialize<'de> for Skip {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Skip, D::Error> {
        d.deserialize_any(SkipVisitor)
    }
}

struct SkipVisitor;

impl<'de> Visitor<'de> for SkipVisitor {
    type Value = Skip;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Skip, A::Error> {
        while seq.next_element::<Skip>()?.is_some() {}
        Ok(Skip)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Skip, A::Error> {
        while map.next_key::<Skip>()?.is_some() {
            map.next_value::<Skip>()?;
        }
        Ok(Skip)
    }
}

// Built once per line and matched at once: boxing the envelope would only add
// an allocation per message.
#[allow(clippy::large_enum_variant)]
enum Top {
    NotObject,
    Object(Envelope),
}

#[derive(Default)]
struct Envelope {
    jsonrpc: Option<Value>,
    method: Option<Value>,
    id: Option<String>,
    /// Byte offset of the id token in the line.
    id_at: usize,
    params: Option<Value>,
    has_result_or_error: bool,
}

/// `base`: address of the line's first byte, to locate the id token.
struct TopSeed {
    base: usize,
}

impl<'de> DeserializeSeed<'de> for TopSeed {
    type Value = Top;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Top, D::Error> {
        d.deserialize_any(TopVisitor { base: self.base })
    }
}

struct TopVisitor {
    base: usize,
}

macro_rules! not_object {
    ($($name:ident: $t:ty),*) => {
        $(fn $name<E: de::Error>(self, _v: $t) -> Result<Top, E> { Ok(Top::NotObject) })*
    };
}

impl<'de> Visitor<'de> for TopVisitor {
    type Value = Top;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    not_object!(visit_bool: bool, visit_i64: i64, visit_u64: u64, visit_f64: f64, visit_str: &str);
    fn visit_unit<E: de::Error>(self) -> Result<Top, E> {
        Ok(Top::NotObject)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Top, A::Error> {
        while seq.next_element::<Skip>()?.is_some() {}
        Ok(Top::NotObject)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Top, A::Error> {
        let mut env = Envelope::default();
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            match key.as_ref() {
                "jsonrpc" => env.jsonrpc = Some(map.next_value()?),
                "method" => env.method = Some(map.next_value()?),
                "params" => env.params = Some(map.next_value()?),
                "id" => {
                    let raw: &'de RawValue = map.next_value()?;
                    env.id_at = (raw.get().as_ptr() as usize).wrapping_sub(self.base);
                    env.id = Some(raw.get().to_owned());
                }
                "result" | "error" => {
                    map.next_value::<Skip>()?;
                    env.has_result_or_error = true;
                }
                _ => {
                    map.next_value::<Skip>()?;
                }
            }
        }
        Ok(Top::Object(env))
    }
}

/// Does any string in `v` (member names included) contain U+0000? Such a
/// value cannot become an R string (SPEC J6.2).
pub fn contains_nul(v: &Value) -> bool {
    match v {
        Value::String(s) => s.contains('\0'),
        Value::Array(a) => a.iter().any(contains_nul),
        Value::Object(m) => m.iter().any(|(k, v)| k.contains('\0') || contains_nul(v)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lone_surrogate_escapes_are_replaced_in_place() {
        let fix = |t: &str| repair_lone_surrogates(t);
        assert_eq!(fix(r#"["\ud800"]"#).as_deref(), Some(r#"["\uFFFD"]"#));
        assert_eq!(fix(r#"["a\udc00b","\uDBFF"]"#).as_deref(), Some(r#"["a\uFFFDb","\uFFFD"]"#));
        // reversed pair: both halves are lone
        assert_eq!(fix(r#"["\ude00\ud83d"]"#).as_deref(), Some(r#"["\uFFFD\uFFFD"]"#));
        // a high half followed by a pair
        assert_eq!(fix(r#"["\ud800\ud800\udc00"]"#).as_deref(), Some(r#"["\uFFFD\ud800\udc00"]"#));
        // nothing to do: a pair, other escapes, an escaped backslash, no escapes
        assert_eq!(fix(r#"["\ud83d\ude00"]"#), None);
        assert_eq!(fix(r#"["\u0041\n\"\\"]"#), None);
        assert_eq!(fix(r#"["\\ud800"]"#), None);
        assert_eq!(fix(r#"{"a":1}"#), None);
        // a high half at the very end of the text
        assert_eq!(fix(r#""\ud800"#).as_deref(), Some(r#""\uFFFD"#));
    }

    fn id_of(i: Incoming) -> Option<String> {
        match i {
            Incoming::InvalidRequest { id } => id,
            other => panic!("not invalid: {other:?}"),
        }
    }

    #[test]
    fn blank_and_parse_errors() {
        assert!(matches!(parse_line(b""), Incoming::Blank));
        assert!(matches!(parse_line(b" \t \r"), Incoming::Blank));
        for bad in [
            &b"{"[..],
            b"{\"a\":1} x",
            b"NaN",
            b"{\"a\":NaN}",
            b"// c\n{}",
            b"\xff{}",
            b"{\"a\":\"\xc3\"}",
            b"'x'",
            b"{\"a\":1,}",
        ] {
            assert!(matches!(parse_line(bad), Incoming::ParseError), "{:?}", String::from_utf8_lossy(bad));
        }
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        assert!(matches!(parse_line(deep.as_bytes()), Incoming::ParseError));
        // MAX_DEPTH levels in all (the top object included) are fine; one
        // more is a parse error. Brackets inside strings do not count.
        let nested = |d: usize| {
            format!("{{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":{}{}}}", "[".repeat(d - 1), "]".repeat(d - 1))
        };
        assert!(matches!(parse_line(nested(128).as_bytes()), Incoming::Message(_)));
        assert!(matches!(parse_line(nested(MAX_DEPTH).as_bytes()), Incoming::Message(_)));
        assert!(matches!(parse_line(nested(MAX_DEPTH + 1).as_bytes()), Incoming::ParseError));
        let in_string = format!("{{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":[\"{}\\\"\"]}}", "[{".repeat(2000));
        assert!(matches!(parse_line(in_string.as_bytes()), Incoming::Message(_)));
    }

    #[test]
    fn non_objects_and_batches() {
        for line in ["[]", "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", "null", "1", "\"s\"", "true"] {
            assert_eq!(id_of(parse_line(line.as_bytes())), None, "{line}");
        }
    }

    #[test]
    fn envelope_validation() {
        assert_eq!(id_of(parse_line(br#"{"jsonrpc":"2.0","id":73}"#)), Some("73".into()));
        assert_eq!(id_of(parse_line(br#"{"method":"ping"}"#)), None);
        assert_eq!(id_of(parse_line(br#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#)), None);
        assert_eq!(id_of(parse_line(br#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#)), None);
        assert_eq!(id_of(parse_line(br#"{"jsonrpc":"1.0","id":"x","method":"ping"}"#)), Some("\"x\"".into()));
        assert_eq!(id_of(parse_line(br#"{"jsonrpc":"2.0","id":2,"method":3}"#)), Some("2".into()));
        assert!(matches!(parse_line(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#), Incoming::ClientResponse));
        assert!(matches!(parse_line(br#"{"id":1,"error":{}}"#), Incoming::ClientResponse));
    }

    #[test]
    fn ids_kept_byte_for_byte() {
        for id in [r#""a\u0041""#, "12345678901234567890", "-0", r#""""#] {
            let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
            match parse_line(line.as_bytes()) {
                Incoming::Message(m) => assert_eq!(m.id.as_deref(), Some(id)),
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn notification_vs_request() {
        match parse_line(br#"{"jsonrpc":"2.0","method":"notifications/initialized","params":{"x":[1]}}"#) {
            Incoming::Message(m) => {
                assert!(m.id.is_none());
                assert_eq!(m.method, "notifications/initialized");
                assert!(m.params.is_some());
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn nul_detection() {
        let v: Value = serde_json::from_str(r#"{"a":["x\u0000"]}"#).unwrap();
        assert!(contains_nul(&v));
        let v: Value = serde_json::from_str(r#"{"a\u0000":1}"#).unwrap();
        assert!(contains_nul(&v));
        let v: Value = serde_json::from_str(r#"{"a":"ok"}"#).unwrap();
        assert!(!contains_nul(&v));
    }
}
