//! Resources (RULES section 17): data a client lists and reads, given by
//! the host when the server is built. A resource has a fixed URI; a
//! resource template matches many URIs (see [`crate::uri_template`]) and
//! fills `{{variable}}` in its text with the values taken from the URI. No R
//! code runs when a client lists or reads a resource, so they are answered
//! on any thread, and a model that picks the URI only ever changes text.

use serde_json::Value;

pub use crate::host::{ResourceBody, ResourceSpec, Resources, TemplateSpec};
use crate::json::write_str;
use crate::projection;
use crate::prompts::fill_with;
use crate::version::Version;

/// Why a `resources/*` request was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadError {
    /// `params` is not an object with a string `uri`.
    BadParams,
    /// No resource has this URI and no template matches it (the URI).
    NotFound(String),
}

impl ReadError {
    /// The detail of the error's message.
    pub fn detail(&self) -> &'static str {
        match self {
            ReadError::BadParams => "the request needs a `uri` string",
            ReadError::NotFound(_) => "Resource not found",
        }
    }

    /// The error's `data`: the URI that was not found.
    pub fn data(&self) -> Option<Vec<u8>> {
        let ReadError::NotFound(uri) = self else { return None };
        let mut out = b"{\"uri\":".to_vec();
        write_str(&mut out, uri);
        out.push(b'}');
        Some(out)
    }
}

fn write_described(out: &mut Vec<u8>, name: &str, title: &Option<String>, description: &Option<String>) {
    out.extend_from_slice(b",\"name\":");
    write_str(out, name);
    if let Some(t) = title {
        out.extend_from_slice(b",\"title\":");
        write_str(out, t);
    }
    if let Some(d) = description {
        out.extend_from_slice(b",\"description\":");
        write_str(out, d);
    }
}

/// The `resources` array of a `resources/list` result (RULES U1.2; the same
/// in every version).
pub fn list_array(resources: &[ResourceSpec]) -> Vec<u8> {
    let mut out = Vec::with_capacity(160 * resources.len() + 2);
    out.push(b'[');
    for (i, r) in resources.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"uri\":");
        write_str(&mut out, &r.uri);
        write_described(&mut out, &r.name, &r.title, &r.description);
        out.extend_from_slice(b",\"mimeType\":");
        write_str(&mut out, &r.mime_type);
        out.extend_from_slice(b",\"size\":");
        out.extend_from_slice(r.size.to_string().as_bytes());
        out.push(b'}');
    }
    out.push(b']');
    out
}

/// The `resourceTemplates` array of a `resources/templates/list` result
/// (RULES U1.3).
pub fn templates_array(templates: &[TemplateSpec]) -> Vec<u8> {
    let mut out = Vec::with_capacity(160 * templates.len() + 2);
    out.push(b'[');
    for (i, t) in templates.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"uriTemplate\":");
        write_str(&mut out, &t.uri_template);
        write_described(&mut out, &t.name, &t.title, &t.description);
        out.extend_from_slice(b",\"mimeType\":");
        write_str(&mut out, &t.mime_type);
        out.push(b'}');
    }
    out.push(b']');
    out
}

/// The `uri` of a `resources/read`, `resources/subscribe` or
/// `resources/unsubscribe` request.
fn uri_param(params: Option<&Value>) -> Result<&str, ReadError> {
    params.and_then(Value::as_object).and_then(|p| p.get("uri")).and_then(Value::as_str).ok_or(ReadError::BadParams)
}

/// What a URI names: a resource, or a template with the URI's values.
enum Found<'a> {
    Resource(&'a ResourceSpec),
    Template(&'a TemplateSpec, Vec<String>),
}

/// The resource with this URI, else the first template (in listing order)
/// that matches it (RULES U2.2).
fn find<'a>(res: &'a Resources, uri: &str) -> Result<Found<'a>, ReadError> {
    if let Some(r) = res.resources.iter().find(|r| r.uri == uri) {
        return Ok(Found::Resource(r));
    }
    res.templates
        .iter()
        .find_map(|t| t.template.matches(uri).map(|vals| Found::Template(t, vals)))
        .ok_or_else(|| ReadError::NotFound(uri.to_string()))
}

