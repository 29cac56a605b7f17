//! Every envelope and result whose shape differs by protocol version is
//! written here (RULES section 6); [`crate::version`] says which versions
//! exist and what each can carry. Together they hold every difference
//! between protocol versions.
//!
//! The dispatcher decides *which* version applies to a message; this module
//! decides what the answer looks like in that version: the `initialize`
//! result, the `server/discover` result, the `tools/list` result and its
//! tool objects, tool results and contained tool errors, and the data of the
//! unsupported-version error. The JSON-RPC frame around a result or an
//! error (`{"jsonrpc":"2.0","id":…,`) is the same in every version and is
//! written by the dispatcher.

use crate::host::{Block, Content, ToolResult, ToolSpec};
use crate::tasks::Support;
use std::num::NonZeroUsize;

use crate::json::write_str;
use crate::pagination::{self, Pages};
use crate::version::{Admit, PerVersion, Version, META_SERVER_INFO, SUPPORTED};

/// Does this JSON text have a root member `"type": "object"`? Used to decide
/// whether a legacy client may see an output schema.
pub fn schema_root_is_object(schema: &str) -> bool {
    // Only the root members are decoded: raw values skip nested content
    // without a depth limit, so a deep schema is judged by its root too.
    type Root<'a> = std::collections::HashMap<String, &'a serde_json::value::RawValue>;
    match serde_json::from_str::<Root>(schema) {
        Ok(m) => m.get("type").and_then(|t| serde_json::from_str::<String>(t.get()).ok()).as_deref() == Some("object"),
        Err(_) => false,
    }
}

fn write_members(out: &mut Vec<u8>, members: &[(String, String)]) {
    out.push(b'{');
    crate::json::write_members(out, members);
    out.push(b'}');
}

/// One tool object of a `tools/list` result (RULES P1).
pub fn write_tool(out: &mut Vec<u8>, tool: &ToolSpec, v: Version) {
    write_tool_as(out, tool, v, Support::Forbidden);
}

/// One tool object, declaring how it runs as a task (RULES V1.2: 2025-11-25
/// only; absent means forbidden).
pub fn write_tool_as(out: &mut Vec<u8>, tool: &ToolSpec, v: Version, support: Support) {
    out.extend_from_slice(b"{\"name\":");
    write_str(out, &tool.name);
    out.extend_from_slice(b",\"description\":");
    write_str(out, &tool.description);
    out.extend_from_slice(b",\"inputSchema\":");
    out.extend_from_slice(tool.input_schema.as_bytes());
    let f = v.features();
    if f.tool_annotations && !tool.annotations.is_empty() {
        out.extend_from_slice(b",\"annotations\":");
        write_members(out, &tool.annotations);
    }
    if let Some(schema) = &tool.output_schema {
        let emit = match f.output_schema {
            Admit::Never => false,
            Admit::Objects => schema_root_is_object(schema),
            Admit::Any => true,
        };
        if emit {
            out.extend_from_slice(b",\"outputSchema\":");
            out.extend_from_slice(schema.as_bytes());
        }
    }
    if f.task_augmentation && support != Support::Forbidden {
        out.extend_from_slice(b",\"execution\":{\"taskSupport\":");
        write_str(out, support.as_str());
        out.push(b'}');
    }
    out.push(b'}');
}

/// The `tools` array for one version.
pub fn tools_array(tools: &[ToolSpec], v: Version) -> Vec<u8> {
    let with: Vec<(&ToolSpec, Support)> = tools.iter().map(|t| (t, Support::Forbidden)).collect();
    tools_array_as(&with, v)
}

/// The `tools` array for one version, each tool with its task support.
fn tools_array_as(tools: &[(&ToolSpec, Support)], v: Version) -> Vec<u8> {
    let mut out = Vec::with_capacity(256 * tools.len() + 2);
    out.push(b'[');
    for (i, (t, s)) in tools.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_tool_as(&mut out, t, v, *s);
    }
    out.push(b']');
    out
}

/// The pages of `tools` arrays of every version, prepared once per server
/// (RULES L5.2): a `tools/list` answer copies one of them.
#[derive(Debug)]
pub struct Listings(PerVersion<Pages>);

