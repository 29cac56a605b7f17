//! The R side of the MCP client (R/client.R): thin entry points over the
//! engine's `client::Connection`. Results come back as R values converted
//! by the same JSON -> R rules tools receive their arguments by (RULES J6);
//! failures come back as a list of class `mcplite_client_failure` that the R
//! wrapper raises as a classed condition. Waiting is done in slices so that
//! R keeps control: a pending interrupt ends a wait at once.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use extendr_api::prelude::*;
use mcplite_engine::client::{ClientError, ConnectError, Connection, HttpSpec, Options, Poll, StdioSpec};
use serde_json::Value;

use crate::rapi::{self, eval::take_interrupt};

/// A connection owned by R (an external pointer; dropping it closes the
/// server, also when R exits).
pub struct ClientHandle {
    conn: Connection,
    /// Calls in progress.
    waiters: HashMap<u64, Waiter>,
}

fn interrupted() -> bool {
    take_interrupt()
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

/// `list(kind, message, code, data)` of class `mcplite_client_failure`.
fn failure(e: &ClientError) -> Robj {
    let (code, data) = match e {
        ClientError::Rpc { code, data, .. } => {
            (Robj::from(*code as f64), data.clone().map(|d| to_r(*d)).unwrap_or(Robj::from(())))
        }
        ClientError::Http { status, .. } => (Robj::from(*status as f64), Robj::from(())),
        ClientError::Tls { url, .. } => (Robj::from(()), Robj::from(url.as_str())),
        _ => (Robj::from(()), Robj::from(())),
    };
    let message = match e {
        ClientError::Rpc { message, .. } => message.clone(),
        other => other.to_string(),
    };
    let seconds = match e {
        ClientError::Timeout(d) => Robj::from(d.as_secs_f64()),
        _ => Robj::from(()),
    };
    let mut l = list!(kind = e.kind(), message = message, code = code, data = data, seconds = seconds);
    let _ = l.set_class(&["mcplite_client_failure"]);
    l.into()
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

fn options(protocol: &Robj, timeout: f64, probe_timeout: f64, client_version: &str) -> Options {
    Options {
        protocol: opt_string(protocol),
        timeout: seconds(timeout),
        probe_timeout: seconds(probe_timeout),
        client_name: "mcplite".into(),
        client_version: client_version.into(),
    }
}

fn connected(res: Result<Connection, ConnectError>) -> Robj {
    match res {
        Ok(conn) => ExternalPtr::new(ClientHandle { conn, waiters: HashMap::new() }).into(),
        Err(e) => {
            let mut f = failure(&e.error);
            let _ = f.set_attrib("stderr", e.stderr);
            f
        }
    }
}

/// Start a server over stdio and negotiate. `env`: NULL (inherit) or a
/// named character vector (the complete environment); `cwd`: NULL or a
/// path; `protocol`: NULL (negotiate) or a version.
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
    let opts = options(&protocol, timeout, probe_timeout, client_version);
    connected(Connection::stdio(&spec, &opts, &mut interrupted))
}

/// Connect to a Streamable HTTP endpoint and negotiate. `values`/`names`:
/// the extra headers (already interpolated); `ca_file`: NULL (the
/// platform's trust store) or a PEM file of certificate authorities.
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
    ca_file: Robj,
) -> Robj {
    let mut spec = HttpSpec::new(url);
    spec.ca_file = opt_string(&ca_file);
    let (keys, vals) = (strings(&names), strings(&values));
    spec.headers = keys.into_iter().zip(vals).collect();
    if max_message.is_finite() && max_message >= 1.0 {
        spec.max_message = max_message as usize;
    }
    let opts = options(&protocol, timeout, probe_timeout, client_version);
    connected(Connection::http(&spec, &opts, &mut interrupted))
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
    let opt = |v: Option<&Value>| v.cloned().map(to_r).unwrap_or(Robj::from(()));
    list!(
        era = era,
        version = c.version(),
        supported_versions = c.supported_versions().to_vec(),
        server_info = opt(c.server_info()),
        capabilities = opt(c.capabilities()),
        instructions = c.instructions().map(Robj::from).unwrap_or(Robj::from(())),
        open = c.is_open(),
        pid = c.pid().map(|p| Robj::from(p as f64)).unwrap_or(Robj::from(()))
    )
    .into()
}

