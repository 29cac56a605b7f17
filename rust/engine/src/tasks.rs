//! Tasks: tool calls that outlive their request (RULES section 19).
//!
//! A client that may poll asks for a task (2025-11-25: `params.task` on a
//! `tools/call`, for a tool whose `execution.taskSupport` allows it;
//! 2026-07-28: the `io.modelcontextprotocol/tasks` extension in the
//! request's capabilities, the server deciding). The transport then asks
//! [`Server::admit_task`](crate::server::Server::admit_task) before it
//! queues the call: the task is created here (in the store, and in the task
//! directory when there is one) and its handle answered at once; the call
//! runs on a worker like any other and its answer is kept in the [`Task`]
//! instead of being written. `tasks/get`, `tasks/result` (2025-11-25, which
//! waits for the end: [`Waiting`]), `tasks/list` (2025-11-25),
//! `tasks/update` (2026-07-28) and `tasks/cancel` are answered here, without
//! the host.
//!
//! What a task holds is bound to the bearer token that created it (its
//! owner; another token finds nothing), its id is 128 bits from the
//! operating system's random source, its result is kept no longer than its
//! time to live, and the store holds at most [`TaskOptions::max_tasks`]
//! (finished ones are dropped oldest first to make room).

use crate::codes::{INTERNAL_ERROR, INVALID_PARAMS, MISSING_REQUIRED_CLIENT_CAPABILITY};
use crate::version::{Version, META_CAPS};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The extension's identifier (2026-07-28), in capabilities.
pub const EXTENSION: &str = "io.modelcontextprotocol/tasks";
/// `_meta` key tying a message to its task.
pub const META_RELATED: &str = "io.modelcontextprotocol/related-task";
/// `_meta` key of a `CreateTaskResult` with the text a host may give the
/// model while the task runs (2025-11-25).
pub const META_IMMEDIATE: &str = "io.modelcontextprotocol/model-immediate-response";

/// Whether a tool runs as a task: 2025-11-25's `execution.taskSupport`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Support {
    /// Never (the default).
    #[default]
    Forbidden,
    /// When the client asks (2025-11-25) or allows (2026-07-28).
    Optional,
    /// Always; a client that cannot poll is refused.
    Required,
}

impl Support {
    pub fn parse(s: &str) -> Option<Support> {
        match s {
            "forbidden" => Some(Support::Forbidden),
            "optional" => Some(Support::Optional),
            "required" => Some(Support::Required),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Support::Forbidden => "forbidden",
            Support::Optional => "optional",
            Support::Required => "required",
        }
    }
}

/// A server's settings for tasks (R's `task_options()`).
#[derive(Debug, Clone)]
pub struct TaskOptions {
    /// The time to live of a task whose client asks for none.
    pub ttl: Duration,
    /// The longest time to live granted.
    pub max_ttl: Duration,
    /// The polling interval suggested to clients.
    pub poll_interval: Duration,
    /// The most tasks kept at once.
    pub max_tasks: usize,
    /// Where finished tasks are kept across restarts, if anywhere.
    pub dir: Option<PathBuf>,
    /// `tasks/list` is offered (2025-11-25): only where requestors are told
    /// apart (stdio, or HTTP with tokens).
    pub list: bool,
}

impl Default for TaskOptions {
    fn default() -> Self {
        TaskOptions {
            ttl: Duration::from_secs(3600),
            max_ttl: Duration::from_secs(7 * 86400),
            poll_interval: Duration::from_secs(1),
            max_tasks: 1000,
            dir: None,
            list: true,
        }
    }
}

/// A task's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Working,
    Completed,
    Failed,
    Cancelled,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Working => "working",
            Status::Completed => "completed",
            Status::Failed => "failed",
            Status::Cancelled => "cancelled",
        }
    }

    fn parse(s: &str) -> Option<Status> {
        [Status::Working, Status::Completed, Status::Failed, Status::Cancelled].into_iter().find(|x| x.as_str() == s)
    }

    pub fn is_terminal(self) -> bool {
        self != Status::Working
    }
}

/// How a finished call answered.
#[derive(Debug, Clone)]
enum Answer {
    /// A result object (JSON text): what `tools/call` would have returned.
    Result(String),
    /// A JSON-RPC error object (JSON text).
    Error(String),
}