impl Listings {
    pub fn new(tools: &[ToolSpec], page_size: Option<NonZeroUsize>) -> Listings {
        Listings::with_support(tools, page_size, &[])
    }

    /// The listings of tools that run as tasks as `support` says (in the
    /// tools' order; missing entries are forbidden).
    pub fn with_support(tools: &[ToolSpec], page_size: Option<NonZeroUsize>, support: &[Support]) -> Listings {
        let with: Vec<(&ToolSpec, Support)> =
            tools.iter().enumerate().map(|(i, t)| (t, support.get(i).copied().unwrap_or_default())).collect();
        Listings(Version::ALL.map(|v| Pages::new(&with, page_size, |page| tools_array_as(page, v))))
    }

    /// The pages of the `tools` array (JSON text) for version `v`.
    pub fn get(&self, v: Version) -> &Pages {
        &self.0[v.index()]
    }
}

fn opt_str(out: &mut Vec<u8>, key: &[u8], val: &Option<String>) {
    if let Some(s) = val {
        out.extend_from_slice(key);
        write_str(out, s);
    }
}

pub fn write_block(out: &mut Vec<u8>, b: &Block, v: Version) {
    out.extend_from_slice(b"{\"type\":");
    write_str(out, b.content.type_name());
    match &b.content {
        Content::Text { text } => {
            out.extend_from_slice(b",\"text\":");
            write_str(out, text);
        }
        Content::Image { data, mime_type } | Content::Audio { data, mime_type } => {
            out.extend_from_slice(b",\"data\":");
            write_str(out, data);
            out.extend_from_slice(b",\"mimeType\":");
            write_str(out, mime_type);
        }
        Content::ResourceLink { uri, name, title, description, mime_type, size } => {
            out.extend_from_slice(b",\"uri\":");
            write_str(out, uri);
            out.extend_from_slice(b",\"name\":");
            write_str(out, name);
            opt_str(out, b",\"title\":", title);
            opt_str(out, b",\"description\":", description);
            opt_str(out, b",\"mimeType\":", mime_type);
            if let Some(size) = size {
                out.extend_from_slice(b",\"size\":");
                out.extend_from_slice(size.as_bytes());
            }
        }
        Content::Resource { uri, mime_type, text, blob } => {
            out.extend_from_slice(b",\"resource\":{\"uri\":");
            write_str(out, uri);
            opt_str(out, b",\"mimeType\":", mime_type);
            opt_str(out, b",\"text\":", text);
            opt_str(out, b",\"blob\":", blob);
            out.push(b'}');
        }
    }
    // Annotations: R order, last_modified renamed (or dropped where the
    // version has no lastModified).
    let f = v.features();
    let mut first = true;
    for (k, val) in &b.annotations {
        let key: &str = if k == "last_modified" {
            if !f.last_modified {
                continue;
            }
            "lastModified"
        } else {
            k
        };
        out.extend_from_slice(if first { b",\"annotations\":{" } else { b"," });
        first = false;
        write_str(out, key);
        out.push(b':');
        out.extend_from_slice(val.as_bytes());
    }
    if !first {
        out.push(b'}');
    }
    if f.block_meta && !b.meta.is_empty() {
        out.extend_from_slice(b",\"_meta\":");
        write_members(out, &b.meta);
    }
    out.push(b'}');
}

