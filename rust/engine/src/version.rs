//! The protocol version registry: the one place that knows which MCP
//! protocol versions exist, how they are spelled, in which order they are
//! offered, what each of them can carry, and how a message says which era it
//! belongs to.
//!
//! Two eras share one endpoint (RULES M1.1):
//!
//! * **legacy** versions are negotiated once per session by `initialize`
//!   (RULES L1) and kept in the caller's [`crate::server::LegacyState`];
//! * the **modern** version is claimed by every request in
//!   `params._meta` under [`META_VERSION`] (RULES M1, M2).
//!
//! Together with [`crate::projection`] (which writes every envelope and
//! result whose shape differs by version) this module holds every
//! difference between protocol versions. Adding a protocol version means
//! three edits here: one line in the `versions!` list below (variant and
//! spelling; [`Version::ALL`], [`Version::COUNT`], [`Version::as_str`] and
//! [`Version::index`] follow from it), its place in [`SUPPORTED`] (an array
//! of [`Version::COUNT`] entries, so it cannot be forgotten), and its row in
//! [`Version::features`] (an exhaustive match). The dispatcher, the
//! transports and the telemetry need no change. Only a version that brings a
//! new *kind* of difference needs a new [`Features`] member, or a new
//! envelope shape, in [`crate::projection`].

use serde_json::{Map, Value};

/// Declares [`Version`] with [`Version::ALL`], [`Version::COUNT`] and
/// [`Version::as_str`] from one list, so they cannot disagree.
macro_rules! versions {
    ($($variant:ident => $spelling:literal),+ $(,)?) => {
        /// The protocol versions mcplite speaks. The declaration order is
        /// the order of [`Version::ALL`] (oldest first) and gives
        /// [`Version::index`].
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Version {
            $($variant),+
        }

        impl Version {
            /// Every version, oldest first.
            pub const ALL: [Version; Version::COUNT] = [$(Version::$variant),+];

            /// How many versions there are: the size of per-version tables.
            pub const COUNT: usize = [$($spelling),+].len();

            /// The version's wire spelling.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Version::$variant => $spelling),+
                }
            }
        }
    };
}

versions! {
    V2024_11_05 => "2024-11-05",
    V2025_06_18 => "2025-06-18",
    V2025_11_25 => "2025-11-25",
    V2026_07_28 => "2026-07-28",
}

/// Discovery order (RULES M3): preferred first. Listed in `server/discover`
/// and in the data of the unsupported-version error.
pub const SUPPORTED: [Version; Version::COUNT] =
    [Version::V2026_07_28, Version::V2025_11_25, Version::V2025_06_18, Version::V2024_11_05];

/// The version a legacy `initialize` settles on when the client asks for one
/// we do not speak (RULES L1.2).
pub const LEGACY_DEFAULT: Version = Version::V2025_11_25;

/// A version mcplite knows of but does not serve (a legacy `initialize`
/// asking for it settles on [`LEGACY_DEFAULT`]): it differs from 2025-06-18
/// only in what mcplite never uses (JSON-RPC batches) and in lacking the
/// `MCP-Protocol-Version` HTTP header. Named for the two places that meet
/// it: [`HTTP_HEADERLESS`] and [`CLIENT_ACCEPTS_LEGACY`].
pub const V2025_03_26: &str = "2025-03-26";

/// The version a legacy Streamable HTTP request without an
/// `MCP-Protocol-Version` header speaks (the header came with 2025-06-18);
/// a header naming it is legacy too (RULES H3).
pub const HTTP_HEADERLESS: &str = V2025_03_26;

/// Does an `MCP-Protocol-Version` header name a version this server knows:
/// one it serves, or [`HTTP_HEADERLESS`]? Any other value is answered with
/// the unsupported-version error.
pub fn known_http_header(v: &str) -> bool {
    Version::parse(v).is_some() || v == HTTP_HEADERLESS
}

/// The modern version the MCP client speaks (it claims it in `_meta`).
pub const CLIENT_MODERN: Version = Version::V2026_07_28;

