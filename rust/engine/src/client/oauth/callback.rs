//! The loopback redirect (RULES K10.5): a listener on this machine that
//! receives the authorization response from the user's browser (RFC 8252
//! section 7.3), checks it, and answers the browser with a short page.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use crossbeam_channel::Receiver;
use url::Url;

use super::OAuthError;

/// The error of a sign-in whose `deadline` passed.
pub const NOT_IN_TIME: &str = "no answer from the browser in time: the sign-in was not completed";

/// A bound listener and the redirect URI that reaches it.
pub struct Callback {
    listener: TcpListener,
    pub redirect_uri: String,
    path: String,
}

impl Callback {
    /// Listen on `host:port` (port 0: any free port) for `path`. The host
    /// must be this machine.
    pub fn bind(host: &str, port: u16, path: &str) -> Result<Callback, OAuthError> {
        let loopback = host.eq_ignore_ascii_case("localhost")
            || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
            || host.trim_matches(['[', ']']).parse::<std::net::Ipv6Addr>().is_ok_and(|ip| ip.is_loopback());
        if !loopback {
            return Err(OAuthError::new(format!(
                "the callback host `{host}` is not this machine (use 127.0.0.1, ::1 or localhost)"
            )));
        }
        let bind_host =
            if host.eq_ignore_ascii_case("localhost") { "127.0.0.1" } else { host.trim_matches(['[', ']']) };
        let listener = TcpListener::bind((bind_host, port))
            .map_err(|e| OAuthError::new(format!("cannot listen for the sign-in callback on {host}:{port}: {e}")))?;
        let port = listener.local_addr().map(|a| a.port()).unwrap_or(port);
        listener.set_nonblocking(true).map_err(|e| OAuthError::new(e.to_string()))?;
        let path = if path.starts_with('/') { path.to_string() } else { format!("/{path}") };
        let shown_host =
            if host.contains(':') && !host.starts_with('[') { format!("[{host}]") } else { host.to_string() };
        Ok(Callback { listener, redirect_uri: format!("http://{shown_host}:{port}{path}"), path })
    }

    /// Listen where `redirect_uri` (an `http://` loopback URL) points.
    pub fn bind_uri(redirect_uri: &str) -> Result<Callback, OAuthError> {
        let u = Url::parse(redirect_uri)
            .map_err(|_| OAuthError::new(format!("`redirect_uri` `{redirect_uri}` is not a URL")))?;
        if u.scheme() != "http" {
            return Err(OAuthError::new(format!("`redirect_uri` `{redirect_uri}` must be an http:// loopback URL")));
        }
        let host = u.host_str().unwrap_or_default().to_string();
        let mut c = Callback::bind(&host, u.port().unwrap_or(80), u.path())?;
        c.redirect_uri = redirect_uri.to_string();
        Ok(c)
    }

    /// Wait for the browser's request to the callback path, up to
    /// `deadline`, or until `stop` closes. Requests to other paths are
    /// answered 404 and ignored. Returns the query parameters.
    pub fn wait(&self, deadline: Instant, stop: &Receiver<()>) -> Result<Vec<(String, String)>, OAuthError> {
        loop {
            match self.listener.accept() {
                Ok((stream, _)) => {
                    if let Some(params) = self.handle(stream) {
                        return Ok(params);
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    if Instant::now() >= deadline {
                        return Err(OAuthError::new(NOT_IN_TIME));
                    }
                    if matches!(
                        stop.recv_timeout(Duration::from_millis(25)),
                        Err(crossbeam_channel::RecvTimeoutError::Disconnected)
                    ) {
                        return Err(OAuthError::new("the sign-in was abandoned".to_string()));
                    }
                }
                Err(e) => return Err(OAuthError::new(format!("the sign-in callback failed: {e}"))),
            }
        }
    }

    /// Read one request; answer it. The query of a request to the callback
    /// path, else `None`.
    fn handle(&self, mut stream: TcpStream) -> Option<Vec<(String, String)>> {
        let _ = stream.set_nonblocking(false);
        let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
        let mut head = Vec::new();
        let mut buf = [0u8; 2048];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 16 << 10 {
            match stream.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => head.extend_from_slice(&buf[..n]),
            }
        }
        let line = String::from_utf8_lossy(&head);
        let target = line.lines().next().and_then(|l| {
            let mut parts = l.split(' ');
            (parts.next() == Some("GET")).then(|| parts.next()).flatten()
        });
        let Some(target) = target else {
            respond(&mut stream, "400 Bad Request", "Bad request.");
            return None;
        };
        let (path, query) = target.split_once('?').unwrap_or((target, ""));
        if path != self.path {
            respond(&mut stream, "404 Not Found", "Not found.");
            return None;
        }
        let params: Vec<(String, String)> =
            url::form_urlencoded::parse(query.as_bytes()).map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
        let failed = params.iter().any(|(k, _)| k == "error");
        respond(
            &mut stream,
            "200 OK",
            if failed {
                "Sign-in failed: go back to R to see why."
            } else {
                "Signed in. You can close this window and go back to R."
            },
        );
        Some(params)
    }
}

fn respond(stream: &mut TcpStream, status: &str, text: &str) {
    let body = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>mcplite</title></head><body><p>{text}</p></body></html>"
    );
    let _ = write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(uri: &str) -> String {
        let u = Url::parse(uri).unwrap();
        let mut s = TcpStream::connect((u.host_str().unwrap(), u.port().unwrap())).unwrap();
        let target = match u.query() {
            Some(q) => format!("{}?{q}", u.path()),
            None => u.path().to_string(),
        };
        write!(s, "GET {target} HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    }

    #[test]
    fn the_callback_gets_the_query_and_other_paths_get_404() {
        let cb = Callback::bind("127.0.0.1", 0, "/callback").unwrap();
        assert!(cb.redirect_uri.starts_with("http://127.0.0.1:"));
        let uri = cb.redirect_uri.clone();
        let (_tx, stop) = crossbeam_channel::bounded::<()>(0);
        let t = std::thread::spawn(move || {
            let other = get(&uri.replace("/callback", "/favicon.ico"));
            let ok = get(&format!("{uri}?code=abc%20d&state=s1"));
            (other, ok)
        });
        let params = cb.wait(Instant::now() + Duration::from_secs(20), &stop).unwrap();
        let (other, ok) = t.join().unwrap();
        assert!(other.starts_with("HTTP/1.1 404"), "{other}");
        assert!(ok.starts_with("HTTP/1.1 200") && ok.contains("Signed in"), "{ok}");
        assert_eq!(params, vec![("code".to_string(), "abc d".to_string()), ("state".to_string(), "s1".to_string())]);
    }

    #[test]
    fn only_loopback_hosts_and_a_closed_stop_ends_the_wait() {
        assert!(Callback::bind("192.0.2.1", 0, "/cb").is_err());
        assert!(Callback::bind_uri("https://127.0.0.1:1/cb").is_err());
        let cb = Callback::bind("localhost", 0, "cb").unwrap();
        assert!(cb.redirect_uri.starts_with("http://localhost:") && cb.redirect_uri.ends_with("/cb"));
        let (tx, stop) = crossbeam_channel::bounded::<()>(0);
        drop(tx);
        assert!(cb.wait(Instant::now() + Duration::from_secs(20), &stop).unwrap_err().0.contains("abandoned"));
    }
}
