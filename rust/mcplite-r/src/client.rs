//! The R side of the MCP client (R/client*.R, RULES section 13): thin entry
//! points over the engine's `client::Connection`, called through the
//! wrappers of R/bridge-wrappers.R like every other entry point. Results
//! come back as R values converted by the same JSON -> R rules tools
//! receive their arguments by (RULES J6); a failure comes back as the one
//! error marker of `error.rs`, with the message the engine's
//! `client::report` writes and the condition's fields (RULES K7), and
//! `bridge_value()` raises it. Waiting is done in slices so that R keeps
//! control: a pending interrupt ends a wait at once.

use std::collections::HashMap;
use std::mem::ManuallyDrop;
use std::time::{Duration, Instant};

use extendr_api::prelude::*;
use mcplite_engine::client::oauth::OAuthConfig;
use mcplite_engine::client::report::{report, split_lines, Context, Report, What};
use mcplite_engine::client::{ClientError, ConnectError, Connection, HttpSpec, Options, Poll, StdioSpec, TaskAsk};
use serde_json::Value;

use crate::error::{marker, Error, Kind};
use crate::finalize::{drop_guarded, free_guarded};
use crate::rapi::{self, eval::take_interrupt};
use mcplite_engine::signals::SigintWatch;

/// A connection owned by R (an external pointer; dropping it closes the
/// server, also when R exits).
pub struct ClientHandle {
    /// Taken only by `Drop`.
    conn: ManuallyDrop<Connection>,
    /// Closed on a thread of its own when R drops it (stdio, HTTP: closing
    /// may wait for the server); the in-memory connection holds R objects
    /// and is closed where it is dropped, on R's main thread.
    close_in_background: bool,
    /// The connection's name, for messages.
    name: String,
    /// Calls in progress.
    waiters: HashMap<u64, Waiter>,
}

impl ClientHandle {
    fn new(conn: Connection, name: &str, close_in_background: bool) -> ClientHandle {
        ClientHandle {
            conn: ManuallyDrop::new(conn),
            close_in_background,
            name: name.to_string(),
            waiters: HashMap::new(),
        }
    }
}

impl Drop for ClientHandle {
    /// Runs in R's finalizer (see `finalize.rs`): never panics, and never
    /// waits for a server to exit.
    fn drop(&mut self) {
        // SAFETY: `conn` is taken once, here, and never used again.
        let conn = unsafe { ManuallyDrop::take(&mut self.conn) };
        if self.close_in_background {
            free_guarded("an MCP client connection", move || conn.close_in_background());
        } else {
            drop_guarded("an MCP client connection", conn);
        }
    }
}

/// Sign-in pages waiting to be shown to the user (RULES K10.5): the
/// engine's HTTP threads put the server's name and the page's URL here;
/// R's thread, which calls [`interrupted`] every few milliseconds while it
/// waits for a server, hands each to R's `oauth_open()` (R/client-oauth.R),
/// which opens the browser or calls the user's user agent.
static SIGN_IN_PAGES: std::sync::Mutex<Vec<(String, String)>> = std::sync::Mutex::new(Vec::new());

fn open_url_fn(name: &str) -> mcplite_engine::client::OpenUrlFn {
    let name = name.to_string();
    mcplite_engine::client::OpenUrlFn(std::sync::Arc::new(move |url: &str| {
        SIGN_IN_PAGES.lock().unwrap_or_else(|e| e.into_inner()).push((name.clone(), url.to_string()));
    }))
}

/// Show the sign-in pages waiting, on R's thread. A failing user agent is
/// the sign-in's failure to finish in time, not an error here.
fn show_sign_in_pages() {
    let pages = std::mem::take(&mut *SIGN_IN_PAGES.lock().unwrap_or_else(|e| e.into_inner()));
    for (name, url) in pages {
        // SAFETY: R's main thread, inside a `.Call` entry point; every
        // value is protected in `prot` until the call returned.
        unsafe {
            let mut prot = rapi::Protect::new();
            let u = prot.add(rapi::mk_string(url.as_bytes()));
            let n = prot.add(rapi::mk_string(name.as_bytes()));
            let _ = rapi::eval::r_call(&mut prot, "mcplite:::oauth_open", &[(None, u), (None, n)]);
        }
    }
}

