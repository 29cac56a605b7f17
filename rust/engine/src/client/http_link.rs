//! The Streamable HTTP link: every message is an HTTP POST to the MCP
//! endpoint; a request is answered with one JSON object or with an SSE stream
//! that carries the request's notifications (progress) and then its answer.
//!
//! - Each request runs on its own worker thread (signals blocked, like the
//!   stdio readers) that feeds the request's channel; R waits on it in
//!   slices, as for stdio. Abandoning a request shuts the agent down, which
//!   closes the response stream at once (the cancellation signal of this
//!   transport); for legacy versions, where a disconnect is not a
//!   cancellation, `notifications/cancelled` is posted first.
//! - Modern requests mirror the body in headers: `MCP-Protocol-Version`,
//!   `Mcp-Method` and, for `tools/call`, `prompts/get` (the name) and
//!   `resources/read` (the URI), `Mcp-Name` (Base64 sentinel form
//!   when the name is not a plain header value). Legacy requests after
//!   `initialize` carry `MCP-Protocol-Version` and the `Mcp-Session-Id` the
//!   server assigned; closing a legacy session sends DELETE.
//! - An error status whose body is a JSON-RPC error is delivered as that
//!   error (a modern server answers an unsupported version with 400 and
//!   `-32022`); any other error status is an HTTP failure of that request.
//!   Either way the connection stays usable (RULES K4.5).
//! - Legacy response streams are resumable (RULES K4.4): the worker keeps
//!   the last event id and `retry`, and when the stream ends before the
//!   answer it waits that long and resumes with GET and `Last-Event-ID`.
//!   Abandoning the request stops it at once, also while it waits.
//! - The user's headers are checked here (RULES K4.1): the headers the
//!   protocol owns cannot be set.
//!
//! The HTTP client is `ureq`. `https://` URLs use rustls with the ring
//! crypto provider. The server's certificate is checked by the platform's
//! verifier (the system trust store; on Linux the CA bundle of the
//! distribution, or `SSL_CERT_FILE`), or, when a CA file is given, against
//! the certificates of that file only (a private CA). A rejected certificate
//! is a [`ClientError::Tls`] naming the URL and why.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::{bounded, never, unbounded, Receiver, RecvTimeoutError, Sender};
use serde_json::Value;
use ureq::tls::{PemItem, RootCerts, TlsConfig, TlsProvider};

use super::net::Net;
use super::oauth::{parse_challenge, Authorizer, OAuthConfig, OpenUrl, MAX_ATTEMPTS};
use super::wire::{emit_line, excerpt};
use super::{ClientError, Event, FailureContext, Link, Outgoing};

/// Where and how to connect.
#[derive(Debug, Clone, Default)]
pub struct HttpSpec {
    pub url: String,
    /// Extra headers sent with every request.
    pub headers: Vec<(String, String)>,
    /// Longest accepted message (JSON body or SSE event), in bytes.
    pub max_message: usize,
    /// A PEM file of certificate authorities: `https://` servers must have
    /// a certificate issued by one of them (instead of the platform's trust
    /// store).
    pub ca_file: Option<String>,
    /// Sign in when the server asks for it (RULES K10): the settings, and
    /// who gives the sign-in page's URL to the user. `None`, or headers
    /// that set `Authorization` themselves: never.
    pub oauth: Option<(OAuthConfig, OpenUrlFn)>,
}

/// Gives the URL of a sign-in page to the user's browser (or a test's user
/// agent).
#[derive(Clone)]
pub struct OpenUrlFn(pub OpenUrl);

impl std::fmt::Debug for OpenUrlFn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OpenUrlFn")
    }
}

impl HttpSpec {
    pub fn new(url: impl Into<String>) -> HttpSpec {
        HttpSpec { url: url.into(), headers: Vec::new(), max_message: 64 << 20, ca_file: None, oauth: None }
    }
}

pub struct HttpLink {
    spec: HttpSpec,
    /// The agents, with the proxies of the standard variables (RULES K4.6).
    net: Net,
    /// The negotiated legacy version (sent as `MCP-Protocol-Version`).
    version: Option<String>,
    session: Arc<Mutex<Option<String>>>,
    requests: HashMap<u64, InFlight>,
    /// Signing in (RULES K10), when enabled.
    auth: Option<Arc<Authorizer>>,
    /// The session's GET stream, once [`Link::listen`] opened it: what the
    /// server sends outside the answers of requests.
    listener: Option<InFlight>,
}

