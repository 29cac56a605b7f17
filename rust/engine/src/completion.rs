//! Completion (RULES Q3, U4): the values a client offers as its user types
//! a prompt argument or a resource template variable, taken from the
//! `type_enum()` the author gave. No R code runs.

use serde_json::Value;

use crate::json::write_str;
use crate::projection;
use crate::prompts::PromptSpec;
use crate::resources::{self, Resources};
use crate::version::Version;

/// The most values one completion gives (the specification's limit).
pub const MAX_COMPLETIONS: usize = 100;

/// Why `completion/complete` was refused: the detail of its `-32602`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompleteError {
    /// `ref` or `argument` is missing or malformed.
    BadParams,
    /// `ref` names a prompt this server does not have.
    UnknownPrompt,
    /// `ref` names a resource template this server does not have.
    UnknownTemplate,
}

impl CompleteError {
    pub fn detail(self) -> &'static str {
        match self {
            CompleteError::BadParams => "completion/complete needs a ref and an argument with a name and a value",
            CompleteError::UnknownPrompt => "unknown prompt",
            CompleteError::UnknownTemplate => "unknown resource template",
        }
    }
}

/// The `CompleteResult` of a `completion/complete` request's `params`: the
/// values of the prompt argument or template variable that start with the
/// value typed so far (ignoring case), in the order given, at most
/// [`MAX_COMPLETIONS`]. An argument without values, or not declared, gets
/// none.
pub fn write_complete_result(
    out: &mut Vec<u8>,
    prompts: &[PromptSpec],
    res: &Resources,
    params: Option<&Value>,
    v: Version,
    server_info: &str,
) -> Result<(), CompleteError> {
    let p = params.and_then(Value::as_object).ok_or(CompleteError::BadParams)?;
    let r = p.get("ref").and_then(Value::as_object).ok_or(CompleteError::BadParams)?;
    let a = p.get("argument").and_then(Value::as_object).ok_or(CompleteError::BadParams)?;
    let (Some(arg), Some(typed)) = (a.get("name").and_then(Value::as_str), a.get("value").and_then(Value::as_str))
    else {
        return Err(CompleteError::BadParams);
    };
    let values: &[String] = match r.get("type").and_then(Value::as_str) {
        Some("ref/prompt") => {
            let name = r.get("name").and_then(Value::as_str).ok_or(CompleteError::BadParams)?;
            let spec = prompts.iter().find(|s| s.name == name).ok_or(CompleteError::UnknownPrompt)?;
            spec.arguments.iter().find(|x| x.name == arg).map_or(&[], |x| x.values.as_slice())
        }
        Some("ref/resource") => {
            let uri = r.get("uri").and_then(Value::as_str).ok_or(CompleteError::BadParams)?;
            resources::template_values(res, uri, arg).ok_or(CompleteError::UnknownTemplate)?
        }
        _ => return Err(CompleteError::BadParams),
    };
    let typed = typed.to_lowercase();
    let matching: Vec<&str> =
        values.iter().map(String::as_str).filter(|v| v.to_lowercase().starts_with(&typed)).collect();
    projection::open_result(out, v);
    out.extend_from_slice(b"\"completion\":{\"values\":[");
    for (i, m) in matching.iter().take(MAX_COMPLETIONS).enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_str(out, m);
    }
    out.extend_from_slice(b"],\"total\":");
    out.extend_from_slice(matching.len().to_string().as_bytes());
    out.extend_from_slice(if matching.len() > MAX_COMPLETIONS {
        b",\"hasMore\":true}"
    } else {
        b",\"hasMore\":false}"
    });
    projection::close_result(out, v, server_info, false);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::{Block, PromptArgument, ResourceBody, Role, TemplateSpec};
    use crate::uri_template::UriTemplate;
    use serde_json::json;

    fn arg(name: &str, values: &[&str]) -> PromptArgument {
        PromptArgument {
            name: name.into(),
            description: None,
            required: false,
            values: values.iter().map(|s| s.to_string()).collect(),
        }
    }

    fn complete(params: Value, v: Version) -> Result<Value, CompleteError> {
        let prompts = [PromptSpec {
            name: "review".into(),
            description: "Review.".into(),
            arguments: vec![arg("path", &[]), arg("focus", &["speed", "Safety", "style"])],
            messages: vec![(Role::User, Block::text("x"))],
        }];
        let many: Vec<String> = (0..150).map(|i| format!("v{i}")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        let res = Resources {
            resources: vec![],
            templates: vec![TemplateSpec {
                template: UriTemplate::parse("data://{name}/{col}").unwrap(),
                uri_template: "data://{name}/{col}".into(),
                name: "data".into(),
                title: None,
                description: None,
                mime_type: "text/csv".into(),
                body: ResourceBody::Text("x".into()),
                variables: vec![arg("name", &["iris", "mtcars"]), arg("col", &many)],
            }],
        };
        let mut out = Vec::new();
        write_complete_result(&mut out, &prompts, &res, Some(&params), v, r#"{"name":"s","version":"1"}"#)?;
        Ok(serde_json::from_slice(&out).unwrap())
    }

    #[test]
    fn q3_prompt_arguments_by_prefix() {
        let p = |arg: &str, typed: &str| json!({"ref": {"type": "ref/prompt", "name": "review"}, "argument": {"name": arg, "value": typed}});
        let v = Version::V2025_11_25;
        assert_eq!(
            complete(p("focus", "s"), v).unwrap(),
            json!({"completion": {"values": ["speed", "Safety", "style"], "total": 3, "hasMore": false}})
        );
        assert_eq!(complete(p("focus", "SP"), v).unwrap()["completion"]["values"], json!(["speed"]));
        assert_eq!(complete(p("path", ""), v).unwrap()["completion"]["values"], json!([]));
        assert_eq!(complete(p("nope", ""), v).unwrap()["completion"]["total"], 0);
        let m = complete(p("focus", "st"), Version::V2026_07_28).unwrap();
        assert_eq!(m["resultType"], "complete");
        assert_eq!(m["completion"]["values"], json!(["style"]));
        assert_eq!(
            complete(json!({"ref": {"type": "ref/prompt", "name": "x"}, "argument": {"name": "a", "value": ""}}), v),
            Err(CompleteError::UnknownPrompt)
        );
        assert_eq!(
            complete(json!({"ref": {"type": "ref/prompt", "name": "review"}}), v),
            Err(CompleteError::BadParams)
        );
    }

    #[test]
    fn u4_template_variables_by_prefix() {
        let r = |uri: &str, arg: &str, typed: &str| json!({"ref": {"type": "ref/resource", "uri": uri}, "argument": {"name": arg, "value": typed}});
        let v = Version::V2025_06_18;
        assert_eq!(
            complete(r("data://{name}/{col}", "name", "I"), v).unwrap()["completion"]["values"],
            json!(["iris"])
        );
        let all = complete(r("data://{name}/{col}", "col", ""), v).unwrap();
        assert_eq!(all["completion"]["values"].as_array().unwrap().len(), MAX_COMPLETIONS);
        assert_eq!(all["completion"]["total"], 150);
        assert_eq!(all["completion"]["hasMore"], true);
        assert_eq!(complete(r("data://{name}/{col}", "zz", ""), v).unwrap()["completion"]["total"], 0);
        assert_eq!(complete(r("data://iris/x", "name", ""), v), Err(CompleteError::UnknownTemplate));
        assert_eq!(
            complete(json!({"ref": {"type": "ref/resource"}, "argument": {"name": "a", "value": ""}}), v),
            Err(CompleteError::BadParams)
        );
    }
}
