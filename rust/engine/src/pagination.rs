//! Pages of the four listings, `tools/list`, `prompts/list`,
//! `resources/list` and `resources/templates/list` (RULES L5.1, L5.2): a
//! listing is cut into pages of at most the server's page size when the
//! server is built, each page encoded once; a page that has a next one
//! names it in `nextCursor`. Without a page size (the default) a listing is
//! one page. The lists never change while a server runs, so a cursor is
//! only the number of the page it starts: `"page-<n>"`, opaque to clients.

use std::num::NonZeroUsize;

use serde_json::Value;

/// A listing's pages, each the JSON array of its items; at least one.
#[derive(Debug)]
pub struct Pages(Vec<Vec<u8>>);

impl Default for Pages {
    /// One empty page.
    fn default() -> Pages {
        Pages(vec![b"[]".to_vec()])
    }
}

impl Pages {
    /// `items` cut into pages of at most `size` items (one page without a
    /// size, or when they fit), each encoded by `array`.
    pub fn new<T>(items: &[T], size: Option<NonZeroUsize>, array: impl Fn(&[T]) -> Vec<u8>) -> Pages {
        match size {
            Some(n) if items.len() > n.get() => Pages(items.chunks(n.get()).map(array).collect()),
            _ => Pages(vec![array(items)]),
        }
    }

    /// Page `i` (a number [`page_of`] gave) and the cursor of the next page,
    /// if there is one.
    pub fn page(&self, i: usize) -> (&[u8], Option<String>) {
        let next = (i + 1 < self.0.len()).then(|| cursor(i + 1));
        (&self.0[i], next)
    }

    /// How many pages there are (at least one).
    pub fn count(&self) -> usize {
        self.0.len()
    }
}

/// The cursor of page `i`.
pub fn cursor(i: usize) -> String {
    format!("page-{i}")
}

/// Why a listing's params were refused (both `-32602`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListError {
    /// `params` is not an object, or its `_meta` is not an object.
    Params,
    /// The cursor is not one this server gives for this listing.
    Cursor,
}

impl ListError {
    /// The detail of the error's message: `invalid cursor` for a cursor.
    pub fn detail(self) -> Option<&'static str> {
        match self {
            ListError::Params => None,
            ListError::Cursor => Some("invalid cursor"),
        }
    }
}

/// The page a listing's `params` ask for, of `count` pages: the first
/// without a cursor (absent or `null`), else the page the cursor names.
pub fn page_of(params: Option<&Value>, count: usize) -> Result<usize, ListError> {
    let p = match params {
        None | Some(Value::Null) => return Ok(0),
        Some(Value::Object(p)) => p,
        Some(_) => return Err(ListError::Params),
    };
    if p.get("_meta").is_some_and(|m| !m.is_object()) {
        return Err(ListError::Params);
    }
    match p.get("cursor") {
        None | Some(Value::Null) => Ok(0),
        Some(Value::String(c)) => c
            .strip_prefix("page-")
            .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) && !n.starts_with('0'))
            .and_then(|n| n.parse::<usize>().ok())
            .filter(|&i| i < count)
            .ok_or(ListError::Cursor),
        Some(_) => Err(ListError::Cursor),
    }
}

/// `,"nextCursor":"…"` when there is a next page.
pub fn write_next(out: &mut Vec<u8>, next: Option<&str>) {
    if let Some(c) = next {
        out.extend_from_slice(b",\"nextCursor\":");
        crate::json::write_str(out, c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn array(items: &[u32]) -> Vec<u8> {
        serde_json::to_vec(items).unwrap()
    }

    #[test]
    fn a_listing_is_cut_into_pages_that_name_the_next() {
        let items: Vec<u32> = (0..7).collect();
        let p = Pages::new(&items, NonZeroUsize::new(3), array);
        assert_eq!(p.count(), 3);
        assert_eq!(p.page(0), (&b"[0,1,2]"[..], Some("page-1".to_string())));
        assert_eq!(p.page(1), (&b"[3,4,5]"[..], Some("page-2".to_string())));
        assert_eq!(p.page(2), (&b"[6]"[..], None));
        // Without a size, or when everything fits: one page, no cursor.
        assert_eq!(Pages::new(&items, None, array).page(0), (&b"[0,1,2,3,4,5,6]"[..], None));
        assert_eq!(Pages::new(&items, NonZeroUsize::new(7), array).count(), 1);
        assert_eq!(Pages::new(&[] as &[u32], NonZeroUsize::new(2), array).page(0), (&b"[]"[..], None));
        assert_eq!(Pages::default().page(0), (&b"[]"[..], None));
    }

    #[test]
    fn cursors_name_a_page_or_are_refused() {
        assert_eq!(page_of(None, 3), Ok(0));
        assert_eq!(page_of(Some(&json!(null)), 3), Ok(0));
        assert_eq!(page_of(Some(&json!({"cursor": null, "_meta": {}})), 3), Ok(0));
        assert_eq!(page_of(Some(&json!({"cursor": "page-2"})), 3), Ok(2));
        for bad in [json!("page-3"), json!("page-"), json!("page-01"), json!("page-+1"), json!("x"), json!(1)] {
            assert_eq!(page_of(Some(&json!({ "cursor": bad })), 3), Err(ListError::Cursor), "{bad}");
        }
        assert_eq!(page_of(Some(&json!({"cursor": "page-1"})), 1), Err(ListError::Cursor));
        assert_eq!(page_of(Some(&json!([])), 1), Err(ListError::Params));
        assert_eq!(page_of(Some(&json!({"_meta": 1})), 1), Err(ListError::Params));
        let mut out = Vec::new();
        write_next(&mut out, Some("page-1"));
        write_next(&mut out, None);
        assert_eq!(out, b",\"nextCursor\":\"page-1\"");
    }
}