/// Legacy versions the MCP client accepts from a server's `initialize`,
/// newest first: the legacy versions mcplite serves, plus [`V2025_03_26`]
/// (the client never sends batches, so nothing else differs).
pub const CLIENT_ACCEPTS_LEGACY: [&str; 4] =
    [Version::V2025_11_25.as_str(), Version::V2025_06_18.as_str(), V2025_03_26, Version::V2024_11_05.as_str()];

/// The versions the MCP client can be told to insist on (R's
/// `mcp_connect(protocol =)`): those mcplite serves, in [`SUPPORTED`] order.
/// [`V2025_03_26`] is accepted from a server but never asked for.
pub fn client_requestable() -> [&'static str; Version::COUNT] {
    SUPPORTED.map(Version::as_str)
}

/// Which values a version admits in a member that older versions lack or
/// restrict (output schemas, structured content).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    /// The member does not exist in this version: never written.
    Never,
    /// Only objects: an output schema whose root `type` is `"object"`, a
    /// structured content value that is a JSON object.
    Objects,
    /// Any JSON value.
    Any,
}

/// What one protocol version can carry: one row per version in
/// [`Version::features`], read by [`crate::projection`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Features {
    /// Modern era: stateless requests claiming the version in `_meta`;
    /// results carry `resultType` and the server identity in `_meta`
    /// (RULES M4).
    pub modern: bool,
    /// Tool `annotations` in `tools/list`.
    pub tool_annotations: bool,
    /// Tool `outputSchema` in `tools/list`.
    pub output_schema: Admit,
    /// `structuredContent` in tool results.
    pub structured_content: Admit,
    /// `_meta` on content blocks.
    pub block_meta: bool,
    /// The `lastModified` content annotation.
    pub last_modified: bool,
    /// `audio` and `resource_link` content blocks (RULES P3).
    pub audio_and_links: bool,
    /// The `message` member of `notifications/progress` (RULES C3.1).
    pub progress_message: bool,
    /// SSE polling over legacy HTTP: a priming event, the server closing a
    /// connection of a stream, `GET` with `Last-Event-ID` to go on (the
    /// 2025-11-25 transport; RULES H8).
    pub sse_polling: bool,
    /// Task-augmented requests of the core protocol: `params.task`,
    /// `execution.taskSupport`, `tasks/*` (2025-11-25, experimental; RULES
    /// V1.1, V1.2). 2026-07-28 has tasks as an extension instead.
    pub task_augmentation: bool,
}

impl Version {
    /// The version spelled `s`, if mcplite speaks it.
    pub fn parse(s: &str) -> Option<Version> {
        SUPPORTED.iter().copied().find(|v| v.as_str() == s)
    }

    /// Position in [`Version::ALL`], for per-version tables.
    pub const fn index(self) -> usize {
        self as usize
    }

    /// What this version can carry.
    pub const fn features(self) -> Features {
        use Admit::{Any, Never, Objects};
        match self {
            Version::V2024_11_05 => Features {
                modern: false,
                tool_annotations: false,
                output_schema: Never,
                structured_content: Never,
                block_meta: false,
                last_modified: false,
                audio_and_links: false,
                progress_message: false,
                sse_polling: false,
                task_augmentation: false,
            },
            Version::V2025_06_18 | Version::V2025_11_25 => Features {
                modern: false,
                tool_annotations: true,
                output_schema: Objects,
                structured_content: Objects,
                block_meta: true,
                last_modified: true,
                audio_and_links: true,
                progress_message: true,
                sse_polling: matches!(self, Version::V2025_11_25),
                task_augmentation: matches!(self, Version::V2025_11_25),
            },
            Version::V2026_07_28 => Features {
                modern: true,
                tool_annotations: true,
                output_schema: Any,
                structured_content: Any,
                block_meta: true,
                last_modified: true,
                audio_and_links: true,
                progress_message: true,
                sse_polling: false,
                task_augmentation: false,
            },
        }
    }

    /// Is this a modern (stateless, per-request `_meta`) version?
    pub const fn is_modern(self) -> bool {
        self.features().modern
    }
}

/// A table with one entry per protocol version (for example the prepared
/// `tools/list` arrays), indexed by [`Version::index`].
pub type PerVersion<T> = [T; Version::COUNT];

