//! Confinement of a worker process by the kernel (RULES N7): whatever R
//! code a tool runs, the process cannot start a program, open a network
//! connection, signal a process outside it, or touch files beyond what its
//! policy names. This layer holds without the others (the input-schema check,
//! RULES L6.7, and the capability classifier, RULES R8.8): a test turns the
//! classifier off on purpose and watches the kernel refuse.
//!
//! On Linux, two mechanisms of the kernel, through well-kept crates:
//!
//! * Landlock (`landlock`, the Landlock project's own crate): every file
//!   access right is handled, so only what a rule grants is allowed:
//!   reading under the `read` paths, reading and writing under the `write`
//!   paths, and executing nothing anywhere; TCP `connect` and `bind` are
//!   denied (ABI 4 and later); and with ABI 6 and later, signals to
//!   processes outside the sandbox and abstract Unix sockets created
//!   outside it. The rules apply to the calling thread and every process it
//!   starts afterwards: R code runs on that thread.
//! * Resource limits (`setrlimit`): the address space (memory), the size of
//!   a file the process writes (a larger write fails with `EFBIG`; the
//!   `SIGXFSZ` that would kill the process is ignored) and core dumps
//!   (none), soft and hard alike.
//! * seccomp (`seccompiler`, rust-vmm's): `execve`, `execveat` and sockets
//!   of the Internet, packet and netlink families fail with `EPERM` in every
//!   thread, whatever Landlock's version, and so does any attempt to set a
//!   resource limit again (`setrlimit`, `prlimit64` with a new limit), so
//!   that not even code running as root can lift the limits.
//!
//! Both are irreversible for the process, which is why only a worker (a
//! process that exists to run tools) is confined. Other platforms have no
//! such mechanism here: [`confine`] says so, and the caller reports it.

use std::path::PathBuf;

/// What a confined process may still reach.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Policy {
    /// Read-only (files and directories beneath them).
    pub read: Vec<PathBuf>,
    /// Read and write (create, remove, rename beneath them).
    pub write: Vec<PathBuf>,
    /// The most bytes of address space (memory) the process may map
    /// (`None`: no limit).
    pub memory: Option<u64>,
    /// The largest file, in bytes, the process may write (`None`: no
    /// limit).
    pub file_size: Option<u64>,
}

/// What the kernel enforced.
#[derive(Debug, Clone, PartialEq)]
pub struct Enforced {
    /// The Landlock ABI version the kernel speaks (0: none).
    pub landlock_abi: i32,
    /// The file system rules are enforced in full.
    pub files: bool,
    /// TCP connect and bind are refused by Landlock (besides seccomp's
    /// refusal of Internet sockets).
    pub tcp: bool,
    /// Signals and abstract Unix sockets outside the sandbox are refused.
    pub scoped: bool,
    /// The seccomp filter is installed.
    pub seccomp: bool,
    /// The resource limits of the policy are set (and cannot be raised).
    pub limits: bool,
}

/// Confine the calling process for good. Paths that do not exist are
/// skipped. An error says what could not be enforced; nothing is half
/// applied without being reported (a kernel without Landlock is an error,
/// not a silent success).
#[cfg(target_os = "linux")]
pub fn confine(policy: &Policy) -> Result<Enforced, String> {
    let landlock = linux::landlock(policy)?;
    linux::limits(policy)?;
    linux::seccomp()?;
    Ok(Enforced { seccomp: true, limits: true, ..landlock })
}

/// Confine the calling process: not available on this platform.
#[cfg(not(target_os = "linux"))]
pub fn confine(_policy: &Policy) -> Result<Enforced, String> {
    Err("confinement by the kernel is available on Linux only".into())
}

/// Could [`confine`] succeed here? Asks the kernel without changing
/// anything: `Err` says why not (no Landlock, no seccomp filters).
#[cfg(target_os = "linux")]
pub fn available() -> Result<(), String> {
    linux::available()
}