#[derive(Debug)]
struct State {
    status: Status,
    message: Option<String>,
    updated: SystemTime,
    answer: Option<Answer>,
}

/// One task.
pub struct Task {
    pub id: String,
    /// The bearer token's name that created it; `None` without tokens.
    owner: Option<String>,
    /// Created by a 2026-07-28 request (the extension's shapes).
    modern: bool,
    created: SystemTime,
    ttl: Duration,
    poll: Duration,
    state: Mutex<State>,
    /// Told when the task ends (a waiting `tasks/result` over HTTP).
    ended: tokio::sync::Notify,
    /// Stops the call (set when it is queued).
    cancel: Mutex<Option<Box<dyn Fn() + Send + Sync>>>,
    /// Where it is kept, if anywhere.
    file: Option<PathBuf>,
}

impl std::fmt::Debug for Task {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Task").field("id", &self.id).field("state", &*lock(&self.state)).finish()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Task {
    pub fn status(&self) -> Status {
        lock(&self.state).status
    }

    pub fn is_modern(&self) -> bool {
        self.modern
    }

    fn expired(&self, now: SystemTime) -> bool {
        now.duration_since(self.created).is_ok_and(|age| age > self.ttl)
    }

    /// The tool's latest progress message becomes the status message.
    pub fn set_message(&self, message: &str) {
        let mut s = lock(&self.state);
        if s.status == Status::Working && s.message.as_deref() != Some(message) {
            s.message = Some(bounded(message));
            s.updated = SystemTime::now();
        }
    }

    /// What stops the call: a cancellation (`tasks/cancel`) calls it.
    pub fn set_cancel(&self, f: Box<dyn Fn() + Send + Sync>) {
        *lock(&self.cancel) = Some(f);
    }

    /// The call answered `result` (a result object; `tool_error` when it is
    /// a tool error). A cancelled task stays cancelled.
    pub fn finish_result(&self, result: &[u8], tool_error: bool) {
        let text = String::from_utf8_lossy(result).into_owned();
        let (status, message) = match (tool_error, self.modern) {
            // 2025-11-25: a tool error fails the task; 2026-07-28 completes
            // it (failed is for JSON-RPC errors only).
            (true, false) => (Status::Failed, error_text(&text)),
            _ => (Status::Completed, None),
        };
        let text = if self.modern { text } else { with_related(&text, &self.id) };
        self.end(status, message, Answer::Result(text));
    }

    /// The call answered a JSON-RPC error (`error` is its error object).
    pub fn finish_error(&self, code: i64, message: &str) {
        let error = serde_json::json!({ "code": code, "message": message }).to_string();
        self.end(Status::Failed, Some(bounded(message)), Answer::Error(error));
    }

    /// The call was interrupted without a cancellation of the task (the
    /// server stopping): failed, saying why.
    pub fn finish_interrupted(&self, why: &str) {
        self.finish_error(INTERNAL_ERROR, why);
    }

    fn end(&self, status: Status, message: Option<String>, answer: Answer) {
        {
            let mut s = lock(&self.state);
            if s.status.is_terminal() {
                return;
            }
            s.status = status;
            if message.is_some() {
                s.message = message;
            }
            s.updated = SystemTime::now();
            s.answer = Some(answer);
        }
        self.save();
        self.ended.notify_waiters();
    }

    /// The call was cancelled without `tasks/cancel` (its own request's
    /// cancellation): the task is cancelled too.
    pub fn cancel_quietly(&self) {
        let _ = self.cancel();
    }

    /// `tasks/cancel`: false when the task had ended already.
    fn cancel(&self) -> bool {
        {
            let mut s = lock(&self.state);
            if s.status.is_terminal() {
                return false;
            }
            s.status = Status::Cancelled;
            s.message = Some("The task was cancelled by request.".into());
            s.updated = SystemTime::now();
        }
        if let Some(f) = lock(&self.cancel).take() {
            f();
        }
        self.save();
        self.ended.notify_waiters();
        true
    }

