//! One request, from its head to its answer (the path is in the module
//! doc of `transport::http`): its HTTP span, the checks on its head alone
//! (`preflight`), its body, its era, and the modern or legacy handling.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Limited};
use hyper::body::{Frame, Incoming as HyperBody};
use hyper::header::{HeaderMap, HeaderValue};
use hyper::{Method, Request, StatusCode};
use serde_json::{Map, Value};

use super::access::{self, Facts, LogFormat, Outcome, PendingOutcome, Reason};
use super::era::{self, Choice};
use super::guard::strip_port;
use super::queue::call_tool;
use super::response::{
    accepts_json, answer_resp, closing, empty, error_resp, header, legacy_resp, media_type, method_not_allowed,
    respond, rpc_error, Answer, Resp,
};
use super::tokens::Auth;
use super::{mirrored, resume, sse, Shared};
use crate::codes::{standard_message, INTERNAL_ERROR, INVALID_REQUEST, UNSUPPORTED_VERSION};
use crate::message::{parse_line, Incoming};
use crate::projection;
use crate::server::{Carrier, LegacyState};
use crate::tasks::Waiting;
use crate::telemetry::{HttpStart, HttpVia, Via};
use crate::transport::NoTools;
use crate::workers::Caller;

/// The two ends of a connection.
#[derive(Debug, Clone, Copy)]
pub(super) struct Conn {
    pub(super) peer: SocketAddr,
    pub(super) local: Option<SocketAddr>,
}

fn http_version(v: hyper::Version) -> &'static str {
    match v {
        hyper::Version::HTTP_09 => "0.9",
        hyper::Version::HTTP_10 => "1.0",
        hyper::Version::HTTP_2 => "2",
        hyper::Version::HTTP_3 => "3",
        _ => "1.1",
    }
}

/// Serve one request (or, on a connection over the limit, answer it `503`:
/// `busy`), and write its access-log line (RULES H7).
pub(super) async fn traced_request(sh: &Shared, conn: Conn, req: Request<HyperBody>, busy: bool) -> Resp {
    let client = access::client_address(conn.peer, req.headers(), &sh.trusted_proxies);
    let mut facts = Facts::new(client, req.method().as_str());
    let resp = traced(sh, conn, req, busy, &mut facts).await;
    if sh.access_log.format == LogFormat::Off {
        return resp;
    }
    let reason = resp.extensions().get::<Reason>().map(|r| r.0.clone());
    let status = resp.status().as_u16();
    if let Some(pending) = resp.extensions().get::<PendingOutcome>().cloned() {
        // An SSE answer: the line is written as the stream ends, with the
        // call's outcome.
        let log = LogAtEnd { log: sh.access_log.clone(), facts, status, reason, pending };
        return resp.map(|body| AtEnd::new(body, move || write_log(log)).boxed());
    }
    let outcome = access::outcome_of(resp.extensions().get::<Outcome>().copied(), status, reason.as_deref());
    sh.access_log.write(&facts, status, outcome, reason.as_deref());
    resp
}

/// The access-log line of an SSE answer, written when its body is dropped.
struct LogAtEnd {
    log: access::AccessLog,
    facts: Facts,
    status: u16,
    reason: Option<Arc<str>>,
    pending: PendingOutcome,
}

/// Write the access-log line of an SSE answer (when its body is dropped).
fn write_log(l: LogAtEnd) {
    l.log.write(&l.facts, l.status, l.pending.get(), l.reason.as_deref());
}

/// A response body that runs `end` once when it is dropped: after its last
/// frame, or when the client went away (an SSE answer's access-log line,
/// its HTTP span).
struct AtEnd {
    body: BoxBody<Bytes, Infallible>,
    end: Option<Box<dyn FnOnce() + Send + Sync>>,
}

impl AtEnd {
    fn new(body: BoxBody<Bytes, Infallible>, end: impl FnOnce() + Send + Sync + 'static) -> AtEnd {
        AtEnd { body, end: Some(Box::new(end)) }
    }
}

impl hyper::body::Body for AtEnd {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }
}