/// Write a projected `CallToolResult` object. `server_info` is the JSON text
/// of `{"name":…,"version":…}`, used for modern results. Returns whether the
/// written result has `isError: true`.
pub fn write_call_result(out: &mut Vec<u8>, r: &ToolResult, v: Version, server_info: &str) -> bool {
    let f = v.features();
    if !f.audio_and_links {
        // P3: audio and resource links cannot be represented.
        let mut bad: Vec<&'static str> = Vec::new();
        for b in &r.content {
            let t = b.content.type_name();
            if matches!(t, "audio" | "resource_link") && !bad.contains(&t) {
                bad.push(t);
            }
        }
        if !bad.is_empty() {
            let text = format!(
                "This result cannot be sent with MCP protocol version {}, which has no {} content. Return text, image or resource content instead.",
                v.as_str(),
                bad.join(" or ")
            );
            write_error_result(out, &text, v, server_info);
            return true;
        }
    }
    out.push(b'{');
    if f.modern {
        out.extend_from_slice(b"\"resultType\":\"complete\",");
    }
    out.extend_from_slice(b"\"content\":[");
    for (i, b) in r.content.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_block(out, b, v);
    }
    out.extend_from_slice(b"],\"isError\":");
    out.extend_from_slice(if r.is_error { b"true" } else { b"false" });
    if let Some(sc) = &r.structured {
        let emit = match f.structured_content {
            Admit::Never => false,
            Admit::Objects => sc.as_bytes().first() == Some(&b'{'),
            Admit::Any => true,
        };
        if emit {
            out.extend_from_slice(b",\"structuredContent\":");
            out.extend_from_slice(sc.as_bytes());
        }
    }
    if f.modern {
        out.extend_from_slice(b",\"_meta\":{");
        for (k, val) in &r.meta {
            if k == META_SERVER_INFO {
                continue;
            }
            write_str(out, k);
            out.push(b':');
            out.extend_from_slice(val.as_bytes());
            out.push(b',');
        }
        write_str(out, META_SERVER_INFO);
        out.push(b':');
        out.extend_from_slice(server_info.as_bytes());
        out.push(b'}');
    } else if !r.meta.is_empty() {
        out.extend_from_slice(b",\"_meta\":");
        write_members(out, &r.meta);
    }
    out.push(b'}');
    r.is_error
}

/// A contained tool error (RULES L6.6): one text block, `isError: true`, plus
/// the modern members when the request was modern.
pub fn write_error_result(out: &mut Vec<u8>, text: &str, v: Version, server_info: &str) {
    open_result(out, v);
    out.extend_from_slice(b"\"content\":[{\"type\":\"text\",\"text\":");
    write_str(out, text);
    out.extend_from_slice(b"}],\"isError\":true");
    close_result(out, v, server_info, false);
}

/// `{` and, in 2026-07-28, `"resultType":"complete",`: the start of a
/// complete result object (RULES M1).
pub fn open_result(out: &mut Vec<u8>, v: Version) {
    out.extend_from_slice(if v.is_modern() { b"{\"resultType\":\"complete\"," } else { b"{" });
}

/// The end of a result object that [`open_result`] began: in 2026-07-28 the
/// cache hints when the result may be cached (RULES M4) and the server's
/// `_meta`, then `}`.
pub fn close_result(out: &mut Vec<u8>, v: Version, server_info: &str, cacheable: bool) {
    if v.is_modern() {
        if cacheable {
            out.push(b',');
            write_cache_hints(out);
        }
        out.push(b',');
        write_server_meta(out, server_info);
    }
    out.push(b'}');
}

/// Write the modern trailing `_meta` with only the server identity.
pub fn write_server_meta(out: &mut Vec<u8>, server_info: &str) {
    out.extend_from_slice(b"\"_meta\":{");
    write_str(out, META_SERVER_INFO);
    out.push(b':');
    out.extend_from_slice(server_info.as_bytes());
    out.push(b'}');
}

/// The server identity object `{"name":…,"version":…}` as JSON text: the
/// `serverInfo` of `initialize` and the [`META_SERVER_INFO`] value of modern
/// results. Encoded once per server.
pub fn server_info_json(name: &str, version: &str) -> String {
    let mut si = Vec::with_capacity(name.len() + version.len() + 24);
    si.extend_from_slice(b"{\"name\":");
    write_str(&mut si, name);
    si.extend_from_slice(b",\"version\":");
    write_str(&mut si, version);
    si.push(b'}');
    String::from_utf8(si).expect("JSON text of UTF-8 strings is UTF-8")
}

/// `capabilities` of this server, the same in every version: tools (the
/// list never changes) and log messages (RULES G1.3)...
const CAPABILITIES: &[u8] = b"\"capabilities\":{\"tools\":{\"listChanged\":false},\"logging\":{}";

/// What a server offers beside tools and log messages: prompts (RULES
/// Q1.1), resources (U1.1) and completion of prompt arguments and template
/// variables (Q3, U4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Offers {
    pub prompts: bool,
    pub resources: bool,
    pub completions: bool,
    /// The tools may change the resources (RULES U3.2): `listChanged`.
    pub resource_changes: bool,
    /// Tools run as tasks (RULES V1.1), and `tasks/list` is offered.
    pub tasks: Option<TaskOffer>,
}

