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

/// Noticing SIGINT while the host waits (RULES S7): R's own check of its
/// interrupt flag can lose an interrupt. Once the tcltk package is loaded,
/// R's polled-events hook runs Tcl's event loop inside R's interrupt check,
/// under a top-level context of its own; Tcl's event source checks R's
/// flag there, and the interrupt ends in that context instead of reaching
/// the caller. While a [`SigintWatch`] is alive, a handler of the engine
/// sits in front of the previous one (R's): it records the signal and then
/// calls that handler, so R's flag is set as before, and the host asks
/// [`take_sigint`] besides R. Only between calls and while a client
/// waits: a tool's own R code is left to R.
#[cfg(unix)]
mod sigint {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    static SEEN: AtomicBool = AtomicBool::new(false);
    static ARMED: AtomicBool = AtomicBool::new(false);
    /// The handler in front of which ours sits, and its flags.
    static PREV: AtomicUsize = AtomicUsize::new(0);
    static PREV_FLAGS: AtomicUsize = AtomicUsize::new(0);

    extern "C" fn on_sigint(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
        SEEN.store(true, Ordering::SeqCst);
        let prev = PREV.load(Ordering::SeqCst);
        if prev != libc::SIG_DFL && prev != libc::SIG_IGN {
            // SAFETY: `prev` is the handler that was installed for SIGINT
            // (checked to be a function when the watch was armed), called
            // with the arguments its flags say it takes.
            unsafe {
                if PREV_FLAGS.load(Ordering::SeqCst) as libc::c_int & libc::SA_SIGINFO != 0 {
                    let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                        std::mem::transmute(prev);
                    f(sig, info, ctx);
                } else {
                    let f: extern "C" fn(libc::c_int) = std::mem::transmute(prev);
                    f(sig);
                }
            }
        }
        // R's handler installs itself again with signal(): put ours back in
        // front while the watch is armed (sigaction is async-signal-safe).
        if ARMED.load(Ordering::SeqCst) {
            install();
        }
    }

    fn ours() -> usize {
        on_sigint as extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) as usize
    }

    fn install() {
        // SAFETY: a zeroed sigaction on the stack with our handler.
        unsafe {
            let mut act: libc::sigaction = std::mem::zeroed();
            act.sa_sigaction = ours();
            act.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
            libc::sigemptyset(&mut act.sa_mask);
            libc::sigaction(libc::SIGINT, &act, std::ptr::null_mut());
        }
    }

    fn current() -> libc::sigaction {
        // SAFETY: reads the disposition of SIGINT into a stack value.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            libc::sigaction(libc::SIGINT, std::ptr::null(), &mut old);
            old
        }
    }

    /// See the module documentation. Not armed (a no-op) when SIGINT is
    /// ignored or has its default effect (nothing of R's to keep informed),
    /// or when a watch is armed already (an in-memory server called from a
    /// tool of a running one).
    pub struct SigintWatch {
        old: Option<libc::sigaction>,
    }

    impl SigintWatch {
        /// Arm the watch; a signal seen before it was armed does not count.
        pub fn arm() -> SigintWatch {
            let old = current();
            let h = old.sa_sigaction;
            if h == libc::SIG_DFL || h == libc::SIG_IGN || h == ours() || ARMED.swap(true, Ordering::SeqCst) {
                return SigintWatch { old: None };
            }
            PREV.store(h, Ordering::SeqCst);
            PREV_FLAGS.store(old.sa_flags as usize, Ordering::SeqCst);
            SEEN.store(false, Ordering::SeqCst);
            install();
            SigintWatch { old: Some(old) }
        }
    }

    /// Was SIGINT seen since a watch was armed or this was last asked?
    pub fn take_sigint() -> bool {
        SEEN.swap(false, Ordering::SeqCst)
    }

    /// Forget a SIGINT seen so far (R's own code ran meanwhile, and R
    /// handled what arrived).
    pub fn forget_sigint() {
        SEEN.store(false, Ordering::SeqCst);
    }

    impl Drop for SigintWatch {
        fn drop(&mut self) {
            if let Some(old) = self.old.take() {
                ARMED.store(false, Ordering::SeqCst);
                // SAFETY: puts back the disposition read when armed.
                unsafe { libc::sigaction(libc::SIGINT, &old, std::ptr::null_mut()) };
                SEEN.store(false, Ordering::SeqCst);
            }
        }
    }
}

/// Windows: a console Ctrl-C reaches R through the console's own handler,
/// and tcltk's event hook there does not check R's flag; nothing to watch.
#[cfg(not(unix))]
mod sigint {
    pub struct SigintWatch;
    impl SigintWatch {
        pub fn arm() -> SigintWatch {
            SigintWatch
        }
    }
    pub fn take_sigint() -> bool {
        false
    }
    pub fn forget_sigint() {}
}

pub use sigint::{forget_sigint, take_sigint, SigintWatch};

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

    use std::sync::atomic::{AtomicUsize, Ordering};

    static R_LIKE: AtomicUsize = AtomicUsize::new(0);

    /// Like R's SIGINT handler: counts, and installs itself again with
    /// signal().
    extern "C" fn r_like(_: libc::c_int) {
        R_LIKE.fetch_add(1, Ordering::SeqCst);
        // SAFETY: signal() is async-signal-safe.
        unsafe { libc::signal(libc::SIGINT, r_like as extern "C" fn(libc::c_int) as libc::sighandler_t) };
    }

    fn disposition() -> libc::sighandler_t {
        // SAFETY: reads SIGINT's disposition into a stack value.
        unsafe {
            let mut cur: libc::sigaction = std::mem::zeroed();
            libc::sigaction(libc::SIGINT, std::ptr::null(), &mut cur);
            cur.sa_sigaction
        }
    }

    #[test]
    fn sigint_is_seen_while_watched_and_the_previous_handler_still_runs() {
        let r_handler = r_like as extern "C" fn(libc::c_int) as libc::sighandler_t;
        // SAFETY: this test owns SIGINT's disposition (no other test of the
        // engine's library touches it); raise() delivers to this thread.
        unsafe { libc::signal(libc::SIGINT, r_handler) };
        assert!(!take_sigint());
        {
            let _watch = SigintWatch::arm();
            assert_ne!(disposition(), r_handler);
            // a watch inside a watch changes nothing
            {
                let _inner = SigintWatch::arm();
            }
            assert_ne!(disposition(), r_handler);
            for n in 1..=2 {
                // SAFETY: see above.
                unsafe { libc::raise(libc::SIGINT) };
                assert!(take_sigint(), "signal {n} seen");
                assert!(!take_sigint(), "taken once");
                assert_eq!(R_LIKE.load(Ordering::SeqCst), n, "R's handler ran for signal {n}");
                // R's handler put itself back; ours is in front again
                assert_ne!(disposition(), r_handler);
            }
            // SAFETY: see above.
            unsafe { libc::raise(libc::SIGINT) };
            forget_sigint();
            assert!(!take_sigint());
        }
        assert_eq!(disposition(), r_handler, "the previous handler is back");
        // SAFETY: see above.
        unsafe { libc::raise(libc::SIGINT) };
        assert!(!take_sigint(), "not watched");
        assert_eq!(R_LIKE.load(Ordering::SeqCst), 4);
        // SIGINT ignored: nothing is armed
        // SAFETY: see above.
        unsafe { libc::signal(libc::SIGINT, libc::SIG_IGN) };
        {
            let _watch = SigintWatch::arm();
            assert_eq!(disposition(), libc::SIG_IGN);
        }
        // SAFETY: see above.
        unsafe { libc::signal(libc::SIGINT, libc::SIG_DFL) };
    }
}