/// Could [`confine`] succeed here? Not on this platform.
#[cfg(not(target_os = "linux"))]
pub fn available() -> Result<(), String> {
    Err("confinement by the kernel is available on Linux only".into())
}

#[cfg(target_os = "linux")]
mod linux {
    use std::collections::BTreeMap;

    use landlock::{
        path_beneath_rules, Access, AccessFs, AccessNet, CompatLevel, Compatible, Ruleset, RulesetAttr,
        RulesetCreatedAttr, RulesetStatus, Scope, ABI,
    };
    use seccompiler::{
        BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule,
    };

    use super::{Enforced, Policy};

    /// The newest ABI this code asks for; an older kernel enforces what it
    /// knows (the report says which).
    const ABI_WANTED: ABI = ABI::V6;

    pub(super) fn landlock(policy: &Policy) -> Result<Enforced, String> {
        available()?;
        let abi = kernel_abi();
        let mut read = AccessFs::from_read(ABI_WANTED);
        read.remove(AccessFs::Execute);
        let mut write = AccessFs::from_all(ABI_WANTED);
        write.remove(AccessFs::Execute);
        let existing = |paths: &[std::path::PathBuf]| -> Vec<std::path::PathBuf> {
            paths.iter().filter(|p| p.exists()).cloned().collect()
        };
        let fail = |e: landlock::RulesetError| format!("Landlock: {e}");
        let status = Ruleset::default()
            .set_compatibility(CompatLevel::BestEffort)
            .handle_access(AccessFs::from_all(ABI_WANTED))
            .map_err(fail)?
            .handle_access(AccessNet::from_all(ABI_WANTED))
            .map_err(fail)?
            .scope(Scope::from_all(ABI_WANTED))
            .map_err(fail)?
            .create()
            .map_err(fail)?
            .add_rules(path_beneath_rules(existing(&policy.read), read))
            .map_err(fail)?
            .add_rules(path_beneath_rules(existing(&policy.write), write))
            .map_err(fail)?
            .restrict_self()
            .map_err(fail)?;
        if status.ruleset == RulesetStatus::NotEnforced {
            return Err("Landlock is not enforced by this kernel".into());
        }
        Ok(Enforced { landlock_abi: abi, files: true, tcp: abi >= 4, scoped: abi >= 6, seccomp: false, limits: false })
    }

    /// Set the policy's resource limits, soft and hard (the seccomp filter
    /// installed next keeps them from being raised), and no core dumps;
    /// lower limits the process already has stay.
    pub(super) fn limits(policy: &Policy) -> Result<(), String> {
        // A limit is only ever lowered: one the process already has (set by
        // whoever started the server) stays when it is lower.
        let set = |resource, what: &str, value: Option<u64>| -> Result<(), String> {
            let mut old = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
            // SAFETY: getrlimit(2) writes the `rlimit` we own.
            if unsafe { libc::getrlimit(resource, &mut old) } != 0 {
                return Err(format!("cannot read the limit of {what}: {}", std::io::Error::last_os_error()));
            }
            let max = value.map_or(old.rlim_max, |v| v.min(old.rlim_max));
            let new = libc::rlimit { rlim_cur: old.rlim_cur.min(max), rlim_max: max };
            // SAFETY: setrlimit(2) reads the `rlimit` passed by reference,
            // which lives for the call, and writes no memory of ours.
            if unsafe { libc::setrlimit(resource, &new) } != 0 {
                return Err(format!("cannot limit {what}: {}", std::io::Error::last_os_error()));
            }
            Ok(())
        };
        // A write beyond the file size limit then fails with EFBIG (an R
        // error) instead of killing the process.
        // SAFETY: ignoring a signal installs no handler of ours.
        unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
        set(libc::RLIMIT_AS, "the memory", policy.memory)?;
        set(libc::RLIMIT_FSIZE, "the size of files", policy.file_size)?;
        set(libc::RLIMIT_CORE, "core dumps", Some(0))
    }

