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
//!
//! One concept per file: this file holds the [`Connection`] and its request
//! loop (start, poll, wait, cancel, close); `error.rs` why an operation
//! failed; `link.rs` the [`Link`] trait and its [`Event`]s, which `stdio_child.rs`
//! and `http_link.rs` implement; `era.rs` the negotiation above; `tools.rs`
//! listing and calling tools; `wire.rs` the JSON-RPC lines, `params.rs` the
//! `x-mcp-header` arguments, `report.rs` the messages of failures and
//! `tail.rs` the kept tail of a server's stderr.

mod asks;
mod catalog;
mod era;
mod error;
pub mod http_link;
mod link;
pub mod net;
pub mod oauth;
pub mod params;
pub mod report;
pub mod stdio_child;
mod tail;
mod tasks;
mod tools;
pub mod wire;

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use serde_json::Value;

pub(crate) use crate::signals::spawn_masked;
use asks::is_input_required;
pub use era::Era;
pub(crate) use error::human_duration;
pub use error::{ClientError, ConnectError};
pub use http_link::{HttpLink, HttpSpec, OpenUrlFn};
pub use link::{Event, FailureContext, Link, Outgoing};
pub use stdio_child::{StdioLink, StdioSpec};
pub use tasks::{task_of, TaskAsk};
pub use tools::shapes_arguments;
use wire::{classify, error_parts, json_string, request_line, Kind, Member};

use crate::codes;
pub use crate::logging::LogLevel;
use crate::version::{self, META_VERSION};

/// The modern revision the client speaks.
pub const MODERN: &str = version::CLIENT_MODERN.as_str();

/// Legacy revisions the client accepts from `initialize`, newest first.
pub const LEGACY: [&str; 4] = version::CLIENT_ACCEPTS_LEGACY;

/// The legacy revision the client asks for first.
pub const LEGACY_PREFERRED: &str = version::LEGACY_DEFAULT.as_str();

/// Why a link failed when the server just went away.
const CLOSED: &str = "the server closed the connection";

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
    /// The client's capabilities object as JSON text (`{}`: none), sent in
    /// `initialize` and in every modern request's `_meta` (RULES K12.1).
    /// A server's questions (`elicitation/create`, `sampling/createMessage`)
    /// reach the caller only when it is declared here.
    pub capabilities: String,
    /// The least severe level of the server's log messages the caller
    /// wants during its calls (RULES K13), `None` for none.
    pub log_level: Option<LogLevel>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            protocol: None,
            timeout: Duration::from_secs(60),
            probe_timeout: Duration::from_secs(5),
            client_name: "mcplite".into(),
            client_version: env!("CARGO_PKG_VERSION").into(),
            capabilities: "{}".into(),
            log_level: None,
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
    /// The server asks the client a question during the request (legacy
    /// era, RULES K12.2): answer it with [`Connection::answer`], then poll
    /// again.
    Ask(ServerAsk),
    /// The server answered `input_required` (2026-07-28, RULES K12.3): the
    /// questions of `inputRequests` by key (each an object with `method` and
    /// `params`); answer them all with [`Connection::retry`], then poll again.
    Input(serde_json::Map<String, Value>),
    /// A log message of the server (`notifications/message` params) that
    /// came while the request was awaited (RULES K13.2).
    Log(Value),
    /// Nothing yet.
    Pending,
}

/// A question a server sent while a request of the client was in flight.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerAsk {
    /// The JSON-RPC id of the server's request, to answer it.
    pub id: Value,
    pub method: String,
    pub params: Value,
}

/// How many times one tool call may come back `input_required` (RULES
/// K12.3): a server that keeps asking is stopped there.
pub const MAX_INPUT_ROUNDS: u32 = 16;

/// How many questions one tool call may bring to the caller (RULES K12.7):
/// legacy requests in all, or `inputRequests` in one round. More are
/// refused without asking the user.
pub const MAX_QUESTIONS: u32 = 64;

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
    /// Each listed tool's 2025-11-25 `execution.taskSupport` (RULES K14.1).
    task_support: HashMap<String, String>,
    /// Tool calls that allowed a task's handle as their answer (K14.2).
    expect_task: HashSet<u64>,
    /// Tool calls that may be sent again after a HeaderMismatch, by id.
    resend: HashMap<u64, Resend>,
    /// Calls sent again: the id the caller knows -> the id on the wire.
    alias: HashMap<u64, u64>,
    /// The client's capabilities (JSON text) and which questions it answers.
    client_caps: String,
    answers: Answers,
    /// Tool calls that may be retried with answers (2026-07-28, RULES
    /// K12.3), by the id the caller knows.
    retries: HashMap<u64, Retry>,
    /// The level of log messages the caller wants (RULES K13).
    log_level: Option<LogLevel>,
    /// The time spent at sign-in pages when the handshake began.
    since: Duration,
}

