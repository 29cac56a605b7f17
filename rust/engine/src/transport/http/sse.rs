//! Server-sent event responses (RULES C6): a `tools/call` with a progress
//! token, from a client that accepts `text/event-stream`, is answered by a
//! task that writes `notifications/progress` events while the tool runs,
//! then the response event, then ends the stream.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use hyper::header::HeaderMap;

use super::access::PendingOutcome;
use super::cancel::CancelOnDrop;
use super::response::{header, media_type, rpc_error, sse_event, sse_response, Answer, Resp, STOPPING};
use super::resume::{connection, Log};
use crate::codes::INTERNAL_ERROR;
use crate::progress::Progress;

/// Where a call's stream writes its events: straight to its connection, or
/// to the log of a resumable stream (RULES H8), which its connections read.
pub(super) enum Sink {
    Direct(tokio::sync::mpsc::Sender<Bytes>),
    Log(Arc<Log>),
}

impl Sink {
    /// Write the event carrying `line`; `false` when nobody will read it
    /// (the connection is gone).
    async fn send(&self, line: &[u8]) -> bool {
        match self {
            Sink::Direct(tx) => tx.send(sse_event(line)).await.is_ok(),
            Sink::Log(log) => {
                log.push(line);
                true
            }
        }
    }

    /// Resolves when nobody will read the stream any more: the connection
    /// closed. Never for a resumable stream (its client may come back).
    async fn closed(&self) {
        match self {
            Sink::Direct(tx) => tx.closed().await,
            Sink::Log(_) => std::future::pending().await,
        }
    }
}

/// Ends a resumable stream's log when its task returns, however it does.
struct FinishOnDrop(Option<Arc<Log>>);

impl Drop for FinishOnDrop {
    fn drop(&mut self) {
        if let Some(log) = self.0.take() {
            log.finish();
        }
    }
}

/// A resumable stream for a call (RULES H8): its key, its log and how long
/// a connection is held.
pub(super) struct Resumable {
    pub(super) key: String,
    pub(super) log: Arc<Log>,
    pub(super) hold: Duration,
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
    resumable: Option<Resumable>,
) -> Resp {
    if let Some(r) = resumable {
        let polled = Some(outcome.clone());
        tokio::spawn(stream_call(reply, started, None, Sink::Log(r.log.clone()), guard, raw_id, min_gap, outcome));
        return connection(r.key, r.log, 0, r.hold, polled);
    }
    let (tx, rx) = tokio::sync::mpsc::channel(8);
    tokio::spawn(stream_call(reply, started, None, Sink::Direct(tx), guard, raw_id, min_gap, outcome));
    sse_response(rx)
}

