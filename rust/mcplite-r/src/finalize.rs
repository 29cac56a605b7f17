//! Values owned by R external pointers (`ExternalPtr`: a client connection,
//! an in-process handler, a live-session connection). extendr frees them in
//! a C finalizer that R runs in its garbage collector and at exit: a panic
//! that reached that `extern "C"` function would abort the process, and a
//! drop that waits would stop R wherever the collector ran. So the owners'
//! `Drop` hand what they hold to [`drop_guarded`], which catches a panic,
//! and a client connection that may wait for its server to exit to the
//! engine's `Connection::close_in_background`.

use std::panic::{catch_unwind, AssertUnwindSafe};

/// Run `free`, which frees `what`, with a panic caught (and named on
/// stderr) instead of crossing R's finalizer.
pub(crate) fn free_guarded(what: &str, free: impl FnOnce()) {
    if catch_unwind(AssertUnwindSafe(free)).is_err() {
        eprintln!("mcplite: freeing {what} failed (a panic, caught); R goes on");
    }
}

/// Drop `value` here, guarded as by [`free_guarded`].
pub(crate) fn drop_guarded<T>(what: &str, value: T) {
    free_guarded(what, move || drop(value));
}
