//! Tool calls that run as tasks on the server (RULES K14): the call asks
//! for a task or allows one (2025-11-25: `params.task`, when the server
//! declares task-augmented `tools/call`; 2026-07-28: the
//! `io.modelcontextprotocol/tasks` extension in the request's
//! capabilities), its answer may be a task's handle, and the task is then
//! asked about with [`Connection::task_request`] (`tasks/get`,
//! `tasks/result`, `tasks/cancel`). Following a task to its end is R's
//! (`R/client-tasks.R`): it waits between polls as the server suggests,
//! reports the status message as progress and stays interruptible.

use std::time::Duration;

use serde_json::Value;

use super::wire::{json_string, Member};
use super::{ClientError, Connection, Era};
use crate::tasks::EXTENSION;
use crate::version::META_CAPS;

/// Whether a `tools/call` may become a task (RULES K14.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskAsk {
    /// Never: a 2026-07-28 call does not declare the extension, a
    /// 2025-11-25 call does not ask.
    Never,
    /// When the server decides (2026-07-28) or the tool requires it
    /// (2025-11-25 `execution.taskSupport`).
    Auto,
    /// Ask for a task whenever the server takes one (2025-11-25); in
    /// 2026-07-28 as `Auto` (the server decides).
    Always,
}

impl TaskAsk {
    pub fn parse(s: &str) -> Option<TaskAsk> {
        match s {
            "never" => Some(TaskAsk::Never),
            "auto" => Some(TaskAsk::Auto),
            "always" => Some(TaskAsk::Always),
            _ => None,
        }
    }
}

impl Connection {
    /// Does the server run tool calls as tasks: the 2025-11-25 capability
    /// `tasks.requests.tools.call`, or the 2026-07-28 extension?
    pub fn server_tasks(&self) -> bool {
        let caps = self.capabilities();
        match self.era {
            Era::Legacy => caps.and_then(|c| c.pointer("/tasks/requests/tools/call")).is_some_and(Value::is_object),
            Era::Modern => caps.and_then(|c| c.get("extensions")).and_then(|e| e.get(EXTENSION)).is_some(),
        }
    }

    /// The client's capabilities with the extension (2026-07-28), JSON text.
    fn caps_with_tasks(&self) -> String {
        let mut caps: Value =
            serde_json::from_str(&self.client_caps).unwrap_or_else(|_| Value::Object(Default::default()));
        if let Some(m) = caps.as_object_mut() {
            let ext = m.entry("extensions").or_insert_with(|| Value::Object(Default::default()));
            if let Some(e) = ext.as_object_mut() {
                e.insert(EXTENSION.into(), Value::Object(Default::default()));
            }
        }
        caps.to_string()
    }

    /// The `_meta` members of a request that may be about tasks, in the
    /// connection's era; `tasks`: declare the extension (2026-07-28).
    fn meta_for(&self, progress: Option<&str>, tasks: bool) -> Vec<(String, String)> {
        match self.era {
            Era::Modern => {
                let mut m = self.modern_meta(progress);
                if tasks {
                    let caps = self.caps_with_tasks();
                    for (k, v) in &mut m {
                        if k == META_CAPS {
                            *v = caps.clone();
                        }
                    }
                }
                m
            }
            Era::Legacy => progress.map(|p| vec![("progressToken".to_string(), p.to_string())]).unwrap_or_default(),
        }
    }