/// The answer of a call that may be resumed (RULES H8) but listens to
/// nothing else: JSON when the answer comes within the hold time;
/// otherwise a resumable stream whose answer a later connection gets.
pub(super) async fn json_or_resumable(
    mut reply: tokio::sync::oneshot::Receiver<Answer>,
    mut guard: CancelOnDrop,
    raw_id: String,
    outcome: PendingOutcome,
    open: &(dyn Fn() -> Option<Resumable> + Sync),
    hold: Duration,
) -> First {
    tokio::select! {
        biased;
        answer = &mut reply => {
            guard.armed = false;
            return First::Answer(answer);
        }
        () = tokio::time::sleep(hold) => {}
    }
    let Some(resumable) = open() else {
        // No room for its log: the answer, when it comes.
        let answer = reply.await;
        guard.armed = false;
        return First::Answer(answer);
    };
    let log = resumable.log.clone();
    let polled = Some(outcome.clone());
    // A resumable call is a legacy one, whose guard is never armed (a
    // disconnect is no cancellation, C6): nothing to disarm.
    drop(guard);
    tokio::spawn(async move {
        let _finish = FinishOnDrop(Some(log.clone()));
        let answer = reply.await;
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
            log.push(&line);
        }
    });
    // Held for the hold time already: the priming event, then `retry` and
    // the end of this connection.
    First::Stream(connection(resumable.key, resumable.log, 0, Duration::ZERO, polled))
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
/// line. So a call that asks nothing is answered as any other. A
/// resumable call (RULES H8) not answered within `hold` becomes a
/// resumable stream then, as in [`json_or_resumable`].
#[allow(clippy::too_many_arguments)]
pub(super) async fn json_or_stream(
    mut reply: tokio::sync::oneshot::Receiver<Answer>,
    mut started: tokio::sync::oneshot::Receiver<Arc<Progress>>,
    mut guard: CancelOnDrop,
    raw_id: String,
    min_gap: Duration,
    outcome: PendingOutcome,
    open: &(dyn Fn() -> Option<Resumable> + Sync),
    hold: Option<Duration>,
) -> First {
    // Disarmed when no log could be made for the stream (then the call
    // waits as a call that cannot be resumed does).
    let mut deadline = hold.map(|h| tokio::time::Instant::now() + h);
    let held = |deadline: Option<tokio::time::Instant>| async move {
        match deadline {
            Some(d) => tokio::time::sleep_until(d).await,
            None => std::future::pending().await,
        }
    };
    let progress = loop {
        tokio::select! {
            biased;
            answer = &mut reply => {
                guard.armed = false;
                return First::Answer(answer);
            }
            p = &mut started => match p {
                Ok(p) => break p,
                Err(_) => {
                    let answer = reply.await;
                    guard.armed = false;
                    return First::Answer(answer);
                }
            },
            () = held(deadline) => match open() {
                Some(r) => return resumed(reply, started, None, guard, raw_id, min_gap, outcome, r),
                None => deadline = None,
            },
        }
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
            () = held(deadline) => match open() {
                Some(r) => {
                    ender.0 = None;
                    return resumed(reply, started, Some(progress), guard, raw_id, min_gap, outcome, r);
                }
                None => deadline = None,
            },
        }
    };
    ender.0 = None;
    if let Some(r) = open() {
        r.log.push(&first);
        let polled = Some(outcome.clone());
        tokio::spawn(stream_call(
            reply,
            started,
            Some(progress),
            Sink::Log(r.log.clone()),
            guard,
            raw_id,
            min_gap,
            outcome,
        ));
        return First::Stream(connection(r.key, r.log, 0, r.hold, polled));
    }
    let (tx, rx) = tokio::sync::mpsc::channel(8);
    if tx.try_send(sse_event(&first)).is_err() {
        return First::Answer(reply.await);
    }
    tokio::spawn(stream_call(reply, started, Some(progress), Sink::Direct(tx), guard, raw_id, min_gap, outcome));
    First::Stream(sse_response(rx))
}

/// A call held for the hold time without a line for its stream (RULES H8):
/// its task writes to the resumable stream's log from now on, and this
/// connection gets the priming event, then `retry`, and closes.
#[allow(clippy::too_many_arguments)]
fn resumed(
    reply: tokio::sync::oneshot::Receiver<Answer>,
    started: tokio::sync::oneshot::Receiver<Arc<Progress>>,
    known: Option<Arc<Progress>>,
    guard: CancelOnDrop,
    raw_id: String,
    min_gap: Duration,
    outcome: PendingOutcome,
    r: Resumable,
) -> First {
    let polled = Some(outcome.clone());
    tokio::spawn(stream_call(reply, started, known, Sink::Log(r.log.clone()), guard, raw_id, min_gap, outcome));
    First::Stream(connection(r.key, r.log, 0, Duration::ZERO, polled))
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
    tx: Sink,
    mut guard: CancelOnDrop,
    raw_id: String,
    min_gap: Duration,
    outcome: PendingOutcome,
) {
    let _finish = FinishOnDrop(match &tx {
        Sink::Log(log) => Some(log.clone()),
        Sink::Direct(_) => None,
    });
    let mut waiting = known.is_none();
    // A resumable stream's client may come back: its progress goes on
    // while no connection is open.
    let mut ender = EndOnDrop(if matches!(tx, Sink::Log(_)) { None } else { known.clone() });
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
                        if !tx.send(&last).await {
                            return;
                        }
                    }
                    let _ = tx.send(&line).await;
                }
                return;
            }
            () = tx.closed() => return,
            p = &mut started, if waiting => {
                waiting = false;
                progress = p.ok();
                if matches!(tx, Sink::Direct(_)) {
                    ender.0 = progress.clone();
                }
            }
            () = tick => {
                // Everything due now: log messages go out together (RULES G3.1).
                while let Some(line) = progress.as_ref().and_then(|p| p.poll(Instant::now())) {
                    if !tx.send(&line).await {
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
    use hyper::header::HeaderValue;

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
