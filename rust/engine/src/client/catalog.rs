//! What a server offers beside tools, read from R (RULES K11): its
//! resources (read by URI) and its prompts (got by name, with arguments).
//! Listing them is [`Connection::list_all`]; over modern HTTP the URI or
//! the name is mirrored in `Mcp-Name`, as for `tools/call`.

use std::time::Duration;

use serde_json::Value;

use super::wire::{json_string, Member};
use super::{Again, ClientError, Connection};

impl Connection {
    /// The contents of the resource `uri` (`resources/read`).
    pub fn read_resource(
        &mut self,
        uri: &str,
        timeout: Duration,
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<Value, ClientError> {
        let id = self.start_read_resource(uri, timeout, interrupted)?;
        self.wait(id, timeout, timeout, &mut |_| {}, interrupted)
    }

    /// Send `resources/read` for `uri`; poll the id it returns. A
    /// 2026-07-28 server may ask for input first (RULES K12.3).
    pub fn start_read_resource(
        &mut self,
        uri: &str,
        timeout: Duration,
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<u64, ClientError> {
        self.start_named("resources/read", uri, vec![("uri", json_string(uri))], timeout, interrupted)
    }

    /// The prompt `name` filled with `arguments` (a JSON object of strings,
    /// as text), `prompts/get`.
    pub fn get_prompt(
        &mut self,
        name: &str,
        arguments: Option<&str>,
        timeout: Duration,
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<Value, ClientError> {
        let id = self.start_get_prompt(name, arguments, timeout, interrupted)?;
        self.wait(id, timeout, timeout, &mut |_| {}, interrupted)
    }

    /// Send `prompts/get`; poll the id it returns. A 2026-07-28 server may
    /// ask for input first (RULES K12.3).
    pub fn start_get_prompt(
        &mut self,
        name: &str,
        arguments: Option<&str>,
        timeout: Duration,
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<u64, ClientError> {
        let mut members = vec![("name", json_string(name))];
        if let Some(a) = arguments {
            members.push(("arguments", a.to_string()));
        }
        self.start_named("prompts/get", name, members, timeout, interrupted)
    }

    /// Send a request whose `Mcp-Name` is `name` over modern HTTP, kept to
    /// be sent again with answers when the client answers questions.
    fn start_named(
        &mut self,
        method: &'static str,
        name: &str,
        members: Vec<(&'static str, String)>,
        timeout: Duration,
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<u64, ClientError> {
        let wire: Vec<Member> = members.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let id = self.start(method, Some(name), &wire, false, timeout, interrupted)?;
        let again = Again { method, name: name.to_string(), members, progress: false, timeout, tasks: false };
        self.may_ask(id, again);
        Ok(id)
    }
}
