//! extendr bridge between R and the mcplite engine. The only crate that
//! touches R objects.

use std::sync::atomic::{AtomicBool, Ordering};

use extendr_api::prelude::*;
use mcplite_engine::transport::{serve, ServeOptions};
use mcplite_engine::{LegacyState, Server, ServerInfo};

pub mod encode;
mod payload;
mod rffi;
mod rhost;
mod stdio;
mod trace_env;

use rhost::RHost;

static SERVING: AtomicBool = AtomicBool::new(false);

fn server_info(version: &str, instructions: Robj) -> ServerInfo {
    ServerInfo {
        name: "mcplite".into(),
        version: version.into(),
        instructions: instructions.as_str().map(String::from),
    }
}

unsafe fn make_host(spec: &Robj) -> std::result::Result<RHost, String> {
    RHost::from_spec(spec.get())
}

/// Is a server already running in this process?
/// @noRd
#[extendr]
fn engine_is_serving() -> bool {
    SERVING.load(Ordering::SeqCst)
}

/// Serve over stdio until EOF. Returns how serving ended, or a string
/// starting with "error: " (the R wrapper raises it as a condition).
/// @noRd
#[extendr]
fn engine_serve(spec: Robj, version: &str, instructions: Robj) -> String {
    if SERVING.swap(true, Ordering::SeqCst) {
        return "error: a server is already running in this process".into();
    }
    let res = (|| -> std::result::Result<String, String> {
        let mut host = unsafe { make_host(&spec)? };
        let mut server = Server::new(server_info(version, instructions), &mut host);
        server.set_recorder(trace_env::recorder_from_process_env());
        let (mut guard, input, mut output) =
            stdio::StdioGuard::install().map_err(|e| format!("cannot set up stdio: {e}"))?;
        stdio::keep_large_buffers();
        let reader = stdio::spawn_reader_masked(input);
        let end = serve(&server, &mut host, reader, &mut output, &ServeOptions::default());
        server.shutdown_recorder();
        drop(output);
        guard.restore();
        Ok(end.as_str().to_string())
    })();
    SERVING.store(false, Ordering::SeqCst);
    match res {
        Ok(s) => s,
        Err(e) => format!("error: {e}"),
    }
}

/// An in-process session: a prepared server, its host and its legacy
/// session state.
struct Session {
    server: Server,
    host: RHost,
    legacy: LegacyState,
}

/// Create a session (external pointer), or return an error string. The spec
/// must be kept alive by R.
/// @noRd
#[extendr]
fn engine_session_new(spec: Robj, version: &str, instructions: Robj) -> Robj {
    let mut host = match unsafe { make_host(&spec) } {
        Ok(h) => h,
        Err(e) => return Robj::from(format!("error: {e}")),
    };
    let mut server = Server::new(server_info(version, instructions), &mut host);
    server.set_recorder(trace_env::recorder_from_process_env());
    ExternalPtr::new(Session { server, host, legacy: LegacyState::default() }).into()
}

/// Handle one message; returns the response line or NULL.
/// @noRd
#[extendr]
fn engine_session_handle(mut session: ExternalPtr<Session>, _spec: Robj, line: &str) -> Robj {
    let s: &mut Session = &mut session;
    // Handing the line back is the write: the span ends here.
    let reply = s.server.handle(&mut s.legacy, line.as_bytes(), &mut s.host).into_line();
    match reply {
        Some(bytes) => Robj::from(String::from_utf8_lossy(&bytes).into_owned()),
        None => Robj::from(()),
    }
}

extendr_module! {
    mod mcplite;
    use trace_env;
    use encode;
    fn engine_is_serving;
    fn engine_serve;
    fn engine_session_new;
    fn engine_session_handle;
}