/// A request whose answer is awaited: its worker's events, and a channel
/// whose closing (when the request is finished or abandoned) tells the
/// worker to stop, also while it waits to resume a stream.
struct InFlight {
    events: Receiver<Event>,
    _stop: Sender<()>,
}

/// Headers the protocol owns, which `HttpSpec::headers` cannot set (RULES
/// K4.1), in lower case; any `Mcp-Param-*` header is reserved too.
pub const RESERVED_HEADERS: [&str; 9] = [
    "accept",
    "content-type",
    "content-length",
    "host",
    "last-event-id",
    "mcp-method",
    "mcp-name",
    "mcp-protocol-version",
    "mcp-session-id",
];

/// Check the extra headers of an [`HttpSpec`] (RULES K4.1): names are HTTP
/// tokens, unique ignoring case and not reserved; values hold no line
/// breaks. The error names the offending header as `headers$<name>`.
pub fn check_headers(headers: &[(String, String)]) -> Result<(), String> {
    let mut seen = std::collections::HashSet::new();
    for (k, v) in headers {
        let token = !k.is_empty() && k.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
        if !token {
            return Err(format!("`headers` must be named by HTTP header names; \"{k}\" is not one."));
        }
        let lower = k.to_ascii_lowercase();
        if !seen.insert(lower.clone()) {
            return Err(format!("`headers` must name each header once; `{k}` is given twice."));
        }
        if RESERVED_HEADERS.contains(&lower.as_str()) || lower.starts_with("mcp-param-") {
            return Err(format!("`headers` cannot set `{k}`: the protocol manages that header."));
        }
        if v.contains(['\r', '\n']) {
            return Err(format!("`headers${k}` must not contain line breaks."));
        }
    }
    Ok(())
}

/// How long to wait before resuming a stream when the server never said
/// (its `retry` field), as the SSE standard leaves it to the client.
const DEFAULT_RETRY: Duration = Duration::from_secs(1);

/// Events of a session's GET stream that may wait for the caller.
const LISTEN_QUEUE: usize = 256;

fn spawn_masked<F: FnOnce() + Send + 'static>(f: F) -> bool {
    super::spawn_masked("mcplite-client-http", f).is_ok()
}

/// A header value as the protocol wants it: as is when it is plain visible
/// ASCII without surrounding whitespace, otherwise `=?base64?...?=`.
pub fn header_value(v: &str) -> String {
    use base64::Engine as _;
    let safe_bytes = v.bytes().all(|b| b == b' ' || b == b'\t' || (0x21..=0x7e).contains(&b));
    let padded = v.starts_with([' ', '\t']) || v.ends_with([' ', '\t']);
    let sentinel = v.starts_with("=?base64?") && v.ends_with("?=");
    if !v.is_empty() && safe_bytes && !padded && !sentinel {
        v.to_string()
    } else {
        format!("=?base64?{}?=", base64::engine::general_purpose::STANDARD.encode(v))
    }
}

/// What one POST needs, moved to its worker thread.
struct Post {
    agent: ureq::Agent,
    /// The variable of the proxy the request goes through (for messages).
    via: Option<&'static str>,
    url: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    id: Option<u64>,
    max: usize,
    session: Arc<Mutex<Option<String>>>,
    /// The answer may assign the session (`initialize`).
    assigns_session: bool,
    /// A broken response stream may be resumed (legacy versions).
    resumable: bool,
    /// Closed when the request is abandoned.
    stop: Receiver<()>,
    /// The user's headers, for a GET that resumes a stream.
    extra: Vec<(String, String)>,
    /// Signs the request in (RULES K10).
    auth: Option<Arc<Authorizer>>,
}

/// Where an SSE stream stands: the last event id and `retry` the server
/// sent (they carry over to the stream that resumes it), and the events
/// dispatched so far.
#[derive(Debug, Default)]
struct Stream {
    last_id: Option<String>,
    retry: Option<Duration>,
    events: u64,
    /// Why reading it failed, when it broke rather than ended.
    broke: Option<String>,
}

/// The TLS settings: rustls with ring; the platform's verifier, or the
/// certificate authorities of `ca_file` only.
fn tls_config(ca_file: Option<&str>) -> Result<TlsConfig, ClientError> {
    let roots = match ca_file {
        None => RootCerts::PlatformVerifier,
        Some(path) => {
            let pem = std::fs::read(path)
                .map_err(|e| ClientError::Connect(format!("cannot read the CA file `{path}`: {e}")))?;
            let mut certs = Vec::new();
            for item in ureq::tls::parse_pem(&pem) {
                match item {
                    Ok(PemItem::Certificate(c)) => certs.push(c),
                    Ok(_) => {}
                    Err(e) => {
                        return Err(ClientError::Connect(format!("the CA file `{path}` is not valid PEM: {e}")));
                    }
                }
            }
            if certs.is_empty() {
                return Err(ClientError::Connect(format!("the CA file `{path}` holds no PEM certificate")));
            }
            RootCerts::from(certs)
        }
    };
    Ok(TlsConfig::builder()
        .provider(TlsProvider::Rustls)
        .root_certs(roots)
        .unversioned_rustls_crypto_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .build())
}

