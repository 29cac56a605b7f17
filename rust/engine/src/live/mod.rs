//! Live R sessions (RULES R10): an interactive R session that called
//! `mcp_session()` listens on a Unix-domain socket in a directory only its
//! user can reach, and a server started with `session_tools = TRUE` sends
//! it tool calls to run in its global environment.
//!
//! Pure Rust, no R: the R sides are `rust/mcplite-r/src/live.rs` (the
//! session's input handler, the server's waiting) and `R/live-session.R`.
//!
//! * [`dir`]: the per-user directory, created `0700` and verified (owner,
//!   mode, not a symbolic link) before every use.
//! * [`frame`]: the framing on the socket (a JSON header and a binary body).
//! * [`listen`]: the session's side: accepting connections (peer checked to
//!   be the same user), a queue of calls that R's main thread takes when it
//!   is idle at the prompt, info and cancellation answered without R.
//! * [`connect`]: the server's side: listing the sessions, connecting, and
//!   one call from start to result (wait while the session is busy, give up
//!   after a time, stop when interrupted).
//!
//! Unix only; on Windows `mcp_session()` says it is not provided.

pub mod connect;
pub mod dir;
pub mod frame;
pub mod listen;

/// Version of the message exchange on the socket; both sides refuse a peer
/// of another version (a session and a server from different mcplite
/// builds).
pub const PROTOCOL: u64 = 1;

use std::io;
use std::os::unix::io::AsRawFd;
use std::os::unix::net::UnixStream;

/// The user id of the process at the other end of a connected socket.
pub fn peer_uid(stream: &UnixStream) -> io::Result<u32> {
    let fd = stream.as_raw_fd();
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        let mut cred: libc::ucred = libc::ucred { pid: 0, uid: 0, gid: 0 };
        let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
        // SAFETY: `cred` and `len` are valid for writes of the sizes given.
        let rc = unsafe {
            libc::getsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_PEERCRED,
                &mut cred as *mut _ as *mut libc::c_void,
                &mut len,
            )
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(cred.uid)
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let mut uid: libc::uid_t = 0;
        let mut gid: libc::gid_t = 0;
        // SAFETY: valid out pointers.
        if unsafe { libc::getpeereid(fd, &mut uid, &mut gid) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(uid)
    }
}

/// The effective user id of this process.
pub fn my_uid() -> u32 {
    // SAFETY: always succeeds.
    unsafe { libc::geteuid() }
}

/// Refuse a peer that is not this user (the directory's permissions already
/// keep others out; this is the second lock).
pub fn check_peer(stream: &UnixStream) -> io::Result<()> {
    let peer = peer_uid(stream)?;
    if peer != my_uid() {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("the peer runs as user id {peer}, not {}", my_uid()),
        ));
    }
    Ok(())
}

/// Writing to a socket whose peer is gone must give `EPIPE`, never SIGPIPE
/// (R's handler would raise an R error on R's thread). macOS has no
/// `MSG_NOSIGNAL`: the socket option does it there.
pub(crate) fn no_sigpipe(stream: &UnixStream) {
    #[cfg(any(target_os = "macos", target_os = "ios", target_os = "freebsd"))]
    {
        let one: libc::c_int = 1;
        // SAFETY: a valid option value of the size given.
        unsafe {
            libc::setsockopt(
                stream.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_NOSIGPIPE,
                &one as *const _ as *const libc::c_void,
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            );
        }
    }
    #[cfg(not(any(target_os = "macos", target_os = "ios", target_os = "freebsd")))]
    let _ = stream;
}

/// `send()` every byte, without SIGPIPE (see [`no_sigpipe`]).
pub(crate) fn send_all(stream: &UnixStream, mut buf: &[u8]) -> io::Result<()> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let flags = libc::MSG_NOSIGNAL;
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let flags = 0;
    while !buf.is_empty() {
        // SAFETY: `buf` is valid for reads of its length.
        let n = unsafe { libc::send(stream.as_raw_fd(), buf.as_ptr() as *const libc::c_void, buf.len(), flags) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if n == 0 {
            return Err(io::Error::new(io::ErrorKind::WriteZero, "the socket accepted no bytes"));
        }
        buf = &buf[n as usize..];
    }
    Ok(())
}