/// `resources/subscribe` (RULES U3.1): the URI, when `resources/read`
/// would find it. `resources/unsubscribe`: the URI, whatever it names.
pub fn check_subscription<'p>(
    res: &Resources,
    params: Option<&'p Value>,
    subscribe: bool,
) -> Result<&'p str, ReadError> {
    let uri = uri_param(params)?;
    if subscribe {
        find(res, uri)?;
    }
    Ok(uri)
}

/// Does `uri` name a resource or match a template (would
/// `resources/read` find it)?
pub fn names(res: &Resources, uri: &str) -> bool {
    find(res, uri).is_ok()
}

/// The `ReadResourceResult` of a `resources/read` request's `params` in
/// version `v` (RULES U2), or why not.
pub fn write_read_result(
    out: &mut Vec<u8>,
    res: &Resources,
    params: Option<&Value>,
    v: Version,
    server_info: &str,
) -> Result<(), ReadError> {
    let uri = uri_param(params)?;
    let (mime, body) = match find(res, uri)? {
        Found::Resource(r) => (&r.mime_type, std::borrow::Cow::Borrowed(&r.body)),
        Found::Template(t, values) => {
            let body = match &t.body {
                ResourceBody::Text(text) => {
                    let filled = fill_with(text, |name| {
                        t.template.variables().position(|n| n == name).map(|i| values[i].as_str())
                    });
                    std::borrow::Cow::Owned(ResourceBody::Text(filled.into_owned()))
                }
                blob => std::borrow::Cow::Borrowed(blob),
            };
            (&t.mime_type, body)
        }
    };
    projection::open_result(out, v);
    out.extend_from_slice(b"\"contents\":[{\"uri\":");
    write_str(out, uri);
    out.extend_from_slice(b",\"mimeType\":");
    write_str(out, mime);
    match body.as_ref() {
        ResourceBody::Text(t) => {
            out.extend_from_slice(b",\"text\":");
            write_str(out, t);
        }
        ResourceBody::Blob(b) => {
            out.extend_from_slice(b",\"blob\":");
            write_str(out, b);
        }
    }
    out.extend_from_slice(b"}]");
    projection::close_result(out, v, server_info, true);
    Ok(())
}

/// A rough size of a read's result, to reserve the buffer once.
pub fn read_result_len(res: &Resources, params: Option<&Value>) -> usize {
    let body_len = |b: &ResourceBody| match b {
        ResourceBody::Text(t) => t.len() + t.len() / 8,
        ResourceBody::Blob(b) => b.len(),
    };
    let biggest = res
        .resources
        .iter()
        .map(|r| &r.body)
        .chain(res.templates.iter().map(|t| &t.body))
        .map(body_len)
        .max()
        .unwrap_or(0);
    let uri = uri_param(params).map_or(0, str::len);
    biggest + 2 * uri + 256
}