/// Why the TLS handshake failed, in words.
fn tls_reason(e: &rustls::Error) -> String {
    use rustls::CertificateError as C;
    match e {
        rustls::Error::InvalidCertificate(c) => {
            let why = match c {
                C::UnknownIssuer => "it is not issued by a trusted certificate authority (for a private CA, give \
                                     its certificate with `ca_file` or SSL_CERT_FILE)"
                    .to_string(),
                C::NotValidForName | C::NotValidForNameContext { .. } => {
                    "it is not valid for the host name of the URL".to_string()
                }
                C::Expired | C::ExpiredContext { .. } => "it has expired".to_string(),
                C::NotValidYet | C::NotValidYetContext { .. } => "it is not valid yet".to_string(),
                C::Revoked => "it has been revoked".to_string(),
                C::BadSignature => "its signature is invalid".to_string(),
                C::BadEncoding => "it cannot be decoded".to_string(),
                other => format!("{other:?}"),
            };
            format!("the server's certificate was rejected: {why}")
        }
        other => format!("the TLS handshake failed: {other}"),
    }
}

/// Why a request failed, for a connection failure; through a proxy, the
/// message says which variable named it (RULES K4.6).
fn transport_error(url: &str, e: ureq::Error, via: Option<&str>) -> ClientError {
    match (via, plain_transport_error(url, e)) {
        (Some(v), ClientError::Connect(m)) => ClientError::Connect(format!("{m} (through the proxy of {v})")),
        (_, other) => other,
    }
}

fn plain_transport_error(url: &str, e: ureq::Error) -> ClientError {
    let tls = |reason: String| ClientError::Tls { url: url.to_string(), reason };
    match e {
        ureq::Error::Rustls(r) => tls(tls_reason(&r)),
        ureq::Error::Tls(m) => tls(m.to_string()),
        ureq::Error::Io(io) if io.get_ref().is_some_and(|i| i.is::<rustls::Error>()) => {
            let r = io.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()).expect("checked");
            tls(tls_reason(r))
        }
        ureq::Error::Io(io) => match io.kind() {
            std::io::ErrorKind::ConnectionRefused => ClientError::Connect("connection refused".into()),
            std::io::ErrorKind::TimedOut => ClientError::Connect("timed out connecting".into()),
            // The server was reached and dropped the connection before its
            // answer began: the request may or may not have run.
            std::io::ErrorKind::UnexpectedEof
            | std::io::ErrorKind::ConnectionReset
            | std::io::ErrorKind::ConnectionAborted
            | std::io::ErrorKind::BrokenPipe => ClientError::Closed(format!("before answering ({io})")),
            _ => ClientError::Connect(io.to_string()),
        },
        ureq::Error::HostNotFound => ClientError::Connect("host not found".into()),
        ureq::Error::ConnectProxyFailed(why) => {
            ClientError::Connect(format!("the proxy refused the connection: {why}"))
        }
        other => ClientError::Connect(other.to_string()),
    }
}

