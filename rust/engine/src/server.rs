//! The dispatcher: one message in, at most one response line out (RULES
//! sections 3, 4 and 5), for any transport.
//!
//! # API
//!
//! * [`Server`] holds what every client shares: the tool registry, the
//!   `tools/list` arrays prepared per version, the server identity and the
//!   span recorder. It is built once ([`Server::new`]) and then only read:
//!   it is `Send + Sync`, so a transport may share it between threads.
//! * [`LegacyState`] is one legacy session (RULES L1): whether `initialize`
//!   was answered and which version it settled on. The caller owns it: the
//!   stdio transport and an in-process session hold one each; an HTTP
//!   transport holds one per `MCP-Session-Id`. Modern messages never read
//!   or write it, so a caller that knows a message is modern may pass a
//!   scratch default.
//! * [`Server::handle`] takes one message's bytes (one stdio line, one HTTP
//!   body) and returns a [`Reply`]: the response line, if any, a stderr
//!   diagnostic, if any, and the outcome. [`Server::handle_parsed`] does the
//!   same for a message the caller already parsed with
//!   [`crate::message::parse_line`] (to look at its method, id or era
//!   first).
//! * The [`Reply`] ends the message's span, when tracing is on, exactly
//!   once: when [`Reply::write_line`] has written it, or else when the reply
//!   is dropped. No caller can forget it.
//!
//! Tool calls run on the caller's thread through the [`Host`] it passes; no
//! other request touches the host.
//!
//! Everything that differs between protocol versions is decided by
//! [`crate::version`] and written by [`crate::projection`]; this module
//! only routes.

use std::collections::{BTreeSet, HashMap};
use std::io::{self, Write};
use std::num::NonZeroUsize;
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Instant;

use serde_json::{Map, Value};

use crate::ask_state::{Asks, Rounds};
use crate::catalog::Catalog;
use crate::codes::{
    add_error_data, error_line, standard_message, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY, PARSE_ERROR, UNSUPPORTED_VERSION,
};
use crate::host::{CallContext, CallOutcome, Host, ToolFailure, ToolSpec};
use crate::input_schema::{Checked, InputSchemas};
use crate::logging::{self, LogLevel};
use crate::message::{contains_nul, parse_line, Incoming, Message};
use crate::output_schema::OutputSchemas;
use crate::pagination;
use crate::progress::{progress_token, CallStart, CallWatch, NoWatch};
use crate::projection::{self, Listings};
use crate::promotion::Promotion;
use crate::prompts::PromptSpec;
use crate::resources::Resources;
use crate::subscriptions::{self, Filter, Hub, ResourceChange, SessionFilter};
use crate::tasks::{self, Task, Tasks, Waiting};
use crate::telemetry::{ErrorText, SessionEnd, SpanEnd, SpanRecorder, SpanStart, Started, Via};
use crate::version::{self, ClaimError, Era, Version, LEGACY_DEFAULT};
use crate::{asks, request_state};

/// Text of the contained error for an interrupted call.
pub const INTERRUPTED_TEXT: &str = "The tool call was interrupted.";

/// Text of the contained error for a call interrupted because the server
/// was stopping and its drain time ran out (RULES H4.2).
pub const STOPPING_TEXT: &str = "The tool call was interrupted because the server was stopping (SIGTERM or Ctrl+C) \
                                 and the call had not finished within the server's drain time. Nothing is wrong \
                                 with the call: send it again once the server is back (behind a load balancer, \
                                 another replica takes it).";

/// Stderr diagnostic for an ignored client-sent response (RULES W2.2).
pub const CLIENT_RESPONSE_DIAGNOSTIC: &str =
    "ignored a JSON-RPC response sent by the client (this server sends no requests)";

/// Server identity and instructions.
#[derive(Debug, Clone)]
pub struct ServerInfo {
    pub name: String,
    pub version: String,
    pub instructions: Option<String>,
}

/// One legacy session (RULES L1.1), owned by the caller of
/// [`Server::handle`]. Modern requests never touch it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LegacyState {
    /// `initialize` was answered with a result.
    pub initialized: bool,
    /// The version the last `initialize` settled on.
    pub version: Option<Version>,
    /// `notifications/initialized` arrived after `initialize`.
    pub client_initialized: bool,
    /// When the `initialize` that opened the session was received (only
    /// while telemetry is on): the start of `mcp.server.session.duration`.
    pub opened: Option<Instant>,
    /// The level the client set with `logging/setLevel` (RULES G1.1): the
    /// session's calls get log messages at this level or above.
    pub log_level: Option<LogLevel>,
    /// What the client declared it can be asked (RULES A1.1).
    pub asks: Asks,
    /// The URIs the session subscribed to (RULES U3.1), shared with the
    /// session's listener when its transport gives it one.
    pub subscriptions: SessionFilter,
}

impl LegacyState {
    /// The negotiated version, once `initialize` was answered.
    pub fn negotiated(&self) -> Option<Version> {
        if self.initialized {
            self.version
        } else {
            None
        }
    }
}

/// The dispatcher's shared state: registry, prepared listings, identity
/// and span recorder (see the module documentation).
pub struct Server {
    info: ServerInfo,
    /// `{"name":…,"version":…}`, encoded once.
    server_info_json: Arc<str>,
    tools: Vec<ToolSpec>,
    by_name: HashMap<String, usize>,
    listings: Listings,
    /// The tools' input schemas, compiled on first use (RULES L6.7).
    inputs: InputSchemas,
    /// The tools' output schemas, compiled (RULES J4.6).
    outputs: OutputSchemas,
    /// `None` when tracing is off: then no span work happens at all.
    recorder: Option<Box<dyn SpanRecorder>>,
    /// The prompts and resources (RULES section 16, section 17); replaced
    /// as a whole when a tool changes the resources (U3.2).
    catalog: RwLock<Arc<Catalog>>,
    /// Who hears of changed resources (RULES U3).
    hub: Arc<Hub>,
    /// The tools may change the resources (RULES U3.2).
    changes: bool,
    /// The most items a page of a listing holds (RULES L5.2); `None`: one page.
    page_size: Option<NonZeroUsize>,
    /// Tools that run as tasks, and the tasks (RULES section 19); `None`:
    /// no tasks.
    tasks: Option<Arc<Tasks>>,
}

// A transport may share one server between threads.
const _: fn() = || {
    fn shared<T: Send + Sync>() {}
    shared::<Server>();
};

