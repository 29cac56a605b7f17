//! The access log (RULES H7): one line per request on stderr, plain
//! `key=value` pairs or, with [`LogFormat::Json`], one JSON object per line:
//! the time, the client's address (from `X-Forwarded-For` only when the peer
//! is a trusted proxy), the token's name, the HTTP method, the JSON-RPC
//! method, the tool's name, the protocol version, the status, the outcome
//! (`ok`, `tool_error`, `crashed`, `interrupted`, `cancelled`, `refused`,
//! `error`), the duration until the answer's head (for an SSE answer, until
//! its end, which tells the outcome), and for a refused request the reason. Never a
//! token, an argument or a result: only these fields are written, each
//! bounded in length.

use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use crossbeam_channel::Sender;

use hyper::header::HeaderMap;

use serde_json::Value;

use crate::json::write_str;
use crate::message::Message;
use crate::telemetry::between_tool_output;
use crate::version::{self, Era};

/// How access-log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    /// No access log.
    Off,
    /// `key=value` pairs.
    Text,
    /// One JSON object per line.
    Json,
}

/// Why a request was refused, put on the response by
/// [`super::response::error_resp`] (never sent).
#[derive(Clone)]
pub(super) struct Reason(pub(super) Arc<str>);

/// How a request ended (RULES H7.1), put on the response by
/// [`super::response::answer_resp`] (never sent). Without it: `refused`
/// for an answer with a [`Reason`], `error` for another status from 400,
/// `ok` otherwise.
#[derive(Clone, Copy)]
pub(super) struct Outcome(pub(super) &'static str);

/// The outcome of a call answered on an SSE stream, known when the stream
/// ends: its access-log line waits for it. Unset at the end: the client went
/// away, which cancelled the call.
#[derive(Clone, Default)]
pub(super) struct PendingOutcome(Arc<std::sync::OnceLock<&'static str>>);

impl PendingOutcome {
    pub(super) fn set(&self, outcome: &'static str) {
        let _ = self.0.set(outcome);
    }

    pub(super) fn get(&self) -> &'static str {
        self.0.get().copied().unwrap_or("cancelled")
    }
}

/// The outcome of a request answered with `status` (see [`Outcome`]).
pub(super) fn outcome_of(given: Option<Outcome>, status: u16, reason: Option<&str>) -> &'static str {
    match given {
        Some(Outcome(o)) => o,
        None if reason.is_some() => "refused",
        None if status >= 400 => "error",
        None => "ok",
    }
}

/// What is known about one request, filled in as it is handled.
#[derive(Clone)]
pub(super) struct Facts {
    pub(super) start: Instant,
    pub(super) client: SocketAddr,
    pub(super) token: Option<Arc<str>>,
    /// The token's limit of tool calls per minute.
    pub(super) per_minute: Option<u32>,
    pub(super) http_method: String,
    pub(super) method: Option<String>,
    pub(super) tool: Option<String>,
    pub(super) version: Option<String>,
}

/// Longest value written (longer ones are cut; they come from the client).
const MAX_VALUE: usize = 128;

