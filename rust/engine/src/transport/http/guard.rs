//! Where a request may come from (RULES H5): the `Host` header (DNS
//! rebinding) and the `Origin` header. The bearer tokens are `tokens.rs`.

use std::net::{IpAddr, SocketAddr};

use hyper::header::HeaderMap;

use super::options::HttpOptions;
use super::response::header;

/// The checks of one bound server.
pub(super) struct Guard {
    allowed_origins: Vec<String>,
    /// Lower-cased `Host` values accepted; `None`: any.
    allowed_hosts: Option<Vec<String>>,
}

impl Guard {
    /// The checks for `opts`, bound at `local` (RULES H5.2: any `Host` on a
    /// non-loopback address unless hosts are configured).
    pub(super) fn new(opts: &HttpOptions, local: SocketAddr) -> Guard {
        let loopback = local.ip().is_loopback();
        let allowed_hosts = if loopback || !opts.allowed_hosts.is_empty() {
            let mut hosts: Vec<String> = opts.allowed_hosts.iter().map(|h| h.to_ascii_lowercase()).collect();
            hosts.push(opts.host.to_ascii_lowercase());
            hosts.push(match local.ip() {
                IpAddr::V6(ip) => format!("[{ip}]"),
                ip @ IpAddr::V4(_) => ip.to_string(),
            });
            Some(hosts)
        } else {
            None
        };
        Guard {
            allowed_origins: opts.allowed_origins.iter().map(|o| o.trim_end_matches('/').to_string()).collect(),
            allowed_hosts,
        }
    }

    pub(super) fn host_allowed(&self, h: &HeaderMap) -> bool {
        let Some(allowed) = &self.allowed_hosts else { return true };
        let Some(host) = header(h, "host") else { return false };
        let host = host.to_ascii_lowercase();
        let name = strip_port(&host);
        is_loopback_name(name) || allowed.iter().any(|a| a == &host || a == name)
    }

    pub(super) fn origin_allowed(&self, h: &HeaderMap) -> bool {
        let Some(origin) = header(h, "origin") else { return true };
        let origin = origin.trim_end_matches('/');
        if self.allowed_origins.iter().any(|o| o == "*" || o.eq_ignore_ascii_case(origin)) {
            return true;
        }
        let rest = match origin.split_once("://") {
            Some(("http" | "https", rest)) => rest,
            _ => return false,
        };
        !rest.contains('/') && is_loopback_name(&strip_port(rest).to_ascii_lowercase())
    }
}

fn is_loopback_name(h: &str) -> bool {
    matches!(h, "localhost" | "127.0.0.1" | "[::1]" | "::1") || h.ends_with(".localhost")
}

/// `host[:port]` without the port (IPv6 literals keep their brackets).
pub(super) fn strip_port(h: &str) -> &str {
    if let Some(end) = h.strip_prefix('[').and_then(|r| r.find(']')) {
        return &h[..end + 2];
    }
    match h.rsplit_once(':') {
        Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => h,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_are_stripped() {
        assert_eq!(strip_port("localhost:8080"), "localhost");
        assert_eq!(strip_port("[::1]:80"), "[::1]");
        assert_eq!(strip_port("example.org"), "example.org");
    }
}
