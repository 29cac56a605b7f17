//! Bounded attribute values (issue: client strings must not reach telemetry
//! unbounded). Shared by the span, metric and log recorders so that all
//! three name an operation the same way.
//!
//! * A method outside the MCP methods is `_OTHER` (the JSON-RPC / RPC
//!   conventions' fallback); spans keep the original, truncated, in
//!   `rpc.method_original`.
//! * Strings a client chose (an unknown method, an unknown tool's name, a
//!   request id) are cut to [`CLIENT_STRING_LIMIT`] characters, and every
//!   string value to `OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT` /
//!   `OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT` when set.
//! * `error.type` is the JSON-RPC code as a decimal string, or `tool_error`.

use std::borrow::Cow;

use opentelemetry::{Key, KeyValue, StringValue, Value};

use crate::codes;

/// `mcp.method.name` (and the span name) of a method that is not an MCP
/// method.
pub const OTHER_METHOD: &str = "_OTHER";

/// Longest client-chosen string (in characters) kept in telemetry, whatever
/// the configured limits.
pub const CLIENT_STRING_LIMIT: usize = 256;

/// Every `error.type` value mcplite records on MCP spans and metrics: the
/// JSON-RPC error codes the server answers envelope-valid messages with, and
/// `tool_error` for a tool result with `isError: true` (a failing or
/// interrupted R tool included). HTTP server spans (RULES T10) add the 5xx
/// status codes and `_OTHER` (no answer sent).
pub const ERROR_TYPES: [&str; 6] = [
    code_str(codes::INVALID_REQUEST),
    code_str(codes::METHOD_NOT_FOUND),
    code_str(codes::INVALID_PARAMS),
    code_str(codes::INTERNAL_ERROR),
    code_str(codes::UNSUPPORTED_VERSION),
    "tool_error",
];

/// [`codes::text`] of a code that is in [`codes::ALL`] (checked when the
/// constant is built).
const fn code_str(code: i64) -> &'static str {
    match codes::text(code) {
        Some(t) => t,
        None => panic!("not a declared code"),
    }
}

/// The MCP methods of every protocol version mcplite knows (the schemas of
/// 2024-11-05 to 2026-07-28 and the OpenTelemetry MCP conventions' list), in
/// byte order. A method here keeps its name in telemetry even when mcplite
/// does not serve it; anything else is `_OTHER`.
const METHODS: [&str; 34] = [
    "completion/complete",
    "elicitation/create",
    "initialize",
    "logging/setLevel",
    "notifications/cancelled",
    "notifications/elicitation/complete",
    "notifications/initialized",
    "notifications/message",
    "notifications/progress",
    "notifications/prompts/list_changed",
    "notifications/resources/list_changed",
    "notifications/resources/updated",
    "notifications/roots/list_changed",
    "notifications/subscriptions/acknowledged",
    "notifications/tasks/status",
    "notifications/tools/list_changed",
    "ping",
    "prompts/get",
    "prompts/list",
    "resources/list",
    "resources/read",
    "resources/subscribe",
    "resources/templates/list",
    "resources/unsubscribe",
    "roots/list",
    "sampling/createMessage",
    "server/discover",
    "subscriptions/listen",
    "tasks/cancel",
    "tasks/get",
    "tasks/list",
    "tasks/result",
    "tools/call",
    "tools/list",
];

/// The method as a static string when it is an MCP method.
pub fn known_method(m: &str) -> Option<&'static str> {
    METHODS.binary_search(&m).ok().map(|i| METHODS[i])
}

/// The first `max` characters of `s`.
pub(crate) fn truncate(s: &str, max: usize) -> &str {
    match s.char_indices().nth(max) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// `error.type` and `rpc.response.status_code` of a JSON-RPC error code.
pub(crate) fn code_text(code: i64) -> Cow<'static, str> {
    match codes::text(code) {
        Some(t) => t.into(),
        None => code.to_string().into(),
    }
}

/// Value of `jsonrpc.request.id`: a string id's value, else the token text.
pub(crate) fn id_value(token: &str) -> Cow<'_, str> {
    if token.starts_with('"') {
        match serde_json::from_str::<String>(token) {
            Ok(s) => s.into(),
            Err(_) => token.into(),
        }
    } else {
        token.into()
    }
}

/// Attribute values cut to a limit (`None`: no configured limit).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Cut(pub Option<usize>);

impl Cut {
    /// A value mcplite chose (bounded already): cut only to the configured
    /// limit.
    pub(crate) fn fixed(self, key: &'static str, v: &'static str) -> KeyValue {
        let v = match self.0 {
            Some(n) => truncate(v, n),
            None => v,
        };
        KeyValue::new(Key::from_static_str(key), Value::String(StringValue::from(v)))
    }

    /// A value from the registry or the client: cut to the configured limit
    /// and, when `client` is set, to [`CLIENT_STRING_LIMIT`].
    pub(crate) fn owned(self, key: &'static str, v: &str, client: bool) -> KeyValue {
        let mut n = self.0.unwrap_or(usize::MAX);
        if client {
            n = n.min(CLIENT_STRING_LIMIT);
        }
        KeyValue::new(Key::from_static_str(key), Value::String(StringValue::from(truncate(v, n).to_string())))
    }

    /// A computed value (`error.type` and friends).
    pub(crate) fn cow(self, key: &'static str, v: Cow<'static, str>) -> KeyValue {
        match v {
            Cow::Borrowed(s) => self.fixed(key, s),
            Cow::Owned(s) => self.owned(key, &s, false),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn methods_sorted_and_found() {
        let mut sorted = METHODS;
        sorted.sort_unstable();
        assert_eq!(sorted, METHODS);
        for m in METHODS {
            assert_eq!(known_method(m), Some(m));
        }
        assert_eq!(known_method("tools/call "), None);
        assert_eq!(known_method("x"), None);
    }

    #[test]
    fn truncation_counts_characters() {
        assert_eq!(truncate("abc", 2), "ab");
        assert_eq!(truncate("abc", 3), "abc");
        assert_eq!(truncate("éèê", 2), "éè");
        assert_eq!(truncate("", 0), "");
        let long = "ü".repeat(5000);
        assert_eq!(Cut(None).owned("k", &long, true).value.as_str().chars().count(), CLIENT_STRING_LIMIT);
        assert_eq!(Cut(Some(10)).owned("k", &long, true).value.as_str().chars().count(), 10);
        assert_eq!(Cut(Some(4)).fixed("k", "tools/call").value.as_str(), "tool");
        assert_eq!(Cut(None).owned("k", &long, false).value.as_str().len(), long.len());
    }

    #[test]
    fn ids_and_codes() {
        assert_eq!(id_value("\"a\\\"b\""), "a\"b");
        assert_eq!(id_value("3000000000"), "3000000000");
        assert_eq!(code_text(-32602), "-32602");
        assert_eq!(code_text(-1), "-1");
        for t in ERROR_TYPES {
            assert!(t == "tool_error" || matches!(code_text(t.parse().unwrap()), Cow::Borrowed(_)));
        }
    }
}
