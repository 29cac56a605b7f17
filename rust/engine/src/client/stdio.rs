//! The stdio link: an MCP server started as a child process.
//!
//! - The child gets its own process group, so closing can signal everything
//!   it started (an `npx` wrapper and its `node`, a shell and its command),
//!   and a Ctrl-C typed at the R console reaches R, not the server. On Linux
//!   the child also gets SIGTERM if R dies without closing it.
//! - The child's stdout is read by the thread that waits for an answer (R's
//!   own thread, sleeping in poll() on the pipe), framed with the engine's
//!   [`Framer`] and parsed; lines longer than the limit are dropped and
//!   reported instead of being buffered without bound. Between calls the
//!   pipe is not read: a server never writes much unasked.
//! - A second thread keeps a bounded tail of the child's stderr (never
//!   copied to R's stdout or stderr), for error messages.
//! - Writes are non-blocking with a deadline, so a server that stops reading
//!   cannot hang R, and SIGPIPE is ignored around them (R's own SIGPIPE
//!   handler would raise an R error in the middle of Rust code).
//!
//! POSIX only (Linux and macOS); on Windows `Connection::stdio` reports that
//! the stdio client is not available there.
//! - Closing follows the stdio shutdown sequence: close stdin, wait a
//!   bounded time, then SIGTERM and SIGKILL to the process group; the child
//!   is always reaped.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStderr, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::tail::Tail;
use super::wire::emit_line;
use super::{spawn_masked, ClientError, Event, FailureContext, Link, Outgoing, StdioSpec};
use crate::transport::Framer;

pub struct StdioLink {
    child: Child,
    pid: i32,
    stdin: Option<File>,
    out: Output,
    stderr: Arc<Mutex<Tail>>,
    threads: Vec<JoinHandle<()>>,
    grace: Duration,
    /// How the process ended, once known.
    ended: Option<String>,
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
        let mut cmd = Command::new(&spec.program);
        cmd.args(&spec.args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        if let Some(env) = &spec.env {
            cmd.env_clear();
            cmd.envs(env.iter().map(|(k, v)| (k, v)));
        }
        if let Some(dir) = &spec.cwd {
            cmd.current_dir(dir);
        }
        cmd.process_group(0);
        #[cfg(target_os = "linux")]
        // SAFETY: prctl() is async-signal-safe; nothing else runs between
        // fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
                Ok(())
            });
        }
        let mut child = cmd.spawn().map_err(|e| {
            let why = match e.kind() {
                io::ErrorKind::NotFound => "no such program on the PATH".to_string(),
                io::ErrorKind::PermissionDenied => "permission denied (not executable?)".to_string(),
                _ => e.to_string(),
            };
            ClientError::Spawn(format!("cannot start `{}`: {why}", spec.program))
        })?;
        let pid = child.id() as i32;
        let stdin: OwnedFd = child.stdin.take().expect("piped stdin").into();
        let stdin = File::from(stdin);
        set_nonblocking(stdin.as_raw_fd());
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr_pipe = child.stderr.take().expect("piped stderr");
        let stderr = Arc::new(Mutex::new(Tail::new(spec.stderr_cap)));
        let tail = Arc::clone(&stderr);
        let spawned = spawn_masked("mcplite-client-err", move || read_stderr(stderr_pipe, tail));
        let mut link = StdioLink {
            child,
            pid,
            stdin: Some(stdin),
            out: Output::new(stdout, spec.max_line.max(64 << 10)),
            stderr,
            threads: Vec::new(),
            grace: spec.grace,
            ended: None,
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
        let Some(stdin) = &self.stdin else {
            return Err(ClientError::Closed("the connection is closed".into()));
        };
        let fd = stdin.as_raw_fd();
        let _sigpipe = SigpipeIgnored::new();
        let mut off = 0;
        while off < buf.len() {
            // SAFETY: writing from a live slice to our own descriptor.
            let n = unsafe { libc::write(fd, buf[off..].as_ptr().cast(), buf.len() - off) };
            if n >= 0 {
                off += n as usize;
                continue;
            }
            let err = io::Error::last_os_error();
            match err.raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::EAGAIN) => {
                    let now = Instant::now();
                    if now >= deadline {
                        return Err(self.broken_write(off, ClientError::Timeout(Duration::ZERO)));
                    }
                    if interrupted() {
                        return Err(self.broken_write(off, ClientError::Interrupted));
                    }
                    let ms = deadline.saturating_duration_since(now).min(Duration::from_millis(25)).as_millis();
                    let mut p = libc::pollfd { fd, events: libc::POLLOUT, revents: 0 };
                    // SAFETY: one valid pollfd on the stack.
                    unsafe { libc::poll(&mut p, 1, ms.max(1) as i32) };
                }
                Some(libc::EPIPE) => return Err(ClientError::Closed("the server closed its standard input".into())),
                _ => return Err(ClientError::Closed(format!("writing to the server failed: {err}"))),
            }
        }
        Ok(())
    }

    /// A write stopped part-way: the stream now holds half a message, so
    /// the connection cannot be used any more.
    fn broken_write(&mut self, written: usize, e: ClientError) -> ClientError {
        if written > 0 {
            self.stdin = None;
        }
        e
    }

    /// The child's exit, without reaping it (so its process group id stays
    /// reserved until [`StdioLink::close`] has signalled the group).
    fn peek_exit(&mut self) -> Option<String> {
        if self.ended.is_some() {
            return self.ended.clone();
        }
        // SAFETY: waitid on our own child with a zeroed siginfo.
        unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            let r = libc::waitid(
                libc::P_PID,
                self.pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            );
            if r != 0 || info.si_pid() == 0 {
                return None;
            }
            let status = info.si_status();
            self.ended = Some(match info.si_code {
                libc::CLD_EXITED => format!("exited with status {status}"),
                libc::CLD_KILLED | libc::CLD_DUMPED => format!("was killed by signal {}", signal_name(status)),
                _ => "ended".to_string(),
            });
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

    fn signal_group(&self, sig: i32) {
        // SAFETY: kill() on our child's process group.
        unsafe {
            libc::kill(-self.pid, sig);
        }
    }
}

