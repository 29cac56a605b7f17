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
//!
//! Replicas (RULES V4.4): an HTTP server with a replica name puts it in
//! front of its task ids (`<replica>.<32 hex>`, [`TaskOptions::prefix`]), as
//! it does in front of its session ids, so a proxy can route a task's
//! requests to the replica that holds it by the id alone. Replicas may share
//! one task directory: each writes and reads back only the files of its own
//! ids, and a task another replica made is read from its file, read-only
//! (the status and answer as last written), when a request about it reaches
//! this replica ([`Tasks::find`]).

use crate::ask_state::AskKind;
use crate::ask_state::{AskError, Asks};
use crate::codes::{INTERNAL_ERROR, INVALID_PARAMS, MISSING_REQUIRED_CLIENT_CAPABILITY};
use crate::private_files::{create_private_dir, write_private};
use crate::version::{Version, META_CAPS};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

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
    /// The most bytes of results kept at once, over all tasks (RULES V4.2).
    pub max_bytes: usize,
    /// Where finished tasks are kept across restarts, if anywhere.
    pub dir: Option<PathBuf>,
    /// `tasks/list` is offered (2025-11-25): only where requestors are told
    /// apart (stdio, or HTTP with tokens).
    pub list: bool,
    /// The replica name put in front of task ids (`<prefix>.<32 hex>`): the
    /// HTTP server's replica name, if it has one. 1 to 32 ASCII letters,
    /// digits, `_` or `-`. In a shared directory, this server keeps (and
    /// reads back at start) only the files of ids with its own prefix (or
    /// none, without one); the others' it reads, read-only, when asked.
    pub prefix: Option<String>,
    /// The shortest time to live granted ([`MIN_TTL`]; tests shorten it).
    pub min_ttl: Duration,
    /// 2026-07-28: a call of an optional tool becomes a task only when it
    /// has not answered this long after it arrived (RULES V2.5); `None`:
    /// at once.
    pub after: Option<Duration>,
}

impl Default for TaskOptions {
    fn default() -> Self {
        TaskOptions {
            ttl: Duration::from_secs(3600),
            max_ttl: Duration::from_secs(7 * 86400),
            poll_interval: Duration::from_secs(1),
            max_tasks: 1000,
            max_bytes: DEFAULT_MAX_BYTES,
            dir: None,
            list: true,
            prefix: None,
            min_ttl: MIN_TTL,
            after: None,
        }
    }
}

/// A task's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Working,
    /// A 2026-07-28 task's tool asked a question (RULES V2.3), answered
    /// with `tasks/update`.
    InputRequired,
    Completed,
    Failed,
    Cancelled,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Working => "working",
            Status::InputRequired => "input_required",
            Status::Completed => "completed",
            Status::Failed => "failed",
            Status::Cancelled => "cancelled",
        }
    }

    fn parse(s: &str) -> Option<Status> {
        [Status::Working, Status::InputRequired, Status::Completed, Status::Failed, Status::Cancelled]
            .into_iter()
            .find(|x| x.as_str() == s)
    }

    pub fn is_terminal(self) -> bool {
        !matches!(self, Status::Working | Status::InputRequired)
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
    /// The questions of the task's tool not yet answered, by key (`q1`,
    /// `q2`, ...: never reused), each `{"method":…,"params":…}`.
    questions: Map<String, Value>,
    /// Answers that came with `tasks/update`, by key, until the tool takes
    /// them.
    answers: HashMap<String, Value>,
    asked: u32,
}

impl State {
    fn new(status: Status, message: Option<String>, updated: SystemTime, answer: Option<Answer>) -> State {
        State { status, message, updated, answer, questions: Map::new(), answers: HashMap::new(), asked: 0 }
    }
}

/// The shortest time to live granted (RULES V4.2): a client asking for
/// less gets this.
pub const MIN_TTL: Duration = Duration::from_secs(60);

/// The largest answer a task keeps (RULES V4.2): a larger one fails the
/// task, saying so.
pub const MAX_KEPT: usize = 16 << 20;

/// The most bytes of results the tasks keep at once, by default.
pub const DEFAULT_MAX_BYTES: usize = 256 << 20;

/// The most task files read (the task directory is the server's own; a file
/// larger than this is not a task it wrote).
const MAX_FILE: u64 = (MAX_KEPT as u64) * 2 + (1 << 20);

/// The most 2025-11-25 `tasks/result` requests waiting at once, in all and
/// per owner (RULES V3.2); more are refused, saying to poll.
pub const MAX_WAITS: usize = 256;
pub const MAX_WAITS_PER_OWNER: usize = 32;

/// The most questions of one task waiting for answers at once.
const MAX_QUESTIONS: usize = 16;

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
    /// Told when an answer comes or the task ends (a waiting question).
    answered: Condvar,
    /// What the client that created it can be asked (2026-07-28).
    asks: Asks,
    /// Told when the task ends (a waiting `tasks/result` over HTTP).
    ended: tokio::sync::Notify,
    /// Stops the call (set when it is queued).
    cancel: Mutex<Option<Box<dyn Fn() + Send + Sync>>>,
    /// Where it is kept, if anywhere.
    file: Option<PathBuf>,
    /// Another replica's task, read from its file (never written here).
    foreign: Option<Foreign>,
    /// Told when the status changes (RULES V3.7).
    changed: Option<Changed>,
    /// Dropped from the store: its file is gone and is not written again.
    forgotten: AtomicBool,
    /// The store's bytes of results (`None`: another replica's task).
    budget: Option<Arc<Budget>>,
    /// The bytes of its result counted in the budget.
    kept: AtomicUsize,
}

/// The bytes of results the tasks keep (RULES V4.2): a result that does not
/// fit drops finished tasks, updated longest ago first; when none is left
/// to drop, the task fails instead, saying so.
struct Budget {
    used: AtomicUsize,
    max: usize,
    map: std::sync::Weak<Mutex<HashMap<String, Arc<Task>>>>,
}

impl Budget {
    /// Room for `n` more bytes, made by dropping finished tasks if need be.
    fn admit(&self, n: usize) -> bool {
        if n > self.max {
            return false;
        }
        loop {
            let used = self.used.load(Ordering::SeqCst);
            if used.saturating_add(n) <= self.max {
                if self.used.compare_exchange(used, used + n, Ordering::SeqCst, Ordering::SeqCst).is_ok() {
                    return true;
                }
                continue;
            }
            let Some(map) = self.map.upgrade() else { return false };
            let victim = {
                let mut m = lock(&map);
                let oldest = m
                    .values()
                    .filter(|t| t.status().is_terminal() && t.kept.load(Ordering::SeqCst) > 0)
                    .min_by_key(|t| lock(&t.state).updated)
                    .map(|t| t.id.clone());
                oldest.and_then(|id| m.remove(&id))
            };
            match victim {
                Some(t) => forget(&t),
                None => return false,
            }
        }
    }

    fn release(&self, n: usize) {
        let _ = self.used.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |u| Some(u.saturating_sub(n)));
    }
}

/// A task read from another replica's file in a shared task directory: a
/// snapshot, read again (at most every [`FOREIGN_READ`]) while a
/// `tasks/result` waits for it.
#[derive(Debug)]
struct Foreign {
    path: PathBuf,
    /// The file is gone: its replica dropped the task.
    gone: AtomicBool,
    read_at: Mutex<Instant>,
}