    pub(super) fn available() -> Result<(), String> {
        if kernel_abi() < 1 {
            return Err("the kernel has no Landlock (Linux 5.13 or later, enabled at boot)".into());
        }
        // SAFETY: prctl(2)'s PR_GET_SECCOMP reads no memory of ours.
        if unsafe { libc::prctl(libc::PR_GET_SECCOMP) } < 0 {
            return Err("the kernel has no seccomp filters".into());
        }
        Ok(())
    }

    /// The kernel's Landlock ABI version (`landlock_create_ruleset` with the
    /// version flag), or 0 or a negative number when it has none.
    fn kernel_abi() -> i32 {
        const LANDLOCK_CREATE_RULESET_VERSION: libc::c_ulong = 1;
        // SAFETY: the documented query form of the system call: a null
        // attribute pointer, size 0 and the version flag; it reads and
        // writes no memory of ours.
        let v = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                std::ptr::null::<libc::c_void>(),
                0usize,
                LANDLOCK_CREATE_RULESET_VERSION,
            )
        };
        i32::try_from(v).unwrap_or(-1)
    }

    pub(super) fn seccomp() -> Result<(), String> {
        let fail = |e: seccompiler::BackendError| format!("seccomp: {e}");
        let family = |f: libc::c_int| -> Result<SeccompRule, String> {
            let c = SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, f as u64).map_err(fail)?;
            SeccompRule::new(vec![c]).map_err(fail)
        };
        let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
        // An empty list matches every call of the system call.
        rules.insert(libc::SYS_execve, Vec::new());
        rules.insert(libc::SYS_execveat, Vec::new());
        let families = [libc::AF_INET, libc::AF_INET6, libc::AF_PACKET, libc::AF_NETLINK];
        rules.insert(libc::SYS_socket, families.iter().map(|f| family(*f)).collect::<Result<_, _>>()?);
        rules.insert(libc::SYS_socketpair, vec![family(libc::AF_INET)?, family(libc::AF_INET6)?]);
        // Resource limits stay as set: setrlimit, and prlimit64 with a new
        // limit (its third argument not null; reading limits stays allowed,
        // R reads its stack's).
        rules.insert(libc::SYS_setrlimit, Vec::new());
        let new_limit = SeccompCondition::new(2, SeccompCmpArgLen::Qword, SeccompCmpOp::Ne, 0).map_err(fail)?;
        rules.insert(libc::SYS_prlimit64, vec![SeccompRule::new(vec![new_limit]).map_err(fail)?]);
        let arch = std::env::consts::ARCH.try_into().map_err(|e| format!("seccomp: {e:?}"))?;
        let filter = SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(libc::EPERM as u32), arch)
            .map_err(fail)?;
        let program: BpfProgram = filter.try_into().map_err(fail)?;
        seccompiler::apply_filter_all_threads(&program).map_err(|e| format!("seccomp: {e}"))
    }
}

/// Each "cannot" observed in a child process (confinement is for good):
/// the test binary runs itself again with `MCPLITE_CONFINE_CHILD` set, for
/// the `#[ignore]`d `child` test only, which confines itself, tries each
/// thing and prints what happened.
#[cfg(all(test, target_os = "linux"))]
mod tests {
    use std::io::{Read, Write};
    use std::net::TcpListener;
    use std::path::Path;
    use std::process::Command;

    use super::*;

