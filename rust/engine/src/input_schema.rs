//! Tool arguments checked against the tool's input schema before the tool
//! runs (RULES L6.7).
//!
//! The protocol says that servers MUST validate tool inputs, and the input
//! schema is the one promise a tool makes about what reaches it: a member
//! the schema does not declare (`additionalProperties: false`), a missing
//! required member, a value of the wrong type, outside an `enum` or a range
//! never reaches R. This is the first layer of containment (RULES R8.8):
//! whatever R code the tool is made of, it is called only with what its
//! schema allows. A refused call is a tool error (`isError: true`) whose
//! text names each argument at fault and what it expects, so a model can
//! correct itself; the host is not called.
//!
//! Three leniencies, none of which lets anything undeclared through:
//! models that follow strict function-calling dialects send `null` for an
//! optional argument they mean to leave out, so a top-level `null` for an
//! argument that is not required and whose schema does not accept `null` is
//! dropped (the function's default applies); R has no scalars, so a single
//! value where the schema expects an array is checked as an array of that
//! one value (and reaches R as sent, a vector of length one); and a `null`
//! element of an array whose items are of one scalar type is R's `NA`
//! (package tools turn it into one, RULES R8.3). Nothing else is coerced or
//! filled in.
//!
//! Validation is the `jsonschema` crate's, as for output schemas (RULES
//! J4.6): JSON Schema 2020-12 unless the schema names another draft,
//! formats not checked, nothing fetched. Each tool's schema is compiled the
//! first time the tool is called (a server with hundreds of package tools
//! starts without compiling them all). A schema that cannot be compiled (a
//! remote `$ref`, an invalid schema: the author's, RULES P4) leaves its
//! tool's arguments unchecked, noted once on stderr.

use std::io::Write;
use std::sync::OnceLock;

use jsonschema::error::ValidationErrorKind;
use jsonschema::{ValidationError, Validator};
use serde_json::{Map, Value};

use crate::host::ToolSpec;
use crate::schema_words::{quote, through_any_of, type_names};

/// At most this many problems are described in one refusal.
const PROBLEMS_MAX: usize = 3;
/// At most this many rounds of leniencies (a value wrapped in an array may
/// then show a `null` element, ...).
const ROUNDS_MAX: usize = 4;
/// At most this many errors are read from the validator for one call.
const ERRORS_MAX: usize = 64;
/// At most this many names are listed (the arguments a tool takes, the
/// values of an enum).
const NAMES_MAX: usize = 20;

/// The input schemas of a server's tools, compiled on first use.
pub(crate) struct InputSchemas {
    by_tool: Vec<OnceLock<Option<Compiled>>>,
}

struct Compiled {
    validator: Validator,
    /// The schema, to name the undeclared members of an object whose
    /// schema declares none (`jsonschema` reports those as a false schema).
    schema: Value,
    /// The root's declared properties, in order (for "the tool takes").
    takes: Vec<String>,
    /// The root's `required` names.
    required: Vec<String>,
}

/// What the check decided about one call's arguments.
#[derive(Debug, PartialEq)]
pub(crate) enum Checked {
    /// Run the tool with the arguments as they came.
    Valid,
    /// Run the tool with these arguments: the client's, less top-level
    /// `null`s for optional arguments that do not accept `null`.
    Trimmed(Map<String, Value>),
    /// Do not run the tool: the text of the tool error.
    Refused(String),
}

impl InputSchemas {
    pub(crate) fn new(tools: &[ToolSpec]) -> InputSchemas {
        InputSchemas { by_tool: tools.iter().map(|_| OnceLock::new()).collect() }
    }