/// What a server with tasks declares (RULES V1.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskOffer {
    /// `tasks/list` (2025-11-25).
    pub list: bool,
}

fn write_capabilities(out: &mut Vec<u8>, offers: Offers, modern: bool) {
    out.extend_from_slice(CAPABILITIES);
    if offers.prompts {
        out.extend_from_slice(b",\"prompts\":{\"listChanged\":false}");
    }
    if offers.resources {
        // RULES U1.1, U3: a client subscribes (legacy:
        // resources/subscribe; 2026-07-28: subscriptions/listen); it hears
        // of list changes when the tools may change the resources.
        let _ = modern;
        out.extend_from_slice(if offers.resource_changes {
            b",\"resources\":{\"subscribe\":true,\"listChanged\":true}"
        } else {
            b",\"resources\":{\"subscribe\":true,\"listChanged\":false}"
        });
    }
    if offers.completions {
        out.extend_from_slice(b",\"completions\":{}");
    }
    match (offers.tasks, modern) {
        // RULES V1.1: 2026-07-28 names the extension; 2025-11-25 declares
        // the requests that may be tasks (an older client ignores it).
        (Some(_), true) => {
            out.extend_from_slice(b",\"extensions\":{\"");
            out.extend_from_slice(crate::tasks::EXTENSION.as_bytes());
            out.extend_from_slice(b"\":{}}");
        }
        (Some(t), false) => {
            out.extend_from_slice(b",\"tasks\":{");
            if t.list {
                out.extend_from_slice(b"\"list\":{},");
            }
            out.extend_from_slice(b"\"cancel\":{},\"requests\":{\"tools\":{\"call\":{}}}}");
        }
        (None, _) => {}
    }
    out.push(b'}');
}

/// `"ttlMs":…,"cacheScope":…` of a modern listing (RULES M3, M4).
pub fn write_cache_hints(out: &mut Vec<u8>) {
    out.extend_from_slice(CACHE_HINTS);
}

/// How long (and for whom) a modern client may cache discovery and listing
/// results (RULES M3, M4).
const CACHE_HINTS: &[u8] = b"\"ttlMs\":300000,\"cacheScope\":\"public\"";

fn write_instructions(out: &mut Vec<u8>, instructions: Option<&str>) {
    if let Some(instr) = instructions {
        out.extend_from_slice(b",\"instructions\":");
        write_str(out, instr);
    }
}

/// The result object of a legacy `initialize` that settled on `v`
/// (RULES L3).
pub fn write_initialize_result(
    out: &mut Vec<u8>,
    v: Version,
    server_info: &str,
    instructions: Option<&str>,
    offers: Offers,
) {
    out.extend_from_slice(b"{\"protocolVersion\":");
    write_str(out, v.as_str());
    out.push(b',');
    write_capabilities(out, offers, false);
    out.extend_from_slice(b",\"serverInfo\":");
    out.extend_from_slice(server_info.as_bytes());
    write_instructions(out, instructions);
    out.push(b'}');
}

/// The result object of a modern `server/discover` (RULES M3): the
/// versions in discovery order, capabilities, instructions, cache hints and
/// the server identity.
pub fn write_discover_result(out: &mut Vec<u8>, server_info: &str, instructions: Option<&str>, offers: Offers) {
    out.extend_from_slice(b"{\"resultType\":\"complete\",\"supportedVersions\":");
    write_version_list(out);
    out.push(b',');
    write_capabilities(out, offers, true);
    write_instructions(out, instructions);
    out.push(b',');
    out.extend_from_slice(CACHE_HINTS);
    out.push(b',');
    write_server_meta(out, server_info);
    out.push(b'}');
}

/// The result object of `tools/list` in version `v` around the prepared
/// `tools` array `listing` (see [`Listings`]).
pub fn write_tools_list_result(out: &mut Vec<u8>, listing: &[u8], next: Option<&str>, v: Version, server_info: &str) {
    if v.is_modern() {
        out.extend_from_slice(b"{\"resultType\":\"complete\",\"tools\":");
        out.extend_from_slice(listing);
        pagination::write_next(out, next);
        out.push(b',');
        out.extend_from_slice(CACHE_HINTS);
        out.push(b',');
        write_server_meta(out, server_info);
        out.push(b'}');
    } else {
        out.extend_from_slice(b"{\"tools\":");
        out.extend_from_slice(listing);
        pagination::write_next(out, next);
        out.push(b'}');
    }
}

