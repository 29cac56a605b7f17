//! File-descriptor protection while serving (RULES S1, S2): the protocol gets
//! private close-on-exec copies of fd 0 and fd 1; fd 1 then points at stderr
//! and fd 0 at /dev/null, so nothing a tool prints or reads can touch the
//! protocol streams. SIGPIPE is ignored so a closed client shows up as EPIPE.

use std::fs::File;
use std::io;
use std::os::unix::io::FromRawFd;

pub struct StdioGuard {
    saved_in: i32,
    saved_out: i32,
    old_sigpipe: libc::sighandler_t,
    restored: bool,
}

fn dup_cloexec(fd: i32) -> io::Result<i32> {
    // SAFETY: plain fcntl on a descriptor number.
    let r = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

fn flush_all() {
    crate::rapi::flush_console();
}

impl StdioGuard {
    /// Redirect fds 0 and 1; returns the private request reader and protocol
    /// writer.
    pub fn install() -> io::Result<(StdioGuard, File, File)> {
        flush_all();
        let proto_in = dup_cloexec(0)?;
        let proto_out = dup_cloexec(1)?;
        let saved_in = dup_cloexec(0)?;
        let saved_out = dup_cloexec(1)?;
        // SAFETY: descriptors are valid; /dev/null is opened read-only.
        unsafe {
            if libc::dup2(2, 1) < 0 {
                return Err(io::Error::last_os_error());
            }
            let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
            if null >= 0 {
                libc::dup2(null, 0);
                libc::close(null);
            }
            let old_sigpipe = libc::signal(libc::SIGPIPE, libc::SIG_IGN);
            Ok((
                StdioGuard { saved_in, saved_out, old_sigpipe, restored: false },
                File::from_raw_fd(proto_in),
                File::from_raw_fd(proto_out),
            ))
        }
    }

    pub fn restore(&mut self) {
        if self.restored {
            return;
        }
        self.restored = true;
        flush_all();
        // SAFETY: saved descriptors were created by install().
        unsafe {
            libc::dup2(self.saved_out, 1);
            libc::dup2(self.saved_in, 0);
            libc::close(self.saved_out);
            libc::close(self.saved_in);
            libc::signal(libc::SIGPIPE, self.old_sigpipe);
        }
    }
}

impl Drop for StdioGuard {
    fn drop(&mut self) {
        self.restore();
    }
}

/// Spawn the reader thread with every signal blocked, so R's handlers never
/// run on it: they touch R's state, which belongs to the main thread (a
/// SIGINT handled on the reader would set R's interrupt flag from another
/// thread, or be lost).
pub fn spawn_reader_masked(input: File) -> mcplite_engine::transport::Reader {
    // SAFETY: sigset manipulation on stack values.
    unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_BLOCK, &all, &mut old);
        let r = mcplite_engine::transport::Reader::spawn(input);
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        r
    }
}

/// Large results (10 MB of text, a big data frame) pass through several
/// buffers of their size. With glibc's defaults each of them is mmap()ed and
/// munmap()ed per call, and page faults dominate the cost; raising the
/// thresholds keeps such buffers in the heap between calls. Bounded: at most
/// 256 MB of freed memory stays mapped. Called once when serving starts.
pub fn keep_large_buffers() {
    // SAFETY: mallopt only tunes glibc's allocator.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 64 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 256 << 20);
    }
}
