//! Threads the engine starts never run R's signal handlers (SIGINT,
//! SIGPIPE, ...): R installs them process-wide, and a handler that runs on
//! a thread other than R's own corrupts R's state. Every thread is started
//! with every signal blocked, so only R's thread (and threads R starts)
//! receives them. The one home of that rule for the whole engine (the
//! transports, workers, telemetry, live sessions and the client).

use std::thread::JoinHandle;

/// Run `f` (which starts threads, directly or in a library) with every
/// signal blocked on the calling thread, so the threads it starts inherit
/// the full mask; the previous mask is restored before returning.
#[cfg(unix)]
pub(crate) fn masked<T>(f: impl FnOnce() -> T) -> T {
    // SAFETY: plain sigset manipulation of the calling thread on stack
    // values; the previous mask is restored before returning.
    unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_BLOCK, &all, &mut old);
        let out = f();
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        out
    }
}

/// Windows has no POSIX signals to mask: a console Ctrl-C or Ctrl-Break is
/// delivered on a thread of its own that the system creates.
#[cfg(not(unix))]
pub(crate) fn masked<T>(f: impl FnOnce() -> T) -> T {
    f()
}

/// Start `f` on a new thread named `name`, with every signal blocked.
pub(crate) fn spawn_masked<F: FnOnce() + Send + 'static>(name: &str, f: F) -> std::io::Result<JoinHandle<()>> {
    masked(|| std::thread::Builder::new().name(name.into()).spawn(f))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn sigint_blocked() -> bool {
        // SAFETY: reads the calling thread's mask into a stack value.
        unsafe {
            let mut cur: libc::sigset_t = std::mem::zeroed();
            libc::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), &mut cur);
            libc::sigismember(&cur, libc::SIGINT) == 1
        }
    }

    #[test]
    fn a_started_thread_blocks_every_signal_and_the_caller_keeps_its_mask() {
        let before = sigint_blocked();
        let h = spawn_masked("mcplite-test", || assert!(sigint_blocked())).unwrap();
        h.join().unwrap();
        assert_eq!(sigint_blocked(), before);
        assert!(masked(sigint_blocked));
        assert_eq!(sigint_blocked(), before);
    }
}
