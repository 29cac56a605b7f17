//! Questions a running tool asks the client (RULES section 18): the user,
//! with `elicitation/create`, or the client's model, with
//! `sampling/createMessage`.
//!
//! In the legacy versions the question is a request from the server, sent
//! on the call's own stream (a stdio line while the tool runs, or an event
//! of the call's SSE answer), and the tool waits for the client's response:
//! [`ask`] queues the request line on the call's [`Progress`] and waits in
//! the registry of questions until a transport hands the response to
//! [`deliver`], the call is cancelled, the caller's `stop` says so, or the
//! time runs out.
//!
//! Only a client that declared the capability is asked (its `initialize`
//! capabilities, [`Asks`]); otherwise [`ask`] says so at once, and the
//! tool fails with a message a model can act on.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::Value;

pub use crate::ask_state::{AskError, AskKind, Asks, Rounds};
use crate::progress::{Inflight, Progress};

/// A question waiting for its answer.
struct Waiting {
    /// The legacy HTTP session that may answer it (`None` on stdio).
    scope: Option<String>,
    answer: Option<Result<Value, String>>,
}

static WAITING: Mutex<Option<HashMap<String, Waiting>>> = Mutex::new(None);
static ANSWERED: Condvar = Condvar::new();
/// How many questions wait: a transport looks at responses only then.
static PENDING: AtomicUsize = AtomicUsize::new(0);
static NEXT: AtomicU64 = AtomicU64::new(1);

fn waiting() -> MutexGuard<'static, Option<HashMap<String, Waiting>>> {
    WAITING.lock().unwrap_or_else(|e| e.into_inner())
}

/// Does any question wait for an answer? (A transport checks this before
/// it looks for one in a response.)
pub fn pending() -> bool {
    PENDING.load(Ordering::SeqCst) > 0
}

/// The prefix of the ids of the server's questions.
pub const ID_PREFIX: &str = "mcplite-ask-";

/// A response from the client (one JSON-RPC message, as read), from the
/// legacy HTTP session `scope` (`None` on stdio): when it answers a
/// question that waits, from the same session, the question gets it and
/// `true` is returned. Anything else is left to the caller.
pub fn deliver(line: &[u8], scope: Option<&str>) -> bool {
    if !pending() {
        return false;
    }
    let Ok(Value::Object(m)) = serde_json::from_slice::<Value>(line) else { return false };
    let Some(id) = m.get("id").and_then(Value::as_str).filter(|id| id.starts_with(ID_PREFIX)) else {
        return false;
    };
    let answer = match (m.get("result"), m.get("error")) {
        (Some(r), None) if r.is_object() => Ok(r.clone()),
        (None, Some(e)) => {
            Err(e.get("message").and_then(Value::as_str).unwrap_or("no message").chars().take(500).collect())
        }
        _ => return false,
    };
    let mut g = waiting();
    let Some(w) = g.as_mut().and_then(|map| map.get_mut(id)) else { return false };
    if w.scope.as_deref() != scope || w.answer.is_some() {
        return false;
    }
    w.answer = Some(answer);
    drop(g);
    ANSWERED.notify_all();
    true
}

/// The request line of question `id`.
pub fn request_line(id: &str, kind: AskKind, params: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(128);
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":\"");
    out.extend_from_slice(id.as_bytes());
    out.extend_from_slice(b"\",\"method\":\"");
    out.extend_from_slice(kind.method().as_bytes());
    out.extend_from_slice(b"\",\"params\":");
    serde_json::to_writer(&mut out, params).expect("a value encodes");
    out.push(b'}');
    out
}

/// Removes a question from the registry however its wait ends.
struct Registered(String);

impl Drop for Registered {
    fn drop(&mut self) {
        if let Some(map) = waiting().as_mut() {
            if map.remove(&self.0).is_some() {
                PENDING.fetch_sub(1, Ordering::SeqCst);
            }
        }
    }
}

