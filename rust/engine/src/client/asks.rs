//! A server's questions to the client during a tool call (RULES K12): the
//! client declares what it answers in its capabilities (K12.1); in the legacy
//! era the server sends `elicitation/create` or `sampling/createMessage` as a
//! request while the call is in flight and the client answers it (K12.2); in
//! the 2026-07-28 era the call comes back `input_required` and the client
//! sends it again with `inputResponses` and the server's `requestState`
//! (K12.3). The answers themselves are the caller's (the R bridge runs the
//! user's functions): this file hands the questions out ([`Poll::Ask`],
//! [`Poll::Input`]) and sends the answers back.

use serde_json::Value;

use super::wire::{self, json_string, Member};
use super::{Again, ClientError, Connection, Poll, Retry, MAX_INPUT_ROUNDS, MAX_QUESTIONS};
use crate::codes;

impl Connection {
    /// Remember a request just started as one the server may ask about,
    /// when the client answers any question at all.
    pub(super) fn may_ask(&mut self, id: u64, request: Again) {
        if self.answers.any() {
            self.retries.insert(id, Retry { request, state: None, rounds: 0, questions: 0 });
        }
    }

    /// Does the client answer any question (it declared the capability)?
    pub(super) fn answers_any(&self) -> bool {
        self.answers.any()
    }

    /// The id the caller knows for request `wire` (a call sent again has a
    /// new id on the wire).
    pub(super) fn caller_id(&self, wire: u64) -> u64 {
        self.alias.iter().find(|(_, w)| **w == wire).map(|(c, _)| *c).unwrap_or(wire)
    }

    /// Call `id` came back `input_required`: its questions for the caller,
    /// or why the call ends here.
    pub(super) fn input_required(&mut self, id: u64, result: Value) -> Poll {
        let fail = |c: &mut Connection, why: String| {
            c.retries.remove(&id);
            c.resend.remove(&id);
            c.alias.remove(&id);
            Poll::Done(Err(ClientError::Protocol(why)))
        };
        let Some(retry) = self.retries.get_mut(&id) else {
            let why = if self.answers.any() {
                "the server asked for more input (a multi round-trip request) for a request that cannot ask \
                 (only tools/call, prompts/get and resources/read can)"
            } else {
                "the server asked for more input (a multi round-trip request), but this connection answers no \
                 questions (give `mcp_connect()` an `elicitation` or `sampling` function)"
            };
            return fail(self, why.into());
        };
        retry.rounds += 1;
        if retry.rounds > MAX_INPUT_ROUNDS {
            return fail(self, format!("the server asked for more input {MAX_INPUT_ROUNDS} times for one call"));
        }
        retry.state = match result.get("requestState") {
            None => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => return fail(self, "the server's requestState is not a string".into()),
        };
        let requests = match result.get("inputRequests") {
            None => serde_json::Map::new(),
            Some(Value::Object(m)) => m.clone(),
            Some(_) => return fail(self, "the server's inputRequests is not an object".into()),
        };
        if requests.len() > MAX_QUESTIONS as usize {
            return fail(
                self,
                format!("the server asked {} questions at once (at most {MAX_QUESTIONS})", requests.len()),
            );
        }
        for (key, r) in &requests {
            let method = r.get("method").and_then(Value::as_str).unwrap_or("");
            if !self.answers.answers(method) {
                return fail(
                    self,
                    format!(
                        "the server asked (inputRequests `{key}`) with `{method}`, which this client did not \
                         declare in its capabilities"
                    ),
                );
            }
        }
        Poll::Input(requests)
    }

    /// Answer the server's question `ask` (legacy era): `Ok(result)` with
    /// the result object as JSON text, or a JSON-RPC error.
    pub fn answer(&mut self, ask: &Value, outcome: Result<&str, (i64, &str)>) {
        let line = match outcome {
            Ok(result) => wire::response_line(ask, Some(result), None),
            Err(e) => wire::response_line(ask, None, Some(e)),
        };
        self.link.respond(&line);
    }

    /// Send request `id` again with the answers to its `inputRequests`
    /// (`responses`: an object by key, as JSON text) and the server's
    /// `requestState`; poll `id` for what comes back.
    pub fn retry(
        &mut self,
        id: u64,
        responses: &str,
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<(), ClientError> {
        let Some(retry) = self.retries.get(&id) else {
            return Err(ClientError::Protocol(format!("request {id} is not waiting for answers")));
        };
        let (again, state) = (retry.request.clone(), retry.state.as_ref().map(|s| json_string(s)));
        let mut members: Vec<Member> = again.members.iter().map(|(k, v)| (*k, v.as_str())).collect();
        members.push(("inputResponses", responses));
        if let Some(s) = &state {
            members.push(("requestState", s.as_str()));
        }
        let new = self.start_maybe_tasks(
            again.method,
            &again.name,
            &members,
            again.progress,
            again.timeout,
            again.tasks,
            interrupted,
        )?;
        self.alias.insert(id, new);
        Ok(())
    }

    /// A call that came back `input_required` where the caller does not
    /// answer (a plain wait): it ends here.
    pub(super) fn unanswerable(&mut self, id: u64) -> ClientError {
        self.retries.remove(&id);
        self.resend.remove(&id);
        self.alias.remove(&id);
        ClientError::Protocol("the server asked for more input, which this request cannot give".into())
    }

    /// Refuse a question the caller cannot answer now (a server asking
    /// during a request that is not a tool call).
    pub(super) fn refuse_ask(&mut self, ask: &Value) {
        self.answer(ask, Err((codes::INVALID_REQUEST, "the client answers questions only during a tool call")));
    }
}

/// Is a result object an `InputRequiredResult`?
pub(super) fn is_input_required(v: &Value) -> bool {
    v.get("resultType").and_then(Value::as_str) == Some("input_required")
}