/// A rough size of a `tools/list` result around `listing`, to reserve the
/// response buffer once.
pub fn tools_list_result_len(listing: &[u8]) -> usize {
    listing.len() + 200
}

/// The `data` of the unsupported-version error (RULES M2.3): the versions
/// we speak, in discovery order, and the version the client asked for.
pub fn write_unsupported_version_data(out: &mut Vec<u8>, requested: &str) {
    out.extend_from_slice(b"{\"supported\":");
    write_version_list(out);
    out.extend_from_slice(b",\"requested\":");
    write_str(out, requested);
    out.push(b'}');
}

/// `["2026-07-28",…]`: [`SUPPORTED`] in discovery order.
fn write_version_list(out: &mut Vec<u8>) {
    out.push(b'[');
    for (i, v) in SUPPORTED.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_str(out, v.as_str());
    }
    out.push(b']');
}

/// One `notifications/progress` line (RULES C3), without its LF: `token` is
/// the client's progress token as raw JSON text (a string or an integer),
/// `progress` and `total` are finite. The `message` member exists from
/// 2025-03-26 on; older versions get the notification without it.
pub fn write_progress_notification(
    out: &mut Vec<u8>,
    v: Version,
    token: &str,
    progress: f64,
    total: Option<f64>,
    message: Option<&str>,
) {
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":");
    out.extend_from_slice(token.as_bytes());
    out.extend_from_slice(b",\"progress\":");
    crate::json::write_shortest_f64(out, progress);
    if let Some(t) = total {
        out.extend_from_slice(b",\"total\":");
        crate::json::write_shortest_f64(out, t);
    }
    if let Some(m) = message.filter(|_| v.features().progress_message) {
        out.extend_from_slice(b",\"message\":");
        write_str(out, m);
    }
    out.extend_from_slice(b"}}");
}

/// One `notifications/message` line (RULES G4), without its LF: the same in
/// every version. `entry.data` is JSON text already.
pub fn write_log_notification(out: &mut Vec<u8>, entry: &crate::logging::LogEntry) {
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":");
    write_str(out, entry.level.as_str());
    if let Some(l) = &entry.logger {
        out.extend_from_slice(b",\"logger\":");
        write_str(out, l);
    }
    out.extend_from_slice(b",\"data\":");
    out.extend_from_slice(entry.data.as_bytes());
    out.extend_from_slice(b"}}");
}

#[cfg(test)]
mod tests {
    use super::*;

    const SI: &str = r#"{"name":"mcplite","version":"0.1.0"}"#;

    fn tool(output: Option<&str>) -> ToolSpec {
        ToolSpec {
            name: "t".into(),
            description: "d".into(),
            input_schema: r#"{"type":"object","properties":{},"additionalProperties":false}"#.into(),
            annotations: vec![("title".into(), "\"T\"".into()), ("readOnlyHint".into(), "true".into())],
            output_schema: output.map(String::from),
        }
    }

    fn tl(t: &ToolSpec, v: Version) -> String {
        let mut o = Vec::new();
        write_tool(&mut o, t, v);
        String::from_utf8(o).unwrap()
    }

    fn cr(r: &ToolResult, v: Version) -> String {
        let mut o = Vec::new();
        write_call_result(&mut o, r, v, SI);
        String::from_utf8(o).unwrap()
    }

