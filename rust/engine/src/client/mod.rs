//! The MCP client (RULES section 13): connect to a server (a child process
//! over stdio, or a Streamable HTTP endpoint), negotiate the protocol era,
//! list tools and call them. Pure Rust, like the rest of the engine; the R
//! bridge drives it one step at a time so that R keeps control of interrupts
//! and callbacks. Every protocol decision of the client is made here (RULES
//! K1.1), and `report.rs` writes what a failure tells the user (K7.2).
//!
//! Era negotiation follows the backward-compatibility rules of the
//! 2026-07-28 revision (RULES K2): the client first sends `server/discover`
//! carrying the modern version in `_meta`.
//! - A valid `DiscoverResult` (a non-empty `supportedVersions` array of
//!   strings) listing 2026-07-28 means a modern server: every later request
//!   carries the version, capabilities and client identity in
//!   `params._meta`, and there is no handshake.
//! - A recognized modern error (`-32022` unsupported version, `-32020`,
//!   `-32021`) also means a modern server; the client does not fall back
//!   unless the server itself lists a legacy version it supports.
//! - Any other answer (an invalid discover result such as `{}`, another
//!   error, an HTTP error status, a body that is not JSON-RPC), or no answer
//!   within the probe timeout, means a legacy server: the client sends
//!   `initialize` (2025-11-25) and `notifications/initialized`. A discover
//!   answer that arrives late, while `initialize` is pending, still wins (a
//!   slow-starting modern server).
//!
//! Requests are numbered 1, 2, 3, ...; progress tokens are the request ids
//! (RULES K3). A request is abandoned (timeout, interrupt) with
//! `notifications/cancelled` on stdio or by closing its stream on HTTP; a
//! late answer is ignored. A tool call refused with HeaderMismatch over
//! modern HTTP is sent again once after a new listing (K4.3); the input
//! schemas of the last listing are kept for the R side's encoding (K5.2).

pub mod http;
pub mod params;
pub mod report;
pub mod stdio;
mod tail;
pub mod wire;

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;

pub use http::{HttpLink, HttpSpec};
pub use stdio::StdioLink;
use wire::{classify, error_parts, json_string, request_line, Kind, Member};

use crate::codes;
use crate::version::{self, META_CAPS, META_SERVER_INFO, META_VERSION};

/// The modern revision the client speaks.
pub const MODERN: &str = version::CLIENT_MODERN.as_str();

/// Legacy revisions the client accepts from `initialize`, newest first.
pub const LEGACY: [&str; 4] = version::CLIENT_ACCEPTS_LEGACY;

/// The legacy revision the client asks for first.
pub const LEGACY_PREFERRED: &str = version::LEGACY_DEFAULT.as_str();

/// Why a link failed when the server just went away.
const CLOSED: &str = "the server closed the connection";

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
        }
    }
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientError::Spawn(m) | ClientError::Connect(m) | ClientError::Closed(m) | ClientError::Protocol(m) => {
                f.write_str(m)
            }
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

/// Something a link delivers.
#[derive(Debug)]
pub enum Event {
    /// One JSON object from the server.
    Message(Value),
    /// A line that is not a JSON-RPC message (excerpt).
    Garbage(String),
    /// A line over the size limit was dropped (the limit, in bytes).
    Oversize(usize),
    /// The server closed its output (with the reason when reading failed).
    Closed(Option<String>),
    /// This request failed; the connection stays usable (HTTP).
    Failed(ClientError),
    /// A notification or response was accepted (HTTP 202).
    Accepted,
}

/// What the link may need to know about an outgoing message (HTTP mirrors
/// these in headers).
#[derive(Debug, Clone, Copy)]
pub struct Outgoing<'a> {
    pub id: Option<u64>,
    pub method: &'a str,
    /// `params.name` of a `tools/call`.
    pub name: Option<&'a str>,
    /// The protocol version a modern request claims in its `_meta`.
    pub version: Option<&'a str>,
    /// `Mcp-Param-*` headers of a `tools/call` (HTTP).
    pub headers: &'a [(String, String)],
}

/// What is known after a link failed.
#[derive(Debug, Default, Clone)]
pub struct FailureContext {
    /// How the server process ended ("exited with status 1").
    pub ended: Option<String>,
    /// Its exit status, when it exited with one.
    pub status: Option<i32>,
    /// The kept tail of its stderr.
    pub stderr: String,
}