impl Post {
    /// Send the POST and deliver what comes back. Runs on a worker thread
    /// (requests) or the caller's thread (notifications).
    fn run(self, tx: &Sender<Event>) {
        let mut attempts = 0;
        let resp = loop {
            let sent = self.auth.as_ref().and_then(|a| a.header());
            let mut req = self.agent.post(&self.url);
            for (k, v) in &self.headers {
                req = req.header(k.as_str(), v.as_str());
            }
            if let Some(h) = &sent {
                req = req.header("Authorization", h.as_str());
            }
            let resp = match req.send(&self.body[..]) {
                Ok(r) => r,
                Err(e) => {
                    let _ = tx.send(Event::Failed(transport_error(&self.url, e, self.via)));
                    return;
                }
            };
            // RULES K10.2, K10.4: a 401, or a 403 for want of scope, signs in
            // (refreshes, steps up) and sends the request again, a few times
            // at most.
            let status = resp.status().as_u16();
            if let (Some(auth), 401 | 403) = (&self.auth, status) {
                let values = resp.headers().get_all("www-authenticate");
                let challenge = parse_challenge(values.iter().filter_map(|v| v.to_str().ok())).unwrap_or_default();
                let wanted = status == 401 || challenge.error.as_deref() == Some("insufficient_scope");
                if wanted && attempts < MAX_ATTEMPTS {
                    attempts += 1;
                    let mut text = Vec::new();
                    let _ = resp.into_body().into_reader().take(64 << 10).read_to_end(&mut text);
                    match auth.unauthorized(status, &challenge, sent.as_deref(), &self.stop) {
                        Ok(()) => continue,
                        // A server that only takes a static token: its 401 as it is.
                        Err(e) if e.no_sign_in() => {
                            let _ = tx.send(self.error_status(status, &text));
                            return;
                        }
                        Err(e) => {
                            let _ = tx.send(Event::Failed(ClientError::Auth(e.0)));
                            return;
                        }
                    }
                }
            }
            break resp;
        };
        let status = resp.status().as_u16();
        let header = |name: &str| resp.headers().get(name).and_then(|v| v.to_str().ok()).map(String::from);
        let content_type = header("content-type").unwrap_or_default().to_ascii_lowercase();
        if let Some(sid) = header("mcp-session-id").filter(|_| self.assigns_session) {
            *self.session.lock().unwrap_or_else(|e| e.into_inner()) = Some(sid);
        }
        let mut body = resp.into_body().into_reader();
        if !(200..300).contains(&status) {
            let mut text = Vec::new();
            let _ = (&mut body).take(64 << 10).read_to_end(&mut text);
            let _ = tx.send(self.error_status(status, &text));
            return;
        }
        if self.id.is_none() {
            // a notification or a response: 202 Accepted (any 2xx will do)
            let _ = tx.send(Event::Accepted);
            return;
        }
        if content_type.starts_with("text/event-stream") {
            let mut stream = Stream::default();
            if !self.read_sse(body, tx, &mut stream) {
                self.resume(stream, tx);
            }
        } else if content_type.starts_with("application/json") {
            let mut text = Vec::new();
            match (&mut body).take(self.max as u64 + 1).read_to_end(&mut text) {
                Ok(n) if n > self.max => {
                    let _ = tx.send(Event::Oversize(self.max));
                }
                Ok(_) => emit_line(&text, &mut |e| {
                    let _ = tx.send(e);
                }),
                Err(e) => {
                    let _ = tx.send(Event::Failed(ClientError::Closed(format!("reading the answer failed: {e}"))));
                }
            }
            let _ = tx.send(Event::Failed(ClientError::Protocol(
                "the server's HTTP answer held no JSON-RPC response to the request".into(),
            )));
        } else {
            let _ = tx.send(Event::Failed(ClientError::Protocol(format!(
                "the server answered with HTTP {status} and content type \"{content_type}\" instead of JSON or an \
                 event stream"
            ))));
        }
    }

    /// An error status: a JSON-RPC error in the body is delivered as such
    /// (a modern server answers protocol errors with 400 or 404 and one),
    /// except for 401 and 403: authorization failures stay HTTP failures.
    fn error_status(&self, status: u16, body: &[u8]) -> Event {
        let parsed = serde_json::from_slice::<Value>(body).ok();
        if let Some(Value::Object(mut m)) = parsed.clone() {
            if status != 401
                && status != 403
                && m.get("error").is_some_and(Value::is_object)
                && m.get("result").is_none()
            {
                if m.get("id").is_none_or(Value::is_null) {
                    if let Some(id) = self.id {
                        m.insert("id".into(), Value::from(id));
                    }
                }
                m.entry("jsonrpc").or_insert(Value::from("2.0"));
                return Event::Message(Value::Object(m));
            }
        }
        let text = String::from_utf8_lossy(body);
        let text = text.trim();
        let said = parsed
            .as_ref()
            .and_then(|v| v.get("error"))
            .and_then(|e| e.get("message"))
            .and_then(Value::as_str)
            .map(|m| format!(" (the server says: {m})"))
            .unwrap_or_default();
        let message = match status {
            401 => {
                format!("unauthorized: the server wants credentials (set an Authorization header in `headers`){said}")
            }
            403 => format!("forbidden: the credentials were refused{said}"),
            404 => "not found (check that the URL is the server's MCP endpoint)".into(),
            405 => "method not allowed: the URL does not accept MCP requests by POST".into(),
            _ => match text.is_empty() {
                true => "the server reported an error".into(),
                false => excerpt(text.as_bytes()),
            },
        };
        Event::Failed(ClientError::Http { status, message })
    }

