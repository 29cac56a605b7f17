//! The HTTP agents of the Streamable HTTP client (RULES K4.6): one for
//! `http://` and one for `https://` URLs, so that each goes through the proxy
//! the standard variables name for its scheme, as curl reads them:
//!
//! - `https://`: `https_proxy`, `HTTPS_PROXY`, else `all_proxy`, `ALL_PROXY`;
//! - `http://`: `http_proxy`, `HTTP_PROXY`, else `all_proxy`, `ALL_PROXY`;
//! - `NO_PROXY` (or `no_proxy`): hosts reached directly, separated by
//!   commas; a name matches itself and the names under it (`example.com`
//!   and `.example.com` both match `a.example.com`), `*` matches every host.
//!
//! A proxy is `http://host:port` (CONNECT; `https://` to the proxy works
//! too; SOCKS is not built in), a port of 1080 when none is given (curl's),
//! optional
//! `user:password@`. The MCP endpoint and every sign-in request (metadata,
//! registration, token) go through agents made so (the sign-in has its own,
//! which abandoning a request does not shut down), with the same TLS
//! settings. A variable's value is never written to a message (it may hold
//! the proxy's password); messages name the variable.

use std::time::Duration;

use ureq::tls::TlsConfig;
use ureq::{Proxy, ProxyProtocol};

/// The agents and the variable each one's proxy came from.
#[derive(Clone)]
pub struct Net {
    tls: TlsConfig,
    plain: ureq::Agent,
    secure: ureq::Agent,
    plain_via: Option<&'static str>,
    secure_via: Option<&'static str>,
}

impl std::fmt::Debug for Net {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Net").field("plain_via", &self.plain_via).field("secure_via", &self.secure_via).finish()
    }
}

const HTTPS_VARS: [&str; 4] = ["https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"];
const HTTP_VARS: [&str; 4] = ["http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"];

fn is_https(url: &str) -> bool {
    url.trim_start().get(..8).is_some_and(|s| s.eq_ignore_ascii_case("https://"))
}

/// The `NO_PROXY` entries as ureq's expressions (curl's meaning: a name,
/// with or without a leading dot, matches itself and every name under it).
fn no_proxy_entries(env: &Env) -> Vec<String> {
    let value = ["NO_PROXY", "no_proxy"].iter().find_map(|v| env(v)).unwrap_or_default();
    let mut out = Vec::new();
    for e in value.split([',', ' ']).map(str::trim).filter(|e| !e.is_empty()) {
        if e == "*" {
            out.push("*".to_string());
            continue;
        }
        let name = e.trim_start_matches('.').to_ascii_lowercase();
        let name = name.strip_prefix('[').and_then(|n| n.strip_suffix(']')).unwrap_or(&name).to_string();
        if name.contains(':') {
            // an IPv6 address, as a URI's host spells it too
            out.push(format!("[{name}]"));
        }
        out.push(format!(".{name}"));
        out.push(name);
    }
    out
}

/// Reads a variable (the process's environment, or a test's).
type Env<'a> = dyn Fn(&str) -> Option<String> + 'a;

