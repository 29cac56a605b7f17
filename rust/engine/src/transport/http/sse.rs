//! Server-sent event responses (RULES C6): a `tools/call` with a progress
//! token, from a client that accepts `text/event-stream`, is answered by a
//! task that writes `notifications/progress` events while the tool runs,
//! then the response event, then ends the stream.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::Frame;
use hyper::header::{HeaderMap, HeaderValue};
use hyper::Response;

use super::access::PendingOutcome;
use super::cancel::CancelOnDrop;
use super::response::{header, media_type, rpc_error, Answer, Resp, STOPPING};
use crate::codes::INTERNAL_ERROR;
use crate::progress::Progress;

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
fn sse_event(line: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(line.len() + 24);
    out.extend_from_slice(b"event: message\ndata: ");
    out.extend_from_slice(line);
    out.extend_from_slice(b"\n\n");
    Bytes::from(out)
}

/// Does the `Accept` header name `text/event-stream`?
pub(super) fn accepts_sse(h: &HeaderMap) -> bool {
    header(h, "accept").is_some_and(|a| a.split(',').map(media_type).any(|m| m == "text/event-stream"))
}

/// Is `r` an SSE response (still being sent when it is handed to hyper)?
pub(super) fn is_sse(r: &Resp) -> bool {
    r.headers().get(hyper::header::CONTENT_TYPE).is_some_and(|v| v.as_bytes() == b"text/event-stream")
}

/// The SSE response for a queued call: its task ([`stream_call`]) writes
/// the events.
pub(super) fn stream(
    reply: tokio::sync::oneshot::Receiver<Answer>,
    started: tokio::sync::oneshot::Receiver<Arc<Progress>>,
    guard: CancelOnDrop,
    raw_id: String,
    min_gap: Duration,
    outcome: PendingOutcome,
) -> Resp {
    let (tx, rx) = tokio::sync::mpsc::channel(8);
    tokio::spawn(stream_call(reply, started, None, tx, guard, raw_id, min_gap, outcome));
    sse_response(rx)
}

/// Ends a call's progress when its exchange goes away before the answer
/// (the client closed the stream or the connection): nobody reads its
/// notifications any more, and a question waiting for the client fails at
/// once instead of at its timeout (RULES A1.3). Disarmed by taking it.
struct EndOnDrop(Option<Arc<Progress>>);

impl Drop for EndOnDrop {
    fn drop(&mut self) {
        if let Some(p) = self.0.take() {
            p.end();
        }
    }
}

/// What [`json_or_stream`] found first.
pub(super) enum First {
    /// The answer, before the call wrote anything on its stream.
    Answer(Result<Answer, tokio::sync::oneshot::error::RecvError>),
    /// The SSE response, which starts with the call's first line.
    Stream(Resp),
}

/// The answer of a call whose client may be asked questions but listens to
/// nothing else (RULES A1.2): JSON when the answer comes before anything
/// for the call's stream, which is then an SSE response starting with that
/// line. So a call that asks nothing is answered as any other.
pub(super) async fn json_or_stream(
    mut reply: tokio::sync::oneshot::Receiver<Answer>,
    mut started: tokio::sync::oneshot::Receiver<Arc<Progress>>,
    mut guard: CancelOnDrop,
    raw_id: String,
    min_gap: Duration,
    outcome: PendingOutcome,
) -> First {
    let progress = tokio::select! {
        biased;
        answer = &mut reply => {
            guard.armed = false;
            return First::Answer(answer);
        }
        p = &mut started => match p {
            Ok(p) => p,
            Err(_) => {
                let answer = reply.await;
                guard.armed = false;
                return First::Answer(answer);
            }
        },
    };
    let mut ender = EndOnDrop(Some(progress.clone()));
    let first = loop {
        if let Some(line) = progress.poll(Instant::now()) {
            break line;
        }
        tokio::select! {
            biased;
            // Nothing is owed at the end: the client listens to no log
            // message and no progress.
            answer = &mut reply => {
                guard.armed = false;
                ender.0 = None;
                return First::Answer(answer);
            }
            () = progress.changed().notified() => {}
        }
    };
    ender.0 = None;
    let (tx, rx) = tokio::sync::mpsc::channel(8);
    if tx.try_send(sse_event(&first)).is_err() {
        return First::Answer(reply.await);
    }
    tokio::spawn(stream_call(reply, started, Some(progress), tx, guard, raw_id, min_gap, outcome));
    First::Stream(sse_response(rx))
}

