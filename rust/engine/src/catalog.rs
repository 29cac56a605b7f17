//! What a server offers beside tools, answered without the host: prompts
//! (RULES section 16), resources and resource templates (section 17) and
//! completion of their arguments (Q3, U4). The dispatcher asks
//! [`Catalog::answer`] for these methods; everything here is read-only, so
//! it is answered on any thread, also while a tool runs.

use serde_json::Value;

use crate::codes::{INVALID_PARAMS, RESOURCE_NOT_FOUND};
use std::num::NonZeroUsize;

use crate::completion;
use crate::pagination::{self, Pages};
use crate::projection::{self, Offers};
use crate::prompts::{self, PromptSpec};
use crate::resources::{self, ReadError, Resources};
use crate::version::Version;

/// The prompts and resources of a server with their listings, encoded once.
#[derive(Debug, Default)]
pub struct Catalog {
    prompts: Vec<PromptSpec>,
    prompt_listing: Pages,
    resources: Resources,
    resource_listing: Pages,
    template_listing: Pages,
}

/// A refused catalog request: its code, the detail of its message (if
/// any), its `data` (JSON text), and whether the detail is the whole
/// message.
#[derive(Debug, PartialEq)]
pub struct Refusal {
    pub code: i64,
    pub detail: Option<&'static str>,
    pub data: Option<Vec<u8>>,
    pub whole: bool,
}

impl Catalog {
    /// The catalog of these prompts and resources, whose listings have
    /// pages of at most `page_size` items (RULES L5.2).
    pub fn new(prompts: Vec<PromptSpec>, resources: Resources, page_size: Option<NonZeroUsize>) -> Catalog {
        Catalog {
            prompt_listing: Pages::new(&prompts, page_size, prompts::list_array),
            prompts,
            resource_listing: Pages::new(&resources.resources, page_size, resources::list_array),
            template_listing: Pages::new(&resources.templates, page_size, resources::templates_array),
            resources,
        }
    }

    /// The same catalog with pages of at most `page_size` items.
    pub fn paged(self, page_size: Option<NonZeroUsize>) -> Catalog {
        Catalog::new(self.prompts, self.resources, page_size)
    }

    /// The resources and templates.
    pub fn resources(&self) -> &Resources {
        &self.resources
    }

    /// The same prompts with these resources (RULES U3.2).
    pub fn with_resources(&self, resources: Resources, page_size: Option<NonZeroUsize>) -> Catalog {
        Catalog::new(self.prompts.clone(), resources, page_size)
    }

    /// What the server declares in `initialize` and `server/discover`.
    pub fn offers(&self) -> Offers {
        let prompts = !self.prompts.is_empty();
        Offers {
            prompts,
            resources: !self.resources.is_empty(),
            completions: prompts || !self.resources.templates.is_empty(),
            resource_changes: false,
            tasks: None,
        }
    }

    /// Does this server answer `method` in version `v`? (Otherwise it is
    /// not found, RULES section 10.) `resources/subscribe` and
    /// `resources/unsubscribe` exist in the legacy versions only.
    pub fn answers(&self, method: &str, modern: bool) -> bool {
        let o = self.offers();
        match method {
            "prompts/list" | "prompts/get" => o.prompts,
            "resources/list" | "resources/templates/list" | "resources/read" => o.resources,
            "resources/subscribe" | "resources/unsubscribe" => o.resources && !modern,
            "completion/complete" => o.completions,
            _ => false,
        }
    }

    /// Write the result object of `method` (one [`Catalog::answers`]
    /// accepts) for `params` in version `v` to `out`, or say why not (then
    /// `out` holds a part and is dropped).
    pub fn answer(
        &self,
        out: &mut Vec<u8>,
        method: &str,
        params: Option<&Value>,
        v: Version,
        server_info: &str,
    ) -> Result<(), Refusal> {
        let invalid = |detail: &'static str, data: Option<Vec<u8>>| Refusal {
            code: INVALID_PARAMS,
            detail: Some(detail),
            data,
            whole: false,
        };
        match method {
            "prompts/list" => write_listing(out, "prompts", &self.prompt_listing, params, v, server_info)?,
            "resources/list" => write_listing(out, "resources", &self.resource_listing, params, v, server_info)?,
            "resources/templates/list" => {
                write_listing(out, "resourceTemplates", &self.template_listing, params, v, server_info)?
            }
            "prompts/get" => prompts::write_get_result(out, &self.prompts, params, v, server_info)
                .map_err(|e| invalid(e.detail(), e.data()))?,
            "completion/complete" => {
                completion::write_complete_result(out, &self.prompts, &self.resources, params, v, server_info)
                    .map_err(|e| invalid(e.detail(), None))?
            }
            "resources/read" => {
                out.reserve(resources::read_result_len(&self.resources, params));
                resources::write_read_result(out, &self.resources, params, v, server_info)
                    .map_err(|e| not_found(e, v))?
            }
            _ => {
                // subscribe and unsubscribe: an empty result (RULES U3.1);
                // the dispatcher records the subscription.
                resources::check_subscription(&self.resources, params, method == "resources/subscribe")
                    .map_err(|e| not_found(e, v))?;
                out.extend_from_slice(b"{}");
            }
        }
        Ok(())
    }
}