/// The answer to one message: the response line (without LF), if any, the
/// stderr diagnostic owed, if any, and the outcome.
///
/// When tracing is on, the reply holds the message's own open span (its
/// [`Started`]; replies answered at the same time on several threads each
/// hold their own) and ends it exactly once: [`Reply::write_line`] ends it after the line is written
/// (RULES T1: "ends after its response is written"), and dropping the reply
/// ends it otherwise. A transport that sends the line some other way (an
/// HTTP body) keeps the reply until the line is sent, then drops it.
#[must_use = "a reply holds the response line; dropping it ends the span"]
pub struct Reply<'s> {
    line: Option<Vec<u8>>,
    /// A `subscriptions/listen` request was accepted: `line` is its
    /// acknowledgment and its stream stays open (RULES U3.3).
    listen: Option<Listening>,
    /// A 2025-11-25 `tasks/result` of a task still running (RULES V3.2):
    /// `line` is `None`; the transport waits, then writes the answer.
    wait: Option<Waiting>,
    diagnostic: Option<&'static str>,
    outcome: SpanEnd,
    /// The recorder and the open span this reply ends; `None` without a span.
    span: Option<(&'s dyn SpanRecorder, Started)>,
}

impl<'s> Reply<'s> {
    fn silent() -> Reply<'s> {
        Reply { line: None, listen: None, wait: None, diagnostic: None, outcome: SpanEnd::default(), span: None }
    }

    fn unspanned(line: Vec<u8>, code: i64) -> Reply<'s> {
        Reply {
            line: Some(line),
            listen: None,
            wait: None,
            diagnostic: None,
            outcome: SpanEnd { error_code: Some(code), ..Default::default() },
            span: None,
        }
    }

    /// The `subscriptions/listen` request this reply acknowledges (RULES
    /// U3.3): the transport keeps its stream open, sends the line first,
    /// then what the listener hears ([`Server::hub`]).
    pub fn take_listen(&mut self) -> Option<Listening> {
        self.listen.take()
    }

    /// The task whose end this reply waits for (RULES V3.2): the
    /// transport waits for it ([`Waiting::ready`], [`Waiting::wait`]), then
    /// sends [`Waiting::line`].
    pub fn take_wait(&mut self) -> Option<Waiting> {
        self.wait.take()
    }

    /// The response line (without LF), if the message is answered.
    pub fn line(&self) -> Option<&[u8]> {
        self.line.as_deref()
    }

    /// Move the response line out; the span stays open until the reply is
    /// dropped (send the line first, then drop the reply).
    pub fn take_line(&mut self) -> Option<Vec<u8>> {
        self.line.take()
    }

    /// The response line; the span ends now. For in-process callers, for
    /// whom handing the line back is the write.
    pub fn into_line(mut self) -> Option<Vec<u8>> {
        self.line.take()
    }

    /// The stderr diagnostic owed for this message (RULES W2.2), if any. The
    /// stdio transport prints it; in-process callers may ignore it.
    pub fn diagnostic(&self) -> Option<&'static str> {
        self.diagnostic
    }

    /// The JSON-RPC error code of the response, when it is an error (for a
    /// transport's status code).
    pub fn error_code(&self) -> Option<i64> {
        self.outcome.error_code
    }

    /// How the message ended, in the access log's words (RULES H7.1): a
    /// `tools/call`'s [`CallOutcome`]; for other messages `error` (a
    /// JSON-RPC error) or `ok`.
    pub fn outcome(&self) -> &'static str {
        match (self.outcome.call, self.outcome.error_code) {
            (Some(c), _) => c.as_str(),
            (None, Some(_)) => "error",
            (None, None) => "ok",
        }
    }

    /// The protocol version the answer was written for, when known (the
    /// legacy session's, or the modern claim's).
    pub fn protocol_version(&self) -> Option<Version> {
        self.outcome.protocol_version
    }

    /// Was the message a notification (never answered)?
    pub fn is_notification(&self) -> bool {
        self.outcome.notification
    }

    /// Write the response as one line (line + LF), flush, then end the span
    /// (also when writing fails). Nothing is written for an unanswered
    /// message.
    pub fn write_line(mut self, out: &mut dyn Write) -> io::Result<()> {
        if let Some(mut line) = self.line.take() {
            line.push(b'\n');
            out.write_all(&line)?;
            out.flush()?;
        }
        Ok(())
    }
}

impl Drop for Reply<'_> {
    fn drop(&mut self) {
        if let Some((r, started)) = self.span.take() {
            r.end(started, &self.outcome);
        }
    }
}

impl std::fmt::Debug for Reply<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reply")
            .field("line", &self.line.as_deref().map(String::from_utf8_lossy))
            .field("diagnostic", &self.diagnostic)
            .field("outcome", &self.outcome)
            .field("span_open", &self.span.is_some())
            .finish()
    }
}

/// Outcome of dispatching one message, for the reply and the span.
struct Outcome {
    line: Option<Vec<u8>>,
    end: SpanEnd,
    listen: Option<Listening>,
    wait: Option<Waiting>,
}

/// An accepted `subscriptions/listen` request (RULES U3.3): its id (JSON
/// text, the subscription's id) and what it listens to.
#[derive(Debug, Clone, PartialEq)]
pub struct Listening {
    pub id: String,
    pub filter: Filter,
}

/// A JSON-RPC error to send back.
#[derive(Debug)]
struct RpcError {
    code: i64,
    detail: Option<&'static str>,
    /// JSON text of `error.data`.
    data: Option<Vec<u8>>,
    /// `detail` is the whole message, without the code's standard message
    /// in front (a sentence that says what happened in plain words).
    whole: bool,
}

impl RpcError {
    fn new(code: i64) -> RpcError {
        RpcError { code, detail: None, data: None, whole: false }
    }
    fn detail(code: i64, d: &'static str) -> RpcError {
        RpcError { code, detail: Some(d), data: None, whole: false }
    }
    fn message(code: i64, m: &'static str) -> RpcError {
        RpcError { code, detail: Some(m), data: None, whole: true }
    }
    /// The message as sent: the standard message and the detail, or the
    /// detail alone.
    fn text(&self) -> ErrorText {
        match (self.whole, self.detail) {
            (true, Some(m)) => (m, None),
            _ => (standard_message(self.code), self.detail),
        }
    }
}

fn result_open(id: &str, cap: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(cap + 40);
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    out.extend_from_slice(id.as_bytes());
    out.extend_from_slice(b",\"result\":");
    out
}

impl Server {
    /// Build a server from the host's registry.
    pub fn new(info: ServerInfo, host: &mut dyn Host) -> Server {
        let tools = host.tools();
        let (prompts, resources) = (host.prompts(), host.resources());
        Server::with_tools(info, tools)
            .with_page_size(host.page_size())
            .with_catalog(prompts, resources)
            .with_resource_changes(host.resource_changes())
    }

    /// The server whose listings have pages of at most `size` items
    /// (RULES L5.2); `None` (the default): one page.
    pub fn with_page_size(mut self, size: Option<NonZeroUsize>) -> Server {
        self.page_size = size;
        self.listings = Listings::with_support(&self.tools, size, self.supports());
        let catalog = self.catalog.get_mut().unwrap_or_else(PoisonError::into_inner);
        *catalog = Arc::new(catalog.with_resources(catalog.resources().clone(), size));
        self
    }

