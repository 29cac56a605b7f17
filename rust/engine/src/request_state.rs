//! The `requestState` of a 2026-07-28 call that needs answers (RULES A2.3):
//! the answers the client gave in earlier rounds, carried by the client
//! from one round to the next, so that the server keeps nothing between
//! them. The client must not be able to change it: the state is the
//! answers, the request it belongs to (the tool's name and a digest of its
//! arguments) and an expiry, as JSON, with an HMAC-SHA256 tag (`ring`). The
//! key is the SHA-256 of the environment variable `MCPLITE_STATE_KEY` when it
//! is set (replicas behind a load balancer share it, so that a retry may
//! reach any of them), else drawn from the operating system's random source
//! when the process first needs it (a restarted server then refuses the
//! states of the one before, and the client is asked again). A state that
//! fails the check, belongs to another request or has expired is refused.

use std::sync::OnceLock;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use ring::hmac;
use serde_json::{Map, Value};

/// How long a state is accepted after it was made.
pub const TTL: Duration = Duration::from_secs(600);

/// The environment variable with the key replicas share.
pub const KEY_VAR: &str = "MCPLITE_STATE_KEY";

fn key() -> Option<&'static hmac::Key> {
    static KEY: OnceLock<Option<hmac::Key>> = OnceLock::new();
    KEY.get_or_init(|| {
        if let Some(shared) = std::env::var_os(KEY_VAR).filter(|v| !v.is_empty()) {
            let d = ring::digest::digest(&ring::digest::SHA256, shared.as_encoded_bytes());
            return Some(hmac::Key::new(hmac::HMAC_SHA256, d.as_ref()));
        }
        let mut raw = [0u8; 32];
        getrandom::fill(&mut raw).ok()?;
        Some(hmac::Key::new(hmac::HMAC_SHA256, &raw))
    })
    .as_ref()
}

/// What a state is bound to: the tool and its arguments, written with
/// object members in sorted order (so that a client may re-encode the
/// arguments), hashed.
pub fn binding(tool: &str, arguments: Option<&Map<String, Value>>) -> String {
    fn canonical(v: &Value, out: &mut String) {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                out.push('{');
                for (i, k) in keys.into_iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&Value::String(k.clone()).to_string());
                    out.push(':');
                    canonical(&m[k], out);
                }
                out.push('}');
            }
            Value::Array(a) => {
                out.push('[');
                for (i, x) in a.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    canonical(x, out);
                }
                out.push(']');
            }
            other => out.push_str(&other.to_string()),
        }
    }
    let mut text = Value::String(tool.to_owned()).to_string();
    text.push(':');
    canonical(&arguments.map_or(Value::Null, |a| Value::Object(a.clone())), &mut text);
    let d = ring::digest::digest(&ring::digest::SHA256, text.as_bytes());
    d.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

fn unix(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// The state carrying `answers` for the request `binding`, made at `now`;
/// `None` when the process has no key (no random source).
pub fn seal(binding: &str, answers: &Map<String, Value>, now: SystemTime) -> Option<String> {
    let key = key()?;
    let payload = serde_json::json!({"b": binding, "x": unix(now + TTL), "a": answers});
    let body = URL_SAFE_NO_PAD.encode(payload.to_string());
    let tag = hmac::sign(key, body.as_bytes());
    Some(format!("{body}.{}", URL_SAFE_NO_PAD.encode(tag.as_ref())))
}

/// Why a state was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// Not a state this process made, or changed.
    Forged,
    /// Made for another request.
    OtherRequest,
    Expired,
}

/// The answers of `state` when it is this process's, unchanged, made for
/// `binding` and not expired at `now`.
pub fn open(state: &str, binding: &str, now: SystemTime) -> Result<Map<String, Value>, Refused> {
    let key = key().ok_or(Refused::Forged)?;
    let (body, tag) = state.split_once('.').ok_or(Refused::Forged)?;
    let tag = URL_SAFE_NO_PAD.decode(tag).map_err(|_| Refused::Forged)?;
    hmac::verify(key, body.as_bytes(), &tag).map_err(|_| Refused::Forged)?;
    let payload: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(body).map_err(|_| Refused::Forged)?)
        .map_err(|_| Refused::Forged)?;
    if payload.get("b").and_then(Value::as_str) != Some(binding) {
        return Err(Refused::OtherRequest);
    }
    if payload.get("x").and_then(Value::as_u64).is_none_or(|x| x < unix(now)) {
        return Err(Refused::Expired);
    }
    match payload.get("a") {
        Some(Value::Object(a)) => Ok(a.clone()),
        _ => Err(Refused::Forged),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn states_open_only_unchanged_for_their_request_and_in_time() {
        let args = json!({"b": [1, {"y": 2, "x": 1}], "a": "z"});
        let bound = binding("tool", args.as_object());
        let reordered = json!({"a": "z", "b": [1, {"x": 1, "y": 2}]});
        assert_eq!(binding("tool", reordered.as_object()), bound);
        assert_ne!(binding("other", reordered.as_object()), bound);
        assert_ne!(binding("tool", json!({"a": "y"}).as_object()), bound);
        let answers = json!({"q1": {"action": "accept"}});
        let now = SystemTime::now();
        let state = seal(&bound, answers.as_object().unwrap(), now).unwrap();
        assert_eq!(open(&state, &bound, now), Ok(answers.as_object().unwrap().clone()));
        assert_eq!(open(&state, &binding("tool", None), now), Err(Refused::OtherRequest));
        assert_eq!(open(&state, &bound, now + TTL + Duration::from_secs(5)), Err(Refused::Expired));
        // Any change to the body or the tag is refused.
        let (body, tag) = state.split_once('.').unwrap();
        let forged_body = URL_SAFE_NO_PAD
            .encode(json!({"b": bound, "x": unix(now) + 100, "a": {"q1": {"action": "decline"}}}).to_string());
        assert_eq!(open(&format!("{forged_body}.{tag}"), &bound, now), Err(Refused::Forged));
        assert_eq!(open(&format!("{body}.AAAA"), &bound, now), Err(Refused::Forged));
        assert_eq!(open("no-dot", &bound, now), Err(Refused::Forged));
    }
}