/// The proxy the first set variable of `vars` names, and that variable.
fn proxy_from(vars: &[&'static str], env: &Env) -> Result<Option<(&'static str, Proxy)>, String> {
    let Some((var, value)) = vars.iter().find_map(|v| env(v).filter(|x| !x.trim().is_empty()).map(|x| (*v, x))) else {
        return Ok(None);
    };
    let bad = || format!("the environment variable {var} is not a proxy URL (`http://host:port`)");
    let value = value.trim();
    let full = if value.contains("://") { value.to_string() } else { format!("http://{value}") };
    let url = url::Url::parse(&full).map_err(|_| bad())?;
    let protocol = ProxyProtocol::try_from(url.scheme()).map_err(|_| bad())?;
    let host = url.host_str().filter(|h| !h.is_empty()).ok_or_else(bad)?;
    let host = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
    let mut b = Proxy::builder(protocol).host(host).port(url.port().unwrap_or(1080));
    if !url.username().is_empty() {
        let user = percent_decode(url.username());
        b = b.username(&user);
        if let Some(p) = url.password() {
            b = b.password(&percent_decode(p));
        }
    }
    for e in no_proxy_entries(env) {
        b = b.no_proxy(&e);
    }
    let proxy = b.build().map_err(|_| bad())?;
    Ok(Some((var, proxy)))
}

fn percent_decode(s: &str) -> String {
    url::form_urlencoded::parse(format!("x={}", s.replace('+', "%2B")).as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .unwrap_or_default()
}

fn agent(tls: &TlsConfig, proxy: Option<Proxy>) -> ureq::Agent {
    ureq::Agent::config_builder()
        .tls_config(tls.clone())
        .proxy(proxy)
        .http_status_as_error(false)
        .timeout_connect(Some(Duration::from_secs(30)))
        .max_redirects(0)
        .user_agent(concat!("mcplite/", env!("CARGO_PKG_VERSION")))
        .build()
        .into()
}

impl Net {
    /// The agents for `tls`, with the proxies the environment names now.
    pub fn new(tls: &TlsConfig) -> Result<Net, String> {
        Net::with_env(tls, &|v| std::env::var(v).ok())
    }

    fn with_env(tls: &TlsConfig, env: &Env) -> Result<Net, String> {
        let secure = proxy_from(&HTTPS_VARS, env)?;
        let plain = proxy_from(&HTTP_VARS, env)?;
        Ok(Net {
            tls: tls.clone(),
            plain_via: plain.as_ref().map(|p| p.0),
            secure_via: secure.as_ref().map(|p| p.0),
            plain: agent(tls, plain.map(|p| p.1)),
            secure: agent(tls, secure.map(|p| p.1)),
        })
    }

    /// The agent for a URL, by its scheme.
    pub fn agent(&self, url: &str) -> &ureq::Agent {
        if is_https(url) {
            &self.secure
        } else {
            &self.plain
        }
    }

    /// The variable whose proxy a request to `url` goes through, if any
    /// (for messages).
    pub fn via(&self, url: &str) -> Option<&'static str> {
        let (via, agent) = if is_https(url) { (self.secure_via, &self.secure) } else { (self.plain_via, &self.plain) };
        let direct = match (agent.config().proxy(), url.parse::<ureq::http::Uri>()) {
            (Some(p), Ok(u)) => p.is_no_proxy(&u),
            _ => true,
        };
        via.filter(|_| !direct)
    }

    /// New agents with the same settings (their connections are new), the
    /// old ones shut down: closing a response stream at once.
    pub fn renew(&mut self) {
        let fresh = Net {
            tls: self.tls.clone(),
            plain: agent(&self.tls, self.plain.config().proxy().cloned()),
            secure: agent(&self.tls, self.secure.config().proxy().cloned()),
            plain_via: self.plain_via,
            secure_via: self.secure_via,
        };
        let old = std::mem::replace(self, fresh);
        old.plain.shutdown();
        old.secure.shutdown();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proxies_by_scheme_and_no_proxy_as_curl_reads_them() {
        let tls = TlsConfig::builder().build();
        let net = |vars: &[(&str, &str)]| {
            let vars: Vec<(String, String)> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
            Net::with_env(&tls, &move |k| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()))
        };
        let n = net(&[]).unwrap();
        assert_eq!(n.via("https://example.com/mcp"), None);
        assert_eq!(n.via("http://example.com/mcp"), None);

        let n = net(&[
            ("HTTPS_PROXY", "http://user:p%40ss@127.0.0.1:3128"),
            ("NO_PROXY", "internal.example, .corp.example,::1"),
        ])
        .unwrap();
        assert_eq!(n.via("https://example.com/mcp"), Some("HTTPS_PROXY"));
        assert_eq!(n.via("HTTPS://example.com/mcp"), Some("HTTPS_PROXY"));
        assert_eq!(n.via("http://example.com/mcp"), None, "HTTPS_PROXY is for https:// only");
        assert_eq!(n.via("https://internal.example/mcp"), None);
        assert_eq!(n.via("https://a.internal.example/mcp"), None);
        assert_eq!(n.via("https://corp.example/mcp"), None);
        assert_eq!(n.via("https://x.corp.example/mcp"), None);
        assert_eq!(n.via("https://[::1]:8443/mcp"), None);
        assert_eq!(n.via("https://notinternal.example/mcp"), Some("HTTPS_PROXY"));
        let p = n.agent("https://example.com/").config().proxy().unwrap().clone();
        assert_eq!((p.host(), p.port(), p.username(), p.password()), ("127.0.0.1", 3128, Some("user"), Some("p@ss")));

        // lower case first, as curl; ALL_PROXY for either scheme
        let n = net(&[("http_proxy", "127.0.0.1"), ("HTTP_PROXY", "http://other:1"), ("ALL_PROXY", "http://all:2")])
            .unwrap();
        assert_eq!(n.via("http://example.com/mcp"), Some("http_proxy"));
        assert_eq!(n.agent("http://x/").config().proxy().unwrap().port(), 1080);
        assert_eq!(n.via("https://example.com/mcp"), Some("ALL_PROXY"));
        let n = net(&[("http_proxy", "127.0.0.1"), ("NO_PROXY", "*")]).unwrap();
        assert_eq!(n.via("http://example.com/mcp"), None, "NO_PROXY=* bypasses every proxy");

        // A bad value is named by its variable, never shown (a password).
        let e = net(&[("ALL_PROXY", "ftp://secret-password@x")]).unwrap_err();
        assert!(e.contains("ALL_PROXY") && !e.contains("secret-password"), "{e}");
    }
}