impl Drop for AtEnd {
    fn drop(&mut self) {
        if let Some(end) = self.end.take() {
            end();
        }
    }
}

/// With telemetry on, the request inside its HTTP server span (RULES T10),
/// which parents the span of the MCP message it carries.
async fn traced(sh: &Shared, conn: Conn, req: Request<HyperBody>, busy: bool, facts: &mut Facts) -> Resp {
    let Some(recorder) = sh.server.recorder() else {
        return if busy { too_busy(req).await } else { handle_request(sh, req, None, facts).await };
    };
    let h = req.headers();
    let path = req.uri().path();
    let route = if path == sh.path {
        Some(sh.path.as_str())
    } else if path == "/health" {
        Some("/health")
    } else {
        None
    };
    let host = header(h, "host");
    let port = host.and_then(|v| v.strip_prefix(strip_port(v))).and_then(|p| p.strip_prefix(':')?.parse().ok());
    let protocol_version = http_version(req.version());
    let span = recorder.http_start(&HttpStart {
        method: req.method().as_str(),
        path,
        route,
        scheme: "http",
        server_address: host.map(strip_port),
        server_port: port.or(conn.local.map(|l| l.port())),
        client: Some(facts.client),
        protocol_version,
        traceparent: header(h, "traceparent"),
        tracestate: header(h, "tracestate"),
    });
    let via = Via {
        http: Some(HttpVia {
            span: span.as_ref().and_then(|s| s.context()),
            session_id: None,
            client: Some(facts.client),
            user: None,
            protocol_version,
            baggage: header(h, "baggage").map(String::from),
        }),
    };
    let resp = if busy { too_busy(req).await } else { handle_request(sh, req, Some(via), facts).await };
    let Some(span) = span else { return resp };
    let status = resp.status().as_u16();
    if !sse::is_sse(&resp) {
        span.finish(status);
        return resp;
    }
    // An SSE answer is still being sent: its span ends with the stream, so
    // that it covers the tool call it carries (RULES T10, C6).
    resp.map(|body| AtEnd::new(body, move || span.finish(status)).boxed())
}

impl Shared {
    /// `GET /health` (RULES H1.3): a JSON object that later members extend
    /// (none is ever renamed or removed).
    fn health(&self) -> Resp {
        let info = self.server.info();
        let mut body = Map::new();
        // RULES H1.3: not ok while every request to the endpoint is refused.
        let unusable = self.tokens.unusable();
        body.insert("status".into(), if unusable.is_some() { "unavailable" } else { "ok" }.into());
        body.insert("name".into(), info.name.as_str().into());
        body.insert("version".into(), info.version.as_str().into());
        body.insert("tools".into(), self.server.tools().len().into());
        body.insert("replica".into(), self.sessions.replica().map_or(Value::Null, Value::from));
        if let Some(w) = self.calls.workers() {
            // RULES N2.4: how busy the worker processes are.
            let s = w.pool.stats();
            let workers = serde_json::json!({
                "total": s.workers, "busy": s.busy, "idle": s.idle, "queued": s.queued, "restarts": s.restarts,
            });
            body.insert("workers".into(), workers);
        }
        let Some(why) = unusable else {
            return respond(StatusCode::OK, Value::Object(body).to_string().into_bytes());
        };
        // Why in detail is on stderr and in the access log, not told to
        // anyone who asks.
        body.insert(
            "reason".into(),
            "the tokens file cannot be used, so every request to the endpoint is refused (standard error says \
             why)"
                .into(),
        );
        let mut r = respond(StatusCode::SERVICE_UNAVAILABLE, Value::Object(body).to_string().into_bytes());
        r.extensions_mut().insert(Reason(why.into()));
        r
    }

