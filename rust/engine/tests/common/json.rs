//! JSON text read without the engine's reader: no nesting limit, the raw
//! text of top-level members (in order, duplicates included), nesting depth,
//! and the helpers the oracle and the checks use to show and compare it.

use std::collections::HashMap;

use serde_json::value::RawValue;
use serde_json::Value;

/// Compact JSON text of a value (the host contract: fragments are valid,
/// compact JSON).
pub fn js(v: &Value) -> String {
    serde_json::to_string(v).unwrap()
}

/// Top-level members with their raw text, in order, duplicates included;
/// `None` when the text is not an object.
pub(super) fn members_in_order(text: &str) -> Option<Vec<(String, &RawValue)>> {
    struct Members<'a>(Vec<(String, &'a RawValue)>);
    impl<'de> serde::Deserialize<'de> for Members<'de> {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> serde::de::Visitor<'de> for V {
                type Value = Members<'de>;
                fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    f.write_str("an object")
                }
                fn visit_map<A: serde::de::MapAccess<'de>>(self, mut m: A) -> Result<Members<'de>, A::Error> {
                    let mut out = vec![];
                    while let Some((k, v)) = m.next_entry::<String, &'de RawValue>()? {
                        out.push((k, v));
                    }
                    Ok(Members(out))
                }
            }
            d.deserialize_map(V)
        }
    }
    serde_json::from_str::<Members>(text).ok().map(|m| m.0)
}

/// Top-level members with their raw text (last duplicate wins, like a map).
pub(super) fn raw_members(text: &str) -> Option<HashMap<String, &RawValue>> {
    serde_json::from_str::<HashMap<String, &RawValue>>(text).ok()
}

/// Parse JSON text without serde_json's nesting limit (for responses, which
/// may nest a little deeper than the request that produced them).
pub fn parse_unbounded(text: &str) -> serde_json::Result<Value> {
    use serde::Deserialize;
    let mut de = serde_json::Deserializer::from_str(text);
    de.disable_recursion_limit();
    let v = Value::deserialize(&mut de)?;
    de.end()?;
    Ok(v)
}

/// Check that text is one JSON value without building it. serde_json's
/// `Value` reader treats the member names `$serde_json::private::Number` and
/// `$serde_json::private::RawValue` as its own markers (the engine enables
/// the `arbitrary_precision` and `raw_value` features), so valid JSON that
/// holds them cannot become a `Value`; `IgnoredAny` reads them as names.
pub fn well_formed(text: &str) -> serde_json::Result<()> {
    use serde::Deserialize;
    let mut de = serde_json::Deserializer::from_str(text);
    de.disable_recursion_limit();
    serde::de::IgnoredAny::deserialize(&mut de)?;
    de.end()
}

/// True when text holds a member name serde_json reserves (see
/// [`well_formed`]).
pub fn has_reserved_name(text: &str) -> bool {
    text.contains("$serde_json::private::")
}

/// Deepest bracket nesting of JSON text (strings skipped).
pub fn nesting_depth(text: &str) -> usize {
    let (mut depth, mut max, mut in_str, mut esc) = (0usize, 0usize, false, false);
    for b in text.bytes() {
        if in_str {
            match (esc, b) {
                (true, _) => esc = false,
                (false, b'\\') => esc = true,
                (false, b'"') => in_str = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_str = true,
            b'[' | b'{' => {
                depth += 1;
                max = max.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// Shorten text for messages.
pub fn clip(s: &str) -> String {
    if s.len() <= 400 {
        return s.to_string();
    }
    let mut end = 400;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…({} bytes)", &s[..end], s.len())
}

/// The member names of an object, in order (none for any other value).
pub fn keys(v: &Value) -> Vec<&str> {
    match v {
        Value::Object(m) => m.keys().map(String::as_str).collect(),
        _ => vec![],
    }
}
