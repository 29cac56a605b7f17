//! Finding out how to sign in (RULES K10.2): the `WWW-Authenticate`
//! challenge of a 401 or 403, the protected resource metadata (RFC 9728)
//! and the authorization server metadata (RFC 8414, OpenID Connect
//! Discovery), with the fallbacks of the MCP authorization specification
//! and of its 2025-03-26 revision.

use serde_json::Value;
use url::Url;

use super::super::net::Net;
use super::{get_json, OAuthError};

/// What a `Bearer` challenge says (RFC 6750 section 3, RFC 9728 section 5.1).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Challenge {
    pub resource_metadata: Option<String>,
    pub scope: Option<String>,
    pub error: Option<String>,
}

/// Parse the `Bearer` challenge of `WWW-Authenticate` header values:
/// `Bearer k1="v1", k2=v2`. Other schemes are ignored.
pub fn parse_challenge<'a>(values: impl IntoIterator<Item = &'a str>) -> Option<Challenge> {
    for value in values {
        let mut rest = value.trim();
        while !rest.is_empty() {
            let (scheme, after) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
            let (params, next) = auth_params(after);
            if scheme.eq_ignore_ascii_case("bearer") {
                let mut c = Challenge::default();
                for (k, v) in params {
                    match k.to_ascii_lowercase().as_str() {
                        "resource_metadata" => c.resource_metadata = Some(v),
                        "scope" => c.scope = Some(v),
                        "error" => c.error = Some(v),
                        _ => {}
                    }
                }
                return Some(c);
            }
            rest = next.trim_start_matches([',', ' ', '\t']);
        }
    }
    None
}

/// The `k=v` / `k="v"` parameters at the start of `s`, and what follows
/// them (the next challenge, if any).
fn auth_params(s: &str) -> (Vec<(String, String)>, &str) {
    let mut out = Vec::new();
    let mut rest = s.trim_start();
    loop {
        rest = rest.trim_start_matches([',', ' ', '\t']);
        let Some(eq) = rest.find('=') else { return (out, rest) };
        let key = &rest[..eq];
        if key.is_empty() || key.contains(char::is_whitespace) {
            // a new scheme starts here
            return (out, rest);
        }
        let after = &rest[eq + 1..];
        let (value, next) = if let Some(q) = after.strip_prefix('"') {
            let mut v = String::new();
            let mut chars = q.char_indices();
            let mut end = q.len();
            while let Some((i, ch)) = chars.next() {
                match ch {
                    '\\' => {
                        if let Some((_, n)) = chars.next() {
                            v.push(n);
                        }
                    }
                    '"' => {
                        end = i + 1;
                        break;
                    }
                    _ => v.push(ch),
                }
            }
            (v, &q[end.min(q.len())..])
        } else {
            let end = after.find([',', ' ', '\t']).unwrap_or(after.len());
            (after[..end].to_string(), &after[end..])
        };
        out.push((key.to_string(), value));
        rest = next;
    }
}

/// Is `host` this machine (`localhost`, `127.0.0.0/8`, `::1`)?
pub fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// RULES K10.7: an endpoint of the authorization server is `https://`, or
/// `http://` on this machine, or anything with `allow_http`.
pub fn check_secure(what: &str, url: &Url, allow_http: bool) -> Result<(), OAuthError> {
    if url.scheme() == "https" || (url.scheme() == "http" && (allow_http || is_loopback(url))) {
        return Ok(());
    }
    Err(OAuthError::new(format!(
        "the {what} `{url}` is not https:// (plain http:// is accepted only on this machine, or with `allow_http`)"
    )))
}

/// The protected resource metadata, and where it was found.
#[derive(Debug, Clone)]
pub struct Resource {
    pub metadata: Value,
}

/// RFC 9728 section 3.1 and the MCP specification: the URL of the
/// challenge, else `/.well-known/oauth-protected-resource` with the
/// endpoint's path inserted, else at the root. `None` when no document is
/// found (a server of the 2025-03-26 revision).
pub fn protected_resource(
    net: &Net,
    server: &Url,
    challenge: &Challenge,
    allow_http: bool,
) -> Result<Option<Resource>, OAuthError> {
    let mut candidates = Vec::new();
    if let Some(u) = &challenge.resource_metadata {
        let u = Url::parse(u)
            .map_err(|e| OAuthError::new(format!("the challenge's resource_metadata `{u}` is not a URL ({e})")))?;
        candidates.push(u);
    } else {
        let path = server.path().trim_end_matches('/');
        if !path.is_empty() {
            candidates.push(with_path(server, &format!("/.well-known/oauth-protected-resource{path}")));
        }
        candidates.push(with_path(server, "/.well-known/oauth-protected-resource"));
    }
    for url in candidates {
        check_secure("protected resource metadata URL", &url, allow_http || same_origin(&url, server))?;
        if let Some(doc) = get_json(net, &url)? {
            return Ok(Some(Resource { metadata: doc }));
        }
    }
    Ok(None)
}

