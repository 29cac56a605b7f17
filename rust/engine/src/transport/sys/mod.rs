//! The platform-specific pieces of the stdio transport, behind one small
//! interface so that another platform's implementation can sit beside the
//! Unix one:
//!
//! * [`Readiness`]: waiting until the request stream has bytes to read (or
//!   is at EOF), with a timeout, without consuming anything;
//! * [`flush_c_stdio`]: flushing the C runtime's output buffers, so output a
//!   tool wrote through C stdio reaches stderr before the response;
//!
//! Everything else in [`crate::transport`] is portable Rust.

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::{flush_c_stdio, Readiness};