    #[test]
    #[ignore]
    fn child() {
        let Ok(dir) = std::env::var("MCPLITE_CONFINE_CHILD") else { return };
        let dir = Path::new(&dir);
        let port = std::env::var("MCPLITE_CONFINE_PORT").unwrap();
        let policy = Policy {
            read: vec![dir.join("readable")],
            write: vec![dir.join("writable")],
            memory: Some(1 << 30),
            file_size: Some(1 << 20),
        };
        let enforced = confine(&policy).expect("confined");
        let mut out = String::new();
        let mut say = |what: &str, ok: bool| out.push_str(&format!("{what}={}\n", if ok { "yes" } else { "no" }));
        say("seccomp", enforced.seccomp);
        say("read_inside", std::fs::read_to_string(dir.join("readable/canary.txt")).is_ok());
        say("read_outside", std::fs::read_to_string(dir.join("secret.txt")).is_ok());
        say("write_inside", std::fs::write(dir.join("writable/new.txt"), "x").is_ok());
        say("write_outside", std::fs::write(dir.join("created.txt"), "x").is_ok());
        say("write_readable", std::fs::write(dir.join("readable/new.txt"), "x").is_ok());
        say("exec", Command::new("/bin/true").status().is_ok());
        say("connect", std::net::TcpStream::connect(format!("127.0.0.1:{port}")).is_ok());
        say("udp", std::net::UdpSocket::bind("127.0.0.1:0").is_ok());
        // SAFETY: kill(2) with signal 0 only checks that the signal could be
        // sent; the parent test process is outside the sandbox.
        let signal = unsafe { libc::kill(libc::getppid(), 0) };
        say("signal_outside", signal == 0);
        // Beyond the memory limit (1 GiB): the allocation fails.
        let mut big: Vec<u8> = Vec::new();
        say("allocate_2g", big.try_reserve_exact(2 << 30).is_ok());
        drop(big);
        say("allocate_16m", Vec::<u8>::new().try_reserve_exact(16 << 20).is_ok());
        // Beyond the file size limit (1 MiB): the write fails, the process lives.
        say("write_2m", std::fs::write(dir.join("writable/big.bin"), vec![0u8; 2 << 20]).is_ok());
        let raise = libc::rlimit { rlim_cur: libc::RLIM_INFINITY, rlim_max: libc::RLIM_INFINITY };
        // SAFETY: setrlimit(2) reads `raise`, which lives for the call.
        say("raise_limit", unsafe { libc::setrlimit(libc::RLIMIT_AS, &raise) } == 0);
        let mut now = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        // SAFETY: getrlimit(2) writes the `rlimit` we own.
        say("read_limit", unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut now) } == 0 && now.rlim_cur == 1 << 30);
        std::fs::write(dir.join("writable/report.txt"), out).unwrap();
    }

    #[test]
    fn n7_a_confined_process_cannot_exec_connect_signal_reach_files_or_exceed_its_limits() {
        let dir = std::env::temp_dir().join(format!("mcplite-confine-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("readable")).unwrap();
        std::fs::create_dir_all(dir.join("writable")).unwrap();
        std::fs::write(dir.join("readable/canary.txt"), "inside").unwrap();
        std::fs::write(dir.join("secret.txt"), "outside").unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let status = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "confine::tests::child", "--ignored", "--test-threads=1", "-q"])
            .env("MCPLITE_CONFINE_CHILD", &dir)
            .env("MCPLITE_CONFINE_PORT", port.to_string())
            .status()
            .unwrap();
        assert!(status.success(), "the child failed: {status}");
        let mut report = String::new();
        std::fs::File::open(dir.join("writable/report.txt")).unwrap().read_to_string(&mut report).unwrap();
        for (what, want) in [
            ("seccomp", "yes"),
            ("read_inside", "yes"),
            ("read_outside", "no"),
            ("write_inside", "yes"),
            ("write_outside", "no"),
            ("write_readable", "no"),
            ("exec", "no"),
            ("connect", "no"),
            ("udp", "no"),
            ("signal_outside", "no"),
            ("allocate_2g", "no"),
            ("allocate_16m", "yes"),
            ("write_2m", "no"),
            ("raise_limit", "no"),
            ("read_limit", "yes"),
        ] {
            assert!(report.contains(&format!("{what}={want}\n")), "{what} should be {want}:\n{report}");
        }
        assert!(!dir.join("created.txt").exists());
        // Nothing reached the listener.
        assert!(listener.accept().is_err(), "the confined child connected");
        let _ = std::io::stdout().flush();
        let _ = std::fs::remove_dir_all(&dir);
    }
}
