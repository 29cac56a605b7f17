//! The platform-specific pieces of the stdio transport, behind one small
//! interface, with one implementation per platform:
//!
//! * [`open`]: turns the request stream into a [`Source`] the reader reads
//!   and a [`Readiness`] that waits until the source has bytes to read (or
//!   is at EOF), with a timeout, without consuming anything;
//! * [`flush_c_stdio`]: flushing the C runtime's output buffers, so output a
//!   tool wrote through C stdio reaches stderr before the response.
//!
//! Unix (Linux, macOS) polls the descriptor and reads it directly. Windows
//! cannot wait on an anonymous pipe or a console with a timeout, so there a
//! thread blocks in `ReadFile` on the handle and hands what it read to the
//! reader through a bounded buffer; the readiness check waits on that
//! buffer.
//!
//! Everything else in [`crate::transport`] is portable Rust.

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::{flush_c_stdio, open, Readiness, Source};

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::{flush_c_stdio, open, Readiness, Source};
