//! Tools on a connection: listing them (every page, `x-mcp-header` arguments
//! checked over modern HTTP, the input schemas that shape R's arguments kept,
//! RULES K4.2, K5.2) and calling them.

use std::collections::HashSet;
use std::time::Duration;

use serde_json::Value;

use super::wire::{json_string, Member};
use super::{params, Again, ClientError, Connection, Era, Resend};

impl Connection {
    /// Every tool the server lists, following `nextCursor` (each page gets
    /// `timeout`).
    pub fn list_tools(
        &mut self,
        timeout: Duration,
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<Vec<Value>, ClientError> {
        let tools = self.list_all("tools/list", "tools", timeout, interrupted)?;
        Ok(self.check_header_params(tools))
    }

    /// Every item of a paginated listing (`tools/list`, `resources/list`,
    /// `resources/templates/list`, `prompts/list`): the arrays under `key`
    /// of every page, following `nextCursor` (each page gets `timeout`).
    pub fn list_all(
        &mut self,
        method: &str,
        key: &str,
        timeout: Duration,
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<Vec<Value>, ClientError> {
        let mut items = Vec::new();
        let mut cursor: Option<String> = None;
        let mut seen = HashSet::new();
        loop {
            let c = cursor.as_ref().map(|c| json_string(c));
            let members: Vec<Member> = c.iter().map(|c| ("cursor", c.as_str())).collect();
            let result = self.request(method, &members, timeout, interrupted)?;
            match result.get(key) {
                Some(Value::Array(page)) => items.extend(page.iter().cloned()),
                _ => return Err(ClientError::Protocol(format!("the server's {method} result has no `{key}` array"))),
            }
            match result.get("nextCursor") {
                Some(Value::String(next)) => {
                    if !seen.insert(next.clone()) || seen.len() > 10_000 {
                        return Err(ClientError::Protocol(format!(
                            "the server's {method} pagination does not end (cursor \"{next}\" repeats)"
                        )));
                    }
                    cursor = Some(next.clone());
                }
                _ => return Ok(items),
            }
        }
    }

    /// Over modern HTTP, remember each tool's `x-mcp-header` arguments and
    /// leave out tools whose annotations are invalid (see
    /// [`Connection::take_rejected`]).
    fn check_header_params(&mut self, tools: Vec<Value>) -> Vec<Value> {
        self.rejected.clear();
        self.listed = true;
        self.task_support = tools
            .iter()
            .filter_map(|t| {
                let support = t.get("execution")?.get("taskSupport")?.as_str()?;
                Some((t.get("name")?.as_str()?.to_string(), support.to_string()))
            })
            .collect();
        self.schemas = tools
            .iter()
            .filter_map(|t| {
                let schema = t.get("inputSchema").filter(|s| shapes_arguments(s))?;
                Some((t.get("name")?.as_str()?.to_string(), schema.clone()))
            })
            .collect();
        if !(self.link.mirrors_params() && self.era == Era::Modern) {
            return tools;
        }
        self.params.clear();
        let mut kept = Vec::with_capacity(tools.len());
        for t in tools {
            let name = t.get("name").and_then(Value::as_str).unwrap_or("").to_string();
            match params::header_params(t.get("inputSchema").unwrap_or(&Value::Null)) {
                Ok(p) => {
                    if !p.is_empty() {
                        self.params.insert(name, p);
                    }
                    kept.push(t);
                }
                Err(why) => self.rejected.push((name, why)),
            }
        }
        kept
    }

    /// Tools the last [`Connection::list_tools`] left out, with the reason.
    pub fn take_rejected(&mut self) -> Vec<(String, String)> {
        std::mem::take(&mut self.rejected)
    }

    /// Send a `tools/call` (`arguments`: the arguments object as JSON
    /// text) and return its id for [`Connection::poll`]; with `progress`
    /// the call asks for progress notifications.
    pub fn start_call(
        &mut self,
        name: &str,
        arguments: &str,
        progress: bool,
        timeout: Duration,
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<u64, ClientError> {
        let n = json_string(name);
        let id = self.start(
            "tools/call",
            Some(name),
            &[("name", &n), ("arguments", arguments)],
            progress,
            timeout,
            interrupted,
        )?;
        self.remember_call(id, name, arguments, progress, timeout, (false, false));
        Ok(id)
    }

    /// Keep a call just sent (`id`) where it may be sent again: after a
    /// HeaderMismatch (RULES K4.3) or with answers (K12.3); `tasks`: it
    /// declared the tasks extension, and (2025-11-25) asked for a task
    /// (K14.1). No copy of the arguments otherwise.
    pub(super) fn remember_call(
        &mut self,
        id: u64,
        name: &str,
        arguments: &str,
        progress: bool,
        timeout: Duration,
        (tasks, legacy_task): (bool, bool),
    ) {
        let n = json_string(name);
        let header_resend = self.era == Era::Modern && self.link.mirrors_params();
        if header_resend || self.answers_any() {
            let call = Resend { name: name.to_string(), arguments: arguments.to_string(), progress, timeout, tasks };
            let mut members = vec![("name", n), ("arguments", arguments.to_string())];
            if legacy_task {
                members.push(("task", "{}".to_string()));
            }
            let again = Again { method: "tools/call", name: name.to_string(), members, progress, timeout, tasks };
            if header_resend {
                self.resend.insert(id, call);
            }
            self.may_ask(id, again);
        }
    }

    /// Call a tool and wait for its result.
    pub fn call_tool(
        &mut self,
        name: &str,
        arguments: &str,
        timeout: Duration,
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<Value, ClientError> {
        let id = self.start_call(name, arguments, false, timeout, interrupted)?;
        self.wait(id, timeout, timeout, &mut |_| {}, interrupted)
    }

    /// The input schema of tool `name` from the last listing, when it shapes
    /// the encoding of arguments (RULES K5.2, [`shapes_arguments`]), listing
    /// the tools first when they were never listed on this connection.
    /// `None` when it does not, when the server lists no such tool, or
    /// cannot list: the encoder's rules alone then apply.
    pub fn input_schema(
        &mut self,
        name: &str,
        timeout: Duration,
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<Option<Value>, ClientError> {
        if !self.listed {
            match self.list_tools(timeout, interrupted) {
                Ok(_) => self.rejected.clear(),
                Err(e @ ClientError::Interrupted) => return Err(e),
                Err(_) => self.listed = true,
            }
        }
        Ok(self.schemas.get(name).cloned())
    }
}

/// Can an input schema change how R's arguments are encoded (RULES K5.2)?
/// Only when one of its properties (or `additionalProperties`) allows an
/// array, an object or null, directly or in an `anyOf`/`oneOf` branch. A
/// schema of scalars only (the common case) is not handed to R at all, so
/// its calls cost no shaping.
pub fn shapes_arguments(schema: &Value) -> bool {
    fn allows_container_or_null(s: &Value) -> bool {
        let Value::Object(m) = s else { return false };
        let special = |t: &Value| matches!(t.as_str(), Some("array" | "object" | "null"));
        let typed = match m.get("type") {
            Some(Value::Array(ts)) => ts.iter().any(special),
            Some(t) => special(t),
            None => false,
        };
        typed
            || m.get("nullable") == Some(&Value::Bool(true))
            || m.get("enum").and_then(Value::as_array).is_some_and(|e| e.contains(&Value::Null))
            || ["anyOf", "oneOf"]
                .iter()
                .any(|k| m.get(*k).and_then(Value::as_array).is_some_and(|bs| bs.iter().any(allows_container_or_null)))
    }
    let props = schema.get("properties").and_then(Value::as_object);
    props.is_some_and(|p| p.values().any(allows_container_or_null))
        || schema.get("additionalProperties").is_some_and(allows_container_or_null)
}
