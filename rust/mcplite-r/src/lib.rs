//! extendr bridge between R and the mcplite engine. The only crate that
//! touches R objects.
//!
//! Modules: `rapi` (the one layer over R's C API), `error` (the one error
//! type and its conversion for R), `host` (the engine's `Host`: tool calls)
//! with `decode` (JSON -> R arguments) and `result` (return value -> tool
//! result), `encode` (R -> JSON), `stdio` (file descriptors while serving), `http` (serving over HTTP),
//! `progress` (the running server's calls: `mcp_progress()`, cancellation),
//! `trace_context` (the trace context of the running tool call), `memory`
//! (the client's in-memory link to a server in this process), `workers` (worker processes: the
//! pool and the worker mode). This file holds the entry points of the server and of in-process
//! handlers.

#![deny(unsafe_op_in_unsafe_fn)]

use std::mem::ManuallyDrop;
use std::sync::atomic::{AtomicBool, Ordering};

use extendr_api::prelude::*;
use std::time::Duration;

use mcplite_engine::transport::{serve, serve_with_workers, ServeEnd, ServeOptions};
use mcplite_engine::{LegacyState, Server, ServerInfo};

mod asks;
mod changes;
mod client;
mod decode;
pub mod encode;
mod error;
mod finalize;
mod host;
mod live;
mod logging;
mod memory;
mod rapi;
mod result;
mod running_call;
mod serve_http;
mod stdio_fds;
mod tasks;
mod trace_context;
mod workers;

use error::{to_r, Error, Kind};
use host::RHost;

pub(crate) static SERVING: AtomicBool = AtomicBool::new(false);

pub(crate) fn server_info(version: &str, instructions: Robj) -> ServerInfo {
    ServerInfo {
        name: "mcplite".into(),
        version: version.into(),
        instructions: instructions.as_str().map(String::from),
    }
}

/// The host for the spec made by R's `server_spec()`.
pub(crate) fn make_host(spec: &Robj) -> error::Result<RHost> {
    // SAFETY: called from an entry point (R's main thread); `spec` is a
    // `.Call` argument that R keeps alive while serving, or is stored
    // beside the handler's external pointer (R/server.R).
    unsafe { RHost::from_spec(spec.get()) }
}

/// Serve over stdio until EOF. Returns how serving ended ("eof", ...). Only
/// one server runs in a process at a time (a tool cannot start another).
/// `workers` is `NULL`, or the worker options made by R's
/// `worker_options()`: tool calls then run in worker processes.
/// @noRd
#[extendr]
fn engine_serve(spec: Robj, version: &str, instructions: Robj, progress_interval: f64, workers: Robj) -> Robj {
    let progress_interval = Duration::from_secs_f64(progress_interval);
    if SERVING.swap(true, Ordering::SeqCst) {
        return Error::new(Kind::ServerRunning, error::SERVER_RUNNING).into_r();
    }
    let res = (|| -> error::Result<String> {
        let mut host = make_host(&spec)?;
        let mut server = Server::new(server_info(version, instructions), &mut host);
        // RULES V4.1: one client over stdio, so tasks/list is offered.
        if let Some(t) = tasks::from_spec(&spec, true, None)? {
            server = server.with_tasks(t);
        }
        server.set_recorder(trace_context::recorder_from_process_env());
        // Workers start (and must say hello) before stdio is touched.
        let pool = workers::start_pool(&workers, &server)?;
        let (mut guard, input, mut output) = stdio_fds::StdioGuard::install()
            .map_err(|e| Error::new(Kind::Stdio, format!("cannot set up stdio: {e}")))?;
        stdio_fds::keep_large_buffers();
        let reader = stdio_fds::spawn_reader_masked(input);
        let inflight = running_call::new_inflight(progress_interval);
        let _installed = running_call::install(inflight.clone());
        let opts = ServeOptions::default();
        let end = match &pool {
            Some(p) => serve_with_workers(&server, &mut host, p, reader, &mut output, &opts, &inflight),
            None => serve(&server, &mut host, reader, &mut output, &opts, &inflight),
        };
        let failed = pool.as_ref().and_then(|p| p.failure());
        drop(pool);
        server.shutdown_recorder();
        drop(output);
        guard.restore();
        if let (ServeEnd::WorkersFailed, Some(why)) = (end, failed) {
            return Err(Error::new(Kind::Workers, format!("{why}.")));
        }
        Ok(end.as_str().to_string())
    })();
    SERVING.store(false, Ordering::SeqCst);
    to_r(res.map_err(|e| e.context("The server could not run: ")))
}

/// Serve over Streamable HTTP until SIGINT or SIGTERM. `opts` is the named
/// list made by R's `http_options()` (R/server.R), read as
/// [`serve_http::HttpArgs`]. Returns why serving ended ("interrupt" or "sigterm").
/// `workers` is as for `engine_serve`.
/// @noRd
#[extendr]
fn engine_serve_http(
    spec: Robj,
    version: &str,
    instructions: Robj,
    opts: Robj,
    progress_interval: f64,
    workers: Robj,
) -> Robj {
    if SERVING.swap(true, Ordering::SeqCst) {
        return Error::new(Kind::ServerRunning, error::SERVER_RUNNING).into_r();
    }
    let res = (|| -> error::Result<String> {
        let opts = serve_http::HttpArgs::try_from(&opts)
            .map_err(|e| Error::new(Kind::Internal, format!("malformed HTTP options: {e}")))?
            .options()?;
        let mut host = make_host(&spec)?;
        let mut server = Server::new(server_info(version, instructions), &mut host);
        // RULES V4.1: tasks/list only where tokens tell clients apart;
        // V4.4: task ids carry the replica name.
        let list = opts.token.is_some() || opts.tokens_file.is_some();
        if let Some(t) = tasks::from_spec(&spec, list, opts.replica.as_deref())? {
            server = server.with_tasks(t);
        }
        server.set_recorder(trace_context::recorder_from_process_env());
        // Everything that can be checked is, before the workers start (and
        // must say hello) and before the port is bound for good: a bad
        // configuration is said at once (RULES S10).
        if !workers.is_null() {
            serve_http::check(&opts)?;
        }
        let pool = workers::start_pool(&workers, &server)?;
        serve_http::serve(server, &mut host, opts, Duration::from_secs_f64(progress_interval), pool)
    })();
    SERVING.store(false, Ordering::SeqCst);
    to_r(res.map_err(|e| e.context("The server could not run: ")))
}

