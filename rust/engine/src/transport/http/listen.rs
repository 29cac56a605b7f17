//! Streams of notifications over HTTP (RULES U3): what the [`Hub`] tells a
//! listener goes to the client as server-sent events.
//!
//! * A legacy session's stream is its `GET` (with `Mcp-Session-Id`, without
//!   `Last-Event-ID`): its `resources/subscribe` URIs and list changes. A
//!   session has at most one: a new `GET` ends the one before, and so does
//!   `DELETE` of the session.
//! * A 2026-07-28 `subscriptions/listen` request is answered with a stream
//!   whose first event is its acknowledgment; it lasts until the client
//!   closes it, and when the server stops it ends with the request's
//!   response (`resultType: "complete"`, a graceful end).
//!
//! A stream's events wait in a bounded queue: a client that does not read
//! them loses its stream (it ends; the client may open another and read
//! again), never the server's memory. A silent stream sends an SSE comment
//! every 25 s, so that proxies do not cut it as idle.
//!
//! [`Hub`]: crate::subscriptions::Hub

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::mpsc::error::TrySendError;
use tokio::sync::Notify;

use super::response::{sse_event, sse_response, Resp};
use crate::server::Server;
use crate::subscriptions::{Listener, Sink};

/// Events a stream holds for a client that has not read them yet: room for
/// the updates of every URI a filter may follow, published at once.
const QUEUE: usize = crate::subscriptions::MAX_URIS + 64;

/// What ends a session's stream from outside (a new `GET`, `DELETE`), and
/// what to forget when it ended.
type Ending = (Arc<Notify>, Box<dyn FnOnce() + Send>);

/// The streams of one HTTP server.
pub(super) struct Listens {
    /// Becomes `true` when the server stops.
    stop: tokio::sync::watch::Receiver<bool>,
    /// Ends the `GET` stream of a legacy session, by session id.
    sessions: Arc<Mutex<HashMap<String, Arc<Notify>>>>,
    /// How often a silent stream sends a comment.
    keepalive: std::time::Duration,
    /// Streams open now, and the most at once: half the server's
    /// connections, so that streams never take the places requests need.
    open: Arc<std::sync::atomic::AtomicUsize>,
    max: usize,
}

impl Listens {
    pub(super) fn new(
        stop: tokio::sync::watch::Receiver<bool>,
        keepalive: std::time::Duration,
        max_connections: usize,
    ) -> Listens {
        Listens {
            stop,
            sessions: Arc::new(Mutex::new(HashMap::new())),
            keepalive,
            open: Arc::new(std::sync::atomic::AtomicUsize::new(0)),
            max: (max_connections / 2).max(1),
        }
    }

    /// The `GET` stream of the legacy session `sid`; the session's earlier
    /// one ends.
    pub(super) fn session_stream(
        &self,
        server: &Server,
        sid: &str,
        filter: &crate::subscriptions::SessionFilter,
    ) -> Resp {
        let end = Arc::new(Notify::new());
        let before = self.lock().insert(sid.to_owned(), Arc::clone(&end));
        if let Some(b) = before {
            b.notify_one();
        }
        let (map, key, mine) = (Arc::clone(&self.sessions), sid.to_owned(), Arc::clone(&end));
        let forget = move || {
            // The entry is this stream's unless a newer GET replaced it.
            let mut m = map.lock().unwrap_or_else(PoisonError::into_inner);
            if m.get(&key).is_some_and(|e| Arc::ptr_eq(e, &mine)) {
                m.remove(&key);
            }
        };
        self.open(server, None, |sink| Listener::session(filter, sink), None, Some((end, Box::new(forget))))
    }

    /// The legacy session `sid` ended: so does its `GET` stream.
    pub(super) fn end_session(&self, sid: &str) {
        if let Some(end) = self.lock().remove(sid) {
            end.notify_one();
        }
    }

