//! Log messages from a running tool to the client (RULES G1–G4): the
//! levels, which level a call asked for, and one queued message.
//!
//! Which calls get log messages: in the legacy era, every call of a session
//! after the client set a level with `logging/setLevel` (the level is the
//! session's, [`crate::LegacyState::log_level`]); in 2026-07-28, a call
//! whose request carries a level in `_meta` under [`META_LOG_LEVEL`]. The
//! messages of a call travel with its progress ([`crate::progress::Progress`]
//! holds both), on the stream that carries the call's response, before the
//! response.

use serde_json::{Map, Value};

/// The `_meta` member of a 2026-07-28 request that asks for the request's
/// log messages, at this level or above (RULES G1.2).
pub const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";

/// The legacy request that sets a session's level (RULES G1.1).
pub const SET_LEVEL: &str = "logging/setLevel";

/// The severity of a log message, RFC 5424's, least severe first (so that
/// `a >= b` reads "a is at least as severe as b").
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LogLevel {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
}

impl LogLevel {
    /// Every level, least severe first.
    pub const ALL: [LogLevel; 8] = [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Notice,
        LogLevel::Warning,
        LogLevel::Error,
        LogLevel::Critical,
        LogLevel::Alert,
        LogLevel::Emergency,
    ];

    /// The level's name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }

    /// The level named `s` (exactly, as on the wire).
    pub fn parse(s: &str) -> Option<LogLevel> {
        LogLevel::ALL.into_iter().find(|l| l.as_str() == s)
    }

    /// A compact number for the worker wire (1–8; 0 is "none").
    pub fn to_u8(self) -> u8 {
        self as u8 + 1
    }

    /// The level of [`LogLevel::to_u8`]'s number; `None` for 0 or out of range.
    pub fn from_u8(n: u8) -> Option<LogLevel> {
        n.checked_sub(1).and_then(|i| LogLevel::ALL.get(usize::from(i)).copied())
    }
}

/// The level a 2026-07-28 request asks for in its `_meta` (RULES G1.2):
/// `Ok(None)` when it asks for none, `Err(())` when the member is there but
/// names no level (the request is refused with invalid params).
#[allow(clippy::result_unit_err)]
pub fn requested_level(meta: &Map<String, Value>) -> Result<Option<LogLevel>, ()> {
    match meta.get(META_LOG_LEVEL) {
        None => Ok(None),
        Some(Value::String(s)) => LogLevel::parse(s).map(Some).ok_or(()),
        Some(_) => Err(()),
    }
}

/// The level of a legacy `logging/setLevel` request's params (RULES G1.1).
pub fn set_level_params(params: Option<&Value>) -> Option<LogLevel> {
    LogLevel::parse(params?.as_object()?.get("level")?.as_str()?)
}

/// One message a tool logged: its level, the logger's name, and its data as
/// JSON text (a string for R's `message()`, any JSON value otherwise).
#[derive(Debug, Clone, PartialEq)]
pub struct LogEntry {
    pub level: LogLevel,
    pub logger: Option<String>,
    pub data: String,
}

/// The most messages a call keeps waiting to be written (RULES G3.2): a
/// tool logging faster than its client reads loses the newest beyond this,
/// and the client is told how many with one warning.
pub const MAX_PENDING: usize = 1000;

/// The most bytes of one message's data (RULES G3.2): a longer one is
/// replaced by a warning saying so.
pub const MAX_DATA_BYTES: usize = 64 * 1024;

/// The most bytes the messages waiting for one call may hold (RULES G3.2).
pub const MAX_PENDING_BYTES: usize = 4 << 20;

/// The most bytes of a logger's name; a longer one is cut (at a character
/// boundary).
pub const MAX_LOGGER_BYTES: usize = 256;

/// Cut `name` to [`MAX_LOGGER_BYTES`].
pub fn truncate_logger(name: &mut String) {
    if name.len() > MAX_LOGGER_BYTES {
        let mut end = MAX_LOGGER_BYTES;
        while !name.is_char_boundary(end) {
            end -= 1;
        }
        name.truncate(end);
    }
}

/// The logger of the engine's own messages about a call's log (dropped
/// messages).
pub const ENGINE_LOGGER: &str = "mcplite";

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn levels_order_name_and_number() {
        assert!(LogLevel::Emergency > LogLevel::Debug);
        assert!(LogLevel::Warning >= LogLevel::Info);
        for l in LogLevel::ALL {
            assert_eq!(LogLevel::parse(l.as_str()), Some(l));
            assert_eq!(LogLevel::from_u8(l.to_u8()), Some(l));
        }
        assert_eq!(LogLevel::parse("Info"), None, "names are exact");
        assert_eq!(LogLevel::parse("warn"), None);
        assert_eq!(LogLevel::from_u8(0), None);
        assert_eq!(LogLevel::from_u8(9), None);
    }

    #[test]
    fn requested_levels() {
        let m = |v: Value| v.as_object().unwrap().clone();
        assert_eq!(requested_level(&m(json!({}))), Ok(None));
        assert_eq!(requested_level(&m(json!({META_LOG_LEVEL: "notice"}))), Ok(Some(LogLevel::Notice)));
        assert_eq!(requested_level(&m(json!({META_LOG_LEVEL: "loud"}))), Err(()));
        assert_eq!(requested_level(&m(json!({META_LOG_LEVEL: 3}))), Err(()));
        assert_eq!(set_level_params(Some(&json!({"level": "error"}))), Some(LogLevel::Error));
        assert_eq!(set_level_params(Some(&json!({"level": "ERROR"}))), None);
        assert_eq!(set_level_params(Some(&json!({}))), None);
        assert_eq!(set_level_params(None), None);
    }
}