/// Which server questions the client answers, from its capabilities.
#[derive(Debug, Clone, Copy, Default)]
struct Answers {
    elicitation: bool,
    sampling: bool,
}

impl Answers {
    fn of(caps: &str) -> Answers {
        let v: Value = serde_json::from_str(caps).unwrap_or(Value::Null);
        Answers { elicitation: v.get("elicitation").is_some(), sampling: v.get("sampling").is_some() }
    }
    fn any(self) -> bool {
        self.elicitation || self.sampling
    }
    fn answers(self, method: &str) -> bool {
        match method {
            "elicitation/create" => self.elicitation,
            "sampling/createMessage" => self.sampling,
            _ => false,
        }
    }
}

/// A request that may come back `input_required` (`tools/call`,
/// `prompts/get`, `resources/read`; RULES K12.3): what to send again, the
/// state the server gave last, and the rounds so far.
struct Retry {
    request: Again,
    state: Option<String>,
    rounds: u32,
    /// Legacy questions handed to the caller so far.
    questions: u32,
}

/// A request as sent, kept to send it again with the answers to the
/// server's questions (RULES K12.3): its method, the name HTTP mirrors
/// (the tool, the prompt, the URI) and its `params` members (JSON text).
#[derive(Clone)]
struct Again {
    method: &'static str,
    name: String,
    members: Vec<(&'static str, String)>,
    progress: bool,
    timeout: Duration,
    /// A 2026-07-28 call that declared the tasks extension (RULES K14.1):
    /// sent again with it.
    tasks: bool,
}

/// A tool call as sent, kept to send it again (RULES K4.3).
#[derive(Clone)]
struct Resend {
    name: String,
    arguments: String,
    progress: bool,
    timeout: Duration,
    /// Sent with the tasks extension (RULES K14.1).
    tasks: bool,
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
            task_support: HashMap::new(),
            expect_task: HashSet::new(),
            resend: HashMap::new(),
            alias: HashMap::new(),
            client_caps: opts.capabilities.clone(),
            answers: Answers::of(&opts.capabilities),
            retries: HashMap::new(),
            log_level: opts.log_level,
            since: Duration::ZERO,
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
            Poll::Done(Ok(v)) if is_input_required(&v) => self.input_required(id, v),
            Poll::Done(r) => {
                self.resend.remove(&id);
                self.retries.remove(&id);
                self.alias.remove(&id);
                // RULES K14.2: a task's handle only where the call allowed one.
                let allowed = self.expect_task.remove(&id);
                match r {
                    Ok(v) if !allowed && v.get("resultType").and_then(Value::as_str) == Some("task") => {
                        Poll::Done(Err(ClientError::Protocol(
                            "the server answered with a task's handle, which this request did not allow".into(),
                        )))
                    }
                    r => Poll::Done(r),
                }
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
        self.start_maybe_tasks("tools/call", &call.name, &members, call.progress, call.timeout, call.tasks, interrupted)
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
            Kind::Request { id: rid, method, params } => {
                if self.answers.answers(&method) {
                    let caller = self.caller_id(id);
                    if let Some(retry) = self.retries.get_mut(&caller) {
                        retry.questions += 1;
                        if retry.questions <= MAX_QUESTIONS {
                            let params = params.unwrap_or(Value::Null);
                            return Some(Poll::Ask(ServerAsk { id: rid, method, params }));
                        }
                        self.answer(&rid, Err((codes::INVALID_REQUEST, "too many questions for one tool call")));
                        return None;
                    }
                    self.refuse_ask(&rid);
                    return None;
                }
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
                if method == "notifications/message" && self.log_level.is_some() {
                    return Some(Poll::Log(params.unwrap_or(Value::Null)));
                }
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
                Some(Value::String(t)) if t == "complete" || t == "input_required" || t == "task" => Ok(v),
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
        self.expect_task.remove(&id);
        self.resend.remove(&id);
        self.retries.remove(&id);
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
        // Time at sign-in pages does not count (RULES K10.5).
        let signing = self.link.sign_in_time();
        loop {
            let shift = self.link.sign_in_time().saturating_sub(signing);
            let (due, end) = (deadline + shift, hard + shift);
            let now = Instant::now();
            if now >= due {
                if let Some(r) = self.settled(id, progress, interrupted) {
                    return r;
                }
                self.cancel(id, "timed out");
                return Err(ClientError::Timeout(if due == end { max } else { timeout }));
            }
            match self.poll(id, due.saturating_duration_since(now).min(Duration::from_millis(25)), interrupted) {
                Poll::Done(r) => return r,
                Poll::Progress(p) => {
                    progress(&p);
                    let next = (Instant::now() + timeout).min(end);
                    deadline = next.checked_sub(shift).unwrap_or(next);
                }
                Poll::Ask(ask) => self.refuse_ask(&ask.id),
                Poll::Input(_) => return Err(self.unanswerable(id)),
                Poll::Log(_) => {}
                Poll::Pending => {
                    if interrupted() {
                        self.cancel(id, "interrupted");
                        return Err(ClientError::Interrupted);
                    }
                }
            }
        }
    }

    /// What has already arrived for request `id`, without waiting: its
    /// outcome when it is there (progress before it goes to `progress`).
    pub fn settled(
        &mut self,
        id: u64,
        progress: &mut dyn FnMut(&Value),
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Option<Result<Value, ClientError>> {
        loop {
            match self.poll(id, Duration::ZERO, interrupted) {
                Poll::Done(r) => return Some(r),
                Poll::Progress(p) => progress(&p),
                Poll::Ask(ask) => self.refuse_ask(&ask.id),
                Poll::Input(_) => return Some(Err(self.unanswerable(id))),
                Poll::Log(_) => {}
                Poll::Pending => return None,
            }
        }
    }

    /// Wait for request `id` until `deadline`; past it, a timeout that
    /// names `limit`, the time it was given.
    fn wait_until(
        &mut self,
        id: u64,
        deadline: Instant,
        limit: Duration,
        interrupted: &mut dyn FnMut() -> bool,
        cancel_on_timeout: bool,
    ) -> Result<Value, ClientError> {
        loop {
            let deadline = self.due(deadline);
            let now = Instant::now();
            if now >= deadline {
                // An answer that came while R's thread was busy (a user
                // agent showing a sign-in page) still counts.
                if let Some(r) = self.settled(id, &mut |_| {}, interrupted) {
                    return r;
                }
                if cancel_on_timeout {
                    self.cancel(id, "timed out");
                }
                return Err(ClientError::Timeout(limit));
            }
            match self.poll(id, deadline.saturating_duration_since(now).min(Duration::from_millis(25)), interrupted) {
                Poll::Done(r) => return r,
                Poll::Progress(_) | Poll::Log(_) => {}
                Poll::Ask(ask) => self.refuse_ask(&ask.id),
                Poll::Input(_) => return Err(self.unanswerable(id)),
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

    /// Drop the connection on a thread of its own (started with signals
    /// blocked), so that the caller does not wait while [`Connection::close`]
    /// gives the server time to exit (for a child process up to twice its
    /// grace period and 5 s more). For a caller that must not block, such as
    /// R's garbage collector. When no thread can be started the connection is
    /// closed on the calling thread. Only for links that may be dropped on
    /// another thread (stdio, HTTP; not the bridge's in-memory link).
    pub fn close_in_background(self) {
        // A failed spawn drops the closure, and with it the connection, here.
        let _ = spawn_masked("mcplite-client-close", move || drop(self));
    }

    /// A deadline of the handshake moved on by the time spent at sign-in
    /// pages since it began (RULES K10.5).
    fn due(&self, deadline: Instant) -> Instant {
        deadline + self.link.sign_in_time().saturating_sub(self.since)
    }

    /// The time spent at sign-in pages so far (RULES K10.5): waits that
    /// bound a request move their clocks on by it.
    pub fn sign_in_time(&self) -> Duration {
        self.link.sign_in_time()
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