    /// Read an SSE stream: `data:` lines of one event are joined; every event
    /// is one JSON-RPC message. `id:` and `retry:` are kept in `stream`.
    /// True when the answer to the request arrived (the stream is then
    /// left), false when the stream ended or broke before it.
    fn read_sse(&self, body: impl Read, tx: &Sender<Event>, stream: &mut Stream) -> bool {
        let mut reader = BufReader::with_capacity(64 << 10, body);
        let mut data: Vec<u8> = Vec::new();
        let mut id: Option<String> = None;
        let mut line = Vec::new();
        let mut over = false;
        let want = self.id;
        loop {
            line.clear();
            let n = match (&mut reader).take(self.max as u64 + 2).read_until(b'\n', &mut line) {
                Ok(n) => n,
                Err(e) => {
                    stream.broke = Some(format!("the event stream broke: {e}"));
                    return false;
                }
            };
            if n == 0 {
                break;
            }
            if line.last() != Some(&b'\n') && n > self.max {
                // a line over the limit: drop the event it belongs to
                over = true;
                let _ = skip_line(&mut reader);
                continue;
            }
            while matches!(line.last(), Some(b'\n' | b'\r')) {
                line.pop();
            }
            if line.is_empty() {
                // End of an event: its id counts even when it has no data
                // (the "priming" event a server sends to allow resuming).
                if id.is_some() {
                    stream.last_id = id.take();
                }
                stream.events += 1;
                if over {
                    let _ = tx.send(Event::Oversize(self.max));
                } else if !data.is_empty() && self.dispatch(&data, tx, want) {
                    return true;
                }
                over = false;
                data.clear();
                continue;
            }
            let (field, value) = match memchr::memchr(b':', &line) {
                Some(0) => continue, // a comment
                Some(i) => (&line[..i], line[i + 1..].strip_prefix(b" ").unwrap_or(&line[i + 1..])),
                None => (&line[..], &b""[..]),
            };
            match field {
                b"data" => {
                    if !data.is_empty() {
                        data.push(b'\n');
                    }
                    data.extend_from_slice(value);
                    if data.len() > self.max {
                        over = true;
                        data.clear();
                    }
                }
                b"id" if !value.contains(&0) => id = Some(String::from_utf8_lossy(value).into_owned()),
                b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                    let ms = std::str::from_utf8(value).ok().and_then(|v| v.parse::<u64>().ok());
                    stream.retry = ms.map(Duration::from_millis);
                }
                _ => {} // `event:` and unknown fields
            }
        }
        !data.is_empty() && !over && self.dispatch(&data, tx, want)
    }

    /// A response stream ended before the answer (RULES K4.4): on a legacy
    /// connection whose stream carried an event id, wait the server's
    /// `retry` time and resume it with GET and `Last-Event-ID`, as often as
    /// each resumed stream brings at least one event; otherwise the request
    /// fails. Stops at once when the request is abandoned.
    fn resume(&self, mut stream: Stream, tx: &Sender<Event>) {
        const ENDED: &str = "the server ended the event stream without answering the request";
        loop {
            let Some(last) = stream.last_id.clone().filter(|_| self.resumable) else {
                let why = stream.broke.take().unwrap_or_else(|| ENDED.into());
                let _ = tx.send(Event::Failed(ClientError::Closed(why)));
                return;
            };
            stream.broke = None;
            match self.stop.recv_timeout(stream.retry.unwrap_or(DEFAULT_RETRY)) {
                Err(RecvTimeoutError::Timeout) => {}
                _ => return,
            }
            let resp = match self.get_stream(Some(&last)) {
                Ok(r) => r,
                Err(e) => {
                    let why = transport_error(&self.url, e, self.via);
                    let _ =
                        tx.send(Event::Failed(ClientError::Closed(format!("{ENDED}, and resuming it failed: {why}"))));
                    return;
                }
            };
            let status = resp.status().as_u16();
            let event_stream = resp
                .headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .is_some_and(|t| t.to_ascii_lowercase().starts_with("text/event-stream"));
            if status != 200 || !event_stream {
                let _ = tx.send(Event::Failed(ClientError::Closed(format!(
                    "{ENDED}, and resuming it (GET with Last-Event-ID) was answered with HTTP {status}{}",
                    if event_stream { "" } else { " without an event stream" }
                ))));
                return;
            }
            let before = stream.events;
            if self.read_sse(resp.into_body().into_reader(), tx, &mut stream) {
                return;
            }
            if stream.events == before {
                let _ = tx.send(Event::Failed(ClientError::Closed(format!(
                    "{ENDED}; the resumed stream ended without any event"
                ))));
                return;
            }
        }
    }

    /// A GET of the session's event stream (`last`: resume after that event
    /// id), with the session, the version and the user's headers.
    fn get_stream(&self, last: Option<&str>) -> Result<ureq::http::Response<ureq::Body>, ureq::Error> {
        let mut req = self.agent.get(&self.url).header("Accept", "text/event-stream");
        if let Some(last) = last {
            req = req.header("Last-Event-ID", last);
        }
        for (k, v) in &self.headers {
            if k.eq_ignore_ascii_case("mcp-protocol-version") {
                req = req.header(k.as_str(), v.as_str());
            }
        }
        if let Some(sid) = self.session.lock().unwrap_or_else(|e| e.into_inner()).clone() {
            req = req.header("Mcp-Session-Id", sid.as_str());
        }
        for (k, v) in &self.extra {
            req = req.header(k.as_str(), v.as_str());
        }
        if let Some(h) = self.auth.as_ref().and_then(|a| a.header()) {
            req = req.header("Authorization", h.as_str());
        }
        req.call()
    }

    /// The session's standalone GET stream (RULES K12.2): its events are
    /// delivered as they come; when it ends it is opened again after the
    /// server's `retry` time (resuming after the last event id), until the
    /// link stops listening. A server that offers none (405, or anything
    /// but an event stream) is left alone.
    fn listen(&self, tx: &Sender<Event>) {
        let mut stream = Stream::default();
        loop {
            let Ok(resp) = self.get_stream(stream.last_id.as_deref()) else {
                return;
            };
            let event_stream = resp
                .headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .is_some_and(|t| t.to_ascii_lowercase().starts_with("text/event-stream"));
            if resp.status().as_u16() != 200 || !event_stream {
                return;
            }
            self.read_sse(resp.into_body().into_reader(), tx, &mut stream);
            match self.stop.recv_timeout(stream.retry.unwrap_or(DEFAULT_RETRY)) {
                Err(RecvTimeoutError::Timeout) => {}
                _ => return,
            }
        }
    }

    /// Deliver one event's data; true when it was the answer to `want`.
    fn dispatch(&self, data: &[u8], tx: &Sender<Event>, want: Option<u64>) -> bool {
        let answer = match serde_json::from_slice::<Value>(data) {
            Ok(v) => {
                let is_answer = v.get("method").is_none()
                    && (v.get("result").is_some() || v.get("error").is_some())
                    && v.get("id").and_then(Value::as_u64) == want;
                let _ = tx.send(Event::Message(v));
                is_answer
            }
            Err(_) => {
                let _ = tx.send(Event::Garbage(excerpt(data)));
                false
            }
        };
        answer
    }
}

