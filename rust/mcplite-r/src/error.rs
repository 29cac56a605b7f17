//! The bridge's one error type.
//!
//! Every failure the bridge reports is an [`Error`]: a [`Kind`] and a
//! finished, user-facing message. It leaves the bridge in one of two ways:
//!
//! * to R, from an entry point called with `.Call()`: [`Error::into_r`] turns
//!   it into a small marker value (a list of class `mcplite_bridge_error`
//!   holding the kind and the message) that the wrappers in
//!   `R/bridge-wrappers.R` hand to `bridge_value()` in `R/conditions.R`,
//!   which raises it as an R error of class `mcplite_error_<kind>` (and
//!   `mcplite_error`). Raising the condition in R, not here, means no R error
//!   ever longjmps through Rust frames.
//! * to the engine, from a tool call: [`Error::into_tool_failure`] makes the
//!   message the text of a contained tool error.

use extendr_api::prelude::*;
use mcplite_engine::ToolFailure;

/// What went wrong, as far as the caller needs to tell failures apart. The
/// R class of a kind is `mcplite_error_<name>`, with the name from
/// [`Kind::name`]; `R/conditions.R` lists the classes and `?mcplite_error`
/// documents them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A server is already running in this process.
    ServerRunning,
    /// Standard input/output could not be set up for serving.
    Stdio,
    /// The HTTP server cannot start (address in use, a public address
    /// without a token, ...).
    Http,
    /// One of the `mcplite.json.*` options is invalid.
    Option,
    /// An R value cannot be converted to JSON, or an argument of the
    /// encoder's own entry points is invalid.
    Json,
    /// A handler made by `mcp_handler()` cannot be used (for example one
    /// restored with `readRDS()`: its external pointer is gone).
    Handler,
    /// A live R session (`mcp_session()`, RULES R10) cannot be opened or
    /// reached: its directory is not private, the platform has no
    /// Unix-domain sockets, the session is gone.
    Session,
    /// The arguments of a tool call cannot be passed to R (for example an
    /// empty argument name). Reported to the client as a tool error.
    Arguments,
    /// `mcp_progress()` was given a value it cannot send (not above the
    /// previous one, or not finite) while a client was listening.
    Progress,
    /// Worker processes cannot be started, or kept failing to start
    /// (RULES N1, N6).
    Workers,
    /// A broken invariant between the R code and the bridge: a bug.
    Internal,
    /// An argument of an R function is invalid (class `mcplite_error`
    /// alone, RULES R9.1).
    Argument,
    /// MCP client (RULES K7.1): the server answered with a JSON-RPC error.
    Rpc,
    /// MCP client: no answer in time.
    Timeout,
    /// MCP client: the server could not be started or reached, exited,
    /// closed the connection or broke the protocol.
    Connection,
    /// MCP client: a TLS handshake failed (also a connection error).
    Tls,
    /// MCP client: the user interrupted a wait; R signals the interrupt
    /// again instead of raising an error.
    Interrupted,
    /// A question of a running tool to its client (`mcp_elicit()`,
    /// `mcp_sample()`, RULES A1) got no answer.
    Ask,
}

impl Kind {
    /// The suffix of the R class: `mcplite_error_<name>`.
    pub fn name(self) -> &'static str {
        match self {
            Kind::ServerRunning => "server_running",
            Kind::Stdio => "stdio",
            Kind::Http => "http",
            Kind::Option => "option",
            Kind::Json => "json",
            Kind::Handler => "handler",
            Kind::Session => "session",
            Kind::Arguments => "arguments",
            Kind::Progress => "progress",
            Kind::Workers => "workers",
            Kind::Internal => "internal",
            Kind::Argument => "argument",
            Kind::Rpc => "rpc",
            Kind::Timeout => "timeout",
            Kind::Connection => "connection",
            Kind::Tls => "tls",
            Kind::Interrupted => "interrupted",
            Kind::Ask => "ask",
        }
    }
}

/// A failure with its kind and user-facing message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    kind: Kind,
    message: String,
}

/// The bridge's result type.
pub type Result<T> = std::result::Result<T, Error>;

