//! Resumable SSE streams of legacy sessions, for SSE polling (RULES H8;
//! the 2025-11-25 transport's "Resumability and Redelivery"): with
//! [`HttpOptions::stream_hold`](super::HttpOptions) set, the events of a
//! 2025-11-25 session's tool call go to a [`Log`] instead of straight to its
//! connection. A connection reads the log from a position ([`connection`]):
//! the priming event first (an event id, the `retry` field, empty data;
//! a resumed connection repeats the id of the last event the client read),
//! then each event with its id, until the call's answer, or until it has
//! been held for the hold time; then it sends `retry` again and closes, and
//! the client reconnects with `GET` and `Last-Event-ID` for the events
//! after that id. The call goes on while no connection is open (for a
//! legacy call a disconnect is no cancellation, C6).
//!
//! An event id is `<stream key>-<position>`: the key is 16 random bytes
//! (hexadecimal) from the OS random source, so that an id names its stream
//! and cannot be guessed; a stream is found only from the session that
//! opened it. The logs are bounded in number; a finished stream's log is
//! kept for the session's idle time after its last read, then dropped.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use bytes::Bytes;

use super::access::PendingOutcome;
use super::response::{sse_event, sse_response, Resp};

/// The `retry` field the server sends (milliseconds): how long a client
/// waits before it reconnects.
pub(super) const RETRY_MS: u64 = 500;

/// How long a finished stream is kept after a connection last read it
/// (at least; one hold time when that is longer).
pub(super) const KEEP_STREAM: Duration = Duration::from_secs(60);

/// Most stream logs kept at once; a call beyond them is streamed as
/// before, without ids.
const MAX_LOGS: usize = 4096;

/// The events of one resumable stream: their data (the priming event's is
/// empty) and whether the stream is over (the answer, or no answer).
pub(super) struct Log {
    session: String,
    inner: Mutex<Inner>,
    /// Woken when an event is added or the stream ends.
    changed: tokio::sync::Notify,
}

struct Inner {
    events: Vec<Bytes>,
    done: bool,
    /// When a connection last read it (or it was made).
    read: Instant,
}

impl Log {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Add the event carrying `line` (one JSON-RPC message).
    pub(super) fn push(&self, line: &[u8]) {
        self.lock().events.push(Bytes::copy_from_slice(line));
        self.changed.notify_waiters();
    }

    /// The stream is over: a connection reading it ends after its last
    /// event.
    pub(super) fn finish(&self) {
        self.lock().done = true;
        self.changed.notify_waiters();
    }
}

/// The stream logs of one bound server, by stream key.
pub(super) struct Streams {
    hold: Option<Duration>,
    keep: Duration,
    map: Mutex<HashMap<String, Arc<Log>>>,
}

impl Streams {
    pub(super) fn new(hold: Option<Duration>, keep: Duration) -> Streams {
        Streams { hold, keep, map: Mutex::new(HashMap::new()) }
    }

