//! The dispatcher: one classified message in, at most one response line out
//! (SPEC sections 3, 4 and 5). Version-specific shapes are delegated to
//! [`crate::projection`].

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::host::{CallContext, Host, ToolFailure, ToolSpec};
use crate::json::write_str;
use crate::message::{contains_nul, parse_line, Incoming, Message};
use crate::projection::{self, Version, LEGACY_DEFAULT, SUPPORTED};
use crate::telemetry::{SpanEnd, SpanRecorder, SpanStart};

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;
pub const UNSUPPORTED_VERSION: i64 = -32022;

const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const META_CAPS: &str = "io.modelcontextprotocol/clientCapabilities";

/// Text of the contained error for an interrupted call.
pub const INTERRUPTED_TEXT: &str = "The tool call was interrupted.";

/// Server identity and instructions.
#[derive(Debug, Clone)]
pub struct ServerInfo {
    pub name: String,
    pub version: String,
    pub instructions: Option<String>,
}

/// Legacy session state (SPEC L1.1). Modern requests never touch it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LegacyState {
    pub initialized: bool,
    pub version: Option<Version>,
    pub client_initialized: bool,
}

/// A prepared server: registry, precomputed listings and legacy state.
pub struct Server {
    info: ServerInfo,
    server_info_json: String,
    tools: Vec<ToolSpec>,
    by_name: HashMap<String, usize>,
    /// `tools` arrays per version, prepared once.
    listings: [Vec<u8>; 4],
    pub legacy: LegacyState,
    recorder: Option<Box<dyn SpanRecorder>>,
    pending_end: Option<SpanEnd>,
    /// Diagnostic for stderr about the last line (SPEC W2.2), taken by the
    /// transport with [`Server::take_diagnostic`].
    diagnostic: Option<&'static str>,
}

/// Stderr diagnostic for an ignored client-sent response (SPEC W2.2).
pub const CLIENT_RESPONSE_DIAGNOSTIC: &str =
    "ignored a JSON-RPC response sent by the client (this server sends no requests)";

/// Outcome of handling one message, for the span.
struct Outcome {
    line: Option<Vec<u8>>,
    end: SpanEnd,
}

fn error_line(id: Option<&str>, code: i64, message: &str, detail: Option<&str>) -> Vec<u8> {
    let mut out = Vec::with_capacity(96);
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    out.extend_from_slice(id.unwrap_or("null").as_bytes());
    out.extend_from_slice(b",\"error\":{\"code\":");
    out.extend_from_slice(code.to_string().as_bytes());
    out.extend_from_slice(b",\"message\":");
    match detail {
        Some(d) => write_str(&mut out, &format!("{message}: {d}")),
        None => write_str(&mut out, message),
    }
    out.extend_from_slice(b"}}");
    out
}

fn standard_message(code: i64) -> &'static str {
    match code {
        PARSE_ERROR => "Parse error",
        INVALID_REQUEST => "Invalid Request",
        METHOD_NOT_FOUND => "Method not found",
        INVALID_PARAMS => "Invalid params",
        UNSUPPORTED_VERSION => "Unsupported protocol version",
        _ => "Internal error",
    }
}

/// A JSON-RPC error to send back.
#[derive(Debug)]
struct RpcError {
    code: i64,
    detail: Option<&'static str>,
    data: Option<String>,
}

impl RpcError {
    fn new(code: i64) -> RpcError {
        RpcError { code, detail: None, data: None }
    }
    fn detail(code: i64, d: &'static str) -> RpcError {
        RpcError { code, detail: Some(d), data: None }
    }
}

fn result_open(id: &str, cap: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(cap + 40);
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    out.extend_from_slice(id.as_bytes());
    out.extend_from_slice(b",\"result\":");
    out
}

/// Is this message a modern one (SPEC M1.1)? Returns its `_meta`.
fn modern_meta(params: Option<&Value>) -> Option<&Map<String, Value>> {
    match params {
        Some(Value::Object(p)) => match p.get("_meta") {
            Some(Value::Object(m)) if m.contains_key(META_VERSION) => Some(m),
            _ => None,
        },
        _ => None,
    }
}

impl Server {
    /// Build a server from the host's registry.
    pub fn new(info: ServerInfo, host: &mut dyn Host) -> Server {
        let tools = host.tools();
        Server::with_tools(info, tools)
    }

    pub fn with_tools(info: ServerInfo, tools: Vec<ToolSpec>) -> Server {
        let mut si = Vec::new();
        si.extend_from_slice(b"{\"name\":");
        write_str(&mut si, &info.name);
        si.extend_from_slice(b",\"version\":");
        write_str(&mut si, &info.version);
        si.push(b'}');
        let by_name = tools.iter().enumerate().map(|(i, t)| (t.name.clone(), i)).collect();
        let listings = Version::ALL.map(|v| projection::tools_array(&tools, v));
        Server {
            info,
            server_info_json: String::from_utf8(si).expect("utf8"),
            tools,
            by_name,
            listings,
            legacy: LegacyState::default(),
            recorder: None,
            pending_end: None,
            diagnostic: None,
        }
    }

