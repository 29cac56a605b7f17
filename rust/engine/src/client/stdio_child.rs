//! The stdio link: an MCP server started as a child process (RULES K8.1).
//!
//! - The child is started so that closing can end everything it started (an
//!   `npx` wrapper and its `node`, a shell and its command), and a Ctrl-C
//!   typed at the R console reaches R, not the server: on Unix it gets its
//!   own process group (on Linux also SIGTERM if R dies without closing
//!   it); on Windows a new process group without a console window, inside
//!   a Job object that ends the whole tree when it is terminated or when R
//!   exits.
//! - The child's stdout is read on the thread that waits for an answer (on
//!   Unix R's own thread, sleeping in poll() on the pipe; on Windows a
//!   reading thread hands chunks over), framed with the engine's [`Framer`]
//!   and parsed; lines longer than the limit are dropped and reported
//!   instead of being buffered without bound.
//! - A second thread keeps a bounded tail of the child's stderr (never
//!   copied to R's stdout or stderr), for error messages.
//! - Writes have a deadline, so a server that stops reading cannot hang R
//!   (Unix: non-blocking writes with SIGPIPE ignored around them, as R's own
//!   SIGPIPE handler would raise an R error in the middle of Rust code;
//!   Windows: a writing thread R waits for in slices).
//! - Closing follows the stdio shutdown sequence: close stdin, wait a
//!   bounded time, then end the server: on Unix SIGTERM and SIGKILL to the
//!   process group (the child is always reaped), on Windows the Job object
//!   is terminated.
//!
//! The platform parts are in `stdio/unix.rs` and `stdio/windows.rs`.

