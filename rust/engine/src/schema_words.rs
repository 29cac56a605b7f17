//! How a value that does not match a JSON schema is put into words, for the
//! output check (RULES J4.6) and the input check (RULES L6.7): one home for
//! the quoting of values and the reading of nullable `anyOf` types, so a
//! tool author and a model see the same wording.

use jsonschema::error::ValidationErrorKind;
use jsonschema::ValidationError;
use serde_json::Value;

/// At most this much of a value is quoted in a message.
pub(crate) const QUOTE_MAX: usize = 80;

/// A JSON value as quoted in a message: compact, cut at [`QUOTE_MAX`]
/// bytes (on a character boundary) with an ellipsis.
pub(crate) fn quote(v: &Value) -> String {
    let mut s = v.to_string();
    if s.len() > QUOTE_MAX {
        let mut end = QUOTE_MAX;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
        s.push('…');
    }
    s
}

/// The mismatch worth describing under an `anyOf` (a nullable type is
/// written as `anyOf` of the type and `{"type":"null"}`): when one branch
/// has the value's type, its first mismatch (a row of a nullable object
/// that lacks a member is described as such); when none has it, the `anyOf`
/// with the types its branches name, in their order; when several have it,
/// the `anyOf` as `jsonschema` says it.
pub(crate) fn through_any_of<'e>(error: &'e ValidationError<'e>) -> (&'e ValidationError<'e>, Option<Vec<String>>) {
    let ValidationErrorKind::AnyOf { context } = error.kind() else {
        return (error, None);
    };
    let here = error.instance_path();
    let wrong_type =
        |e: &ValidationError<'_>| matches!(e.kind(), ValidationErrorKind::Type { .. }) && e.instance_path() == here;
    let mut typed = context.iter().filter(|branch| !branch.iter().any(&wrong_type));
    match (typed.next(), typed.next()) {
        (Some(branch), None) => match branch.first() {
            Some(first) => through_any_of(first),
            None => (error, None),
        },
        // Several branches of the value's type: jsonschema's own words.
        (Some(_), Some(_)) => (error, None),
        (None, _) => {
            let mut types: Vec<String> = Vec::new();
            for t in context.iter().flatten().filter(|e| wrong_type(e)).flat_map(|e| type_names(e.kind())) {
                if !types.contains(&t) {
                    types.push(t);
                }
            }
            (error, (!types.is_empty()).then_some(types))
        }
    }
}

/// The types a `type` mismatch names (none for other mismatches).
pub(crate) fn type_names(kind: &ValidationErrorKind) -> Vec<String> {
    match kind {
        ValidationErrorKind::Type { kind } => match kind {
            jsonschema::error::TypeKind::Single(t) => vec![t.to_string()],
            jsonschema::error::TypeKind::Multiple(ts) => ts.iter().map(|t| t.to_string()).collect(),
        },
        _ => Vec::new(),
    }
}