fn interrupted() -> bool {
    show_sign_in_pages();
    take_interrupt()
}

/// The interrupt check of one wait for a server, with SIGINT watched while
/// the wait lasts (RULES S7): an interrupt R's own check loses (once tcltk
/// is loaded) still ends the wait.
fn watching() -> impl FnMut() -> bool {
    let watch = SigintWatch::arm();
    move || {
        let _armed = &watch;
        interrupted()
    }
}

/// JSON -> R. Strings holding U+0000 cannot exist in R: such characters are
/// replaced by U+FFFD first.
fn to_r(mut v: Value) -> Robj {
    if mcplite_engine::message::contains_nul(&v) {
        replace_nul(&mut v);
    }
    // SAFETY: called from `.Call` entry points on R's main thread; the
    // result is protected by the Robj wrapper at once.
    unsafe { Robj::from_sexp(crate::decode::value(&v)) }
}

fn replace_nul(v: &mut Value) {
    match v {
        Value::String(s) if s.contains('\0') => *s = s.replace('\0', "\u{FFFD}"),
        Value::Array(a) => a.iter_mut().for_each(replace_nul),
        Value::Object(m) => {
            let old = std::mem::take(m);
            for (k, mut e) in old {
                replace_nul(&mut e);
                m.insert(k.replace('\0', "\u{FFFD}"), e);
            }
        }
        _ => {}
    }
}

fn null() -> Robj {
    Robj::from(())
}

/// The error marker of a report: its kind, message and fields (RULES K7.1).
fn raise(r: Report, server: &str) -> Robj {
    let stderr = || Robj::from(r.stderr.clone());
    let int = |v: Option<i64>| v.map(|v| Robj::from(v as i32)).unwrap_or_else(null);
    let (kind, fields): (Kind, Vec<(&str, Robj)>) = match r.kind {
        "interrupted" => (Kind::Interrupted, vec![]),
        "rpc" => (
            Kind::Rpc,
            vec![
                ("code", int(r.code)),
                ("error_message", Robj::from(r.error_message.clone().unwrap_or_default())),
                ("data", r.data.clone().map(to_r).unwrap_or_else(null)),
            ],
        ),
        "timeout" => (Kind::Timeout, vec![("seconds", Robj::from(r.seconds.unwrap_or(0.0))), ("stderr", stderr())]),
        "tls" => (
            Kind::Tls,
            vec![
                ("reason", Robj::from(r.reason)),
                ("url", Robj::from(r.url.clone().unwrap_or_default())),
                ("stderr", stderr()),
            ],
        ),
        _ => {
            (Kind::Connection, vec![("reason", Robj::from(r.reason)), ("status", int(r.status)), ("stderr", stderr())])
        }
    };
    let mut names: Vec<&str> = fields.iter().map(|(k, _)| *k).collect();
    let mut values: Vec<Robj> = fields.into_iter().map(|(_, v)| v).collect();
    if kind != Kind::Interrupted {
        names.push("server");
        values.push(Robj::from(server));
    }
    let fields = List::from_names_and_values(names, values).map(Robj::from).unwrap_or_else(|_| null());
    marker(kind, &r.message, fields)
}

/// The marker of a failure on an open connection.
fn failure(h: &ClientHandle, e: &ClientError, what: What) -> Robj {
    let stderr = h.conn.stderr_text();
    let cx = Context {
        server: &h.name,
        what,
        stderr: &stderr,
        exit_status: h.conn.exit_status(),
        garbage: h.conn.garbage(),
    };
    raise(report(e, &cx), &h.name)
}

/// The elements of a character vector as UTF-8 (empty for other types).
fn strings(x: &Robj) -> Vec<String> {
    // SAFETY: main thread; `x` is protected by its Robj.
    unsafe {
        let s = x.get();
        if rapi::ty(s) != rapi::SEXPTYPE::STRSXP {
            return Vec::new();
        }
        (0..rapi::xlen(s))
            .map(|i| rapi::strings::text(rapi::STRING_ELT(s, i as rapi::R_xlen_t)).unwrap_or_default())
            .collect()
    }
}

fn names_of(x: &Robj) -> Vec<String> {
    // SAFETY: as above.
    unsafe { rapi::names_of(x.get()) }
}