    /// The task object as JSON members (without braces), in the shape of
    /// its era.
    fn write_members(&self, out: &mut Map<String, Value>, details: bool) {
        let s = lock(&self.state);
        out.insert("taskId".into(), self.id.clone().into());
        out.insert("status".into(), s.status.as_str().into());
        if let Some(m) = &s.message {
            out.insert("statusMessage".into(), m.clone().into());
        }
        out.insert("createdAt".into(), rfc3339(self.created).into());
        out.insert("lastUpdatedAt".into(), rfc3339(s.updated).into());
        let ttl = u64::try_from(self.ttl.as_millis()).unwrap_or(u64::MAX);
        let poll = u64::try_from(self.poll.as_millis()).unwrap_or(u64::MAX);
        let (ttl_key, poll_key) = if self.modern { ("ttlMs", "pollIntervalMs") } else { ("ttl", "pollInterval") };
        out.insert(ttl_key.into(), ttl.into());
        if !s.status.is_terminal() {
            out.insert(poll_key.into(), poll.into());
        }
        // 2026-07-28: tasks/get inlines the result or the error.
        if details && self.modern {
            match (&s.status, &s.answer) {
                (Status::Completed, Some(Answer::Result(r))) => {
                    out.insert("result".into(), serde_json::from_str(r).unwrap_or(Value::Null));
                }
                (Status::Failed, Some(Answer::Error(e))) => {
                    out.insert("error".into(), serde_json::from_str(e).unwrap_or(Value::Null));
                }
                (Status::Failed, _) => {
                    let m = s.message.clone().unwrap_or_else(|| "The task failed.".into());
                    out.insert("error".into(), serde_json::json!({ "code": INTERNAL_ERROR, "message": m }));
                }
                _ => {}
            }
        }
    }

    /// The task object.
    pub fn object(&self, details: bool) -> Map<String, Value> {
        let mut m = Map::new();
        self.write_members(&mut m, details);
        m
    }

    /// Kept in the task directory, when there is one (written whole, then
    /// renamed, so a reader never sees half a file).
    fn save(&self) {
        let Some(path) = &self.file else { return };
        let s = lock(&self.state);
        let record = serde_json::json!({
            "taskId": self.id,
            "owner": self.owner,
            "modern": self.modern,
            "createdMs": millis(self.created),
            "updatedMs": millis(s.updated),
            "ttlMs": u64::try_from(self.ttl.as_millis()).unwrap_or(u64::MAX),
            "status": s.status.as_str(),
            "message": s.message,
            "result": match &s.answer { Some(Answer::Result(r)) => Some(r.as_str()), _ => None },
            "error": match &s.answer { Some(Answer::Error(e)) => Some(e.as_str()), _ => None },
        });
        drop(s);
        if let Err(e) = write_private(path, record.to_string().as_bytes()) {
            eprintln!("mcplite: task {}: could not keep it in {} ({e})", self.id, path.display());
        }
    }
}

/// What a 2025-11-25 `tasks/result` of a task still running waits for: the
/// transport waits (see [`Waiting::wait`]), then writes [`Waiting::line`].
pub struct Waiting {
    pub task: Arc<Task>,
    pub id: String,
}

impl Waiting {
    /// Done waiting?
    pub fn ready(&self) -> bool {
        self.task.status().is_terminal()
    }

    /// Wait (async) until the task ends.
    pub async fn wait(&self) {
        loop {
            let mut ended = std::pin::pin!(self.task.ended.notified());
            ended.as_mut().enable();
            if self.ready() {
                return;
            }
            ended.await;
        }
    }

    /// The response line, once [`Waiting::ready`].
    pub fn line(&self) -> Vec<u8> {
        result_line(&self.id, &self.task)
    }
}

/// The response of `tasks/result` for a finished task: what the call would
/// have answered.
fn result_line(id: &str, task: &Task) -> Vec<u8> {
    let s = lock(&task.state);
    match &s.answer {
        Some(Answer::Result(r)) => format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{r}}}").into_bytes(),
        Some(Answer::Error(e)) => format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"error\":{e}}}").into_bytes(),
        // Cancelled before an answer (or the answer was lost).
        None => crate::server::error_line(
            Some(id),
            INVALID_PARAMS,
            "Invalid params",
            Some(&format!("task {} was {} before it had a result", task.id, s.status.as_str())),
        ),
    }
}

/// The tasks of one server.
pub struct Tasks {
    opts: TaskOptions,
    /// Per tool (the server's order).
    support: Vec<Support>,
    map: Mutex<HashMap<String, Arc<Task>>>,
}

