//! Questions of a running tool to its client, on R's side (RULES A1):
//! `mcp_elicit()` and `mcp_sample()` hand the request's parameters (JSON
//! text R encoded) to the engine's [`asks::ask`], which sends the request
//! on the call's stream and waits for the answer, and give R the result as
//! JSON text.

use std::time::Duration;

use extendr_api::prelude::*;
use mcplite_engine::asks::{self, AskError, AskKind};

use crate::error::{Error, Kind};
use crate::running_call;

/// Ask the running call's client (`kind` `"elicit"` or `"sample"`) with
/// `params` (a JSON object as text), waiting at most `timeout` seconds:
/// the result object as JSON text, or an error of class
/// `mcplite_error_ask` saying why there is none.
/// @noRd
#[extendr]
fn ask_running(kind: &str, params: &str, timeout: f64) -> Robj {
    let Some(kind) = AskKind::parse(kind) else {
        return Error::new(Kind::Internal, format!("unknown kind of question {kind:?}")).into_r();
    };
    let Some(inflight) = running_call::serving() else {
        return Error::new(Kind::Ask, AskError::NoCall.message()).into_r();
    };
    let timeout = Duration::try_from_secs_f64(timeout).unwrap_or(Duration::from_secs(600));
    match asks::ask(&inflight, kind, params, timeout, &running_call::interrupt_sent) {
        Ok(result) => Robj::from(result.to_string()),
        Err(e) => Error::new(Kind::Ask, e.message()).into_r(),
    }
}

extendr_module! {
    mod asks;
    fn ask_running;
}