    /// The server whose tools run as tasks as `tasks` says (RULES V1.1).
    /// Only transports that queue calls for workers make tasks
    /// ([`Server::admit_task`]).
    pub fn with_tasks(mut self, tasks: Tasks) -> Server {
        // RULES V3.7: a task's status changes go to the listeners that
        // follow it.
        let hub = Arc::clone(&self.hub);
        tasks.on_change(Arc::new(move |t: &Task| {
            if t.is_modern() {
                hub.publish_task(&t.id, &t.notification_members());
            }
        }));
        self.tasks = Some(Arc::new(tasks));
        self.listings = Listings::with_support(&self.tools, self.page_size, self.supports());
        self
    }

    /// The tasks, when the server has them.
    pub fn tasks(&self) -> Option<&Arc<Tasks>> {
        self.tasks.as_ref()
    }

    fn supports(&self) -> &[tasks::Support] {
        self.tasks.as_ref().map_or(&[], |t| t.supports())
    }

    /// Does the `tools/call` request `msg` (of legacy `session`, from the
    /// token named `owner`) run as a task (RULES V2.1)? Then the task is
    /// created and kept, and the transport answers `Ok` (the
    /// `CreateTaskResult` line) at once and queues the call with the task
    /// in its [`Carrier`]; `Err` is an error line to answer instead (the
    /// store is full). `None`: the call runs as any other (its own errors,
    /// a task the tool does not allow included, come from the dispatcher).
    pub fn admit_task(
        &self,
        msg: &Message,
        session: &LegacyState,
        owner: Option<&str>,
    ) -> Option<Result<Admitted, Vec<u8>>> {
        let tasks = self.tasks.as_ref()?;
        let id = msg.id.as_deref()?;
        if msg.method != "tools/call" || msg.over_limit.is_some() {
            return None;
        }
        let p = msg.params.as_ref()?.as_object()?;
        let index = *self.by_name.get(p.get("name")?.as_str()?)?;
        let v = match version::era_of(msg.params.as_ref()) {
            Era::Modern { meta } => version::check_modern_claim(meta).ok()?,
            Era::Legacy => session.negotiated()?,
        };
        let ttl = tasks.plan(index, p, v).ok()??;
        // RULES V2.3: a 2026-07-28 task's tool may ask what the request's
        // capabilities allow.
        let asks = p
            .get("_meta")
            .and_then(|m| m.get(version::META_CAPS))
            .map_or(Asks::NONE, |c| Asks::from_capabilities(Some(c)));
        if let Some(after) = tasks.promotes_after(index, v) {
            let meta = Arc::clone(&self.server_info_json);
            return Some(Ok(Admitted::Later(Arc::new(Promotion::new(
                Arc::clone(tasks),
                after,
                (owner, asks),
                id,
                meta,
            )))));
        }
        Some(match tasks.create(owner, v.is_modern(), ttl, asks) {
            Ok(task) => {
                let line = tasks.created_line(id, &task, &self.server_info_json);
                Ok(Admitted::Task(task, line))
            }
            Err((code, detail)) => Err(error_line(Some(id), code, standard_message(code), Some(&detail))),
        })
    }

    /// The server whose tools may change its resources (RULES U3.2), or not
    /// (the default).
    pub fn with_resource_changes(mut self, changes: bool) -> Server {
        self.changes = changes;
        self
    }

    /// The server with these prompts and resources (RULES section 16,
    /// section 17).
    pub fn with_catalog(mut self, prompts: Vec<PromptSpec>, resources: Resources) -> Server {
        self.catalog = RwLock::new(Arc::new(Catalog::new(prompts, resources, self.page_size)));
        self
    }

    pub fn with_tools(info: ServerInfo, tools: Vec<ToolSpec>) -> Server {
        let server_info_json: Arc<str> = Arc::from(projection::server_info_json(&info.name, &info.version));
        let by_name = tools.iter().enumerate().map(|(i, t)| (t.name.clone(), i)).collect();
        let listings = Listings::new(&tools, None);
        let inputs = InputSchemas::new(&tools);
        let outputs = OutputSchemas::new(&tools);
        Server {
            info,
            server_info_json,
            tools,
            by_name,
            listings,
            inputs,
            outputs,
            recorder: None,
            catalog: RwLock::new(Arc::new(Catalog::default())),
            hub: Arc::new(Hub::default()),
            changes: false,
            page_size: None,
            tasks: None,
        }
    }

    pub fn tools(&self) -> &[ToolSpec] {
        &self.tools
    }

