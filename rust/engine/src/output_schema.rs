//! Structured content checked against the tool's declared output schema
//! before it is sent (RULES J4.6).
//!
//! The protocol says that a tool with an `outputSchema` returns structured
//! content that conforms to it, and validating clients (the official Python
//! SDK's) reject a whole result that does not. The server knows both the
//! schema and the value, so it checks first and answers a mismatch with a
//! tool error that says where and what, with the R fix when the mismatch
//! has a typical R cause (a missing value written as `"NA"`, a length-one
//! vector unboxed or not). Every path that runs a tool goes through
//! `Server::handle_parsed`, so the stdio and HTTP servers, `mcp_handle()`
//! and the in-process test paths all check.
//!
//! Validation is the `jsonschema` crate's (JSON Schema 2019-09/2020-12 and
//! older drafts by `$schema`; 2020-12 when a schema names none), compiled
//! once per tool when the server is built. Formats are not checked (they
//! are annotations in 2020-12, and the Python SDK's client does not check
//! them either), and nothing is fetched: a schema that cannot be compiled
//! (an invalid schema, a remote `$ref`) is the author's (RULES P4), and its
//! tool's results are sent unchecked. Results marked as errors are not
//! checked, nor are results without structured content.
//!
//! Most schemas (all those the type helpers write) also get a fast check
//! (`fast.rs`), which reads the JSON text without building a `Value`:
//! when it accepts the content, that is the answer; otherwise the
//! `jsonschema` validator decides and describes the mismatch.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

use jsonschema::error::ValidationErrorKind;
use jsonschema::{ValidationError, Validator};
use serde_json::Value;

use crate::host::ToolSpec;
use crate::message::decode_bounded;
use crate::schema_words::{quote, through_any_of, type_names};

mod fast;

/// The compiled output schemas of a server's tools.
pub(crate) struct OutputSchemas {
    /// By tool index; `None` for a tool without a schema (or with one that
    /// cannot be compiled).
    validators: Vec<Option<Compiled>>,
    /// The tools whose first mismatch was already noted on stderr.
    noted: Vec<AtomicBool>,
}

/// One tool's schema: the `jsonschema` validator, and the fast check when
/// the schema is one it covers (the type helpers' schemas are).
struct Compiled {
    validator: Validator,
    fast: Option<fast::Node>,
}

impl OutputSchemas {
    /// Compile the output schema of every tool that has one.
    pub(crate) fn new(tools: &[ToolSpec]) -> OutputSchemas {
        let validators = tools.iter().map(|t| t.output_schema.as_deref().and_then(compile)).collect();
        OutputSchemas { validators, noted: tools.iter().map(|_| AtomicBool::new(false)).collect() }
    }

    /// Check the structured content (payload JSON text) of tool number
    /// `index`. `None` when it conforms (or cannot be checked), else the
    /// text of the tool error. The first mismatch of each tool is also
    /// noted on stderr.
    pub(crate) fn check(&self, index: usize, tool: &str, structured: &str) -> Option<String> {
        let Compiled { validator, fast } = self.validators.get(index)?.as_ref()?;
        if fast.as_ref().is_some_and(|f| f.accepts(structured)) {
            return None;
        }
        // The host's encoder bounds the depth (the R bridge's, 1000 levels).
        let value: Value = decode_bounded(structured).ok()?;
        if validator.is_valid(&value) {
            return None;
        }
        let error = validator.validate(&value).err()?;
        let message = describe(tool, &error);
        if !self.noted[index].swap(true, Ordering::Relaxed) {
            // A closed stderr must not disturb the server.
            let _ = writeln!(
                std::io::stderr(),
                "mcplite: {message} (noted once per tool; the client gets this as a tool error)"
            );
        }
        Some(message)
    }
}

fn compile(schema: &str) -> Option<Compiled> {
    let schema: Value = serde_json::from_str(schema).ok()?;
    let validator = jsonschema::options().should_validate_formats(false).build(&schema).ok()?;
    Some(Compiled { validator, fast: fast::Node::compile(&schema) })
}