/// Every tool the server lists (pages followed), or a failure.
/// @noRd
#[extendr]
fn client_list_tools(mut handle: ExternalPtr<ClientHandle>, timeout: f64) -> Robj {
    match handle.conn.list_tools(seconds(timeout), &mut interrupted) {
        Ok(tools) => {
            let mut out = to_r(Value::Array(tools));
            let rejected = handle.conn.take_rejected();
            if !rejected.is_empty() {
                let text: Vec<String> = rejected.iter().map(|(n, why)| format!("`{n}`: {why}")).collect();
                let _ = out.set_attrib("rejected", text);
            }
            out
        }
        Err(e) => failure(&e),
    }
}

/// The clock of a call in progress: `timeout` of silence is allowed, each
/// progress notification restarts it, never beyond `hard`.
struct Waiter {
    timeout: Duration,
    max: Duration,
    hard: Instant,
    deadline: Instant,
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
) -> Robj {
    let n = mcplite_engine::client::wire::json_string(name);
    let members = [("name", n.as_str()), ("arguments", arguments)];
    let timeout = seconds(timeout);
    let max = seconds(max_time).max(timeout);
    match handle.conn.start("tools/call", Some(name), &members, progress, timeout, &mut interrupted) {
        Ok(id) => {
            let now = Instant::now();
            let hard = now.checked_add(max).unwrap_or(now + Duration::from_secs(1 << 30));
            let deadline = now.checked_add(timeout).unwrap_or(hard).min(hard);
            handle.waiters.insert(id, Waiter { timeout, max, hard, deadline });
            wait_for(&mut handle, id)
        }
        Err(e) => failure(&e),
    }
}

/// Keep waiting for call `id` (after a progress notification):
/// `list(status = "done", id, value = <result>)`, `list(status =
/// "progress", id, value = <params>)` (the clock restarts), `list(status =
/// "interrupted", id)` (the user pressed Ctrl-C: the request was cancelled
/// and the interrupt consumed; the caller signals it again), or a failure
/// (a timeout cancels the request).
/// @noRd
#[extendr]
fn client_wait(mut handle: ExternalPtr<ClientHandle>, id: f64) -> Robj {
    wait_for(&mut handle, id as u64)
}

fn wait_for(handle: &mut ClientHandle, id: u64) -> Robj {
    let Some(w) = handle.waiters.get(&id) else {
        return failure(&ClientError::Protocol(format!("request {id} is not in progress")));
    };
    let (timeout, max, hard) = (w.timeout, w.max, w.hard);
    let mut deadline = w.deadline;
    let idr = Robj::from(id as f64);
    loop {
        let now = Instant::now();
        if now >= deadline {
            handle.waiters.remove(&id);
            handle.conn.cancel(id, "timed out");
            return failure(&ClientError::Timeout(if deadline >= hard { max } else { timeout }));
        }
        match handle.conn.poll(id, deadline.saturating_duration_since(now).min(Duration::from_millis(20))) {
            Poll::Done(r) => {
                handle.waiters.remove(&id);
                return match r {
                    Ok(v) => list!(status = "done", id = idr, value = to_r(v)).into(),
                    Err(e) => failure(&e),
                };
            }
            Poll::Progress(p) => {
                deadline = Instant::now().checked_add(timeout).unwrap_or(hard).min(hard);
                if let Some(w) = handle.waiters.get_mut(&id) {
                    w.deadline = deadline;
                }
                return list!(status = "progress", id = idr, value = to_r(p)).into();
            }
            Poll::Pending => {
                if interrupted() {
                    handle.waiters.remove(&id);
                    handle.conn.cancel(id, "interrupted by the user");
                    return list!(status = "interrupted", id = idr).into();
                }
            }
        }
    }
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

/// The kept tail of the server's stderr.
/// @noRd
#[extendr]
fn client_stderr(handle: ExternalPtr<ClientHandle>) -> String {
    handle.conn.stderr_text()
}

/// Is the connection usable?
/// @noRd
#[extendr]
fn client_is_open(handle: ExternalPtr<ClientHandle>) -> bool {
    handle.conn.is_open()
}

extendr_module! {
    mod client;
    fn client_connect_stdio;
    fn client_connect_http;
    fn client_info;
    fn client_list_tools;
    fn client_call;
    fn client_wait;
    fn client_cancel;
    fn client_close;
    fn client_stderr;
    fn client_is_open;
}