fn cut(s: &str) -> &str {
    if s.len() <= MAX_VALUE {
        return s;
    }
    let mut end = MAX_VALUE;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Write one line on stderr, ignoring failures (a closed stderr must never
/// disturb the server).
pub(super) fn stderr_line(line: &[u8]) {
    let mut e = std::io::stderr().lock();
    let _ = e.write_all(line);
    let _ = e.write_all(b"\n");
}

/// Lines waiting for the writer; more are dropped (and counted).
const QUEUE: usize = 4096;

enum Msg {
    Line(Vec<u8>),
    Flush(Sender<()>),
}

/// The access log: lines are handed to a thread of their own that writes
/// them, so a stderr that nobody reads (a full pipe) never stalls a request;
/// when the queue is full, lines are dropped and the writer says how many
/// before its next line.
#[derive(Clone)]
pub(super) struct AccessLog {
    pub(super) format: LogFormat,
    tx: Option<Sender<Msg>>,
    dropped: Arc<AtomicU64>,
}

impl AccessLog {
    /// Start the writer thread (none when the log is off). Call with
    /// signals blocked: the thread inherits the mask.
    pub(super) fn start(format: LogFormat) -> std::io::Result<AccessLog> {
        let dropped = Arc::new(AtomicU64::new(0));
        if format == LogFormat::Off {
            return Ok(AccessLog { format, tx: None, dropped });
        }
        let (tx, rx) = crossbeam_channel::bounded::<Msg>(QUEUE);
        let lost = dropped.clone();
        std::thread::Builder::new().name("mcplite-access-log".into()).spawn(move || {
            for m in rx {
                match m {
                    // Not inside a line an in-process tool is printing
                    // (RULES H7, T8): this thread waits, requests do not.
                    Msg::Line(l) => between_tool_output(|| {
                        let n = lost.swap(0, Ordering::Relaxed);
                        if n > 0 {
                            stderr_line(format!("mcplite access: {n} lines dropped (stderr was not read)").as_bytes());
                        }
                        stderr_line(&l);
                    }),
                    Msg::Flush(done) => {
                        let _ = done.send(());
                    }
                }
            }
        })?;
        Ok(AccessLog { format, tx: Some(tx), dropped })
    }

    /// Queue the line of a request answered with `status`.
    pub(super) fn write(&self, facts: &Facts, status: u16, outcome: &str, reason: Option<&str>) {
        let Some(tx) = &self.tx else { return };
        let line = facts.line(self.format, status, outcome, reason, SystemTime::now());
        if tx.try_send(Msg::Line(line)).is_err() {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Wait (at most `limit`) until the lines queued so far are written.
    pub(super) fn flush(&self, limit: Duration) {
        let Some(tx) = &self.tx else { return };
        let (done, wait) = crossbeam_channel::bounded(1);
        if tx.send_timeout(Msg::Flush(done), limit).is_ok() {
            let _ = wait.recv_timeout(limit);
        }
    }
}

/// The client's address: the peer, or, when the peer is a trusted proxy,
/// the last address in `X-Forwarded-For` that is not one (RULES H7.2).
pub(super) fn client_address(peer: SocketAddr, h: &HeaderMap, trusted: &[IpAddr]) -> SocketAddr {
    if !trusted.contains(&peer.ip()) {
        return peer;
    }
    let hops = h.get_all("x-forwarded-for").iter().filter_map(|v| v.to_str().ok()).flat_map(|v| v.split(','));
    let hops: Vec<&str> = hops.map(str::trim).collect();
    for hop in hops.iter().rev() {
        let Ok(ip) = hop.parse::<IpAddr>() else { return peer };
        if !trusted.contains(&ip) {
            return SocketAddr::new(ip, 0);
        }
    }
    peer
}

impl Facts {
    pub(super) fn new(client: SocketAddr, http_method: &str) -> Facts {
        Facts {
            start: Instant::now(),
            client,
            token: None,
            per_minute: None,
            http_method: cut(http_method).to_string(),
            method: None,
            tool: None,
            version: None,
        }
    }

    /// Note the JSON-RPC method, the tool's name and the protocol version
    /// (the `MCP-Protocol-Version` header, else the body's claim in
    /// `_meta`, else the version `initialize` asks for).
    pub(super) fn note(&mut self, h: &HeaderMap, msg: &Message) {
        self.method = Some(cut(&msg.method).to_string());
        let params = msg.params.as_ref();
        let get = |k: &str| params.and_then(|p| p.get(k)).and_then(Value::as_str);
        if msg.method == "tools/call" {
            self.tool = get("name").map(|n| cut(n).to_string());
        }
        let claim = match version::era_of(params) {
            Era::Modern { meta } => meta.get(version::META_VERSION).and_then(Value::as_str),
            Era::Legacy => None,
        };
        let header = h.get("mcp-protocol-version").and_then(|v| v.to_str().ok());
        let init = if msg.method == "initialize" { get("protocolVersion") } else { None };
        self.version = header.or(claim).or(init).map(|v| cut(v).to_string());
    }

    /// The line for this request, answered with `status`.
    pub(super) fn line(
        &self,
        format: LogFormat,
        status: u16,
        outcome: &str,
        reason: Option<&str>,
        now: SystemTime,
    ) -> Vec<u8> {
        let time = humantime::format_rfc3339_millis(now).to_string();
        let client = self.client.ip().to_string();
        let ms = duration_ms(self.start.elapsed());
        let fields: [(&str, Option<&str>); 8] = [
            ("time", Some(&time)),
            ("client", Some(&client)),
            ("token", self.token.as_deref()),
            ("http_method", Some(&self.http_method)),
            ("method", self.method.as_deref()),
            ("tool", self.tool.as_deref()),
            ("version", self.version.as_deref()),
            ("reason", reason),
        ];
        let mut out = Vec::with_capacity(256);
        match format {
            LogFormat::Json => {
                out.push(b'{');
                for (k, v) in fields.iter().take(7) {
                    write_str(&mut out, k);
                    out.push(b':');
                    match v {
                        Some(v) => write_str(&mut out, cut(v)),
                        None => out.extend_from_slice(b"null"),
                    }
                    out.push(b',');
                }
                out.extend_from_slice(format!("\"status\":{status},\"outcome\":").as_bytes());
                write_str(&mut out, outcome);
                out.extend_from_slice(format!(",\"duration_ms\":{ms}").as_bytes());
                if let Some(r) = reason {
                    out.extend_from_slice(b",\"reason\":");
                    write_str(&mut out, cut(r));
                }
                out.push(b'}');
            }
            LogFormat::Text | LogFormat::Off => {
                out.extend_from_slice(b"mcplite access:");
                for (k, v) in fields.iter().take(7) {
                    out.push(b' ');
                    out.extend_from_slice(k.as_bytes());
                    out.push(b'=');
                    text_value(&mut out, v.map(cut));
                }
                out.extend_from_slice(format!(" status={status} outcome=").as_bytes());
                text_value(&mut out, Some(outcome));
                out.extend_from_slice(format!(" duration_ms={ms}").as_bytes());
                if let Some(r) = reason {
                    out.extend_from_slice(b" reason=");
                    text_value(&mut out, Some(cut(r)));
                }
            }
        }
        out
    }
}

/// A value of a text line: as is when it is plain, quoted as a JSON string
/// otherwise (spaces, quotes, control characters), `-` when absent.
fn text_value(out: &mut Vec<u8>, v: Option<&str>) {
    match v {
        None => out.push(b'-'),
        Some(v) if !v.is_empty() && v.bytes().all(|b| b.is_ascii_alphanumeric() || b"._:/@+-[]".contains(&b)) => {
            out.extend_from_slice(v.as_bytes())
        }
        Some(v) => write_str(out, v),
    }
}

fn duration_ms(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts() -> Facts {
        let mut f = Facts::new("10.0.0.9:5000".parse().unwrap(), "POST");
        f.token = Some("alice".into());
        f.method = Some("tools/call".into());
        f.tool = Some("a tool\n\"x\"".into());
        f
    }

    #[test]
    fn text_and_json_lines() {
        let t = SystemTime::UNIX_EPOCH + Duration::from_millis(1_700_000_000_123);
        let text =
            String::from_utf8(facts().line(LogFormat::Text, 401, "refused", Some("Unauthorized: x"), t)).unwrap();
        assert!(
            text.starts_with("mcplite access: time=2023-11-14T22:13:20.123Z client=10.0.0.9 token=alice"),
            "{text}"
        );
        assert!(text.contains(r#" tool="a tool\n\"x\"" version=- status=401 outcome=refused duration_ms="#), "{text}");
        assert!(text.ends_with(r#" reason="Unauthorized: x""#), "{text}");
        let json = facts().line(LogFormat::Json, 200, "crashed", None, t);
        let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
        assert_eq!(v["client"], "10.0.0.9");
        assert_eq!(v["status"], 200);
        assert_eq!(v["outcome"], "crashed");
        assert_eq!(v["version"], serde_json::Value::Null);
        assert!(v.get("reason").is_none());
        assert_eq!(outcome_of(Some(Outcome("tool_error")), 200, None), "tool_error");
        assert_eq!(outcome_of(None, 503, Some("busy")), "refused");
        assert_eq!(outcome_of(None, 400, None), "error");
        assert_eq!(outcome_of(None, 202, None), "ok");
    }

    #[test]
    fn forwarded_only_through_trusted_proxies() {
        let proxy: SocketAddr = "10.0.0.1:40000".parse().unwrap();
        let mut h = HeaderMap::new();
        h.insert("x-forwarded-for", "203.0.113.7, 198.51.100.2, 10.0.0.2".parse().unwrap());
        let trusted: Vec<IpAddr> = vec!["10.0.0.1".parse().unwrap(), "10.0.0.2".parse().unwrap()];
        assert_eq!(client_address(proxy, &h, &trusted).ip().to_string(), "198.51.100.2");
        assert_eq!(client_address(proxy, &h, &[]), proxy);
        let other: SocketAddr = "192.0.2.5:1".parse().unwrap();
        assert_eq!(client_address(other, &h, &trusted), other);
        h.insert("x-forwarded-for", "not-an-ip".parse().unwrap());
        assert_eq!(client_address(proxy, &h, &trusted), proxy);
    }
}