    pub fn tools(&self) -> &[ToolSpec] {
        &self.tools
    }

    /// Install a span recorder (tracing on).
    pub fn set_recorder(&mut self, r: Option<Box<dyn SpanRecorder>>) {
        self.recorder = r;
    }

    /// Flush and stop the span recorder, if any.
    pub fn shutdown_recorder(&mut self) {
        if let Some(r) = self.recorder.as_mut() {
            r.shutdown();
        }
    }

    /// Handle one line. Returns the response line (without LF), if any.
    /// Call [`Server::after_write`] once the line has been written.
    pub fn handle_line(&mut self, line: &[u8], host: &mut dyn Host) -> Option<Vec<u8>> {
        self.diagnostic = None;
        match parse_line(line) {
            Incoming::Blank => None,
            Incoming::ClientResponse => {
                self.diagnostic = Some(CLIENT_RESPONSE_DIAGNOSTIC);
                None
            }
            Incoming::ParseError => Some(error_line(None, PARSE_ERROR, "Parse error", None)),
            Incoming::InvalidRequest { id } => {
                Some(error_line(id.as_deref(), INVALID_REQUEST, "Invalid Request", None))
            }
            Incoming::Message(msg) => self.handle_message(msg, host),
        }
    }

    /// The stderr diagnostic owed for the last handled line, if any (SPEC
    /// W2.2). The stdio transport prints it; in-process callers may ignore it.
    pub fn take_diagnostic(&mut self) -> Option<&'static str> {
        self.diagnostic.take()
    }

    /// End the span of the last message (after its response was written).
    pub fn after_write(&mut self) {
        if let (Some(end), Some(r)) = (self.pending_end.take(), self.recorder.as_mut()) {
            r.end(&end);
        }
    }

    fn handle_message(&mut self, msg: Message, host: &mut dyn Host) -> Option<Vec<u8>> {
        let ctx = match self.recorder.as_mut() {
            None => CallContext::default(),
            Some(r) => {
                let params = msg.params.as_ref().and_then(Value::as_object);
                let tool_name = if msg.method == "tools/call" {
                    params.and_then(|p| p.get("name")).and_then(Value::as_str)
                } else {
                    None
                };
                let meta = params.and_then(|p| p.get("_meta")).and_then(Value::as_object);
                let tool_registered = tool_name.is_some_and(|n| self.by_name.contains_key(n));
                let modern = modern_meta(msg.params.as_ref()).is_some();
                r.start(&SpanStart {
                    method: &msg.method,
                    id: msg.id.as_deref(),
                    tool_name,
                    tool_registered,
                    modern,
                    meta,
                })
            }
        };
        // L8: an unexpected engine failure (a panic) while handling one
        // request answers that request with -32603 and serving continues.
        let dispatched = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.dispatch(&msg, host, &ctx)));
        let out = match dispatched {
            Ok(o) => o,
            Err(_) => Outcome {
                line: msg.id.as_deref().map(|id| error_line(Some(id), INTERNAL_ERROR, "Internal error", None)),
                end: SpanEnd {
                    error_code: msg.id.as_ref().map(|_| INTERNAL_ERROR),
                    error_message: msg.id.as_ref().map(|_| ("Internal error", None)),
                    ..Default::default()
                },
            },
        };
        if self.recorder.is_some() {
            let mut end = out.end;
            end.notification = msg.id.is_none();
            self.pending_end = Some(end);
        }
        out.line
    }

    fn dispatch(&mut self, msg: &Message, host: &mut dyn Host, ctx: &CallContext) -> Outcome {
        let params = msg.params.as_ref();
        let modern = modern_meta(params);
        let id = match &msg.id {
            // Notifications: never answered (M1.2, L2.2).
            None => {
                if modern.is_none() && msg.method == "notifications/initialized" && self.legacy.initialized {
                    self.legacy.client_initialized = true;
                }
                return Outcome { line: None, end: SpanEnd::default() };
            }
            Some(id) => id.as_str(),
        };
        let res = match modern {
            Some(meta) => self.dispatch_modern(id, &msg.method, params, meta, host, ctx),
            None => self.dispatch_legacy(id, &msg.method, params, host, ctx),
        };
        match res {
            Ok(o) => o,
            Err((e, version)) => {
                let mut line = error_line(Some(id), e.code, standard_message(e.code), e.detail);
                if let Some(data) = e.data {
                    // Insert `,"data":…` before the closing `}}`.
                    line.truncate(line.len() - 2);
                    line.extend_from_slice(b",\"data\":");
                    line.extend_from_slice(data.as_bytes());
                    line.extend_from_slice(b"}}");
                }
                Outcome {
                    line: Some(line),
                    end: SpanEnd {
                        error_code: Some(e.code),
                        error_message: Some((standard_message(e.code), e.detail)),
                        protocol_version: version,
                        ..Default::default()
                    },
                }
            }
        }
    }

    fn dispatch_legacy(
        &mut self,
        id: &str,
        method: &str,
        params: Option<&Value>,
        host: &mut dyn Host,
        ctx: &CallContext,
    ) -> Result<Outcome, (RpcError, Option<Version>)> {
        let version_before = if self.legacy.initialized { self.legacy.version } else { None };
        let err = |e: RpcError, v: Option<Version>| Err((e, v));
        match method {
            "notifications/initialized" => err(RpcError::new(INVALID_REQUEST), version_before),
            "initialize" => {
                let v = match check_initialize(params) {
                    Some(requested) => Version::parse(requested).filter(|v| !v.is_modern()).unwrap_or(LEGACY_DEFAULT),
                    None => return err(RpcError::new(INVALID_PARAMS), version_before),
                };
                self.legacy.initialized = true;
                self.legacy.version = Some(v);
                let mut out = result_open(id, 200);
                out.extend_from_slice(b"{\"protocolVersion\":");
                write_str(&mut out, v.as_str());
                out.extend_from_slice(b",\"capabilities\":{\"tools\":{\"listChanged\":false}},\"serverInfo\":");
                out.extend_from_slice(self.server_info_json.as_bytes());
                if let Some(instr) = &self.info.instructions {
                    out.extend_from_slice(b",\"instructions\":");
                    write_str(&mut out, instr);
                }
                out.extend_from_slice(b"}}");
                Ok(ok(out, Some(v)))
            }
            "ping" => {
                let mut out = result_open(id, 2);
                out.extend_from_slice(b"{}}");
                Ok(ok(out, version_before))
            }
            "server/discover" => err(
                RpcError::detail(INVALID_PARAMS, "missing _meta io.modelcontextprotocol/protocolVersion"),
                version_before,
            ),
            _ if !self.legacy.initialized => err(RpcError::detail(INVALID_REQUEST, "server not initialized"), None),
            "tools/list" => {
                let v = self.legacy.version.unwrap_or(LEGACY_DEFAULT);
                self.tools_list(id, params, v).map_err(|e| (e, Some(v)))
            }
            "tools/call" => {
                let v = self.legacy.version.unwrap_or(LEGACY_DEFAULT);
                self.tools_call(id, params, v, host, ctx).map_err(|e| (e, Some(v)))
            }
            _ => err(RpcError::new(METHOD_NOT_FOUND), version_before),
        }
    }

    fn dispatch_modern(
        &mut self,
        id: &str,
        method: &str,
        params: Option<&Value>,
        meta: &Map<String, Value>,
        host: &mut dyn Host,
        ctx: &CallContext,
    ) -> Result<Outcome, (RpcError, Option<Version>)> {
        if !matches!(method, "server/discover" | "tools/list" | "tools/call") {
            return Err((RpcError::new(METHOD_NOT_FOUND), None));
        }
        let claimed = match meta.get(META_VERSION) {
            Some(Value::String(s)) => s,
            _ => {
                return Err((
                    RpcError::detail(INVALID_PARAMS, "_meta io.modelcontextprotocol/protocolVersion must be a string"),
                    None,
                ))
            }
        };
        if claimed != Version::V2026_07_28.as_str() {
            let mut data = Vec::new();
            data.extend_from_slice(b"{\"supported\":[");
            for (i, v) in SUPPORTED.iter().enumerate() {
                if i > 0 {
                    data.push(b',');
                }
                write_str(&mut data, v.as_str());
            }
            data.extend_from_slice(b"],\"requested\":");
            write_str(&mut data, claimed);
            data.push(b'}');
            let e = RpcError {
                code: UNSUPPORTED_VERSION,
                detail: None,
                data: Some(String::from_utf8(data).expect("utf8")),
            };
            return Err((e, None));
        }
        let v = Version::V2026_07_28;
        if !matches!(meta.get(META_CAPS), Some(Value::Object(_))) {
            return Err((
                RpcError::detail(INVALID_PARAMS, "_meta io.modelcontextprotocol/clientCapabilities must be an object"),
                Some(v),
            ));
        }
        let r = match method {
            "server/discover" => Ok(self.discover(id)),
            "tools/list" => self.tools_list(id, params, v),
            _ => self.tools_call(id, params, v, host, ctx),
        };
        r.map_err(|e| (e, Some(v)))
    }

    fn discover(&self, id: &str) -> Outcome {
        let mut out = result_open(id, 300);
        out.extend_from_slice(b"{\"resultType\":\"complete\",\"supportedVersions\":[");
        for (i, v) in SUPPORTED.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            write_str(&mut out, v.as_str());
        }
        out.extend_from_slice(b"],\"capabilities\":{\"tools\":{\"listChanged\":false}}");
        if let Some(instr) = &self.info.instructions {
            out.extend_from_slice(b",\"instructions\":");
            write_str(&mut out, instr);
        }
        out.extend_from_slice(b",\"ttlMs\":300000,\"cacheScope\":\"public\",");
        projection::write_server_meta(&mut out, &self.server_info_json);
        out.extend_from_slice(b"}}");
        ok(out, Some(Version::V2026_07_28))
    }

    fn tools_list(&self, id: &str, params: Option<&Value>, v: Version) -> Result<Outcome, RpcError> {
        match params {
            None | Some(Value::Null) => {}
            Some(Value::Object(p)) => {
                if let Some(m) = p.get("_meta") {
                    if !m.is_object() {
                        return Err(RpcError::new(INVALID_PARAMS));
                    }
                }
                if let Some(c) = p.get("cursor") {
                    if !c.is_null() {
                        return Err(RpcError::detail(INVALID_PARAMS, "invalid cursor"));
                    }
                }
            }
            Some(_) => return Err(RpcError::new(INVALID_PARAMS)),
        }
        let listing = &self.listings[v.index()];
        let mut out = result_open(id, listing.len() + 200);
        if v.is_modern() {
            out.extend_from_slice(b"{\"resultType\":\"complete\",\"tools\":");
            out.extend_from_slice(listing);
            out.extend_from_slice(b",\"ttlMs\":300000,\"cacheScope\":\"public\",");
            projection::write_server_meta(&mut out, &self.server_info_json);
            out.extend_from_slice(b"}}");
        } else {
            out.extend_from_slice(b"{\"tools\":");
            out.extend_from_slice(listing);
            out.extend_from_slice(b"}}");
        }
        Ok(ok(out, Some(v)))
    }

    fn tools_call(
        &self,
        id: &str,
        params: Option<&Value>,
        v: Version,
        host: &mut dyn Host,
        ctx: &CallContext,
    ) -> Result<Outcome, RpcError> {
        let p = match params {
            Some(Value::Object(p)) => p,
            _ => return Err(RpcError::new(INVALID_PARAMS)),
        };
        let name = match p.get("name") {
            Some(Value::String(n)) => n,
            _ => return Err(RpcError::new(INVALID_PARAMS)),
        };
        let args = match p.get("arguments") {
            None | Some(Value::Null) => None,
            Some(Value::Object(a)) => Some(a),
            Some(_) => return Err(RpcError::new(INVALID_PARAMS)),
        };
        let index = match self.by_name.get(name.as_str()) {
            Some(i) => *i,
            None => return Err(RpcError::detail(INVALID_PARAMS, "unknown tool")),
        };
        if let Some(a) = args {
            if a.iter().any(|(k, v)| k.contains('\0') || contains_nul(v)) {
                return Err(RpcError::new(INVALID_PARAMS));
            }
        }
        let outcome = host.call_tool(index, args, ctx);
        let mut out = result_open(id, outcome.as_ref().map_or(256, |r| r.approx_len()));
        let tool_error = match &outcome {
            Ok(r) => projection::write_call_result(&mut out, r, v, &self.server_info_json),
            Err(ToolFailure::Error(text)) => {
                projection::write_error_result(&mut out, text, v, &self.server_info_json);
                true
            }
            Err(ToolFailure::Interrupted) => {
                projection::write_error_result(&mut out, INTERRUPTED_TEXT, v, &self.server_info_json);
                true
            }
        };
        out.push(b'}');
        let mut o = ok(out, Some(v));
        o.end.tool_error = tool_error;
        Ok(o)
    }
}

fn ok(line: Vec<u8>, version: Option<Version>) -> Outcome {
    Outcome { line: Some(line), end: SpanEnd { protocol_version: version, ..Default::default() } }
}

/// L3.1: returns the requested version when params are acceptable.
fn check_initialize(params: Option<&Value>) -> Option<&str> {
    let p = params?.as_object()?;
    let pv = p.get("protocolVersion")?.as_str().filter(|s| !s.is_empty())?;
    p.get("capabilities")?.as_object()?;
    let ci = p.get("clientInfo")?.as_object()?;
    ci.get("name")?.as_str()?;
    ci.get("version")?.as_str()?;
    Some(pv)
}