impl std::fmt::Debug for Tasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tasks").field("opts", &self.opts).field("support", &self.support).finish()
    }
}

/// Why a request about tasks is refused: a JSON-RPC error code and detail.
pub type Refusal = (i64, String);

impl Tasks {
    /// The tasks of a server whose tools run as tasks as `support` says;
    /// with a directory, what it keeps is read back (a task that was
    /// running when the server stopped is failed, saying so).
    pub fn new(opts: TaskOptions, support: Vec<Support>) -> io::Result<Tasks> {
        let tasks = Tasks { opts, support, map: Mutex::new(HashMap::new()) };
        if let Some(dir) = tasks.opts.dir.clone() {
            create_private_dir(&dir)?;
            tasks.load(&dir)?;
        }
        Ok(tasks)
    }

    pub fn options(&self) -> &TaskOptions {
        &self.opts
    }

    /// How tool `index` runs as a task.
    pub fn support(&self, index: usize) -> Support {
        self.support.get(index).copied().unwrap_or_default()
    }

    /// All tools' support, in order.
    pub fn supports(&self) -> &[Support] {
        &self.support
    }

    /// Does a `tools/call` of tool `index` with params `p`, in version `v`,
    /// become a task? `Ok(Some(ttl))` with the time to live asked for;
    /// `Err` when the call must be refused (a required task the client
    /// cannot poll, a task the tool does not allow).
    pub fn plan(&self, index: usize, p: &Map<String, Value>, v: Version) -> Result<Option<Option<u64>>, Refusal> {
        let support = self.support(index);
        if v.is_modern() {
            let allows = client_allows(p);
            return match (support, allows) {
                (Support::Forbidden, _) | (Support::Optional, false) => Ok(None),
                (_, true) => Ok(Some(None)),
                (Support::Required, false) => Err((MISSING_REQUIRED_CLIENT_CAPABILITY, MISSING_EXTENSION.into())),
            };
        }
        if !v.features().task_augmentation {
            return Ok(None);
        }
        match (support, p.get("task")) {
            (Support::Forbidden, Some(_)) => {
                Err((crate::codes::METHOD_NOT_FOUND, "this tool does not run as a task (execution.taskSupport)".into()))
            }
            (Support::Required, None) => {
                Err((crate::codes::METHOD_NOT_FOUND, "this tool runs only as a task: add params.task".into()))
            }
            (_, None) => Ok(None),
            (_, Some(Value::Object(t))) => match t.get("ttl") {
                None | Some(Value::Null) => Ok(Some(None)),
                Some(n) => match n.as_f64().filter(|x| x.is_finite() && *x >= 0.0) {
                    Some(ms) => Ok(Some(Some(ms as u64))),
                    None => Err((INVALID_PARAMS, "task.ttl must be a number of milliseconds".into())),
                },
            },
            (_, Some(_)) => Err((INVALID_PARAMS, "params.task must be an object".into())),
        }
    }

    /// A new task of `owner`, working, kept before its handle is answered.
    /// `Err` when the store is full of running tasks.
    pub fn create(&self, owner: Option<&str>, modern: bool, ttl_ms: Option<u64>) -> Result<Arc<Task>, Refusal> {
        let ttl = ttl_ms.map_or(self.opts.ttl, Duration::from_millis).min(self.opts.max_ttl);
        let id =
            new_id().map_err(|_| (INTERNAL_ERROR, "no task id: the operating system's random source failed".into()))?;
        let now = SystemTime::now();
        let task = Arc::new(Task {
            file: self.opts.dir.as_ref().map(|d| d.join(format!("{id}.json"))),
            id,
            owner: owner.map(str::to_owned),
            modern,
            created: now,
            ttl,
            poll: self.opts.poll_interval,
            state: Mutex::new(State { status: Status::Working, message: None, updated: now, answer: None }),
            ended: tokio::sync::Notify::new(),
            cancel: Mutex::new(None),
        });
        {
            let mut map = lock(&self.map);
            if map.len() >= self.opts.max_tasks {
                self.make_room(&mut map, now);
            }
            if map.len() >= self.opts.max_tasks {
                return Err((
                    INTERNAL_ERROR,
                    format!("the server holds {} tasks, all running; try again later", self.opts.max_tasks),
                ));
            }
            map.insert(task.id.clone(), Arc::clone(&task));
        }
        task.save();
        Ok(task)
    }

