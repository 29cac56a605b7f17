//! The settings of the HTTP transport, their defaults, and why binding
//! failed.

use std::io;
use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use super::access::LogFormat;

/// Settings of the HTTP transport.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Address or name to bind (`127.0.0.1` by default).
    pub host: String,
    /// Port; 0 picks a free one (see [`super::HttpServer::local_addr`]).
    pub port: u16,
    /// Path of the MCP endpoint (`/mcp`).
    pub path: String,
    /// Bearer token every MCP request must carry, if set (at least 16
    /// characters; named `default` in the access log).
    pub token: Option<String>,
    /// A file of named tokens (RULES H6.1; see `tokens.rs`), accepted
    /// besides [`HttpOptions::token`].
    pub tokens_file: Option<PathBuf>,
    /// Peers whose `X-Forwarded-For` names the client (RULES H7.2).
    pub trusted_proxies: Vec<IpAddr>,
    /// The access log on stderr (RULES H7).
    pub access_log: LogFormat,
    /// Origins allowed besides loopback ones (`scheme://host[:port]`).
    pub allowed_origins: Vec<String>,
    /// `Host` values allowed besides loopback names and the bound address.
    pub allowed_hosts: Vec<String>,
    /// Permit a non-loopback bind without a token.
    pub allow_public_without_token: bool,
    /// Largest request body in bytes.
    pub max_body: usize,
    /// Largest request head (request line and headers) in bytes; at least
    /// 8192.
    pub max_header_bytes: usize,
    /// A client must send its whole request head within this time.
    pub header_timeout: Duration,
    /// Connections served at once. Up to 64 more are accepted only to be
    /// answered `503` with `Retry-After: 1`; beyond those, connections wait
    /// in the kernel's queue until one ends.
    pub max_connections: usize,
    /// Legacy sessions kept at once.
    pub max_sessions: usize,
    /// A legacy session unused this long is ended.
    pub session_idle: Duration,
    /// Name of this replica, put in front of every session id it mints
    /// (`<replica>.<32 hex>`) so a load balancer can route a legacy session
    /// back to its replica by `MCP-Session-Id` alone. 1 to 32 ASCII letters,
    /// digits, `_` or `-`.
    pub replica: Option<String>,
    /// On stop, how long open connections and queued calls may finish
    /// (RULES H4.2: 7 s, so that the drain, the interrupted calls' answers
    /// and the workers' stop fit within a container's 10-second grace).
    pub drain_timeout: Duration,
    /// HTTP worker threads.
    pub threads: usize,
    /// Legacy SSE polling (RULES H8): with a time, a 2025-11-25 session's
    /// tool call is resumable; its stream starts with a priming event
    /// (an event id, a `retry` field, no data), the server holds a
    /// connection of it at most this long before closing it, and the
    /// client reconnects with `GET` and `Last-Event-ID` for the rest. A
    /// call not answered within this time is answered that way even when
    /// it would have been JSON. `None`: connections are held until the
    /// answer, as before.
    pub stream_hold: Option<Duration>,
    /// How often a silent stream of notifications (RULES U3) sends an SSE
    /// comment, under the idle timeouts of common proxies (nginx's
    /// `proxy_read_timeout` is 60 s by default).
    pub keepalive: Duration,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            host: "127.0.0.1".into(),
            port: 8080,
            path: "/mcp".into(),
            token: None,
            tokens_file: None,
            trusted_proxies: Vec::new(),
            access_log: LogFormat::Text,
            allowed_origins: Vec::new(),
            allowed_hosts: Vec::new(),
            allow_public_without_token: false,
            max_body: 16 << 20,
            max_header_bytes: 16 << 10,
            header_timeout: Duration::from_secs(10),
            max_connections: 256,
            max_sessions: 1000,
            session_idle: Duration::from_secs(3600),
            replica: None,
            drain_timeout: Duration::from_secs(7),
            threads: 2,
            stream_hold: None,
            keepalive: Duration::from_secs(25),
        }
    }
}

impl HttpOptions {
    /// The checks that need no network: the endpoint path and the replica
    /// name.
    pub(super) fn check(&self) -> Result<(), HttpError> {
        if !self.path.starts_with('/') || self.path == "/health" {
            return Err(HttpError::Config(format!(
                "the endpoint path must start with \"/\" and not be \"/health\", not \"{}\"",
                self.path
            )));
        }
        if self.stream_hold.is_some_and(|h| h.is_zero()) {
            return Err(HttpError::Config("the stream hold time must be more than 0 seconds".into()));
        }
        if let Some(r) = &self.replica {
            if r.is_empty() || r.len() > 32 || !r.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-') {
                return Err(HttpError::Config(format!(
                    "the replica name must be 1 to 32 ASCII letters, digits, \"_\" or \"-\", not \"{r}\""
                )));
            }
        }
        Ok(())
    }
}

/// Why binding failed, or serving ended.
#[derive(Debug)]
pub enum HttpError {
    /// The options are not acceptable (message says why).
    Config(String),
    /// The address cannot be bound or the runtime cannot start.
    Io(io::Error),
}

impl std::fmt::Display for HttpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HttpError::Config(m) => f.write_str(m),
            HttpError::Io(e) => write!(f, "{e}"),
        }
    }
}