fn opt_string(x: &Robj) -> Option<String> {
    x.as_str().map(String::from)
}

fn seconds(x: f64) -> Duration {
    if x.is_finite() && x > 0.0 {
        Duration::from_secs_f64(x.min(1e9))
    } else {
        Duration::from_secs(1_000_000_000)
    }
}

/// The connection's options; `capabilities` as JSON text (RULES K12.1),
/// `log_level` the level of the server's log messages to relay (RULES K13;
/// NULL: none; R checked the name).
fn client_options(
    protocol: &Robj,
    timeout: f64,
    probe_timeout: f64,
    client_version: &str,
    capabilities: &str,
    log_level: &Robj,
) -> Options {
    Options {
        log_level: log_level.as_str().and_then(mcplite_engine::client::LogLevel::parse),
        protocol: opt_string(protocol),
        timeout: seconds(timeout),
        probe_timeout: seconds(probe_timeout),
        client_name: "mcplite".into(),
        client_version: client_version.into(),
        capabilities: capabilities.into(),
    }
}

fn connected(res: Result<Connection, ConnectError>, name: &str, close_in_background: bool) -> Robj {
    match res {
        Ok(conn) => ExternalPtr::new(ClientHandle::new(conn, name, close_in_background)).into(),
        Err(e) => {
            let cx = Context {
                server: name,
                what: What::Connect,
                stderr: &e.stderr,
                exit_status: e.exit_status,
                garbage: (e.garbage.0, e.garbage.1.as_deref()),
            };
            raise(report(&e.error, &cx), name)
        }
    }
}

/// Start a server over stdio and negotiate. `env`: NULL (inherit) or a
/// named character vector (the complete environment); `cwd`: NULL or a
/// path; `protocol`: NULL (negotiate) or a version; `name`: the
/// connection's name.
/// @noRd
#[extendr]
#[allow(clippy::too_many_arguments)]
fn client_connect_stdio(
    program: &str,
    args: Robj,
    env: Robj,
    cwd: Robj,
    protocol: Robj,
    timeout: f64,
    probe_timeout: f64,
    max_line: f64,
    client_version: &str,
    capabilities: &str,
    log_level: Robj,
    name: &str,
) -> Robj {
    let mut spec = StdioSpec::new(program, strings(&args));
    if !env.is_null() {
        let (keys, values) = (names_of(&env), strings(&env));
        spec.env = Some(keys.into_iter().zip(values).collect());
    }
    spec.cwd = opt_string(&cwd);
    if max_line.is_finite() && max_line >= 1.0 {
        spec.max_line = max_line as usize;
    }
    let opts = client_options(&protocol, timeout, probe_timeout, client_version, capabilities, &log_level);
    connected(Connection::stdio(&spec, &opts, &mut watching()), name, true)
}

/// Connect in memory to a server of this process made from `spec` (R's
/// `server_spec()`, kept alive by the connection) and negotiate (RULES
/// K9); `progress_interval`: the heartbeat interval in seconds (`Inf`:
/// none).
/// @noRd
#[extendr]
#[allow(clippy::too_many_arguments)]
fn client_connect_memory(
    spec: Robj,
    server_version: &str,
    instructions: Robj,
    protocol: Robj,
    timeout: f64,
    progress_interval: f64,
    client_version: &str,
    name: &str,
) -> Robj {
    let link = crate::make_host(&spec).map(|mut host| {
        let mut server = mcplite_engine::Server::new(crate::server_info(server_version, instructions), &mut host);
        server.set_recorder(crate::trace_context::recorder_from_process_env());
        // RULES K9.2: no heartbeats unless an interval was set.
        let interval = (progress_interval.is_finite() && progress_interval > 0.0)
            .then(|| Duration::from_secs_f64(progress_interval));
        crate::memory::MemoryLink::new(spec, server, host, interval)
    });
    let link = match link {
        Ok(l) => l,
        Err(e) => return e.context("The in-memory server could not be created: ").into_r(),
    };
    let opts = client_options(&protocol, timeout, timeout, client_version, "{}", &Robj::from(()));
    connected(Connection::establish(Box::new(link), &opts, &mut watching()), name, false)
}