    /// Expired tasks go; then, while full, the finished task updated
    /// longest ago.
    fn make_room(&self, map: &mut HashMap<String, Arc<Task>>, now: SystemTime) {
        let expired: Vec<String> = map.values().filter(|t| t.expired(now)).map(|t| t.id.clone()).collect();
        for id in expired {
            if let Some(t) = map.remove(&id) {
                forget(&t);
            }
        }
        while map.len() >= self.opts.max_tasks {
            let oldest = map
                .values()
                .filter(|t| t.status().is_terminal())
                .min_by_key(|t| lock(&t.state).updated)
                .map(|t| t.id.clone());
            match oldest.and_then(|id| map.remove(&id)) {
                Some(t) => forget(&t),
                None => return,
            }
        }
    }

    /// The task `id` of `owner`, unless it expired (then it is dropped).
    pub fn find(&self, id: &str, owner: Option<&str>) -> Option<Arc<Task>> {
        let mut map = lock(&self.map);
        let t = map.get(id)?;
        if t.expired(SystemTime::now()) {
            if let Some(t) = map.remove(id) {
                forget(&t);
            }
            return None;
        }
        (t.owner.as_deref() == owner).then(|| Arc::clone(t))
    }

    /// Answer a request about tasks (`method` is `tasks/…`), or refuse it.
    /// `Ok(Err(waiting))` is a 2025-11-25 `tasks/result` of a task still
    /// running.
    pub fn answer(
        &self,
        id: &str,
        method: &str,
        params: Option<&Value>,
        v: Version,
        owner: Option<&str>,
        server_meta: &str,
    ) -> Result<Result<Vec<u8>, Waiting>, Refusal> {
        let p = params.and_then(Value::as_object);
        if method == "tasks/list" {
            return self.list(id, p, owner).map(Ok);
        }
        let task_id = p
            .and_then(|p| p.get("taskId"))
            .and_then(Value::as_str)
            .ok_or_else(|| (INVALID_PARAMS, "params.taskId must be a string".to_owned()))?;
        let Some(task) = self.find(task_id, owner) else {
            return Err((INVALID_PARAMS, format!("no task {task_id:?} (unknown, expired, or not yours)")));
        };
        let body = |mut m: Map<String, Value>| {
            if v.is_modern() {
                let mut r = Map::new();
                r.insert("resultType".into(), "complete".into());
                r.append(&mut m);
                r.insert("_meta".into(), server_meta_value(server_meta));
                m = r;
            }
            let mut line = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":").into_bytes();
            line.extend_from_slice(Value::Object(m).to_string().as_bytes());
            line.push(b'}');
            line
        };
        match method {
            "tasks/get" => Ok(Ok(body(task.object(true)))),
            "tasks/result" if !v.is_modern() => {
                let waiting = Waiting { task, id: id.to_owned() };
                if waiting.ready() {
                    Ok(Ok(waiting.line()))
                } else {
                    Ok(Err(waiting))
                }
            }
            "tasks/cancel" => {
                if !task.cancel() && !v.is_modern() {
                    let status = task.status().as_str();
                    return Err((INVALID_PARAMS, format!("cannot cancel task: already in terminal status '{status}'")));
                }
                // 2025-11-25 answers the task; 2026-07-28 an empty result.
                Ok(Ok(body(if v.is_modern() { Map::new() } else { task.object(false) })))
            }
            // 2026-07-28: answers to questions the task asked. This server's
            // tasks ask none, so every key is ignored (the extension says to
            // ignore keys not outstanding).
            "tasks/update" if v.is_modern() => match p.and_then(|p| p.get("inputResponses")) {
                None | Some(Value::Object(_)) => Ok(Ok(body(Map::new()))),
                Some(_) => Err((INVALID_PARAMS, "params.inputResponses must be an object".into())),
            },
            _ => Err((crate::codes::METHOD_NOT_FOUND, String::new())),
        }
    }

    /// `tasks/list` (2025-11-25): the owner's tasks, newest first, in pages.
    fn list(&self, id: &str, p: Option<&Map<String, Value>>, owner: Option<&str>) -> Result<Vec<u8>, Refusal> {
        const PAGE: usize = 100;
        let start = match p.and_then(|p| p.get("cursor")) {
            None | Some(Value::Null) => 0,
            Some(Value::String(c)) => c
                .strip_prefix("t")
                .and_then(|n| n.parse::<usize>().ok())
                .ok_or_else(|| (INVALID_PARAMS, "invalid cursor".to_owned()))?,
            Some(_) => return Err((INVALID_PARAMS, "invalid cursor".into())),
        };
        let now = SystemTime::now();
        let mut mine: Vec<Arc<Task>> =
            lock(&self.map).values().filter(|t| t.owner.as_deref() == owner && !t.expired(now)).cloned().collect();
        mine.sort_by(|a, b| b.created.cmp(&a.created).then_with(|| a.id.cmp(&b.id)));
        if start > mine.len() {
            return Err((INVALID_PARAMS, "invalid cursor".into()));
        }
        let page: Vec<Value> = mine.iter().skip(start).take(PAGE).map(|t| Value::Object(t.object(false))).collect();
        let mut r = Map::new();
        r.insert("tasks".into(), Value::Array(page));
        if start + PAGE < mine.len() {
            r.insert("nextCursor".into(), format!("t{}", start + PAGE).into());
        }
        let mut line = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":").into_bytes();
        line.extend_from_slice(Value::Object(r).to_string().as_bytes());
        line.push(b'}');
        Ok(line)
    }

    /// The handle answered when a task is created: `CreateTaskResult`.
    pub fn created_line(&self, id: &str, task: &Task, server_meta: &str) -> Vec<u8> {
        let mut m = Map::new();
        if task.modern {
            m.insert("resultType".into(), "task".into());
            m.append(&mut task.object(false));
            m.insert("_meta".into(), server_meta_value(server_meta));
        } else {
            m.insert("task".into(), Value::Object(task.object(false)));
        }
        let mut line = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":").into_bytes();
        line.extend_from_slice(Value::Object(m).to_string().as_bytes());
        line.push(b'}');
        line
    }

    /// Read back what the directory keeps.
    fn load(&self, dir: &Path) -> io::Result<()> {
        let now = SystemTime::now();
        let mut map = lock(&self.map);
        for entry in std::fs::read_dir(dir)? {
            let path = entry?.path();
            if path.extension().and_then(|e| e.to_str()) != Some("json") {
                continue;
            }
            let Some(task) = std::fs::read(&path).ok().and_then(|b| self.restore(&b, &path)) else {
                eprintln!("mcplite: task directory: {} is not a task; left alone", path.display());
                continue;
            };
            if task.expired(now) || map.len() >= self.opts.max_tasks {
                forget(&task);
                continue;
            }
            if task.status() == Status::Working {
                // It was running when the server stopped.
                task.finish_interrupted(STOPPED_TEXT);
            }
            map.insert(task.id.clone(), task);
        }
        Ok(())
    }

    fn restore(&self, bytes: &[u8], path: &Path) -> Option<Arc<Task>> {
        let r: Value = serde_json::from_slice(bytes).ok()?;
        let id = r.get("taskId")?.as_str()?.to_owned();
        if path.file_stem().and_then(|s| s.to_str()) != Some(id.as_str()) || !valid_id(&id) {
            return None;
        }
        let at = |k: &str| r.get(k).and_then(Value::as_u64).map(|ms| UNIX_EPOCH + Duration::from_millis(ms));
        let answer = match (r.get("result").and_then(Value::as_str), r.get("error").and_then(Value::as_str)) {
            (Some(res), _) => Some(Answer::Result(res.to_owned())),
            (None, Some(e)) => Some(Answer::Error(e.to_owned())),
            _ => None,
        };
        Some(Arc::new(Task {
            file: Some(path.to_owned()),
            id,
            owner: r.get("owner").and_then(Value::as_str).map(str::to_owned),
            modern: r.get("modern").and_then(Value::as_bool)?,
            created: at("createdMs")?,
            ttl: Duration::from_millis(r.get("ttlMs").and_then(Value::as_u64)?),
            poll: self.opts.poll_interval,
            state: Mutex::new(State {
                status: Status::parse(r.get("status")?.as_str()?)?,
                message: r.get("message").and_then(Value::as_str).map(str::to_owned),
                updated: at("updatedMs")?,
                answer,
            }),
            ended: tokio::sync::Notify::new(),
            cancel: Mutex::new(None),
        }))
    }
}

