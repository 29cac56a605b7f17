//! Descriptor protection while serving (RULES S1, S2): the protocol gets
//! private copies of fd 0 and fd 1 that child processes do not inherit; fd 1
//! then points at stderr and fd 0 at the null device, so nothing a tool
//! prints or reads can touch the protocol streams. A client that closes its
//! end shows up as a failed write (RULES S4), never as a killed process.
//!
//! Unix (Linux, macOS): `fcntl(F_DUPFD_CLOEXEC)`, `dup2`, `/dev/null`,
//! SIGPIPE ignored, the reader thread started with every signal blocked.
//!
//! Windows: the C runtime's `_dup`/`_dup2` on fds 0 and 1 (R's `cat()` and
//! C `printf` write to fd 1 of the C runtime), the process's standard
//! handles (`SetStdHandle`, which child processes started by `system()` and
//! `system2()` inherit) updated to match, the `NUL` device, and private
//! protocol handles duplicated without inheritance. Windows has no SIGPIPE
//! (a write to a closed pipe fails with `ERROR_NO_DATA`) and delivers
//! console Ctrl-C and Ctrl-Break on a thread the system creates, so no
//! signal mask is needed. Ctrl-C reaches R's own handler (a tool call is
//! interrupted, as on Unix); Ctrl-Break, which would end the process by
//! default, is turned into the same interrupt while serving.

#[cfg(unix)]
pub use unix::{spawn_reader_masked, StdioGuard};
#[cfg(windows)]
pub use windows::{spawn_reader_masked, StdioGuard};

impl Drop for StdioGuard {
    fn drop(&mut self) {
        self.restore();
    }
}

fn flush_all() {
    crate::rapi::flush_console();
}

#[cfg(unix)]
mod unix {
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

    impl StdioGuard {
        /// Redirect fds 0 and 1; returns the private request reader and
        /// protocol writer.
        pub fn install() -> io::Result<(StdioGuard, File, File)> {
            super::flush_all();
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
            super::flush_all();
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

    /// Spawn the reader thread with every signal blocked, so R's handlers
    /// never run on it: they touch R's state, which belongs to the main
    /// thread (a SIGINT handled on the reader would set R's interrupt flag
    /// from another thread, or be lost).
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
}

#[cfg(windows)]
mod windows {
    use std::ffi::{c_char, c_int};
    use std::fs::File;
    use std::io;
    use std::os::windows::io::FromRawHandle;

    use windows_sys::core::BOOL;
    use windows_sys::Win32::Foundation::{
        DuplicateHandle, SetHandleInformation, DUPLICATE_SAME_ACCESS, HANDLE, HANDLE_FLAG_INHERIT, INVALID_HANDLE_VALUE,
    };
    use windows_sys::Win32::System::Console::{
        SetConsoleCtrlHandler, SetStdHandle, CTRL_BREAK_EVENT, STD_HANDLE, STD_INPUT_HANDLE, STD_OUTPUT_HANDLE,
    };
    use windows_sys::Win32::System::Threading::GetCurrentProcess;

    // The C runtime's descriptor functions (the CRT R itself uses: the one
    // the package is linked against).
    extern "C" {
        fn _dup(fd: c_int) -> c_int;
        fn _dup2(from: c_int, to: c_int) -> c_int;
        fn _close(fd: c_int) -> c_int;
        fn _open(path: *const c_char, flags: c_int, ...) -> c_int;
        fn _get_osfhandle(fd: c_int) -> isize;
    }

    const O_RDONLY: c_int = 0;
    const O_NOINHERIT: c_int = 0x0080;

    pub struct StdioGuard {
        saved_in: c_int,
        saved_out: c_int,
        restored: bool,
    }

    fn crt_error(what: &str) -> io::Error {
        io::Error::other(format!("{what} failed: {}", io::Error::last_os_error()))
    }

    /// A private, non-inheritable duplicate of the OS handle behind CRT
    /// descriptor `fd`, as a `File`.
    fn private_handle(fd: c_int) -> io::Result<File> {
        // SAFETY: _get_osfhandle only looks the descriptor up; the handle
        // is duplicated, never closed here.
        unsafe {
            let h = _get_osfhandle(fd) as HANDLE;
            if h == INVALID_HANDLE_VALUE || h.is_null() || h as isize == -2 {
                return Err(io::Error::other(format!("descriptor {fd} is not open (no console or pipe)")));
            }
            let me = GetCurrentProcess();
            let mut dup: HANDLE = std::ptr::null_mut();
            if DuplicateHandle(me, h, me, &mut dup, 0, 0, DUPLICATE_SAME_ACCESS) == 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(File::from_raw_handle(dup))
        }
    }