/// The version a legacy `initialize` that asked for `requested` settles on
/// (RULES L1.2): the requested one when it is a legacy version we speak,
/// otherwise [`LEGACY_DEFAULT`].
pub fn negotiate_legacy(requested: &str) -> Version {
    Version::parse(requested).filter(|v| !v.is_modern()).unwrap_or(LEGACY_DEFAULT)
}

// The modern `_meta` keys, each spelled once; the error details below are
// built from the same literals.
macro_rules! meta_version_key {
    () => {
        "io.modelcontextprotocol/protocolVersion"
    };
}
macro_rules! meta_caps_key {
    () => {
        "io.modelcontextprotocol/clientCapabilities"
    };
}

/// `_meta` key of a modern request's version claim (RULES M1.1).
pub const META_VERSION: &str = meta_version_key!();
/// `_meta` key of a modern request's client capabilities (RULES M2.4).
pub const META_CAPS: &str = meta_caps_key!();
/// `_meta` key of the server identity in modern results (RULES M4.3).
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// `_meta` key naming the `subscriptions/listen` request a message of its
/// stream belongs to (RULES U3.3).
pub const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// Detail of `-32602` for `server/discover` without a claim (RULES L8).
pub const MISSING_CLAIM: &str = concat!("missing _meta ", meta_version_key!());
/// Detail of `-32602` for a claim that is not a string (RULES L8).
pub const CLAIM_NOT_STRING: &str = concat!("_meta ", meta_version_key!(), " must be a string");
/// Detail of `-32602` for missing or non-object capabilities (RULES L8).
pub const CAPS_NOT_OBJECT: &str = concat!("_meta ", meta_caps_key!(), " must be an object");

/// The era of one message, read from its `params` (RULES M1.1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Era<'a> {
    /// No modern claim: the message belongs to the caller's legacy session.
    Legacy,
    /// `params._meta` is an object holding [`META_VERSION`] (whatever its
    /// value): the message stands alone. `meta` is that `_meta` object.
    Modern { meta: &'a Map<String, Value> },
}

/// Read a message's era: modern iff `params` is an object whose `_meta` is
/// an object with a [`META_VERSION`] member (RULES M1.1).
pub fn era_of(params: Option<&Value>) -> Era<'_> {
    if let Some(Value::Object(p)) = params {
        if let Some(Value::Object(meta)) = p.get("_meta") {
            if meta.contains_key(META_VERSION) {
                return Era::Modern { meta };
            }
        }
    }
    Era::Legacy
}

/// Why a modern claim cannot be served (RULES M2.2–M2.4).
#[derive(Debug, Clone, PartialEq)]
pub enum ClaimError<'a> {
    /// The claimed version is not a string: `-32602` [`CLAIM_NOT_STRING`].
    NotString,
    /// A string naming no modern version we speak: `-32022` with data
    /// listing [`SUPPORTED`] and the requested text.
    Unsupported { requested: &'a str },
    /// The version is fine but the capabilities are missing or not an
    /// object: `-32602` [`CAPS_NOT_OBJECT`].
    CapsNotObject(Version),
}

/// Check a modern message's `_meta` (see [`era_of`]): the version it claims
/// when it is one we serve and the client capabilities are an object.
pub fn check_modern_claim(meta: &Map<String, Value>) -> Result<Version, ClaimError<'_>> {
    let claimed = match meta.get(META_VERSION) {
        Some(Value::String(s)) => s.as_str(),
        _ => return Err(ClaimError::NotString),
    };
    let v = match Version::parse(claimed) {
        Some(v) if v.is_modern() => v,
        _ => return Err(ClaimError::Unsupported { requested: claimed }),
    };
    match meta.get(META_CAPS) {
        Some(Value::Object(_)) => Ok(v),
        _ => Err(ClaimError::CapsNotObject(v)),
    }
}

