//! The fast check of structured content (RULES J4.6): the output schemas
//! mcplite's type helpers write, checked on the JSON text in one pass.
//!
//! Written by hand because it must be faster than what the `jsonschema`
//! crate can do here: that crate validates a `serde_json::Value`, and
//! building one (with this workspace's `preserve_order` and
//! `arbitrary_precision` features: a map and strings for every row) costs
//! several times what a whole call of a large result costs (benchmark W5,
//! bench/schema/), and a general pull parser (`jiter`, used before) still
//! cost about a third of such a call. This scanner reads the bytes once,
//! allocates nothing, and matches a member name against the property the
//! schema lists next as raw bytes (a data frame's rows list their members
//! in the schema's order).
//!
//! It is only a shortcut: it covers a subset of JSON Schema (`type`,
//! `properties`, `required`, `additionalProperties` as a boolean, `items`
//! as one schema, `enum` of strings, booleans and null, `anyOf`, and
//! annotations), and it only ever says "valid" for a value the `jsonschema`
//! crate finds valid. A schema with anything else has no fast check, and a
//! value the fast check does not accept (a mismatch, or anything it does not
//! read: an escaped member name it would have to decode, a nesting deeper
//! than [`MAX_NESTING`], text that is not JSON) is validated by
//! `jsonschema`, which also writes the message. The tests compare the two
//! on generated schemas and values.

use serde_json::{Map, Value};

/// JSON types, as bits of [`Node::types`].
const NULL: u8 = 1;
const BOOLEAN: u8 = 2;
/// A number with no fractional part (JSON Schema's "integer").
const INTEGER: u8 = 4;
/// Any other number ("number" also sets [`INTEGER`]).
const FRACTION: u8 = 8;
const STRING: u8 = 16;
const ARRAY: u8 = 32;
const OBJECT: u8 = 64;
const ANY: u8 = 127;

/// Schemas nested deeper than this have no fast check.
const MAX_DEPTH: usize = 64;

/// Values nested deeper than this are left to `jsonschema` (the scanner
/// recurses once per level).
const MAX_NESTING: usize = 256;

/// The dialect whose meaning the fast check has (the one `jsonschema`
/// uses when a schema names none).
const DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

/// An `enum` member the fast check knows.
#[derive(Debug, PartialEq)]
enum Member {
    Null,
    Bool(bool),
    Str(String),
}

/// One compiled (sub)schema.
#[derive(Debug)]
pub(super) struct Node {
    types: u8,
    members: Option<Vec<Member>>,
    properties: Vec<Property>,
    /// The bits of all required properties (see [`Property::required_bit`]).
    required_all: u64,
    /// `additionalProperties` (true when absent).
    additional: bool,
    items: Option<Box<Node>>,
    /// `anyOf` (empty when absent).
    any_of: Vec<Node>,
}

#[derive(Debug)]
struct Property {
    name: String,
    /// The name as a JSON string (`"name"`), compared with a member name
    /// as raw bytes.
    quoted: Vec<u8>,
    node: Node,
    /// This property's bit in [`Node::required_all`] when it is required,
    /// else 0.
    required_bit: u64,
    /// In `properties` (else only in `required`: subject to
    /// `additionalProperties`).
    declared: bool,
}

impl Property {
    fn new(name: &str, node: Node, declared: bool) -> Property {
        Property {
            name: name.to_owned(),
            quoted: Value::from(name).to_string().into_bytes(),
            node,
            required_bit: 0,
            declared,
        }
    }
}

/// At most this many required properties per object (bits of a `u64`).
const MAX_REQUIRED: usize = 64;

impl Node {
    const fn any() -> Node {
        Node {
            types: ANY,
            members: None,
            properties: Vec::new(),
            required_all: 0,
            additional: true,
            items: None,
            any_of: Vec::new(),
        }
    }

    /// Does this node accept any value, `anyOf` aside?
    fn is_any(&self) -> bool {
        self.types == ANY
            && self.members.is_none()
            && self.properties.is_empty()
            && self.additional
            && self.items.as_deref().is_none_or(Node::is_trivial)
    }

    /// Does this node accept any value at all?
    fn is_trivial(&self) -> bool {
        self.is_any() && self.any_of.is_empty()
    }

    /// The fast check of `schema`, when it stays within the subset.
    pub(super) fn compile(schema: &Value) -> Option<Node> {
        Node::compile_at(schema, 0)
    }