/// How often a waiting `tasks/result` reads another replica's task file.
const FOREIGN_READ: Duration = Duration::from_millis(200);

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

    /// A finished task past its time to live. A task that has not ended is
    /// kept while its call runs (RULES V4.2): dropping it would leave a
    /// call nobody can stop, and a store that no longer counts it.
    fn expired(&self, now: SystemTime) -> bool {
        self.status().is_terminal() && now.duration_since(self.created).is_ok_and(|age| age > self.ttl)
    }

    /// Another replica's task: read its file again (unless it was read
    /// moments ago), taking the status and answer its replica last wrote;
    /// a file no longer there is a task dropped.
    fn refresh(&self) {
        let Some(f) = &self.foreign else { return };
        {
            let mut at = lock(&f.read_at);
            if at.elapsed() < FOREIGN_READ {
                return;
            }
            *at = Instant::now();
        }
        match read_task_file(&f.path).and_then(|b| Record::parse(&b)) {
            Some(r) if r.id == self.id => *lock(&self.state) = r.state,
            _ => f.gone.store(true, Ordering::Relaxed),
        }
    }

    /// Another replica's task whose file is gone.
    fn is_gone(&self) -> bool {
        self.foreign.as_ref().is_some_and(|f| f.gone.load(Ordering::Relaxed))
    }

    /// What the client that created the task can be asked (RULES V2.3):
    /// nothing in 2025-11-25.
    pub fn asks(&self) -> Asks {
        self.asks
    }

    /// A question of the task's tool (RULES V2.3, 2026-07-28): the task is
    /// `input_required` with the question in its `inputRequests` until a
    /// `tasks/update` answers it, the task ends, `stop` says so or
    /// `timeout` passes.
    pub fn ask(
        &self,
        kind: AskKind,
        params: Value,
        timeout: Duration,
        stop: &dyn Fn() -> bool,
    ) -> Result<Value, AskError> {
        if !self.modern || !self.asks.allows(kind.capability()) {
            return Err(AskError::Unsupported(kind));
        }
        let deadline = Instant::now() + timeout;
        let mut s = lock(&self.state);
        if s.status.is_terminal() {
            return Err(AskError::Cancelled);
        }
        if s.questions.len() >= MAX_QUESTIONS {
            return Err(AskError::Remote(format!("the task already waits for {MAX_QUESTIONS} answers")));
        }
        s.asked += 1;
        let key = format!("q{}", s.asked);
        let mut request = Map::new();
        request.insert("method".into(), kind.method().into());
        request.insert("params".into(), params);
        s.questions.insert(key.clone(), Value::Object(request));
        s.status = Status::InputRequired;
        s.updated = SystemTime::now();
        drop(s);
        self.tell();
        let mut s = lock(&self.state);
        let outcome = loop {
            if let Some(a) = s.answers.remove(&key) {
                break Ok(a);
            }
            if s.status.is_terminal() || stop() {
                break Err(AskError::Cancelled);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break Err(AskError::TimedOut(timeout));
            }
            s = self
                .answered
                .wait_timeout(s, left.min(Duration::from_millis(100)))
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        };
        s.questions.remove(&key);
        let resumed = s.questions.is_empty() && s.status == Status::InputRequired;
        if resumed {
            s.status = Status::Working;
            s.updated = SystemTime::now();
        }
        drop(s);
        if resumed {
            self.tell();
        }
        outcome
    }

    /// Tell whoever listens that the status changed (RULES V3.7).
    fn tell(&self) {
        if let Some(f) = &self.changed {
            f(self);
        }
    }

    /// The task as a `notifications/tasks` carries it: the members of
    /// `tasks/get`'s task (JSON text, without braces; RULES V3.7).
    pub fn notification_members(&self) -> String {
        self.members_text(true, "")
    }

    /// `tasks/update`: the answers to questions still waiting; any other
    /// key, and any answer that is not an object, is ignored.
    fn update(&self, responses: &Map<String, Value>) {
        let mut s = lock(&self.state);
        for (k, v) in responses {
            if s.questions.contains_key(k) && v.is_object() && !s.answers.contains_key(k) {
                s.answers.insert(k.clone(), v.clone());
            }
        }
        drop(s);
        self.answered.notify_all();
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
        if result.len() > MAX_KEPT {
            let why = format!(
                "The tool's result ({} bytes) is larger than a task keeps ({MAX_KEPT} bytes); return less, or write \
                 it to a file or a resource and return its name.",
                result.len()
            );
            return self.finish_error(INTERNAL_ERROR, &why);
        }
        let text = String::from_utf8_lossy(result).into_owned();
        let (status, message) = match (tool_error, self.modern) {
            // 2025-11-25: a tool error fails the task; 2026-07-28 completes
            // it (failed is for JSON-RPC errors only).
            (true, false) => (Status::Failed, error_text(&text)),
            _ => (Status::Completed, None),
        };
        let text = if self.modern { text } else { with_related(&text, &self.id) };
        let n = text.len();
        if n > MAX_KEPT {
            let why = format!(
                "The tool's result ({n} bytes as kept) is larger than a task keeps ({MAX_KEPT} bytes); return less, or \
                 write it to a file or a resource and return its name."
            );
            return self.finish_error(INTERNAL_ERROR, &why);
        }
        if let Some(b) = &self.budget {
            if self.status().is_terminal() {
                return;
            }
            if !b.admit(n) {
                let why = format!(
                    "The server keeps at most {} MiB of task results at once, and the tasks that hold them are \
                     still running or were just made; call the tool again later.",
                    b.max >> 20
                );
                return self.finish_error(INTERNAL_ERROR, &why);
            }
            self.kept.store(n, Ordering::SeqCst);
        }
        if !self.end(status, message, Answer::Result(text)) {
            self.release_kept();
        }
    }

    /// Its result's bytes leave the budget.
    fn release_kept(&self) {
        if let Some(b) = &self.budget {
            b.release(self.kept.swap(0, Ordering::SeqCst));
        }
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

    /// False when the task had ended already.
    fn end(&self, status: Status, message: Option<String>, answer: Answer) -> bool {
        {
            let mut s = lock(&self.state);
            if s.status.is_terminal() {
                return false;
            }
            s.status = status;
            if message.is_some() {
                s.message = message;
            }
            s.updated = SystemTime::now();
            s.answer = Some(answer);
            s.questions.clear();
        }
        self.save();
        self.answered.notify_all();
        self.ended.notify_waiters();
        self.tell();
        true
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
            s.questions.clear();
        }
        self.answered.notify_all();
        if let Some(f) = lock(&self.cancel).take() {
            f();
        }
        self.save();
        self.ended.notify_waiters();
        self.tell();
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
        // 2026-07-28: tasks/get shows the questions waiting; the result
        // or error is inlined by `object_text`.
        if details && self.modern && s.status == Status::InputRequired {
            out.insert("inputRequests".into(), Value::Object(s.questions.clone()));
        }
        if details && self.modern && s.status == Status::Failed && !matches!(s.answer, Some(Answer::Error(_))) {
            let m = s.message.clone().unwrap_or_else(|| "The task failed.".into());
            out.insert("error".into(), serde_json::json!({ "code": INTERNAL_ERROR, "message": m }));
        }
    }

    /// The task object.
    pub fn object(&self, details: bool) -> Map<String, Value> {
        let mut m = Map::new();
        self.write_members(&mut m, details);
        if details && self.modern {
            if let Some((k, raw)) = self.inlined() {
                m.insert(k.into(), serde_json::from_str(&raw).unwrap_or(Value::Null));
            }
        }
        m
    }

    /// 2026-07-28: what `tasks/get` inlines, as kept (JSON text): `result`
    /// of a completed task, `error` of a failed one.
    fn inlined(&self) -> Option<(&'static str, String)> {
        let s = lock(&self.state);
        match (&s.status, &s.answer) {
            (Status::Completed, Some(Answer::Result(r))) => Some(("result", r.clone())),
            (Status::Failed, Some(Answer::Error(e))) => Some(("error", e.clone())),
            _ => None,
        }
    }

    /// The members of the task object as JSON text without braces, `extra`
    /// (members as JSON text) first; 2026-07-28 `tasks/get` with the
    /// kept result or error inlined as it is, not parsed again.
    fn members_text(&self, details: bool, extra: &str) -> String {
        let mut m = Map::new();
        self.write_members(&mut m, details);
        let text = Value::Object(m).to_string();
        let mut out = String::with_capacity(text.len() + extra.len() + 64);
        out.push_str(extra);
        out.push_str(&text[1..text.len() - 1]);
        if details && self.modern {
            if let Some((k, raw)) = self.inlined() {
                out.push_str(",\"");
                out.push_str(k);
                out.push_str("\":");
                out.push_str(&raw);
            }
        }
        out
    }

    /// Kept in the task directory, when there is one (written whole, then
    /// renamed, so a reader never sees half a file).
    fn save(&self) {
        if self.forgotten.load(Ordering::SeqCst) {
            return;
        }
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
    /// Its place among the waits ([`MAX_WAITS`]), given back when it goes.
    _slot: WaitSlot,
}

