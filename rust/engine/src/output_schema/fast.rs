//! The fast check of structured content (RULES J4.6): the output schemas
//! mcplite's type helpers write, checked on the JSON text as it is read.
//!
//! Written by hand because it must be faster than what the `jsonschema`
//! crate can do here: that crate validates a `serde_json::Value`, and
//! building one (with this workspace's `preserve_order` and
//! `arbitrary_precision` features: a map and strings for every row) costs
//! several times what a whole call of a large result costs (benchmark W5,
//! bench/schema/). The check reads the text once with a pull parser
//! (`jiter`) and allocates nothing per value.
//!
//! It is only a shortcut: it covers a subset of JSON Schema (`type`,
//! `properties`, `required`, `additionalProperties` as a boolean, `items`
//! as one schema, `enum` of strings, booleans and null, and annotations),
//! and it only ever says "valid" for a value the `jsonschema` crate finds
//! valid. A schema with anything else has no fast check, and a value the
//! fast check does not accept (a mismatch, or anything it cannot read) is
//! validated by `jsonschema`, which also writes the message. The tests
//! compare the two on generated schemas and values.

use jiter::{Jiter, JiterResult, Peek};
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
}

#[derive(Debug)]
struct Property {
    name: String,
    node: Node,
    /// This property's bit in [`Node::required_all`] when it is required,
    /// else 0.
    required_bit: u64,
    /// In `properties` (else only in `required`: subject to
    /// `additionalProperties`).
    declared: bool,
}

/// At most this many required properties per object (bits of a `u64`).
const MAX_REQUIRED: usize = 64;

impl Node {
    const fn any() -> Node {
        Node { types: ANY, members: None, properties: Vec::new(), required_all: 0, additional: true, items: None }
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
                        let node_at = Node::compile_at(sub, depth + 1)?;
                        node.properties.push(Property {
                            name: name.clone(),
                            node: node_at,
                            required_bit: 0,
                            declared: true,
                        });
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
                None => node.properties.push(Property {
                    name: name.to_owned(),
                    node: Node::any(),
                    required_bit: bit,
                    declared: false,
                }),
            }
        }
        Some(node)
    }

    /// Is `json` (one JSON value) valid? `false` also when the text cannot
    /// be read here: then `jsonschema` decides.
    pub(super) fn accepts(&self, json: &str) -> bool {
        let mut j = Jiter::new(json.as_bytes());
        let valid = j.peek().and_then(|peek| self.value(&mut j, peek));
        matches!(valid, Ok(true)) && j.finish().is_ok()
    }

    /// Read one value (its first byte peeked) and check it; stops at the
    /// first mismatch (`Ok(false)`: the rest is not read).
    fn value(&self, j: &mut Jiter, peek: Peek) -> JiterResult<bool> {
        match peek {
            Peek::Null => {
                j.known_null()?;
                Ok(self.types & NULL != 0 && self.member(&Member::Null))
            }
            Peek::True | Peek::False => {
                let b = j.known_bool(peek)?;
                Ok(self.types & BOOLEAN != 0 && self.member(&Member::Bool(b)))
            }
            Peek::String => {
                if self.types & STRING == 0 {
                    return Ok(false);
                }
                let Some(members) = &self.members else {
                    // Any string: read without decoding it.
                    j.known_bytes()?;
                    return Ok(true);
                };
                let s = j.known_str()?;
                Ok(members.iter().any(|x| matches!(x, Member::Str(v) if v.as_str() == s)))
            }
            Peek::Array => {
                if self.types & ARRAY == 0 || self.members.is_some() {
                    return Ok(false);
                }
                let items = self.items.as_deref().unwrap_or(&ANY_NODE);
                let mut next = j.known_array()?;
                while let Some(peek) = next {
                    if !items.value(j, peek)? {
                        return Ok(false);
                    }
                    next = j.array_step()?;
                }
                Ok(true)
            }
            Peek::Object => self.object(j),
            _ if peek.is_num() => {
                let number = self.types & (INTEGER | FRACTION);
                if number == 0 || self.members.is_some() {
                    return Ok(false);
                }
                // The text of the number: parsed only when the schema
                // tells integers from other numbers.
                let text = j.next_number_bytes()?;
                if number == INTEGER | FRACTION {
                    return Ok(true);
                }
                let integral = if text.iter().any(|&b| matches!(b, b'.' | b'e' | b'E')) {
                    let f: f64 = std::str::from_utf8(text).ok().and_then(|t| t.parse().ok()).unwrap_or(f64::NAN);
                    f.is_finite() && f.fract() == 0.0
                } else {
                    true
                };
                Ok(number == if integral { INTEGER } else { FRACTION })
            }
            // Not JSON: let jsonschema's side report it.
            _ => Ok(false),
        }
    }

    fn object(&self, j: &mut Jiter) -> JiterResult<bool> {
        if self.types & OBJECT == 0 || self.members.is_some() {
            return Ok(false);
        }
        // The required names seen, as bits of `required_bit`; members
        // usually come in the order of `properties` (a data frame's rows
        // do), so the property after the last one found is tried first.
        let mut seen = 0u64;
        let mut next = 0;
        let mut key = j.known_object()?;
        while let Some(k) = key {
            let found = match self.properties.get(next) {
                Some(p) if p.name == k => Some(next),
                _ => self.properties.iter().position(|p| p.name == k),
            };
            let sub = match found {
                Some(i) if self.properties[i].declared || self.additional => {
                    next = i + 1;
                    seen |= self.properties[i].required_bit;
                    &self.properties[i].node
                }
                Some(_) => return Ok(false),
                None if self.additional => &ANY_NODE,
                None => return Ok(false),
            };
            let peek = j.peek()?;
            if !sub.value(j, peek)? {
                return Ok(false);
            }
            key = j.next_key()?;
        }
        Ok(seen == self.required_all)
    }

    fn member(&self, m: &Member) -> bool {
        self.members.as_ref().is_none_or(|ms| ms.contains(m))
    }
}

/// Any value (an absent `items`, a property without a schema).
static ANY_NODE: Node = Node::any();

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
    fn j4_6_other_keywords_have_no_fast_check() {
        for s in [
            r#"{"type":"object","minProperties":1}"#,
            r##"{"properties":{"a":{"$ref":"#/$defs/x"}}}"##,
            r#"{"enum":[1,2]}"#,
            r#"{"items":[{"type":"string"}]}"#,
            r#"{"additionalProperties":{"type":"string"}}"#,
            r#"{"$schema":"http://json-schema.org/draft-04/schema#","type":"integer"}"#,
            r#"{"type":"decimal"}"#,
            "false",
        ] {
            assert!(fast(s).is_none(), "{s}");
        }
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
            prop::sample::select(vec!["1", "-2", "1.5", "2.0", "1e2", "NA"])
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
            let text = v.to_string();
            prop_assert_eq!(node.accepts(&text), validator.is_valid(&v), "schema {} value {}", s, text);
        }
    }
}