    fn compile_at(schema: &Value, depth: usize) -> Option<Node> {
        if depth > MAX_DEPTH {
            return None;
        }
        let map: &Map<String, Value> = match schema {
            Value::Bool(true) => return Some(Node::any()),
            Value::Object(m) => m,
            _ => return None,
        };
        let mut node = Node::any();
        let mut required: Vec<&str> = Vec::new();
        for (key, v) in map {
            match key.as_str() {
                "type" => node.types = types(v)?,
                "properties" => {
                    for (name, sub) in v.as_object()? {
                        node.properties.push(Property::new(name, Node::compile_at(sub, depth + 1)?, true));
                    }
                }
                "required" => {
                    for name in v.as_array()? {
                        required.push(name.as_str()?);
                    }
                }
                "additionalProperties" => node.additional = v.as_bool()?,
                "items" if v.is_object() || v.is_boolean() => {
                    node.items = Some(Box::new(Node::compile_at(v, depth + 1)?));
                }
                "enum" => {
                    let members = v.as_array()?.iter().map(member).collect::<Option<Vec<_>>>()?;
                    if members.is_empty() {
                        return None;
                    }
                    node.members = Some(members);
                }
                "anyOf" => {
                    let branches = v.as_array()?;
                    if branches.is_empty() {
                        return None;
                    }
                    node.any_of =
                        branches.iter().map(|b| Node::compile_at(b, depth + 1)).collect::<Option<Vec<_>>>()?;
                }
                "$schema" if v.as_str() == Some(DRAFT_2020_12) => {}
                // Annotations: no effect on validity (`format` included,
                // as formats are not checked).
                "description" | "title" | "default" | "examples" | "format" | "$comment" | "deprecated"
                | "readOnly" | "writeOnly" => {}
                _ => return None,
            }
        }
        // A required name is one more property (without a schema when
        // `properties` has none for it), found when present.
        required.sort_unstable();
        required.dedup();
        if required.len() > MAX_REQUIRED {
            return None;
        }
        for (i, name) in required.into_iter().enumerate() {
            let bit = 1u64 << i;
            node.required_all |= bit;
            match node.properties.iter_mut().find(|p| p.name == name) {
                Some(p) => p.required_bit = bit,
                None => {
                    let mut p = Property::new(name, Node::any(), false);
                    p.required_bit = bit;
                    node.properties.push(p);
                }
            }
        }
        Some(node)
    }

    /// Is `json` (one JSON value) valid? `false` also when the text is
    /// not read here: then `jsonschema` decides.
    pub(super) fn accepts(&self, json: &str) -> bool {
        let mut s = Scan { b: json.as_bytes(), i: 0, last: 0 };
        s.ws();
        self.value(&mut s, 0) && {
            s.ws();
            s.i == s.b.len()
        }
    }

    /// Read one value (at its first byte) and check it; stops at the first
    /// mismatch (`false`: the rest is not read).
    fn value(&self, s: &mut Scan<'_>, nesting: usize) -> bool {
        if !self.any_of.is_empty() {
            // Each branch reads the value from its start; with the
            // node's own keywords (as `anyOf`'s neighbours) it is read
            // once more.
            let start = s.i;
            let Some(end) = self.any_of.iter().find_map(|b| {
                s.i = start;
                b.value(s, nesting).then_some(s.i)
            }) else {
                return false;
            };
            if self.is_any() {
                s.i = end;
                return true;
            }
            s.i = start;
        }
        match s.peek() {
            b'n' => s.literal(b"null") && self.types & NULL != 0 && self.member(&Member::Null),
            b't' => s.literal(b"true") && self.types & BOOLEAN != 0 && self.member(&Member::Bool(true)),
            b'f' => s.literal(b"false") && self.types & BOOLEAN != 0 && self.member(&Member::Bool(false)),
            b'"' => {
                if self.types & STRING == 0 {
                    return false;
                }
                let Some((raw, escaped)) = s.string() else { return false };
                match &self.members {
                    None => true,
                    Some(members) => {
                        let decoded;
                        let text: &[u8] = if escaped {
                            let Some(d) = decode_string(raw) else { return false };
                            decoded = d;
                            decoded.as_bytes()
                        } else {
                            raw
                        };
                        members.iter().any(|m| matches!(m, Member::Str(v) if v.as_bytes() == text))
                    }
                }
            }
            b'[' => {
                if self.types & ARRAY == 0 || self.members.is_some() || nesting >= MAX_NESTING {
                    return false;
                }
                let items = self.items.as_deref().unwrap_or(&ANY_NODE);
                s.i += 1;
                s.ws();
                if s.peek() == b']' {
                    s.i += 1;
                    return true;
                }
                loop {
                    if !items.value(s, nesting + 1) {
                        return false;
                    }
                    match s.after_member(b']') {
                        Some(false) => {}
                        Some(true) => return true,
                        None => return false,
                    }
                }
            }
            b'{' => self.object(s, nesting),
            b'-' | b'0'..=b'9' => {
                let number = self.types & (INTEGER | FRACTION);
                if number == 0 || self.members.is_some() {
                    return false;
                }
                let Some(fraction_or_exponent) = s.number() else { return false };
                // Parsed only when the schema tells integers from other
                // numbers and the text does not say.
                if number == INTEGER | FRACTION {
                    return true;
                }
                let integral = !fraction_or_exponent || {
                    let text = std::str::from_utf8(&s.b[s.last..s.i]).unwrap_or("");
                    let f: f64 = text.parse().unwrap_or(f64::NAN);
                    f.is_finite() && f.fract() == 0.0
                };
                number == if integral { INTEGER } else { FRACTION }
            }
            // Not JSON: let jsonschema's side report it.
            _ => false,
        }
    }