/// A transport: stdio or Streamable HTTP.
pub trait Link: Send {
    /// Send one message; `line` ends with a newline.
    fn send(
        &mut self,
        line: &[u8],
        out: &Outgoing,
        deadline: Instant,
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<(), ClientError>;
    /// The next event concerning request `id` (stdio: any event), waiting at
    /// most `wait`.
    fn recv(&mut self, id: u64, wait: Duration) -> Option<Event>;
    /// Abandon request `id`.
    fn cancel(&mut self, id: u64, reason: &str);
    /// Request `id` is complete.
    fn finish(&mut self, id: u64);
    /// Answer a request the server sent (`line` without newline).
    fn respond(&mut self, line: &[u8]);
    /// Why the link failed, as far as known.
    fn context(&mut self) -> FailureContext;
    /// The kept tail of the server's stderr ("" for HTTP).
    fn stderr_text(&self) -> String;
    /// The negotiated protocol version (HTTP sends it as a header).
    fn set_version(&mut self, version: &str);
    /// Shut down; returns how the server ended.
    fn close(&mut self) -> String;
    /// Shut down after a failed handshake, without the grace period a
    /// server gets to exit on its own (RULES K2.7).
    fn abort(&mut self) -> String {
        self.close()
    }
    /// The server's process id (stdio).
    fn pid(&self) -> Option<i32> {
        None
    }
    /// Does this transport mirror `x-mcp-header` arguments (HTTP)?
    fn mirrors_params(&self) -> bool {
        false
    }
}

/// How to start a server.
#[derive(Debug, Clone, Default)]
pub struct StdioSpec {
    /// Program: a path, or a name looked up on the child's `PATH`.
    pub program: String,
    pub args: Vec<String>,
    /// The child's complete environment; `None` inherits the parent's.
    pub env: Option<Vec<(String, String)>>,
    /// Working directory; `None` keeps the parent's.
    pub cwd: Option<String>,
    /// Longest accepted line on the child's stdout, in bytes.
    pub max_line: usize,
    /// Bytes of stderr kept.
    pub stderr_cap: usize,
    /// After stdin is closed, how long the child may take to exit before it
    /// is sent SIGTERM (and as long again before SIGKILL).
    pub grace: Duration,
}

impl StdioSpec {
    pub fn new(program: impl Into<String>, args: Vec<String>) -> StdioSpec {
        StdioSpec {
            program: program.into(),
            args,
            env: None,
            cwd: None,
            max_line: 64 << 20,
            stderr_cap: 16 << 10,
            grace: Duration::from_secs(2),
        }
    }
}

/// Run `f` on a new thread with every signal blocked, so R's signal
/// handlers (SIGINT, SIGPIPE) only ever run on R's own thread.
#[cfg(unix)]
pub(crate) fn spawn_masked<F: FnOnce() + Send + 'static>(name: &str, f: F) -> std::io::Result<JoinHandle<()>> {
    // SAFETY: sigset manipulation on stack values.
    unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_BLOCK, &all, &mut old);
        let h = std::thread::Builder::new().name(name.into()).spawn(f);
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        h
    }
}

/// Run `f` on a new thread (no POSIX signals to keep away from it).
#[cfg(not(unix))]
pub(crate) fn spawn_masked<F: FnOnce() + Send + 'static>(name: &str, f: F) -> std::io::Result<JoinHandle<()>> {
    std::thread::Builder::new().name(name.into()).spawn(f)
}

/// Which protocol era the connection speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    Modern,
    Legacy,
}

/// Connection options.
#[derive(Debug, Clone)]
pub struct Options {
    /// `None`: negotiate (modern first). A legacy version: `initialize` with
    /// it directly. The modern version: probe, never fall back.
    pub protocol: Option<String>,
    /// Time allowed for the whole handshake.
    pub timeout: Duration,
    /// How long to wait for an answer to the `server/discover` probe before
    /// deciding the server is legacy.
    pub probe_timeout: Duration,
    pub client_name: String,
    pub client_version: String,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            protocol: None,
            timeout: Duration::from_secs(60),
            probe_timeout: Duration::from_secs(5),
            client_name: "mcplite".into(),
            client_version: env!("CARGO_PKG_VERSION").into(),
        }
    }
}

/// The outcome of [`Connection::poll`].
#[derive(Debug)]
pub enum Poll {
    /// The request finished: its `result` object, or why it failed.
    Done(Result<Value, ClientError>),
    /// A `notifications/progress` for the request (its `params`).
    Progress(Value),
    /// Nothing yet.
    Pending,
}

/// Garbage the server wrote, kept for error messages.
#[derive(Debug, Default)]
struct Garbage {
    count: u64,
    last: Option<String>,
}

/// A connection to one MCP server.
pub struct Connection {
    link: Box<dyn Link>,
    era: Era,
    version: String,
    supported: Vec<String>,
    server_info: Option<Value>,
    capabilities: Option<Value>,
    instructions: Option<String>,
    next_id: u64,
    /// Started and not yet finished requests, with their progress token.
    pending: HashMap<u64, Option<u64>>,
    /// Finished requests whose answer arrived while another was awaited.
    mailbox: HashMap<u64, Result<Value, ClientError>>,
    /// Requests abandoned without a cancellation (the probe).
    quiet: HashSet<u64>,
    garbage: Garbage,
    /// Set once the link failed for good.
    dead: Option<ClientError>,
    /// The server's exit status, once it is known to have exited with one.
    exit_status: Option<i32>,
    closed: Option<String>,
    client_info: String,
    /// `x-mcp-header` arguments of each listed tool (modern HTTP).
    params: HashMap<String, Vec<params::HeaderParam>>,
    /// Tools left out of the last listing, and why.
    rejected: Vec<(String, String)>,
    /// The input schemas of the last listing that shape arguments (RULES
    /// K5.2, [`shapes_arguments`]), by tool name, and whether the tools
    /// were listed at all.
    schemas: HashMap<String, Value>,
    listed: bool,
    /// Tool calls that may be sent again after a HeaderMismatch, by id.
    resend: HashMap<u64, Resend>,
    /// Calls sent again: the id the caller knows -> the id on the wire.
    alias: HashMap<u64, u64>,
}