    /// How long a connection is held, when streams are resumable.
    pub(super) fn hold(&self) -> Option<Duration> {
        self.hold
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Arc<Log>>> {
        self.map.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A new stream for `session`, its priming event logged; `None` when
    /// streams are not resumable, the store is full or the OS random source
    /// failed.
    pub(super) fn open(&self, session: &str) -> Option<(String, Arc<Log>)> {
        self.hold?;
        let mut raw = [0u8; 16];
        getrandom::fill(&mut raw).ok()?;
        let key: String = raw.iter().map(|b| format!("{b:02x}")).collect();
        let log = Arc::new(Log {
            session: session.to_string(),
            inner: Mutex::new(Inner { events: vec![Bytes::new()], done: false, read: Instant::now() }),
            changed: tokio::sync::Notify::new(),
        });
        let mut map = self.lock();
        let now = Instant::now();
        // Finished streams not read for the session's idle time are gone.
        map.retain(|_, l| {
            let i = l.lock();
            !(i.done && now.saturating_duration_since(i.read) >= self.keep)
        });
        if map.len() >= MAX_LOGS {
            return None;
        }
        map.insert(key.clone(), log.clone());
        Some((key, log))
    }

    /// The stream a `Last-Event-ID` of `session` names, and the position
    /// after that event; `None` for an id of no stream of this session.
    pub(super) fn find(&self, last_event_id: &str, session: &str) -> Option<(String, Arc<Log>, usize)> {
        let (key, pos) = last_event_id.trim().rsplit_once('-')?;
        let pos: usize = pos.parse().ok()?;
        let log = self.lock().get(key).cloned()?;
        if log.session != session || pos >= log.lock().events.len() {
            return None;
        }
        Some((key.to_string(), log, pos + 1))
    }

    /// Forget every stream of a session that ended.
    pub(super) fn end_session(&self, session: &str) {
        self.lock().retain(|_, l| l.session != session);
    }
}

/// One event: its id, the `retry` field with the priming event, and its
/// data (the priming event's is empty).
fn event(key: &str, pos: usize, data: &[u8]) -> Bytes {
    let id = format!("id: {key}-{pos}\n");
    if data.is_empty() {
        return Bytes::from(format!("{id}retry: {RETRY_MS}\ndata: \n\n"));
    }
    let message = sse_event(data);
    let mut out = Vec::with_capacity(id.len() + message.len());
    out.extend_from_slice(id.as_bytes());
    out.extend_from_slice(&message);
    Bytes::from(out)
}

/// The SSE response of a connection to stream `key` from position `from`,
/// held at most `hold`: the events logged and to come, until the stream
/// ends or the hold time is over (then `retry` and the end of the
/// connection, not of the stream). `outcome`, the access-log outcome of the
/// connection that carries the call's request, is `polled` when it closes
/// before the answer (RULES H7.1).
pub(super) fn connection(
    key: String,
    log: Arc<Log>,
    from: usize,
    hold: Duration,
    outcome: Option<PendingOutcome>,
) -> Resp {
    let (tx, rx) = tokio::sync::mpsc::channel(8);
    tokio::spawn(pump(key, log, from, hold, tx, outcome));
    sse_response(rx)
}

async fn pump(
    key: String,
    log: Arc<Log>,
    mut next: usize,
    hold: Duration,
    tx: tokio::sync::mpsc::Sender<Bytes>,
    outcome: Option<PendingOutcome>,
) {
    let until = tokio::time::Instant::now() + hold;
    // A resumed connection starts with the client's position again (the id
    // of the last event it read, no data, so nothing is delivered twice):
    // a client that remembers only the ids of the current connection (the
    // TypeScript SDK) still has one to come back with after a connection
    // that carried no other event.
    if next > 0 && tx.send(event(&key, next - 1, b"")).await.is_err() {
        return;
    }
    loop {
        // Registered before looking, so that an event added after the look
        // wakes this connection.
        let changed = log.changed.notified();
        let (batch, done) = {
            let mut i = log.lock();
            i.read = Instant::now();
            (i.events.get(next..).map(<[Bytes]>::to_vec).unwrap_or_default(), i.done)
        };
        for data in batch {
            if tx.send(event(&key, next, &data)).await.is_err() {
                return;
            }
            next += 1;
        }
        if done {
            return;
        }
        tokio::select! {
            () = changed => {}
            () = tokio::time::sleep_until(until) => {
                if let Some(o) = &outcome {
                    o.set("polled");
                }
                let _ = tx.send(Bytes::from(format!("retry: {RETRY_MS}\n\n"))).await;
                return;
            }
            () = tx.closed() => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_ids_name_their_stream_and_session() {
        let s = Streams::new(Some(Duration::from_secs(1)), Duration::from_secs(60));
        let (key, log) = s.open("sess-a").unwrap();
        assert_eq!(key.len(), 32);
        log.push(b"{\"a\":1}");
        assert_eq!(&event(&key, 0, b"")[..], format!("id: {key}-0\nretry: {RETRY_MS}\ndata: \n\n").as_bytes());
        assert_eq!(&event(&key, 1, b"{}")[..], format!("id: {key}-1\nevent: message\ndata: {{}}\n\n").as_bytes());
        // After the priming event: the next position is 1.
        let (_, _, from) = s.find(&format!("{key}-0"), "sess-a").unwrap();
        assert_eq!(from, 1);
        assert_eq!(s.find(&format!("{key}-1"), "sess-a").unwrap().2, 2);
        // Another session, an event not sent yet, a malformed id: none.
        assert!(s.find(&format!("{key}-0"), "sess-b").is_none());
        assert!(s.find(&format!("{key}-2"), "sess-a").is_none());
        assert!(s.find("nonsense", "sess-a").is_none());
        assert!(s.find(&format!("{key}-x"), "sess-a").is_none());
        s.end_session("sess-a");
        assert!(s.find(&format!("{key}-0"), "sess-a").is_none());
        // Not resumable without a hold time.
        assert!(Streams::new(None, Duration::from_secs(60)).open("s").is_none());
    }
}