/// The tool error for the first mismatch: where, what, and the fix.
fn describe(tool: &str, error: &ValidationError<'_>) -> String {
    let (error, types) = through_any_of(error);
    let path = error.instance_path().as_str();
    let at = if path.is_empty() { "at the root".to_owned() } else { format!("at `{path}`") };
    let what = match &types {
        Some(types) => {
            let names = types.iter().map(|t| format!("\"{t}\"")).collect::<Vec<_>>().join(", ");
            let s = if types.len() == 1 { "" } else { "s" };
            format!("{} is not of type{s} {names}", quote(error.instance()))
        }
        None => error.masked_with(quote(error.instance())).to_string(),
    };
    let mut m = format!(
        "The result of tool `{tool}` does not match its output schema: {at}, {what}, so the result was not sent."
    );
    let expected = types.unwrap_or_else(|| type_names(error.kind()));
    if let Some(hint) = hint(error, &expected) {
        m.push(' ');
        m.push_str(hint);
    }
    m
}

/// The R fix for mismatches with a typical R cause; `expected` are the
/// types the mismatch names.
fn hint(error: &ValidationError<'_>, expected: &[String]) -> Option<&'static str> {
    let kind = error.kind();
    let v = error.instance();
    let expects = |name: &str| expected.iter().any(|t| t == name);
    let type_mismatch = !expected.is_empty();
    let na_string = matches!(v.as_ref(), Value::String(s) if ["NA", "NaN", "Inf", "-Inf"].contains(&s.as_str()));
    let number_or_null = ["number", "integer", "null"].iter().any(|t| expects(t));
    if na_string && (number_or_null || matches!(kind, ValidationErrorKind::Enum { .. })) {
        return Some(
            "R writes a missing number (NA, NaN, Inf) as a string by default: set \
             options(mcplite.json.na = \"null\") to write null (a nullable type such as \
             type_number(nullable = TRUE) accepts it), or return NULL for the value.",
        );
    }
    if matches!(kind, ValidationErrorKind::Required { .. }) {
        return Some(
            "If the value is NA in a data frame: a cell that is NA is left out of its row object; \
             set options(mcplite.json.na = \"null\") to write it as null.",
        );
    }
    match v.as_ref() {
        Value::Array(a) if a.len() == 1 && type_mismatch => Some(
            "A length-one vector is written as an array when mcplite.json.auto_unbox is FALSE or \
             it is wrapped in I(): unwrap it, or use jsonlite::unbox().",
        ),
        Value::Array(a) if a.is_empty() && expects("object") => Some(
            "An empty list() is written as []: a named empty list, \
             structure(list(), names = character()), is written as {}.",
        ),
        Value::String(_) | Value::Number(_) | Value::Bool(_) if expects("array") => {
            Some("A length-one vector is written as a single value: wrap it in I() to keep it an array.")
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schemas(schema: &str) -> OutputSchemas {
        let mut t = ToolSpec::new("t", "A tool.");
        t.output_schema = Some(schema.to_owned());
        OutputSchemas::new(&[t, ToolSpec::new("plain", "No schema.")])
    }

    const P_NULLABLE: &str = r#"{"type":"object","properties":{"p":{"type":["number","null"]}},"required":["p"],"additionalProperties":false}"#;

    #[test]
    fn j4_6_conforming_content_passes() {
        let s = schemas(P_NULLABLE);
        assert_eq!(s.check(0, "t", r#"{"p":0.5}"#), None);
        assert_eq!(s.check(0, "t", r#"{"p":null}"#), None);
        assert_eq!(s.check(1, "plain", r#""anything""#), None, "no schema, no check");
        assert_eq!(s.check(9, "none", "1"), None, "no such tool");
    }

    #[test]
    fn j4_6_na_string_names_the_path_the_value_the_types_and_the_fix() {
        let s = schemas(P_NULLABLE);
        let m = s.check(0, "t", r#"{"p":"NA"}"#).expect("a mismatch");
        assert!(m.starts_with("The result of tool `t` does not match its output schema: at `/p`, "), "{m}");
        assert!(m.contains(r#""NA" is not of types "null", "number", so the result was not sent."#), "{m}");
        assert!(m.contains(r#"options(mcplite.json.na = "null")"#) && m.contains("return NULL"), "{m}");
        // Noted once on stderr, but every mismatch is a tool error.
        assert!(s.noted[0].load(Ordering::Relaxed));
        assert!(s.check(0, "t", r#"{"p":"Inf"}"#).is_some());
    }

    #[test]
    fn j4_6_the_any_of_spelling_of_nullable_types_is_described_like_a_type() {
        let p = r#"{"type":"object","properties":{"p":{"anyOf":[{"type":"number"},{"type":"null"}]}},"required":["p"],"additionalProperties":false}"#;
        let s = schemas(p);
        assert_eq!(s.check(0, "t", r#"{"p":null}"#), None);
        let m = s.check(0, "t", r#"{"p":"NA"}"#).expect("a mismatch");
        assert!(m.contains(r#"at `/p`, "NA" is not of types "number", "null", so the result was not sent."#), "{m}");
        assert!(m.contains(r#"options(mcplite.json.na = "null")"#), "{m}");
        // A branch of the value's type: its own mismatch, not the anyOf.
        let rows = r#"{"type":"object","properties":{"rows":{"type":"array","items":{"anyOf":[{"type":"object","required":["a","b"]},{"type":"null"}]}}}}"#;
        let m = schemas(rows).check(0, "t", r#"{"rows":[null,{"a":1}]}"#).unwrap();
        assert!(m.contains("at `/rows/1`, \"b\" is a required property") && m.contains("NA in a data frame"), "{m}");
        let e =
            r#"{"type":"object","properties":{"k":{"anyOf":[{"type":"string","enum":["a","b"]},{"type":"null"}]}}}"#;
        let m = schemas(e).check(0, "t", r#"{"k":"NA"}"#).unwrap();
        assert!(m.contains("at `/k`, \"NA\" is not one of") && m.contains("mcplite.json.na"), "{m}");
        let m = schemas(e).check(0, "t", r#"{"k":[1]}"#).unwrap();
        assert!(m.contains(r#"at `/k`, [1] is not of types "string", "null""#) && m.contains("unbox()"), "{m}");
        // Branches that are not types: jsonschema's own words.
        let other = r#"{"anyOf":[{"type":"object","required":["a"]},{"type":"object","required":["b"]}]}"#;
        let m = schemas(other).check(0, "t", "{}").unwrap();
        assert!(
            m.contains("at the root, {} is not valid under any of the schemas listed in the 'anyOf' keyword"),
            "{m}"
        );
    }

    #[test]
    fn j4_6_other_mismatches_and_their_hints() {
        let rows = r#"{"type":"object","properties":{"rows":{"type":"array","items":{"type":"object","required":["a","b"]}}}}"#;
        let m = schemas(rows).check(0, "t", r#"{"rows":[{"a":1,"b":2},{"a":3}]}"#).unwrap();
        assert!(m.contains("at `/rows/1`, \"b\" is a required property"), "{m}");
        assert!(m.contains("NA in a data frame"), "{m}");

        let scalar = r#"{"type":"object","properties":{"n":{"type":"integer"}}}"#;
        let m = schemas(scalar).check(0, "t", r#"{"n":[3]}"#).unwrap();
        assert!(m.contains(r#"at `/n`, [3] is not of type "integer""#) && m.contains("jsonlite::unbox()"), "{m}");

        let array = r#"{"type":"object","properties":{"v":{"type":"array"}}}"#;
        let m = schemas(array).check(0, "t", r#"{"v":3}"#).unwrap();
        assert!(m.contains("wrap it in I()"), "{m}");

        let root = schemas(r#"{"type":"object"}"#);
        let m = root.check(0, "t", "[]").unwrap();
        assert!(m.contains("at the root, [] is not of type \"object\"") && m.contains("names = character()"), "{m}");
        let m = schemas(r#"{"type":"object","properties":{"k":{"enum":["a","b"]}}}"#).check(0, "t", r#"{"k":"c"}"#);
        assert!(m.unwrap().contains("at `/k`, "), "no hint needed");
    }

    #[test]
    fn j4_6_long_values_are_cut() {
        let long = format!("[{}]", vec!["1"; 500].join(","));
        let m = schemas(r#"{"type":"object"}"#).check(0, "t", &long).unwrap();
        assert!(m.contains("[1,1,1") && m.contains('…') && m.len() < 400, "{m}");
    }

    #[test]
    fn p4_a_schema_that_cannot_be_compiled_is_not_checked() {
        for bad in [
            r#"{"type":"object","properties":[],"required":{}}"#,
            r#"{"$ref":"https://example.com/schema.json"}"#,
            "not json",
        ] {
            assert_eq!(schemas(bad).check(0, "t", r#"{"p":"NA"}"#), None, "{bad}");
        }
        // Formats are annotations: not checked.
        let f = schemas(r#"{"type":"object","properties":{"d":{"type":"string","format":"date"}}}"#);
        assert_eq!(f.check(0, "t", r#"{"d":"not a date"}"#), None);
    }
}