/// Connect to a Streamable HTTP endpoint and negotiate. `values`/`names`:
/// the extra headers (already interpolated; checked here, RULES K4.1);
/// `ca_file`: NULL (the platform's trust store) or a PEM file of
/// certificate authorities; `oauth`: NULL (never sign in) or the sign-in
/// settings as JSON (RULES K10.1).
/// @noRd
#[extendr]
#[allow(clippy::too_many_arguments)]
fn client_connect_http(
    url: &str,
    values: Robj,
    names: Robj,
    protocol: Robj,
    timeout: f64,
    probe_timeout: f64,
    max_message: f64,
    client_version: &str,
    capabilities: &str,
    log_level: Robj,
    ca_file: Robj,
    oauth: Robj,
    name: &str,
) -> Robj {
    let mut spec = HttpSpec::new(url);
    spec.ca_file = opt_string(&ca_file);
    if let Some(json) = opt_string(&oauth) {
        match OAuthConfig::from_json(&json) {
            Ok(cfg) => spec.oauth = Some((cfg, open_url_fn(name))),
            Err(why) => return Error::new(Kind::Argument, why).into_r(),
        }
    }
    let (keys, vals) = (strings(&names), strings(&values));
    spec.headers = keys.into_iter().zip(vals).collect();
    if let Err(why) = mcplite_engine::client::http_link::check_headers(&spec.headers) {
        return Error::new(Kind::Argument, why).into_r();
    }
    if max_message.is_finite() && max_message >= 1.0 {
        spec.max_message = max_message as usize;
    }
    let opts = client_options(&protocol, timeout, probe_timeout, client_version, capabilities, &log_level);
    connected(Connection::http(&spec, &opts, &mut watching()), name, true)
}

/// Facts about the connection: era, version, server identity, ...
/// @noRd
#[extendr]
fn client_info(handle: ExternalPtr<ClientHandle>) -> Robj {
    let c = &handle.conn;
    let era = match c.era() {
        mcplite_engine::client::Era::Modern => "modern",
        mcplite_engine::client::Era::Legacy => "legacy",
    };
    let opt = |v: Option<&Value>| v.cloned().map(to_r).unwrap_or_else(null);
    list!(
        era = era,
        version = c.version(),
        supported_versions = c.supported_versions().to_vec(),
        server_info = opt(c.server_info()),
        capabilities = opt(c.capabilities()),
        instructions = c.instructions().map(Robj::from).unwrap_or_else(null),
        open = c.is_open(),
        pid = c.pid().map(|p| Robj::from(p as f64)).unwrap_or_else(null)
    )
    .into()
}

/// `NULL` when the connection is usable, otherwise the marker of the
/// connection error that says it is closed.
/// @noRd
#[extendr]
fn client_check_open(handle: ExternalPtr<ClientHandle>) -> Robj {
    if handle.conn.is_open() {
        return null();
    }
    let r = Report {
        kind: "connection",
        message: format!(
            "The connection to MCP server `{}` is closed; connect again with `mcp_connect()`.",
            handle.name
        ),
        reason: "closed",
        code: None,
        error_message: None,
        data: None,
        status: handle.conn.exit_status().map(i64::from),
        seconds: None,
        url: None,
        stderr: Vec::new(),
    };
    raise(r, &handle.name)
}

/// Every tool the server lists (pages followed), or a failure. Tools left
/// out for invalid `x-mcp-header` annotations are named in the attribute
/// `rejected`.
/// @noRd
#[extendr]
fn client_list_tools(mut handle: ExternalPtr<ClientHandle>, timeout: f64) -> Robj {
    match handle.conn.list_tools(seconds(timeout), &mut watching()) {
        Ok(tools) => {
            let mut out = to_r(Value::Array(tools));
            let rejected = handle.conn.take_rejected();
            if !rejected.is_empty() {
                let text: Vec<String> = rejected.iter().map(|(n, why)| format!("`{n}`: {why}")).collect();
                let _ = out.set_attrib("rejected", text);
            }
            out
        }
        Err(e) => failure(&handle, &e, What::Method("tools/list")),
    }
}

/// Every item of a paginated listing (`resources/list`, `prompts/list`,
/// ...): the arrays under `key` of every page (RULES K11.1).
/// @noRd
#[extendr]
fn client_list(mut handle: ExternalPtr<ClientHandle>, method: &str, key: &str, timeout: f64) -> Robj {
    match handle.conn.list_all(method, key, seconds(timeout), &mut watching()) {
        Ok(items) => to_r(Value::Array(items)),
        Err(e) => failure(&handle, &e, What::Method(method)),
    }
}