/// The status message of a task that was running when its server stopped.
pub const STOPPED_TEXT: &str = "The server stopped while this task ran; its result is lost. Call the tool again.";

/// The detail of `-32021` for a task the client cannot poll.
pub const MISSING_EXTENSION: &str =
    "this tool runs only as a task: declare the io.modelcontextprotocol/tasks extension";

/// The data of `-32021` (2026-07-28): the capability the client lacks.
pub fn missing_extension_data() -> Vec<u8> {
    format!("{{\"requiredCapabilities\":{{\"extensions\":{{\"{EXTENSION}\":{{}}}}}}}}").into_bytes()
}

/// Does a 2026-07-28 request's capabilities (in `params._meta`) declare the
/// extension?
pub fn client_allows(p: &Map<String, Value>) -> bool {
    p.get("_meta")
        .and_then(|m| m.get(META_CAPS))
        .and_then(|c| c.get("extensions"))
        .and_then(|e| e.get(EXTENSION))
        .is_some_and(Value::is_object)
}

/// A result object with `_meta` tying it to task `id` (2025-11-25
/// `tasks/result`).
fn with_related(result: &str, id: &str) -> String {
    let Ok(Value::Object(mut m)) = serde_json::from_str::<Value>(result) else { return result.to_owned() };
    let meta = m.entry("_meta").or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(meta) = meta {
        meta.insert(META_RELATED.into(), serde_json::json!({ "taskId": id }));
    }
    Value::Object(m).to_string()
}