    #[test]
    fn tool_annotations_and_output_schema_per_version() {
        let obj = tool(Some(r#"{"type":"object","properties":{"a":{"type":"number"}}}"#));
        let arr = tool(Some(r#"{"type":"array"}"#));
        let base = r#"{"name":"t","description":"d","inputSchema":{"type":"object","properties":{},"additionalProperties":false}"#;
        assert_eq!(tl(&obj, Version::V2024_11_05), format!("{base}}}"));
        assert_eq!(
            tl(&obj, Version::V2025_06_18),
            format!(
                r#"{base},"annotations":{{"title":"T","readOnlyHint":true}},"outputSchema":{{"type":"object","properties":{{"a":{{"type":"number"}}}}}}}}"#
            )
        );
        assert_eq!(
            tl(&arr, Version::V2025_11_25),
            format!(r#"{base},"annotations":{{"title":"T","readOnlyHint":true}}}}"#)
        );
        assert_eq!(
            tl(&arr, Version::V2026_07_28),
            format!(r#"{base},"annotations":{{"title":"T","readOnlyHint":true}},"outputSchema":{{"type":"array"}}}}"#)
        );
    }

    fn text(f: impl FnOnce(&mut Vec<u8>)) -> String {
        let mut o = Vec::new();
        f(&mut o);
        String::from_utf8(o).unwrap()
    }

    #[test]
    fn envelopes_per_version() {
        assert_eq!(server_info_json("mcplite", "0.1.0"), SI);
        assert_eq!(
            text(|o| write_initialize_result(o, Version::V2025_06_18, SI, None, Offers::default())),
            r#"{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":false},"logging":{}},"serverInfo":{"name":"mcplite","version":"0.1.0"}}"#
        );
        assert_eq!(
            text(|o| write_discover_result(o, SI, Some("a\nb"), Offers::default())),
            r#"{"resultType":"complete","supportedVersions":["2026-07-28","2025-11-25","2025-06-18","2024-11-05"],"capabilities":{"tools":{"listChanged":false},"logging":{}},"instructions":"a\nb","ttlMs":300000,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcplite","version":"0.1.0"}}}"#
        );
        assert_eq!(text(|o| write_tools_list_result(o, b"[]", None, Version::V2024_11_05, SI)), r#"{"tools":[]}"#);
        assert_eq!(
            text(|o| write_tools_list_result(o, b"[]", None, Version::V2026_07_28, SI)),
            r#"{"resultType":"complete","tools":[],"ttlMs":300000,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcplite","version":"0.1.0"}}}"#
        );
        assert_eq!(
            text(|o| write_unsupported_version_data(o, "x\"")),
            r#"{"supported":["2026-07-28","2025-11-25","2025-06-18","2024-11-05"],"requested":"x\""}"#
        );
        let tools = [tool(Some(r#"{"type":"array"}"#))];
        let l = Listings::new(&tools, None);
        for v in Version::ALL {
            assert_eq!(l.get(v).page(0), (tools_array(&tools, v).as_slice(), None));
        }
        assert_eq!(
            text(|o| write_tools_list_result(o, b"[]", Some("page-1"), Version::V2025_11_25, SI)),
            r#"{"tools":[],"nextCursor":"page-1"}"#
        );
        assert_eq!(
            text(|o| write_tools_list_result(o, b"[]", Some("page-1"), Version::V2026_07_28, SI)),
            r#"{"resultType":"complete","tools":[],"nextCursor":"page-1","ttlMs":300000,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcplite","version":"0.1.0"}}}"#
        );
    }

    #[test]
    fn schema_root_check_is_direct() {
        assert!(schema_root_is_object(r#"{"type":"object"}"#));
        assert!(!schema_root_is_object(r##"{"$ref":"#/$defs/x"}"##));
        assert!(!schema_root_is_object(r#"{"type":["object"]}"#));
        assert!(!schema_root_is_object("[]"));
    }

    #[test]
    fn structured_content_per_version() {
        let r = ToolResult {
            content: vec![Block::text("{\"a\":1}")],
            structured: Some("{\"a\":1}".into()),
            ..Default::default()
        };
        assert_eq!(cr(&r, Version::V2024_11_05), r#"{"content":[{"type":"text","text":"{\"a\":1}"}],"isError":false}"#);
        assert_eq!(
            cr(&r, Version::V2025_06_18),
            r#"{"content":[{"type":"text","text":"{\"a\":1}"}],"isError":false,"structuredContent":{"a":1}}"#
        );
        let arr = ToolResult { structured: Some("[1,2]".into()), ..ToolResult::text("[1,2]") };
        assert_eq!(cr(&arr, Version::V2025_11_25), r#"{"content":[{"type":"text","text":"[1,2]"}],"isError":false}"#);
        assert_eq!(
            cr(&arr, Version::V2026_07_28),
            r#"{"resultType":"complete","content":[{"type":"text","text":"[1,2]"}],"isError":false,"structuredContent":[1,2],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcplite","version":"0.1.0"}}}"#
        );
    }

    #[test]
    fn meta_merge_modern_and_legacy() {
        let r = ToolResult {
            content: vec![Block::text("x")],
            meta: vec![("io.modelcontextprotocol/serverInfo".into(), "1".into()), ("k".into(), "\"v\"".into())],
            ..Default::default()
        };
        assert_eq!(
            cr(&r, Version::V2025_06_18),
            r#"{"content":[{"type":"text","text":"x"}],"isError":false,"_meta":{"io.modelcontextprotocol/serverInfo":1,"k":"v"}}"#
        );
        assert_eq!(
            cr(&r, Version::V2026_07_28),
            r#"{"resultType":"complete","content":[{"type":"text","text":"x"}],"isError":false,"_meta":{"k":"v","io.modelcontextprotocol/serverInfo":{"name":"mcplite","version":"0.1.0"}}}"#
        );
    }

    #[test]
    fn blocks_and_annotation_gating() {
        let b = Block {
            content: Content::ResourceLink {
                uri: "file:///a".into(),
                name: "a".into(),
                title: None,
                description: Some("D".into()),
                mime_type: Some("text/plain".into()),
                size: Some("0".into()),
            },
            annotations: vec![
                ("audience".into(), "[\"user\"]".into()),
                ("last_modified".into(), "\"2025-01-01\"".into()),
            ],
            meta: vec![("m".into(), "null".into())],
        };
        let r = ToolResult { content: vec![b.clone()], ..Default::default() };
        assert_eq!(
            cr(&r, Version::V2025_06_18),
            r#"{"content":[{"type":"resource_link","uri":"file:///a","name":"a","description":"D","mimeType":"text/plain","size":0,"annotations":{"audience":["user"],"lastModified":"2025-01-01"},"_meta":{"m":null}}],"isError":false}"#
        );
        // 2024-11-05: a resource link turns the whole result into a tool error.
        let legacy = cr(&r, Version::V2024_11_05);
        assert!(legacy.starts_with(
            r#"{"content":[{"type":"text","text":"This result cannot be sent with MCP protocol version 2024-11-05"#
        ));
        assert!(legacy.contains("resource_link"));
        assert!(legacy.ends_with(r#""isError":true}"#));
        // Only lastModified annotations: dropped entirely on 2024-11-05.
        let img = Block {
            content: Content::Image { data: "AA==".into(), mime_type: "image/png".into() },
            annotations: vec![("last_modified".into(), "\"x\"".into())],
            meta: vec![("m".into(), "1".into())],
        };
        let r = ToolResult { content: vec![img], ..Default::default() };
        assert_eq!(
            cr(&r, Version::V2024_11_05),
            r#"{"content":[{"type":"image","data":"AA==","mimeType":"image/png"}],"isError":false}"#
        );
        let res = Block {
            content: Content::Resource { uri: "u:1".into(), mime_type: None, text: None, blob: Some("QQ==".into()) },
            annotations: vec![],
            meta: vec![],
        };
        let r = ToolResult { content: vec![res], ..Default::default() };
        assert_eq!(
            cr(&r, Version::V2024_11_05),
            r#"{"content":[{"type":"resource","resource":{"uri":"u:1","blob":"QQ=="}}],"isError":false}"#
        );
    }

    #[test]
    fn p3_names_types_in_first_occurrence_order() {
        let audio = Block {
            content: Content::Audio { data: "x".into(), mime_type: "audio/wav".into() },
            annotations: vec![],
            meta: vec![],
        };
        let link = Block {
            content: Content::ResourceLink {
                uri: "u".into(),
                name: "n".into(),
                title: None,
                description: None,
                mime_type: None,
                size: None,
            },
            annotations: vec![],
            meta: vec![],
        };
        let r = ToolResult { content: vec![link.clone(), audio.clone(), link], ..Default::default() };
        let s = cr(&r, Version::V2024_11_05);
        assert!(s.contains("no resource_link or audio content"), "{s}");
        // Other versions keep everything.
        assert!(cr(&r, Version::V2025_11_25).contains("\"type\":\"audio\""));
    }
}
