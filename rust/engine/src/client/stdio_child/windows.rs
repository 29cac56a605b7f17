//! The stdio link on Windows: the server runs in a new process group with
//! no console window, inside a Job object (terminating the job ends the
//! whole process tree; the job also ends it when R exits, as its last
//! handle closes). Anonymous pipes cannot be polled, so a thread reads the
//! server's stdout and hands chunks to the waiting thread, and a thread
//! writes its stdin while R waits with a deadline.

use std::io::{self, Read, Write};
use std::os::windows::io::AsRawHandle;
use std::os::windows::process::CommandExt;
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command};
use std::time::{Duration, Instant};

use crossbeam_channel::{bounded, Receiver, RecvTimeoutError, Sender, TryRecvError};
use windows_sys::Win32::Foundation::{CloseHandle, HANDLE};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JobObjectExtendedLimitInformation, SetInformationJobObject,
    TerminateJobObject, JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
};
use windows_sys::Win32::System::Threading::{CREATE_NEW_PROCESS_GROUP, CREATE_NO_WINDOW};

use super::{spawn_masked, ClientError, Got, StdioSpec};

/// The exit code of a server ended by terminating its job.
const TERMINATED: u32 = 1;

/// The program to start. `Command` only adds `.exe` to a bare name; MCP
/// configurations name `npx` or `uvx`, which are `.cmd` files on Windows,
/// so a bare name is looked up on the child's PATH with the usual
/// extensions.
pub(super) fn program(spec: &StdioSpec) -> String {
    let p = Path::new(&spec.program);
    if p.extension().is_some() || p.components().count() != 1 {
        return spec.program.clone();
    }
    let path = match &spec.env {
        Some(env) => env.iter().find(|(k, _)| k.eq_ignore_ascii_case("PATH")).map(|(_, v)| v.into()),
        None => std::env::var_os("PATH"),
    };
    for dir in std::env::split_paths(&path.unwrap_or_default()) {
        for ext in ["exe", "cmd", "bat", "com"] {
            let f = dir.join(format!("{}.{ext}", spec.program));
            if f.is_file() {
                return f.display().to_string();
            }
        }
    }
    spec.program.clone()
}

/// A new process group (a console Ctrl-C reaches R, not the server) and no
/// console window.
pub(super) fn configure(cmd: &mut Command) {
    cmd.creation_flags(CREATE_NEW_PROCESS_GROUP | CREATE_NO_WINDOW);
}

/// The child's Job object (null when one could not be made: then only the
/// child itself can be ended).
pub(super) struct Proc {
    job: HANDLE,
    process: HANDLE,
}

// SAFETY: the handles are owned by this value and only used through it.
unsafe impl Send for Proc {}

impl Proc {
    pub(super) fn new(child: &Child) -> Proc {
        let process = child.as_raw_handle() as HANDLE;
        // SAFETY: plain Win32 calls on a new job handle and our child's
        // process handle; the limit structure lives on the stack.
        let job = unsafe {
            let job = CreateJobObjectW(std::ptr::null(), std::ptr::null());
            if !job.is_null() {
                let mut info: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = std::mem::zeroed();
                info.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
                let ok = SetInformationJobObject(
                    job,
                    JobObjectExtendedLimitInformation,
                    (&info as *const JOBOBJECT_EXTENDED_LIMIT_INFORMATION).cast(),
                    std::mem::size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
                ) != 0
                    && AssignProcessToJobObject(job, process) != 0;
                if !ok {
                    CloseHandle(job);
                }
                if ok {
                    job
                } else {
                    std::ptr::null_mut()
                }
            } else {
                job
            }
        };
        Proc { job, process }
    }

    /// How the child ended (its handle stays open until `Child` is dropped).
    pub(super) fn peek_exit(&mut self, child: &mut Child) -> Option<(String, Option<i32>)> {
        match child.try_wait() {
            Ok(Some(status)) => Some(match status.code() {
                Some(c) if c as u32 == TERMINATED && self.job.is_null() => ("was terminated".to_string(), None),
                Some(c) => (format!("exited with status {c}"), Some(c)),
                None => ("ended".to_string(), None),
            }),
            _ => None,
        }
    }