    /// `subscriptions/listen` (RULES U3.3): its stream, which starts with
    /// the acknowledgment; a refused request is answered as any other.
    fn listen(&self, h: &HeaderMap, incoming: Incoming, via: Option<&Via>, owner: Option<&str>) -> Resp {
        if !sse::accepts_sse(h) {
            let id = match &incoming {
                Incoming::Message(m) => m.id.clone(),
                _ => None,
            };
            return error_resp(
                StatusCode::NOT_ACCEPTABLE,
                id.as_deref(),
                INVALID_REQUEST,
                "Not Acceptable: subscriptions/listen is answered with a stream; Accept must include \
                 text/event-stream",
            );
        }
        let carrier = Carrier::NONE.with_via(via).streaming().owned_by(owner);
        let mut reply = self.server.handle_parsed(&mut LegacyState::default(), incoming, &mut NoTools, &carrier);
        let Some(l) = reply.take_listen() else { return answer_resp(Answer::of(&mut reply)) };
        let ack = reply.take_line().unwrap_or_default();
        let mut r = self.listens.listen_stream(&self.server, &l.id, l.filter, ack);
        r.extensions_mut().insert(super::access::Outcome(reply.outcome()));
        r
    }

    /// Answer a message that needs no tool, on this thread.
    fn answer_here(&self, session: &mut LegacyState, incoming: Incoming, via: Option<&Via>) -> Answer {
        match self.answer_or_wait(session, incoming, via, None) {
            Ok(a) => a,
            Err(w) => Answer { line: Some(w.line()), code: None, outcome: "ok" },
        }
    }

    /// Answer a message that needs no tool, on this thread, for the token
    /// named `owner`; `Err` is a `tasks/result` waiting for its task
    /// (RULES V3.2).
    fn answer_or_wait(
        &self,
        session: &mut LegacyState,
        incoming: Incoming,
        via: Option<&Via>,
        owner: Option<&str>,
    ) -> Result<Answer, Waiting> {
        let carrier = Carrier::NONE.with_via(via).owned_by(owner);
        let mut reply = self.server.handle_parsed(session, incoming, &mut NoTools, &carrier);
        match reply.take_wait() {
            Some(w) => Err(w),
            None => Ok(Answer::of(&mut reply)),
        }
    }
}