fn sse_response(rx: tokio::sync::mpsc::Receiver<Bytes>) -> Resp {
    let mut r = Response::new(SseBody(rx).boxed());
    let hs = r.headers_mut();
    hs.insert(hyper::header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    hs.insert(hyper::header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    hs.insert("x-accel-buffering", HeaderValue::from_static("no"));
    r
}

/// The task behind an SSE response: progress events while the tool runs
/// (polled when due, when a report wakes it, and at least every `min_gap`),
/// then the tool's last report if it was still waiting (RULES C2.4) and the
/// response event; the stream ends when the task returns. Progress ends
/// before the response is made, and this task writes both in order, so no
/// notification follows the response.
#[allow(clippy::too_many_arguments)]
async fn stream_call(
    mut reply: tokio::sync::oneshot::Receiver<Answer>,
    mut started: tokio::sync::oneshot::Receiver<Arc<Progress>>,
    known: Option<Arc<Progress>>,
    tx: tokio::sync::mpsc::Sender<Bytes>,
    mut guard: CancelOnDrop,
    raw_id: String,
    min_gap: Duration,
    outcome: PendingOutcome,
) {
    let mut waiting = known.is_none();
    let mut ender = EndOnDrop(known.clone());
    let mut progress: Option<Arc<Progress>> = known;
    loop {
        let due = progress.as_ref().and_then(|p| p.next_due()).map(|d| d.min(Instant::now() + min_gap));
        let watched = progress.clone();
        let tick = async move {
            let sleep = async {
                match due {
                    Some(d) => tokio::time::sleep_until(tokio::time::Instant::from_std(d)).await,
                    None => std::future::pending().await,
                }
            };
            match &watched {
                // Or sooner, when a report starts waiting.
                Some(p) => tokio::select! {
                    () = sleep => {}
                    () = p.changed().notified() => {}
                },
                None => sleep.await,
            }
        };
        tokio::select! {
            biased;
            answer = &mut reply => {
                guard.armed = false;
                ender.0 = None;
                let line = match answer {
                    Ok(a) => {
                        outcome.set(a.outcome);
                        a.line
                    }
                    Err(_) => {
                        outcome.set("refused");
                        Some(rpc_error(Some(&raw_id), INTERNAL_ERROR, STOPPING, None))
                    }
                };
                if let Some(line) = line {
                    // The call started before it was answered.
                    if waiting {
                        progress = started.try_recv().ok();
                    }
                    while let Some(last) = progress.as_ref().and_then(|p| p.take_final()) {
                        if tx.send(sse_event(&last)).await.is_err() {
                            return;
                        }
                    }
                    let _ = tx.send(sse_event(&line)).await;
                }
                return;
            }
            () = tx.closed() => return,
            p = &mut started, if waiting => {
                waiting = false;
                progress = p.ok();
                ender.0 = progress.clone();
            }
            () = tick => {
                // Everything due now: log messages go out together (RULES G3.1).
                while let Some(line) = progress.as_ref().and_then(|p| p.poll(Instant::now())) {
                    if tx.send(sse_event(&line)).await.is_err() {
                        return;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sse_helpers() {
        let mut h = HeaderMap::new();
        assert!(!accepts_sse(&h));
        h.insert("accept", HeaderValue::from_static("application/json, Text/Event-Stream; q=0.9"));
        assert!(accepts_sse(&h));
        h.insert("accept", HeaderValue::from_static("application/json, */*"));
        assert!(!accepts_sse(&h), "only an explicit text/event-stream");
        assert_eq!(&sse_event(b"{\"a\":1}")[..], b"event: message\ndata: {\"a\":1}\n\n");
    }
}