    /// The prompts and resources now (a tool may change the resources,
    /// RULES U3.2).
    pub fn catalog(&self) -> Arc<Catalog> {
        Arc::clone(&self.catalog.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// Who hears of changed resources: a transport adds the listeners of
    /// its legacy sessions and `subscriptions/listen` streams (RULES U3).
    pub fn hub(&self) -> &Hub {
        &self.hub
    }

    /// Apply a tool's changes to the resources and tell the listeners
    /// (RULES U3.2). A server that does not allow changes, or has no
    /// resources, drops them (R refuses them first; this holds also for a
    /// worker that sends them anyway).
    pub fn change_resources(&self, changes: Vec<ResourceChange>) {
        if !self.changes {
            return;
        }
        let applied = {
            let mut catalog = self.catalog.write().unwrap_or_else(PoisonError::into_inner);
            if !catalog.offers().resources {
                return;
            }
            let mut res = catalog.resources().clone();
            let applied = subscriptions::apply(&mut res, changes);
            *catalog = Arc::new(catalog.with_resources(res, self.page_size));
            applied
        };
        self.hub.publish(&applied.updated, applied.list_changed);
    }

    /// Server identity and instructions.
    pub fn info(&self) -> &ServerInfo {
        &self.info
    }

    /// Install a span recorder (tracing on), or remove it.
    pub fn set_recorder(&mut self, r: Option<Box<dyn SpanRecorder>>) {
        self.recorder = r;
    }

    /// The recorder, when telemetry is on (a transport opens its own spans
    /// with it: the HTTP server span).
    pub fn recorder(&self) -> Option<&dyn SpanRecorder> {
        self.recorder.as_deref()
    }

    /// Flush and stop the span recorder, if any.
    pub fn shutdown_recorder(&self) {
        if let Some(r) = &self.recorder {
            r.shutdown();
        }
    }

    /// The legacy session `session` ends now (end of input, `DELETE`,
    /// shutdown): `mcp.server.session.duration` is recorded once for it.
    pub fn end_session(&self, session: &mut LegacyState) {
        self.end_session_at(session, Instant::now(), false);
    }

    /// The legacy session ends at `at` (an idle HTTP session expired at its
    /// last use plus the idle timeout); `http` tells an HTTP session.
    pub fn end_session_at(&self, session: &mut LegacyState, at: Instant, http: bool) {
        let (Some(r), Some(t0), Some(version)) = (&self.recorder, session.opened.take(), session.negotiated()) else {
            return;
        };
        r.session_end(&SessionEnd { version, duration: at.saturating_duration_since(t0), http });
    }

    /// Handle one message: `message` is one line without its LF (or one
    /// HTTP body). `session` is the legacy session the message belongs to
    /// (see [`LegacyState`]); `host` runs the tool of a `tools/call`. No
    /// transport: no progress, no cancellation (the in-process API).
    pub fn handle(&self, session: &mut LegacyState, message: &[u8], host: &mut dyn Host) -> Reply<'_> {
        self.handle_parsed(session, parse_line(message), host, &Carrier::NONE)
    }

    /// Handle one message already parsed with [`crate::message::parse_line`],
    /// as `carrier` brought it: the transport's [`CallWatch`] hears when a
    /// tool starts and returns (progress and cancellation, RULES C1–C6; a
    /// call cancelled while its tool ran gets no response line), and
    /// telemetry learns what the transport knows of the message.
    pub fn handle_parsed(
        &self,
        session: &mut LegacyState,
        incoming: Incoming,
        host: &mut dyn Host,
        carrier: &Carrier<'_>,
    ) -> Reply<'_> {
        let (watch, via, streams) = (carrier.watch, carrier.via, carrier.streams);
        let (owner, task, promotion) = (carrier.owner, carrier.task, carrier.promotion);
        match incoming {
            Incoming::Blank => Reply::silent(),
            Incoming::ClientResponse => Reply {
                line: None,
                listen: None,
                wait: None,
                diagnostic: Some(CLIENT_RESPONSE_DIAGNOSTIC),
                outcome: SpanEnd::default(),
                span: None,
            },
            Incoming::ParseError => {
                Reply::unspanned(error_line(None, PARSE_ERROR, standard_message(PARSE_ERROR), None), PARSE_ERROR)
            }
            Incoming::InvalidRequest { id } => Reply::unspanned(
                error_line(id.as_deref(), INVALID_REQUEST, standard_message(INVALID_REQUEST), None),
                INVALID_REQUEST,
            ),
            Incoming::Message(msg) => {
                let run = ToolRun { host, ctx: &CallContext::default(), watch, via, streams, owner, task, promotion };
                self.handle_message(session, msg, run)
            }
        }
    }

