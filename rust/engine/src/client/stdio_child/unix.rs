//! The stdio link on Unix: a process group per server, non-blocking pipes
//! polled by the waiting thread, signals to end the group.

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, ChildStdout, Command};
use std::time::{Duration, Instant};

use super::{ClientError, Got, StdioSpec};

/// The program to start: looked up on the PATH by `Command` itself.
pub(super) fn program(spec: &StdioSpec) -> String {
    spec.program.clone()
}

/// Its own process group; on Linux SIGTERM when R dies.
pub(super) fn configure(cmd: &mut Command) {
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
}

/// The child's process group.
pub(super) struct Proc {
    pid: i32,
}

impl Proc {
    pub(super) fn new(child: &Child) -> Proc {
        Proc { pid: child.id() as i32 }
    }

    /// How the child ended, without reaping it.
    pub(super) fn peek_exit(&mut self, _child: &mut Child) -> Option<(String, Option<i32>)> {
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
            Some(match info.si_code {
                libc::CLD_EXITED => (format!("exited with status {status}"), Some(status)),
                libc::CLD_KILLED | libc::CLD_DUMPED => (format!("was killed by signal {}", signal_name(status)), None),
                _ => ("ended".to_string(), None),
            })
        }
    }

    /// SIGTERM to the group.
    pub(super) fn terminate(&self) -> Option<&'static str> {
        self.signal(libc::SIGTERM);
        Some("SIGTERM")
    }

    /// SIGKILL to the group.
    pub(super) fn kill(&self) -> &'static str {
        self.signal(libc::SIGKILL);
        "sent SIGKILL"
    }

    /// SIGTERM to what is left of the group.
    pub(super) fn sweep(&self) {
        self.signal(libc::SIGTERM);
    }

    fn signal(&self, sig: i32) {
        // SAFETY: kill() on our child's process group.
        unsafe {
            libc::kill(-self.pid, sig);
        }
    }
}

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

/// The server's stdin, non-blocking.
pub(super) struct Input {
    file: File,
}

impl Input {
    pub(super) fn new(stdin: ChildStdin) -> io::Result<Input> {
        let fd: OwnedFd = stdin.into();
        let file = File::from(fd);
        set_nonblocking(file.as_raw_fd());
        Ok(Input { file })
    }

    /// Write all of `buf` by `deadline`. On failure: whether part of it was
    /// written (the stream is then broken), and why.
    pub(super) fn write_all(
        &mut self,
        buf: &[u8],
        deadline: Instant,
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<(), (bool, ClientError)> {
        let fd = self.file.as_raw_fd();
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
                        return Err((off > 0, ClientError::Timeout(Duration::ZERO)));
                    }
                    if interrupted() {
                        return Err((off > 0, ClientError::Interrupted));
                    }
                    let ms = deadline.saturating_duration_since(now).min(Duration::from_millis(25)).as_millis();
                    let mut p = libc::pollfd { fd, events: libc::POLLOUT, revents: 0 };
                    // SAFETY: one valid pollfd on the stack.
                    unsafe { libc::poll(&mut p, 1, ms.max(1) as i32) };
                }
                Some(libc::EPIPE) => {
                    return Err((false, ClientError::Closed("the server closed its standard input".into())))
                }
                _ => return Err((false, ClientError::Closed(format!("writing to the server failed: {err}")))),
            }
        }
        Ok(())
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

/// The server's stdout, non-blocking, polled by the waiting thread. Between
/// calls the pipe is not read: a server never writes much unasked.
pub(super) struct Pipe {
    file: File,
}

impl Pipe {
    pub(super) fn new(out: ChildStdout) -> io::Result<Pipe> {
        let fd: OwnedFd = out.into();
        let file = File::from(fd);
        set_nonblocking(file.as_raw_fd());
        Ok(Pipe { file })
    }

    /// Read what is there, waiting up to `ms` milliseconds for something.
    pub(super) fn read(&mut self, buf: &mut [u8], ms: i32) -> Got {
        let mut polled = ms <= 0;
        loop {
            match self.file.read(buf) {
                Ok(0) => return Got::Eof,
                Ok(n) => return Got::Data(n),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if polled {
                        return Got::Nothing;
                    }
                    polled = true;
                    let mut p = libc::pollfd { fd: self.file.as_raw_fd(), events: libc::POLLIN, revents: 0 };
                    // SAFETY: one valid pollfd on the stack.
                    if unsafe { libc::poll(&mut p, 1, ms) } <= 0 {
                        return Got::Nothing;
                    }
                }
                Err(e) => return Got::Failed(e.to_string()),
            }
        }
    }
}
