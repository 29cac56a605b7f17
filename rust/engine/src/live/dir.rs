//! The per-user directory of live sessions (RULES R10.2).
//!
//! A session uses `MCPLITE_SESSION_DIR` when set; else `$XDG_RUNTIME_DIR/mcplite` when
//! `XDG_RUNTIME_DIR` is a directory only this user can reach (systemd makes
//! it so); else `mcplite-<uid>` in `TMPDIR` (or `/tmp`). The directory is
//! created with mode `0700` and, created or found, used only if it is a real
//! directory (not a symbolic link) owned by this user with no permission
//! bits for group or others. Both sides check it before every use: a
//! session before it binds its socket, a server before it lists or
//! connects. A server looks in every one of these that exists
//! ([`existing`]).

use std::fmt;
use std::fs::{self, DirBuilder};
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};

use super::my_uid;

/// The variable that names the directory (tests, unusual set-ups).
pub const DIR_ENV: &str = "MCPLITE_SESSION_DIR";

/// Longest socket path accepted: `sun_path` holds 108 bytes on Linux and
/// 104 on macOS, with the terminating NUL.
pub const MAX_SOCKET_PATH: usize = 100;

/// A directory that cannot be used, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirError {
    pub path: PathBuf,
    pub reason: String,
}

impl fmt::Display for DirError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the live-session directory {} cannot be used: {}", self.path.display(), self.reason)
    }
}

impl std::error::Error for DirError {}

fn env_nonempty(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// The directory this user's sessions live in (not checked): the first of
/// [`search_paths`].
pub fn path() -> PathBuf {
    search_paths().swap_remove(0)
}

/// Where a server looks for sessions: `MCPLITE_SESSION_DIR` alone when set;
/// else the `XDG_RUNTIME_DIR` directory (when that is private), the one in
/// `TMPDIR` and the one in `/tmp`, without repeats. An R session and a
/// server started from different environments (an IDE's R without
/// `XDG_RUNTIME_DIR`, a client with it) still find each other.
pub fn search_paths() -> Vec<PathBuf> {
    if let Some(d) = env_nonempty(DIR_ENV) {
        return vec![PathBuf::from(d)];
    }
    let leaf = format!("mcplite-{}", my_uid());
    let mut out = Vec::new();
    if let Some(x) = env_nonempty("XDG_RUNTIME_DIR") {
        let x = PathBuf::from(x);
        if x.is_absolute() && verify(&x).is_ok() {
            out.push(x.join("mcplite"));
        }
    }
    if let Some(t) = env_nonempty("TMPDIR") {
        out.push(PathBuf::from(t).join(&leaf));
    }
    let tmp = Path::new("/tmp").join(&leaf);
    if !out.contains(&tmp) {
        out.push(tmp);
    }
    out
}

/// The directories of [`search_paths`] that exist, each verified: a
/// server's view of where sessions are. One that exists but is not private
/// is an error (it is never used).
pub fn existing() -> Result<Vec<PathBuf>, DirError> {
    let mut out = Vec::new();
    for p in search_paths() {
        if fs::symlink_metadata(&p).is_err() {
            continue;
        }
        verify(&p)?;
        out.push(p);
    }
    Ok(out)
}

/// Is `path` a directory that only this user can reach?
pub fn verify(path: &Path) -> Result<(), DirError> {
    let fail = |reason: String| DirError { path: path.to_path_buf(), reason };
    let md = fs::symlink_metadata(path).map_err(|e| fail(e.to_string()))?;
    if md.file_type().is_symlink() {
        return Err(fail("it is a symbolic link".into()));
    }
    if !md.is_dir() {
        return Err(fail("it is not a directory".into()));
    }
    if md.uid() != my_uid() {
        return Err(fail(format!("it belongs to user id {}, not to this user ({})", md.uid(), my_uid())));
    }
    let mode = md.mode() & 0o7777;
    if mode & 0o077 != 0 {
        return Err(fail(format!(
            "its permissions are {mode:04o}, so other users can reach it (it must be 0700: `chmod 700 {}`)",
            path.display()
        )));
    }
    Ok(())
}

/// The directory, verified; with `create`, made (mode `0700`, the last
/// component only) when it does not exist.
pub fn open(create: bool) -> Result<PathBuf, DirError> {
    let p = path();
    if !p.is_absolute() {
        return Err(DirError { path: p, reason: "it is not an absolute path".into() });
    }
    if create {
        match DirBuilder::new().mode(0o700).create(&p) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(DirError { path: p, reason: e.to_string() }),
        }
    }
    verify(&p)?;
    Ok(p)
}

/// The socket of session `id` in `dir`. Ids are made of ASCII letters,
/// digits, `-`, `_` and `.` (not starting with `.`), so a path cannot leave
/// the directory.
pub fn socket_path(dir: &Path, id: &str) -> Result<PathBuf, String> {
    let ok = !id.is_empty()
        && id.len() <= 64
        && !id.starts_with('.')
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.');
    if !ok {
        return Err(format!("\"{id}\" is not a session id (letters, digits, '-', '_' and '.')"));
    }
    let p = dir.join(format!("{id}.sock"));
    if p.as_os_str().len() > MAX_SOCKET_PATH {
        return Err(format!(
            "the socket path {} is longer than {MAX_SOCKET_PATH} bytes; set {DIR_ENV} to a shorter directory",
            p.display()
        ));
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("mcplite-dir-test-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn a_private_directory_is_accepted_and_others_are_refused() {
        let d = tmp("modes");
        DirBuilder::new().mode(0o700).create(&d).unwrap();
        assert_eq!(verify(&d), Ok(()));
        for mode in [0o755, 0o750, 0o701, 0o1777] {
            fs::set_permissions(&d, fs::Permissions::from_mode(mode)).unwrap();
            let e = verify(&d).unwrap_err();
            assert!(e.reason.contains(&format!("{mode:04o}")), "{e}");
            assert!(e.to_string().contains("chmod 700"), "{e}");
        }
        fs::set_permissions(&d, fs::Permissions::from_mode(0o700)).unwrap();
        let link = tmp("link");
        std::os::unix::fs::symlink(&d, &link).unwrap();
        assert!(verify(&link).unwrap_err().reason.contains("symbolic link"));
        let file = d.join("f");
        fs::write(&file, b"x").unwrap();
        assert!(verify(&file).unwrap_err().reason.contains("not a directory"));
        assert!(verify(&d.join("missing")).is_err());
        fs::remove_file(&link).unwrap();
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_directory_of_another_user_is_refused() {
        if my_uid() != 0 {
            return; // only root can give a directory away
        }
        let d = tmp("owner");
        DirBuilder::new().mode(0o700).create(&d).unwrap();
        let c = std::ffi::CString::new(d.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid path; uid 65534 is `nobody`.
        assert_eq!(unsafe { libc::chown(c.as_ptr(), 65534, 65534) }, 0);
        let e = verify(&d).unwrap_err();
        assert!(e.reason.contains("belongs to user id 65534"), "{e}");
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn ids_cannot_leave_the_directory() {
        let d = Path::new("/tmp/x");
        assert_eq!(socket_path(d, "12345").unwrap(), Path::new("/tmp/x/12345.sock"));
        for bad in ["", "../x", "a/b", ".hidden", "a b", "x\0y"] {
            assert!(socket_path(d, bad).is_err(), "{bad:?}");
        }
        let long = Path::new("/tmp").join("d".repeat(120));
        assert!(socket_path(&long, "1").unwrap_err().contains(DIR_ENV));
    }
}