    fn handle_message(&self, session: &mut LegacyState, msg: Message, run: ToolRun<'_>) -> Reply<'_> {
        let ToolRun { host, watch, via, streams, owner, task, promotion, .. } = run;
        let mut started = match &self.recorder {
            None => None,
            Some(r) => {
                let params = msg.params.as_ref().and_then(Value::as_object);
                let tool_name = if msg.method == "tools/call" {
                    params.and_then(|p| p.get("name")).and_then(Value::as_str)
                } else {
                    None
                };
                let meta = params.and_then(|p| p.get("_meta")).and_then(Value::as_object);
                let tool_registered = tool_name.is_some_and(|n| self.by_name.contains_key(n));
                let modern = matches!(version::era_of(msg.params.as_ref()), Era::Modern { .. });
                let start = SpanStart {
                    method: &msg.method,
                    id: msg.id.as_deref(),
                    tool_name,
                    tool_registered,
                    modern,
                    meta,
                    via,
                };
                Some((r.as_ref(), r.start(&start)))
            }
        };
        let empty = CallContext::default();
        let ctx = started.as_mut().map_or(&empty, |(_, s)| &s.context);
        // L8: an unexpected engine failure (a panic) while handling one
        // request answers that request with -32603 and serving continues.
        let dispatched = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.dispatch(session, &msg, ToolRun { host, ctx, watch, via, streams, owner, task, promotion })
        }));
        let out = match dispatched {
            Ok(o) => o,
            Err(_) => Outcome {
                line: msg
                    .id
                    .as_deref()
                    .map(|id| error_line(Some(id), INTERNAL_ERROR, standard_message(INTERNAL_ERROR), None)),
                end: SpanEnd {
                    error_code: msg.id.as_ref().map(|_| INTERNAL_ERROR),
                    error_message: msg.id.as_ref().map(|_| (standard_message(INTERNAL_ERROR), None)),
                    ..Default::default()
                },
                listen: None,
                wait: None,
            },
        };
        let mut outcome = out.end;
        outcome.notification = msg.id.is_none();
        Reply { line: out.line, listen: out.listen, wait: out.wait, diagnostic: None, outcome, span: started }
    }

    fn dispatch(&self, session: &mut LegacyState, msg: &Message, mut run: ToolRun<'_>) -> Outcome {
        let params = msg.params.as_ref();
        let era = version::era_of(params);
        let run = &mut run;
        let res = match (&msg.id, msg.over_limit) {
            // Notifications: never answered (M1.2, L2.2).
            (None, over_limit) => {
                if over_limit.is_none()
                    && era == Era::Legacy
                    && msg.method == "notifications/initialized"
                    && session.initialized
                {
                    session.client_initialized = true;
                }
                // RULES T5: a notification records the version it claims
                // (modern) or its session's (legacy).
                let version = match era {
                    Era::Modern { meta } => version::claimed_modern(meta),
                    Era::Legacy => session.negotiated(),
                };
                return Outcome {
                    line: None,
                    end: SpanEnd { protocol_version: version, ..Default::default() },
                    listen: None,
                    wait: None,
                };
            }
            // W1.4: well-formed but over an engine limit; answered, never run.
            (Some(_), Some(over)) => {
                let code = if over.in_params { INVALID_PARAMS } else { INVALID_REQUEST };
                let version = match era {
                    Era::Legacy => session.negotiated(),
                    Era::Modern { .. } => None,
                };
                Err((RpcError::detail(code, over.limit.detail()), version))
            }
            (Some(id), None) => match era {
                Era::Modern { meta } => self.dispatch_modern(id, &msg.method, params, meta, run),
                Era::Legacy => self.dispatch_legacy(session, id, &msg.method, params, run),
            },
        };
        match res {
            Ok(o) => o,
            Err((e, version)) => {
                let id = msg.id.as_deref();
                let (message, detail) = e.text();
                // RULES H7.1: a call the queue had no room for was refused;
                // any other error of a call is an error.
                let call = (msg.method == "tools/call").then_some(if e.whole {
                    CallOutcome::Refused
                } else {
                    CallOutcome::Error
                });
                let mut line = error_line(id, e.code, message, detail);
                if let Some(data) = e.data {
                    add_error_data(&mut line, &data);
                }
                Outcome {
                    line: Some(line),
                    end: SpanEnd {
                        error_code: Some(e.code),
                        error_message: Some((message, detail)),
                        protocol_version: version,
                        call,
                        ..Default::default()
                    },
                    listen: None,
                    wait: None,
                }
            }
        }
    }

    fn dispatch_legacy(
        &self,
        session: &mut LegacyState,
        id: &str,
        method: &str,
        params: Option<&Value>,
        run: &mut ToolRun<'_>,
    ) -> Result<Outcome, (RpcError, Option<Version>)> {
        let version_before = session.negotiated();
        let err = |e: RpcError, v: Option<Version>| Err((e, v));
        match method {
            "notifications/initialized" => err(RpcError::new(INVALID_REQUEST), version_before),
            "initialize" => {
                let v = match check_initialize(params) {
                    Some(requested) => version::negotiate_legacy(requested),
                    None => return err(RpcError::new(INVALID_PARAMS), version_before),
                };
                if self.recorder.is_some() {
                    // A new session on this connection: the previous one ends.
                    let http = run.via.is_some_and(|v| v.http.is_some());
                    self.end_session_at(session, Instant::now(), http);
                    session.opened = Some(Instant::now());
                }
                session.initialized = true;
                session.version = Some(v);
                session.log_level = None;
                session.asks = Asks::from_capabilities(params.and_then(|p| p.get("capabilities")));
                session.subscriptions.open();
                let mut out = result_open(id, 200);
                projection::write_initialize_result(
                    &mut out,
                    v,
                    &self.server_info_json,
                    self.info.instructions.as_deref(),
                    self.offers(),
                );
                out.push(b'}');
                Ok(ok(out, Some(v)))
            }
            "ping" => {
                let mut out = result_open(id, 2);
                out.extend_from_slice(b"{}}");
                Ok(ok(out, version_before))
            }
            "server/discover" => err(RpcError::detail(INVALID_PARAMS, version::MISSING_CLAIM), version_before),
            _ if !session.initialized => err(RpcError::detail(INVALID_REQUEST, "server not initialized"), None),
            "tools/list" => {
                let v = session.version.unwrap_or(LEGACY_DEFAULT);
                self.tools_list(id, params, v).map_err(|e| (e, Some(v)))
            }
            "tools/call" => {
                let v = session.version.unwrap_or(LEGACY_DEFAULT);
                let listen = (session.log_level, session.asks);
                self.call_or_task(id, params, v, listen, run).map_err(|e| (e, Some(v)))
            }
            "tasks/get" | "tasks/result" | "tasks/list" | "tasks/cancel"
                if self.legacy_tasks(method, session.version.unwrap_or(LEGACY_DEFAULT)) =>
            {
                let v = session.version.unwrap_or(LEGACY_DEFAULT);
                Ok(self.task_request(id, method, params, v, run.owner))
            }
            "resources/subscribe" | "resources/unsubscribe" if self.catalog().answers(method, false) => {
                let v = session.version.unwrap_or(LEGACY_DEFAULT);
                let answered = self.catalog_request(id, method, params, v).map_err(|e| (e, Some(v)))?;
                // RULES U3.1: the catalog checked the `uri`.
                let uri = params.and_then(|p| p.get("uri")).and_then(Value::as_str).unwrap_or_default();
                if method == "resources/unsubscribe" {
                    session.subscriptions.remove(uri);
                } else if !session.subscriptions.add(uri) {
                    return err(RpcError::detail(INVALID_PARAMS, TOO_MANY_SUBSCRIPTIONS), Some(v));
                }
                Ok(answered)
            }
            _ if self.catalog().answers(method, false) => {
                let v = session.version.unwrap_or(LEGACY_DEFAULT);
                self.catalog_request(id, method, params, v).map_err(|e| (e, Some(v)))
            }
            logging::SET_LEVEL => match logging::set_level_params(params) {
                // RULES G1.1: the session's level, answered with an empty result.
                Some(level) => {
                    session.log_level = Some(level);
                    let mut out = result_open(id, 2);
                    out.extend_from_slice(b"{}}");
                    Ok(ok(out, version_before))
                }
                None => err(RpcError::detail(INVALID_PARAMS, "unknown log level"), version_before),
            },
            _ => err(RpcError::new(METHOD_NOT_FOUND), version_before),
        }
    }

    fn dispatch_modern(
        &self,
        id: &str,
        method: &str,
        params: Option<&Value>,
        meta: &Map<String, Value>,
        run: &mut ToolRun<'_>,
    ) -> Result<Outcome, (RpcError, Option<Version>)> {
        // RULES U3.3: a transport that keeps streams open answers
        // subscriptions/listen on a server with resources.
        let listens = method == subscriptions::LISTEN
            && run.streams
            && (self.catalog().offers().resources || self.tasks.is_some());
        let tasks = self.tasks.is_some() && matches!(method, "tasks/get" | "tasks/update" | "tasks/cancel");
        let known = listens
            || tasks
            || matches!(method, "server/discover" | "tools/list" | "tools/call")
            || self.catalog().answers(method, true);
        if !known {
            return Err((RpcError::new(METHOD_NOT_FOUND), None));
        }
        let v = match version::check_modern_claim(meta) {
            Ok(v) => v,
            Err(ClaimError::NotString) => {
                return Err((RpcError::detail(INVALID_PARAMS, version::CLAIM_NOT_STRING), None))
            }
            Err(ClaimError::Unsupported { requested }) => {
                let mut data = Vec::new();
                projection::write_unsupported_version_data(&mut data, requested);
                return Err((RpcError { data: Some(data), ..RpcError::new(UNSUPPORTED_VERSION) }, None));
            }
            Err(ClaimError::CapsNotObject(v)) => {
                return Err((RpcError::detail(INVALID_PARAMS, version::CAPS_NOT_OBJECT), Some(v)))
            }
        };
        // RULES G1.2: a level that names none is refused, whatever the method.
        let Ok(log) = logging::requested_level(meta) else {
            return Err((RpcError::detail(INVALID_PARAMS, "unknown log level"), Some(v)));
        };
        let r = match method {
            "server/discover" => Ok(self.discover(id, v)),
            "tools/list" => self.tools_list(id, params, v),
            "tools/call" => {
                let asks = Asks::from_capabilities(meta.get(version::META_CAPS));
                self.call_or_task(id, params, v, (log, asks), run)
            }
            // RULES V1.3: only a client that declares the extension.
            _ if tasks => match params.and_then(Value::as_object).is_some_and(tasks::client_allows) {
                true => Ok(self.task_request(id, method, params, v, run.owner)),
                false => Err(RpcError {
                    data: Some(tasks::missing_extension_data()),
                    ..RpcError::detail(MISSING_REQUIRED_CLIENT_CAPABILITY, MISSING_TASKS_EXTENSION)
                }),
            },
            subscriptions::LISTEN => self.listen(id, params, v, run.owner),
            _ => self.catalog_request(id, method, params, v),
        };
        r.map_err(|e| (e, Some(v)))
    }

    fn discover(&self, id: &str, v: Version) -> Outcome {
        let mut out = result_open(id, 300);
        projection::write_discover_result(
            &mut out,
            &self.server_info_json,
            self.info.instructions.as_deref(),
            self.offers(),
        );
        out.push(b'}');
        ok(out, Some(v))
    }

    /// What `initialize` and `server/discover` declare.
    fn offers(&self) -> projection::Offers {
        let tasks = self.tasks.as_ref().map(|t| projection::TaskOffer { list: t.options().list });
        projection::Offers { resource_changes: self.changes, tasks, ..self.catalog().offers() }
    }

    /// `subscriptions/listen` (RULES U3.3): the acknowledgment, and the
    /// filter the transport's listener takes.
    fn listen(&self, id: &str, params: Option<&Value>, v: Version, owner: Option<&str>) -> Result<Outcome, RpcError> {
        let tasks = self.listen_tasks(params, owner)?;
        let (filter, notifications) = subscriptions::listen_filter(params, self.catalog().resources(), tasks)
            .map_err(|d| RpcError::detail(INVALID_PARAMS, d))?;
        let mut o = ok(subscriptions::acknowledgment(id, &notifications), Some(v));
        o.listen = Some(Listening { id: id.to_owned(), filter });
        Ok(o)
    }

    /// The `taskIds` of a `subscriptions/listen` request that it is told of
    /// (RULES V3.7): the requestor's 2026-07-28 tasks among them; `None`
    /// when it asks for none. Asking without the extension is `-32021`.
    fn listen_tasks(&self, params: Option<&Value>, owner: Option<&str>) -> Result<Option<BTreeSet<String>>, RpcError> {
        let p = params.and_then(Value::as_object);
        let Some(asked) = p.and_then(|p| p.get("notifications")).and_then(|n| n.get("taskIds")) else {
            return Ok(None);
        };
        if asked.is_null() {
            return Ok(None);
        }
        if !p.is_some_and(tasks::client_allows) {
            return Err(RpcError {
                data: Some(tasks::missing_extension_data()),
                ..RpcError::detail(MISSING_REQUIRED_CLIENT_CAPABILITY, MISSING_TASKS_EXTENSION)
            });
        }
        let ids = asked.as_array().filter(|a| a.len() <= subscriptions::MAX_TASK_IDS);
        let Some(ids) = ids else { return Err(RpcError::detail(INVALID_PARAMS, TASK_IDS)) };
        let store = self.tasks.as_ref();
        let mut honoured = BTreeSet::new();
        for id in ids {
            let id = id.as_str().ok_or_else(|| RpcError::detail(INVALID_PARAMS, TASK_IDS))?;
            if store.and_then(|t| t.find(id, owner)).is_some_and(|t| t.is_modern()) {
                honoured.insert(id.to_owned());
            }
        }
        Ok(Some(honoured))
    }

    /// A request about prompts, resources or completion (RULES section 16,
    /// section 17): answered from the catalog, without the host.
    fn catalog_request(&self, id: &str, method: &str, params: Option<&Value>, v: Version) -> Result<Outcome, RpcError> {
        let mut out = result_open(id, 256);
        match self.catalog().answer(&mut out, method, params, v, &self.server_info_json) {
            Ok(()) => {
                out.push(b'}');
                Ok(ok(out, Some(v)))
            }
            Err(r) => Err(RpcError { code: r.code, detail: r.detail, data: r.data, whole: r.whole }),
        }
    }

    fn tools_list(&self, id: &str, params: Option<&Value>, v: Version) -> Result<Outcome, RpcError> {
        let pages = self.listings.get(v);
        let page = pagination::page_of(params, pages.count())
            .map_err(|e| RpcError { detail: e.detail(), ..RpcError::new(INVALID_PARAMS) })?;
        let (listing, next) = pages.page(page);
        let mut out = result_open(id, projection::tools_list_result_len(listing));
        projection::write_tools_list_result(&mut out, listing, next.as_deref(), v, &self.server_info_json);
        out.push(b'}');
        Ok(ok(out, Some(v)))
    }

    /// Does this 2025-11-25 session's server answer `method` about tasks?
    fn legacy_tasks(&self, method: &str, v: Version) -> bool {
        let Some(t) = &self.tasks else { return false };
        v.features().task_augmentation && (method != "tasks/list" || t.options().list)
    }

    /// A request about tasks (RULES V3.1–V3.6), answered from the store.
    fn task_request(&self, id: &str, method: &str, params: Option<&Value>, v: Version, owner: Option<&str>) -> Outcome {
        let Some(t) = &self.tasks else { return refusal(id, v, METHOD_NOT_FOUND, "") };
        match t.answer(id, method, params, v, owner, &self.server_info_json) {
            Ok(Ok(line)) => ok(line, Some(v)),
            Ok(Err(waiting)) => Outcome { wait: Some(waiting), ..ok(Vec::new(), Some(v)) }.without_line(),
            Err((code, detail)) => refusal(id, v, code, &detail),
        }
    }

    /// `tools/call`, run as the carrier's task when it has one: the answer
    /// (result or error) is kept in the task and nothing is written (RULES
    /// V2.2); so is the answer of a call the transport promoted to a task
    /// while it ran (V2.5). A call that asks for a task no transport made
    /// is refused here, or runs as any other (see [`tasks::Tasks::plan`]).
    fn call_or_task(
        &self,
        id: &str,
        params: Option<&Value>,
        v: Version,
        listen: (Option<LogLevel>, Asks),
        run: &mut ToolRun<'_>,
    ) -> Result<Outcome, RpcError> {
        let Some(task) = run.task else {
            if let (Some(t), Some(p)) = (&self.tasks, params.and_then(Value::as_object)) {
                let index = p.get("name").and_then(Value::as_str).and_then(|n| self.by_name.get(n));
                if let Some(Err((code, detail))) = index.map(|i| t.plan(*i, p, v)) {
                    let mut o = refusal(id, v, code, &detail);
                    if code == MISSING_REQUIRED_CLIENT_CAPABILITY {
                        if let Some(line) = &mut o.line {
                            add_error_data(line, &tasks::missing_extension_data());
                        }
                    }
                    o.end.call = Some(CallOutcome::Error);
                    return Ok(o);
                }
            }
            let answered = self.tools_call(id, params, v, listen, run);
            // RULES V2.5: the request was answered with a task's handle
            // while the call ran; the answer is the task's.
            return match run.promotion.and_then(|p| p.settle()) {
                Some(task) => Ok(self.keep_in_task(&task, answered, id, v, run)),
                None => answered,
            };
        };
        let task = Arc::clone(task);
        // A task's tool is not asked questions (RULES V2.3), and its
        // progress is its status message.
        let answered = self.tools_call(id, params, v, (listen.0, Asks::NONE), run);
        Ok(self.keep_in_task(&task, answered, id, v, run))
    }

    /// Keep a call's answer in its task (RULES V2.2): nothing is written.
    fn keep_in_task(
        &self,
        task: &Task,
        answered: Result<Outcome, RpcError>,
        id: &str,
        v: Version,
        run: &ToolRun<'_>,
    ) -> Outcome {
        let mut o = match answered {
            Ok(o) => o,
            Err(e) => {
                let (message, detail) = e.text();
                let text = detail.map_or_else(|| message.to_owned(), |d| format!("{message}: {d}"));
                task.finish_error(e.code, &text);
                return Outcome {
                    line: None,
                    end: SpanEnd { error_code: Some(e.code), protocol_version: Some(v), ..Default::default() },
                    listen: None,
                    wait: None,
                };
            }
        };
        match o.line.take() {
            // Cancelled (tasks/cancel, or the call's own cancellation).
            None => task.cancel_quietly(),
            Some(_) if o.end.call == Some(CallOutcome::Interrupted) && run.watch.stopping() => {
                task.finish_interrupted(STOPPING_TEXT);
            }
            Some(line) => {
                let open = result_open(id, 0).len();
                let body = line.get(open..line.len().saturating_sub(1)).unwrap_or_default();
                task.finish_result(body, o.end.tool_error);
            }
        }
        o
    }

    fn tools_call(
        &self,
        id: &str,
        params: Option<&Value>,
        v: Version,
        (log_level, asks): (Option<LogLevel>, Asks),
        run: &mut ToolRun<'_>,
    ) -> Result<Outcome, RpcError> {
        let p = match params {
            Some(Value::Object(p)) => p,
            _ => return Err(RpcError::new(INVALID_PARAMS)),
        };
        let name = match p.get("name") {
            Some(Value::String(n)) => n,
            _ => return Err(RpcError::new(INVALID_PARAMS)),
        };
        let arguments = match p.get("arguments") {
            None | Some(Value::Null) => None,
            Some(a @ Value::Object(_)) => Some(a),
            Some(_) => return Err(RpcError::new(INVALID_PARAMS)),
        };
        let mut args = arguments.and_then(Value::as_object);
        let index = match self.by_name.get(name.as_str()) {
            Some(i) => *i,
            None => return Err(RpcError::detail(INVALID_PARAMS, "unknown tool")),
        };
        if let Some(a) = args {
            if a.iter().any(|(k, v)| k.contains('\0') || contains_nul(v)) {
                return Err(RpcError::new(INVALID_PARAMS));
            }
        }
        // RULES L6.7: arguments that do not match the input schema never
        // reach the host.
        let trimmed;
        match self.inputs.check(index, &self.tools[index], arguments) {
            Checked::Valid => {}
            Checked::Trimmed(m) => {
                trimmed = m;
                args = Some(&trimmed);
            }
            Checked::Refused(text) => return Ok(self.refused(id, &text, v)),
        }
        // RULES A2.2: a 2026-07-28 call from a client that can be asked
        // brings the answers of earlier rounds.
        let rounds = if v.is_modern() && asks.any() {
            Some(rounds_of(p, name, arguments.and_then(Value::as_object))?)
        } else {
            None
        };
        // RULES N3.1: a server with workers refuses a call its queue has no
        // room for, saying so in plain words (the code is the spec's
        // internal error).
        if let Err(message) = run.host.admit() {
            return Err(RpcError::message(INTERNAL_ERROR, message));
        }
        let token = progress_token(params);
        run.watch.started(&CallStart { id, progress_token: token.as_deref(), log_level, asks, version: v });
        let binding = rounds.map(|(r, b)| {
            run.watch.set_rounds(r);
            b
        });
        let mut outcome = run.host.call_tool(index, args, run.ctx);
        let asked = binding.as_ref().and_then(|_| run.watch.take_rounds()).filter(|r| !r.unanswered.is_empty());
        // RULES U3.2: what the tool changed in the resources is applied
        // now, and heard of before the call's answer; a round answered
        // input_required changes nothing (the call runs again).
        if let Ok(r) = &mut outcome {
            if !r.changes.is_empty() && asked.is_none() {
                self.change_resources(std::mem::take(&mut r.changes));
            }
        }
        let worker = run.host.worker_run();
        // RULES J4.6: structured content that does not match the tool's
        // output schema is not sent; the client gets a tool error instead.
        if let Ok(r) = &outcome {
            if let (false, Some(sc)) = (r.is_error, &r.structured) {
                if let Some(m) = self.outputs.check(index, name, sc) {
                    outcome = Err(ToolFailure::Error(m));
                }
            }
        }
        // RULES C4: a call cancelled while its tool ran is not answered.
        if run.watch.finished() {
            return Ok(Outcome {
                line: None,
                end: SpanEnd {
                    cancelled: true,
                    protocol_version: Some(v),
                    worker,
                    call: Some(CallOutcome::Cancelled),
                    ..Default::default()
                },
                listen: None,
                wait: None,
            });
        }
        let mut out = result_open(id, outcome.as_ref().map_or(256, |r| r.approx_len()));
        // RULES A2.1: questions without an answer make the call
        // input_required, whatever the tool did after asking.
        if let (Some(r), Some(b)) = (&asked, &binding) {
            asks::write_input_required(&mut out, r, b, &self.server_info_json);
            out.push(b'}');
            let mut o = ok(out, Some(v));
            o.end.worker = worker;
            o.end.call = Some(CallOutcome::Ok);
            return Ok(o);
        }
        let (tool_error, call) = match &outcome {
            Ok(r) => {
                let e = projection::write_call_result(&mut out, r, v, &self.server_info_json);
                (e, if e { CallOutcome::ToolError } else { CallOutcome::Ok })
            }
            Err(ToolFailure::Error(text)) => {
                projection::write_error_result(&mut out, text, v, &self.server_info_json);
                let crashed = worker.is_some_and(|w| w.crashed);
                (true, if crashed { CallOutcome::Crashed } else { CallOutcome::ToolError })
            }
            Err(ToolFailure::Interrupted) => {
                // RULES H4.2: interrupted because the server is stopping,
                // the message says so.
                let text = if run.watch.stopping() { STOPPING_TEXT } else { INTERRUPTED_TEXT };
                projection::write_error_result(&mut out, text, v, &self.server_info_json);
                (true, CallOutcome::Interrupted)
            }
        };
        out.push(b'}');
        let mut o = ok(out, Some(v));
        o.end.tool_error = tool_error;
        o.end.worker = worker;
        o.end.call = Some(call);
        Ok(o)
    }
}

