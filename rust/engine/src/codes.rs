//! JSON-RPC and MCP error codes: the one place they are spelled. Every
//! crate of the workspace names them from here, and R reads them through
//! the bridge (`engine_protocol()`, `R/protocol.R`).
//!
//! * JSON-RPC 2.0 reserves `-32768` to `-32000`: [`PARSE_ERROR`] to
//!   [`INTERNAL_ERROR`] are its predefined errors.
//! * MCP 2026-07-28 reserves `-32020` to `-32099` for the specification:
//!   [`HEADER_MISMATCH`], [`MISSING_REQUIRED_CLIENT_CAPABILITY`] and
//!   [`UNSUPPORTED_VERSION`]. Only a modern server sends them, which is how
//!   the client recognises one ([`is_modern_only`]).

/// Declares each code once (its name, value and standard message) and
/// derives [`ALL`], [`text`] and [`standard_message`] from the same list.
macro_rules! codes {
    ($($(#[$doc:meta])* $name:ident = -$n:literal, $message:literal;)+) => {
        $($(#[$doc])* pub const $name: i64 = -$n;)+

        /// Every code: its name (as above), value and standard message, in
        /// declaration order.
        pub const ALL: [Code; [$($n),+].len()] = [$(Code { name: stringify!($name), code: -$n, message: $message }),+];

        /// The code as decimal text (`"-32602"`) when it is one of [`ALL`]:
        /// telemetry's `error.type` without formatting.
        pub const fn text(code: i64) -> Option<&'static str> {
            match code {
                $(-$n => Some(concat!("-", $n)),)+
                _ => None,
            }
        }

        /// The standard `message` of an error with this code (`"Internal
        /// error"` for a code not in [`ALL`]).
        pub const fn standard_message(code: i64) -> &'static str {
            match code {
                $(-$n => $message,)+
                _ => "Internal error",
            }
        }
    };
}

/// One error code of [`ALL`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Code {
    /// The constant's name, e.g. `"INVALID_PARAMS"` (what R looks codes up
    /// by).
    pub name: &'static str,
    pub code: i64,
    /// The standard `message` of the error.
    pub message: &'static str,
}

codes! {
    /// Not strict JSON or not UTF-8 (JSON-RPC 2.0).
    PARSE_ERROR = -32700, "Parse error";
    /// Not a valid JSON-RPC request object (JSON-RPC 2.0).
    INVALID_REQUEST = -32600, "Invalid Request";
    /// No such method (JSON-RPC 2.0).
    METHOD_NOT_FOUND = -32601, "Method not found";
    /// Parameters missing or of the wrong shape (JSON-RPC 2.0).
    INVALID_PARAMS = -32602, "Invalid params";
    /// The server failed (JSON-RPC 2.0); also a stopping server's answer.
    INTERNAL_ERROR = -32603, "Internal error";
    /// A `resources/read` of a URI the server does not have (MCP up to
    /// 2025-11-25; 2026-07-28 uses [`INVALID_PARAMS`]).
    RESOURCE_NOT_FOUND = -32002, "Resource not found";
    /// `HeaderMismatch` (MCP 2026-07-28 Streamable HTTP): a mirrored header
    /// is missing or differs from the body.
    HEADER_MISMATCH = -32020, "Header mismatch";
    /// `MissingRequiredClientCapability` (MCP 2026-07-28).
    MISSING_REQUIRED_CLIENT_CAPABILITY = -32021, "Missing required client capability";
    /// `UnsupportedProtocolVersion` (MCP 2026-07-28): data lists the
    /// supported versions and the requested one.
    UNSUPPORTED_VERSION = -32022, "Unsupported protocol version";
}

/// The codes only a modern (2026-07-28) server sends: an answer with one of
/// them to `server/discover` means the server is modern.
pub const MODERN_ONLY: [i64; 3] = [HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_VERSION];

/// Is `code` one of [`MODERN_ONLY`]?
pub fn is_modern_only(code: i64) -> bool {
    MODERN_ONLY.contains(&code)
}

/// A JSON-RPC error response line: `message`, and `: detail` after it when
/// given (`id` is the raw id token; `None` is `null`).
pub(crate) fn error_line(id: Option<&str>, code: i64, message: &str, detail: Option<&str>) -> Vec<u8> {
    let mut out = Vec::with_capacity(96);
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    out.extend_from_slice(id.unwrap_or("null").as_bytes());
    out.extend_from_slice(b",\"error\":{\"code\":");
    out.extend_from_slice(code.to_string().as_bytes());
    out.extend_from_slice(b",\"message\":");
    match detail {
        Some(d) => crate::json::write_str(&mut out, &format!("{message}: {d}")),
        None => crate::json::write_str(&mut out, message),
    }
    out.extend_from_slice(b"}}");
    out
}

/// Add `error.data` (JSON text) to a line made by [`error_line`]: inserted
/// before the closing `}}`.
pub(crate) fn add_error_data(line: &mut Vec<u8>, data: &[u8]) {
    line.truncate(line.len() - 2);
    line.extend_from_slice(b",\"data\":");
    line.extend_from_slice(data);
    line.extend_from_slice(b"}}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_list() {
        for c in ALL {
            assert_eq!(text(c.code), Some(c.code.to_string().as_str()), "{}", c.name);
            assert_eq!(standard_message(c.code), c.message);
        }
        let mut codes = ALL.map(|c| c.code);
        codes.sort_unstable();
        codes.windows(2).for_each(|w| assert_ne!(w[0], w[1], "codes are distinct"));
        assert_eq!(text(-1), None);
        assert_eq!(standard_message(-1), "Internal error");
        assert_eq!((PARSE_ERROR, INVALID_PARAMS, UNSUPPORTED_VERSION), (-32700, -32602, -32022));
    }

    #[test]
    fn modern_only() {
        assert!([-32020, -32021, -32022].into_iter().all(is_modern_only));
        assert!(![-32019, -32023, INVALID_PARAMS, INTERNAL_ERROR].into_iter().any(is_modern_only));
    }
}