    /// Check the `arguments` of a call to `tool` (number `index`); `None`
    /// stands for no arguments (`{}`).
    pub(crate) fn check(&self, index: usize, tool: &ToolSpec, arguments: Option<&Value>) -> Checked {
        let Some(slot) = self.by_tool.get(index) else { return Checked::Valid };
        let Some(c) = slot.get_or_init(|| compile(tool)) else { return Checked::Valid };
        let empty;
        let value = match arguments {
            Some(v) => v,
            None => {
                empty = Value::Object(Map::new());
                &empty
            }
        };
        if c.validator.is_valid(value) {
            return Checked::Valid;
        }
        // The leniencies (module docs), applied to a copy that is checked
        // again: a round may uncover what an earlier one hid.
        let mut probe = value.clone();
        let mut dropped: Vec<String> = Vec::new();
        for _ in 0..ROUNDS_MAX {
            let errors: Vec<ValidationError<'_>> = c.validator.iter_errors(&probe).take(ERRORS_MAX).collect();
            let fixes: Vec<Fix> = errors.iter().filter_map(|e| c.fix(&probe, e)).collect();
            if errors.is_empty() || fixes.is_empty() {
                if !errors.is_empty() {
                    return Checked::Refused(c.describe(&tool.name, &probe, &errors));
                }
                break;
            }
            drop(errors);
            for fix in fixes {
                fix.apply(&mut probe, &mut dropped);
            }
        }
        if !c.validator.is_valid(&probe) {
            let errors: Vec<ValidationError<'_>> = c.validator.iter_errors(&probe).take(ERRORS_MAX).collect();
            return Checked::Refused(c.describe(&tool.name, &probe, &errors));
        }
        match value {
            Value::Object(members) if !dropped.is_empty() => Checked::Trimmed(
                members.iter().filter(|(k, _)| !dropped.contains(k)).map(|(k, v)| (k.clone(), v.clone())).collect(),
            ),
            _ => Checked::Valid,
        }
    }
}

/// A leniency applied to the copy that is checked again.
enum Fix {
    /// Leave out the top-level member of this name (the tool gets its
    /// default).
    Drop(String),
    /// Check the single value at this path as an array of it.
    Wrap(String),
    /// Check the `null` element at this path as a value of the type.
    Fill(String, Value),
}

impl Fix {
    fn apply(self, probe: &mut Value, dropped: &mut Vec<String>) {
        match self {
            Fix::Drop(name) => {
                if let Value::Object(m) = probe {
                    m.shift_remove(&name);
                }
                dropped.push(name);
            }
            Fix::Wrap(path) => {
                if let Some(v) = probe.pointer_mut(&path) {
                    let one = v.take();
                    *v = Value::Array(vec![one]);
                }
            }
            Fix::Fill(path, with) => {
                if let Some(v) = probe.pointer_mut(&path) {
                    *v = with;
                }
            }
        }
    }
}

fn compile(tool: &ToolSpec) -> Option<Compiled> {
    let failed = |why: String| {
        // A closed stderr must not disturb the server.
        let _ = writeln!(
            std::io::stderr(),
            "mcplite: the input schema of tool `{}` cannot be compiled ({why}); its arguments are not checked",
            tool.name
        );
        None
    };
    let schema: Value = match serde_json::from_str(&tool.input_schema) {
        Ok(s) => s,
        Err(e) => return failed(e.to_string()),
    };
    let validator = match jsonschema::options().should_validate_formats(false).build(&schema) {
        Ok(v) => v,
        Err(e) => return failed(e.to_string()),
    };
    let names = |member: &str| -> Vec<String> {
        match schema.get(member) {
            Some(Value::Object(m)) => m.keys().cloned().collect(),
            Some(Value::Array(a)) => a.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect(),
            _ => Vec::new(),
        }
    };
    Some(Compiled { takes: names("properties"), required: names("required"), validator, schema })
}

/// An instance path as a model reads it: `name`, `name/0/field`.
fn shown(path: &str) -> String {
    path.strip_prefix('/').unwrap_or(path).replace("~1", "/").replace("~0", "~")
}

fn backticked(names: impl IntoIterator<Item = impl AsRef<str>>) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut more = 0;
    for n in names {
        if out.len() < NAMES_MAX {
            let n = n.as_ref();
            out.push(if n.is_empty() { "with an empty name".to_owned() } else { format!("`{n}`") });
        } else {
            more += 1;
        }
    }
    let mut s = out.join(", ");
    if more > 0 {
        s.push_str(&format!(" and {more} more"));
    }
    s
}

