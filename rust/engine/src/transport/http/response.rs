//! HTTP responses: JSON-RPC error bodies, the status of a dispatcher's
//! answer (modern and legacy differ for an unknown method), header
//! reading.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Frame;
use hyper::header::{HeaderMap, HeaderValue};
use hyper::{Response, StatusCode};

use super::access::{Outcome, Reason};
use crate::codes::{add_error_data, error_line};
use crate::codes::{
    HEADER_MISMATCH, INTERNAL_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR, UNSUPPORTED_VERSION,
};

pub(super) type Resp = Response<BoxBody<Bytes, Infallible>>;

/// The dispatcher's answer, detached from its span.
pub(super) struct Answer {
    pub(super) line: Option<Vec<u8>>,
    pub(super) code: Option<i64>,
    /// How the message ended, for the access log (RULES H7.1).
    pub(super) outcome: &'static str,
}

impl Answer {
    /// The answer of `reply` (its line moved out; the span ends when the
    /// reply is dropped).
    pub(super) fn of(reply: &mut crate::server::Reply<'_>) -> Answer {
        Answer { line: reply.take_line(), code: reply.error_code(), outcome: reply.outcome() }
    }

    /// A call cancelled before it ran: no answer (RULES C4).
    pub(super) fn cancelled() -> Answer {
        Answer { line: None, code: None, outcome: "cancelled" }
    }
}

pub(super) fn respond(status: StatusCode, body: Vec<u8>) -> Resp {
    let mut r = Response::new(Full::new(Bytes::from(body)).boxed());
    *r.status_mut() = status;
    r.headers_mut().insert(hyper::header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

pub(super) fn empty(status: StatusCode) -> Resp {
    let mut r = Response::new(Full::new(Bytes::new()).boxed());
    *r.status_mut() = status;
    r
}

/// A JSON-RPC error response (`id` is the raw id token, or `null`), with
/// `error.data` (JSON text) when given.
pub(super) fn rpc_error(id: Option<&str>, code: i64, message: &str, data: Option<&[u8]>) -> Vec<u8> {
    let mut out = error_line(id, code, message, None);
    if let Some(d) = data {
        add_error_data(&mut out, d);
    }
    out
}

/// A JSON-RPC error answer; `message` is also the access log's reason.
pub(super) fn error_resp(status: StatusCode, id: Option<&str>, code: i64, message: &str) -> Resp {
    let mut r = respond(status, rpc_error(id, code, message, None));
    r.extensions_mut().insert(Reason(message.into()));
    r
}

pub(super) fn header<'h>(h: &'h HeaderMap, name: &str) -> Option<&'h str> {
    h.get(name).map(|v| v.to_str().unwrap_or("\u{fffd}"))
}

pub(super) fn media_type(v: &str) -> String {
    v.split(';').next().unwrap_or("").trim().to_ascii_lowercase()
}

pub(super) fn accepts_json(accept: &str) -> bool {
    accept.split(',').map(media_type).any(|m| m == "application/json" || m == "application/*" || m == "*/*")
}

/// The status for a JSON-RPC answer: 404 for an unknown method, 400 for
/// parse, envelope and version errors, 200 otherwise (tool errors included).
fn status_for(code: Option<i64>) -> StatusCode {
    match code {
        Some(METHOD_NOT_FOUND) => StatusCode::NOT_FOUND,
        Some(PARSE_ERROR | INVALID_REQUEST | UNSUPPORTED_VERSION | HEADER_MISMATCH) => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    }
}

pub(super) fn answer_resp(a: Answer) -> Resp {
    let mut r = match a.line {
        Some(line) => respond(status_for(a.code), line),
        None => empty(StatusCode::ACCEPTED),
    };
    r.extensions_mut().insert(Outcome(a.outcome));
    r
}

/// A legacy answer: as [`answer_resp`], except that an unknown method is
/// `200` with the `-32601` error in the body. A legacy client takes `404`
/// to mean that its session ended (and starts a new one).
pub(super) fn legacy_resp(a: Answer) -> Resp {
    match (a.code, a.line) {
        (Some(METHOD_NOT_FOUND), Some(line)) => {
            let mut r = respond(StatusCode::OK, line);
            r.extensions_mut().insert(Outcome(a.outcome));
            r
        }
        (code, line) => answer_resp(Answer { line, code, outcome: a.outcome }),
    }
}

/// What a stopping server answers a call it will not run.
pub(super) const STOPPING: &str = "Service Unavailable: the server is stopping";

pub(super) fn unavailable() -> Resp {
    error_resp(StatusCode::SERVICE_UNAVAILABLE, None, INTERNAL_ERROR, STOPPING)
}

pub(super) fn method_not_allowed() -> Resp {
    let mut r = error_resp(StatusCode::METHOD_NOT_ALLOWED, None, INVALID_REQUEST, "Method Not Allowed: use POST");
    r.headers_mut().insert(hyper::header::ALLOW, HeaderValue::from_static("POST, DELETE"));
    r
}

/// `r`, saying that the connection closes after it (hyper then closes it).
pub(super) fn closing(mut r: Resp) -> Resp {
    r.headers_mut().insert(hyper::header::CONNECTION, HeaderValue::from_static("close"));
    r
}

// -- server-sent events (RULES C6, H8) ------------------------------------------

/// The body of an SSE response: the events its task sends, until the task
/// drops the sender. hyper drops the body when the client goes away, which
/// the task sees as its channel closing.
struct SseBody(tokio::sync::mpsc::Receiver<Bytes>);

impl hyper::body::Body for SseBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.0.poll_recv(cx).map(|event| event.map(|b| Ok(Frame::data(b))))
    }
}

/// One SSE event carrying one JSON-RPC message (a line without LF: the
/// engine's JSON never contains a raw line break).
pub(super) fn sse_event(line: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(line.len() + 24);
    out.extend_from_slice(b"event: message\ndata: ");
    out.extend_from_slice(line);
    out.extend_from_slice(b"\n\n");
    Bytes::from(out)
}

/// An SSE response whose events are what `rx` receives (the stream ends
/// when its sender is dropped).
pub(super) fn sse_response(rx: tokio::sync::mpsc::Receiver<Bytes>) -> Resp {
    let mut r = Response::new(SseBody(rx).boxed());
    let hs = r.headers_mut();
    hs.insert(hyper::header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    hs.insert(hyper::header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    hs.insert("x-accel-buffering", HeaderValue::from_static("no"));
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_header() {
        assert!(accepts_json("application/json, text/event-stream"));
        assert!(accepts_json("*/*"));
        assert!(!accepts_json("text/event-stream"));
    }
}
