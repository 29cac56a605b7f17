//! The platform pieces of the worker pool: starting a worker process with
//! its two pipes on descriptors 3 and 4, waiting for a pipe with a timeout,
//! and saying how a process ended. Unix only: on other platforms
//! [`spawn`] reports that workers are not available.

use std::ffi::OsString;
use std::fs::File;
use std::io;
use std::path::PathBuf;
use std::process::{Child, ExitStatus};

/// How a worker is started: the program, its arguments, its working
/// directory and the environment added to the server's. The pool adds
/// `MCPLITE_WORKER=<number>`; the pipes are descriptors 3 (from the engine)
/// and 4 (to the engine).
#[derive(Debug, Clone, Default)]
pub struct WorkerCommand {
    pub program: PathBuf,
    pub args: Vec<OsString>,
    pub cwd: Option<PathBuf>,
    pub env: Vec<(OsString, OsString)>,
    /// When set, each worker gets a directory of its own beneath it as its
    /// `TMPDIR` (so R's temporary directory is in it), removed when the
    /// worker has ended, however it ended (RULES N6.4).
    pub tmp_root: Option<PathBuf>,
}

/// Descriptor on which a worker reads the engine's frames.
pub const WORKER_IN_FD: i32 = 3;
/// Descriptor on which a worker writes its frames.
pub const WORKER_OUT_FD: i32 = 4;

/// How long a worker's unfinished line waits for the rest before it is
/// written as it is (milliseconds).
#[cfg(unix)]
pub const PARTIAL_LINE_MS: i32 = 2000;
/// An unfinished line longer than this is written as it is.
#[cfg(unix)]
pub const MAX_PARTIAL_LINE: usize = 64 * 1024;

/// Where [`forward_lines`] writes: each call's bytes at once, with nothing
/// else written in between.
#[cfg(unix)]
pub trait WriteLocked {
    fn write_locked(&mut self, bytes: &[u8]);
}

#[cfg(unix)]
impl WriteLocked for io::Stderr {
    fn write_locked(&mut self, bytes: &[u8]) {
        use std::io::Write;
        let mut e = self.lock();
        let _ = e.write_all(bytes);
        let _ = e.flush();
    }
}

/// A started worker: the process, the pipe to it and the pipe from it.
pub struct Spawned {
    pub child: Child,
    pub to: File,
    pub from: File,
    /// The thread writing what the worker prints to stderr.
    pub output: Option<std::thread::JoinHandle<()>>,
    /// Its `TMPDIR` (see [`WorkerCommand::tmp_root`]).
    pub tmp: Option<PathBuf>,
}