    /// The stream of an accepted `subscriptions/listen` request `id` (JSON
    /// text): `ack` first, then what its listener hears; `closing` when the
    /// server stops.
    pub(super) fn listen_stream(
        &self,
        server: &Server,
        id: &str,
        filter: crate::subscriptions::Filter,
        ack: Vec<u8>,
    ) -> Resp {
        let info = server.info();
        let closing =
            crate::subscriptions::closing(id, &crate::projection::server_info_json(&info.name, &info.version));
        self.open(server, Some(ack), |sink| Listener::stream(id, filter, sink), Some(closing), None)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Notify>>> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The SSE response of a new stream: `first` (if any), then what the
    /// listener `make` builds hears, until the client goes, the stream's
    /// queue overflows, `end` is notified (then its clean-up runs), the
    /// listener's session ends (seen at the next keepalive) or the server
    /// stops (then `closing`, if any, is its last event).
    fn open(
        &self,
        server: &Server,
        first: Option<Vec<u8>>,
        make: impl FnOnce(Sink) -> Arc<Listener>,
        closing: Option<Vec<u8>>,
        end: Option<Ending>,
    ) -> Resp {
        use std::sync::atomic::Ordering;
        // Half the connections at most (RULES U3.3): a client that opens
        // streams cannot take every place.
        let open = Arc::clone(&self.open);
        if open.fetch_add(1, Ordering::SeqCst) >= self.max {
            open.fetch_sub(1, Ordering::SeqCst);
            let mut r = super::response::error_resp(
                hyper::StatusCode::SERVICE_UNAVAILABLE,
                None,
                crate::codes::INTERNAL_ERROR,
                "Service Unavailable: too many notification streams are open, retry later",
            );
            r.headers_mut().insert(hyper::header::RETRY_AFTER, hyper::header::HeaderValue::from_static("5"));
            return r;
        }
        let (tx, rx) = tokio::sync::mpsc::channel(QUEUE);
        if let Some(f) = first {
            let _ = tx.try_send(sse_event(&f));
        }
        let overflow = Arc::new(Notify::new());
        let (sink_tx, full) = (tx.clone(), Arc::clone(&overflow));
        let listener = make(Box::new(move |line| match sink_tx.try_send(sse_event(&line)) {
            Ok(()) => true,
            Err(TrySendError::Full(_)) => {
                full.notify_one();
                false
            }
            Err(TrySendError::Closed(_)) => false,
        }));
        // Heard only after the first event is queued (RULES U3.3: nothing
        // before the acknowledgment).
        server.hub().add(&listener);
        let mut stop = self.stop.clone();
        let keepalive = self.keepalive.max(std::time::Duration::from_millis(10));
        let (end, forget) = match end {
            Some((e, f)) => (Some(e), Some(f)),
            None => (None, None),
        };
        tokio::spawn(async move {
            let ended = async {
                match end {
                    Some(e) => e.notified().await,
                    None => std::future::pending().await,
                }
            };
            tokio::pin!(ended);
            let mut beat = tokio::time::interval_at(tokio::time::Instant::now() + keepalive, keepalive);
            let stopped = loop {
                tokio::select! {
                    () = tx.closed() => break false,
                    () = overflow.notified() => break false,
                    () = &mut ended => break false,
                    r = stop.wait_for(|stopped| *stopped) => break r.is_ok(),
                    _ = beat.tick() => {
                        // A comment line: proxies that cut a silent
                        // connection keep this one.
                        if listener.is_closed() || tx.try_send(bytes::Bytes::from_static(b": keepalive\n\n")).is_err() {
                            break false;
                        }
                    }
                }
            };
            if let (true, Some(c)) = (stopped, closing) {
                let _ = tx.send(sse_event(&c)).await;
            }
            // The listener and both senders go: the hub forgets it and the
            // response's body ends.
            drop(listener);
            if let Some(f) = forget {
                f();
            }
            open.fetch_sub(1, Ordering::SeqCst);
        });
        sse_response(rx)
    }
}