/// The answer to a request refused (or, for `/health` and `DELETE`,
/// answered) on its request line and headers alone, before its body is read.
fn preflight(sh: &Shared, req: &hyper::http::request::Parts, facts: &mut Facts) -> Option<Resp> {
    let h = &req.headers;
    if !sh.guard.host_allowed(h) {
        return Some(error_resp(StatusCode::FORBIDDEN, None, INVALID_REQUEST, "Forbidden: Host header not allowed"));
    }
    if !sh.guard.origin_allowed(h) {
        return Some(error_resp(StatusCode::FORBIDDEN, None, INVALID_REQUEST, "Forbidden: Origin not allowed"));
    }
    let path = req.uri.path();
    if path == "/health" && (req.method == Method::GET || req.method == Method::HEAD) {
        return Some(sh.health());
    }
    if path != sh.path {
        return Some(error_resp(StatusCode::NOT_FOUND, None, INVALID_REQUEST, "Not Found"));
    }
    // RULES H6.3: a missing and a wrong token are told apart.
    let unauthorized = |message: &str| {
        let mut r = error_resp(StatusCode::UNAUTHORIZED, None, INVALID_REQUEST, message);
        r.headers_mut().insert(hyper::header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        r
    };
    match sh.tokens.check(h) {
        Auth::Open => {}
        Auth::Known(t) => {
            facts.token = Some(t.name.clone());
            facts.per_minute = t.per_minute;
        }
        Auth::Missing => return Some(unauthorized("Unauthorized: bearer token required")),
        Auth::Wrong => return Some(unauthorized("Unauthorized: invalid bearer token")),
        Auth::Unavailable(why) => {
            let mut r = error_resp(
                StatusCode::SERVICE_UNAVAILABLE,
                None,
                INTERNAL_ERROR,
                "Service Unavailable: the server's tokens file cannot be used",
            );
            r.extensions_mut().insert(Reason(why.into()));
            return Some(r);
        }
    }
    match req.method {
        Method::POST => {}
        Method::DELETE if !era::header_modern(h) => {
            return Some(match header(h, "mcp-session-id") {
                None => method_not_allowed(),
                Some(id) if sh.sessions.end(id) => {
                    sh.streams.end_session(id);
                    sh.listens.end_session(id);
                    empty(StatusCode::OK)
                }
                Some(_) => error_resp(StatusCode::NOT_FOUND, None, INVALID_REQUEST, "Session not found"),
            });
        }
        Method::GET
            if !era::header_modern(h) && sh.streams.hold().is_some() && header(h, "last-event-id").is_some() =>
        {
            return Some(resume_stream(sh, h));
        }
        // RULES U3.1: a legacy session's stream of notifications, on a
        // server whose resources may change.
        Method::GET
            if !era::header_modern(h)
                && header(h, "last-event-id").is_none()
                && sh.server.catalog().offers().resources =>
        {
            return Some(session_stream(sh, h));
        }
        _ => return Some(method_not_allowed()),
    }
    if header(h, "content-type").map(media_type).as_deref() != Some("application/json") {
        return Some(error_resp(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            None,
            INVALID_REQUEST,
            "Unsupported Media Type: Content-Type must be application/json",
        ));
    }
    if let Some(accept) = header(h, "accept") {
        if !accepts_json(accept) {
            return Some(error_resp(
                StatusCode::NOT_ACCEPTABLE,
                None,
                INVALID_REQUEST,
                "Not Acceptable: Accept must include application/json",
            ));
        }
    }
    None
}

/// The session id of a `GET` that asks for a stream, or the refusal: `406`
/// without `Accept` of `text/event-stream`, `400` without a session id.
fn sse_session(h: &HeaderMap) -> Result<&str, Box<Resp>> {
    if !sse::accepts_sse(h) {
        return Err(Box::new(error_resp(
            StatusCode::NOT_ACCEPTABLE,
            None,
            INVALID_REQUEST,
            "Not Acceptable: Accept must include text/event-stream",
        )));
    }
    header(h, "mcp-session-id").ok_or_else(|| {
        Box::new(error_resp(
            StatusCode::BAD_REQUEST,
            None,
            INVALID_REQUEST,
            "Bad Request: missing Mcp-Session-Id header",
        ))
    })
}

/// `GET` without `Last-Event-ID` (RULES U3.1): the session's stream of
/// notifications (a new one ends the session's earlier one).
fn session_stream(sh: &Shared, h: &HeaderMap) -> Resp {
    let sid = match sse_session(h) {
        Ok(sid) => sid,
        Err(r) => return *r,
    };
    match sh.sessions.with(sid, |s| s.initialized.then(|| s.subscriptions.clone())) {
        Some(Some(filter)) => sh.listens.session_stream(&sh.server, sid, &filter),
        _ => error_resp(StatusCode::NOT_FOUND, None, INVALID_REQUEST, "Session not found"),
    }
}

/// `GET` with `Last-Event-ID` (RULES H8): a new connection to the
/// resumable stream of this session that the id names, from the event
/// after it.
fn resume_stream(sh: &Shared, h: &HeaderMap) -> Resp {
    let sid = match sse_session(h) {
        Ok(sid) => sid,
        Err(r) => return *r,
    };
    if sh.sessions.with(sid, |_| ()).is_none() {
        return error_resp(StatusCode::NOT_FOUND, None, INVALID_REQUEST, "Session not found");
    }
    let last = header(h, "last-event-id").unwrap_or_default();
    match (sh.streams.find(last, sid), sh.streams.hold()) {
        (Some((key, log, from)), Some(hold)) => resume::connection(key, log, from, hold, None),
        _ => error_resp(
            StatusCode::BAD_REQUEST,
            None,
            INVALID_REQUEST,
            "Bad Request: Last-Event-ID names no stream of this session (it ended or expired)",
        ),
    }
}

/// How much of a body is read, and for how long, before an answer given on
/// the headers alone ([`preflight`]), so that the connection can carry the
/// client's next request. Hyper closes a connection whose request body was
/// not read to its end, without telling the client; a client that then
/// reuses it loses its next request.
const DRAIN_LIMIT: usize = 64 << 10;
const DRAIN_TIME: Duration = Duration::from_secs(1);

/// `r` after the rest of the request's body is read (RULES H1.2); when it is larger than
/// [`DRAIN_LIMIT`] or slower than [`DRAIN_TIME`], `r` says the connection
/// closes.
async fn after_draining(body: HyperBody, r: Resp) -> Resp {
    match tokio::time::timeout(DRAIN_TIME, Limited::new(body, DRAIN_LIMIT).collect()).await {
        Ok(Ok(_)) => r,
        _ => closing(r),
    }
}

async fn handle_request(sh: &Shared, req: Request<HyperBody>, mut via: Option<Via>, facts: &mut Facts) -> Resp {
    let (parts, body) = req.into_parts();
    if let Some(r) = preflight(sh, &parts, facts) {
        return after_draining(body, r).await;
    }
    if let Some(http) = via.as_mut().and_then(|v| v.http.as_mut()) {
        http.user = facts.token.as_deref().map(String::from);
    }
    let too_large = || {
        error_resp(
            StatusCode::PAYLOAD_TOO_LARGE,
            None,
            INVALID_REQUEST,
            "Payload Too Large: request body over the limit",
        )
    };
    // A body declared over the limit is not read (RULES H1.2): the
    // connection closes after the answer.
    let declared = header(&parts.headers, "content-length").and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > sh.max_body as u64) {
        return closing(too_large());
    }
    let body = match Limited::new(body, sh.max_body).collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => return closing(too_large()),
        Err(_) => {
            return closing(error_resp(StatusCode::BAD_REQUEST, None, INVALID_REQUEST, "Bad Request: body not read"))
        }
    };
    let h = &parts.headers;
    let incoming = match parse_line(&body) {
        Incoming::Blank => Incoming::ParseError,
        i => i,
    };
    let msg = match &incoming {
        Incoming::Message(m) => m,
        Incoming::ClientResponse => {
            // RULES A1.2: the answer to a question of a running tool, from
            // the session whose call asked it.
            crate::asks::deliver(&body, header(h, "mcp-session-id"));
            return empty(StatusCode::ACCEPTED);
        }
        _ => {
            let a = sh.answer_here(&mut LegacyState::default(), incoming, None);
            return respond(StatusCode::BAD_REQUEST, a.line.unwrap_or_default());
        }
    };
    facts.note(h, msg);
    if msg.method == "tools/call" {
        if let (Some(name), Err(secs)) =
            (&facts.token, facts.token.as_ref().map_or(Ok(()), |n| sh.limits.take(n, facts.per_minute)))
        {
            let message = format!(
                "Too Many Requests: the token \"{name}\" may make {} tool calls per minute",
                facts.per_minute.unwrap_or(0)
            );
            let mut r = error_resp(StatusCode::TOO_MANY_REQUESTS, msg.id.as_deref(), INVALID_REQUEST, &message);
            if let Ok(v) = HeaderValue::from_str(&secs.to_string()) {
                r.headers_mut().insert(hyper::header::RETRY_AFTER, v);
            }
            return r;
        }
    }
    match era::choose(h, msg) {
        // An MCP-Protocol-Version header naming no version we know: the
        // unsupported-version error, which a probing client recognises.
        Choice::Unknown(v) => {
            let mut data = Vec::new();
            projection::write_unsupported_version_data(&mut data, v);
            let message = standard_message(UNSUPPORTED_VERSION);
            let line = rpc_error(msg.id.as_deref(), UNSUPPORTED_VERSION, message, Some(&data));
            respond(StatusCode::BAD_REQUEST, line)
        }
        Choice::Modern { body } => {
            if let Err(what) = mirrored::check(h, msg, body) {
                return mirrored::mismatch(msg.id.as_deref(), &what);
            }
            modern(sh, h, incoming, via, facts.token.clone()).await
        }
        Choice::Legacy => legacy(sh, h, incoming, via, facts.token.clone()).await,
    }
}

