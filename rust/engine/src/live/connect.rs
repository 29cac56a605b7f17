//! The server's side of a live session (RULES R10.5, R10.6): list the
//! sessions in the directory, connect to one (the peer must be this user),
//! and run one call from start to outcome.
//!
//! A call goes out as a `call` message; the session answers `started` when
//! R takes it (R was idle at the prompt) and `result` when it ends. While
//! it has not started the server waits at most `wait`, then withdraws it
//! with `cancel`; the session's reading thread answers `cancelled` (it will
//! never run) or the `started` that crossed the cancel (it runs now, and the
//! server waits for it). Each wait is cut in slices so the caller can stop
//! at an interrupt (a cancelled tool call in the server).

use std::fs;
use std::io;
use std::os::unix::fs::FileTypeExt;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError};
use serde_json::{json, Map, Value};

use super::frame::{read_frame, write_frame, Frame};
use super::{check_peer, dir, no_sigpipe, PROTOCOL};
use crate::signals::spawn_masked;

/// How long the server waits for the session to confirm a withdrawal (its
/// reading thread answers at once; R is not involved).
const WITHDRAW_WAIT: Duration = Duration::from_secs(5);

/// Why a session cannot be reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConnectError {
    /// No socket of that name.
    Missing,
    /// A socket nobody listens on (its R exited without closing).
    Stale,
    /// The session refused (another user, another protocol version).
    Refused(String),
    /// Anything else.
    Failed(String),
}

impl ConnectError {
    /// The message, naming session `id`.
    pub fn message(&self, id: &str) -> String {
        match self {
            ConnectError::Missing => format!("there is no R session \"{id}\""),
            ConnectError::Stale => format!("the R session \"{id}\" is gone (its R exited without closing it)"),
            ConnectError::Refused(m) => format!("the R session \"{id}\" refused the connection: {m}"),
            ConnectError::Failed(m) => format!("the R session \"{id}\" could not be reached: {m}"),
        }
    }
}

/// What a connection's reading thread hands over.
enum Event {
    Frame(Frame),
    Closed(String),
}

/// How a call ended.
#[derive(Debug)]
pub enum Outcome {
    /// The session ran it: its `result` message.
    Done(Frame),
    /// It did not start within the wait (the user's code kept R busy) and
    /// was withdrawn: it will not run.
    Busy,
    /// The connection ended (the session closed or R exited).
    Gone { started: bool, reason: String },
    /// The caller's `interrupted()` said stop; a started call runs on in
    /// the session, and its result is ignored.
    Interrupted { started: bool },
}

/// A connection to one session.
pub struct Session {
    pub id: String,
    stream: UnixStream,
    rx: Receiver<Event>,
    next_id: u64,
}

impl Session {
    /// Connect to session `id` in `dir` (verified by the caller with
    /// [`dir::open`]) and greet it.
    pub fn connect(dir_path: &Path, id: &str, timeout: Duration) -> Result<Session, ConnectError> {
        let path = dir::socket_path(dir_path, id).map_err(ConnectError::Failed)?;
        let stream = match UnixStream::connect(&path) {
            Ok(s) => s,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(ConnectError::Missing),
            Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => return Err(ConnectError::Stale),
            Err(e) => return Err(ConnectError::Failed(e.to_string())),
        };
        check_peer(&stream).map_err(|e| ConnectError::Refused(e.to_string()))?;
        no_sigpipe(&stream);
        let mut reader = stream.try_clone().map_err(|e| ConnectError::Failed(e.to_string()))?;
        let (tx, rx) = crossbeam_channel::unbounded();
        spawn_masked("mcplite-live-client", move || loop {
            match read_frame(&mut reader) {
                Ok(Some(f)) => {
                    if tx.send(Event::Frame(f)).is_err() {
                        return;
                    }
                }
                Ok(None) => {
                    let _ = tx.send(Event::Closed("the session closed the connection".into()));
                    return;
                }
                Err(e) => {
                    let _ = tx.send(Event::Closed(e.to_string()));
                    return;
                }
            }
        })
        .map_err(|e| ConnectError::Failed(e.to_string()))?;
        let mut s = Session { id: id.to_string(), stream, rx, next_id: 1 };
        s.send(&json!({"type": "hello", "protocol": PROTOCOL}), &[])
            .map_err(|e| ConnectError::Failed(e.to_string()))?;
        match s.expect("hello", timeout) {
            Ok(_) => Ok(s),
            Err(m) => Err(ConnectError::Refused(m)),
        }
    }

