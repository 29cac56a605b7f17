//! The MCP client's stdio link with real child processes, on every platform
//! (Unix here, and Windows: the cross-platform suite runs this binary under
//! Wine). The server is this very executable started with `--serve`: the
//! engine's own serve loop over its stdin and stdout. `harness = false`:
//! `main` is either that server or a small test runner that prints
//! libtest's summary line.

// The runner reports on stdout, as libtest does.
#![allow(clippy::print_stdout)]

use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use mcplite_engine::client::{ClientError, Connection, Options, StdioSpec};
use mcplite_engine::host::{CallContext, Host, ToolFailure, ToolResult, ToolSpec};
use mcplite_engine::progress::{Inflight, ProgressPolicy};
use mcplite_engine::transport::{serve, Reader, ServeOptions};
use mcplite_engine::{Server, ServerInfo};
use serde_json::{Map, Value};

struct Tools;

fn spec(name: &str) -> ToolSpec {
    ToolSpec::new(name, format!("{name}."))
}

impl Host for Tools {
    fn tools(&mut self) -> Vec<ToolSpec> {
        vec![spec("echo"), spec("die"), spec("hang")]
    }
    fn call_tool(
        &mut self,
        i: usize,
        a: Option<&Map<String, Value>>,
        _c: &CallContext,
    ) -> Result<ToolResult, ToolFailure> {
        let a = a.cloned().unwrap_or_default();
        match i {
            0 => Ok(ToolResult::text(a["n"].to_string())),
            1 => {
                eprintln!("about to exit with status 3");
                std::process::exit(3)
            }
            _ => {
                // Start a grandchild that appends to a file until it is
                // ended, then never return.
                if let Some(Value::String(f)) = a.get("beat") {
                    let exe = std::env::current_exe().unwrap();
                    // Never waited for: closing the connection must end it.
                    #[allow(clippy::zombie_processes)]
                    std::process::Command::new(exe).args(["--beat", f]).spawn().unwrap();
                }
                loop {
                    std::thread::sleep(Duration::from_secs(1));
                }
            }
        }
    }
}

fn serve_stdio() {
    #[cfg(unix)]
    let input = File::from(std::os::fd::AsFd::as_fd(&std::io::stdin()).try_clone_to_owned().unwrap());
    #[cfg(windows)]
    let input = File::from(std::os::windows::io::AsHandle::as_handle(&std::io::stdin()).try_clone_to_owned().unwrap());
    let server =
        Server::new(ServerInfo { name: "stdio-test".into(), version: "1".into(), instructions: None }, &mut Tools);
    let mut out = std::io::stdout();
    let inflight = std::sync::Arc::new(Inflight::new(ProgressPolicy::default(), None));
    serve(&server, &mut Tools, Reader::spawn(input), &mut out, &ServeOptions::default(), &inflight);
}

