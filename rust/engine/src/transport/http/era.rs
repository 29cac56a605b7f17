//! Which era an HTTP request belongs to (RULES H2, H3): the body's claim
//! ([`version::era_of`], RULES M1.1) or an `MCP-Protocol-Version` header
//! naming the modern version makes it modern; a header naming no version
//! this server knows ([`version::known_http_header`]) is answered with the
//! unsupported-version error.

use hyper::header::HeaderMap;

use super::response::header;
use crate::message::Message;
use crate::version::{self, Era, Version};

/// The era of one request.
pub(super) enum Choice<'a> {
    /// The header names a version we do not know (its value).
    Unknown(&'a str),
    /// Modern; `body` is the era of its body (a modern header alone also
    /// makes a request modern).
    Modern {
        body: Era<'a>,
    },
    Legacy,
}

/// Does the `MCP-Protocol-Version` header name the modern version?
pub(super) fn header_modern(h: &HeaderMap) -> bool {
    header(h, "mcp-protocol-version").and_then(Version::parse).is_some_and(Version::is_modern)
}

/// The era of request `msg` with headers `h`.
pub(super) fn choose<'a>(h: &'a HeaderMap, msg: &'a Message) -> Choice<'a> {
    if let Some(v) = header(h, "mcp-protocol-version") {
        if !version::known_http_header(v) {
            return Choice::Unknown(v);
        }
    }
    let body = version::era_of(msg.params.as_ref());
    if matches!(body, Era::Modern { .. }) || header_modern(h) {
        Choice::Modern { body }
    } else {
        Choice::Legacy
    }
}