    fn object(&self, s: &mut Scan<'_>, nesting: usize) -> bool {
        if self.types & OBJECT == 0 || self.members.is_some() || nesting >= MAX_NESTING {
            return false;
        }
        s.i += 1;
        s.ws();
        if s.peek() == b'}' {
            s.i += 1;
            return self.required_all == 0;
        }
        // The required names seen, as bits of `required_bit`; members
        // usually come in the order of `properties` (a data frame's rows
        // do), so the property after the last one found is tried first,
        // on the raw bytes.
        let mut seen = 0u64;
        let mut next = 0;
        loop {
            let found = match self.properties.get(next) {
                Some(p) if s.b[s.i..].starts_with(&p.quoted) => {
                    s.i += p.quoted.len();
                    Some(next)
                }
                _ => {
                    if s.peek() != b'"' {
                        return false;
                    }
                    let Some((raw, escaped)) = s.string() else { return false };
                    if escaped {
                        // A name with escapes: jsonschema reads it.
                        return false;
                    }
                    self.properties.iter().position(|p| p.name.as_bytes() == raw)
                }
            };
            let sub = match found {
                Some(i) if self.properties[i].declared || self.additional => {
                    next = i + 1;
                    seen |= self.properties[i].required_bit;
                    &self.properties[i].node
                }
                Some(_) => return false,
                None if self.additional => &ANY_NODE,
                None => return false,
            };
            s.ws();
            if s.peek() != b':' {
                return false;
            }
            s.i += 1;
            s.ws();
            if !sub.value(s, nesting + 1) {
                return false;
            }
            match s.after_member(b'}') {
                Some(false) => {}
                Some(true) => return seen == self.required_all,
                None => return false,
            }
        }
    }

    fn member(&self, m: &Member) -> bool {
        self.members.as_ref().is_none_or(|ms| ms.contains(m))
    }
}

/// Any value (an absent `items`, a property without a schema).
static ANY_NODE: Node = Node::any();

/// The JSON text being read.
struct Scan<'a> {
    b: &'a [u8],
    i: usize,
    /// Where the last number read began.
    last: usize,
}

/// The bytes that end the plain run of a JSON string: `"`, `\` and the
/// control characters (not allowed unescaped).
static STRING_STOP: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 0x20 {
        t[c] = true;
        c += 1;
    }
    t[b'"' as usize] = true;
    t[b'\\' as usize] = true;
    t
};