/// The values a template variable's completion offers: `None` when `uri`
/// is not one of the templates (RULES U4.1).
pub fn template_values<'a>(res: &'a Resources, uri: &str, variable: &str) -> Option<&'a [String]> {
    let t = res.templates.iter().find(|t| t.uri_template == uri)?;
    Some(t.variables.iter().find(|a| a.name == variable).map_or(&[][..], |a| a.values.as_slice()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::PromptArgument;
    use crate::uri_template::UriTemplate;
    use serde_json::json;

    fn res() -> Resources {
        Resources {
            resources: vec![
                ResourceSpec {
                    uri: "test://static-text".into(),
                    name: "static-text".into(),
                    title: Some("Static".into()),
                    description: None,
                    mime_type: "text/plain".into(),
                    size: 5,
                    body: ResourceBody::Text("hello".into()),
                },
                ResourceSpec {
                    uri: "test://static-binary".into(),
                    name: "bin".into(),
                    title: None,
                    description: Some("Bytes.".into()),
                    mime_type: "image/png".into(),
                    size: 3,
                    body: ResourceBody::Blob("AAEC".into()),
                },
            ],
            templates: vec![TemplateSpec {
                template: UriTemplate::parse("test://template/{id}/data").unwrap(),
                uri_template: "test://template/{id}/data".into(),
                name: "data".into(),
                title: None,
                description: None,
                mime_type: "application/json".into(),
                body: ResourceBody::Text("{\"id\":\"{{id}}\",\"other\":\"{{other}}\"}".into()),
                variables: vec![PromptArgument {
                    name: "id".into(),
                    description: None,
                    required: true,
                    values: vec!["123".into(), "124".into()],
                }],
            }],
        }
    }

    fn read(params: Value, v: Version) -> Result<Value, ReadError> {
        let mut out = Vec::new();
        write_read_result(&mut out, &res(), Some(&params), v, r#"{"name":"s","version":"1"}"#)?;
        Ok(serde_json::from_slice(&out).unwrap())
    }

    #[test]
    fn listings_describe_each_resource_and_template() {
        let r = res();
        let l: Value = serde_json::from_slice(&list_array(&r.resources)).unwrap();
        assert_eq!(
            l,
            json!([
                {"uri": "test://static-text", "name": "static-text", "title": "Static", "mimeType": "text/plain", "size": 5},
                {"uri": "test://static-binary", "name": "bin", "description": "Bytes.", "mimeType": "image/png", "size": 3}
            ])
        );
        let t: Value = serde_json::from_slice(&templates_array(&r.templates)).unwrap();
        assert_eq!(
            t,
            json!([{"uriTemplate": "test://template/{id}/data", "name": "data", "mimeType": "application/json"}])
        );
    }

    #[test]
    fn reads_text_blob_and_filled_templates_in_both_eras() {
        let t = read(json!({"uri": "test://static-text"}), Version::V2025_11_25).unwrap();
        assert_eq!(t, json!({"contents": [{"uri": "test://static-text", "mimeType": "text/plain", "text": "hello"}]}));
        let b = read(json!({"uri": "test://static-binary"}), Version::V2025_06_18).unwrap();
        assert_eq!(b["contents"][0]["blob"], "AAEC");
        let m = read(json!({"uri": "test://template/a%22b/data"}), Version::V2026_07_28).unwrap();
        assert_eq!(m["resultType"], "complete");
        assert_eq!(m["contents"][0]["uri"], "test://template/a%22b/data");
        // One pass: the value is JSON-escaped by nothing (the body is text),
        // and an undeclared placeholder stays.
        assert_eq!(m["contents"][0]["text"], "{\"id\":\"a\"b\",\"other\":\"{{other}}\"}");
        assert_eq!(m["ttlMs"], 300000);
        assert!(m["_meta"].is_object());
    }

    #[test]
    fn unknown_uris_and_bad_params_are_refused() {
        assert_eq!(
            read(json!({"uri": "test://nope"}), Version::V2025_11_25),
            Err(ReadError::NotFound("test://nope".into()))
        );
        assert_eq!(read(json!({"uri": 1}), Version::V2025_11_25), Err(ReadError::BadParams));
        assert_eq!(read(json!([]), Version::V2025_11_25), Err(ReadError::BadParams));
        assert_eq!(ReadError::NotFound("a\"b".into()).data().unwrap(), br#"{"uri":"a\"b"}"#.to_vec());
        assert!(check_subscription(&res(), Some(&json!({"uri": "test://template/9/data"})), true).is_ok());
        assert!(check_subscription(&res(), Some(&json!({"uri": "test://template/9"})), true).is_err());
        // Unsubscribing needs only a URI (the resource may be gone).
        assert_eq!(
            check_subscription(&res(), Some(&json!({"uri": "test://template/9"})), false),
            Ok("test://template/9")
        );
        assert!(check_subscription(&res(), Some(&json!({})), false).is_err());
        assert!(names(&res(), "test://template/9/data") && !names(&res(), "test://template/9"));
    }

    #[test]
    fn template_values_for_completion() {
        let r = res();
        assert_eq!(template_values(&r, "test://template/{id}/data", "id").unwrap(), ["123", "124"]);
        assert!(template_values(&r, "test://template/{id}/data", "zz").unwrap().is_empty());
        assert!(template_values(&r, "test://x/{id}", "id").is_none());
    }
}
