//! The platform pieces of the worker pool: starting a worker process with
//! its two pipes on descriptors 3 and 4, waiting for a pipe with a timeout,
//! and saying how a process ended. Unix only: on other platforms
//! [`spawn`] reports that workers are not available.

use std::fs::File;
use std::io;
use std::process::{Child, ExitStatus};

use super::pool::WorkerCommand;

/// Descriptor on which a worker reads the engine's frames.
pub const WORKER_IN_FD: i32 = 3;
/// Descriptor on which a worker writes its frames.
pub const WORKER_OUT_FD: i32 = 4;

/// A started worker: the process, the pipe to it and the pipe from it.
pub struct Spawned {
    pub child: Child,
    pub to: File,
    pub from: File,
}

#[cfg(unix)]
mod imp {
    use super::*;
    use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd, RawFd};
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    use std::process::{Command, Stdio};

    /// A pipe whose two ends are close-on-exec and numbered at least 10,
    /// so that moving them to 3 and 4 in the child cannot clobber each other.
    fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
        let mut fds = [0; 2];
        // SAFETY: pipe() fills two descriptors on success.
        if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: both descriptors are ours and open.
        let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        Ok((high(r)?, high(w)?))
    }

    fn high(fd: OwnedFd) -> io::Result<OwnedFd> {
        // SAFETY: duplicating a descriptor we own.
        let n = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 10) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `n` is a new descriptor we own.
        Ok(unsafe { OwnedFd::from_raw_fd(n) })
    }

    #[cfg(target_os = "linux")]
    const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;

    pub fn spawn(cmd: &WorkerCommand, slot: usize) -> io::Result<Spawned> {
        let (in_r, in_w) = pipe()?;
        let (out_r, out_w) = pipe()?;
        let mut c = Command::new(&cmd.program);
        c.args(&cmd.args);
        if let Some(d) = &cmd.cwd {
            c.current_dir(d);
        }
        for (k, v) in &cmd.env {
            c.env(k, v);
        }
        c.env("MCPLITE_WORKER", (slot + 1).to_string());
        // Nothing a worker prints may reach the protocol stream: its
        // standard output is the server's standard error.
        let err = std::io::stderr().as_fd().try_clone_to_owned()?;
        c.stdin(Stdio::null()).stdout(Stdio::from(err)).stderr(Stdio::inherit());
        let (a, b): (RawFd, RawFd) = (in_r.as_raw_fd(), out_w.as_raw_fd());
        // SAFETY: getpid() has no preconditions.
        let parent = unsafe { libc::getpid() };
        // SAFETY: between fork and exec only async-signal-safe calls:
        // dup2, sigprocmask, signal, prctl, getppid, raise.
        unsafe {
            c.pre_exec(move || {
                if libc::dup2(a, WORKER_IN_FD) < 0 || libc::dup2(b, WORKER_OUT_FD) < 0 {
                    return Err(io::Error::last_os_error());
                }
                // The spawning thread blocks every signal: the worker starts
                // with none blocked, and with SIGPIPE at its default.
                let mut none: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut none);
                libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
                libc::signal(libc::SIGPIPE, libc::SIG_DFL);
                // Descriptors the server left inheritable (its client's
                // pipes, files R opened) are not the worker's business: only
                // 0 to 4 survive the exec (Linux 5.11+; elsewhere close-on-exec
                // is all there is).
                #[cfg(target_os = "linux")]
                libc::syscall(libc::SYS_close_range, 5u32, u32::MAX, CLOSE_RANGE_CLOEXEC);
                // Killed with the thread that started it (the pool's own,
                // which lives as long as the server), also when the server
                // is killed with SIGKILL.
                #[cfg(target_os = "linux")]
                {
                    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                    if libc::getppid() != parent {
                        libc::raise(libc::SIGKILL);
                    }
                }
                let _ = parent;
                Ok(())
            });
        }
        let child = c.spawn()?;
        drop((in_r, out_w));
        Ok(Spawned { child, to: File::from(in_w), from: File::from(out_r) })
    }

    /// Wait until `f` is readable (or at EOF) for up to `ms` milliseconds
    /// (negative: no limit). False on timeout.
    pub fn readable(f: &File, ms: i32) -> bool {
        let mut p = libc::pollfd { fd: f.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        loop {
            // SAFETY: one valid pollfd on the stack.
            let r = unsafe { libc::poll(&mut p, 1, ms) };
            if r < 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return r != 0;
        }
    }

    pub fn set_nonblocking(f: &File) {
        // SAFETY: fcntl on a descriptor we own.
        unsafe {
            let fd = f.as_raw_fd();
            let flags = libc::fcntl(fd, libc::F_GETFL);
            if flags >= 0 {
                libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
            }
        }
    }

    /// Take descriptors 3 and 4 (a worker's pipes) as close-on-exec files on
    /// other numbers, so that processes the tools start do not inherit them.
    pub fn take_worker_fds() -> io::Result<(File, File)> {
        let take = |fd: RawFd| -> io::Result<File> {
            // SAFETY: fcntl on a descriptor number; failure is reported.
            let n = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 10) };
            if n < 0 {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: `fd` was open (dup succeeded) and is ours to close;
            // `n` is a new descriptor we own.
            unsafe {
                libc::close(fd);
                Ok(File::from_raw_fd(n))
            }
        };
        Ok((take(WORKER_IN_FD)?, take(WORKER_OUT_FD)?))
    }

    pub fn describe(status: ExitStatus) -> String {
        if let Some(code) = status.code() {
            return format!("exited with status {code}");
        }
        match status.signal() {
            Some(sig) => format!("was killed by signal {sig} ({})", signal_name(sig)),
            None => "ended".into(),
        }
    }

    fn signal_name(sig: i32) -> &'static str {
        match sig {
            libc::SIGHUP => "SIGHUP",
            libc::SIGINT => "SIGINT",
            libc::SIGQUIT => "SIGQUIT",
            libc::SIGILL => "SIGILL",
            libc::SIGABRT => "SIGABRT",
            libc::SIGBUS => "SIGBUS",
            libc::SIGFPE => "SIGFPE",
            libc::SIGKILL => "SIGKILL, for example by the out-of-memory killer",
            libc::SIGSEGV => "SIGSEGV, a crash in compiled code",
            libc::SIGPIPE => "SIGPIPE",
            libc::SIGTERM => "SIGTERM",
            libc::SIGXCPU => "SIGXCPU, a CPU time limit",
            _ => "a signal",
        }
    }

    /// Send SIGKILL.
    pub fn kill(child: &mut Child) {
        let _ = child.kill();
    }
}

#[cfg(not(unix))]
mod imp {
    use super::*;

    fn unsupported() -> io::Error {
        io::Error::new(io::ErrorKind::Unsupported, "worker processes are available on Linux and macOS only")
    }

    pub fn spawn(_cmd: &WorkerCommand, _slot: usize) -> io::Result<Spawned> {
        Err(unsupported())
    }

    pub fn readable(_f: &File, _ms: i32) -> bool {
        true
    }

    pub fn set_nonblocking(_f: &File) {}

    pub fn take_worker_fds() -> io::Result<(File, File)> {
        Err(unsupported())
    }

    pub fn describe(status: ExitStatus) -> String {
        match status.code() {
            Some(code) => format!("exited with status {code}"),
            None => "ended".into(),
        }
    }

    pub fn kill(child: &mut Child) {
        let _ = child.kill();
    }
}

pub use imp::{describe, kill, readable, set_nonblocking, spawn, take_worker_fds};