/// Ask the client of the call running on `inflight` (RULES A1): `params`
/// (a JSON object) of a `kind` request, sent on the call's stream; wait for
/// the answer (the result object) for at most `timeout`, checking `stop`
/// (a user's interrupt) every 100 ms.
pub fn ask(
    inflight: &Inflight,
    kind: AskKind,
    params: &str,
    timeout: Duration,
    stop: &dyn Fn() -> bool,
) -> Result<Value, AskError> {
    // A call whose client listens to nothing has no progress: it cannot be
    // asked either.
    let progress = match inflight.progress_for_asks() {
        Some(p) if p.asks().allows(kind.capability()) => p,
        _ if inflight.is_running() => return Err(AskError::Unsupported(kind)),
        _ => return Err(AskError::NoCall),
    };
    let params: Value = serde_json::from_str(params).map_err(|_| AskError::BadParams)?;
    if !params.is_object() {
        return Err(AskError::BadParams);
    }
    // In a worker process the engine asks (RULES A1.4).
    if let Some(asker) = inflight.asker() {
        return asker(kind, &params, timeout, stop);
    }
    ask_on(&progress, inflight.scope(), &|| inflight.notify(), kind, params, timeout, stop)
}

/// Ask the client of the call whose notifications are `progress` (from
/// `scope`, its HTTP session) with `params` (an object): in the legacy
/// versions the request is queued on the call's stream (`wake` wakes the
/// transport's writer) and the answer awaited; in 2026-07-28 it is looked
/// up in the call's rounds (RULES A1, A2).
pub fn ask_on(
    progress: &Progress,
    scope: Option<String>,
    wake: &dyn Fn(),
    kind: AskKind,
    params: Value,
    timeout: Duration,
    stop: &dyn Fn() -> bool,
) -> Result<Value, AskError> {
    if !progress.asks().allows(kind.capability()) {
        return Err(AskError::Unsupported(kind));
    }
    if progress.version().is_modern() {
        return ask_in_rounds(progress, kind, params);
    }
    let id = format!("{ID_PREFIX}{}", NEXT.fetch_add(1, Ordering::SeqCst));
    let _registered = {
        let mut g = waiting();
        g.get_or_insert_with(HashMap::new).insert(id.clone(), Waiting { scope, answer: None });
        PENDING.fetch_add(1, Ordering::SeqCst);
        Registered(id.clone())
    };
    if !progress.send_request(&id, request_line(&id, kind, &params)) {
        return Err(AskError::Cancelled);
    }
    wake();
    let answer = wait(&id, progress, timeout, stop);
    if answer.is_err() {
        progress.withdraw_request(&id);
    }
    answer
}

/// A question of a 2026-07-28 call (RULES A2.1): its answer when an earlier
/// round gave one, else it joins the call's `inputRequests`.
fn ask_in_rounds(progress: &Progress, kind: AskKind, params: Value) -> Result<Value, AskError> {
    let mut rounds = progress.rounds();
    let Some(r) = rounds.as_mut() else { return Err(AskError::Unsupported(kind)) };
    let key = r.next_key();
    match r.answers.get(&key) {
        Some(a @ Value::Object(_)) => Ok(a.clone()),
        Some(_) => Err(AskError::Refused("the answer in inputResponses is not an object".into())),
        None => {
            r.unanswered.push((key, serde_json::json!({"method": kind.method(), "params": params})));
            Err(AskError::InputRequired)
        }
    }
}

/// The `InputRequiredResult` of a 2026-07-28 call whose questions wait
/// (RULES A2.1): `inputRequests` by key, and the `requestState` carrying
/// the answers so far, bound to `binding`.
pub fn write_input_required(out: &mut Vec<u8>, rounds: &Rounds, binding: &str, server_info: &str) {
    out.extend_from_slice(b"{\"resultType\":\"input_required\",\"inputRequests\":{");
    for (i, (key, request)) in rounds.unanswered.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        crate::json::write_str(out, key);
        out.push(b':');
        serde_json::to_writer(&mut *out, request).expect("a value encodes");
    }
    out.push(b'}');
    if let Some(state) = crate::request_state::seal(binding, &rounds.answers, std::time::SystemTime::now()) {
        out.extend_from_slice(b",\"requestState\":");
        crate::json::write_str(out, &state);
    }
    out.push(b',');
    crate::projection::write_server_meta(out, server_info);
    out.push(b'}');
}