fn skip_line(r: &mut impl BufRead) -> std::io::Result<()> {
    loop {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            return Ok(());
        }
        match memchr::memchr(b'\n', buf) {
            Some(i) => {
                r.consume(i + 1);
                return Ok(());
            }
            None => {
                let n = buf.len();
                r.consume(n);
            }
        }
    }
}

impl HttpLink {
    pub fn open(spec: &HttpSpec) -> Result<HttpLink, ClientError> {
        check_headers(&spec.headers).map_err(ClientError::Connect)?;
        let url = spec.url.trim();
        let scheme = |s: &str| url.len() > s.len() && url[..s.len()].eq_ignore_ascii_case(s);
        if !scheme("http://") && !scheme("https://") {
            return Err(ClientError::Connect(format!("`{url}` is not an http:// or https:// URL")));
        }
        let tls = tls_config(spec.ca_file.as_deref())?;
        let net = Net::new(&tls).map_err(ClientError::Connect)?;
        // Headers that carry credentials of their own turn signing in off.
        let own = spec.headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("authorization"));
        let auth = match &spec.oauth {
            Some((cfg, open)) if !own => Some(Arc::new(
                // Agents of its own (the same settings): abandoning a request
                // shuts the link's agents down, which must not stop a later
                // refresh or sign-in.
                Authorizer::new(cfg.clone(), url, Net::new(&tls).map_err(ClientError::Connect)?, Arc::clone(&open.0))
                    .map_err(|e| ClientError::Connect(e.0))?,
            )),
            _ => None,
        };
        Ok(HttpLink {
            spec: HttpSpec { url: url.to_string(), ..spec.clone() },
            net,
            version: None,
            session: Arc::new(Mutex::new(None)),
            requests: HashMap::new(),
            auth,
            listener: None,
        })
    }

    fn post(&self, body: &[u8], out: &Outgoing, stop: Receiver<()>) -> Post {
        let mut headers = vec![
            ("Content-Type".to_string(), "application/json".to_string()),
            ("Accept".to_string(), "application/json, text/event-stream".to_string()),
        ];
        match out.version {
            Some(v) => {
                headers.push(("MCP-Protocol-Version".into(), v.into()));
                headers.push(("Mcp-Method".into(), header_value(out.method)));
                if let Some(name) = out.name {
                    headers.push(("Mcp-Name".into(), header_value(name)));
                }
                headers.extend(out.headers.iter().cloned());
            }
            None => {
                if let Some(v) = &self.version {
                    headers.push(("MCP-Protocol-Version".into(), v.clone()));
                }
                if let Some(sid) = self.session.lock().unwrap_or_else(|e| e.into_inner()).clone() {
                    headers.push(("Mcp-Session-Id".into(), sid));
                }
            }
        }
        headers.extend(self.spec.headers.iter().cloned());
        let body = body.strip_suffix(b"\n").unwrap_or(body).to_vec();
        Post {
            agent: self.net.agent(&self.spec.url).clone(),
            via: self.net.via(&self.spec.url),
            url: self.spec.url.clone(),
            headers,
            body,
            id: out.id,
            max: self.spec.max_message.max(64 << 10),
            session: Arc::clone(&self.session),
            assigns_session: out.method == "initialize",
            resumable: out.version.is_none(),
            stop,
            extra: self.spec.headers.clone(),
            auth: self.auth.clone(),
        }
    }

    /// Post a notification (or a response) and wait for its 202.
    fn post_now(&mut self, body: &[u8], out: &Outgoing, limit: Duration) -> Result<(), ClientError> {
        let (tx, rx) = unbounded();
        let post = self.post(body, out, never());
        if !spawn_masked(move || post.run(&tx)) {
            return Err(ClientError::Connect("cannot start an HTTP thread".into()));
        }
        match rx.recv_timeout(limit) {
            Ok(Event::Accepted) => Ok(()),
            Ok(Event::Failed(e)) => Err(e),
            Ok(Event::Message(v)) => {
                let (code, message, data) = super::wire::error_parts(v.get("error").unwrap_or(&Value::Null));
                Err(ClientError::Rpc { code, message, data })
            }
            Ok(_) => Err(ClientError::Protocol("unexpected answer to a notification".into())),
            Err(_) => Err(ClientError::Timeout(limit)),
        }
    }
}

