//! What the pool, stdio and HTTP tests share: how a pool starts this
//! executable as its workers, temporary directories, waiting for a
//! condition, and the hosts of a server whose tools run in workers.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use mcplite_engine::host::{CallContext, Host, ToolFailure, ToolResult, ToolSpec};
use mcplite_engine::workers::{PoolOptions, WorkerCommand};
use serde_json::{Map, Value};

use crate::worker::TOOLS;

/// Long enough for anything to happen; a test that waits this long failed.
pub const PATIENCE: Duration = Duration::from_secs(30);

fn command(env: &[(&str, &str)]) -> WorkerCommand {
    WorkerCommand {
        program: std::env::current_exe().unwrap(),
        args: Vec::new(),
        cwd: None,
        env: env.iter().map(|(k, v)| (k.into(), v.into())).collect(),
        tmp_root: None,
    }
}

pub fn options(n: usize, env: &[(&str, &str)]) -> PoolOptions {
    let mut o = PoolOptions::new(n, command(env), TOOLS.iter().map(|s| s.to_string()).collect());
    o.start_timeout = PATIENCE;
    o
}

pub fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mcplite-workers-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The tags `mark` calls wrote to `file`, in the order they ran.
pub fn marks(file: &Path) -> Vec<String> {
    std::fs::read_to_string(file).unwrap_or_default().lines().map(String::from).collect()
}

pub fn wait_for(what: &str, mut f: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !f() {
        assert!(t0.elapsed() < PATIENCE, "never: {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

pub struct NoHost;

impl Host for NoHost {
    fn tools(&mut self) -> Vec<ToolSpec> {
        Vec::new()
    }
    fn call_tool(
        &mut self,
        _: usize,
        _: Option<&Map<String, Value>>,
        _: &CallContext,
    ) -> Result<ToolResult, ToolFailure> {
        panic!("tools run in the workers")
    }
}

/// The server's own tool of a mixed server (RULES N7.6): `here`, first
/// in the server's list, says which process ran it; the workers serve
/// the others.
pub struct Here;

impl Host for Here {
    fn tools(&mut self) -> Vec<ToolSpec> {
        Vec::new()
    }
    fn call_tool(
        &mut self,
        i: usize,
        _: Option<&Map<String, Value>>,
        _: &CallContext,
    ) -> Result<ToolResult, ToolFailure> {
        assert_eq!(i, 0, "only `here` runs in the server");
        Ok(ToolResult::text(format!("here {}", std::process::id())))
    }
}

pub fn mixed_options(n: usize) -> PoolOptions {
    let mut o = options(n, &[]);
    o.tools.insert(0, "here".into());
    o.host_tools = vec!["here".into()];
    o
}