    /// Does a 2025-11-25 call of `name` ask for a task? Listing the tools
    /// first when they were never listed (their `execution.taskSupport`).
    fn asks_for_task(
        &mut self,
        name: &str,
        ask: TaskAsk,
        timeout: Duration,
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<bool, ClientError> {
        if self.era != Era::Legacy || ask == TaskAsk::Never || !self.server_tasks() {
            return Ok(false);
        }
        if !self.listed {
            match self.list_tools(timeout, interrupted) {
                Ok(_) => self.rejected.clear(),
                Err(e @ ClientError::Interrupted) => return Err(e),
                Err(_) => self.listed = true,
            }
        }
        let support = self.task_support.get(name).map(String::as_str);
        Ok(match ask {
            TaskAsk::Always => matches!(support, Some("optional" | "required")),
            _ => support == Some("required"),
        })
    }

    /// Send a `tools/call` that may become a task (RULES K14.1); its answer
    /// ([`Connection::poll`]) is then the task's handle
    /// ([`task_of`]). Otherwise as [`Connection::start_call`].
    pub fn start_call_as(
        &mut self,
        name: &str,
        arguments: &str,
        progress: bool,
        timeout: Duration,
        ask: TaskAsk,
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<u64, ClientError> {
        // Declared only to a server that offers the extension.
        let modern_tasks = self.era == Era::Modern && ask != TaskAsk::Never && self.server_tasks();
        let legacy_task = self.asks_for_task(name, ask, timeout, interrupted)?;
        if !modern_tasks && !legacy_task {
            return self.start_call(name, arguments, progress, timeout, interrupted);
        }
        let n = json_string(name);
        let mut members: Vec<Member> = vec![("name", &n), ("arguments", arguments)];
        if legacy_task {
            members.push(("task", "{}"));
        }
        // No progress notifications for a task: its status message is the
        // progress (RULES V2.3).
        let want_progress = progress && !legacy_task;
        let id =
            self.start_maybe_tasks("tools/call", name, &members, want_progress, timeout, modern_tasks, interrupted)?;
        self.remember_call(id, name, arguments, want_progress, timeout, (modern_tasks, legacy_task));
        self.expect_task.insert(id);
        Ok(id)
    }

    /// Send a request (as [`Connection::start`]), in 2026-07-28 declaring
    /// the tasks extension when `tasks`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn start_maybe_tasks(
        &mut self,
        method: &str,
        name: &str,
        members: &[Member],
        progress: bool,
        timeout: Duration,
        tasks: bool,
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<u64, ClientError> {
        if !tasks || self.era != Era::Modern {
            return self.start(method, Some(name), members, progress, timeout, interrupted);
        }
        self.check_open()?;
        let token = self.next_id.to_string();
        let meta = self.meta_for(progress.then_some(token.as_str()), true);
        let id =
            self.start_with(method, Some(name), members, &meta, std::time::Instant::now() + timeout, interrupted)?;
        if progress {
            self.pending.insert(id, Some(id));
        }
        Ok(id)
    }

    /// A request about task `task_id` (`tasks/get`, `tasks/result`,
    /// `tasks/cancel`, and `tasks/update` with `input_responses`, the
    /// `inputResponses` object as JSON text), waited for: in 2026-07-28
    /// with the extension declared and `Mcp-Name` the task's id.
    pub fn task_request(
        &mut self,
        method: &str,
        task_id: &str,
        input_responses: Option<&str>,
        timeout: Duration,
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<Value, ClientError> {
        self.check_open()?;
        let t = json_string(task_id);
        let mut members: Vec<Member> = vec![("taskId", &t)];
        if let Some(r) = input_responses {
            members.push(("inputResponses", r));
        }
        let meta = self.meta_for(None, true);
        let deadline = std::time::Instant::now() + timeout;
        let id = self.start_with(method, Some(task_id), &members, &meta, deadline, interrupted)?;
        self.wait(id, timeout, timeout, &mut |_| {}, interrupted)
    }
}

/// The task a `tools/call` answered with, when it did (RULES K14.2): its
/// object (2025-11-25 `{"task":{…}}`; 2026-07-28 the result itself, with
/// `resultType: "task"`).
pub fn task_of(result: &Value) -> Option<&Value> {
    if result.get("resultType").and_then(Value::as_str) == Some("task") {
        return Some(result);
    }
    result.get("task").filter(|t| t.get("taskId").is_some_and(Value::is_string) && result.get("content").is_none())
}