impl Link for HttpLink {
    fn send(
        &mut self,
        line: &[u8],
        out: &Outgoing,
        deadline: Instant,
        _interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<(), ClientError> {
        let Some(id) = out.id else {
            let limit = deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(1));
            return self.post_now(line, out, limit);
        };
        let (tx, rx) = unbounded();
        let (stop_tx, stop) = bounded(0);
        let post = self.post(line, out, stop);
        if !spawn_masked(move || post.run(&tx)) {
            return Err(ClientError::Connect("cannot start an HTTP thread".into()));
        }
        self.requests.insert(id, InFlight { events: rx, _stop: stop_tx });
        Ok(())
    }

    fn recv(&mut self, id: u64, wait: Duration) -> Option<Event> {
        let rx = &self.requests.get(&id)?.events;
        if let Ok(e) = rx.try_recv() {
            return Some(e);
        }
        // The session's GET stream too, when it is open (its messages
        // concern whatever request is awaited: a question of the server).
        let Some(listener) = &self.listener else {
            return if wait.is_zero() { None } else { rx.recv_timeout(wait).ok() };
        };
        if let Ok(e) = listener.events.try_recv() {
            return Some(e);
        }
        if wait.is_zero() {
            return None;
        }
        let mut sel = crossbeam_channel::Select::new();
        let (mine, other) = (sel.recv(rx), sel.recv(&listener.events));
        let op = sel.select_timeout(wait).ok()?;
        match op.index() {
            i if i == mine => op.recv(rx).ok(),
            i if i == other => match op.recv(&listener.events) {
                Ok(e) => Some(e),
                // The listener ended (no stream offered): stop selecting it.
                Err(_) => {
                    self.listener = None;
                    None
                }
            },
            _ => None,
        }
    }

