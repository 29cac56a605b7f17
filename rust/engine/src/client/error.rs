//! Why a client operation failed: [`ClientError`], and [`ConnectError`] for a
//! failed connection attempt with what is known about the server then.

use std::fmt;
use std::time::Duration;

use serde_json::Value;

/// Why a client operation failed.
#[derive(Debug, Clone, PartialEq)]
pub enum ClientError {
    /// The server process could not be started.
    Spawn(String),
    /// The HTTP endpoint could not be reached.
    Connect(String),
    /// The TLS handshake with an `https://` endpoint failed (for example
    /// its certificate was rejected).
    Tls { url: String, reason: String },
    /// The server closed the connection or exited.
    Closed(String),
    /// No answer in time (the duration waited; zero when a write timed out).
    Timeout(Duration),
    /// The user interrupted R.
    Interrupted,
    /// The server answered with a JSON-RPC error.
    Rpc { code: i64, message: String, data: Option<Box<Value>> },
    /// The HTTP endpoint answered with an error status.
    Http { status: u16, message: String },
    /// The server broke the protocol (or asked for something the client
    /// does not support).
    Protocol(String),
    /// Signing in to the server failed (RULES K10).
    Auth(String),
}

impl ClientError {
    /// A short, stable name for the kind of failure.
    pub fn kind(&self) -> &'static str {
        match self {
            ClientError::Spawn(_) => "spawn",
            ClientError::Connect(_) => "connect",
            ClientError::Tls { .. } => "tls",
            ClientError::Closed(_) => "closed",
            ClientError::Timeout(_) => "timeout",
            ClientError::Interrupted => "interrupted",
            ClientError::Rpc { .. } => "rpc",
            ClientError::Http { .. } => "http",
            ClientError::Protocol(_) => "protocol",
            ClientError::Auth(_) => "auth",
        }
    }
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientError::Spawn(m)
            | ClientError::Connect(m)
            | ClientError::Closed(m)
            | ClientError::Protocol(m)
            | ClientError::Auth(m) => f.write_str(m),
            ClientError::Timeout(d) if d.is_zero() => f.write_str("timed out writing to the server"),
            ClientError::Timeout(d) => write!(f, "no answer within {}", human_duration(*d)),
            ClientError::Interrupted => f.write_str("interrupted"),
            ClientError::Rpc { code, message, .. } => write!(f, "JSON-RPC error {code}: {message}"),
            ClientError::Http { status, message } => write!(f, "HTTP {status}: {message}"),
            ClientError::Tls { url, reason } => write!(f, "TLS with {url} failed: {reason}"),
        }
    }
}

/// A failed connection attempt: why, what the server wrote to stderr
/// before it was shut down, its exit status, and the lines it wrote that
/// were not JSON-RPC (how many, the last).
#[derive(Debug, Clone, PartialEq)]
pub struct ConnectError {
    pub error: ClientError,
    pub stderr: String,
    pub exit_status: Option<i32>,
    pub garbage: (u64, Option<String>),
}

impl ConnectError {
    pub fn kind(&self) -> &'static str {
        self.error.kind()
    }
}

impl From<ClientError> for ConnectError {
    fn from(error: ClientError) -> Self {
        ConnectError { error, stderr: String::new(), exit_status: None, garbage: (0, None) }
    }
}

impl fmt::Display for ConnectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.error.fmt(f)
    }
}

pub(crate) fn human_duration(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s >= 1.0 && (s - s.round()).abs() < 1e-9 {
        format!("{} s", s.round() as u64)
    } else if s >= 1.0 {
        format!("{s:.1} s")
    } else {
        format!("{} ms", d.as_millis())
    }
}
