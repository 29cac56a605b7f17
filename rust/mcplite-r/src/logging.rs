//! Log messages of the running tool call, on R's side (RULES G2): what
//! `mcp_log()` and the handlers for a tool's `message()` and `warning()`
//! call. The engine's [`Inflight`](mcplite_engine::progress::Inflight)
//! decides whether the client listens and at which level; nothing here
//! writes anywhere when it does not.

use std::cell::RefCell;

use extendr_api::prelude::*;
use mcplite_engine::logging::{LogEntry, LogLevel};

use crate::running_call;

thread_local! {
    /// The name of the tool running now (the default logger).
    static TOOL: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Run `f` with `name` as the running tool's name.
pub fn with_tool<T>(name: &str, f: impl FnOnce() -> T) -> T {
    /// Clears the name however `f` ends.
    struct Clear(Option<String>);
    impl Drop for Clear {
        fn drop(&mut self) {
            TOOL.with(|t| *t.borrow_mut() = self.0.take());
        }
    }
    let before = TOOL.with(|t| t.borrow_mut().replace(name.to_owned()));
    let _clear = Clear(before);
    f()
}

/// The least severe level the running call's client wants, when it listens
/// to log messages: a tool's `message()` and `warning()` are handled only
/// then (RULES G2.1).
pub fn running_level() -> Option<LogLevel> {
    running_call::serving().and_then(|i| i.log_level())
}

/// Does the running call's client want messages of `level`? (`mcp_log()`
/// asks first, so that a tool logging to nobody encodes nothing; R checked
/// the level.)
#[extendr]
fn log_wanted(level: &str) -> bool {
    LogLevel::parse(level).is_some_and(|l| running_level().is_some_and(|w| l >= w))
}

/// Log `data` (JSON text) at `level` from `logger` (`NULL`: the running
/// tool's name) for the running call. `TRUE` when its client wants it.
#[extendr]
fn log_running(level: &str, logger: Nullable<String>, data: &str) -> bool {
    let Some(level) = LogLevel::parse(level) else { return false };
    let Some(inflight) = running_call::serving() else { return false };
    // R's encoder made `data`; anything else reaching this entry point is
    // not written as it is (RULES N7.8): one JSON value, no control byte.
    if data.bytes().any(|b| b < 0x20) || serde_json::from_str::<serde_json::Value>(data).is_err() {
        return false;
    }
    let logger = match logger {
        Nullable::NotNull(l) => Some(l),
        Nullable::Null => TOOL.with(|t| t.borrow().clone()),
    };
    inflight.log(LogEntry { level, logger, data: data.to_owned() })
}

extendr_module! {
    mod logging;
    fn log_wanted;
    fn log_running;
}
