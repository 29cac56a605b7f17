//! Parsing one input line into a classified JSON-RPC message (RULES W1–W3).

use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::fmt;

use crate::json::is_valid_id_token;

/// What one line turned out to be.
#[derive(Debug)]
pub enum Incoming {
    /// Empty or whitespace only: ignored.
    Blank,
    /// Not strict JSON or invalid UTF-8: `-32700`, id null.
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
    /// When [`Message::over_limit`] is set and the excess is inside
    /// `params`, this holds only the members of a `params` object that
    /// could be read (enough to name the span and to tell the era).
    pub params: Option<Value>,
    /// The line is well-formed JSON but exceeds one of the engine's limits
    /// (RULES W1.4): the message is answered with an error, never run.
    pub over_limit: Option<OverLimit>,
}

/// An engine limit that a well-formed line exceeded (RULES W1.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// Arrays and objects nested deeper than [`MAX_DEPTH`] levels.
    Depth,
    /// A member name that serde_json reserves for its own use
    /// (`$serde_json::private::RawValue`, `$serde_json::private::Number`)
    /// in a value the engine has to decode: valid JSON the engine cannot
    /// read.
    ReservedName,
}

impl Limit {
    /// The detail of the error message, naming the limit (RULES L8).
    pub fn detail(self) -> &'static str {
        match self {
            Limit::Depth => DEPTH_DETAIL,
            Limit::ReservedName => "a member name is reserved by the JSON reader",
        }
    }
}