/// The message of a server-already-running error, the same whether R's own
/// check or the bridge's finds it.
pub const SERVER_RUNNING: &str =
    "A server is already running in this process; `mcp_server()` cannot be started again until it returns.";

impl Error {
    pub fn new(kind: Kind, message: impl Into<String>) -> Error {
        Error { kind, message: message.into() }
    }

    pub fn json(message: impl Into<String>) -> Error {
        Error::new(Kind::Json, message)
    }

    pub fn option(message: impl Into<String>) -> Error {
        Error::new(Kind::Option, message)
    }

    pub fn internal(message: impl Into<String>) -> Error {
        Error::new(Kind::Internal, message)
    }

    pub fn kind(&self) -> Kind {
        self.kind
    }

    pub fn message(&self) -> &str {
        &self.message
    }

    /// The same error with `prefix` put before its message (context added
    /// by a caller, e.g. "The server could not run: ").
    pub fn context(mut self, prefix: &str) -> Error {
        self.message.insert_str(0, prefix);
        self
    }

    /// The text of a contained tool error.
    pub fn into_tool_failure(self) -> ToolFailure {
        ToolFailure::Error(self.message)
    }

    /// The marker value an entry point returns to R instead of its result:
    /// `structure(list(kind = <name>, message = <message>), class =
    /// "mcplite_bridge_error")`. `bridge_value()` (R/conditions.R) raises it.
    pub fn into_r(self) -> Robj {
        marker(self.kind, &self.message, Robj::from(()))
    }
}

/// The marker of an error, with `fields`: `NULL`, or a named list of values
/// the condition carries besides its message (the client's `code`,
/// `status`, `stderr`, ...; RULES K7.1). Every error the bridge returns to
/// R is built here.
pub fn marker(kind: Kind, message: &str, fields: Robj) -> Robj {
    // NUL cannot be in an R string; messages quote user values.
    let message = message.replace('\0', "");
    let values: [Robj; 3] = [kind.name().into(), message.as_str().into(), fields];
    let mut out = List::from_names_and_values(["kind", "message", "fields"], values)
        .map(Robj::from)
        .unwrap_or_else(|_| Robj::from(message.as_str()));
    // Only fails for a non-list receiver; `out` is a list.
    let _ = out.set_class(["mcplite_bridge_error"]);
    out
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// An entry point's value, or the marker of its error.
pub fn to_r<T: Into<Robj>>(res: Result<T>) -> Robj {
    match res {
        Ok(v) => v.into(),
        Err(e) => e.into_r(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_names_are_class_suffixes() {
        let all = [
            Kind::ServerRunning,
            Kind::Stdio,
            Kind::Option,
            Kind::Json,
            Kind::Handler,
            Kind::Session,
            Kind::Arguments,
            Kind::Progress,
            Kind::Workers,
            Kind::Internal,
            Kind::Argument,
            Kind::Rpc,
            Kind::Timeout,
            Kind::Connection,
            Kind::Tls,
            Kind::Interrupted,
        ];
        let names: Vec<&str> = all.iter().map(|k| k.name()).collect();
        assert_eq!(
            names,
            [
                "server_running",
                "stdio",
                "option",
                "json",
                "handler",
                "session",
                "arguments",
                "progress",
                "workers",
                "internal",
                "argument",
                "rpc",
                "timeout",
                "connection",
                "tls",
                "interrupted"
            ]
        );
        // R class names: lower case letters and underscores only
        assert!(names.iter().all(|n| n.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')));
    }

    #[test]
    fn context_prefixes_the_message() {
        let e = Error::new(Kind::Stdio, "cannot set up stdio: EBADF").context("The server could not run: ");
        assert_eq!(e.kind(), Kind::Stdio);
        assert_eq!(e.message(), "The server could not run: cannot set up stdio: EBADF");
        assert_eq!(e.to_string(), e.message());
    }

    #[test]
    fn tool_failure_carries_the_message() {
        let f = Error::new(Kind::Arguments, "bad").into_tool_failure();
        assert_eq!(f, ToolFailure::Error("bad".into()));
    }
}
