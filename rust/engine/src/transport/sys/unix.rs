//! Unix: `poll(2)` on the request stream's file descriptor, `fflush(NULL)`.
//! The stream itself is read directly.

use std::fs::File;
use std::os::unix::io::{AsRawFd, RawFd};

/// The request stream as the reader reads it: the file itself.
pub type Source = File;

/// The readiness check and the stream to read, for `input`.
pub fn open(input: File) -> (Readiness, Source) {
    (Readiness { fd: input.as_raw_fd() }, input)
}

/// Waits for the request stream to become readable. Holds the raw file
/// descriptor of the [`Source`], which the reader keeps open for as long as
/// the `Readiness` is used.
#[derive(Debug, Clone, Copy)]
pub struct Readiness {
    fd: RawFd,
}

impl Readiness {
    /// Wait until the stream is readable (or at EOF, or failed) or `ms`
    /// milliseconds passed; `0` only checks. Returns false on timeout.
    pub fn wait(&self, ms: i32) -> bool {
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