/// The protocol constants R uses, from the engine's registries
/// (`version.rs`, `codes.rs`), so that R spells none of them
/// (`R/protocol.R`): `server_versions` (discovery order), `modern` (the
/// modern version), `client_versions` (what `mcp_connect(protocol =)` may
/// name), `client_accepts` (every version the client accepts from a server)
/// and `codes` (the error codes, a named integer vector).
/// @noRd
#[extendr]
fn engine_protocol() -> Robj {
    use mcplite_engine::codes;
    use mcplite_engine::version::{self, SUPPORTED};
    let mut code_values = Robj::from(codes::ALL.map(|c| c.code as i32).to_vec());
    if code_values.set_names(codes::ALL.map(|c| c.name)).is_err() {
        return Error::new(Kind::Internal, "cannot name the protocol codes").into_r();
    }
    let modern = SUPPORTED.iter().find(|v| v.is_modern()).map(|v| v.as_str());
    let accepts: Vec<&str> =
        std::iter::once(version::CLIENT_MODERN.as_str()).chain(version::CLIENT_ACCEPTS_LEGACY).collect();
    list!(
        server_versions = SUPPORTED.map(|v| v.as_str()).to_vec(),
        modern = modern,
        client_versions = version::client_requestable().to_vec(),
        client_accepts = accepts,
        codes = code_values
    )
    .into()
}

/// The variables of a resource template's URI template, in order (RULES
/// U1.3), or an argument error saying why the template is refused.
/// @noRd
#[extendr]
fn engine_uri_template_variables(template: &str) -> Robj {
    match mcplite_engine::uri_template::UriTemplate::parse(template) {
        Ok(t) => Robj::from(t.variables().collect::<Vec<_>>()),
        Err(e) => Error::new(Kind::Argument, e.0).into_r(),
    }
}

/// An in-process handler (`mcp_handler()`): a prepared server, its host and
/// its legacy session state.
struct Handler {
    /// `server` and `host` are taken only by `Drop`.
    server: ManuallyDrop<Server>,
    host: ManuallyDrop<RHost>,
    legacy: LegacyState,
}

impl Drop for Handler {
    /// The in-process legacy session ends with its handler object. Runs in
    /// R's finalizer (see `finalize.rs`): a panic is caught.
    fn drop(&mut self) {
        // SAFETY: `server` and `host` are taken once, here, and never used
        // again.
        let (server, host) = unsafe { (ManuallyDrop::take(&mut self.server), ManuallyDrop::take(&mut self.host)) };
        let mut legacy = std::mem::take(&mut self.legacy);
        finalize::free_guarded("an in-process MCP handler", move || {
            server.end_session(&mut legacy);
            drop(server);
            drop(host);
        });
    }
}

/// Create a handler (an external pointer). The spec must be kept alive by
/// R (R/server.R stores it beside the pointer).
/// @noRd
#[extendr]
fn engine_handler_new(spec: Robj, version: &str, instructions: Robj) -> Robj {
    let res = make_host(&spec).map(|mut host| {
        let mut server = Server::new(server_info(version, instructions), &mut host);
        server.set_recorder(trace_context::recorder_from_process_env());
        let (server, host) = (ManuallyDrop::new(server), ManuallyDrop::new(host));
        Robj::from(ExternalPtr::new(Handler { server, host, legacy: LegacyState::default() }))
    });
    to_r(res.map_err(|e| e.context("The handler could not be created: ")))
}

/// The message of a handler whose external pointer is gone.
const HANDLER_GONE: &str = "This handler cannot be used: it was saved and restored (for example with `saveRDS()`) or \
                            copied from another R process. Create a new one with `mcp_handler()`.";

/// Handle one message; returns the response line or NULL.
/// @noRd
#[extendr]
fn engine_handler_handle(handler: Robj, _spec: Robj, line: &str) -> Robj {
    let mut handler = match ExternalPtr::<Handler>::try_from(&handler) {
        Ok(s) => s,
        Err(_) => return Error::new(Kind::Handler, HANDLER_GONE).into_r(),
    };
    let s: &mut Handler = &mut handler;
    // Handing the line back is the write: the span ends here.
    let reply = s.server.handle(&mut s.legacy, line.as_bytes(), &mut *s.host).into_line();
    match reply {
        Some(bytes) => Robj::from(rapi::strings::into_valid_utf8(bytes)),
        None => Robj::from(()),
    }
}

extendr_module! {
    mod mcplite;
    use asks;
    use trace_context;
    use encode;
    use decode;
    use client;
    use live;
    use workers;
    use logging;
    use changes;
    fn engine_serve;
    fn engine_serve_http;
    fn engine_handler_new;
    fn engine_handler_handle;
    fn engine_protocol;
    fn engine_uri_template_variables;
}