/// The `tasks/result` requests waiting, in all and per owner.
#[derive(Default)]
struct WaitCount {
    all: usize,
    by_owner: HashMap<Option<String>, usize>,
}

/// A place among the waiting `tasks/result` requests.
struct WaitSlot {
    count: Arc<Mutex<WaitCount>>,
    owner: Option<String>,
}

impl WaitSlot {
    /// A place for `owner`, if there is one left.
    fn take(count: &Arc<Mutex<WaitCount>>, owner: Option<&str>) -> Option<WaitSlot> {
        let mut c = lock(count);
        let key = owner.map(str::to_owned);
        let mine = c.by_owner.get(&key).copied().unwrap_or(0);
        if c.all >= MAX_WAITS || mine >= MAX_WAITS_PER_OWNER {
            return None;
        }
        c.all += 1;
        c.by_owner.insert(key.clone(), mine + 1);
        Some(WaitSlot { count: Arc::clone(count), owner: key })
    }
}

impl Drop for WaitSlot {
    fn drop(&mut self) {
        let mut c = lock(&self.count);
        c.all -= 1;
        if let Some(n) = c.by_owner.get_mut(&self.owner) {
            *n -= 1;
            if *n == 0 {
                c.by_owner.remove(&self.owner);
            }
        }
    }
}

impl Waiting {
    /// Done waiting? (Another replica's task is read again from its file.)
    pub fn ready(&self) -> bool {
        self.task.refresh();
        let outlived = self.task.foreign.is_some()
            && SystemTime::now().duration_since(self.task.created).is_ok_and(|age| age > self.task.ttl);
        if outlived {
            // Another replica's task past its time to live (its replica may
            // be gone): no longer waited for.
            if let Some(f) = &self.task.foreign {
                f.gone.store(true, Ordering::Relaxed);
            }
        }
        self.task.status().is_terminal() || self.task.is_gone()
    }