    fn send(&self, header: &Value, body: &[u8]) -> io::Result<()> {
        write_frame(&self.stream, header, body)
    }

    /// The next message of type `kind` (others are skipped); an `error` or
    /// `refused` message, the end of the connection or the timeout is an
    /// `Err` with the reason.
    fn expect(&mut self, kind: &str, timeout: Duration) -> Result<Frame, String> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(Event::Frame(f)) if f.kind() == kind => return Ok(f),
                Ok(Event::Frame(f)) if matches!(f.kind(), "error" | "refused") => {
                    return Err(f.header.get("message").and_then(Value::as_str).unwrap_or("refused").to_string())
                }
                Ok(Event::Frame(_)) => {}
                Ok(Event::Closed(r)) => return Err(r),
                Err(RecvTimeoutError::Timeout) => return Err(format!("no answer within {} s", timeout.as_secs_f64())),
                Err(RecvTimeoutError::Disconnected) => return Err("the connection ended".into()),
            }
        }
    }

    /// The session's description (see `list_r_sessions`).
    pub fn info(&mut self, timeout: Duration) -> Result<Value, String> {
        self.send(&json!({"type": "info"}), &[]).map_err(|e| e.to_string())?;
        let f = self.expect("info", timeout)?;
        Ok(f.header.get("info").cloned().unwrap_or(Value::Null))
    }

    /// Run one call: `fields` go into the `call` header, `body` is the call
    /// itself. Waits at most `wait` for the session to start it, then as
    /// long as it runs; `interrupted` is asked every `slice`.
    pub fn call(
        &mut self,
        fields: Map<String, Value>,
        body: &[u8],
        wait: Duration,
        slice: Duration,
        interrupted: impl FnMut() -> bool,
    ) -> Outcome {
        self.call_watched(fields, body, wait, slice, interrupted, || {})
    }

    /// [`Session::call`], with `on_started` called once when the session
    /// starts the call (the wait for a busy session is over: RULES N3.2's
    /// heartbeats say so).
    pub fn call_watched(
        &mut self,
        fields: Map<String, Value>,
        body: &[u8],
        wait: Duration,
        slice: Duration,
        mut interrupted: impl FnMut() -> bool,
        mut on_started: impl FnMut(),
    ) -> Outcome {
        let id = self.next_id;
        self.next_id += 1;
        let mut h = fields;
        h.insert("type".into(), Value::from("call"));
        h.insert("id".into(), Value::from(id));
        if let Err(e) = self.send(&Value::Object(h), body) {
            return Outcome::Gone { started: false, reason: e.to_string() };
        }
        let t0 = Instant::now();
        let mut started = false;
        loop {
            match self.next(id, slice) {
                Step::Started => {
                    started = true;
                    on_started();
                }
                Step::Done(f) => return Outcome::Done(f),
                Step::Cancelled => return Outcome::Busy,
                Step::Closed(reason) => return Outcome::Gone { started, reason },
                Step::Nothing => {}
            }
            if interrupted() {
                // Also for a call that started: the session interrupts it
                // (RULES R10.6), and its result, if it comes, is ignored.
                let withdrawal = self.withdraw(id, slice);
                let started = started || matches!(withdrawal, Withdrawal::Started | Withdrawal::Done(_));
                return Outcome::Interrupted { started };
            }
            if !started && t0.elapsed() >= wait {
                match self.withdraw(id, slice) {
                    Withdrawal::Withdrawn => return Outcome::Busy,
                    Withdrawal::Started => {
                        started = true;
                        on_started();
                    }
                    Withdrawal::Done(f) => return Outcome::Done(f),
                    Withdrawal::Gone(reason) => return Outcome::Gone { started, reason },
                }
            }
        }
    }

    /// Take back call `id`, which has not started: the session's reading
    /// thread confirms (`cancelled`) or says it started just now. No answer
    /// within [`WITHDRAW_WAIT`] counts as withdrawn (a result arriving later
    /// is ignored).
    fn withdraw(&mut self, id: u64, slice: Duration) -> Withdrawal {
        if self.send(&json!({"type": "cancel", "id": id}), &[]).is_err() {
            return Withdrawal::Gone("the connection ended".into());
        }
        let until = Instant::now() + WITHDRAW_WAIT;
        while Instant::now() < until {
            match self.next(id, slice) {
                Step::Started => return Withdrawal::Started,
                Step::Done(f) => return Withdrawal::Done(f),
                Step::Cancelled => return Withdrawal::Withdrawn,
                Step::Closed(reason) => return Withdrawal::Gone(reason),
                Step::Nothing => {}
            }
        }
        Withdrawal::Withdrawn
    }

    /// What happened to call `id` in the next `slice` (messages about
    /// earlier calls, whose results nobody waits for, are dropped).
    fn next(&mut self, id: u64, slice: Duration) -> Step {
        match self.rx.recv_timeout(slice) {
            Ok(Event::Frame(f)) if f.id() == Some(id) => match f.kind() {
                "started" => Step::Started,
                "result" => Step::Done(f),
                "cancelled" => Step::Cancelled,
                _ => Step::Nothing,
            },
            Ok(Event::Frame(f)) if f.kind() == "error" => {
                Step::Closed(f.header.get("message").and_then(Value::as_str).unwrap_or("error").to_string())
            }
            Ok(Event::Frame(_)) | Err(RecvTimeoutError::Timeout) => Step::Nothing,
            Ok(Event::Closed(r)) => Step::Closed(r),
            Err(RecvTimeoutError::Disconnected) => Step::Closed("the connection ended".into()),
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
    }
}