fn wait(id: &str, progress: &Progress, timeout: Duration, stop: &dyn Fn() -> bool) -> Result<Value, AskError> {
    let deadline = Instant::now() + timeout;
    let mut g = waiting();
    loop {
        if let Some(answer) = g.as_mut().and_then(|m| m.get_mut(id)).and_then(|w| w.answer.take()) {
            return answer.map_err(AskError::Refused);
        }
        if !progress.answers_possible() || stop() {
            return Err(AskError::Cancelled);
        }
        let now = Instant::now();
        if now >= deadline {
            return Err(AskError::TimedOut(timeout));
        }
        let step = (deadline - now).min(Duration::from_millis(100));
        g = ANSWERED.wait_timeout(g, step).unwrap_or_else(|e| e.into_inner()).0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::{CallStart, CallWatch, ProgressPolicy};
    use crate::version::Version;
    use serde_json::json;
    use std::sync::Arc;

    fn running(asks: Asks) -> Arc<Inflight> {
        let inflight = Arc::new(Inflight::new(ProgressPolicy::default(), None));
        inflight.started(&CallStart {
            id: "1",
            progress_token: None,
            log_level: None,
            asks,
            version: Version::V2025_11_25,
        });
        inflight
    }

    #[test]
    fn capabilities_are_objects() {
        let caps = json!({"elicitation": {}, "sampling": true});
        assert_eq!(Asks::from_capabilities(Some(&caps)), Asks { elicitation: true, sampling: false });
        assert_eq!(Asks::from_capabilities(None), Asks::NONE);
    }

    #[test]
    fn a_question_is_sent_and_its_answer_delivered() {
        let inflight = running(Asks { elicitation: true, sampling: false });
        let asked = {
            let inflight = inflight.clone();
            std::thread::spawn(move || {
                ask(&inflight, AskKind::Elicit, r#"{"message":"Name?"}"#, Duration::from_secs(20), &|| false)
            })
        };
        // The request goes out on the call's stream.
        let p = inflight.progress_for_asks().unwrap();
        let line = loop {
            if let Some(l) = p.poll(Instant::now()) {
                break l;
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        let req: Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(req["method"], "elicitation/create");
        assert_eq!(req["params"]["message"], "Name?");
        let id = req["id"].as_str().unwrap().to_owned();
        // Another session, a non-object result, an unknown id: not an answer.
        assert!(!deliver(format!(r#"{{"jsonrpc":"2.0","id":"{id}","result":{{}}}}"#).as_bytes(), Some("s")));
        assert!(!deliver(format!(r#"{{"jsonrpc":"2.0","id":"{id}","result":1}}"#).as_bytes(), None));
        assert!(!deliver(br#"{"jsonrpc":"2.0","id":"mcplite-ask-0","result":{}}"#, None));
        let answer =
            format!(r#"{{"jsonrpc":"2.0","id":"{id}","result":{{"action":"accept","content":{{"n":"Ann"}}}}}}"#);
        assert!(deliver(answer.as_bytes(), None));
        assert_eq!(asked.join().unwrap(), Ok(json!({"action": "accept", "content": {"n": "Ann"}})));
        // Answered once: a second response is not taken.
        assert!(!deliver(answer.as_bytes(), None));
    }

    #[test]
    fn errors_cancellation_and_time() {
        let none = running(Asks::NONE);
        assert_eq!(
            ask(&none, AskKind::Sample, "{}", Duration::from_secs(1), &|| false),
            Err(AskError::Unsupported(AskKind::Sample))
        );
        let idle = Arc::new(Inflight::new(ProgressPolicy::default(), None));
        assert_eq!(ask(&idle, AskKind::Sample, "{}", Duration::from_secs(1), &|| false), Err(AskError::NoCall));
        let both = running(Asks { elicitation: true, sampling: true });
        assert_eq!(ask(&both, AskKind::Sample, "[1]", Duration::from_secs(1), &|| false), Err(AskError::BadParams));
        assert_eq!(
            ask(&both, AskKind::Sample, "{}", Duration::from_millis(150), &|| false),
            Err(AskError::TimedOut(Duration::from_millis(150)))
        );
        assert_eq!(ask(&both, AskKind::Sample, "{}", Duration::from_secs(20), &|| true), Err(AskError::Cancelled));
        // A refusal from the client is told with its message.
        let asked = {
            let both = both.clone();
            std::thread::spawn(move || ask(&both, AskKind::Sample, "{}", Duration::from_secs(20), &|| false))
        };
        let p = both.progress_for_asks().unwrap();
        let id = loop {
            if let Some(l) = p.poll(Instant::now()) {
                let v: Value = serde_json::from_slice(&l).unwrap();
                if v["method"] == "sampling/createMessage" {
                    break v["id"].as_str().unwrap().to_owned();
                }
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        let refusal = format!(r#"{{"jsonrpc":"2.0","id":"{id}","error":{{"code":-1,"message":"User rejected"}}}}"#);
        assert!(deliver(refusal.as_bytes(), None));
        assert_eq!(asked.join().unwrap(), Err(AskError::Refused("User rejected".into())));
    }
}