/// How long a waiting call looks for the answer before sleeping in poll()
/// (a server that answers at once then costs no wake-up; bench/client).
/// Only while the server keeps answering that fast.
const SPIN: Duration = Duration::from_micros(50);

fn signal_name(sig: i32) -> String {
    match sig {
        libc::SIGTERM => "SIGTERM".into(),
        libc::SIGKILL => "SIGKILL".into(),
        libc::SIGINT => "SIGINT".into(),
        libc::SIGSEGV => "SIGSEGV".into(),
        libc::SIGABRT => "SIGABRT".into(),
        libc::SIGPIPE => "SIGPIPE".into(),
        libc::SIGHUP => "SIGHUP".into(),
        n => n.to_string(),
    }
}

fn set_nonblocking(fd: i32) {
    // SAFETY: fcntl on our own pipe descriptor.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags >= 0 {
            libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
        }
    }
}

/// SIGPIPE ignored while it lives (R's own handler would raise an R error
/// inside Rust code; a closed pipe then shows up as EPIPE). Only R's thread
/// writes to servers, so the process-wide change is never observed
/// elsewhere.
struct SigpipeIgnored {
    old: libc::sighandler_t,
}

impl SigpipeIgnored {
    fn new() -> SigpipeIgnored {
        // SAFETY: installing SIG_IGN for SIGPIPE.
        SigpipeIgnored { old: unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) } }
    }
}

impl Drop for SigpipeIgnored {
    fn drop(&mut self) {
        // SAFETY: restoring the disposition saved by new().
        unsafe {
            libc::signal(libc::SIGPIPE, self.old);
        }
    }
}

/// The server's stdout, read on the waiting thread itself: when R waits for
/// an answer it sleeps in poll() on the pipe and wakes when the answer
/// arrives, with no thread in between. Lines are framed with the engine's
/// [`Framer`]; a line longer than `max_line` is dropped and reported.
struct Output {
    file: File,
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
    fn new(out: ChildStdout, max_line: usize) -> Output {
        let fd: OwnedFd = out.into();
        let file = File::from(fd);
        set_nonblocking(file.as_raw_fd());
        Output {
            file,
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
        if self.done {
            return;
        }
        let mut p = libc::pollfd { fd: self.file.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        // SAFETY: one valid pollfd on the stack.
        if unsafe { libc::poll(&mut p, 1, ms) } <= 0 {
            return;
        }
        // Read what is there (a long answer arrives in many pieces).
        loop {
            let n = match self.file.read(&mut self.chunk) {
                Ok(0) => {
                    self.finish(None);
                    return;
                }
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) => {
                    self.finish(Some(format!("reading the server's output failed: {e}")));
                    return;
                }
            };
            self.take(n);
            // Return as soon as something can be delivered: a server that
            // writes without pause must not keep R here.
            if !self.queue.is_empty() {
                return;
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
        FailureContext { ended, stderr: self.stderr_text() }
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
        // 2. SIGTERM to the whole group, then SIGKILL.
        if how.is_none() {
            self.signal_group(libc::SIGTERM);
            how = self.wait_exit(self.grace).map(|e| format!("{e} (sent SIGTERM after it did not exit on its own)"));
        }
        if how.is_none() {
            self.signal_group(libc::SIGKILL);
            how = self.wait_exit(Duration::from_secs(5)).map(|e| format!("{e} (sent SIGKILL)"));
        }
        // Anything the server left behind in its group goes too, while the
        // unreaped leader keeps the group id reserved.
        self.signal_group(libc::SIGTERM);
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

    fn set_version(&mut self, _version: &str) {}

    fn pid(&self) -> Option<i32> {
        Some(self.pid)
    }
}

impl Drop for StdioLink {
    fn drop(&mut self) {
        self.close();
    }
}