    /// A CRT duplicate of `fd` that child processes do not inherit.
    fn dup_private(fd: c_int) -> io::Result<c_int> {
        // SAFETY: plain CRT calls on descriptor numbers.
        unsafe {
            let d = _dup(fd);
            if d < 0 {
                return Err(crt_error("_dup"));
            }
            SetHandleInformation(_get_osfhandle(d) as HANDLE, HANDLE_FLAG_INHERIT, 0);
            Ok(d)
        }
    }

    /// Point the process's standard handle `which` at CRT descriptor `fd`.
    fn sync_std_handle(which: STD_HANDLE, fd: c_int) {
        // SAFETY: the handle stays owned by the CRT descriptor.
        unsafe {
            SetStdHandle(which, _get_osfhandle(fd) as HANDLE);
        }
    }

    /// Ctrl-Break while serving: the interrupt Ctrl-C gives (R's SIGINT
    /// handler sets R's interrupt flag, which the serving thread checks)
    /// instead of ending the process. Everything else goes on to the next
    /// handler (the C runtime's, which runs R's for Ctrl-C).
    unsafe extern "system" fn on_console_event(event: u32) -> BOOL {
        if event == CTRL_BREAK_EVENT {
            // SAFETY: raise() runs the C runtime's SIGINT handler on this
            // thread, as the C runtime does itself for Ctrl-C.
            unsafe {
                libc::raise(libc::SIGINT);
            }
            return 1;
        }
        0
    }

    impl StdioGuard {
        /// Redirect fds 0 and 1 and the standard handles; returns the
        /// private request reader and protocol writer.
        pub fn install() -> io::Result<(StdioGuard, File, File)> {
            super::flush_all();
            let proto_in = private_handle(0)?;
            let proto_out = private_handle(1)?;
            let saved_in = dup_private(0)?;
            let saved_out = dup_private(1)?;
            // SAFETY: descriptors are valid; NUL is opened read-only.
            unsafe {
                if _dup2(2, 1) < 0 {
                    let e = crt_error("_dup2");
                    _close(saved_in);
                    _close(saved_out);
                    return Err(e);
                }
                sync_std_handle(STD_OUTPUT_HANDLE, 1);
                let null = _open(c"NUL".as_ptr(), O_RDONLY | O_NOINHERIT);
                if null >= 0 {
                    _dup2(null, 0);
                    _close(null);
                    sync_std_handle(STD_INPUT_HANDLE, 0);
                }
                SetConsoleCtrlHandler(Some(on_console_event), 1);
            }
            Ok((StdioGuard { saved_in, saved_out, restored: false }, proto_in, proto_out))
        }

        pub fn restore(&mut self) {
            if self.restored {
                return;
            }
            self.restored = true;
            super::flush_all();
            // SAFETY: saved descriptors were created by install().
            unsafe {
                SetConsoleCtrlHandler(Some(on_console_event), 0);
                _dup2(self.saved_out, 1);
                _dup2(self.saved_in, 0);
                _close(self.saved_out);
                _close(self.saved_in);
                sync_std_handle(STD_OUTPUT_HANDLE, 1);
                sync_std_handle(STD_INPUT_HANDLE, 0);
            }
        }
    }

    /// Windows delivers no POSIX signals to threads: the reader starts as
    /// it is.
    pub fn spawn_reader_masked(input: File) -> mcplite_engine::transport::Reader {
        mcplite_engine::transport::Reader::spawn(input)
    }
}

/// Large results (10 MB of text, a big data frame) pass through several
/// buffers of their size. With glibc's defaults each of them is mmap()ed and
/// munmap()ed per call, and page faults dominate the cost; raising the
/// thresholds keeps such buffers in the heap between calls. Bounded: at most
/// 256 MB of freed memory stays mapped. Called once when serving starts.
/// Only glibc has these knobs; elsewhere (macOS, musl, Windows) the
/// allocator's defaults stay.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn keep_large_buffers() {
    // SAFETY: mallopt only tunes glibc's allocator.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 64 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 256 << 20);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn keep_large_buffers() {}