impl Compiled {
    /// The leniency that answers an error, if any: a top-level `null` for
    /// an argument that is not required is dropped; a single value where an
    /// array is expected is checked as an array of it (R has no scalars: a
    /// value is a vector of length one); a `null` element of an array
    /// whose items are of one scalar type is R's `NA`.
    fn fix(&self, probe: &Value, e: &ValidationError<'_>) -> Option<Fix> {
        let (e, types) = through_any_of(e);
        let types = types.unwrap_or_else(|| type_names(e.kind()));
        if types.is_empty() {
            return None;
        }
        let path = e.instance_path().as_str();
        let v = e.instance();
        if v.is_null() {
            if let Some(name) = path.strip_prefix('/').filter(|n| !n.contains('/') && !n.contains('~')) {
                return (!self.required.iter().any(|r| r == name)).then(|| Fix::Drop(name.to_owned()));
            }
            let in_array =
                path.rsplit_once('/').and_then(|(parent, _)| probe.pointer(parent)).is_some_and(Value::is_array);
            let filler = match types.as_slice() {
                [t] if t == "number" || t == "integer" => Value::from(0),
                [t] if t == "string" => Value::from(""),
                [t] if t == "boolean" => Value::from(false),
                _ => return None,
            };
            return in_array.then(|| Fix::Fill(path.to_owned(), filler));
        }
        let scalar = matches!(v.as_ref(), Value::String(_) | Value::Number(_) | Value::Bool(_));
        (scalar && types.iter().any(|t| t == "array")).then(|| Fix::Wrap(path.to_owned()))
    }

