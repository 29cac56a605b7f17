//! Anonymous pipes for the transport tests: the client's ends of a
//! server's stdin and stdout.

use std::fs::File;

/// An anonymous pipe: (read end, write end).
#[cfg(unix)]
pub fn pipe() -> (File, File) {
    use std::os::unix::io::FromRawFd;
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe() writes.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: both descriptors were just opened by pipe() and are owned by
    // nothing else.
    unsafe { (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) }
}

/// An anonymous pipe: (read end, write end), as a client's stdin and
/// stdout are on Windows.
#[cfg(windows)]
pub fn pipe() -> (File, File) {
    use std::os::windows::io::FromRawHandle;
    use windows_sys::Win32::System::Pipes::CreatePipe;
    let mut r = std::ptr::null_mut();
    let mut w = std::ptr::null_mut();
    // SAFETY: `r` and `w` are valid places for the two handles; no security
    // attributes, the default buffer size.
    assert_ne!(unsafe { CreatePipe(&mut r, &mut w, std::ptr::null(), 0) }, 0);
    // SAFETY: both handles were just created by CreatePipe() and are owned
    // by nothing else.
    unsafe { (File::from_raw_handle(r), File::from_raw_handle(w)) }
}