/// Where a well-formed line exceeded a limit (RULES W1.4). The dispatcher
/// answers `-32602 Invalid params` when the excess is inside `params` and
/// `-32600 Invalid Request` otherwise, with [`Limit::detail`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OverLimit {
    pub limit: Limit,
    /// The excess is inside `params` (and nowhere else).
    pub in_params: bool,
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
        // Reading it whole would recurse too deep: read the top level only.
        return parse_shallow(text, repair_lone_surrogates(text), Limit::Depth);
    }
    let top = match parse_top(text) {
        Some(t) => t,
        None => {
            // A lone surrogate escape ("\ud800") is valid JSON grammar that
            // serde_json refuses: such escapes are read as U+FFFD, and the id
            // token is still echoed exactly as received (W3.4).
            let fixed = repair_lone_surrogates(text);
            match fixed.as_deref().and_then(parse_top) {
                Some(mut top) => {
                    if let Top::Object(Envelope { id: Some(id), id_at, .. }) = &mut top {
                        // `fixed` has the original's layout: same offsets, same lengths
                        if let Some(original) = text.get(*id_at..*id_at + id.len()) {
                            *id = original.to_owned();
                        }
                    }
                    top
                }
                // Not JSON (a parse error), or JSON that the full reader
                // cannot decode (W1.4).
                None => return parse_shallow(text, fixed, Limit::ReservedName),
            }
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

/// Deepest nesting of arrays and objects a message may have, the top-level
/// object included (RULES W1.3 asks for at least 128; deeper well-formed
/// lines are answered per W1.4).
pub const MAX_DEPTH: usize = 512;

/// [`Limit::Depth`]'s detail; names [`MAX_DEPTH`] (checked by a test).
const DEPTH_DETAIL: &str = "nesting deeper than the limit of 512 levels";

/// Does the line nest arrays/objects deeper than [`MAX_DEPTH`]? Brackets
/// inside strings do not count. Lines with few brackets skip the scan.
fn too_deep(line: &[u8]) -> bool {
    let opens = line.iter().filter(|b| matches!(b, b'[' | b'{')).count();
    opens > MAX_DEPTH && deeper_than(line, MAX_DEPTH)
}

/// Does JSON text `json` nest arrays/objects deeper than `max` levels?
/// Brackets inside strings do not count.
fn deeper_than(json: &[u8], max: usize) -> bool {
    let mut depth = 0usize;
    let mut in_str = false;
    let mut escaped = false;
    for &b in json {
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
                if depth > max {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// Decode JSON text known to nest at most [`MAX_DEPTH`] levels (into a
/// [`Value`], raw values or members), or made by the host (its encoder
/// bounds the depth).
pub(crate) fn decode_bounded<'a, T: Deserialize<'a>>(json: &'a str) -> Result<T, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(json);
    de.disable_recursion_limit();
    let v = T::deserialize(&mut de)?;
    de.end()?;
    Ok(v)
}

/// Read a line that the full reader could not (RULES W1.4): `hint` says why
/// it was tried. serde_json skips raw values without recursion and without
/// interpreting member names, so the top level of a line of any depth can be
/// checked and read: a line that is not one strict JSON value is still a
/// parse error, anything else is classified like any line, and an
/// envelope-valid message carries the limit it exceeded in
/// [`Message::over_limit`]. `fixed` is `text` with lone surrogate escapes
/// replaced ([`repair_lone_surrogates`]), if it had any.
fn parse_shallow(text: &str, fixed: Option<String>, hint: Limit) -> Incoming {
    // `src` keeps the layout of `text`, so the id token is taken from `text`.
    let src: &str = fixed.as_deref().unwrap_or(text);
    let mut de = serde_json::Deserializer::from_str(src);
    let seed = ShallowSeed { base: src.as_ptr() as usize };
    let top = match seed.deserialize(&mut de) {
        Ok(t) if de.end().is_ok() => t,
        _ => return Incoming::ParseError,
    };
    let Shallow::Object(sh) = top else {
        return Incoming::InvalidRequest { id: None };
    };
    // A member value nests from level 2 (the top object is level 1).
    let member_max = MAX_DEPTH - 1;
    let string_or_invalid = |raw: Option<&RawValue>| {
        raw.map(|r| serde_json::from_str::<String>(r.get()).map(Value::String).unwrap_or(Value::Null))
    };
    let mut env = Envelope {
        jsonrpc: string_or_invalid(sh.jsonrpc),
        method: string_or_invalid(sh.method),
        id: sh.id.map(|r| text.get(sh.id_at..sh.id_at + r.get().len()).unwrap_or(r.get()).to_owned()),
        id_at: sh.id_at,
        params: None,
        has_result_or_error: sh.has_result_or_error,
        over_limit: None,
    };
    let mut in_params = None;
    if let Some(p) = sh.params {
        if deeper_than(p.get().as_bytes(), member_max) {
            in_params = Some(Limit::Depth);
        } else {
            match decode_bounded(p.get()) {
                Ok(v) => env.params = Some(v),
                Err(_) => in_params = Some(hint),
            }
        }
        if in_params.is_some() {
            env.params = readable_members(p);
        }
    }
    env.over_limit = if sh.others.iter().any(|r| deeper_than(r.get().as_bytes(), member_max)) {
        Some(OverLimit { limit: Limit::Depth, in_params: false })
    } else {
        in_params.map(|limit| OverLimit { limit, in_params: true })
    };
    classify(env)
}

/// The members of a `params` object that can be read (each within the
/// nesting limit and decodable), for a message answered per W1.4; `None`
/// when `params` is not an object.
fn readable_members(params: &RawValue) -> Option<Value> {
    let members: Vec<(String, &RawValue)> = match serde_json::from_str::<RawMembers>(params.get()) {
        Ok(m) => m.0,
        Err(_) => return None,
    };
    let mut out = Map::new();
    for (k, raw) in members {
        if !deeper_than(raw.get().as_bytes(), MAX_DEPTH - 2) {
            if let Ok(v) = decode_bounded(raw.get()) {
                out.insert(k, v);
            }
        }
    }
    Some(Value::Object(out))
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
    let over_limit = env.over_limit;
    match (method, jsonrpc_ok, id_valid) {
        (Some(method), true, None) => Incoming::Message(Message { id: None, method, params: env.params, over_limit }),
        (Some(method), true, Some(true)) => {
            Incoming::Message(Message { id: env.id, method, params: env.params, over_limit })
        }
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
    over_limit: Option<OverLimit>,
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
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match key.as_ref() {
                "jsonrpc" => env.jsonrpc = Some(map.next_value()?),
                "method" => env.method = Some(map.next_value()?),
                "params" => env.params = Some(map.next_value()?),
                "id" => {
                    let raw: &'de RawValue = map.next_value()?;
                    env.id_at = offset(raw, self.base);
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

/// Byte offset of a raw value in the text that starts at address `base`.
fn offset(raw: &RawValue, base: usize) -> usize {
    (raw.get().as_ptr() as usize).wrapping_sub(base)
}

/// The top level of a line as [`parse_shallow`] reads it: every member is
/// kept as raw text (skipped by serde_json without recursion).
enum Shallow<'a> {
    NotObject,
    Object(ShallowEnvelope<'a>),
}

#[derive(Default)]
struct ShallowEnvelope<'a> {
    jsonrpc: Option<&'a RawValue>,
    method: Option<&'a RawValue>,
    id: Option<&'a RawValue>,
    id_at: usize,
    params: Option<&'a RawValue>,
    /// Every other member's value (`result` and `error` included).
    others: Vec<&'a RawValue>,
    has_result_or_error: bool,
}

struct ShallowSeed {
    base: usize,
}

impl<'de> DeserializeSeed<'de> for ShallowSeed {
    type Value = Shallow<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Shallow<'de>, D::Error> {
        let raw = <&'de RawValue>::deserialize(d)?;
        if !raw.get().starts_with('{') {
            return Ok(Shallow::NotObject);
        }
        let mut de = serde_json::Deserializer::from_str(raw.get());
        let base = self.base;
        let members = RawMembers::deserialize(&mut de).map_err(de::Error::custom)?;
        let mut env = ShallowEnvelope::default();
        for (key, value) in members.0 {
            // A later duplicate wins; the value it displaces counts as
            // "another member" for the limits.
            let displaced = match key.as_str() {
                "jsonrpc" => env.jsonrpc.replace(value),
                "method" => env.method.replace(value),
                "params" => env.params.replace(value),
                "id" => {
                    env.id_at = offset(value, base);
                    env.id.replace(value)
                }
                k => {
                    env.has_result_or_error |= k == "result" || k == "error";
                    Some(value)
                }
            };
            env.others.extend(displaced);
        }
        Ok(Shallow::Object(env))
    }
}

/// An object's members with their raw values, in order (later duplicates
/// win when the caller stores them by name).
struct RawMembers<'a>(Vec<(String, &'a RawValue)>);

impl<'de> Deserialize<'de> for RawMembers<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<RawMembers<'de>, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawMembers<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawMembers<'de>, A::Error> {
                let mut out = Vec::new();
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    out.push((key.into_owned(), map.next_value::<&'de RawValue>()?));
                }
                Ok(RawMembers(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// One JSON text that is not a protocol message (the JSON of
/// `type_from_schema()`, RULES J6, R2.8), read as the values of a line are:
/// one strict JSON value, lone surrogate escapes as U+FFFD (J6.1), nesting
/// up to [`MAX_DEPTH`] levels; unlike a line, an object that has a member
/// name twice is refused (which value was meant is unknown). The error
/// says why the text is not read.
pub fn read_json(text: &str) -> Result<Value, String> {
    if deeper_than(text.as_bytes(), MAX_DEPTH) {
        return Err(DEPTH_DETAIL.to_owned());
    }
    let fixed = repair_lone_surrogates(text);
    let src = fixed.as_deref().unwrap_or(text);
    let v = decode_bounded::<Value>(src).map_err(|e| e.to_string())?;
    match decode_bounded::<&RawValue>(src).ok().and_then(duplicate_name) {
        Some(name) => Err(format!("an object has the member name {} twice", Value::String(name))),
        None => Ok(v),
    }
}

/// The first member name that appears twice in one object of `raw` (a
/// value already read whole, so every part of it parses).
fn duplicate_name(raw: &RawValue) -> Option<String> {
    match raw.get().trim_start().as_bytes().first() {
        Some(b'{') => {
            let members = decode_bounded::<RawMembers>(raw.get()).ok()?.0;
            let mut seen = std::collections::HashSet::new();
            members
                .iter()
                .find(|(k, _)| !seen.insert(k.as_str()))
                .map(|(k, _)| k.clone())
                .or_else(|| members.iter().find_map(|(_, v)| duplicate_name(v)))
        }
        Some(b'[') => decode_bounded::<Vec<&RawValue>>(raw.get()).ok()?.into_iter().find_map(duplicate_name),
        _ => None,
    }
}

/// Does any string in `v` (member names included) contain U+0000? Such a
/// value cannot become an R string (RULES J6.2).
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

    #[test]
    fn json_text_is_read_as_line_values_are() {
        // RULES J6.1: lone surrogates as U+FFFD, number tokens kept
        let v = read_json(r#"{"a":"x\ud800y","n":[3,-0,1e400],"e":{}}"#).unwrap();
        assert_eq!(v["a"], "x\u{FFFD}y");
        assert_eq!(v["n"][0].to_string(), "3");
        assert_eq!(v["n"][1].to_string(), "-0");
        assert_eq!(v["e"], Value::Object(Map::new()));
        for bad in ["", "{", r#"{"a":1} x"#, "NaN", "[1,]", "'x'"] {
            assert!(read_json(bad).is_err(), "{bad:?}");
        }
        assert!(read_json(r#"{"a":1} x"#).unwrap_err().contains("trailing characters"));
        // a member name twice, at any depth (escapes decoded first)
        assert_eq!(read_json(r#"{"a":1,"a":2}"#).unwrap_err(), r#"an object has the member name "a" twice"#);
        assert!(read_json(r#"[{"x":{"b":1,"\u0062":2}}]"#).unwrap_err().contains(r#""b""#));
        assert!(read_json(r#"{"a":{"a":1},"b":[{"a":1},{"a":2}]}"#).is_ok());
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(read_json(&deep).is_ok());
        let deeper = format!("[{deep}]");
        assert_eq!(read_json(&deeper).unwrap_err(), DEPTH_DETAIL);
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
        // Too deep and not JSON: still a parse error.
        let unclosed = "[".repeat(10_000);
        assert!(matches!(parse_line(unclosed.as_bytes()), Incoming::ParseError));
        let trailing =
            format!("{{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":{}{}}} x", "[".repeat(600), "]".repeat(600));
        assert!(matches!(parse_line(trailing.as_bytes()), Incoming::ParseError));
    }

    fn over_limit(i: Incoming) -> (Option<String>, Option<OverLimit>) {
        match i {
            Incoming::Message(m) => (m.id, m.over_limit),
            other => panic!("not a message: {other:?}"),
        }
    }

    #[test]
    fn over_the_depth_limit_is_not_a_parse_error() {
        // MAX_DEPTH levels in all (the top object included) are fine; one
        // more is over the limit (W1.4). Brackets inside strings do not count.
        let nested = |d: usize| {
            format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"x\",\"params\":{}{}}}",
                "[".repeat(d - 1),
                "]".repeat(d - 1)
            )
        };
        assert_eq!(over_limit(parse_line(nested(128).as_bytes())), (Some("7".into()), None));
        assert_eq!(over_limit(parse_line(nested(MAX_DEPTH).as_bytes())), (Some("7".into()), None));
        let params = Some(OverLimit { limit: Limit::Depth, in_params: true });
        assert_eq!(over_limit(parse_line(nested(MAX_DEPTH + 1).as_bytes())), (Some("7".into()), params));
        assert_eq!(over_limit(parse_line(nested(10_000).as_bytes())), (Some("7".into()), params));
        let in_string = format!("{{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":[\"{}\\\"\"]}}", "[{".repeat(2000));
        assert!(matches!(parse_line(in_string.as_bytes()), Incoming::Message(Message { over_limit: None, .. })));
        // Outside params (another member, or a displaced duplicate params).
        let deep = format!("{}1{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        let outside = Some(OverLimit { limit: Limit::Depth, in_params: false });
        for line in [
            format!(r#"{{"jsonrpc":"2.0","id":"a","method":"x","x":{deep}}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":"a","method":"x","params":{deep},"params":{{}}}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":"a","method":"x","params":{deep},"y":{deep}}}"#),
        ] {
            assert_eq!(over_limit(parse_line(line.as_bytes())), (Some("\"a\"".into()), outside), "{line}");
        }
        // Leading and trailing JSON whitespace, as on the main path.
        let line = format!(" \t{{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"x\",\"params\":{deep}}}\r ");
        assert_eq!(over_limit(parse_line(line.as_bytes())), (Some("5".into()), params));
        // The id is echoed byte for byte, wherever it stands.
        let line = format!(r#"{{"params":{deep},"method":"x","id":"\u0041\ud800","jsonrpc":"2.0"}}"#);
        assert_eq!(over_limit(parse_line(line.as_bytes())), (Some(r#""\u0041\ud800""#.into()), params));
        // Notifications carry the limit too (the dispatcher stays silent).
        let line = format!(r#"{{"jsonrpc":"2.0","method":"x","params":{deep}}}"#);
        assert_eq!(over_limit(parse_line(line.as_bytes())), (None, params));
        // The readable members of params are kept (span name, era).
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"t","arguments":{{"a":{deep}}}}}}}"#
        );
        match parse_line(line.as_bytes()) {
            Incoming::Message(m) => {
                assert_eq!(m.params, Some(serde_json::json!({"name": "t"})));
                assert_eq!(m.over_limit, params);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn over_the_limit_and_envelope_invalid_or_not_a_request() {
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        // A batch, a deep id, a bad jsonrpc: the W2 answers.
        assert_eq!(id_of(parse_line(deep.as_bytes())), None);
        let line = format!(r#"{{"jsonrpc":"2.0","id":{deep},"method":"ping"}}"#);
        assert_eq!(id_of(parse_line(line.as_bytes())), None);
        let line = format!(r#"{{"jsonrpc":"1.0","id":3,"method":"ping","params":{deep}}}"#);
        assert_eq!(id_of(parse_line(line.as_bytes())), Some("3".into()));
        let line = format!(r#"{{"jsonrpc":"2.0","id":3,"method":{deep}}}"#);
        assert_eq!(id_of(parse_line(line.as_bytes())), Some("3".into()));
        // A deep client response is still a client response.
        let line = format!(r#"{{"jsonrpc":"2.0","id":3,"result":{deep}}}"#);
        assert!(matches!(parse_line(line.as_bytes()), Incoming::ClientResponse));
    }

    #[test]
    fn depth_detail_names_the_limit() {
        assert!(Limit::Depth.detail().contains(&MAX_DEPTH.to_string()));
    }

    #[test]
    fn reserved_member_names_are_answered_with_the_id() {
        for key in ["$serde_json::private::RawValue", "$serde_json::private::Number"] {
            let line = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"{key}":1,"k":2}}}}"#);
            let limit = Some(OverLimit { limit: Limit::ReservedName, in_params: true });
            assert_eq!(over_limit(parse_line(line.as_bytes())), (Some("1".into()), limit), "{line}");
            // Elsewhere the member is skipped unread: no limit.
            let line = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"ping","x":{{"{key}":1}}}}"#);
            assert_eq!(over_limit(parse_line(line.as_bytes())), (Some("1".into()), None), "{line}");
        }
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