enum Withdrawal {
    Withdrawn,
    Started,
    Done(Frame),
    Gone(String),
}

enum Step {
    Started,
    Done(Frame),
    Cancelled,
    Closed(String),
    Nothing,
}

/// The sessions in `dir` (verified by the caller): each one's info, or its
/// id and why it could not be asked. Sockets nobody listens on any more are
/// removed. Sessions are asked at the same time, each for at most
/// `timeout`.
pub fn list(dir_path: &Path, timeout: Duration) -> Vec<Result<Value, (String, String)>> {
    let Ok(entries) = fs::read_dir(dir_path) else { return Vec::new() };
    let mut ids: Vec<String> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_socket()))
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.strip_suffix(".sock")).map(String::from))
        .filter(|id| dir::socket_path(dir_path, id).is_ok())
        .collect();
    ids.sort();
    let handles: Vec<_> = ids
        .into_iter()
        .map(|id| {
            let d = dir_path.to_path_buf();
            let (tx, rx) = crossbeam_channel::bounded(1);
            let idc = id.clone();
            let spawned = spawn_masked("mcplite-live-list", move || {
                let r = match Session::connect(&d, &idc, timeout) {
                    Ok(mut s) => s.info(timeout).map(Some).map_err(|m| ConnectError::Failed(m).message(&idc)),
                    Err(ConnectError::Stale) => {
                        if let Ok(p) = dir::socket_path(&d, &idc) {
                            let _ = fs::remove_file(p);
                        }
                        Ok(None)
                    }
                    Err(ConnectError::Missing) => Ok(None),
                    Err(e) => Err(e.message(&idc)),
                };
                let _ = tx.send(r);
            });
            (id, spawned.ok().map(|_| rx))
        })
        .collect();
    let mut out = Vec::new();
    for (id, rx) in handles {
        let r = rx.and_then(|rx| rx.recv_timeout(timeout * 3).ok());
        match r {
            Some(Ok(Some(info))) => out.push(Ok(info)),
            Some(Ok(None)) => {}
            Some(Err(m)) => out.push(Err((id, m))),
            None => out.push(Err((id.clone(), format!("the R session \"{id}\" did not answer")))),
        }
    }
    out
}