/// The first text of a tool error, as the failed task's status message.
fn error_text(result: &str) -> Option<String> {
    let v: Value = serde_json::from_str(result).ok()?;
    let text = v.get("content")?.as_array()?.iter().find_map(|b| b.get("text").and_then(Value::as_str))?;
    Some(bounded(text))
}

/// Status messages are kept to 1000 characters.
fn bounded(s: &str) -> String {
    match s.char_indices().nth(1000) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_owned(),
    }
}

fn server_meta_value(server_meta: &str) -> Value {
    let info: Value = serde_json::from_str(server_meta).unwrap_or(Value::Null);
    serde_json::json!({ crate::version::META_SERVER_INFO: info })
}

fn forget(task: &Task) {
    if let Some(f) = &task.file {
        let _ = std::fs::remove_file(f);
    }
}

/// 128 bits from the operating system, as 32 hex digits.
fn new_id() -> Result<String, getrandom::Error> {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b)?;
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}

fn valid_id(id: &str) -> bool {
    id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit())
}

fn millis(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// `t` in RFC 3339 (UTC, milliseconds). Written here: the engine's one
/// formatter of times (`humantime`) is only in the `net` build.
pub fn rfc3339(t: SystemTime) -> String {
    let ms = millis(t);
    let secs = ms / 1000;
    let days = (secs / 86400) as i64;
    let rem = secs % 86400;
    // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z", rem / 3600, rem % 3600 / 60, rem % 60, ms % 1000)
}

#[cfg(unix)]
fn create_private_dir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    let meta = std::fs::metadata(dir)?;
    if !meta.is_dir() {
        return Err(io::Error::other("not a directory"));
    }
    if meta.permissions().mode() & 0o077 != 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

#[cfg(not(unix))]
fn create_private_dir(dir: &Path) -> io::Result<()> {
    std::fs::create_dir_all(dir)
}

fn write_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write;
    let tmp = path.with_extension("tmp");
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
    let mut f = o.open(&tmp)?;
    f.write_all(bytes)?;
    f.sync_data()?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tasks(max: usize) -> Tasks {
        let opts = TaskOptions { max_tasks: max, ..TaskOptions::default() };
        Tasks::new(opts, vec![Support::Optional, Support::Required, Support::Forbidden]).unwrap()
    }

    #[test]
    fn times_are_rfc3339() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let t = UNIX_EPOCH + Duration::from_millis(1_764_066_600_123);
        assert_eq!(rfc3339(t), "2025-11-25T10:30:00.123Z");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(rfc3339(leap), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn ids_are_unguessable_and_bound_to_their_owner() {
        let t = tasks(10);
        let a = t.create(Some("alice"), false, None).unwrap();
        let b = t.create(Some("alice"), false, None).unwrap();
        assert!(valid_id(&a.id) && a.id != b.id);
        assert!(t.find(&a.id, Some("alice")).is_some());
        assert!(t.find(&a.id, Some("bob")).is_none());
        assert!(t.find(&a.id, None).is_none());
    }

    #[test]
    fn plans_follow_support_and_era() {
        let t = tasks(10);
        let v = Version::V2025_11_25;
        let ask: Map<String, Value> = serde_json::from_str(r#"{"task":{"ttl":5000}}"#).unwrap();
        let plain = Map::new();
        assert_eq!(t.plan(0, &ask, v), Ok(Some(Some(5000))));
        assert_eq!(t.plan(0, &plain, v), Ok(None));
        assert_eq!(t.plan(1, &plain, v).unwrap_err().0, crate::codes::METHOD_NOT_FOUND);
        assert_eq!(t.plan(2, &ask, v).unwrap_err().0, crate::codes::METHOD_NOT_FOUND);
        // Versions before tasks run the call as ever.
        assert_eq!(t.plan(1, &plain, Version::V2025_06_18), Ok(None));
        let m = Version::V2026_07_28;
        let allows: Map<String, Value> = serde_json::from_str(
            r#"{"_meta":{"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}"#,
        )
        .unwrap();
        assert_eq!(t.plan(0, &allows, m), Ok(Some(None)));
        assert_eq!(t.plan(2, &allows, m), Ok(None));
        assert_eq!(t.plan(1, &plain, m).unwrap_err().0, MISSING_REQUIRED_CLIENT_CAPABILITY);
    }

    #[test]
    fn a_full_store_drops_finished_tasks_first_and_refuses_when_all_run() {
        let t = tasks(2);
        let a = t.create(None, false, None).unwrap();
        let _b = t.create(None, false, None).unwrap();
        assert_eq!(t.create(None, false, None).unwrap_err().0, INTERNAL_ERROR);
        a.finish_result(br#"{"content":[]}"#, false);
        let _c = t.create(None, false, None).unwrap();
        assert!(t.find(&a.id, None).is_none());
    }

    #[test]
    fn results_carry_their_task_and_cancelled_stays_cancelled() {
        let t = tasks(10);
        let a = t.create(None, false, None).unwrap();
        a.finish_result(br#"{"content":[{"type":"text","text":"boom"}],"isError":true}"#, true);
        assert_eq!(a.status(), Status::Failed);
        let line = String::from_utf8(result_line("7", &a)).unwrap();
        assert!(line.contains(&format!("\"{META_RELATED}\":{{\"taskId\":\"{}\"}}", a.id)), "{line}");
        let b = t.create(None, true, None).unwrap();
        assert!(b.cancel());
        b.finish_result(br#"{"content":[]}"#, false);
        assert_eq!(b.status(), Status::Cancelled);
        assert!(!b.cancel());
    }

    #[test]
    fn the_directory_keeps_finished_tasks_and_fails_running_ones() {
        let dir = std::env::temp_dir().join(format!("mcplite-tasks-{}", new_id().unwrap()));
        let opts = TaskOptions { dir: Some(dir.clone()), ..TaskOptions::default() };
        let t = Tasks::new(opts.clone(), vec![Support::Optional]).unwrap();
        let done = t.create(Some("k"), true, None).unwrap();
        done.finish_result(br#"{"content":[{"type":"text","text":"42"}]}"#, false);
        let running = t.create(Some("k"), true, None).unwrap();
        drop(t);
        let again = Tasks::new(opts, vec![Support::Optional]).unwrap();
        let d = again.find(&done.id, Some("k")).unwrap();
        assert_eq!(d.status(), Status::Completed);
        assert_eq!(d.object(true)["result"]["content"][0]["text"], "42");
        let r = again.find(&running.id, Some("k")).unwrap();
        assert_eq!(r.status(), Status::Failed);
        assert_eq!(r.object(true)["statusMessage"], STOPPED_TEXT);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.join(format!("{}.json", done.id))).unwrap().permissions().mode();
            assert_eq!(mode & 0o077, 0);
        }
        let _ = std::fs::remove_dir_all(dir);
    }
}
