//! What a server offers beside tools, read from R (RULES K11): its
//! resources (read by URI) and its prompts (got by name, with arguments).
//! Listing them is [`Connection::list_all`]; over modern HTTP the URI or
//! the name is mirrored in `Mcp-Name`, as for `tools/call`.

use std::time::Duration;

use serde_json::Value;

use super::wire::{json_string, Member};
use super::{ClientError, Connection};

impl Connection {
    /// The contents of the resource `uri` (`resources/read`).
    pub fn read_resource(
        &mut self,
        uri: &str,
        timeout: Duration,
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<Value, ClientError> {
        let u = json_string(uri);
        self.request_named("resources/read", uri, &[("uri", u.as_str())], timeout, interrupted)
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
        let n = json_string(name);
        let mut members: Vec<Member> = vec![("name", n.as_str())];
        if let Some(a) = arguments {
            members.push(("arguments", a));
        }
        self.request_named("prompts/get", name, &members, timeout, interrupted)
    }

    /// A request whose `Mcp-Name` is `name` over modern HTTP.
    fn request_named(
        &mut self,
        method: &str,
        name: &str,
        members: &[Member],
        timeout: Duration,
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<Value, ClientError> {
        let id = self.start(method, Some(name), members, false, timeout, interrupted)?;
        self.wait(id, timeout, timeout, &mut |_| {}, interrupted)
    }
}
