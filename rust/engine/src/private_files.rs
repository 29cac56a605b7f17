//! Files only the user reads: a directory made (or made again) `0700`, and files
//! written `0600` whole, then renamed into place, so a reader never sees
//! half of one. Shared by the client's saved sign-ins (`client/oauth/
//! store.rs`) and the server's task directory (`tasks.rs`, RULES V4.3).

use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// `dir` and its parents, made if missing; `dir` itself private (`0700`)
/// and a directory.
#[cfg(unix)]
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    let meta = std::fs::metadata(dir)?;
    if !meta.is_dir() {
        return Err(io::Error::other("not a directory"));
    }
    if meta.permissions().mode() & 0o077 != 0 {
        // An existing directory open to others is made private.
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

#[cfg(not(unix))]
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    std::fs::create_dir_all(dir)
}

/// Write `bytes` to `path`, readable by the user only: a new temporary file
/// beside it (`0600`, never through a link), synced, then renamed over it.
pub fn write_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write;
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".{}.{n}.tmp", std::process::id()));
    let tmp = std::path::PathBuf::from(tmp);
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600).custom_flags(libc::O_NOFOLLOW);
    }
    let written = o.open(&tmp).and_then(|mut f| {
        f.write_all(bytes)?;
        f.sync_all()
    });
    written.and_then(|()| std::fs::rename(&tmp, path)).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where the OS has modes, they are the user's only; everywhere a file
    /// is replaced whole, no temporary file is left and a file is not taken
    /// for a directory.
    #[test]
    fn files_and_directories_are_the_users_only() {
        let dir = std::env::temp_dir().join(format!("mcplite-private-{}", std::process::id())).join("d");
        create_private_dir(&dir).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
            create_private_dir(&dir).unwrap();
            assert_eq!(std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777, 0o700);
        }
        let f = dir.join("a.json");
        write_private(&f, b"one").unwrap();
        write_private(&f, b"two").unwrap();
        assert_eq!(std::fs::read(&f).unwrap(), b"two");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&f).unwrap().permissions().mode() & 0o777, 0o600);
        }
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1, "no temporary file is left");
        let file = dir.join("plain");
        std::fs::write(&file, "x").unwrap();
        assert!(create_private_dir(&file).is_err());
        let _ = std::fs::remove_dir_all(dir.parent().unwrap());
    }
}