impl Scan<'_> {
    /// The byte at the cursor (0 at the end).
    #[inline]
    fn peek(&self) -> u8 {
        self.b.get(self.i).copied().unwrap_or(0)
    }

    #[inline]
    fn ws(&mut self) {
        while matches!(self.peek(), b' ' | b'\n' | b'\r' | b'\t') {
            self.i += 1;
        }
    }

    /// After a member of an array or object: `Some(false)` after a comma
    /// (another member follows), `Some(true)` after `close`, else `None`.
    #[inline]
    fn after_member(&mut self, close: u8) -> Option<bool> {
        self.ws();
        let c = self.peek();
        self.i += 1;
        if c == b',' {
            self.ws();
            Some(false)
        } else {
            (c == close).then_some(true)
        }
    }

    fn literal(&mut self, word: &[u8]) -> bool {
        let ok = self.b[self.i..].starts_with(word);
        self.i += word.len();
        ok
    }

    /// A string (the cursor at its opening quote): its raw content, and
    /// whether it has escapes (all checked). `None` when it is not a valid
    /// JSON string.
    fn string(&mut self) -> Option<(&[u8], bool)> {
        let start = self.i + 1;
        let mut i = start;
        let mut escaped = false;
        loop {
            while !STRING_STOP[*self.b.get(i)? as usize] {
                i += 1;
            }
            match self.b[i] {
                b'"' => break,
                b'\\' => {
                    escaped = true;
                    match *self.b.get(i + 1)? {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => i += 2,
                        b'u' => {
                            let hex = self.b.get(i + 2..i + 6)?;
                            if !hex.iter().all(u8::is_ascii_hexdigit) {
                                return None;
                            }
                            i += 6;
                        }
                        _ => return None,
                    }
                }
                _ => return None,
            }
        }
        self.i = i + 1;
        Some((&self.b[start..i], escaped))
    }

    /// A number, checked against JSON's grammar: whether it has a fraction
    /// or an exponent. Its text is `b[last..i]`.
    fn number(&mut self) -> Option<bool> {
        self.last = self.i;
        if self.peek() == b'-' {
            self.i += 1;
        }
        match self.peek() {
            b'0' => self.i += 1,
            b'1'..=b'9' => self.digits(),
            _ => return None,
        }
        let mut more = false;
        if self.peek() == b'.' {
            self.i += 1;
            if !self.peek().is_ascii_digit() {
                return None;
            }
            self.digits();
            more = true;
        }
        if matches!(self.peek(), b'e' | b'E') {
            self.i += 1;
            if matches!(self.peek(), b'+' | b'-') {
                self.i += 1;
            }
            if !self.peek().is_ascii_digit() {
                return None;
            }
            self.digits();
            more = true;
        }
        Some(more)
    }

    #[inline]
    fn digits(&mut self) {
        while self.peek().is_ascii_digit() {
            self.i += 1;
        }
    }
}

/// The text of a string with escapes (rare: compared with `enum` members).
fn decode_string(raw: &[u8]) -> Option<String> {
    let mut quoted = Vec::with_capacity(raw.len() + 2);
    quoted.push(b'"');
    quoted.extend_from_slice(raw);
    quoted.push(b'"');
    serde_json::from_slice(&quoted).ok()
}

fn types(v: &Value) -> Option<u8> {
    let one = |t: &Value| -> Option<u8> {
        Some(match t.as_str()? {
            "null" => NULL,
            "boolean" => BOOLEAN,
            "integer" => INTEGER,
            "number" => INTEGER | FRACTION,
            "string" => STRING,
            "array" => ARRAY,
            "object" => OBJECT,
            _ => return None,
        })
    };
    match v {
        Value::Array(ts) if !ts.is_empty() => ts.iter().try_fold(0, |acc, t| Some(acc | one(t)?)),
        Value::Array(_) => None,
        t => one(t),
    }
}

fn member(v: &Value) -> Option<Member> {
    match v {
        Value::Null => Some(Member::Null),
        Value::Bool(b) => Some(Member::Bool(*b)),
        Value::String(s) => Some(Member::Str(s.clone())),
        _ => None,
    }
}