    /// Wait (async) until the task ends.
    pub async fn wait(&self) {
        if self.task.foreign.is_some() {
            // Nothing here is told when another replica's task ends: its
            // file is read again until it has.
            while !self.ready() {
                #[cfg(feature = "net")]
                tokio::time::sleep(FOREIGN_READ).await;
                // Without `net` no transport awaits this (stdio asks
                // `ready` in its loop).
                #[cfg(not(feature = "net"))]
                std::thread::sleep(FOREIGN_READ);
            }
            return;
        }
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
        if self.task.is_gone() && !self.task.status().is_terminal() {
            let detail = format!("task {} is no longer kept", self.task.id);
            return crate::codes::error_line(Some(&self.id), INVALID_PARAMS, "Invalid params", Some(&detail));
        }
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
        None => crate::codes::error_line(
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
    map: Arc<Mutex<HashMap<String, Arc<Task>>>>,
    /// Told when a task's status changes (RULES V3.7); given to each task.
    changed: std::sync::OnceLock<Changed>,
    /// The waiting `tasks/result` requests (RULES V3.2).
    waits: Arc<Mutex<WaitCount>>,
    /// The bytes of results kept (RULES V4.2).
    budget: Arc<Budget>,
}

/// What is told of a task whose status changed.
pub type Changed = Arc<dyn Fn(&Task) + Send + Sync>;

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
        if let Some(p) = opts.prefix.as_deref().filter(|p| !valid_prefix(p)) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("the replica name must be 1 to 32 ASCII letters, digits, \"_\" or \"-\", not {p:?}"),
            ));
        }
        let map = Arc::new(Mutex::new(HashMap::new()));
        let budget = Arc::new(Budget {
            used: AtomicUsize::new(0),
            max: opts.max_bytes.max(MAX_KEPT),
            map: Arc::downgrade(&map),
        });
        let tasks = Tasks {
            opts,
            support,
            map,
            changed: std::sync::OnceLock::new(),
            waits: Arc::new(Mutex::new(WaitCount::default())),
            budget,
        };
        if let Some(dir) = tasks.opts.dir.clone() {
            create_private_dir(&dir)?;
            tasks.load(&dir)?;
        }
        // RULES V4.2: a finished task's result, in memory and on disk, is
        // dropped soon after its time to live, also on a server nobody asks.
        let weak = Arc::downgrade(&tasks.map);
        crate::signals::spawn_masked("mcplite-tasks", move || loop {
            std::thread::sleep(SWEEP_EVERY);
            let Some(map) = weak.upgrade() else { return };
            sweep(&map);
        })?;
        Ok(tasks)
    }

    /// From now on `f` is told of every status change of the tasks created
    /// (RULES V3.7: the server publishes them to listeners). Set once.
    pub fn on_change(&self, f: Changed) {
        let _ = self.changed.set(f);
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

    /// How long a call of tool `index` that [`Tasks::plan`] made a task,
    /// in version `v`, runs as an ordinary call before it becomes one
    /// (RULES V2.5): only 2026-07-28 calls of optional tools, when the
    /// server says.
    pub fn promotes_after(&self, index: usize, v: Version) -> Option<Duration> {
        (v.is_modern() && self.support(index) == Support::Optional).then_some(self.opts.after).flatten()
    }

    /// A new task of `owner`, working, kept before its handle is answered.
    /// `Err` when the store is full of running tasks.
    pub fn create(
        &self,
        owner: Option<&str>,
        modern: bool,
        ttl_ms: Option<u64>,
        asks: Asks,
    ) -> Result<Arc<Task>, Refusal> {
        let floor = self.opts.min_ttl;
        let ttl = ttl_ms.map_or(self.opts.ttl, Duration::from_millis).clamp(floor, self.opts.max_ttl.max(floor));
        let id = new_id(self.opts.prefix.as_deref())
            .map_err(|_| (INTERNAL_ERROR, "no task id: the operating system's random source failed".into()))?;
        let now = SystemTime::now();
        let task = Arc::new(Task {
            file: self.opts.dir.as_ref().map(|d| d.join(format!("{id}.json"))),
            id,
            owner: owner.map(str::to_owned),
            modern,
            created: now,
            ttl,
            poll: self.opts.poll_interval,
            state: Mutex::new(State::new(Status::Working, None, now, None)),
            answered: Condvar::new(),
            asks: if modern { asks } else { Asks::NONE },
            ended: tokio::sync::Notify::new(),
            cancel: Mutex::new(None),
            foreign: None,
            changed: self.changed.get().cloned(),
            forgotten: AtomicBool::new(false),
            budget: Some(Arc::clone(&self.budget)),
            kept: AtomicUsize::new(0),
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

    /// A task made and never answered with (its call was cancelled
    /// meanwhile, RULES V2.5): dropped with its file.
    pub fn discard(&self, task: &Task) {
        let removed = lock(&self.map).remove(&task.id);
        task.cancel_quietly();
        if let Some(t) = removed {
            forget(&t);
        }
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
    /// An id of another replica (its prefix not this server's) is read from
    /// that replica's file in the task directory, when there is one: a
    /// snapshot, never written here, and an expired one is left to its
    /// replica.
    pub fn find(&self, id: &str, owner: Option<&str>) -> Option<Arc<Task>> {
        {
            let mut map = lock(&self.map);
            if let Some(t) = map.get(id) {
                if t.expired(SystemTime::now()) {
                    if let Some(t) = map.remove(id) {
                        forget(&t);
                    }
                    return None;
                }
                return (t.owner.as_deref() == owner).then(|| Arc::clone(t));
            }
        }
        let t = self.find_foreign(id)?;
        (t.owner.as_deref() == owner && !t.expired(SystemTime::now())).then_some(t)
    }

    /// Another replica's task `id`, read from its file.
    fn find_foreign(&self, id: &str) -> Option<Arc<Task>> {
        let dir = self.opts.dir.as_ref()?;
        let (prefix, _) = split_id(id)?;
        if prefix == self.opts.prefix.as_deref() {
            return None;
        }
        // `id` is letters, digits, "_", "-" and one ".": a file name in `dir`.
        let path = dir.join(format!("{id}.json"));
        let r = Record::parse(&read_task_file(&path)?)?;
        (r.id == id).then(|| {
            let foreign = Foreign { path, gone: AtomicBool::new(false), read_at: Mutex::new(Instant::now()) };
            Arc::new(r.into_task(None, Some(foreign), self.opts.poll_interval, None))
        })
    }

    /// The detail of `-32602` for task `id` that is not found.
    fn not_found(&self, id: &str) -> String {
        let mine = self.opts.prefix.as_deref();
        let shown: String = id.chars().take(80).collect();
        let id = shown.as_str();
        match split_id(id) {
            Some((Some(p), _)) if Some(p) != mine => format!(
                "no task {id:?} (unknown, expired, or not yours; its id names replica {p}, and this is {}: send \
                 requests about a task to its replica, or give the replicas one task directory)",
                server_words(mine)
            ),
            _ => format!("no task {id:?} (unknown, expired, or not yours)"),
        }
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
            return Err((INVALID_PARAMS, self.not_found(task_id)));
        };
        // RULES V3.6: a task is asked about in the era that created it (its
        // shapes, and its answer, are that era's).
        if task.modern != v.is_modern() {
            let era = if task.modern { "a 2026-07-28 request" } else { "a 2025-11-25 session" };
            return Err((
                INVALID_PARAMS,
                format!("task {task_id} was created by {era}: ask about it in that protocol version"),
            ));
        }
        // The result line around members (JSON text without braces).
        let line = |members: &str| {
            let mut line = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{").into_bytes();
            if v.is_modern() {
                line.extend_from_slice(b"\"resultType\":\"complete\"");
                if !members.is_empty() {
                    line.push(b',');
                }
            }
            line.extend_from_slice(members.as_bytes());
            if v.is_modern() {
                line.extend_from_slice(b",\"_meta\":{\"");
                line.extend_from_slice(crate::version::META_SERVER_INFO.as_bytes());
                line.extend_from_slice(b"\":");
                line.extend_from_slice(server_meta.as_bytes());
                line.push(b'}');
            }
            line.extend_from_slice(b"}}");
            line
        };
        match method {
            "tasks/get" => Ok(Ok(line(&task.members_text(true, "")))),
            "tasks/result" if !v.is_modern() => {
                task.refresh();
                if task.status().is_terminal() {
                    return Ok(Ok(result_line(id, &task)));
                }
                // RULES V3.2: the waits are bounded.
                let Some(slot) = WaitSlot::take(&self.waits, owner) else {
                    return Err((
                        INTERNAL_ERROR,
                        format!(
                            "too many tasks/result requests are waiting (at most {MAX_WAITS}, {MAX_WAITS_PER_OWNER} \
                             per client); poll the task with tasks/get instead"
                        ),
                    ));
                };
                let waiting = Waiting { task, id: id.to_owned(), _slot: slot };
                if waiting.ready() {
                    Ok(Ok(waiting.line()))
                } else {
                    Ok(Err(waiting))
                }
            }
            "tasks/cancel" => {
                // Another replica's task runs there: this one cannot stop it.
                if task.foreign.is_some() && !task.status().is_terminal() {
                    let owner = server_words(split_id(task_id).and_then(|(p, _)| p));
                    return Err((
                        INVALID_PARAMS,
                        format!(
                            "task {task_id} runs on {owner}, not here: cancel it in the session that created it \
                             (2025-11-25), or send tasks/cancel with the Mcp-Name header (2026-07-28), which a \
                             proxy routes to that replica"
                        ),
                    ));
                }
                if !task.cancel() && !v.is_modern() {
                    let status = task.status().as_str();
                    return Err((INVALID_PARAMS, format!("cannot cancel task: already in terminal status '{status}'")));
                }
                // 2025-11-25 answers the task; 2026-07-28 an empty result.
                Ok(Ok(line(&if v.is_modern() { String::new() } else { task.members_text(false, "") })))
            }
            // 2026-07-28: answers to the questions the task's tool asked
            // (RULES V3.5); keys not waiting are ignored.
            "tasks/update" if v.is_modern() => match p.and_then(|p| p.get("inputResponses")) {
                None => Ok(Ok(line(""))),
                Some(Value::Object(r)) => {
                    task.update(r);
                    Ok(Ok(line("")))
                }
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
            // 2025-11-25 only: the era of tasks/list (RULES V3.3, V3.6).
            lock(&self.map)
                .values()
                .filter(|t| t.owner.as_deref() == owner && !t.modern && !t.expired(now))
                .cloned()
                .collect();
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

    /// Read back what the directory keeps: the files of this server's own
    /// ids (with its prefix, or none without one). Another replica's files
    /// are left alone, silently: that replica reads them back.
    fn load(&self, dir: &Path) -> io::Result<()> {
        let now = SystemTime::now();
        let mine = self.opts.prefix.as_deref();
        let mut map = lock(&self.map);
        for entry in std::fs::read_dir(dir)? {
            let path = entry?.path();
            if path.extension().and_then(|e| e.to_str()) != Some("json") {
                continue;
            }
            let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
            if split_id(stem).is_some_and(|(p, _)| p != mine) {
                continue;
            }
            let Some(task) = read_task_file(&path).and_then(|b| Record::parse(&b)).filter(|r| r.id == stem).map(|r| {
                Arc::new(r.into_task(Some(path.clone()), None, self.opts.poll_interval, Some(Arc::clone(&self.budget))))
            }) else {
                eprintln!("mcplite: task directory: {} is not a task; left alone", path.display());
                continue;
            };
            if !task.status().is_terminal() {
                // It was running when the server stopped.
                task.finish_interrupted(STOPPED_TEXT);
            }
            if task.expired(now) || map.len() >= self.opts.max_tasks {
                forget(&task);
                continue;
            }
            map.insert(task.id.clone(), task);
        }
        Ok(())
    }
}

/// A task as its file keeps it ([`Task::save`] writes it).
struct Record {
    id: String,
    owner: Option<String>,
    modern: bool,
    created: SystemTime,
    ttl: Duration,
    state: State,
}

impl Record {
    /// The task a file holds; `None` when it holds none (or an id that is
    /// not one).
    fn parse(bytes: &[u8]) -> Option<Record> {
        let r: Value = serde_json::from_slice(bytes).ok()?;
        let id = r.get("taskId")?.as_str()?.to_owned();
        split_id(&id)?;
        let at = |k: &str| r.get(k).and_then(Value::as_u64).map(|ms| UNIX_EPOCH + Duration::from_millis(ms));
        // What goes into an answer as it is must be a JSON object.
        let object = |k: &str| {
            r.get(k).and_then(Value::as_str).filter(|t| serde_json::from_str::<Value>(t).is_ok_and(|v| v.is_object()))
        };
        let answer = match (object("result"), object("error")) {
            (Some(res), _) => Some(Answer::Result(res.to_owned())),
            (None, Some(e)) => Some(Answer::Error(e.to_owned())),
            _ => None,
        };
        Some(Record {
            id,
            owner: r.get("owner").and_then(Value::as_str).map(str::to_owned),
            modern: r.get("modern").and_then(Value::as_bool)?,
            created: at("createdMs")?,
            ttl: Duration::from_millis(r.get("ttlMs").and_then(Value::as_u64)?),
            state: State::new(
                Status::parse(r.get("status")?.as_str()?)?,
                r.get("message").and_then(Value::as_str).map(str::to_owned),
                at("updatedMs")?,
                answer,
            ),
        })
    }

    /// The task, kept in `file` (this server's own) or read from another
    /// replica's (`foreign`).
    fn into_task(
        self,
        file: Option<PathBuf>,
        foreign: Option<Foreign>,
        poll: Duration,
        budget: Option<Arc<Budget>>,
    ) -> Task {
        // A result read back counts in the budget (room is made for the
        // next one if it is over).
        let kept = match (&budget, &self.state.answer) {
            (Some(b), Some(Answer::Result(r))) => {
                b.used.fetch_add(r.len(), Ordering::SeqCst);
                r.len()
            }
            _ => 0,
        };
        Task {
            id: self.id,
            owner: self.owner,
            modern: self.modern,
            created: self.created,
            ttl: self.ttl,
            poll,
            state: Mutex::new(self.state),
            answered: Condvar::new(),
            asks: Asks::NONE,
            ended: tokio::sync::Notify::new(),
            cancel: Mutex::new(None),
            file,
            foreign,
            changed: None,
            forgotten: AtomicBool::new(false),
            budget,
            kept: AtomicUsize::new(kept),
        }
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

/// How often expired tasks are looked for.
const SWEEP_EVERY: Duration = Duration::from_secs(10);

/// Drop the expired tasks of `map`.
fn sweep(map: &Mutex<HashMap<String, Arc<Task>>>) {
    let now = SystemTime::now();
    let expired: Vec<Arc<Task>> = {
        let mut m = lock(map);
        let ids: Vec<String> = m.values().filter(|t| t.expired(now)).map(|t| t.id.clone()).collect();
        ids.iter().filter_map(|id| m.remove(id)).collect()
    };
    for t in expired {
        forget(&t);
    }
}

fn forget(task: &Task) {
    task.forgotten.store(true, Ordering::SeqCst);
    task.release_kept();
    if let Some(f) = &task.file {
        let _ = std::fs::remove_file(f);
    }
}

/// A task file's bytes: a regular file (a link is not followed) no larger
/// than [`MAX_FILE`]; `None` otherwise.
fn read_task_file(path: &Path) -> Option<Vec<u8>> {
    use std::io::Read;
    let mut o = std::fs::OpenOptions::new();
    o.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut o, libc::O_NOFOLLOW | libc::O_NONBLOCK);
    let f = o.open(path).ok()?;
    let meta = f.metadata().ok()?;
    if !meta.is_file() || meta.len() > MAX_FILE {
        return None;
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    f.take(MAX_FILE).read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

/// 128 bits from the operating system, as 32 hex digits, after
/// `<prefix>.` when there is a prefix (a replica name).
fn new_id(prefix: Option<&str>) -> Result<String, getrandom::Error> {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b)?;
    let mut id = prefix.map(|p| format!("{p}.")).unwrap_or_default();
    id.extend(b.iter().map(|x| format!("{x:02x}")));
    Ok(id)
}

/// A task id's replica name (if it has one) and its 32 hex digits; `None`
/// for what is not a task id.
fn split_id(id: &str) -> Option<(Option<&str>, &str)> {
    let (prefix, hex) = match id.split_once('.') {
        Some((p, h)) => (Some(p), h),
        None => (None, id),
    };
    let hex_ok = hex.len() == 32 && hex.bytes().all(|b| b.is_ascii_hexdigit());
    (hex_ok && prefix.is_none_or(valid_prefix)).then_some((prefix, hex))
}

/// The server a task id's prefix names, in words.
fn server_words(prefix: Option<&str>) -> String {
    prefix.map_or_else(|| "a server without a replica name".to_owned(), |p| format!("replica {p}"))
}

/// A replica name as task ids carry it (as `HttpOptions::replica` allows):
/// 1 to 32 ASCII letters, digits, `_` or `-`.
fn valid_prefix(p: &str) -> bool {
    (1..=32).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
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

#[cfg(test)]
mod tests {
    use super::*;

    fn tasks(max: usize) -> Tasks {
        let opts = TaskOptions { max_tasks: max, ..TaskOptions::default() };
        Tasks::new(opts, vec![Support::Optional, Support::Required, Support::Forbidden]).unwrap()
    }

    /// A result of `mib` MiB (a JSON object, as a tool's).
    fn result_of(mib: usize) -> Vec<u8> {
        let mut r = br#"{"content":[{"type":"text","text":""#.to_vec();
        r.resize(r.len() + (mib << 20) - 64, b'x');
        r.extend_from_slice(br#""}]}"#);
        r
    }

    #[test]
    fn v4_2_results_are_bounded_in_bytes_the_oldest_finished_dropped_first() {
        let opts = TaskOptions { max_bytes: MAX_KEPT, ..TaskOptions::default() };
        let t = Tasks::new(opts, vec![Support::Optional]).unwrap();
        let used = || t.budget.used.load(Ordering::SeqCst);
        let done = |mib: usize| {
            let task = t.create(None, true, None, Asks::NONE).unwrap();
            task.finish_result(&result_of(mib), false);
            assert_eq!(task.status(), Status::Completed);
            task
        };
        let a = done(6);
        let b = done(6);
        assert!(used() > (12 << 20) - 200 && used() <= 12 << 20, "{}", used());
        // A third does not fit: the oldest finished one goes.
        let c = done(6);
        assert!(t.find(&a.id, None).is_none(), "the oldest result was dropped");
        assert!(t.find(&b.id, None).is_some() && t.find(&c.id, None).is_some());
        assert!(used() <= 12 << 20);
        // A running task is never dropped for room; a big result drops
        // what it must, oldest first.
        let running = t.create(None, true, None, Asks::NONE).unwrap();
        let big = done(15);
        assert!(t.find(&b.id, None).is_none() && t.find(&c.id, None).is_none());
        assert!(t.find(&running.id, None).is_some());
        assert!(t.find(&big.id, None).is_some());
        // An error answer takes no room; a cancelled task keeps no result.
        running.finish_error(INTERNAL_ERROR, "no");
        assert!(used() <= MAX_KEPT);
        // No room and nothing finished to drop: the task fails, saying so.
        t.budget.used.store(MAX_KEPT, Ordering::SeqCst);
        lock(&t.map).clear();
        let starved = t.create(None, true, None, Asks::NONE).unwrap();
        starved.finish_result(br#"{"content":[]}"#, false);
        assert_eq!(starved.status(), Status::Failed);
        assert!(starved.object(true)["statusMessage"].as_str().unwrap().contains("MiB of task results"));
        // A result larger than a task keeps once kept (2025-11-25 adds the
        // related-task member) fails its task and drops nothing.
        t.budget.used.store(0, Ordering::SeqCst);
        let kept = done(1);
        let legacy = t.create(None, false, None, Asks::NONE).unwrap();
        let mut r = result_of(16);
        r.truncate(r.len() - 40);
        r.extend_from_slice(b"\"}]}");
        legacy.finish_result(&r, false);
        assert_eq!(legacy.status(), Status::Failed);
        assert!(t.find(&kept.id, None).is_some(), "nothing was dropped for it");
        // Dropping a task gives its bytes back.
        t.budget.used.store(0, Ordering::SeqCst);
        let last = done(1);
        assert!(used() > 0);
        forget(&last);
        assert_eq!(used(), 0);
    }

    #[test]
    fn a_modern_tasks_question_waits_for_tasks_update() {
        let t = tasks(10);
        let asks = Asks { elicitation: true, sampling: false };
        let task = t.create(None, true, None, asks).unwrap();
        let modern = Version::V2026_07_28;
        let get = |t: &Tasks| -> Value {
            let p = serde_json::json!({ "taskId": task.id });
            let Ok(Ok(line)) = t.answer("1", "tasks/get", Some(&p), modern, None, "{}") else { panic!() };
            serde_json::from_slice::<Value>(&line).unwrap()["result"].clone()
        };
        std::thread::scope(|sc| {
            let asking = sc.spawn(|| {
                let params = serde_json::json!({ "message": "Name?", "requestedSchema": { "type": "object" } });
                task.ask(AskKind::Elicit, params, Duration::from_secs(30), &|| false)
            });
            let mut seen = Value::Null;
            for _ in 0..500 {
                seen = get(&t);
                if seen["status"] == "input_required" {
                    break;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            assert_eq!(seen["inputRequests"]["q1"]["method"], "elicitation/create", "{seen}");
            // An unknown key and a non-object answer are ignored.
            let p = serde_json::json!({ "taskId": task.id, "inputResponses": { "q9": {}, "q1": 3 } });
            assert!(t.answer("2", "tasks/update", Some(&p), modern, None, "{}").is_ok());
            assert_eq!(get(&t)["status"], "input_required");
            let p = serde_json::json!({ "taskId": task.id, "inputResponses": { "q1": { "action": "accept", "content": { "n": "Luca" } } } });
            assert!(t.answer("3", "tasks/update", Some(&p), modern, None, "{}").is_ok());
            let answer = asking.join().unwrap().unwrap();
            assert_eq!(answer["content"]["n"], "Luca");
        });
        assert_eq!(get(&t)["status"], "working");
        // Sampling was not declared; a legacy task asks nothing.
        let e = task.ask(AskKind::Sample, serde_json::json!({}), Duration::from_secs(1), &|| false);
        assert_eq!(e, Err(AskError::Unsupported(AskKind::Sample)));
        let legacy = t.create(None, false, None, asks).unwrap();
        assert!(legacy.ask(AskKind::Elicit, serde_json::json!({}), Duration::from_secs(1), &|| false).is_err());
        // A cancelled task's question ends at once.
        let c = t.create(None, true, None, asks).unwrap();
        std::thread::scope(|sc| {
            let asking = sc.spawn(|| c.ask(AskKind::Elicit, serde_json::json!({}), Duration::from_secs(30), &|| false));
            while c.status() != Status::InputRequired {
                std::thread::yield_now();
            }
            c.cancel_quietly();
            assert_eq!(asking.join().unwrap(), Err(AskError::Cancelled));
        });
    }

    #[test]
    fn a_task_is_answered_only_in_its_own_era() {
        let t = tasks(10);
        let a = t.create(None, true, None, Asks::NONE).unwrap();
        let p = serde_json::json!({ "taskId": a.id });
        let Err(e) = t.answer("1", "tasks/get", Some(&p), Version::V2025_11_25, None, "{}") else { panic!() };
        assert_eq!(e.0, INVALID_PARAMS);
        assert!(e.1.contains("2026-07-28"), "{}", e.1);
        a.finish_result(br#"{"resultType":"complete","content":[{"type":"text","text":"ok"}]}"#, false);
        let Ok(Ok(line)) = t.answer("2", "tasks/get", Some(&p), Version::V2026_07_28, None, r#"{"name":"s"}"#) else {
            panic!()
        };
        let v: Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(v["result"]["resultType"], "complete");
        assert_eq!(v["result"]["result"]["content"][0]["text"], "ok");
        assert_eq!(v["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "s");
    }

    /// Review of issue 46: a client's ttl of 0 must not drop a task whose
    /// call runs (the store would stop counting it), a dropped task's file
    /// is not written again, and what a task keeps is bounded.
    #[test]
    fn v4_2_running_tasks_stay_counted_and_kept_answers_are_bounded() {
        let dir = std::env::temp_dir().join(format!("mcplite-tasks-{}", new_id(None).unwrap()));
        let opts = TaskOptions { max_tasks: 2, dir: Some(dir.clone()), ..TaskOptions::default() };
        let t = Tasks::new(opts, vec![Support::Optional]).unwrap();
        let a = t.create(None, false, Some(0), Asks::NONE).unwrap();
        assert_eq!(a.ttl, MIN_TTL, "a ttl under the floor gets the floor");
        let _b = t.create(None, false, Some(0), Asks::NONE).unwrap();
        assert_eq!(t.create(None, false, Some(0), Asks::NONE).unwrap_err().0, INTERNAL_ERROR, "both still run");
        assert!(t.find(&a.id, None).is_some());
        // Too large an answer fails the task instead of being kept.
        a.finish_result(&vec![b' '; MAX_KEPT + 1], false);
        assert_eq!(a.status(), Status::Failed);
        assert!(a.object(true)["statusMessage"].as_str().unwrap().contains("larger than a task keeps"));
        // Dropped (here: made room for), its file goes and stays gone.
        let c = t.create(None, false, None, Asks::NONE).unwrap();
        let a_file = dir.join(format!("{}.json", a.id));
        assert!(!a_file.exists());
        a.finish_result(b"{}", false);
        assert!(!a_file.exists(), "a dropped task's file is not written again");
        assert!(dir.join(format!("{}.json", c.id)).exists());
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn v3_2_waiting_results_are_bounded_per_owner() {
        let t = tasks(100);
        let task = t.create(Some("k"), false, None, Asks::NONE).unwrap();
        let p = serde_json::json!({ "taskId": task.id });
        let v = Version::V2025_11_25;
        let mut held = Vec::new();
        for _ in 0..MAX_WAITS_PER_OWNER {
            let Ok(Err(w)) = t.answer("1", "tasks/result", Some(&p), v, Some("k"), "{}") else { panic!() };
            held.push(w);
        }
        let Err(e) = t.answer("1", "tasks/result", Some(&p), v, Some("k"), "{}") else { panic!("not refused") };
        assert!(e.1.contains("poll the task with tasks/get"), "{}", e.1);
        held.pop();
        assert!(matches!(t.answer("1", "tasks/result", Some(&p), v, Some("k"), "{}"), Ok(Err(_))), "a place again");
    }

    #[test]
    fn v3_3_tasks_list_lists_its_own_eras_tasks() {
        let t = tasks(10);
        let legacy = t.create(None, false, None, Asks::NONE).unwrap();
        let modern = t.create(None, true, None, Asks::NONE).unwrap();
        let Ok(Ok(line)) = t.answer("1", "tasks/list", None, Version::V2025_11_25, None, "{}") else { panic!() };
        let line = String::from_utf8(line).unwrap();
        assert!(line.contains(&legacy.id) && !line.contains(&modern.id), "{line}");
    }

    #[cfg(unix)]
    #[test]
    fn v4_3_task_files_are_regular_files_of_bounded_size() {
        let dir = std::env::temp_dir().join(format!("mcplite-tasks-{}", new_id(None).unwrap()));
        std::fs::create_dir_all(&dir).unwrap();
        let real = dir.join("real.json");
        std::fs::write(&real, "{}").unwrap();
        let link = dir.join("link.json");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert!(read_task_file(&real).is_some());
        assert!(read_task_file(&link).is_none(), "a link is not followed");
        assert!(read_task_file(Path::new("/dev/zero")).is_none(), "not a regular file");
        let _ = std::fs::remove_dir_all(dir);
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
        let a = t.create(Some("alice"), false, None, Asks::NONE).unwrap();
        let b = t.create(Some("alice"), false, None, Asks::NONE).unwrap();
        assert!(split_id(&a.id).is_some_and(|(p, _)| p.is_none()) && a.id.len() == 32 && a.id != b.id);
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
        let a = t.create(None, false, None, Asks::NONE).unwrap();
        let _b = t.create(None, false, None, Asks::NONE).unwrap();
        assert_eq!(t.create(None, false, None, Asks::NONE).unwrap_err().0, INTERNAL_ERROR);
        a.finish_result(br#"{"content":[]}"#, false);
        let _c = t.create(None, false, None, Asks::NONE).unwrap();
        assert!(t.find(&a.id, None).is_none());
    }

    #[test]
    fn results_carry_their_task_and_cancelled_stays_cancelled() {
        let t = tasks(10);
        let a = t.create(None, false, None, Asks::NONE).unwrap();
        a.finish_result(br#"{"content":[{"type":"text","text":"boom"}],"isError":true}"#, true);
        assert_eq!(a.status(), Status::Failed);
        let line = String::from_utf8(result_line("7", &a)).unwrap();
        assert!(line.contains(&format!("\"{META_RELATED}\":{{\"taskId\":\"{}\"}}", a.id)), "{line}");
        let b = t.create(None, true, None, Asks::NONE).unwrap();
        assert!(b.cancel());
        b.finish_result(br#"{"content":[]}"#, false);
        assert_eq!(b.status(), Status::Cancelled);
        assert!(!b.cancel());
    }

    #[test]
    fn the_directory_keeps_finished_tasks_and_fails_running_ones() {
        let dir = std::env::temp_dir().join(format!("mcplite-tasks-{}", new_id(None).unwrap()));
        let opts = TaskOptions { dir: Some(dir.clone()), ..TaskOptions::default() };
        let t = Tasks::new(opts.clone(), vec![Support::Optional]).unwrap();
        let done = t.create(Some("k"), true, None, Asks::NONE).unwrap();
        done.finish_result(br#"{"content":[{"type":"text","text":"42"}]}"#, false);
        let running = t.create(Some("k"), true, None, Asks::NONE).unwrap();
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

    /// A store of replica `prefix` on `dir`.
    fn replica(prefix: Option<&str>, dir: &Path) -> Tasks {
        let opts = TaskOptions {
            dir: Some(dir.to_owned()),
            prefix: prefix.map(str::to_owned),
            poll_interval: Duration::from_millis(50),
            min_ttl: Duration::from_millis(1),
            ..TaskOptions::default()
        };
        Tasks::new(opts, vec![Support::Optional]).unwrap()
    }

    fn answer_text(t: &Tasks, method: &str, task: &str, v: Version, owner: Option<&str>) -> Result<String, Refusal> {
        let params = serde_json::json!({ "taskId": task });
        match t.answer("1", method, Some(&params), v, owner, "{}")? {
            Ok(line) => Ok(String::from_utf8(line).unwrap()),
            Err(w) => Ok(format!("waiting {}", w.task.id)),
        }
    }

    #[test]
    fn ids_carry_the_replica_name() {
        let dir = std::env::temp_dir().join(format!("mcplite-tasks-{}", new_id(None).unwrap()));
        let t = replica(Some("r8082"), &dir);
        let a = t.create(None, true, None, Asks::NONE).unwrap();
        let (p, hex) = a.id.split_once('.').unwrap();
        assert_eq!((p, hex.len()), ("r8082", 32));
        assert!(hex.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_eq!(split_id(&a.id), Some((Some("r8082"), hex)));
        assert!(dir.join(format!("{}.json", a.id)).is_file());
        assert!(t.find(&a.id, None).is_some());
        // Only ids: no path, no second dot, 32 hex digits after the name.
        for bad in [
            "../x.0123456789abcdef0123456789abcdef",
            "a.b.0123456789abcdef0123456789abc",
            "r8082.0123456789abcdef",
            "r/1.0123456789abcdef0123456789abcdef",
            ".0123456789abcdef0123456789abcdef",
            "0123456789abcdef0123456789abcdeg",
        ] {
            assert_eq!(split_id(bad), None, "{bad}");
        }
        let opts = TaskOptions { prefix: Some("no/slash".into()), ..TaskOptions::default() };
        assert_eq!(Tasks::new(opts, vec![]).unwrap_err().kind(), io::ErrorKind::InvalidInput);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn replicas_share_a_directory_each_keeping_its_own_files() {
        let dir = std::env::temp_dir().join(format!("mcplite-tasks-{}", new_id(None).unwrap()));
        let a = replica(Some("ra"), &dir);
        let a_done = a.create(Some("k"), false, None, Asks::NONE).unwrap();
        a_done.finish_result(br#"{"content":[{"type":"text","text":"42"}]}"#, false);
        let a_running = a.create(Some("k"), true, None, Asks::NONE).unwrap();
        let b = replica(Some("rb"), &dir);
        let b_running = b.create(Some("k"), false, None, Asks::NONE).unwrap();
        let plain = replica(None, &dir);
        let p_done = plain.create(Some("k"), true, None, Asks::NONE).unwrap();
        p_done.finish_result(br#"{"content":[]}"#, false);

        // A restarts: it reads back its own files only (failing the one
        // that ran) and leaves B's alone, running as B wrote it.
        drop(a);
        let a = replica(Some("ra"), &dir);
        assert_eq!(lock(&a.map).len(), 2);
        assert_eq!(a.find(&a_running.id, Some("k")).unwrap().status(), Status::Failed);
        let b_file = std::fs::read_to_string(dir.join(format!("{}.json", b_running.id))).unwrap();
        assert!(b_file.contains(r#""status":"working""#), "{b_file}");
        // A server without a replica name reads back only unprefixed ids.
        let plain2 = replica(None, &dir);
        assert_eq!(lock(&plain2.map).len(), 1);
        drop(plain);

        // B finds A's tasks in their files, read-only, as A last wrote them.
        let got = b.find(&a_done.id, Some("k")).unwrap();
        assert_eq!(got.status(), Status::Completed);
        assert!(got.foreign.is_some() && got.file.is_none());
        assert!(b.find(&a_done.id, Some("other")).is_none());
        assert!(b.find(&a_done.id, None).is_none());
        assert_eq!(b.find(&a_running.id, Some("k")).unwrap().status(), Status::Failed);
        assert_eq!(b.find(&p_done.id, Some("k")).unwrap().status(), Status::Completed);
        assert!(lock(&b.map).len() == 1, "foreign tasks are not kept in the store");
        let v = Version::V2025_11_25;
        let line = answer_text(&b, "tasks/result", &a_done.id, v, Some("k")).unwrap();
        assert!(line.contains(r#""text":"42""#) && line.contains(&a_done.id), "{line}");
        let m = Version::V2026_07_28;
        let line = answer_text(&b, "tasks/get", &a_running.id, m, Some("k")).unwrap();
        assert!(line.contains(r#""status":"failed""#), "{line}");
        // tasks/list lists B's own tasks only.
        let params = serde_json::json!({});
        let Ok(Ok(list)) = b.answer("1", "tasks/list", Some(&params), v, Some("k"), "{}") else { panic!("no list") };
        let list = String::from_utf8(list).unwrap();
        assert!(list.contains(&b_running.id) && !list.contains(&a_done.id), "{list}");
        // An unknown id of another replica says which replica it names.
        let unknown = format!("rc.{}", "0".repeat(32));
        let e = answer_text(&b, "tasks/get", &unknown, m, Some("k")).unwrap_err();
        assert_eq!(e.0, INVALID_PARAMS);
        assert!(e.1.contains("replica rc") && e.1.contains("this is replica rb"), "{}", e.1);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn another_replicas_task_is_waited_for_in_its_file_and_cancelled_only_there() {
        let dir = std::env::temp_dir().join(format!("mcplite-tasks-{}", new_id(None).unwrap()));
        let a = replica(Some("ra"), &dir);
        let b = replica(Some("rb"), &dir);
        let running = a.create(None, false, None, Asks::NONE).unwrap();
        let v = Version::V2025_11_25;
        // Cancelling it on B is refused, naming its replica; it still runs.
        let e = answer_text(&b, "tasks/cancel", &running.id, v, None).unwrap_err();
        assert_eq!(e.0, INVALID_PARAMS);
        assert!(e.1.contains("runs on replica ra"), "{}", e.1);
        let running_modern = a.create(None, true, None, Asks::NONE).unwrap();
        let e = answer_text(&b, "tasks/cancel", &running_modern.id, Version::V2026_07_28, None).unwrap_err();
        assert!(e.1.contains("runs on replica ra"), "{}", e.1);
        assert_eq!(running.status(), Status::Working);
        // tasks/result on B waits until A writes the end.
        let params = serde_json::json!({ "taskId": running.id });
        let Ok(Err(w)) = b.answer("9", "tasks/result", Some(&params), v, None, "{}") else { panic!("not waiting") };
        assert!(!w.ready());
        running.finish_result(br#"{"content":[{"type":"text","text":"done"}]}"#, false);
        let deadline = Instant::now() + Duration::from_secs(10);
        while !w.ready() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        let line = String::from_utf8(w.line()).unwrap();
        assert!(line.starts_with(r#"{"jsonrpc":"2.0","id":9,"result":"#) && line.contains("done"), "{line}");
        // A finished task of another replica: cancelling it is what it is
        // for a finished task of this one.
        let e = answer_text(&b, "tasks/cancel", &running.id, v, None).unwrap_err();
        assert!(e.1.contains("terminal status 'completed'"), "{}", e.1);
        running_modern.finish_result(br#"{"content":[]}"#, false);
        std::thread::sleep(FOREIGN_READ);
        assert!(answer_text(&b, "tasks/cancel", &running_modern.id, Version::V2026_07_28, None).is_ok());
        // A task its replica dropped: a waiting tasks/result is told.
        let other = a.create(None, false, None, Asks::NONE).unwrap();
        let params = serde_json::json!({ "taskId": other.id });
        let Ok(Err(w)) = b.answer("10", "tasks/result", Some(&params), v, None, "{}") else { panic!("not waiting") };
        forget(&other);
        let deadline = Instant::now() + Duration::from_secs(10);
        while !w.ready() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        let line = String::from_utf8(w.line()).unwrap();
        assert!(line.contains("-32602") && line.contains("no longer kept"), "{line}");
        // An expired task of another replica is not found, and its file is
        // left to its replica.
        let short = a.create(None, true, Some(1), Asks::NONE).unwrap();
        short.finish_result(b"{}", false);
        std::thread::sleep(Duration::from_millis(20));
        assert!(b.find(&short.id, None).is_none());
        assert!(dir.join(format!("{}.json", short.id)).is_file());
        let _ = std::fs::remove_dir_all(dir);
    }
}