/// Append a byte to `file` every 20 ms, forever.
fn beat(file: &str) {
    loop {
        let mut f = std::fs::OpenOptions::new().create(true).append(true).open(file).unwrap();
        let _ = f.write_all(b".");
        drop(f);
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn server_spec() -> StdioSpec {
    let exe = std::env::current_exe().unwrap();
    let mut s = StdioSpec::new(exe.display().to_string(), vec!["--serve".into()]);
    s.grace = Duration::from_millis(500);
    s
}

fn connect() -> Connection {
    let opts = Options { timeout: Duration::from_secs(30), ..Options::default() };
    match Connection::stdio(&server_spec(), &opts, &mut || false) {
        Ok(c) => c,
        Err(e) => panic!("connect failed: {} (stderr: {})", e.error, e.stderr),
    }
}

const T: Duration = Duration::from_secs(30);

// Issue 18: connect, list, call, close over real stdio.
fn round_trip() {
    let mut c = connect();
    assert_eq!(c.version(), "2026-07-28");
    let tools = c.list_tools(T, &mut || false).unwrap();
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names, ["echo", "die", "hang"]);
    for n in 1..=50 {
        let r = c.call_tool("echo", &format!("{{\"n\":{n}}}"), T, &mut || false).unwrap();
        assert_eq!(r["content"][0]["text"], n.to_string());
    }
    let how = c.close();
    assert_eq!(how, "exited with status 0");
}

// Issue 18: a server that exits mid-call fails the call with its exit and
// the tail of its stderr.
fn server_exits_mid_call() {
    let mut c = connect();
    let e = c.call_tool("die", "{}", T, &mut || false).unwrap_err();
    assert!(matches!(e, ClientError::Closed(_)), "{e:?}");
    assert!(e.to_string().contains("exited with status 3"), "{e}");
    assert!(c.stderr_text().contains("about to exit with status 3"), "{}", c.stderr_text());
    c.close();
}

fn size(f: &PathBuf) -> u64 {
    std::fs::metadata(f).map(|m| m.len()).unwrap_or(0)
}

// Issue 18: a call that never answers times out; closing ends the server
// that ignores its closed stdin, and the process it started.
fn timeout_then_close_ends_the_tree() {
    let beat_file = std::env::temp_dir().join(format!("mcplite-beat-{}", std::process::id()));
    let _ = std::fs::remove_file(&beat_file);
    let mut c = connect();
    let args = format!("{{\"beat\":{}}}", serde_json::to_string(&beat_file.display().to_string()).unwrap());
    let e = c.call_tool("hang", &args, Duration::from_millis(1500), &mut || false).unwrap_err();
    assert!(matches!(e, ClientError::Timeout(_)), "{e:?}");
    let t0 = Instant::now();
    while size(&beat_file) == 0 && t0.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(size(&beat_file) > 0, "the grandchild did not start");
    let how = c.close();
    assert!(how.contains("terminated") || how.contains("SIG"), "{how}");
    std::thread::sleep(Duration::from_millis(300));
    let after = size(&beat_file);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(size(&beat_file), after, "the grandchild outlived close()");
    let _ = std::fs::remove_file(&beat_file);
}

// A program that does not exist: a spawn error naming it.
fn missing_program() {
    let spec = StdioSpec::new("mcplite-no-such-server", vec![]);
    let e = Connection::stdio(&spec, &Options::default(), &mut || false).err().unwrap();
    assert_eq!(e.error.kind(), "spawn");
    assert!(e.error.to_string().contains("cannot start `mcplite-no-such-server`"), "{}", e.error);
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("--serve") => return serve_stdio(),
        Some("--beat") => return beat(&args[1]),
        _ => {}
    }
    let tests: [(&str, fn()); 4] = [
        ("round_trip", round_trip),
        ("server_exits_mid_call", server_exits_mid_call),
        ("timeout_then_close_ends_the_tree", timeout_then_close_ends_the_tree),
        ("missing_program", missing_program),
    ];
    // libtest's flags are accepted and ignored; other arguments filter.
    let filters: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    let chosen: Vec<_> =
        tests.iter().filter(|(n, _)| filters.is_empty() || filters.iter().any(|f| n.contains(f.as_str()))).collect();
    println!("\nrunning {} tests", chosen.len());
    let mut failed = Vec::new();
    for (name, f) in &chosen {
        let ok = std::panic::catch_unwind(f).is_ok();
        println!("test {name} ... {}", if ok { "ok" } else { "FAILED" });
        if !ok {
            failed.push(*name);
        }
    }
    let passed = chosen.len() - failed.len();
    if failed.is_empty() {
        println!("\ntest result: ok. {passed} passed; 0 failed; 0 ignored; 0 measured; 0 filtered out");
    } else {
        println!("\nfailures: {}", failed.join(", "));
        println!(
            "\ntest result: FAILED. {passed} passed; {} failed; 0 ignored; 0 measured; 0 filtered out",
            failed.len()
        );
        std::process::exit(101);
    }
}