/// A tool call as sent, kept to send it again (RULES K4.3).
struct Resend {
    name: String,
    arguments: String,
    progress: bool,
    timeout: Duration,
}

impl Connection {
    /// Start a server over stdio and negotiate.
    pub fn stdio(
        spec: &StdioSpec,
        opts: &Options,
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<Connection, ConnectError> {
        let link = StdioLink::spawn(spec)?;
        Connection::establish(Box::new(link), opts, interrupted)
    }

    /// Connect to a Streamable HTTP endpoint and negotiate.
    pub fn http(
        spec: &HttpSpec,
        opts: &Options,
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<Connection, ConnectError> {
        let link = HttpLink::open(spec)?;
        Connection::establish(Box::new(link), opts, interrupted)
    }

    /// Negotiate over an open link. On failure the link is closed.
    pub fn establish(
        link: Box<dyn Link>,
        opts: &Options,
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<Connection, ConnectError> {
        let mut info = Vec::new();
        info.extend_from_slice(b"{\"name\":");
        crate::json::write_str(&mut info, &opts.client_name);
        info.extend_from_slice(b",\"version\":");
        crate::json::write_str(&mut info, &opts.client_version);
        info.push(b'}');
        let mut c = Connection {
            link,
            era: Era::Legacy,
            version: String::new(),
            supported: Vec::new(),
            server_info: None,
            capabilities: None,
            instructions: None,
            next_id: 1,
            pending: HashMap::new(),
            mailbox: HashMap::new(),
            quiet: HashSet::new(),
            garbage: Garbage::default(),
            dead: None,
            exit_status: None,
            closed: None,
            client_info: String::from_utf8(info).expect("UTF-8"),
            params: HashMap::new(),
            rejected: Vec::new(),
            schemas: HashMap::new(),
            listed: false,
            resend: HashMap::new(),
            alias: HashMap::new(),
        };
        match c.handshake(opts, interrupted) {
            Ok(()) => Ok(c),
            Err(error) => {
                // RULES K2.7: a failed connection is shut down at once.
                c.closed = Some(c.link.abort());
                let (n, last) = c.garbage();
                let garbage = (n, last.map(String::from));
                Err(ConnectError { error, stderr: c.stderr_text(), exit_status: c.exit_status, garbage })
            }
        }
    }

    pub fn era(&self) -> Era {
        self.era
    }

    /// The negotiated protocol version.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// Versions the server said it supports (modern discovery), if known.
    pub fn supported_versions(&self) -> &[String] {
        &self.supported
    }

    /// The server's `serverInfo` (legacy) or `_meta` serverInfo (modern).
    pub fn server_info(&self) -> Option<&Value> {
        self.server_info.as_ref()
    }

    pub fn capabilities(&self) -> Option<&Value> {
        self.capabilities.as_ref()
    }

    pub fn instructions(&self) -> Option<&str> {
        self.instructions.as_deref()
    }

    /// The server's process id (stdio only).
    pub fn pid(&self) -> Option<i32> {
        self.link.pid()
    }

    /// The kept tail of the server's stderr.
    pub fn stderr_text(&self) -> String {
        self.link.stderr_text()
    }

    /// Lines that were not JSON-RPC messages: how many, and the last one.
    pub fn garbage(&self) -> (u64, Option<&str>) {
        (self.garbage.count, self.garbage.last.as_deref())
    }

    /// The server's exit status, once it is known to have exited with one.
    pub fn exit_status(&self) -> Option<i32> {
        self.exit_status
    }

    pub fn is_open(&self) -> bool {
        self.closed.is_none() && self.dead.is_none()
    }

    fn check_open(&self) -> Result<(), ClientError> {
        if let Some(how) = &self.closed {
            return Err(ClientError::Closed(format!("the connection was closed (the server {how})")));
        }
        if let Some(e) = &self.dead {
            return Err(e.clone());
        }
        Ok(())
    }

    fn handshake(&mut self, opts: &Options, interrupted: &mut dyn FnMut() -> bool) -> Result<(), ClientError> {
        let deadline = Instant::now() + opts.timeout;
        if let Some(v) = &opts.protocol {
            if v != MODERN {
                return self.initialize(v, opts.timeout, deadline, None, interrupted);
            }
        }
        let fallback = opts.protocol.is_none();
        let meta = self.modern_meta(None);
        let probe = self.start_with("server/discover", None, &[], &meta, deadline, interrupted)?;
        let probe_deadline = (Instant::now() + opts.probe_timeout).min(deadline);
        let answer = self.wait_until(probe, probe_deadline, interrupted, false);
        // RULES K2.3: a recognized modern error means a modern server.
        if let Err(ClientError::Rpc { code, message, data }) = &answer {
            if codes::is_modern_only(*code) {
                let supported = supported_list(data.as_deref().and_then(|d| d.get("supported")));
                return match (fallback, best_legacy(&supported)) {
                    (true, Some(v)) => self.initialize(v, opts.timeout, deadline, None, interrupted),
                    _ => Err(ClientError::Protocol(format!(
                        "the server rejected protocol {MODERN} ({code}: {message}); it supports {}",
                        describe_list(&supported)
                    ))),
                };
            }
        }
        // RULES K2.2: a valid discover result decides.
        let why = match answer {
            Ok(result) => match discover_versions(&result) {
                Some(supported) => {
                    return self.discovered(&result, supported, fallback, opts.timeout, deadline, interrupted)
                }
                None => ClientError::Protocol(format!(
                    "the server answered server/discover with something that is not a discover result: {}",
                    wire::excerpt(result.to_string().as_bytes())
                )),
            },
            Err(e) if falls_back(&e) => e,
            Err(e) => return Err(e),
        };
        // RULES K2.4: any other answer means a legacy server.
        if !fallback {
            return Err(ClientError::Protocol(format!(
                "the server does not speak protocol {MODERN}: server/discover failed ({why})"
            )));
        }
        // A late discover answer still counts.
        let late = if matches!(why, ClientError::Timeout(_)) {
            self.quiet.insert(probe);
            self.pending.insert(probe, None);
            Some(probe)
        } else {
            None
        };
        self.initialize(LEGACY_PREFERRED, opts.timeout, deadline, late, interrupted)
    }

    /// A valid `DiscoverResult` arrived, listing `supported`.
    fn discovered(
        &mut self,
        result: &Value,
        supported: Vec<String>,
        fallback: bool,
        total: Duration,
        deadline: Instant,
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<(), ClientError> {
        if supported.iter().any(|v| v == MODERN) {
            self.era = Era::Modern;
            self.version = MODERN.to_string();
            self.supported = supported;
            self.capabilities = result.get("capabilities").cloned();
            self.instructions = result.get("instructions").and_then(Value::as_str).map(String::from);
            self.server_info = result.get("_meta").and_then(|m| m.get(META_SERVER_INFO)).cloned();
            self.link.set_version(MODERN);
            return Ok(());
        }
        match (fallback, best_legacy(&supported)) {
            (true, Some(v)) => self.initialize(v, total, deadline, None, interrupted),
            _ => Err(ClientError::Protocol(format!(
                "the server supports {}, none of which this client speaks ({MODERN}, {})",
                describe_list(&supported),
                LEGACY.join(", ")
            ))),
        }
    }

    /// The legacy handshake. `late_probe`: a discover request whose answer
    /// may still arrive and then decides for the modern era.
    fn initialize(
        &mut self,
        version: &str,
        total: Duration,
        deadline: Instant,
        late_probe: Option<u64>,
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<(), ClientError> {
        let v = json_string(version);
        let ci = self.client_info.clone();
        let members: [Member; 3] = [("protocolVersion", &v), ("capabilities", "{}"), ("clientInfo", &ci)];
        let id = self.start_with("initialize", None, &members, &[], deadline, interrupted)?;
        let outcome = loop {
            if let Some(p) = late_probe {
                if let Some(Ok(result)) = self.mailbox.remove(&p) {
                    if let Some(supported) = discover_versions(&result).filter(|s| s.iter().any(|v| v == MODERN)) {
                        self.abandon(id);
                        return self.discovered(&result, supported, false, total, deadline, interrupted);
                    }
                }
            }
            if Instant::now() >= deadline {
                self.cancel(id, "timed out");
                break Err(ClientError::Timeout(Duration::ZERO));
            }
            let slice = deadline.saturating_duration_since(Instant::now()).min(Duration::from_millis(25));
            match self.poll_wire(id, slice) {
                Poll::Done(r) => break r,
                Poll::Progress(_) => {}
                Poll::Pending => {
                    if interrupted() {
                        self.cancel(id, "interrupted");
                        break Err(ClientError::Interrupted);
                    }
                }
            }
        };
        if let Some(p) = late_probe {
            // The discover answer may have come with (or just before) the
            // answer to initialize: a modern server wins.
            if let Some(Ok(result)) = self.mailbox.remove(&p) {
                if let Some(supported) = discover_versions(&result).filter(|s| s.iter().any(|v| v == MODERN)) {
                    return self.discovered(&result, supported, false, total, deadline, interrupted);
                }
            }
            self.pending.remove(&p);
            self.quiet.remove(&p);
        }
        let result = match outcome {
            Ok(r) => r,
            Err(ClientError::Timeout(_)) => return Err(ClientError::Timeout(total)),
            Err(ClientError::Rpc { code, message, .. }) => {
                return Err(ClientError::Protocol(format!("the server rejected `initialize` ({code}: {message})")))
            }
            Err(e) => return Err(e),
        };
        let chosen = result.get("protocolVersion").and_then(Value::as_str).unwrap_or("");
        if !LEGACY.contains(&chosen) {
            return Err(ClientError::Protocol(format!(
                "the server chose protocol version {}, which this client does not speak",
                if chosen.is_empty() { "(none)".to_string() } else { format!("\"{chosen}\"") }
            )));
        }
        self.era = Era::Legacy;
        self.version = chosen.to_string();
        self.capabilities = result.get("capabilities").cloned();
        self.server_info = result.get("serverInfo").cloned();
        self.instructions = result.get("instructions").and_then(Value::as_str).map(String::from);
        self.link.set_version(chosen);
        let mut note = wire::notification_line("notifications/initialized", &[]);
        note.push(b'\n');
        let out = Outgoing { id: None, method: "notifications/initialized", name: None, version: None, headers: &[] };
        self.link.send(&note, &out, deadline, interrupted).map_err(|e| self.mark_dead(e))?;
        Ok(())
    }

    /// `_meta` members of a modern request.
    fn modern_meta(&self, progress: Option<&str>) -> Vec<(String, String)> {
        let mut m = vec![
            (META_VERSION.to_string(), json_string(MODERN)),
            (META_CAPS.to_string(), "{}".to_string()),
            ("io.modelcontextprotocol/clientInfo".to_string(), self.client_info.clone()),
        ];
        if let Some(p) = progress {
            m.push(("progressToken".to_string(), p.to_string()));
        }
        m
    }

    /// Send a request. `members` are the `params` members as JSON text;
    /// `name` is the tool name of a `tools/call` (HTTP mirrors it). With
    /// `progress`, the request asks for progress notifications. Returns the
    /// request id for [`Connection::poll`].
    pub fn start(
        &mut self,
        method: &str,
        name: Option<&str>,
        members: &[Member],
        progress: bool,
        timeout: Duration,
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<u64, ClientError> {
        self.check_open()?;
        let id = self.next_id;
        let token = id.to_string();
        let meta = match (self.era, progress) {
            (Era::Modern, p) => self.modern_meta(p.then_some(token.as_str())),
            (Era::Legacy, true) => vec![("progressToken".to_string(), token.clone())],
            (Era::Legacy, false) => Vec::new(),
        };
        let got = self.start_with(method, name, members, &meta, Instant::now() + timeout, interrupted)?;
        if progress {
            self.pending.insert(got, Some(got));
        }
        Ok(got)
    }

    fn start_with(
        &mut self,
        method: &str,
        name: Option<&str>,
        members: &[Member],
        meta: &[(String, String)],
        deadline: Instant,
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<u64, ClientError> {
        let id = self.next_id;
        self.next_id += 1;
        let meta: Vec<Member> = meta.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let modern = meta.iter().any(|(k, _)| *k == META_VERSION);
        let mut line = request_line(id, method, members, &meta);
        line.push(b'\n');
        let headers = match (modern, name.and_then(|n| self.params.get(n))) {
            (true, Some(p)) if method == "tools/call" => {
                let args = members.iter().find(|(k, _)| *k == "arguments").map(|(_, v)| *v).unwrap_or("{}");
                serde_json::from_str(args).map(|a| params::headers_for(p, &a)).unwrap_or_default()
            }
            _ => Vec::new(),
        };
        let out = Outgoing { id: Some(id), method, name, version: modern.then_some(MODERN), headers: &headers };
        match self.link.send(&line, &out, deadline, interrupted) {
            Ok(()) => {
                self.pending.insert(id, None);
                Ok(id)
            }
            Err(e @ (ClientError::Timeout(_) | ClientError::Interrupted)) => Err(e),
            Err(e) => Err(self.mark_dead(e)),
        }
    }

    fn mark_dead(&mut self, e: ClientError) -> ClientError {
        let e = match e {
            ClientError::Closed(m) => {
                let ctx = self.link.context();
                self.exit_status = ctx.status;
                self.drain_garbage();
                ClientError::Closed(match ctx.ended {
                    Some(how) if m == CLOSED => format!("the server {how}"),
                    Some(how) => format!("{m}; the server {how}"),
                    None => m,
                })
            }
            other => other,
        };
        if self.dead.is_none() {
            self.dead = Some(e.clone());
        }
        e
    }

    /// After the server went away: count what it wrote last that was not
    /// JSON-RPC (it is not read otherwise when a write found it gone).
    fn drain_garbage(&mut self) {
        for _ in 0..1000 {
            match self.link.recv(0, Duration::ZERO) {
                Some(Event::Garbage(s)) => {
                    self.garbage.count += 1;
                    self.garbage.last = Some(s);
                }
                Some(Event::Closed(_)) | None => return,
                Some(_) => {}
            }
        }
    }

    /// Wait up to `wait` for something about request `id` (the id
    /// [`Connection::start`] or [`Connection::start_call`] returned). A tool
    /// call refused with `-32020` HeaderMismatch over modern HTTP is sent
    /// again once after the tools were listed anew (RULES K4.3); that
    /// listing waits for the server, checking `interrupted`.
    pub fn poll(&mut self, id: u64, wait: Duration, interrupted: &mut dyn FnMut() -> bool) -> Poll {
        let wire = self.alias.get(&id).copied().unwrap_or(id);
        match self.poll_wire(wire, wait) {
            Poll::Done(Err(ClientError::Rpc { code: codes::HEADER_MISMATCH, .. })) if self.resend.contains_key(&id) => {
                let call = self.resend.remove(&id).expect("checked");
                self.alias.remove(&id);
                match self.send_again(&call, interrupted) {
                    Ok(new) => {
                        self.alias.insert(id, new);
                        Poll::Pending
                    }
                    Err(e) => Poll::Done(Err(e)),
                }
            }
            Poll::Done(r) => {
                self.resend.remove(&id);
                self.alias.remove(&id);
                Poll::Done(r)
            }
            other => other,
        }
    }

    /// List the tools again (their `x-mcp-header` arguments may have
    /// changed) and send a refused call once more; returns its new id.
    fn send_again(&mut self, call: &Resend, interrupted: &mut dyn FnMut() -> bool) -> Result<u64, ClientError> {
        self.list_tools(call.timeout, interrupted)?;
        self.rejected.clear();
        let n = json_string(&call.name);
        let members = [("name", n.as_str()), ("arguments", call.arguments.as_str())];
        self.start("tools/call", Some(&call.name), &members, call.progress, call.timeout, interrupted)
    }

    /// [`Connection::poll`] for one request id on the wire.
    fn poll_wire(&mut self, id: u64, wait: Duration) -> Poll {
        if let Some(r) = self.mailbox.remove(&id) {
            self.pending.remove(&id);
            self.link.finish(id);
            return Poll::Done(r);
        }
        if let Some(e) = &self.dead {
            self.pending.remove(&id);
            return Poll::Done(Err(e.clone()));
        }
        if !self.pending.contains_key(&id) {
            return Poll::Done(Err(ClientError::Protocol(format!("request {id} is not in progress"))));
        }
        let deadline = Instant::now() + wait;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let Some(ev) = self.link.recv(id, left) else {
                return Poll::Pending;
            };
            match ev {
                Event::Message(v) => {
                    if let Some(p) = self.dispatch(id, v) {
                        return p;
                    }
                }
                Event::Garbage(s) => {
                    self.garbage.count += 1;
                    self.garbage.last = Some(s);
                }
                Event::Oversize(limit) => {
                    self.cancel(id, "message too large");
                    return Poll::Done(Err(ClientError::Protocol(format!(
                        "the server sent a message longer than {limit} bytes, which was dropped (the limit is \
                         set by the `mcplite.client_max_message` option)"
                    ))));
                }
                Event::Failed(e) => {
                    self.pending.remove(&id);
                    self.link.finish(id);
                    return Poll::Done(Err(e));
                }
                Event::Accepted => {}
                Event::Closed(reason) => {
                    self.pending.remove(&id);
                    let what = reason.unwrap_or_else(|| CLOSED.into());
                    return Poll::Done(Err(self.mark_dead(ClientError::Closed(what))));
                }
            }
        }
    }

    /// Handle one message while waiting for request `id`.
    fn dispatch(&mut self, id: u64, v: Value) -> Option<Poll> {
        match classify(v) {
            Kind::Response { id: Some(rid), outcome } => {
                let r = self.outcome(outcome);
                if rid == id {
                    self.pending.remove(&id);
                    self.link.finish(id);
                    return Some(Poll::Done(r));
                }
                if self.pending.remove(&rid).is_some() {
                    self.mailbox.insert(rid, r);
                }
                None
            }
            Kind::Response { id: None, outcome: Err(e) } => {
                // An error the server could not attach to a request: it
                // could not read the one in flight.
                let (code, message, data) = error_parts(&e);
                self.pending.remove(&id);
                self.link.finish(id);
                Some(Poll::Done(Err(ClientError::Rpc { code, message, data })))
            }
            Kind::Response { id: None, outcome: Ok(_) } | Kind::Invalid => {
                self.garbage.count += 1;
                self.garbage.last = Some("(a JSON value that is not a JSON-RPC message)".into());
                None
            }
            Kind::Request { id: rid, method } => {
                let line = if method == "ping" {
                    wire::response_line(&rid, Some("{}"), None)
                } else {
                    wire::response_line(
                        &rid,
                        None,
                        Some((codes::METHOD_NOT_FOUND, codes::standard_message(codes::METHOD_NOT_FOUND))),
                    )
                };
                self.link.respond(&line);
                None
            }
            Kind::Notification { method, params } => {
                if method == "notifications/progress" {
                    let token = params.as_ref().and_then(|p| p.get("progressToken"));
                    let wanted = self.pending.get(&id).copied().flatten();
                    if let (Some(t), Some(w)) = (token, wanted) {
                        if token_matches(t, w) {
                            return Some(Poll::Progress(params.unwrap_or(Value::Null)));
                        }
                    }
                }
                None
            }
        }
    }

    /// A result or error object, checked.
    fn outcome(&self, outcome: Result<Value, Value>) -> Result<Value, ClientError> {
        match outcome {
            Err(e) => {
                let (code, message, data) = error_parts(&e);
                Err(ClientError::Rpc { code, message, data })
            }
            Ok(v @ Value::Object(_)) => match v.get("resultType") {
                None => Ok(v),
                Some(Value::String(t)) if t == "complete" => Ok(v),
                Some(Value::String(t)) if t == "input_required" => Err(ClientError::Protocol(
                    "the server asked for more input (a multi round-trip request), which this client does not \
                     support"
                        .into(),
                )),
                Some(t) => Err(ClientError::Protocol(format!("the server answered with an unknown resultType {t}"))),
            },
            Ok(other) => Err(ClientError::Protocol(format!(
                "the server's result is not a JSON object: {}",
                wire::excerpt(other.to_string().as_bytes())
            ))),
        }
    }

    /// Abandon request `id`: the server is told (stdio: a cancellation
    /// notification; HTTP: the stream is closed) and a late answer ignored.
    pub fn cancel(&mut self, id: u64, reason: &str) {
        self.resend.remove(&id);
        let id = self.alias.remove(&id).unwrap_or(id);
        if self.pending.remove(&id).is_some() && self.dead.is_none() && self.closed.is_none() {
            if self.quiet.remove(&id) {
                self.link.finish(id);
            } else {
                self.link.cancel(id, reason);
            }
        }
        self.mailbox.remove(&id);
    }

    /// Forget a request without telling the server.
    fn abandon(&mut self, id: u64) {
        self.pending.remove(&id);
        self.link.finish(id);
    }

    /// Block until request `id` finishes, `timeout` passes without progress
    /// or `interrupted()` says so; progress notifications are passed to
    /// `progress` and extend the wait (never beyond `max`).
    pub fn wait(
        &mut self,
        id: u64,
        timeout: Duration,
        max: Duration,
        progress: &mut dyn FnMut(&Value),
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<Value, ClientError> {
        let start = Instant::now();
        let hard = start + max;
        let mut deadline = (start + timeout).min(hard);
        loop {
            let now = Instant::now();
            if now >= deadline {
                self.cancel(id, "timed out");
                return Err(ClientError::Timeout(if deadline == hard { max } else { timeout }));
            }
            match self.poll(id, deadline.saturating_duration_since(now).min(Duration::from_millis(25)), interrupted) {
                Poll::Done(r) => return r,
                Poll::Progress(p) => {
                    progress(&p);
                    deadline = (Instant::now() + timeout).min(hard);
                }
                Poll::Pending => {
                    if interrupted() {
                        self.cancel(id, "interrupted");
                        return Err(ClientError::Interrupted);
                    }
                }
            }
        }
    }

    fn wait_until(
        &mut self,
        id: u64,
        deadline: Instant,
        interrupted: &mut dyn FnMut() -> bool,
        cancel_on_timeout: bool,
    ) -> Result<Value, ClientError> {
        loop {
            let now = Instant::now();
            if now >= deadline {
                if cancel_on_timeout {
                    self.cancel(id, "timed out");
                }
                return Err(ClientError::Timeout(Duration::ZERO));
            }
            match self.poll(id, deadline.saturating_duration_since(now).min(Duration::from_millis(25)), interrupted) {
                Poll::Done(r) => return r,
                Poll::Progress(_) => {}
                Poll::Pending => {
                    if interrupted() {
                        self.cancel(id, "interrupted");
                        return Err(ClientError::Interrupted);
                    }
                }
            }
        }
    }

    /// One request, waited for.
    pub fn request(
        &mut self,
        method: &str,
        members: &[Member],
        timeout: Duration,
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<Value, ClientError> {
        let id = self.start(method, None, members, false, timeout, interrupted)?;
        self.wait(id, timeout, timeout, &mut |_| {}, interrupted)
    }

    /// Every tool the server lists, following `nextCursor` (each page gets
    /// `timeout`).
    pub fn list_tools(
        &mut self,
        timeout: Duration,
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<Vec<Value>, ClientError> {
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        let mut seen = HashSet::new();
        loop {
            let c = cursor.as_ref().map(|c| json_string(c));
            let members: Vec<Member> = c.iter().map(|c| ("cursor", c.as_str())).collect();
            let result = self.request("tools/list", &members, timeout, interrupted)?;
            match result.get("tools") {
                Some(Value::Array(page)) => tools.extend(page.iter().cloned()),
                _ => return Err(ClientError::Protocol("the server's tools/list result has no `tools` array".into())),
            }
            match result.get("nextCursor") {
                Some(Value::String(next)) => {
                    if !seen.insert(next.clone()) || seen.len() > 10_000 {
                        return Err(ClientError::Protocol(format!(
                            "the server's tools/list pagination does not end (cursor \"{next}\" repeats)"
                        )));
                    }
                    cursor = Some(next.clone());
                }
                _ => return Ok(self.check_header_params(tools)),
            }
        }
    }

    /// Over modern HTTP, remember each tool's `x-mcp-header` arguments and
    /// leave out tools whose annotations are invalid (see
    /// [`Connection::take_rejected`]).
    fn check_header_params(&mut self, tools: Vec<Value>) -> Vec<Value> {
        self.rejected.clear();
        self.listed = true;
        self.schemas = tools
            .iter()
            .filter_map(|t| {
                let schema = t.get("inputSchema").filter(|s| shapes_arguments(s))?;
                Some((t.get("name")?.as_str()?.to_string(), schema.clone()))
            })
            .collect();
        if !(self.link.mirrors_params() && self.era == Era::Modern) {
            return tools;
        }
        self.params.clear();
        let mut kept = Vec::with_capacity(tools.len());
        for t in tools {
            let name = t.get("name").and_then(Value::as_str).unwrap_or("").to_string();
            match params::header_params(t.get("inputSchema").unwrap_or(&Value::Null)) {
                Ok(p) => {
                    if !p.is_empty() {
                        self.params.insert(name, p);
                    }
                    kept.push(t);
                }
                Err(why) => self.rejected.push((name, why)),
            }
        }
        kept
    }

    /// Tools the last [`Connection::list_tools`] left out, with the reason.
    pub fn take_rejected(&mut self) -> Vec<(String, String)> {
        std::mem::take(&mut self.rejected)
    }

    /// Send a `tools/call` (`arguments`: the arguments object as JSON
    /// text) and return its id for [`Connection::poll`]; with `progress`
    /// the call asks for progress notifications.
    pub fn start_call(
        &mut self,
        name: &str,
        arguments: &str,
        progress: bool,
        timeout: Duration,
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<u64, ClientError> {
        let n = json_string(name);
        let id = self.start(
            "tools/call",
            Some(name),
            &[("name", &n), ("arguments", arguments)],
            progress,
            timeout,
            interrupted,
        )?;
        if self.era == Era::Modern && self.link.mirrors_params() {
            let call = Resend { name: name.to_string(), arguments: arguments.to_string(), progress, timeout };
            self.resend.insert(id, call);
        }
        Ok(id)
    }

    /// Call a tool and wait for its result.
    pub fn call_tool(
        &mut self,
        name: &str,
        arguments: &str,
        timeout: Duration,
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<Value, ClientError> {
        let id = self.start_call(name, arguments, false, timeout, interrupted)?;
        self.wait(id, timeout, timeout, &mut |_| {}, interrupted)
    }

    /// The input schema of tool `name` from the last listing, when it shapes
    /// the encoding of arguments (RULES K5.2, [`shapes_arguments`]), listing
    /// the tools first when they were never listed on this connection.
    /// `None` when it does not, when the server lists no such tool, or
    /// cannot list: the encoder's rules alone then apply.
    pub fn input_schema(
        &mut self,
        name: &str,
        timeout: Duration,
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<Option<Value>, ClientError> {
        if !self.listed {
            match self.list_tools(timeout, interrupted) {
                Ok(_) => self.rejected.clear(),
                Err(e @ ClientError::Interrupted) => return Err(e),
                Err(_) => self.listed = true,
            }
        }
        Ok(self.schemas.get(name).cloned())
    }

    /// Shut the connection down (idempotent); returns how the server ended.
    pub fn close(&mut self) -> String {
        if let Some(how) = &self.closed {
            return how.clone();
        }
        let how = self.link.close();
        self.closed = Some(how.clone());
        self.pending.clear();
        self.mailbox.clear();
        how
    }

    /// What is known about why the link failed (exit status, stderr).
    pub fn failure_context(&mut self) -> FailureContext {
        self.link.context()
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.close();
    }
}

/// The versions of a valid `DiscoverResult` (RULES K2.2): an object whose
/// `supportedVersions` is a non-empty array of strings. `None` for anything
/// else (an empty result, a malformed one).
fn discover_versions(result: &Value) -> Option<Vec<String>> {
    let list = result.get("supportedVersions")?.as_array()?;
    let versions: Vec<String> = list.iter().map(|v| v.as_str().map(String::from)).collect::<Option<_>>()?;
    (!versions.is_empty()).then_some(versions)
}

/// Does a failed `server/discover` mean a legacy server (RULES K2.4)? Any
/// answer does (a JSON-RPC error, an HTTP error status, a body that is not
/// JSON-RPC, no answer in time); only not reaching the server at all, or
/// the user's interrupt, ends the attempt.
fn falls_back(e: &ClientError) -> bool {
    match e {
        ClientError::Rpc { .. } | ClientError::Timeout(_) | ClientError::Http { .. } | ClientError::Protocol(_) => true,
        ClientError::Spawn(_)
        | ClientError::Connect(_)
        | ClientError::Tls { .. }
        | ClientError::Closed(_)
        | ClientError::Interrupted => false,
    }
}

/// Can an input schema change how R's arguments are encoded (RULES K5.2)?
/// Only when one of its properties (or `additionalProperties`) allows an
/// array, an object or null, directly or in an `anyOf`/`oneOf` branch. A
/// schema of scalars only (the common case) is not handed to R at all, so
/// its calls cost no shaping.
pub fn shapes_arguments(schema: &Value) -> bool {
    fn allows_container_or_null(s: &Value) -> bool {
        let Value::Object(m) = s else { return false };
        let special = |t: &Value| matches!(t.as_str(), Some("array" | "object" | "null"));
        let typed = match m.get("type") {
            Some(Value::Array(ts)) => ts.iter().any(special),
            Some(t) => special(t),
            None => false,
        };
        typed
            || m.get("nullable") == Some(&Value::Bool(true))
            || m.get("enum").and_then(Value::as_array).is_some_and(|e| e.contains(&Value::Null))
            || ["anyOf", "oneOf"]
                .iter()
                .any(|k| m.get(*k).and_then(Value::as_array).is_some_and(|bs| bs.iter().any(allows_container_or_null)))
    }
    let props = schema.get("properties").and_then(Value::as_object);
    props.is_some_and(|p| p.values().any(allows_container_or_null))
        || schema.get("additionalProperties").is_some_and(allows_container_or_null)
}

fn supported_list(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::Array(a)) => a.iter().filter_map(|x| x.as_str().map(String::from)).collect(),
        _ => Vec::new(),
    }
}

fn best_legacy(supported: &[String]) -> Option<&'static str> {
    LEGACY.iter().copied().find(|v| supported.iter().any(|s| s == v))
}

fn describe_list(v: &[String]) -> String {
    if v.is_empty() {
        "no version it named".into()
    } else {
        v.join(", ")
    }
}

/// Does a progress token from the server name request `want`?
fn token_matches(t: &Value, want: u64) -> bool {
    match t {
        Value::Number(n) => n.as_u64() == Some(want),
        Value::String(s) => s == &want.to_string(),
        _ => false,
    }
}

#[cfg(test)]
mod tests;