    /// There is no polite signal for a console-less process: go straight to
    /// [`Proc::kill`].
    pub(super) fn terminate(&self) -> Option<&'static str> {
        None
    }

    /// End the process tree.
    pub(super) fn kill(&self) -> &'static str {
        self.end_all();
        "terminated its process tree after it did not exit on its own"
    }

    /// End what is left of the tree.
    pub(super) fn sweep(&self) {
        if !self.job.is_null() {
            self.end_all();
        }
    }

    fn end_all(&self) {
        // SAFETY: our own job or process handle.
        unsafe {
            if self.job.is_null() {
                windows_sys::Win32::System::Threading::TerminateProcess(self.process, TERMINATED);
            } else {
                TerminateJobObject(self.job, TERMINATED);
            }
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if !self.job.is_null() {
            // SAFETY: closing our own job handle (which ends what is left
            // in the job: JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE).
            unsafe {
                CloseHandle(self.job);
            }
        }
    }
}

/// The server's stdin, written by a thread; R waits for each write with a
/// deadline.
pub(super) struct Input {
    tx: Sender<Vec<u8>>,
    done: Receiver<io::Result<()>>,
}

impl Input {
    pub(super) fn new(mut stdin: ChildStdin) -> io::Result<Input> {
        let (tx, rx) = bounded::<Vec<u8>>(1);
        let (done_tx, done) = bounded(1);
        spawn_masked("mcplite-client-in", move || {
            for buf in rx {
                let r = stdin.write_all(&buf).and_then(|_| stdin.flush());
                let failed = r.is_err();
                if done_tx.send(r).is_err() || failed {
                    return;
                }
            }
        })?;
        Ok(Input { tx, done })
    }

    /// Write all of `buf` by `deadline`. On failure: whether the stream may
    /// hold part of it (then it is broken), and why.
    pub(super) fn write_all(
        &mut self,
        buf: &[u8],
        deadline: Instant,
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<(), (bool, ClientError)> {
        let closed = || (false, ClientError::Closed("the server closed its standard input".into()));
        if self.tx.send(buf.to_vec()).is_err() {
            return Err(closed());
        }
        loop {
            let slice = deadline.saturating_duration_since(Instant::now()).min(Duration::from_millis(25));
            match self.done.recv_timeout(slice) {
                Ok(Ok(())) => return Ok(()),
                Ok(Err(e)) if e.kind() == io::ErrorKind::BrokenPipe => return Err(closed()),
                Ok(Err(e)) => return Err((false, ClientError::Closed(format!("writing to the server failed: {e}")))),
                Err(RecvTimeoutError::Disconnected) => return Err(closed()),
                Err(RecvTimeoutError::Timeout) => {
                    if Instant::now() >= deadline {
                        return Err((true, ClientError::Timeout(Duration::ZERO)));
                    }
                    if interrupted() {
                        return Err((true, ClientError::Interrupted));
                    }
                }
            }
        }
    }
}

enum Chunk {
    Data(Vec<u8>),
    Eof,
    Failed(String),
}

/// The server's stdout, read by a thread (a few chunks ahead at most).
pub(super) struct Pipe {
    rx: Receiver<Chunk>,
    pending: Vec<u8>,
    at: usize,
}

impl Pipe {
    pub(super) fn new(mut out: ChildStdout) -> io::Result<Pipe> {
        let (tx, rx) = bounded(4);
        spawn_masked("mcplite-client-out", move || {
            let mut buf = vec![0u8; 64 << 10];
            loop {
                let chunk = match out.read(&mut buf) {
                    Ok(0) => Chunk::Eof,
                    Ok(n) => Chunk::Data(buf[..n].to_vec()),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Chunk::Eof,
                    Err(e) => Chunk::Failed(e.to_string()),
                };
                let last = !matches!(chunk, Chunk::Data(_));
                if tx.send(chunk).is_err() || last {
                    return;
                }
            }
        })?;
        Ok(Pipe { rx, pending: Vec::new(), at: 0 })
    }

    /// Take what is there, waiting up to `ms` milliseconds for something.
    pub(super) fn read(&mut self, buf: &mut [u8], ms: i32) -> Got {
        if self.at >= self.pending.len() {
            let got = if ms <= 0 {
                self.rx.try_recv().map_err(|e| e == TryRecvError::Disconnected)
            } else {
                self.rx.recv_timeout(Duration::from_millis(ms as u64)).map_err(|e| e == RecvTimeoutError::Disconnected)
            };
            match got {
                Ok(Chunk::Data(d)) => {
                    self.pending = d;
                    self.at = 0;
                }
                Ok(Chunk::Eof) | Err(true) => return Got::Eof,
                Ok(Chunk::Failed(e)) => return Got::Failed(e),
                Err(false) => return Got::Nothing,
            }
        }
        let n = (self.pending.len() - self.at).min(buf.len());
        buf[..n].copy_from_slice(&self.pending[self.at..self.at + n]);
        self.at += n;
        Got::Data(n)
    }
}