/// Send `resources/read` for `uri` (RULES K11.2) and wait for it: see
/// [`client_wait`] for what comes back (a 2026-07-28 server may ask for
/// input first, RULES K12.3).
/// @noRd
#[extendr]
fn client_read_resource(mut handle: ExternalPtr<ClientHandle>, uri: &str, timeout: f64) -> Robj {
    let timeout = seconds(timeout);
    let started = handle.conn.start_read_resource(uri, timeout, &mut watching());
    waiting(&mut handle, started, "resources/read", uri, timeout, timeout)
}

/// Send `prompts/get` for `name` with `arguments` (JSON text of an object of
/// strings, or `NULL`) (RULES K11.3) and wait for it, as
/// [`client_read_resource`].
/// @noRd
#[extendr]
fn client_get_prompt(
    mut handle: ExternalPtr<ClientHandle>,
    name: &str,
    arguments: Nullable<String>,
    timeout: f64,
) -> Robj {
    let args = match &arguments {
        Nullable::NotNull(a) => Some(a.as_str()),
        Nullable::Null => None,
    };
    let timeout = seconds(timeout);
    let started = handle.conn.start_get_prompt(name, args, timeout, &mut watching());
    waiting(&mut handle, started, "prompts/get", name, timeout, timeout)
}

/// The input schema of tool `name` (RULES K5.2), listing the tools first if
/// this connection never did; `NULL` when unknown.
/// @noRd
#[extendr]
fn client_input_schema(mut handle: ExternalPtr<ClientHandle>, name: &str, timeout: f64) -> Robj {
    match handle.conn.input_schema(name, seconds(timeout), &mut watching()) {
        Ok(Some(schema)) => to_r(schema),
        Ok(None) => null(),
        Err(e) => failure(&handle, &e, What::Method("tools/list")),
    }
}

/// The clock of a call in progress: `timeout` of silence is allowed, each
/// progress notification restarts it, never beyond `hard`.
struct Waiter {
    /// `tools/call`, `prompts/get` or `resources/read`.
    method: &'static str,
    /// The tool, the prompt or the URI.
    tool: String,
    timeout: Duration,
    max: Duration,
    hard: Instant,
    deadline: Instant,
    /// The connection's time at sign-in pages when `deadline` was set: the
    /// time spent there since moves both clocks on (RULES K10.5).
    signing: Duration,
}

/// Send `tools/call` (the arguments object given as JSON text) and wait for
/// it: see [`client_wait`] for what comes back; the request id is in `id`.
/// @noRd
#[extendr]
fn client_call(
    mut handle: ExternalPtr<ClientHandle>,
    name: &str,
    arguments: &str,
    progress: bool,
    timeout: f64,
    max_time: f64,
    task: &str,
) -> Robj {
    let timeout = seconds(timeout);
    let max = seconds(max_time).max(timeout);
    // RULES K14.1: "never", "auto" or "always" (R checked it).
    let ask = TaskAsk::parse(task).unwrap_or(TaskAsk::Auto);
    let started = handle.conn.start_call_as(name, arguments, progress, timeout, ask, &mut watching());
    waiting(&mut handle, started, "tools/call", name, timeout, max)
}

/// A request about the server's task `task_id` (`tasks/get`,
/// `tasks/result`, `tasks/cancel`, `tasks/update` with `responses`, the
/// `inputResponses` JSON text, else `NULL`; RULES K14.3), waited for: its
/// result, or an error marker.
/// @noRd
#[extendr]
fn client_task(
    mut handle: ExternalPtr<ClientHandle>,
    method: &str,
    task_id: &str,
    responses: Nullable<String>,
    timeout: f64,
) -> Robj {
    let responses = match &responses {
        Nullable::NotNull(r) => Some(r.as_str()),
        Nullable::Null => None,
    };
    match handle.conn.task_request(method, task_id, responses, seconds(timeout), &mut watching()) {
        Ok(v) => to_r(v),
        Err(e) => failure(&handle, &e, What::Method(method)),
    }
}