/// The version a modern message's `_meta` claims, when it is a modern
/// version mcplite speaks (what telemetry records for a modern
/// notification, RULES T5).
pub fn claimed_modern(meta: &Map<String, Value>) -> Option<Version> {
    Version::parse(meta.get(META_VERSION)?.as_str()?).filter(|v| v.is_modern())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn registry_is_consistent() {
        assert_eq!(Version::ALL.len(), Version::COUNT);
        for (i, v) in Version::ALL.iter().enumerate() {
            assert_eq!(v.index(), i, "ALL is in declaration order");
            assert_eq!(Version::parse(v.as_str()), Some(*v));
            assert!(SUPPORTED.contains(v), "{v:?} is offered");
        }
        // Spellings are dates: discovery order is newest first.
        let mut newest_first = Version::ALL.map(Version::as_str);
        newest_first.sort_unstable_by(|a, b| b.cmp(a));
        assert_eq!(SUPPORTED.map(Version::as_str), newest_first);
        assert!(!LEGACY_DEFAULT.is_modern());
        assert_eq!(Version::parse("1999-01-01"), None);
    }

    #[test]
    fn versions_known_but_not_served() {
        assert_eq!(Version::parse(V2025_03_26), None, "not served");
        assert_eq!(negotiate_legacy(V2025_03_26), LEGACY_DEFAULT);
        assert!(known_http_header(HTTP_HEADERLESS) && known_http_header("2025-06-18"));
        assert!(!known_http_header("1999-01-01"));
        // The client accepts every legacy version served, and 2025-03-26,
        // newest first; it insists only on versions served.
        let mut accepts: Vec<&str> =
            SUPPORTED.iter().filter(|v| !v.is_modern()).map(|v| v.as_str()).chain([V2025_03_26]).collect();
        accepts.sort_unstable_by(|a, b| b.cmp(a));
        assert_eq!(CLIENT_ACCEPTS_LEGACY.to_vec(), accepts);
        assert!(CLIENT_MODERN.is_modern());
        assert_eq!(client_requestable()[0], CLIENT_MODERN.as_str());
        assert!(client_requestable().iter().all(|v| Version::parse(v).is_some()));
    }

    #[test]
    fn legacy_negotiation() {
        assert_eq!(negotiate_legacy("2025-06-18"), Version::V2025_06_18);
        assert_eq!(negotiate_legacy("2024-11-05"), Version::V2024_11_05);
        // Unknown, and modern (which has no initialize), fall back.
        assert_eq!(negotiate_legacy("1999-01-01"), LEGACY_DEFAULT);
        assert_eq!(negotiate_legacy(Version::V2026_07_28.as_str()), LEGACY_DEFAULT);
    }

    #[test]
    fn details_name_their_keys() {
        assert_eq!(MISSING_CLAIM, "missing _meta io.modelcontextprotocol/protocolVersion");
        assert_eq!(CLAIM_NOT_STRING, "_meta io.modelcontextprotocol/protocolVersion must be a string");
        assert_eq!(CAPS_NOT_OBJECT, "_meta io.modelcontextprotocol/clientCapabilities must be an object");
    }

    #[test]
    fn era_and_claims() {
        let modern = json!({"_meta": {META_VERSION: "2026-07-28", META_CAPS: {}}});
        assert!(matches!(era_of(Some(&modern)), Era::Modern { .. }));
        for legacy in [json!({}), json!({"_meta": 1}), json!({"_meta": {META_CAPS: {}}}), json!([]), json!(null)] {
            assert_eq!(era_of(Some(&legacy)), Era::Legacy, "{legacy}");
        }
        assert_eq!(era_of(None), Era::Legacy);
        let meta = |v: Value| match v {
            Value::Object(m) => m,
            _ => unreachable!(),
        };
        assert_eq!(
            check_modern_claim(&meta(json!({META_VERSION: "2026-07-28", META_CAPS: {}}))),
            Ok(Version::V2026_07_28)
        );
        assert_eq!(check_modern_claim(&meta(json!({META_VERSION: 7}))), Err(ClaimError::NotString));
        let m = meta(json!({META_VERSION: "2025-11-25", META_CAPS: {}}));
        assert_eq!(check_modern_claim(&m), Err(ClaimError::Unsupported { requested: "2025-11-25" }));
        let m = meta(json!({META_VERSION: "2026-07-28", META_CAPS: []}));
        assert_eq!(check_modern_claim(&m), Err(ClaimError::CapsNotObject(Version::V2026_07_28)));
    }
}
