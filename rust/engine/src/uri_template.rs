//! URI templates of resource templates (RULES U1.3): the subset of RFC 6570
//! a server needs to recognise the URIs it offers. A template is literal
//! text with expressions `{name}` (simple expansion: a value without `/`,
//! `?` or `#`) and `{+name}` (reserved expansion: a value that may hold
//! `/`), each naming one variable. Matching a URI gives each variable's
//! value, percent-decoded.
//!
//! Written here rather than taken from a crate: the crates on crates.io
//! expand templates (values to a URI), and none of them matches a URI
//! against a template, which is the only direction a server needs.

/// The longest URI matched against templates, in bytes: longer URIs match
/// none (matching is quadratic in the length at worst).
pub const MAX_URI: usize = 2048;

/// The most variables a template may have.
pub const MAX_VARIABLES: usize = 16;

/// A parsed template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriTemplate {
    parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    /// A variable's name and whether its value may hold `/` (`{+name}`).
    Var(String, bool),
}

/// Why a template was refused, in words for the server's author.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateError(pub String);

impl UriTemplate {
    /// Parse `template`. Refused: an unclosed or empty expression, an
    /// operator other than `+`, several variables in one expression, a
    /// variable name that is not letters, digits and `_`, a name used
    /// twice, two expressions side by side (their values could not be told
    /// apart), no variable at all, or more than [`MAX_VARIABLES`].
    pub fn parse(template: &str) -> Result<UriTemplate, TemplateError> {
        let err = |m: String| Err(TemplateError(m));
        let mut parts = Vec::new();
        let mut rest = template;
        while let Some(open) = rest.find('{') {
            if open > 0 {
                parts.push(Part::Literal(rest[..open].to_string()));
            } else if matches!(parts.last(), Some(Part::Var(..))) {
                return err("two expressions side by side (put literal text between them)".into());
            }
            let after = &rest[open + 1..];
            let Some(close) = after.find('}') else {
                return err("an expression is not closed with `}`".into());
            };
            let expr = &after[..close];
            let (name, reserved) = match expr.strip_prefix('+') {
                Some(n) => (n, true),
                None => (expr, false),
            };
            if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
                return err(format!(
                    "`{{{expr}}}` is not `{{name}}` or `{{+name}}` with a name of letters, digits and `_`"
                ));
            }
            if parts.iter().any(|p| matches!(p, Part::Var(n, _) if n == name)) {
                return err(format!("the variable `{name}` is used twice"));
            }
            parts.push(Part::Var(name.to_string(), reserved));
            rest = &after[close + 1..];
        }
        if rest.contains('}') {
            return err("a `}` without its `{`".into());
        }
        if !rest.is_empty() {
            parts.push(Part::Literal(rest.to_string()));
        }
        let n = parts.iter().filter(|p| matches!(p, Part::Var(..))).count();
        if n == 0 {
            return err("no `{name}` variable (a fixed URI is a resource, not a template)".into());
        }
        if n > MAX_VARIABLES {
            return err(format!("more than {MAX_VARIABLES} variables"));
        }
        Ok(UriTemplate { parts })
    }

    /// The variables' names, in order.
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(|p| match p {
            Part::Var(n, _) => Some(n.as_str()),
            Part::Literal(_) => None,
        })
    }

    /// The value of each variable (in [`UriTemplate::variables`] order) when
    /// `uri` is one of this template's URIs. A value is at least one byte;
    /// percent escapes are decoded, and a value that is not UTF-8 after
    /// decoding, or holds a NUL, matches nothing.
    pub fn matches(&self, uri: &str) -> Option<Vec<String>> {
        if uri.len() > MAX_URI {
            return None;
        }
        let mut spans = Vec::with_capacity(self.parts.len());
        // failed[i * (len + 1) + pos]: part i cannot match from pos.
        let mut failed = vec![false; self.parts.len() * (uri.len() + 1)];
        if !self.match_from(uri.as_bytes(), 0, 0, &mut spans, &mut failed) {
            return None;
        }
        spans.into_iter().map(|(a, b)| decode(&uri[a..b])).collect()
    }

    fn match_from(
        &self,
        uri: &[u8],
        part: usize,
        pos: usize,
        spans: &mut Vec<(usize, usize)>,
        failed: &mut [bool],
    ) -> bool {
        let Some(p) = self.parts.get(part) else {
            return pos == uri.len();
        };
        let key = part * (uri.len() + 1) + pos;
        if failed[key] {
            return false;
        }
        let ok = match p {
            Part::Literal(l) => {
                uri[pos..].starts_with(l.as_bytes()) && self.match_from(uri, part + 1, pos + l.len(), spans, failed)
            }
            Part::Var(_, reserved) => {
                let mut found = false;
                let mut end = pos;
                while end < uri.len() {
                    let b = uri[end];
                    if b == b'#' || (!reserved && (b == b'/' || b == b'?')) {
                        break;
                    }
                    end += 1;
                    // A value ends where the next literal can start (or at
                    // the end, for a last variable).
                    spans.push((pos, end));
                    if self.match_from(uri, part + 1, end, spans, failed) {
                        found = true;
                        break;
                    }
                    spans.pop();
                }
                found
            }
        };
        if !ok {
            failed[key] = true;
        }
        ok
    }
}