/// Wait for a request just `started` (`method` about `name`), with its
/// clock: `timeout` of silence, never beyond `max`.
fn waiting(
    handle: &mut ClientHandle,
    started: Result<u64, ClientError>,
    method: &'static str,
    name: &str,
    timeout: Duration,
    max: Duration,
) -> Robj {
    match started {
        Ok(id) => {
            let now = Instant::now();
            let hard = now.checked_add(max).unwrap_or(now + Duration::from_secs(1 << 30));
            let deadline = now.checked_add(timeout).unwrap_or(hard).min(hard);
            let signing = handle.conn.sign_in_time();
            let tool = name.to_string();
            handle.waiters.insert(id, Waiter { method, tool, timeout, max, hard, deadline, signing });
            wait_for(handle, id)
        }
        Err(e) => failure(handle, &e, what(method, name)),
    }
}

/// What a failed request was, for its message.
fn what<'a>(method: &'static str, name: &'a str) -> What<'a> {
    if method == "tools/call" {
        What::Tool(name)
    } else {
        What::Method(method)
    }
}

/// Keep waiting for call `id` (after a progress notification):
/// `list(status = "done", id, value = <result>)`, `list(status =
/// "progress", id, value = <params>)` (the clock restarts), or an error
/// marker: a failure (a timeout cancels the request), or `interrupted`
/// (the user pressed Ctrl-C: the request was cancelled and the interrupt
/// consumed; `bridge_value()` signals it again).
/// @noRd
#[extendr]
fn client_wait(mut handle: ExternalPtr<ClientHandle>, id: f64) -> Robj {
    wait_for(&mut handle, id as u64)
}

fn wait_for(handle: &mut ClientHandle, id: u64) -> Robj {
    let Some(w) = handle.waiters.get(&id) else {
        let e = ClientError::Protocol(format!("request {id} is not in progress"));
        return failure(handle, &e, What::Method("tools/call"));
    };
    let (timeout, max, tool, signing, method) = (w.timeout, w.max, w.tool.clone(), w.signing, w.method);
    let idr = Robj::from(id as f64);
    let mut check = watching();
    loop {
        let Some(w) = handle.waiters.get(&id) else {
            let e = ClientError::Protocol(format!("request {id} is not in progress"));
            return failure(handle, &e, What::Method("tools/call"));
        };
        let shift = handle.conn.sign_in_time().saturating_sub(signing);
        let (deadline, hard) = (w.deadline + shift, w.hard + shift);
        let now = Instant::now();
        // Past the deadline, what has already arrived still counts (an
        // answer that came while R's thread was busy); only then it is late.
        let late = now >= deadline;
        let slice = deadline.saturating_duration_since(now).min(Duration::from_millis(20));
        match handle.conn.poll(id, slice, &mut check) {
            Poll::Pending if late => {
                handle.waiters.remove(&id);
                handle.conn.cancel(id, "timed out");
                let e = ClientError::Timeout(if deadline >= hard { max } else { timeout });
                return failure(handle, &e, what(method, &tool));
            }
            Poll::Done(Err(ClientError::Interrupted)) => return abandon(handle, id, what(method, &tool)),
            Poll::Done(r) => {
                handle.waiters.remove(&id);
                return match r {
                    Ok(v) => list!(status = "done", id = idr, value = to_r(v)).into(),
                    Err(e) => failure(handle, &e, what(method, &tool)),
                };
            }
            Poll::Progress(p) => {
                let deadline = Instant::now().checked_add(timeout).unwrap_or(hard).min(hard);
                let signing = handle.conn.sign_in_time();
                if let Some(w) = handle.waiters.get_mut(&id) {
                    w.deadline = deadline;
                    w.hard = hard;
                    w.signing = signing;
                }
                return list!(status = "progress", id = idr, value = to_r(p)).into();
            }
            // A question for the caller (RULES K12): the clock stops until
            // it is answered (client_answer, client_retry restart it).
            Poll::Ask(ask) => {
                let reply = serde_json::to_string(&ask.id).unwrap_or_else(|_| "null".into());
                let value = list!(method = ask.method, params = to_r(ask.params), reply = reply);
                return list!(status = "ask", id = idr, value = value).into();
            }
            Poll::Input(requests) => {
                return list!(status = "input", id = idr, value = to_r(Value::Object(requests))).into();
            }
            // A log message of the server (RULES K13.2): R relays it and
            // keeps waiting; it does not restart the clock.
            Poll::Log(params) => return list!(status = "log", id = idr, value = to_r(params)).into(),
            Poll::Pending => {
                if check() {
                    return abandon(handle, id, what(method, &tool));
                }
            }
        }
    }
}