    fn listen(&mut self) {
        if self.version.is_none() || self.listener.is_some() {
            return;
        }
        // Bounded: between calls nobody reads it, and a server that sends
        // without end then waits on its TCP connection, not in memory here.
        let (tx, rx) = bounded(LISTEN_QUEUE);
        let (stop_tx, stop) = bounded(0);
        let out = Outgoing { id: None, method: "", name: None, version: None, headers: &[] };
        let post = self.post(b"", &out, stop);
        if spawn_masked(move || post.listen(&tx)) {
            self.listener = Some(InFlight { events: rx, _stop: stop_tx });
        }
    }

    fn cancel(&mut self, id: u64, reason: &str) {
        if self.requests.remove(&id).is_none() {
            return;
        }
        if self.version.is_some() {
            // Legacy Streamable HTTP: a disconnect is not a cancellation.
            let line = super::wire::notification_line(
                "notifications/cancelled",
                &[("requestId", &id.to_string()), ("reason", &super::wire::json_string(reason))],
            );
            let out = Outgoing { id: None, method: "notifications/cancelled", name: None, version: None, headers: &[] };
            let _ = self.post_now(&line, &out, Duration::from_secs(2));
        }
        // Closing the response stream: shut the agent's connections down
        // (the session's GET stream too, which is opened again).
        self.net.renew();
        if self.listener.take().is_some() {
            self.listen();
        }
    }

    fn finish(&mut self, id: u64) {
        self.requests.remove(&id);
    }

    fn respond(&mut self, line: &[u8]) {
        let out = Outgoing { id: None, method: "", name: None, version: None, headers: &[] };
        let _ = self.post_now(line, &out, Duration::from_secs(5));
    }

    fn context(&mut self) -> FailureContext {
        FailureContext::default()
    }

    fn stderr_text(&self) -> String {
        String::new()
    }

    fn mirrors_params(&self) -> bool {
        true
    }

    fn sign_in_time(&self) -> Duration {
        self.auth.as_ref().map(|a| a.signing_in.total()).unwrap_or_default()
    }

    fn set_version(&mut self, version: &str) {
        if version != super::MODERN {
            self.version = Some(version.to_string());
        }
    }

    fn close(&mut self) -> String {
        self.requests.clear();
        self.listener = None;
        let sid = self.session.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(sid) = sid {
            // End the legacy session; a server may refuse with 405.
            self.net.renew();
            let mut req = self.net.agent(&self.spec.url).delete(&self.spec.url).header("Mcp-Session-Id", sid.as_str());
            if let Some(v) = &self.version {
                req = req.header("MCP-Protocol-Version", v.as_str());
            }
            for (k, v) in &self.spec.headers {
                req = req.header(k.as_str(), v.as_str());
            }
            if let Some(h) = self.auth.as_ref().and_then(|a| a.header()) {
                req = req.header("Authorization", h.as_str());
            }
            let (tx, rx) = unbounded::<()>();
            spawn_masked(move || {
                let _ = req.call();
                let _ = tx.send(());
            });
            let _ = rx.recv_timeout(Duration::from_secs(2));
        }
        self.net.renew();
        "closed".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_values_use_the_base64_sentinel_when_needed() {
        assert_eq!(header_value("us-west1"), "us-west1");
        assert_eq!(header_value("Hello, 世界"), "=?base64?SGVsbG8sIOS4lueVjA==?=");
        assert_eq!(header_value(" padded "), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(header_value("line1\nline2"), "=?base64?bGluZTEKbGluZTI=?=");
        assert_eq!(header_value("=?base64?literal?="), "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=");
        assert_eq!(header_value(""), "=?base64??=");
        assert_eq!(header_value("f\n"), "=?base64?Zgo=?=");
    }

    #[test]
    fn other_schemes_and_bad_ca_files_are_refused() {
        assert!(HttpLink::open(&HttpSpec::new("https://example.com/mcp")).is_ok());
        assert!(HttpLink::open(&HttpSpec::new("HTTP://example.com/mcp")).is_ok());
        let e = HttpLink::open(&HttpSpec::new("ftp://example.com/mcp")).err().unwrap();
        assert!(e.to_string().contains("not an http:// or https:// URL"), "{e}");
        let dir = std::env::temp_dir().join(format!("mcplite-ca-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let spec =
            |f: &std::path::Path| HttpSpec { ca_file: Some(f.display().to_string()), ..HttpSpec::new("https://x/") };
        let e = HttpLink::open(&spec(&dir.join("missing.pem"))).err().unwrap();
        assert!(e.to_string().starts_with("cannot read the CA file"), "{e}");
        std::fs::write(dir.join("empty.pem"), "no certificates here\n").unwrap();
        let e = HttpLink::open(&spec(&dir.join("empty.pem"))).err().unwrap();
        assert!(e.to_string().contains("holds no PEM certificate"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