/// `s` with `%XX` escapes decoded; `None` when an escape is malformed or the
/// result is not UTF-8 or holds a NUL.
fn decode(s: &str) -> Option<String> {
    if !s.contains('%') {
        return (!s.contains('\0')).then(|| s.to_string());
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = b.get(i + 1..i + 3)?;
            let v = u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?;
            out.push(v);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    let text = String::from_utf8(out).ok()?;
    (!text.contains('\0')).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> UriTemplate {
        UriTemplate::parse(s).unwrap()
    }

    #[test]
    fn simple_variables_match_one_segment() {
        let tpl = t("test://template/{id}/data");
        assert_eq!(tpl.variables().collect::<Vec<_>>(), ["id"]);
        assert_eq!(tpl.matches("test://template/123/data"), Some(vec!["123".into()]));
        assert_eq!(tpl.matches("test://template/1/2/data"), None);
        assert_eq!(tpl.matches("test://template//data"), None);
        assert_eq!(tpl.matches("test://template/123/data/x"), None);
        assert_eq!(tpl.matches("test://other/123/data"), None);
        let last = t("data://{name}");
        assert_eq!(last.matches("data://iris"), Some(vec!["iris".into()]));
        assert_eq!(last.matches("data://iris?x=1"), None);
        assert_eq!(last.matches("data://"), None);
    }

    #[test]
    fn reserved_variables_take_slashes_and_values_are_decoded() {
        let tpl = t("file:///{+path}.csv");
        assert_eq!(tpl.matches("file:///a/b.c.csv"), Some(vec!["a/b.c".into()]));
        assert_eq!(tpl.matches("file:///a%20b.csv"), Some(vec!["a b".into()]));
        assert_eq!(tpl.matches("file:///a%2.csv"), None);
        assert_eq!(tpl.matches("file:///a%00.csv"), None);
        assert_eq!(tpl.matches("file:///%ff.csv"), None);
        let two = t("db://{schema}/{+table}");
        assert_eq!(two.matches("db://s/t/u"), Some(vec!["s".into(), "t/u".into()]));
    }

    #[test]
    fn bad_templates_are_refused() {
        for bad in [
            "x://{a",
            "x://{}",
            "x://{a,b}",
            "x://{#a}",
            "x://{a-b}",
            "x://{a}{b}",
            "x://{a}/{a}",
            "x://fixed",
            "x://a}",
        ] {
            assert!(UriTemplate::parse(bad).is_err(), "{bad}");
        }
        let many: String = (0..17).map(|i| format!("{{v{i}}}/")).collect();
        assert!(UriTemplate::parse(&many).is_err());
    }

    #[test]
    fn long_and_hostile_uris_end_quickly() {
        // Every split of a run of one byte would be tried without the memo.
        let tpl = t("x://{+a}y{+b}y{+c}y{+d}z");
        let uri = format!("x://{}", "y".repeat(MAX_URI - 4));
        assert_eq!(tpl.matches(&uri), None);
        assert_eq!(tpl.matches(&format!("x://{}", "y".repeat(MAX_URI))), None);
    }
}