/// The URL with its path replaced (no query or fragment).
fn with_path(base: &Url, path: &str) -> Url {
    let mut u = base.clone();
    u.set_path(path);
    u.set_query(None);
    u.set_fragment(None);
    u
}

fn same_origin(a: &Url, b: &Url) -> bool {
    a.origin() == b.origin()
}

/// RULES K10.3: the `resource` of the metadata must name this server: the
/// same origin, and a path that is the endpoint's path or a parent of it.
pub fn check_resource(resource: &str, server: &Url) -> Result<Url, OAuthError> {
    let r = Url::parse(resource).map_err(|_| {
        OAuthError::new(format!("the protected resource metadata names resource `{resource}`, not a URL"))
    })?;
    let ok = r.origin() == server.origin() && {
        let rp = r.path().trim_end_matches('/');
        let sp = server.path().trim_end_matches('/');
        sp == rp || sp.starts_with(&format!("{rp}/"))
    };
    if !ok {
        return Err(OAuthError::new(format!(
            "the protected resource metadata is for `{resource}`, not for this server (`{server}`): refusing to sign in"
        )));
    }
    Ok(r)
}

/// The well-known URLs of an issuer's metadata, in the order the
/// specification gives (RFC 8414 section 3.1, OpenID Connect Discovery).
pub fn metadata_urls(issuer: &Url) -> Vec<Url> {
    let path = issuer.path().trim_end_matches('/');
    if path.is_empty() {
        vec![
            with_path(issuer, "/.well-known/oauth-authorization-server"),
            with_path(issuer, "/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            with_path(issuer, &format!("/.well-known/oauth-authorization-server{path}")),
            with_path(issuer, &format!("/.well-known/openid-configuration{path}")),
            with_path(issuer, &format!("{path}/.well-known/openid-configuration")),
        ]
    }
}

/// The authorization server's endpoints and what it supports.
#[derive(Debug, Clone, Default)]
pub struct ServerMetadata {
    pub issuer: String,
    pub authorization_endpoint: String,
    pub token_endpoint: String,
    pub registration_endpoint: Option<String>,
    pub scopes_supported: Option<Vec<String>>,
    pub auth_methods: Option<Vec<String>>,
    pub cimd_supported: bool,
    pub iss_parameter_supported: bool,
    /// No metadata was found: the 2025-03-26 default endpoints.
    pub defaults: bool,
    /// `code_challenge_methods_supported` lists `S256`.
    pub pkce_s256: bool,
    /// `grant_types_supported`, when said.
    pub grant_types: Option<Vec<String>>,
    /// `token_endpoint_auth_signing_alg_values_supported`, when said.
    pub signing_algs: Option<Vec<String>>,
}

fn strings(v: Option<&Value>) -> Option<Vec<String>> {
    v?.as_array().map(|a| a.iter().filter_map(|s| s.as_str().map(String::from)).collect())
}

fn same_issuer(a: &str, b: &str) -> bool {
    a == b || a.trim_end_matches('/') == b.trim_end_matches('/')
}

impl ServerMetadata {
    /// Read a metadata document fetched for `issuer`: its `issuer` must be
    /// that issuer (RULES K10.2), it must offer PKCE with S256 (K10.4) and
    /// its endpoints must be secure (K10.7).
    pub fn from_document(doc: &Value, issuer: &str, allow_http: bool) -> Result<ServerMetadata, OAuthError> {
        let s = |k: &str| doc.get(k).and_then(Value::as_str).map(String::from);
        let got = s("issuer").unwrap_or_default();
        if !same_issuer(&got, issuer) {
            return Err(OAuthError::new(format!(
                "the authorization server metadata names issuer `{got}`, not `{issuer}`: refusing to use it"
            )));
        }
        let methods = strings(doc.get("code_challenge_methods_supported")).unwrap_or_default();
        let need =
            |k: &str| s(k).ok_or_else(|| OAuthError::new(format!("the authorization server metadata has no `{k}`")));
        let m = ServerMetadata {
            issuer: got,
            // Needed by the authorization code only (checked by
            // `require_code_flow`): a server of the client-credentials
            // extension may have none.
            authorization_endpoint: s("authorization_endpoint").unwrap_or_default(),
            token_endpoint: need("token_endpoint")?,
            pkce_s256: methods.iter().any(|m| m == "S256"),
            grant_types: strings(doc.get("grant_types_supported")),
            signing_algs: strings(doc.get("token_endpoint_auth_signing_alg_values_supported")),
            registration_endpoint: s("registration_endpoint"),
            scopes_supported: strings(doc.get("scopes_supported")),
            auth_methods: strings(doc.get("token_endpoint_auth_methods_supported")),
            cimd_supported: doc.get("client_id_metadata_document_supported").and_then(Value::as_bool) == Some(true),
            iss_parameter_supported: doc.get("authorization_response_iss_parameter_supported").and_then(Value::as_bool)
                == Some(true),
            defaults: false,
        };
        m.check(allow_http)?;
        Ok(m)
    }

    /// The endpoints a 2025-03-26 server without metadata has (its
    /// "fallbacks for servers without metadata discovery").
    pub fn defaults(origin: &Url) -> ServerMetadata {
        let at = |p: &str| with_path(origin, p).to_string();
        ServerMetadata {
            issuer: with_path(origin, "/").to_string(),
            authorization_endpoint: at("/authorize"),
            token_endpoint: at("/token"),
            registration_endpoint: Some(at("/register")),
            defaults: true,
            pkce_s256: true,
            ..ServerMetadata::default()
        }
    }

    /// The authorization code needs an authorization endpoint and PKCE with
    /// S256 (RULES K10.4); metadata without either is refused for it.
    pub fn require_code_flow(&self) -> Result<(), OAuthError> {
        if !self.pkce_s256 {
            return Err(OAuthError::new(format!(
                "the authorization server `{}` does not say it supports PKCE with S256 \
                 (code_challenge_methods_supported): refusing to sign in",
                self.issuer
            )));
        }
        if self.authorization_endpoint.is_empty() {
            return Err(OAuthError::new("the authorization server metadata has no `authorization_endpoint`"));
        }
        Ok(())
    }

    pub fn check(&self, allow_http: bool) -> Result<(), OAuthError> {
        let auth = Some(&self.authorization_endpoint).filter(|u| !u.is_empty());
        for (what, u) in [
            ("authorization endpoint", auth),
            ("token endpoint", Some(&self.token_endpoint)),
            ("registration endpoint", self.registration_endpoint.as_ref()),
        ] {
            if let Some(u) = u {
                let url = Url::parse(u).map_err(|_| OAuthError::new(format!("the {what} `{u}` is not a URL")))?;
                check_secure(what, &url, allow_http)?;
            }
        }
        Ok(())
    }
}

/// Find the authorization server's metadata: at the well-known URLs of
/// `issuer` in order; for a 2025-03-26 server (`legacy`: no protected
/// resource metadata), at `/.well-known/oauth-authorization-server` of the
/// server's origin, else its default endpoints.
pub fn server_metadata(net: &Net, issuer: &Url, legacy: bool, allow_http: bool) -> Result<ServerMetadata, OAuthError> {
    check_secure("authorization server", issuer, allow_http)?;
    let urls =
        if legacy { vec![with_path(issuer, "/.well-known/oauth-authorization-server")] } else { metadata_urls(issuer) };
    for url in &urls {
        if let Some(doc) = get_json(net, url)? {
            let expected = if legacy {
                doc.get("issuer").and_then(Value::as_str).unwrap_or_default().to_string()
            } else {
                issuer.as_str().to_string()
            };
            return ServerMetadata::from_document(&doc, &expected, allow_http);
        }
    }
    if legacy {
        let m = ServerMetadata::defaults(issuer);
        m.check(allow_http)?;
        return Ok(m);
    }
    Err(OAuthError::new(format!(
        "no authorization server metadata found for `{issuer}` (tried {})",
        urls.iter().map(|u| format!("`{u}`")).collect::<Vec<_>>().join(", ")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenges_are_parsed_with_quotes_and_other_schemes() {
        let c = parse_challenge([
            r#"Basic realm="x", Bearer error="insufficient_scope", scope="a b", resource_metadata="https://s/.well-known/oauth-protected-resource""#,
        ])
        .unwrap();
        assert_eq!(c.error.as_deref(), Some("insufficient_scope"));
        assert_eq!(c.scope.as_deref(), Some("a b"));
        assert_eq!(c.resource_metadata.as_deref(), Some("https://s/.well-known/oauth-protected-resource"));
        assert_eq!(parse_challenge(["Bearer"]), Some(Challenge::default()));
        assert_eq!(parse_challenge([r#"Bearer scope=read, error="x\"y""#]).unwrap().error.as_deref(), Some("x\"y"));
        assert!(parse_challenge(["Basic realm=\"x\""]).is_none());
    }

    #[test]
    fn well_known_urls_follow_the_specification_order() {
        let u = |s: &str| Url::parse(s).unwrap();
        let got: Vec<String> = metadata_urls(&u("https://a.example/tenant1")).iter().map(Url::to_string).collect();
        assert_eq!(
            got,
            [
                "https://a.example/.well-known/oauth-authorization-server/tenant1",
                "https://a.example/.well-known/openid-configuration/tenant1",
                "https://a.example/tenant1/.well-known/openid-configuration"
            ]
        );
        let got: Vec<String> = metadata_urls(&u("https://a.example")).iter().map(Url::to_string).collect();
        assert_eq!(
            got,
            [
                "https://a.example/.well-known/oauth-authorization-server",
                "https://a.example/.well-known/openid-configuration"
            ]
        );
    }

    #[test]
    fn the_resource_must_name_this_server() {
        let s = Url::parse("https://mcp.example/api/mcp").unwrap();
        assert!(check_resource("https://mcp.example/api/mcp", &s).is_ok());
        assert!(check_resource("https://mcp.example/api", &s).is_ok());
        assert!(check_resource("https://mcp.example", &s).is_ok());
        assert!(check_resource("https://mcp.example/ap", &s).is_err());
        assert!(check_resource("https://other.example/api/mcp", &s).is_err());
        assert!(check_resource("http://mcp.example/api/mcp", &s).is_err());
    }

    #[test]
    fn endpoints_must_be_https_except_on_this_machine() {
        let u = |s: &str| Url::parse(s).unwrap();
        assert!(check_secure("x", &u("https://as.example/a"), false).is_ok());
        assert!(check_secure("x", &u("http://127.0.0.1:9/a"), false).is_ok());
        assert!(check_secure("x", &u("http://localhost:9/a"), false).is_ok());
        assert!(check_secure("x", &u("http://[::1]:9/a"), false).is_ok());
        assert!(check_secure("x", &u("http://as.example/a"), false).is_err());
        assert!(check_secure("x", &u("http://as.example/a"), true).is_ok());
        assert!(check_secure("x", &u("ftp://as.example/a"), true).is_err());
    }

    #[test]
    fn metadata_needs_the_right_issuer_and_pkce() {
        let doc = serde_json::json!({
            "issuer": "https://as.example", "authorization_endpoint": "https://as.example/a",
            "token_endpoint": "https://as.example/t", "code_challenge_methods_supported": ["S256"]
        });
        assert!(ServerMetadata::from_document(&doc, "https://as.example/", false).is_ok());
        let e = ServerMetadata::from_document(&doc, "https://evil.example", false).unwrap_err();
        assert!(e.0.contains("not `https://evil.example`"), "{}", e.0);
        let mut plain = doc.clone();
        plain["code_challenge_methods_supported"] = serde_json::json!(["plain"]);
        assert!(ServerMetadata::from_document(&plain, "https://as.example", false)
            .unwrap()
            .require_code_flow()
            .unwrap_err()
            .0
            .contains("S256"));
        plain.as_object_mut().unwrap().remove("code_challenge_methods_supported");
        let m = ServerMetadata::from_document(&plain, "https://as.example", false).unwrap();
        assert!(m.require_code_flow().is_err());
        // the client credentials need neither PKCE nor an authorization endpoint
        plain.as_object_mut().unwrap().remove("authorization_endpoint");
        plain["grant_types_supported"] = serde_json::json!(["client_credentials"]);
        let m = ServerMetadata::from_document(&plain, "https://as.example", false).unwrap();
        assert_eq!(m.grant_types.as_deref(), Some(&["client_credentials".to_string()][..]));
        assert!(m.require_code_flow().unwrap_err().0.contains("S256"));
        let mut http = doc.clone();
        http["token_endpoint"] = serde_json::json!("http://as.example/t");
        assert!(ServerMetadata::from_document(&http, "https://as.example", false).is_err());
    }
}
