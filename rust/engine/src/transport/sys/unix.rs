//! Unix: `poll(2)` on the request stream's file descriptor, `fflush(NULL)`.

use std::fs::File;
use std::os::unix::io::{AsRawFd, RawFd};

/// Waits for the request stream to become readable. Holds the raw file
/// descriptor of a [`File`] that the caller keeps open for as long as the
/// `Readiness` is used.
#[derive(Debug, Clone, Copy)]
pub struct Readiness {
    fd: RawFd,
}

impl Readiness {
    pub fn new(input: &File) -> Readiness {
        Readiness { fd: input.as_raw_fd() }
    }

    /// Wait until the stream is readable (or at EOF, or failed) or `ms`
    /// milliseconds passed; `0` only checks. Returns false on timeout.
    pub fn wait(self, ms: i32) -> bool {
        let mut p = libc::pollfd { fd: self.fd, events: libc::POLLIN, revents: 0 };
        // SAFETY: one valid pollfd on the stack; poll() only reads the fd
        // number and writes `revents`.
        let r = unsafe { libc::poll(&mut p, 1, ms) };
        r != 0
    }
}

/// Flush every C stdio output stream (`fflush(NULL)`).
pub fn flush_c_stdio() {
    // SAFETY: fflush(NULL) flushes every open C output stream.
    unsafe {
        libc::fflush(std::ptr::null_mut());
    }
}