/// Answer the server's question `reply` (its id as JSON text) asked during
/// call `id` (legacy era, RULES K12.2): `result` is the result object as
/// JSON text, or NULL with `code` and `message` for an error; then keep
/// waiting for the call, its clock restarted.
/// @noRd
#[extendr]
fn client_answer(
    mut handle: ExternalPtr<ClientHandle>,
    id: f64,
    reply: &str,
    result: Robj,
    code: f64,
    message: &str,
) -> Robj {
    let id = id as u64;
    let ask: Value = serde_json::from_str(reply).unwrap_or(Value::Null);
    match opt_string(&result) {
        Some(r) => handle.conn.answer(&ask, Ok(&r)),
        None => handle.conn.answer(&ask, Err((code as i64, message))),
    }
    restart_clock(&mut handle, id);
    wait_for(&mut handle, id)
}

/// Send call `id` again with the answers to its `inputRequests`
/// (`responses`: an object by key, as JSON text; 2026-07-28, RULES K12.3);
/// then keep waiting for it, its clock restarted.
/// @noRd
#[extendr]
fn client_retry(mut handle: ExternalPtr<ClientHandle>, id: f64, responses: &str) -> Robj {
    let id = id as u64;
    if let Err(e) = handle.conn.retry(id, responses, &mut watching()) {
        let (method, tool) = handle.waiters.remove(&id).map_or(("tools/call", String::new()), |w| (w.method, w.tool));
        handle.conn.cancel(id, "the request could not be sent again");
        return failure(&handle, &e, what(method, &tool));
    }
    restart_clock(&mut handle, id);
    wait_for(&mut handle, id)
}

/// The time a question took to answer does not count against the call.
fn restart_clock(handle: &mut ClientHandle, id: u64) {
    let signing = handle.conn.sign_in_time();
    if let Some(w) = handle.waiters.get_mut(&id) {
        w.deadline = Instant::now().checked_add(w.timeout).unwrap_or(w.hard).min(w.hard);
        w.signing = signing;
    }
}

/// The user interrupted a wait: cancel the request, report the interrupt.
fn abandon(handle: &mut ClientHandle, id: u64, what: What<'_>) -> Robj {
    handle.waiters.remove(&id);
    handle.conn.cancel(id, "interrupted by the user");
    failure(handle, &ClientError::Interrupted, what)
}

/// Abandon request `id` (sends `notifications/cancelled` on stdio).
/// @noRd
#[extendr]
fn client_cancel(mut handle: ExternalPtr<ClientHandle>, id: f64, reason: &str) {
    handle.waiters.remove(&(id as u64));
    handle.conn.cancel(id as u64, reason);
}

/// Close the connection (idempotent); returns how the server ended.
/// @noRd
#[extendr]
fn client_close(mut handle: ExternalPtr<ClientHandle>) -> String {
    handle.conn.close()
}

/// The kept tail of the server's stderr, one element per line.
/// @noRd
#[extendr]
fn client_stderr(handle: ExternalPtr<ClientHandle>) -> Vec<String> {
    split_lines(&handle.conn.stderr_text())
}

/// Does the tool call the running server is serving have a progress token
/// (RULES K8.2)? `FALSE` outside a server.
/// @noRd
#[extendr]
fn client_progress_listening() -> bool {
    crate::running_call::listening()
}

extendr_module! {
    mod client;
    fn client_progress_listening;
    fn client_connect_stdio;
    fn client_connect_http;
    fn client_connect_memory;
    fn client_info;
    fn client_check_open;
    fn client_list_tools;
    fn client_list;
    fn client_read_resource;
    fn client_get_prompt;
    fn client_input_schema;
    fn client_call;
    fn client_task;
    fn client_answer;
    fn client_retry;
    fn client_wait;
    fn client_cancel;
    fn client_close;
    fn client_stderr;
}