#[cfg(unix)]
mod imp {
    use super::*;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
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
        let tmp = match &cmd.tmp_root {
            Some(root) => {
                static STARTED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
                let n = STARTED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let d = root.join(format!("worker-{}-{n}", slot + 1));
                std::fs::create_dir_all(&d)?;
                c.env("TMPDIR", &d);
                Some(d)
            }
            None => None,
        };
        c.env("MCPLITE_WORKER", (slot + 1).to_string());
        // Nothing a worker prints may reach the protocol stream: its
        // standard output and error go to the server's standard error, in
        // whole lines (RULES N1, T8), through a pipe the engine reads.
        let (log_r, log_w) = pipe()?;
        c.stdin(Stdio::null()).stdout(Stdio::from(log_w.try_clone()?)).stderr(Stdio::from(log_w));
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
        // The command holds the parent's copies of the output pipe's write
        // end: dropped, the forwarder sees the end when the worker (and
        // whatever it started) has closed it.
        drop(c);
        let log = File::from(log_r);
        let output = std::thread::Builder::new()
            .name(format!("mcplite-worker-{}-output", slot + 1))
            .spawn(move || forward_lines(log, &mut std::io::stderr()))?;
        drop((in_r, out_w));
        Ok(Spawned { child, to: File::from(in_w), from: File::from(out_r), output: Some(output), tmp })
    }

    /// Copy what a worker prints to `out` in whole lines, each written at
    /// once under the standard error's lock, so that no line of the
    /// engine's (a span, a metric export, an access log line: RULES T8)
    /// lands inside a line a tool is printing in pieces. A line left
    /// unfinished goes out as it is after [`PARTIAL_LINE_MS`] without more
    /// output (a tool's `cat("working... ")` is not held back for ever),
    /// and at the end.
    pub(crate) fn forward_lines(mut src: File, out: &mut impl WriteLocked) {
        use std::io::Read;
        let mut pending: Vec<u8> = Vec::new();
        let mut chunk = vec![0u8; 16 * 1024];
        loop {
            if !pending.is_empty() && !readable(&src, PARTIAL_LINE_MS) {
                out.write_locked(&pending);
                pending.clear();
                continue;
            }
            match src.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => {
                    pending.extend_from_slice(&chunk[..n]);
                    if let Some(end) = pending.iter().rposition(|&b| b == b'\n') {
                        out.write_locked(&pending[..=end]);
                        pending.drain(..=end);
                    }
                    if pending.len() > MAX_PARTIAL_LINE {
                        out.write_locked(&pending);
                        pending.clear();
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        if !pending.is_empty() {
            out.write_locked(&pending);
        }
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

/// What [`limit_cpu`] keeps between the calls of one worker: its `stat`
/// file, open (read again from the start each time), its hard limit, and
/// the soft limit last set (unchanged limits are not set again).
#[derive(Debug)]
pub struct CpuLimit {
    #[cfg(target_os = "linux")]
    stat: File,
    #[cfg(target_os = "linux")]
    max: u64,
    #[cfg(target_os = "linux")]
    set: u64,
}

/// Let process `pid` use at most `limit` more CPU time from now (RULES
/// N7.5): its soft `RLIMIT_CPU` becomes the CPU time it has used plus
/// `limit`, rounded up to a second (the kernel then sends it SIGXCPU, which
/// ends it). `state` is the worker's, `None` before its first call. Linux
/// only (the CPU time used comes from `/proc`); an error elsewhere, or when
/// the limit cannot be set.
pub fn limit_cpu(pid: u32, limit: std::time::Duration, state: &mut Option<CpuLimit>) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::FileExt;
        if state.is_none() {
            let stat = File::open(format!("/proc/{pid}/stat"))?;
            let mut old = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
            // SAFETY: prlimit(2) on a child of ours, reading into `old`, which we own.
            if unsafe { libc::prlimit(pid as libc::pid_t, libc::RLIMIT_CPU, std::ptr::null(), &mut old) } != 0 {
                return Err(io::Error::last_os_error());
            }
            *state = Some(CpuLimit { stat, max: old.rlim_max, set: 0 });
        }
        let st = state.as_mut().expect("set above");
        let mut buf = [0u8; 1024];
        let n = st.stat.read_at(&mut buf, 0)?;
        let stat = String::from_utf8_lossy(&buf[..n]);
        // Fields after the command name (which may hold spaces), from its ")".
        let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
        let mut fields = rest.split_whitespace();
        // utime and stime are fields 14 and 15 of the line: 12 and 13 here.
        let mut num = |skip: usize| fields.nth(skip).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
        let ticks = num(11) + num(0);
        // SAFETY: sysconf has no preconditions.
        let hz = u64::try_from(unsafe { libc::sysconf(libc::_SC_CLK_TCK) }).unwrap_or(100).max(1);
        let want = (ticks.div_ceil(hz) + limit.as_secs().max(1)).min(st.max);
        if want == st.set {
            return Ok(());
        }
        let new = libc::rlimit { rlim_cur: want, rlim_max: st.max };
        // SAFETY: prlimit(2) on a child of ours, reading `new`, which lives for the call.
        if unsafe { libc::prlimit(pid as libc::pid_t, libc::RLIMIT_CPU, &new, std::ptr::null_mut()) } != 0 {
            return Err(io::Error::last_os_error());
        }
        st.set = want;
        Ok(())
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (pid, limit, state);
        Err(io::Error::new(io::ErrorKind::Unsupported, "CPU time limits need Linux"))
    }
}

/// The resident memory of process `pid` in bytes (RULES N5.3), where the
/// system says it cheaply (Linux: `/proc/<pid>/statm`); `None` elsewhere.
pub fn resident_bytes(pid: u32) -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        let statm = std::fs::read_to_string(format!("/proc/{pid}/statm")).ok()?;
        let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        u64::try_from(page).ok().map(|p| pages * p)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pid;
        None
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::imp::forward_lines;
    use super::*;
    use std::io::Write;
    use std::os::fd::FromRawFd;
    use std::sync::mpsc;
    use std::time::{Duration, Instant};

    /// Records each write as one piece.
    struct Pieces(mpsc::Sender<Vec<u8>>);
    impl WriteLocked for Pieces {
        fn write_locked(&mut self, bytes: &[u8]) {
            let _ = self.0.send(bytes.to_vec());
        }
    }

    fn pipe() -> (File, File) {
        let mut fds = [0; 2];
        // SAFETY: pipe() fills two descriptors on success.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        // SAFETY: both are new descriptors we own.
        unsafe { (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) }
    }

    #[test]
    fn n1_worker_output_is_forwarded_in_whole_lines() {
        let (r, mut w) = pipe();
        let (tx, rx) = mpsc::channel();
        let t = std::thread::spawn(move || forward_lines(r, &mut Pieces(tx)));
        // A line printed in pieces with pauses shorter than the partial-line
        // wait comes out whole, with the next line started in the same write
        // held back until it ends.
        for piece in [&b"[1]"[..], b" 1", b" 2", b"\n[2]", b" 3\nlast"] {
            w.write_all(piece).unwrap();
            std::thread::sleep(Duration::from_millis(30));
        }
        assert_eq!(rx.recv_timeout(Duration::from_secs(5)).unwrap(), b"[1] 1 2\n");
        assert_eq!(rx.recv_timeout(Duration::from_secs(5)).unwrap(), b"[2] 3\n");
        // An unfinished line goes out after the partial-line wait.
        let t0 = Instant::now();
        assert_eq!(rx.recv_timeout(Duration::from_secs(10)).unwrap(), b"last");
        assert!(t0.elapsed() >= Duration::from_millis(PARTIAL_LINE_MS as u64 - 200));
        // And what is left at the end goes out too.
        w.write_all(b"tail without newline").unwrap();
        drop(w);
        assert_eq!(rx.recv_timeout(Duration::from_secs(5)).unwrap(), b"tail without newline");
        t.join().unwrap();
        assert!(rx.try_recv().is_err());
    }

    #[test]
    fn n1_an_endless_line_is_written_in_bounded_pieces() {
        let (r, mut w) = pipe();
        let (tx, rx) = mpsc::channel();
        let t = std::thread::spawn(move || forward_lines(r, &mut Pieces(tx)));
        let writer = std::thread::spawn(move || {
            w.write_all(&vec![b'x'; 3 * MAX_PARTIAL_LINE]).unwrap();
        });
        writer.join().unwrap();
        t.join().unwrap();
        let pieces: Vec<Vec<u8>> = rx.try_iter().collect();
        assert_eq!(pieces.iter().map(Vec::len).sum::<usize>(), 3 * MAX_PARTIAL_LINE);
        assert!(pieces.iter().all(|p| p.len() <= MAX_PARTIAL_LINE + 16 * 1024));
    }
}