/// A URI not found is `-32002` in the legacy versions and `-32602` in
/// 2026-07-28, "Resource not found" with the URI as `data` (RULES U2.3).
fn not_found(e: ReadError, v: Version) -> Refusal {
    let found = matches!(e, ReadError::NotFound(_));
    let code = if found && !v.is_modern() { RESOURCE_NOT_FOUND } else { INVALID_PARAMS };
    Refusal { code, detail: Some(e.detail()), data: e.data(), whole: found }
}

/// The result of the page of `listing` (its array under `key`) that
/// `params` ask for, with `nextCursor` when a page follows (RULES L5.2): in
/// 2026-07-28 also `resultType`, the cache hints and the server's `_meta`
/// (RULES Q1.2, U1.2).
fn write_listing(
    out: &mut Vec<u8>,
    key: &str,
    listing: &Pages,
    params: Option<&Value>,
    v: Version,
    server_info: &str,
) -> Result<(), Refusal> {
    let page = pagination::page_of(params, listing.count()).map_err(|e| Refusal {
        code: INVALID_PARAMS,
        detail: e.detail(),
        data: None,
        whole: false,
    })?;
    let (items, next) = listing.page(page);
    out.reserve(items.len() + 200);
    projection::open_result(out, v);
    out.push(b'"');
    out.extend_from_slice(key.as_bytes());
    out.extend_from_slice(b"\":");
    out.extend_from_slice(items);
    pagination::write_next(out, next.as_deref());
    projection::close_result(out, v, server_info, true);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::{ResourceBody, ResourceSpec};
    use serde_json::json;

    fn catalog() -> Catalog {
        Catalog::new(
            Vec::new(),
            Resources {
                resources: vec![ResourceSpec {
                    uri: "a://b".into(),
                    name: "b".into(),
                    title: None,
                    description: None,
                    mime_type: "text/plain".into(),
                    size: 1,
                    body: ResourceBody::Text("x".into()),
                }],
                templates: vec![],
            },
            None,
        )
    }

    #[test]
    fn offers_and_methods_follow_what_was_given() {
        let c = catalog();
        assert_eq!(
            c.offers(),
            Offers { prompts: false, resources: true, completions: false, resource_changes: false, tasks: None }
        );
        assert!(c.answers("resources/subscribe", false));
        assert!(!c.answers("resources/subscribe", true));
        assert!(!c.answers("prompts/list", false));
        assert!(!c.answers("completion/complete", false));
        assert_eq!(Catalog::default().offers(), Offers::default());
    }

    fn answer(c: &Catalog, method: &str, params: Option<&Value>, v: Version) -> Result<Vec<u8>, Refusal> {
        let mut out = Vec::new();
        c.answer(&mut out, method, params, v, r#"{"name":"s","version":"1"}"#).map(|()| out)
    }

    #[test]
    fn listings_and_not_found_per_era() {
        let c = catalog();
        let l: Value =
            serde_json::from_slice(&answer(&c, "resources/list", None, Version::V2025_11_25).unwrap()).unwrap();
        assert_eq!(l["resources"][0]["uri"], "a://b");
        let m: Value =
            serde_json::from_slice(&answer(&c, "resources/templates/list", None, Version::V2026_07_28).unwrap())
                .unwrap();
        assert_eq!(m["resourceTemplates"], json!([]));
        assert_eq!(m["resultType"], "complete");
        let p = json!({"uri": "a://c"});
        let legacy = answer(&c, "resources/read", Some(&p), Version::V2025_11_25).unwrap_err();
        assert_eq!((legacy.code, legacy.data.as_deref()), (RESOURCE_NOT_FOUND, Some(&br#"{"uri":"a://c"}"#[..])));
        let modern = answer(&c, "resources/read", Some(&p), Version::V2026_07_28).unwrap_err();
        assert_eq!(modern.code, INVALID_PARAMS);
        let sub = answer(&c, "resources/subscribe", Some(&json!({"uri": "a://b"})), Version::V2025_06_18);
        assert_eq!(sub.unwrap(), b"{}");
        let bad = answer(&c, "resources/unsubscribe", Some(&json!({})), Version::V2025_06_18).unwrap_err();
        assert_eq!((bad.code, bad.data), (INVALID_PARAMS, None));
    }
}