#[cfg(test)]
mod speed;

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn fast(schema: &str) -> Option<Node> {
        Node::compile(&serde_json::from_str(schema).unwrap())
    }

    #[test]
    fn j4_6_the_type_helpers_schemas_have_a_fast_check() {
        let s = r#"{"type":"object","properties":{"a":{"type":["number","null"],"description":"A."},"e":{"type":["string","null"],"enum":["a","b",null]},"r":{"type":"array","items":{"type":"object","properties":{"i":{"type":"integer"},"s":{"type":"string"}},"required":["i"],"additionalProperties":false}}},"required":["a","e","r"],"additionalProperties":false}"#;
        let n = fast(s).expect("a fast check");
        assert!(n.accepts(r#"{"a":1.5,"e":null,"r":[{"i":1},{"i":2e0,"s":"x"}]}"#));
        assert!(n.accepts(r#" {"r":[],"e":"b","a":null} "#));
        for bad in [
            r#"{"a":"NA","e":null,"r":[]}"#,
            r#"{"a":1,"e":"c","r":[]}"#,
            r#"{"a":1,"e":"a","r":[{"i":1.5}]}"#,
            r#"{"a":1,"e":"a","r":[{"s":"x"}]}"#,
            r#"{"a":1,"e":"a","r":[],"z":0}"#,
            r#"{"a":1,"e":"a"}"#,
            r#"{"a":1,"e":"a","r":[]} x"#,
            r#"{"a":1,"e":"a","r":[}"#,
        ] {
            assert!(!n.accepts(bad), "{bad}");
        }
    }

    #[test]
    fn j4_6_any_of_spelling_of_nullable_types() {
        let s = r#"{"type":"object","properties":{"p":{"anyOf":[{"type":"number"},{"type":"null"}],"description":"P."},"e":{"anyOf":[{"type":"string","enum":["a","b"]},{"type":"null"}]},"o":{"anyOf":[{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"],"additionalProperties":false},{"type":"null"}]}},"required":["p","e","o"],"additionalProperties":false}"#;
        let n = fast(s).expect("a fast check");
        for good in [
            r#"{"p":1.5,"e":"a","o":{"x":1}}"#,
            r#"{"p":null,"e":null,"o":null}"#,
            r#"{ "o" : { "x" : 2 } , "e" : "b" , "p" : -0 }"#,
        ] {
            assert!(n.accepts(good), "{good}");
        }
        for bad in [
            r#"{"p":"NA","e":"a","o":null}"#,
            r#"{"p":1,"e":"c","o":null}"#,
            r#"{"p":1,"e":"a","o":{}}"#,
            r#"{"p":1,"e":"a","o":{"x":1.5}}"#,
            r#"{"p":1,"e":"a","o":[]}"#,
        ] {
            assert!(!n.accepts(bad), "{bad}");
        }
        // anyOf beside other keywords: both must hold.
        let n = fast(r#"{"type":"number","anyOf":[{"type":"integer"},{"type":"string"}]}"#).unwrap();
        assert!(n.accepts("3") && !n.accepts("3.5") && !n.accepts(r#""s""#));
    }

    #[test]
    fn j4_6_the_scanner_reads_only_strict_json() {
        let n = fast(r#"{"type":"array","items":{"type":["number","string","null","boolean"]}}"#).unwrap();
        assert!(n.accepts(r#"[1,-0,0.5,1e3,1E+3,-2.5e-3,"a\"b\u00e9\n",null,true,false]"#));
        for bad in [
            "[01]",
            "[1.]",
            "[.5]",
            "[-]",
            "[1e]",
            "[+1]",
            "[1,]",
            "[,1]",
            "[nul]",
            "[truex]",
            "[\"a]",
            "[\"\\x\"]",
            "[\"\\u12g4\"]",
            "[\"a\tb\"]",
            "[1] [2]",
            "[1",
            "",
            " ",
            "[NaN]",
        ] {
            assert!(!n.accepts(bad), "{bad}");
        }
        let o = fast(r#"{"type":"object","properties":{"a":{"type":"string","enum":["x\"y","é"]}}}"#).unwrap();
        assert!(o.accepts(r#"{"a":"x\"y"}"#) && o.accepts(r#"{"a":"\u00e9"}"#) && o.accepts(r#"{"a":"é"}"#));
        for bad in [r#"{"a":"x"}"#, r#"{"a" "x"}"#, r#"{"a":"é",}"#, r#"{a:"é"}"#, r#"{"a":"é""#] {
            assert!(!o.accepts(bad), "{bad}");
        }
        // Nesting deeper than the scanner reads is left to jsonschema.
        let deep = format!("{}{}", "[".repeat(MAX_NESTING + 1), "]".repeat(MAX_NESTING + 1));
        assert!(!fast("{}").unwrap().accepts(&deep));
        let shallow = format!("{}{}", "[".repeat(MAX_NESTING), "]".repeat(MAX_NESTING));
        assert!(fast("{}").unwrap().accepts(&shallow));
    }

    #[test]
    fn j4_6_other_keywords_have_no_fast_check() {
        for s in [
            r#"{"type":"object","minProperties":1}"#,
            r##"{"properties":{"a":{"$ref":"#/$defs/x"}}}"##,
            r#"{"enum":[1,2]}"#,
            r#"{"items":[{"type":"string"}]}"#,
            r#"{"additionalProperties":{"type":"string"}}"#,
            r#"{"$schema":"http://json-schema.org/draft-04/schema#","type":"integer"}"#,
            r#"{"type":"decimal"}"#,
            r#"{"oneOf":[{"type":"string"},{"type":"null"}]}"#,
            r#"{"anyOf":[]}"#,
            r#"{"anyOf":[{"type":"string"},{"minLength":1}]}"#,
            "false",
        ] {
            assert!(fast(s).is_none(), "{s}");
        }
    }

    fn scalar_type_any() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec!["null", "boolean", "integer", "number", "string", "array", "object"])
    }

    /// A schema of the subset, as JSON.
    fn schema() -> impl Strategy<Value = Value> {
        let scalar_type = prop::sample::select(vec!["null", "boolean", "integer", "number", "string"]);
        let leaf = prop_oneof![
            Just(serde_json::json!({})),
            scalar_type.clone().prop_map(|t| serde_json::json!({ "type": t })),
            (scalar_type.clone(), scalar_type).prop_map(|(a, b)| serde_json::json!({ "type": [a, b] })),
            prop::collection::vec(
                prop_oneof![Just(Value::Null), Just(Value::Bool(true)), "[ab]".prop_map(Value::from)],
                1..3
            )
            .prop_map(|m| serde_json::json!({ "enum": m })),
        ];
        leaf.prop_recursive(3, 16, 3, |inner| {
            prop_oneof![
                inner.clone().prop_map(|i| serde_json::json!({ "type": "array", "items": i })),
                // anyOf, as a nullable type is written (a schema and
                // {"type":"null"}), and in general, alone or beside a type.
                inner.clone().prop_map(|i| serde_json::json!({ "anyOf": [i, { "type": "null" }] })),
                (prop::collection::vec(inner.clone(), 1..3), prop::option::of(scalar_type_any())).prop_map(
                    |(branches, t)| match t {
                        Some(t) => serde_json::json!({ "anyOf": branches, "type": t }),
                        None => serde_json::json!({ "anyOf": branches }),
                    }
                ),
                (
                    prop::collection::btree_map("[abc]", inner, 0..3),
                    prop::collection::vec("[abcd]", 0..3),
                    any::<bool>()
                )
                    .prop_map(|(props, required, additional)| {
                        serde_json::json!({
                            "type": "object", "properties": props, "required": required,
                            "additionalProperties": additional
                        })
                    }),
            ]
        })
    }

    /// Values near what such schemas accept.
    fn instance() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            prop::sample::select(vec![
                "1",
                "-2",
                "1.5",
                "2.0",
                "1e2",
                "NA",
                "-0",
                "0.5e1",
                "1E-2",
                "1e400",
                "-1e400",
                "123456789012345678901234567890",
                "1.0000000000000002",
                "9007199254740993.0"
            ])
            .prop_map(|n| { serde_json::from_str(n).unwrap_or_else(|_| Value::from(n)) }),
            "[abNA]{1,2}".prop_map(Value::from),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                prop::collection::btree_map("[abcd]", inner, 0..4).prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    /// The generated pairs exercise both answers (so the comparison below
    /// cannot pass by rejecting everything).
    #[test]
    fn j4_6_generated_values_are_both_valid_and_invalid() {
        use proptest::strategy::ValueTree;
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        let (mut valid, mut n) = (0, 0);
        while n < 1000 {
            let s = schema().new_tree(&mut runner).unwrap().current();
            let v = instance().new_tree(&mut runner).unwrap().current();
            if let Ok(validator) = jsonschema::options().build(&s) {
                n += 1;
                valid += usize::from(validator.is_valid(&v));
            }
        }
        assert!((100..900).contains(&valid), "{valid} of {n} valid");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        /// The fast check agrees with `jsonschema` on every generated pair
        /// (it must never accept what `jsonschema` rejects; here it is
        /// exact, so it never falls back needlessly either).
        #[test]
        fn j4_6_the_fast_check_agrees_with_jsonschema(s in schema(), v in instance()) {
            let node = Node::compile(&s).expect("the subset compiles");
            // (A schema jsonschema refuses, such as one with a type named
            // twice, is never checked at all.)
            let validator = jsonschema::options().should_validate_formats(false).build(&s);
            prop_assume!(validator.is_ok());
            let validator = validator.unwrap();
            let valid = validator.is_valid(&v);
            let text = v.to_string();
            prop_assert_eq!(node.accepts(&text), valid, "schema {} value {}", s, text);
            // The same with whitespace between the tokens.
            let pretty = serde_json::to_string_pretty(&v).unwrap();
            prop_assert_eq!(node.accepts(&pretty), valid, "schema {} value {}", s, pretty);
        }
    }
}