/// A modern request whose headers mirror its body; `caller` is its token's
/// name (its lane in the queue of calls, RULES N3.3).
async fn modern(sh: &Shared, h: &HeaderMap, incoming: Incoming, via: Option<Via>, caller: Caller) -> Resp {
    let Incoming::Message(msg) = &incoming else { unreachable!("only messages reach here") };
    if msg.id.is_none() {
        // Accepted and ignored (no modern client notification exists).
        let _ = sh.answer_here(&mut LegacyState::default(), incoming, via.as_ref());
        return empty(StatusCode::ACCEPTED);
    }
    if msg.method == "tools/call" {
        return call_tool(sh, h, LegacyState::default(), incoming, None, via, caller).await;
    }
    if msg.method == crate::subscriptions::LISTEN
        && (sh.server.catalog().offers().resources || sh.server.tasks().is_some())
    {
        return sh.listen(h, incoming, via.as_ref(), caller.as_deref());
    }
    match sh.answer_or_wait(&mut LegacyState::default(), incoming, via.as_ref(), caller.as_deref()) {
        Ok(a) => answer_resp(a),
        Err(w) => answer_resp(Answer { line: Some(w.line()), code: None, outcome: "ok" }),
    }
}

async fn legacy(sh: &Shared, h: &HeaderMap, incoming: Incoming, mut via: Option<Via>, caller: Caller) -> Resp {
    let Incoming::Message(msg) = &incoming else { unreachable!("only messages reach here") };
    let id = msg.id.clone();
    let Some(sid) = header(h, "mcp-session-id") else {
        if msg.method == "initialize" && id.is_some() {
            let mut state = LegacyState::default();
            let a = sh.answer_here(&mut state, incoming, via.as_ref());
            let mut r = legacy_resp(a);
            if state.initialized {
                let Some(sid) = sh.sessions.mint(state) else {
                    return error_resp(
                        StatusCode::SERVICE_UNAVAILABLE,
                        id.as_deref(),
                        crate::codes::INTERNAL_ERROR,
                        "Service Unavailable: no session id (the operating system's random source failed)",
                    );
                };
                if let Ok(v) = HeaderValue::from_str(&sid) {
                    r.headers_mut().insert("mcp-session-id", v);
                }
            }
            return r;
        }
        return error_resp(
            StatusCode::BAD_REQUEST,
            id.as_deref(),
            INVALID_REQUEST,
            "Bad Request: missing Mcp-Session-Id header",
        );
    };
    let not_found = || error_resp(StatusCode::NOT_FOUND, id.as_deref(), INVALID_REQUEST, "Session not found");
    if let Some(HttpVia { session_id, .. }) = via.as_mut().and_then(|v| v.http.as_mut()) {
        *session_id = Some(sid.to_string());
    }
    if msg.method == "tools/call" && id.is_some() {
        let Some(state) = sh.sessions.with(sid, |s| s.clone()) else { return not_found() };
        return call_tool(sh, h, state, incoming, Some(sid), via, caller).await;
    }
    if msg.method == "notifications/cancelled" && id.is_none() && sh.sessions.with(sid, |_| ()).is_some() {
        sh.calls.cancel_in_session(sid, msg.params.as_ref());
    }
    match sh.sessions.with(sid, |s| sh.answer_or_wait(s, incoming, via.as_ref(), caller.as_deref())) {
        Some(Ok(a)) => legacy_resp(a),
        // RULES V3.2: tasks/result waits for its task, outside the
        // sessions' lock.
        Some(Err(w)) => {
            w.wait().await;
            legacy_resp(Answer { line: Some(w.line()), code: None, outcome: "ok" })
        }
        None => not_found(),
    }
}

/// The answer on a connection over the limit: `503` with `Retry-After`, and
/// the connection closes. What the client sent is read first (briefly, up to
/// 64 kB), so that closing does not reset the connection before the client
/// reads the answer.
async fn too_busy(req: Request<HyperBody>) -> Resp {
    let _ = tokio::time::timeout(Duration::from_secs(1), Limited::new(req.into_body(), 64 << 10).collect()).await;
    let mut r = error_resp(
        StatusCode::SERVICE_UNAVAILABLE,
        None,
        INTERNAL_ERROR,
        "Service Unavailable: too many connections, retry later",
    );
    r.headers_mut().insert(hyper::header::RETRY_AFTER, HeaderValue::from_static("1"));
    r
}