use std::collections::VecDeque;
use std::io::{self, Read};
use std::process::{Child, ChildStderr, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::tail::Tail;
use super::wire::emit_line;
use super::{spawn_masked, ClientError, Event, FailureContext, Link, Outgoing};
use crate::transport::Framer;

/// How to start a server.
#[derive(Debug, Clone, Default)]
pub struct StdioSpec {
    /// Program: a path, or a name looked up on the child's `PATH`.
    pub program: String,
    pub args: Vec<String>,
    /// The child's complete environment; `None` inherits the parent's.
    pub env: Option<Vec<(String, String)>>,
    /// Working directory; `None` keeps the parent's.
    pub cwd: Option<String>,
    /// Longest accepted line on the child's stdout, in bytes.
    pub max_line: usize,
    /// Bytes of stderr kept.
    pub stderr_cap: usize,
    /// After stdin is closed, how long the child may take to exit before it
    /// is sent SIGTERM (and as long again before SIGKILL).
    pub grace: Duration,
}

impl StdioSpec {
    pub fn new(program: impl Into<String>, args: Vec<String>) -> StdioSpec {
        StdioSpec {
            program: program.into(),
            args,
            env: None,
            cwd: None,
            max_line: 64 << 20,
            stderr_cap: 16 << 10,
            grace: Duration::from_secs(2),
        }
    }
}

#[cfg(unix)]
#[path = "stdio_child/unix.rs"]
mod sys;
#[cfg(windows)]
#[path = "stdio_child/windows.rs"]
mod sys;

/// What one read of the server's stdout gave.
enum Got {
    Data(usize),
    Nothing,
    Eof,
    Failed(String),
}

pub struct StdioLink {
    child: Child,
    proc: sys::Proc,
    stdin: Option<sys::Input>,
    out: Output,
    stderr: Arc<Mutex<Tail>>,
    threads: Vec<JoinHandle<()>>,
    grace: Duration,
    /// How the process ended, once known, and its exit status.
    ended: Option<String>,
    status: Option<i32>,
    reaped: bool,
    /// Spin before sleeping when waiting (the server answered fast lately).
    spin: bool,
}

impl StdioLink {
    pub fn spawn(spec: &StdioSpec) -> Result<StdioLink, ClientError> {
        if let Some(dir) = &spec.cwd {
            if !std::path::Path::new(dir).is_dir() {
                return Err(ClientError::Spawn(format!("the working directory `{dir}` does not exist")));
            }
        }
        let mut cmd = Command::new(sys::program(spec));
        cmd.args(&spec.args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        if let Some(env) = &spec.env {
            cmd.env_clear();
            cmd.envs(env.iter().map(|(k, v)| (k, v)));
        }
        if let Some(dir) = &spec.cwd {
            cmd.current_dir(dir);
        }
        sys::configure(&mut cmd);
        let mut child = cmd.spawn().map_err(|e| {
            let why = match e.kind() {
                io::ErrorKind::NotFound => not_found(&spec.program),
                io::ErrorKind::PermissionDenied => "permission denied (not executable?)".to_string(),
                _ => e.to_string(),
            };
            ClientError::Spawn(format!("cannot start `{}`: {why}", spec.program))
        })?;
        let proc = sys::Proc::new(&child);
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr_pipe = child.stderr.take().expect("piped stderr");
        let stderr = Arc::new(Mutex::new(Tail::new(spec.stderr_cap)));
        let tail = Arc::clone(&stderr);
        let (input, pipe) = match (sys::Input::new(stdin), sys::Pipe::new(stdout)) {
            (Ok(i), Ok(p)) => (i, p),
            (Err(e), _) | (_, Err(e)) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(ClientError::Spawn(format!("cannot start a pipe thread: {e}")));
            }
        };
        let spawned = spawn_masked("mcplite-client-err", move || read_stderr(stderr_pipe, tail));
        let mut link = StdioLink {
            child,
            proc,
            stdin: Some(input),
            out: Output::new(pipe, spec.max_line.max(64 << 10)),
            stderr,
            threads: Vec::new(),
            grace: spec.grace,
            ended: None,
            status: None,
            reaped: false,
            spin: true,
        };
        match spawned {
            Ok(h) => link.threads.push(h),
            Err(e) => {
                link.close();
                return Err(ClientError::Spawn(format!("cannot start a reader thread: {e}")));
            }
        }
        Ok(link)
    }

    fn write_all(
        &mut self,
        buf: &[u8],
        deadline: Instant,
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<(), ClientError> {
        let Some(stdin) = &mut self.stdin else {
            return Err(ClientError::Closed("the connection is closed".into()));
        };
        stdin.write_all(buf, deadline, interrupted).map_err(|(broken, e)| {
            // A write stopped part-way: the stream now holds half a message,
            // so the connection cannot be used any more.
            if broken {
                self.stdin = None;
            }
            e
        })
    }

    /// The child's exit, once it happened (on Unix without reaping it, so
    /// its process group id stays reserved until [`StdioLink::close`] has
    /// signalled the group).
    fn peek_exit(&mut self) -> Option<String> {
        if self.ended.is_none() {
            if let Some((how, status)) = self.proc.peek_exit(&mut self.child) {
                self.ended = Some(how);
                self.status = status;
            }
        }
        self.ended.clone()
    }

    fn wait_exit(&mut self, limit: Duration) -> Option<String> {
        let t0 = Instant::now();
        loop {
            if let Some(e) = self.peek_exit() {
                return Some(e);
            }
            if t0.elapsed() >= limit {
                return None;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// After a failed handshake, how long the server may take to exit after its
/// input is closed (and again after SIGTERM) before it is ended: the whole
/// connect stays within its timeout plus half a second (RULES K2.7).
const ABORT_GRACE: Duration = Duration::from_millis(100);

/// How long a waiting call looks for the answer before sleeping in poll()
/// (a server that answers at once then costs no wake-up; bench/client).
/// Only while the server keeps answering that fast.
const SPIN: Duration = Duration::from_micros(50);

/// The server's stdout, read on the waiting thread itself (on Unix R sleeps
/// in poll() on the pipe and wakes when the answer arrives, with no thread
/// in between). Lines are framed with the engine's [`Framer`]; a line longer
/// than `max_line` is dropped and reported.
struct Output {
    pipe: sys::Pipe,
    framer: Framer,
    chunk: Vec<u8>,
    /// Bytes of the line being received, before the current chunk.
    current: usize,
    /// Dropping the rest of an over-long line.
    skipping: bool,
    max_line: usize,
    queue: VecDeque<Event>,
    done: bool,
}

impl Output {
    fn new(pipe: sys::Pipe, max_line: usize) -> Output {
        Output {
            pipe,
            framer: Framer::new(),
            chunk: vec![0u8; 64 << 10],
            current: 0,
            skipping: false,
            max_line,
            queue: VecDeque::new(),
            done: false,
        }
    }

    /// Wait up to `ms` milliseconds for output and queue what it holds.
    fn pump(&mut self, ms: i32) {
        let mut wait = ms;
        // Read what is there (a long answer arrives in many pieces).
        while !self.done {
            match self.pipe.read(&mut self.chunk, wait) {
                Got::Nothing => return,
                Got::Eof => self.finish(None),
                Got::Failed(e) => self.finish(Some(format!("reading the server's output failed: {e}"))),
                Got::Data(n) => {
                    self.take(n);
                    // Return as soon as something can be delivered: a server
                    // that writes without pause must not keep R here.
                    if !self.queue.is_empty() {
                        return;
                    }
                    wait = 0;
                }
            }
        }
    }

    fn take(&mut self, n: usize) {
        let chunk = std::mem::take(&mut self.chunk);
        let mut data = &chunk[..n];
        if self.skipping {
            match memchr::memchr(b'\n', data) {
                None => {
                    self.chunk = chunk;
                    return;
                }
                Some(i) => {
                    self.skipping = false;
                    data = &data[i + 1..];
                }
            }
        }
        let first = memchr::memchr(b'\n', data);
        if self.current + first.unwrap_or(data.len()) > self.max_line {
            self.queue.push_back(Event::Oversize(self.max_line));
            self.framer = Framer::new();
            self.current = 0;
            match first {
                Some(i) => data = &data[i + 1..],
                None => {
                    self.skipping = true;
                    self.chunk = chunk;
                    return;
                }
            }
        }
        let queue = &mut self.queue;
        self.framer.push(data, &mut |line| emit_line(&line, &mut |e| queue.push_back(e)));
        self.current = match memchr::memrchr(b'\n', data) {
            Some(i) => data.len() - i - 1,
            None => self.current + data.len(),
        };
        self.chunk = chunk;
    }

    fn finish(&mut self, failure: Option<String>) {
        if !self.skipping {
            if let Some(line) = self.framer.finish() {
                let queue = &mut self.queue;
                emit_line(&line, &mut |e| queue.push_back(e));
            }
        }
        self.queue.push_back(Event::Closed(failure));
        self.done = true;
    }
}

/// Why a program was not found: a bare name is looked up on the `PATH`; a
/// path either does not exist or names a script whose interpreter does not.
fn not_found(program: &str) -> String {
    let is_path = program.contains('/') || (cfg!(windows) && program.contains('\\'));
    match (is_path, std::path::Path::new(program).exists()) {
        (false, _) => "no such program on the PATH".into(),
        (true, false) => "no such file".into(),
        (true, true) => "not found (is the interpreter named on its first line installed?)".into(),
    }
}

fn read_stderr(mut err: ChildStderr, tail: Arc<Mutex<Tail>>) {
    let mut chunk = vec![0u8; 8 << 10];
    loop {
        match err.read(&mut chunk) {
            Ok(0) => return,
            Ok(n) => tail.lock().unwrap_or_else(|e| e.into_inner()).push(&chunk[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return,
        }
    }
}

impl Link for StdioLink {
    fn send(
        &mut self,
        line: &[u8],
        _out: &Outgoing,
        deadline: Instant,
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<(), ClientError> {
        self.write_all(line, deadline, interrupted)
    }

    fn recv(&mut self, _id: u64, wait: Duration) -> Option<Event> {
        if !self.out.queue.is_empty() || self.out.done {
            return self.out.queue.pop_front();
        }
        let t0 = Instant::now();
        if self.spin {
            // The last answer came within microseconds: look for this one
            // without sleeping for a moment before sleeping in poll().
            let spin = SPIN.min(wait);
            while self.out.queue.is_empty() && !self.out.done {
                self.out.pump(0);
                if t0.elapsed() >= spin {
                    break;
                }
                std::hint::spin_loop();
            }
            // A slow server: stop spinning (it only takes CPU from it).
            self.spin = !self.out.queue.is_empty();
        }
        if self.out.queue.is_empty() {
            let end = t0 + wait;
            loop {
                let ms = end.saturating_duration_since(Instant::now()).as_micros().div_ceil(1000);
                self.out.pump(ms.min(i32::MAX as u128) as i32);
                if !self.out.queue.is_empty() || self.out.done || Instant::now() >= end {
                    break;
                }
            }
            if !self.out.queue.is_empty() && t0.elapsed() <= SPIN {
                self.spin = true;
            }
        }
        self.out.queue.pop_front()
    }

    fn cancel(&mut self, id: u64, reason: &str) {
        let mut line = super::wire::notification_line(
            "notifications/cancelled",
            &[("requestId", &id.to_string()), ("reason", &super::wire::json_string(reason))],
        );
        line.push(b'\n');
        let deadline = Instant::now() + Duration::from_secs(1);
        let _ = self.write_all(&line, deadline, &mut || false);
    }

    fn finish(&mut self, _id: u64) {}

    fn respond(&mut self, line: &[u8]) {
        let mut line = line.to_vec();
        line.push(b'\n');
        let deadline = Instant::now() + Duration::from_secs(1);
        let _ = self.write_all(&line, deadline, &mut || false);
    }

    fn context(&mut self) -> FailureContext {
        // The output closed: give the process a moment to finish exiting.
        let ended = self.wait_exit(Duration::from_millis(500));
        // Once it has exited, its last words may still be in the pipe: let
        // the stderr reader reach end of file (bounded: a child of the
        // server may hold the pipe open) so the failure can quote them.
        if ended.is_some() {
            let t0 = Instant::now();
            while self.threads.iter().any(|h| !h.is_finished()) && t0.elapsed() < Duration::from_millis(500) {
                std::thread::sleep(Duration::from_millis(2));
            }
        }
        FailureContext { ended, status: self.status, stderr: self.stderr_text() }
    }

    fn stderr_text(&self) -> String {
        self.stderr.lock().unwrap_or_else(|e| e.into_inner()).text()
    }

    fn close(&mut self) -> String {
        if self.reaped {
            return self.ended.clone().unwrap_or_else(|| "closed".into());
        }
        // 1. Close the server's input: the usual signal to exit.
        self.stdin = None;
        let mut how = self.wait_exit(self.grace);
        // 2. Ask the process group to end (SIGTERM; nothing on Windows),
        if how.is_none() {
            if let Some(sent) = self.proc.terminate() {
                how = self.wait_exit(self.grace).map(|e| format!("{e} (sent {sent} after it did not exit on its own)"));
            }
        }
        // 3. then end it (SIGKILL; terminating the Job object).
        if how.is_none() {
            let did = self.proc.kill();
            how = self.wait_exit(Duration::from_secs(5)).map(|e| format!("{e} ({did})"));
        }
        // Anything the server left behind goes too (on Unix while the
        // unreaped leader keeps the group id reserved).
        self.proc.sweep();
        let _ = self.child.wait();
        self.reaped = true;
        // Reader threads end at EOF; do not wait long for a pipe that some
        // process outside the group still holds open.
        let t0 = Instant::now();
        while self.threads.iter().any(|h| !h.is_finished()) && t0.elapsed() < Duration::from_millis(200) {
            std::thread::sleep(Duration::from_millis(2));
        }
        for h in self.threads.drain(..) {
            if h.is_finished() {
                let _ = h.join();
            }
        }
        let how = how.unwrap_or_else(|| "did not exit".into());
        self.ended = Some(how.clone());
        how
    }

    fn abort(&mut self) -> String {
        self.grace = ABORT_GRACE;
        self.close()
    }

    fn set_version(&mut self, _version: &str) {}

    fn pid(&self) -> Option<i32> {
        Some(self.child.id() as i32)
    }
}

impl Drop for StdioLink {
    fn drop(&mut self) {
        self.close();
    }
}