impl Server {
    /// The answer to a call refused before its tool ran (RULES L6.7): a
    /// tool error, so the model reads why and can correct the call.
    fn refused(&self, id: &str, text: &str, v: Version) -> Outcome {
        let mut out = result_open(id, text.len() + 64);
        projection::write_error_result(&mut out, text, v, &self.server_info_json);
        out.push(b'}');
        let mut o = ok(out, Some(v));
        o.end.tool_error = true;
        o.end.call = Some(CallOutcome::ToolError);
        o
    }
}

/// What the transport that carried a message adds to it (see
/// [`Server::handle_parsed`]).
#[derive(Clone, Copy)]
pub struct Carrier<'a> {
    /// Hears when a tool starts and returns: progress and cancellation.
    pub watch: &'a dyn CallWatch,
    /// What telemetry knows of the transport (the HTTP request, its span,
    /// its session); `None` on stdio and in process.
    pub via: Option<&'a Via>,
    /// The transport keeps `subscriptions/listen` streams open (RULES
    /// U3.3): otherwise the method is not found.
    pub streams: bool,
    /// The name of the bearer token that sent the message (HTTP with
    /// tokens): the owner of the tasks it creates and finds (RULES V4.1).
    pub owner: Option<&'a str>,
    /// The `tools/call` runs as this task ([`Server::admit_task`]): its
    /// answer is kept there, and no line is written.
    pub task: Option<&'a Arc<Task>>,
    /// The `tools/call` becomes a task if it runs long (RULES V2.5): its
    /// answer is kept in the task when the transport promoted it.
    pub promotion: Option<&'a Arc<Promotion>>,
}