    /// The text of the tool error: each distinct problem, at most
    /// [`PROBLEMS_MAX`].
    fn describe(&self, tool: &str, arguments: &Value, errors: &[ValidationError<'_>]) -> String {
        let mut problems: Vec<String> = Vec::new();
        for e in errors {
            let p = self.problem(arguments, e);
            if !problems.contains(&p) {
                problems.push(p);
            }
        }
        let more = problems.len().saturating_sub(PROBLEMS_MAX);
        problems.truncate(PROBLEMS_MAX);
        let mut m = format!("Invalid arguments for tool `{tool}`: {}", problems.join("; "));
        if more > 0 {
            m.push_str(&format!(" (and {more} more)"));
        }
        m.push_str(". The tool was not run.");
        m
    }

    /// The members of the object at `path` that the subschema at
    /// `schema_path` (an `additionalProperties: false`) does not declare.
    fn undeclared(&self, arguments: &Value, path: &str, schema_path: &str) -> Option<Vec<String>> {
        let parent = schema_path.strip_suffix("/additionalProperties")?;
        let declared = self.schema.pointer(parent)?.get("properties").and_then(Value::as_object);
        let object = arguments.pointer(path)?.as_object()?;
        let names: Vec<String> =
            object.keys().filter(|k| !declared.is_some_and(|d| d.contains_key(*k))).cloned().collect();
        (!names.is_empty()).then_some(names)
    }

    fn problem(&self, arguments: &Value, e: &ValidationError<'_>) -> String {
        let (e, types) = through_any_of(e);
        let path = e.instance_path().as_str();
        let root = path.is_empty();
        let at = if root { "the arguments".to_owned() } else { format!("`{}`", shown(path)) };
        if let Some(types) = types {
            return must_be_of(&at, &types, e.instance());
        }
        let from_false;
        let kind = match e.kind() {
            ValidationErrorKind::FalseSchema => match self.undeclared(arguments, path, e.schema_path().as_str()) {
                Some(unexpected) => {
                    from_false = ValidationErrorKind::AdditionalProperties { unexpected };
                    &from_false
                }
                None => e.kind(),
            },
            k => k,
        };
        match kind {
            ValidationErrorKind::AdditionalProperties { unexpected } if root => {
                let s = if unexpected.len() == 1 { "" } else { "s" };
                let takes = if self.takes.is_empty() {
                    "the tool takes no arguments".to_owned()
                } else {
                    format!("the tool takes {}", backticked(&self.takes))
                };
                format!("unexpected argument{s} {} ({takes})", backticked(unexpected))
            }
            ValidationErrorKind::AdditionalProperties { unexpected } => {
                let s = if unexpected.len() == 1 { "" } else { "s" };
                format!("{at} has unexpected member{s} {}", backticked(unexpected))
            }
            ValidationErrorKind::Required { property } => {
                let name = property.as_str().map_or_else(|| property.to_string(), str::to_owned);
                if root {
                    format!("missing required argument `{name}`")
                } else {
                    format!("{at} lacks the required member `{name}`")
                }
            }
            ValidationErrorKind::Type { kind } => {
                let types: Vec<String> = match kind {
                    jsonschema::error::TypeKind::Single(t) => vec![t.to_string()],
                    jsonschema::error::TypeKind::Multiple(ts) => ts.iter().map(|t| t.to_string()).collect(),
                };
                must_be_of(&at, &types, e.instance())
            }
            ValidationErrorKind::Enum { options } => {
                let values: Vec<String> = match options.as_ref() {
                    Value::Array(a) => a.iter().map(quote).collect(),
                    other => vec![quote(other)],
                };
                let shown_values = values.iter().take(NAMES_MAX).cloned().collect::<Vec<_>>().join(", ");
                let more = values.len().saturating_sub(NAMES_MAX);
                let more = if more > 0 { format!(" and {more} more") } else { String::new() };
                format!("{at} must be one of {shown_values}{more}, got {}", quote(e.instance()))
            }
            ValidationErrorKind::FalseSchema if !root => format!("{at} is not accepted"),
            _ => format!("{at}: {}", e.masked_with(quote(e.instance()))),
        }
    }
}

fn must_be_of(at: &str, types: &[String], got: &Value) -> String {
    let names = types.iter().map(|t| format!("\"{t}\"")).collect::<Vec<_>>().join(" or ");
    format!("{at} must be of type {names}, got {}", quote(got))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(schema: &str) -> ToolSpec {
        let mut t = ToolSpec::new("t", "A tool.");
        t.input_schema = schema.to_owned();
        t
    }

    fn check(schema: &str, args: Value) -> Checked {
        let t = tool(schema);
        InputSchemas::new(std::slice::from_ref(&t)).check(0, &t, Some(&args))
    }

    fn refused(schema: &str, args: Value) -> String {
        match check(schema, args) {
            Checked::Refused(m) => m,
            other => panic!("not refused: {other:?}"),
        }
    }

    const XN: &str = r#"{"type":"object","properties":{"x":{"type":"string"},"n":{"type":"integer","description":"N."}},"required":["x"],"additionalProperties":false}"#;

    #[test]
    fn l6_7_conforming_arguments_pass() {
        assert_eq!(check(XN, json!({"x": "a"})), Checked::Valid);
        assert_eq!(check(XN, json!({"x": "a", "n": 3})), Checked::Valid);
        // 2020-12: a number with a zero fraction is an integer.
        assert_eq!(check(XN, json!({"x": "a", "n": 3.0})), Checked::Valid);
        let t = tool(r#"{"type":"object","additionalProperties":false}"#);
        assert_eq!(InputSchemas::new(std::slice::from_ref(&t)).check(0, &t, None), Checked::Valid, "no arguments");
    }

    #[test]
    fn l6_7_undeclared_members_are_refused_naming_them_and_what_the_tool_takes() {
        let m = refused(XN, json!({"x": "a", "FUN": "system"}));
        assert_eq!(
            m,
            "Invalid arguments for tool `t`: unexpected argument `FUN` (the tool takes `x`, `n`). The tool was not run."
        );
        let m = refused(r#"{"type":"object","additionalProperties":false}"#, json!({"a": 1, "b": 2}));
        assert!(m.contains("unexpected arguments `a`, `b` (the tool takes no arguments)"), "{m}");
        // `...` and names R cannot bind are undeclared members too.
        let m = refused(XN, json!({"x": "a", "...": 1, "": 2}));
        assert!(m.contains("unexpected arguments `...`, with an empty name (the tool takes"), "{m}");
    }

    #[test]
    fn l6_7_missing_wrong_type_and_several_problems() {
        let m = refused(XN, json!({}));
        assert!(m.contains("missing required argument `x`"), "{m}");
        let m = refused(XN, json!({"x": 1, "n": "3"}));
        assert!(m.contains(r#"`x` must be of type "string", got 1"#), "{m}");
        assert!(m.contains(r#"`n` must be of type "integer", got "3""#), "{m}");
        let m = refused(XN, json!({"x": "a", "n": 2.5}));
        assert!(m.contains(r#"`n` must be of type "integer", got 2.5"#), "{m}");
        let m = refused(XN, json!({"x": ["a"]}));
        assert!(m.ends_with(". The tool was not run."), "{m}");
    }

    #[test]
    fn l6_7_enums_ranges_and_nested_members() {
        let s = r#"{"type":"object","properties":{"m":{"type":"string","enum":["a","b"]},"k":{"type":"integer","minimum":1,"maximum":5},"o":{"type":"object","properties":{"p":{"type":"boolean"}},"required":["p"],"additionalProperties":false},"v":{"type":"array","items":{"type":"number"}}},"additionalProperties":false}"#;
        let m = refused(s, json!({"m": "c"}));
        assert!(m.contains(r#"`m` must be one of "a", "b", got "c""#), "{m}");
        let m = refused(s, json!({"k": 9}));
        assert!(m.contains("`k`: 9 is greater than the maximum of 5"), "{m}");
        let m = refused(s, json!({"o": {"q": 1}}));
        assert!(m.contains("`o` lacks the required member `p`") && m.contains("`o` has unexpected member `q`"), "{m}");
        let m = refused(s, json!({"v": [1, "2"]}));
        assert!(m.contains(r#"`v/1` must be of type "number", got "2""#), "{m}");
    }

    #[test]
    fn l6_7_nullable_types_read_through_any_of() {
        let s = r#"{"type":"object","properties":{"p":{"anyOf":[{"type":"number"},{"type":"null"}]}},"required":["p"],"additionalProperties":false}"#;
        assert_eq!(check(s, json!({"p": null})), Checked::Valid);
        let m = refused(s, json!({"p": "NA"}));
        assert!(m.contains(r#"`p` must be of type "number" or "null", got "NA""#), "{m}");
    }

    #[test]
    fn l6_7_a_null_optional_argument_is_dropped_but_not_a_required_one() {
        let got = check(XN, json!({"x": "a", "n": null}));
        assert_eq!(got, Checked::Trimmed(json!({"x": "a"}).as_object().unwrap().clone()));
        let m = refused(XN, json!({"x": null, "n": null}));
        assert!(m.contains(r#"`x` must be of type "string", got null"#), "{m}");
        assert!(!m.contains("`n`"), "the optional null is dropped first: {m}");
        // Dropped, and what is left still checked.
        let m = refused(XN, json!({"x": "a", "n": null, "z": 1}));
        assert!(m.contains("unexpected argument `z`"), "{m}");
    }

    #[test]
    fn l6_7_a_single_value_is_an_array_of_one_and_null_elements_are_na() {
        let s = r#"{"type":"object","properties":{"v":{"type":"array","items":{"type":"number"}},"w":{"anyOf":[{"type":"array","items":{"type":"string"}},{"type":"null"}]},"o":{"type":"object","properties":{"0":{"type":"number"}}}},"additionalProperties":false}"#;
        // Passed as sent.
        assert_eq!(check(s, json!({"v": 0.5})), Checked::Valid);
        assert_eq!(check(s, json!({"w": "a"})), Checked::Valid);
        assert_eq!(check(s, json!({"v": [null, 0]})), Checked::Valid);
        assert_eq!(check(s, json!({"v": null})), Checked::Trimmed(Map::new()));
        // Still checked: the single value's type, and only null elements.
        let m = refused(s, json!({"v": "0.5"}));
        assert!(m.contains(r#"`v/0` must be of type "number", got "0.5""#), "{m}");
        let m = refused(s, json!({"v": {"a": 1}}));
        assert!(m.contains(r#"`v` must be of type "array", got {"a":1}"#), "{m}");
        // A member named like an index is not an array element.
        let m = refused(s, json!({"o": {"0": null}}));
        assert!(m.contains(r#"`o/0` must be of type "number", got null"#), "{m}");
        // An undeclared member is refused whatever else is forgiven.
        let m = refused(s, json!({"v": 1, "FUN": "system"}));
        assert!(m.contains("unexpected argument `FUN`"), "{m}");
    }

    #[test]
    fn l6_7_open_schemas_and_schemas_that_cannot_be_compiled() {
        assert_eq!(check(r#"{"type":"object"}"#, json!({"anything": [1]})), Checked::Valid);
        for bad in [r#"{"$ref":"https://example.com/s.json"}"#, "not json", r#"{"type":"object","properties":[]}"#] {
            assert_eq!(check(bad, json!({"a": 1})), Checked::Valid, "{bad}");
        }
        // Formats are annotations.
        let f = r#"{"type":"object","properties":{"d":{"type":"string","format":"date"}}}"#;
        assert_eq!(check(f, json!({"d": "not a date"})), Checked::Valid);
    }

    #[test]
    fn l6_7_long_lists_and_values_are_cut() {
        let props: Vec<String> = (0..30).map(|i| format!(r#""a{i}":{{"type":"string"}}"#)).collect();
        let s = format!(r#"{{"type":"object","properties":{{{}}},"additionalProperties":false}}"#, props.join(","));
        let m = refused(&s, json!({"zz": "x".repeat(500)}));
        assert!(m.contains("`a19` and 10 more"), "{m}");
        let m = refused(XN, json!({"x": "x".repeat(500)}).as_object().map(|_| json!({"x": vec![1; 300]})).unwrap());
        assert!(m.contains('…') && m.len() < 400, "{m}");
    }
}

/// What the check adds to a call, without R (issue 40: at most 10 µs per
/// quick call). Not part of the test command (`#[ignore]`d); run by hand:
///
/// ```sh
/// cargo test --release -p mcplite-engine --lib input_schema::speed -- --ignored --nocapture
/// ```
///
/// Prints, for each case, the median and the best of 21 rounds of 20,000
/// checks each (the first call, which compiles the schema, is not timed).
/// Figures are in bench/results/input-schema.md.
#[cfg(test)]
mod speed {
    use std::hint::black_box;
    use std::time::Instant;

    use serde_json::{json, Value};

    use super::{Checked, InputSchemas};
    use crate::host::ToolSpec;

    #[allow(clippy::print_stdout)] // its output is the figures
    fn time(name: &str, schema: &str, args: Option<Value>, want_valid: bool) {
        let mut t = ToolSpec::new("t", "d");
        t.input_schema = schema.to_owned();
        let s = InputSchemas::new(std::slice::from_ref(&t));
        let first = s.check(0, &t, args.as_ref());
        assert_eq!(first == Checked::Valid, want_valid, "{name}: {first:?}");
        const N: u32 = 20_000;
        let mut per_call: Vec<f64> = (0..21)
            .map(|_| {
                let start = Instant::now();
                for _ in 0..N {
                    black_box(s.check(0, black_box(&t), black_box(args.as_ref())));
                }
                start.elapsed().as_nanos() as f64 / f64::from(N)
            })
            .collect();
        per_call.sort_by(f64::total_cmp);
        println!("{name:<44} median {:>8.0} ns   best {:>8.0} ns", per_call[10], per_call[0]);
    }

    #[test]
    #[ignore]
    fn speed() {
        // The benchmark's quick tool (bench W2: add(x, y)).
        let add = r#"{"type":"object","properties":{"x":{"type":"number","description":"First number."},"y":{"type":"number","description":"Second number."}},"required":["x","y"],"additionalProperties":false}"#;
        time("add(x, y), valid", add, Some(json!({"x": 1.5, "y": 2})), true);
        time("add(x, y), an undeclared member", add, Some(json!({"x": 1, "y": 2, "FUN": "system"})), false);
        time(
            "no arguments, none sent",
            r#"{"type":"object","properties":{},"additionalProperties":false}"#,
            None,
            true,
        );
        // A package tool as package_tools() writes one: several kinds,
        // nullable, an enum, an array, the shaping members.
        let pkg = r#"{"type":"object","properties":{"x":{"type":"array","items":{"type":"number"},"description":"A numeric vector."},"trim":{"type":"number","description":"Fraction."},"na.rm":{"type":"boolean"},"method":{"type":"string","enum":["pearson","kendall","spearman"]},"weights":{"anyOf":[{"type":"array","items":{"type":"number"}},{"type":"null"}]},".limit":{"type":"integer","minimum":0},".format":{"type":"string","enum":["json","csv","markdown"]}},"required":["x"],"additionalProperties":false}"#;
        let xs: Vec<f64> = (0..100).map(f64::from).collect();
        time(
            "package tool, 5 members, x of 100 numbers",
            pkg,
            Some(json!({"x": xs, "trim": 0.1, "na.rm": true, "method": "kendall", ".limit": 10})),
            true,
        );
        time("package tool, a wrong type", pkg, Some(json!({"x": [1, 2], "trim": "0.1"})), false);
    }
}
