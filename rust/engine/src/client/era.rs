//! Era negotiation (RULES K2): the `server/discover` probe, the legacy
//! `initialize` handshake it falls back to, and a late discover answer that
//! still decides for the modern era (see the module documentation of
//! `client/mod.rs`).

use std::time::{Duration, Instant};

use serde_json::Value;

use super::wire::{self, json_string, Member};
use super::{ClientError, Connection, Options, Outgoing, Poll, LEGACY, LEGACY_PREFERRED, MODERN};
use crate::codes;
use crate::logging::{META_LOG_LEVEL, SET_LEVEL};
use crate::version::{META_CAPS, META_SERVER_INFO, META_VERSION};

/// Which protocol era the connection speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    Modern,
    Legacy,
}

impl Connection {
    pub(super) fn handshake(
        &mut self,
        opts: &Options,
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<(), ClientError> {
        let deadline = Instant::now() + opts.timeout;
        // Time at sign-in pages from here on moves `deadline` on (RULES K10.5).
        self.since = self.link.sign_in_time();
        if let Some(v) = &opts.protocol {
            if v != MODERN {
                return self.initialize(v, opts.timeout, deadline, None, interrupted);
            }
        }
        let fallback = opts.protocol.is_none();
        let meta = self.modern_meta(None);
        let probe = self.start_with("server/discover", None, &[], &meta, deadline, interrupted)?;
        let probe_limit = opts.probe_timeout.min(opts.timeout);
        let probe_deadline = (Instant::now() + probe_limit).min(deadline);
        let answer = self.wait_until(probe, probe_deadline, probe_limit, interrupted, false);
        // RULES K2.3: a recognized modern error means a modern server.
        if let Err(ClientError::Rpc { code, message, data }) = &answer {
            if codes::is_modern_only(*code) {
                let supported = supported_list(data.as_deref().and_then(|d| d.get("supported")));
                return match (fallback, best_legacy(&supported)) {
                    (true, Some(v)) => self.initialize(v, opts.timeout, deadline, None, interrupted),
                    _ => Err(ClientError::Protocol(format!(
                        "the server rejected protocol {MODERN} ({code}: {message}); it supports {}",
                        describe_list(&supported)
                    ))),
                };
            }
        }
        // RULES K2.2: a valid discover result decides.
        let why = match answer {
            Ok(result) => match discover_versions(&result) {
                Some(supported) => {
                    return self.discovered(&result, supported, fallback, opts.timeout, deadline, interrupted)
                }
                None => ClientError::Protocol(format!(
                    "the server answered server/discover with something that is not a discover result: {}",
                    wire::excerpt(result.to_string().as_bytes())
                )),
            },
            Err(e) if falls_back(&e) => e,
            Err(e) => return Err(e),
        };
        // RULES K2.4: any other answer means a legacy server.
        if !fallback {
            return Err(ClientError::Protocol(format!(
                "the server does not speak protocol {MODERN}: server/discover failed ({why})"
            )));
        }
        // A late discover answer still counts.
        let late = if matches!(why, ClientError::Timeout(_)) {
            self.quiet.insert(probe);
            self.pending.insert(probe, None);
            Some(probe)
        } else {
            None
        };
        self.initialize(LEGACY_PREFERRED, opts.timeout, deadline, late, interrupted)
    }

    /// A valid `DiscoverResult` arrived, listing `supported`.
    fn discovered(
        &mut self,
        result: &Value,
        supported: Vec<String>,
        fallback: bool,
        total: Duration,
        deadline: Instant,
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<(), ClientError> {
        if supported.iter().any(|v| v == MODERN) {
            self.era = Era::Modern;
            self.version = MODERN.to_string();
            self.supported = supported;
            self.capabilities = result.get("capabilities").cloned();
            self.instructions = result.get("instructions").and_then(Value::as_str).map(String::from);
            self.server_info = result.get("_meta").and_then(|m| m.get(META_SERVER_INFO)).cloned();
            self.link.set_version(MODERN);
            return Ok(());
        }
        match (fallback, best_legacy(&supported)) {
            (true, Some(v)) => self.initialize(v, total, deadline, None, interrupted),
            _ => Err(ClientError::Protocol(format!(
                "the server supports {}, none of which this client speaks ({MODERN}, {})",
                describe_list(&supported),
                LEGACY.join(", ")
            ))),
        }
    }

    /// The legacy handshake. `late_probe`: a discover request whose answer
    /// may still arrive and then decides for the modern era.
    fn initialize(
        &mut self,
        version: &str,
        total: Duration,
        deadline: Instant,
        late_probe: Option<u64>,
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<(), ClientError> {
        let v = json_string(version);
        let ci = self.client_info.clone();
        let caps = self.client_caps.clone();
        let members: [Member; 3] = [("protocolVersion", &v), ("capabilities", &caps), ("clientInfo", &ci)];
        let id = self.start_with("initialize", None, &members, &[], deadline, interrupted)?;
        let outcome = loop {
            if let Some(p) = late_probe {
                if let Some(Ok(result)) = self.mailbox.remove(&p) {
                    if let Some(supported) = discover_versions(&result).filter(|s| s.iter().any(|v| v == MODERN)) {
                        self.abandon(id);
                        return self.discovered(&result, supported, false, total, deadline, interrupted);
                    }
                }
            }
            let due = self.due(deadline);
            if Instant::now() >= due {
                // an answer already there still counts
                if let Poll::Done(r) = self.poll_wire(id, Duration::ZERO) {
                    break r;
                }
                self.cancel(id, "timed out");
                break Err(ClientError::Timeout(total));
            }
            let slice = due.saturating_duration_since(Instant::now()).min(Duration::from_millis(25));
            match self.poll_wire(id, slice) {
                Poll::Done(r) => break r,
                Poll::Progress(_) | Poll::Ask(_) | Poll::Input(_) | Poll::Log(_) => {}
                Poll::Pending => {
                    if interrupted() {
                        self.cancel(id, "interrupted");
                        break Err(ClientError::Interrupted);
                    }
                }
            }
        };
        if let Some(p) = late_probe {
            // The discover answer may have come with (or just before) the
            // answer to initialize: a modern server wins.
            if let Some(Ok(result)) = self.mailbox.remove(&p) {
                if let Some(supported) = discover_versions(&result).filter(|s| s.iter().any(|v| v == MODERN)) {
                    return self.discovered(&result, supported, false, total, deadline, interrupted);
                }
            }
            self.pending.remove(&p);
            self.quiet.remove(&p);
        }
        let result = match outcome {
            Ok(r) => r,
            Err(ClientError::Timeout(_)) => return Err(ClientError::Timeout(total)),
            Err(ClientError::Rpc { code, message, .. }) => {
                return Err(ClientError::Protocol(format!("the server rejected `initialize` ({code}: {message})")))
            }
            Err(e) => return Err(e),
        };
        let chosen = result.get("protocolVersion").and_then(Value::as_str).unwrap_or("");
        if !LEGACY.contains(&chosen) {
            return Err(ClientError::Protocol(format!(
                "the server chose protocol version {}, which this client does not speak",
                if chosen.is_empty() { "(none)".to_string() } else { format!("\"{chosen}\"") }
            )));
        }
        self.era = Era::Legacy;
        self.version = chosen.to_string();
        self.capabilities = result.get("capabilities").cloned();
        self.server_info = result.get("serverInfo").cloned();
        self.instructions = result.get("instructions").and_then(Value::as_str).map(String::from);
        self.link.set_version(chosen);
        let mut note = wire::notification_line("notifications/initialized", &[]);
        note.push(b'\n');
        let out = Outgoing { id: None, method: "notifications/initialized", name: None, version: None, headers: &[] };
        let due = self.due(deadline);
        self.link.send(&note, &out, due, interrupted).map_err(|e| self.mark_dead(e))?;
        // A legacy HTTP server may ask its questions on the session's GET
        // stream (RULES K12.2): listen there when the client answers any.
        if self.answers_any() {
            self.link.listen();
        }
        // RULES K13.1: the level of log messages wanted, when the server
        // logs at all; a server that refuses it is not an error.
        if let Some(level) = self.log_level {
            if self.capabilities.as_ref().is_some_and(|c| c.get("logging").is_some()) {
                let l = json_string(level.as_str());
                let id = self.start_with(SET_LEVEL, None, &[("level", &l)], &[], self.due(deadline), interrupted)?;
                let _ = self.wait_until(id, deadline, total, interrupted, true);
            }
        }
        Ok(())
    }

    /// `_meta` members of a modern request.
    pub(super) fn modern_meta(&self, progress: Option<&str>) -> Vec<(String, String)> {
        let mut m = vec![
            (META_VERSION.to_string(), json_string(MODERN)),
            (META_CAPS.to_string(), self.client_caps.clone()),
            ("io.modelcontextprotocol/clientInfo".to_string(), self.client_info.clone()),
        ];
        if let Some(level) = self.log_level {
            m.push((META_LOG_LEVEL.to_string(), json_string(level.as_str())));
        }
        if let Some(p) = progress {
            m.push(("progressToken".to_string(), p.to_string()));
        }
        m
    }
}

/// The versions of a valid `DiscoverResult` (RULES K2.2): an object whose
/// `supportedVersions` is a non-empty array of strings. `None` for anything
/// else (an empty result, a malformed one).
fn discover_versions(result: &Value) -> Option<Vec<String>> {
    let list = result.get("supportedVersions")?.as_array()?;
    let versions: Vec<String> = list.iter().map(|v| v.as_str().map(String::from)).collect::<Option<_>>()?;
    (!versions.is_empty()).then_some(versions)
}

/// Does a failed `server/discover` mean a legacy server (RULES K2.4)? Any
/// answer does (a JSON-RPC error, an HTTP error status, a body that is not
/// JSON-RPC, no answer in time); only not reaching the server at all, or
/// the user's interrupt, ends the attempt.
fn falls_back(e: &ClientError) -> bool {
    match e {
        ClientError::Rpc { .. } | ClientError::Timeout(_) | ClientError::Http { .. } | ClientError::Protocol(_) => true,
        ClientError::Spawn(_)
        | ClientError::Connect(_)
        | ClientError::Tls { .. }
        | ClientError::Closed(_)
        | ClientError::Auth(_)
        | ClientError::Interrupted => false,
    }
}

fn supported_list(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::Array(a)) => a.iter().filter_map(|x| x.as_str().map(String::from)).collect(),
        _ => Vec::new(),
    }
}

fn best_legacy(supported: &[String]) -> Option<&'static str> {
    LEGACY.iter().copied().find(|v| supported.iter().any(|s| s == v))
}

fn describe_list(v: &[String]) -> String {
    if v.is_empty() {
        "no version it named".into()
    } else {
        v.join(", ")
    }
}