impl Carrier<'static> {
    /// No progress, no cancellation, no transport telemetry.
    pub const NONE: Carrier<'static> =
        Carrier { watch: &NoWatch, via: None, streams: false, owner: None, task: None, promotion: None };
}

impl<'a> Carrier<'a> {
    /// A transport that watches calls, without transport telemetry.
    pub fn watched(watch: &'a dyn CallWatch) -> Carrier<'a> {
        Carrier { watch, via: None, streams: false, owner: None, task: None, promotion: None }
    }

    /// The same carrier, for a transport that keeps listen streams open.
    pub fn streaming(self) -> Carrier<'a> {
        Carrier { streams: true, ..self }
    }

    /// The same carrier, with what telemetry knows of the transport.
    pub fn with_via(self, via: Option<&'a Via>) -> Carrier<'a> {
        Carrier { via, ..self }
    }

    /// The same carrier, for a message of the token named `owner`.
    pub fn owned_by(self, owner: Option<&'a str>) -> Carrier<'a> {
        Carrier { owner, ..self }
    }

    /// The same carrier, for a call that runs as `task`.
    pub fn as_task(self, task: Option<&'a Arc<Task>>) -> Carrier<'a> {
        Carrier { task, ..self }
    }

    /// The same carrier, for a call that becomes a task if it runs long.
    pub fn promotable(self, promotion: Option<&'a Arc<Promotion>>) -> Carrier<'a> {
        Carrier { promotion, ..self }
    }
}

/// What running a tool needs: the host, the span's context for the tool,
/// and the transport's watch.
struct ToolRun<'a> {
    host: &'a mut dyn Host,
    ctx: &'a CallContext,
    watch: &'a dyn CallWatch,
    /// The transport, for telemetry.
    via: Option<&'a Via>,
    /// See [`Carrier::streams`].
    streams: bool,
    /// See [`Carrier::owner`].
    owner: Option<&'a str>,
    /// See [`Carrier::task`].
    task: Option<&'a Arc<Task>>,
    /// See [`Carrier::promotion`].
    promotion: Option<&'a Arc<Promotion>>,
}

/// The answers a 2026-07-28 `tools/call` brings (RULES A2.2): those of its
/// `requestState` (checked: made here for this tool and these arguments,
/// not expired) and of its `inputResponses`, and what a new state is bound
/// to.
fn rounds_of(
    p: &Map<String, Value>,
    name: &str,
    arguments: Option<&Map<String, Value>>,
) -> Result<(Rounds, String), RpcError> {
    let binding = request_state::binding(name, arguments);
    let mut answers = match p.get("requestState") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::String(state)) => request_state::open(state, &binding, std::time::SystemTime::now())
            .map_err(|_| RpcError::detail(INVALID_PARAMS, REQUEST_STATE_REFUSED))?,
        Some(_) => return Err(RpcError::detail(INVALID_PARAMS, REQUEST_STATE_REFUSED)),
    };
    match p.get("inputResponses") {
        None | Some(Value::Null) => {}
        Some(Value::Object(m)) => answers.extend(m.iter().map(|(k, v)| (k.clone(), v.clone()))),
        Some(_) => return Err(RpcError::detail(INVALID_PARAMS, "inputResponses must be an object")),
    }
    Ok((Rounds::new(answers), binding))
}

/// The detail of a refused `requestState`.
const REQUEST_STATE_REFUSED: &str =
    "requestState was not made by this server for this tool and these arguments, or it expired; call again without it";

/// A call admitted as a task ([`Server::admit_task`]).
pub enum Admitted {
    /// A task now: the task, and its handle's line to answer.
    Task(Arc<Task>, Vec<u8>),
    /// An ordinary call that becomes a task if it runs long (RULES V2.5).
    Later(Arc<Promotion>),
}

/// A refusal whose detail is made at run time (requests about tasks).
fn refusal(id: &str, v: Version, code: i64, detail: &str) -> Outcome {
    let detail = (!detail.is_empty()).then_some(detail);
    Outcome {
        line: Some(error_line(Some(id), code, standard_message(code), detail)),
        end: SpanEnd {
            error_code: Some(code),
            error_message: Some((standard_message(code), None)),
            protocol_version: Some(v),
            ..Default::default()
        },
        listen: None,
        wait: None,
    }
}

/// The detail of a `taskIds` that is not an array of at most 1024 strings.
const TASK_IDS: &str = "notifications.taskIds must be an array of at most 1024 task ids";

/// The detail of `-32021` for a request about tasks without the extension.
const MISSING_TASKS_EXTENSION: &str =
    "declare the io.modelcontextprotocol/tasks extension in the request's capabilities";

impl Outcome {
    fn without_line(mut self) -> Outcome {
        self.line = None;
        self
    }
}

fn ok(line: Vec<u8>, version: Option<Version>) -> Outcome {
    Outcome {
        line: Some(line),
        end: SpanEnd { protocol_version: version, ..Default::default() },
        listen: None,
        wait: None,
    }
}

/// The detail of a `resources/subscribe` over the session's bound.
const TOO_MANY_SUBSCRIPTIONS: &str =
    "a session subscribes to at most 1024 URIs and 64 KiB of them; unsubscribe from some first";

/// L3.1: returns the requested version when params are acceptable.
fn check_initialize(params: Option<&Value>) -> Option<&str> {
    let p = params?.as_object()?;
    let pv = p.get("protocolVersion")?.as_str().filter(|s| !s.is_empty())?;
    p.get("capabilities")?.as_object()?;
    let ci = p.get("clientInfo")?.as_object()?;
    ci.get("name")?.as_str()?;
    ci.get("version")?.as_str()?;
    Some(pv)
}
