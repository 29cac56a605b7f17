//! Windows: a thread blocking in `ReadFile` on the request stream's handle,
//! and `fflush(NULL)` of the C runtime.
//!
//! Windows has no `poll` for anonymous pipes or consoles (the handles a
//! client's stdin arrives on), and no way to wait for one with a timeout
//! without reading from it. So one thread, started with the reader, owns the
//! handle and blocks in `read` on it; what it reads goes into a buffer of at
//! most [`LIMIT`] bytes (it stops reading while the buffer is full, so a
//! client that writes faster than the server handles requests is held back
//! by the pipe, as on Unix). The [`Source`] the reader reads takes bytes
//! from that buffer, and [`Readiness`] waits on it with a timeout. End of
//! input (the client closed its end: `ReadFile` fails with
//! `ERROR_BROKEN_PIPE`, which std reports as end of file) is seen once the
//! buffer is drained, as on Unix.
//!
//! When the reader is dropped the thread is told to stop and its blocking
//! read is cancelled (`CancelSynchronousIo`); it is not joined, so a handle
//! whose read cannot be cancelled never holds up the end of serving.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, Read};
use std::os::windows::io::AsRawHandle;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

/// Most bytes read ahead of the reader.
const LIMIT: usize = 4 << 20;

/// Bytes per `ReadFile`.
const CHUNK: usize = 64 * 1024;

#[derive(Default)]
struct State {
    buf: VecDeque<u8>,
    eof: bool,
    error: Option<(io::ErrorKind, String)>,
    /// The reader is gone: the thread stops.
    closed: bool,
}

impl State {
    fn ready(&self) -> bool {
        !self.buf.is_empty() || self.eof || self.error.is_some()
    }
}

struct Pipe {
    state: Mutex<State>,
    /// Signalled when bytes, EOF or an error arrive.
    data: Condvar,
    /// Signalled when the reader took bytes (or closed).
    space: Condvar,
}

impl Pipe {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The request stream as the reader reads it: bytes the reading thread
/// collected.
pub struct Source {
    pipe: Arc<Pipe>,
    thread: Option<JoinHandle<()>>,
}

/// Waits until the [`Source`] has bytes (or is at EOF, or failed).
#[derive(Clone)]
pub struct Readiness {
    pipe: Arc<Pipe>,
}

/// The readiness check and the stream to read, for `input`; starts the
/// thread that reads `input`.
pub fn open(input: File) -> (Readiness, Source) {
    let pipe = Arc::new(Pipe { state: Mutex::new(State::default()), data: Condvar::new(), space: Condvar::new() });
    let p = Arc::clone(&pipe);
    let thread = std::thread::Builder::new()
        .name("mcplite-stdin".into())
        .spawn(move || read_handle(input, &p))
        .expect("spawn stdin thread");
    (Readiness { pipe: Arc::clone(&pipe) }, Source { pipe, thread: Some(thread) })
}

/// The reading thread: blocking reads of `input` into the buffer until end
/// of input, an error, or the reader closing.
fn read_handle(mut input: File, pipe: &Pipe) {
    let mut chunk = vec![0u8; CHUNK];
    loop {
        if pipe.lock().closed {
            return;
        }
        let r = input.read(&mut chunk);
        let mut st = pipe.lock();
        if st.closed {
            return;
        }
        match r {
            Ok(0) => {
                st.eof = true;
                pipe.data.notify_all();
                return;
            }
            Ok(n) => {
                while st.buf.len() >= LIMIT && !st.closed {
                    st = pipe.space.wait(st).unwrap_or_else(|e| e.into_inner());
                }
                if st.closed {
                    return;
                }
                st.buf.extend(&chunk[..n]);
                pipe.data.notify_all();
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                st.error = Some((e.kind(), e.to_string()));
                pipe.data.notify_all();
                return;
            }
        }
    }
}

impl Readiness {
    /// Wait until the stream is readable (or at EOF, or failed) or `ms`
    /// milliseconds passed; `0` only checks. Returns false on timeout.
    pub fn wait(&self, ms: i32) -> bool {
        let st = self.pipe.lock();
        if st.ready() || ms <= 0 {
            return st.ready();
        }
        let timeout = Duration::from_millis(ms as u64);
        let (st, _) = self.pipe.data.wait_timeout_while(st, timeout, |s| !s.ready()).unwrap_or_else(|e| e.into_inner());
        st.ready()
    }
}

impl Read for Source {
    /// Bytes collected so far (blocking until there are some), then `Ok(0)`
    /// at end of input, or the read error.
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let mut st = self.pipe.lock();
        loop {
            if !st.buf.is_empty() {
                let n = st.buf.read(out)?;
                self.pipe.space.notify_all();
                return Ok(n);
            }
            if let Some((kind, msg)) = &st.error {
                return Err(io::Error::new(*kind, msg.clone()));
            }
            if st.eof || out.is_empty() {
                return Ok(0);
            }
            st = self.pipe.data.wait(st).unwrap_or_else(|e| e.into_inner());
        }
    }
}

impl Drop for Source {
    fn drop(&mut self) {
        self.pipe.lock().closed = true;
        self.pipe.space.notify_all();
        if let Some(t) = self.thread.take() {
            if !t.is_finished() {
                // SAFETY: the handle of a thread that has not been joined
                // (the JoinHandle keeps it open); cancelling its pending
                // synchronous I/O makes its ReadFile return an error.
                unsafe {
                    windows_sys::Win32::System::IO::CancelSynchronousIo(t.as_raw_handle());
                }
            }
        }
    }
}

/// Flush every C stdio output stream of the C runtime (`fflush(NULL)`).
pub fn flush_c_stdio() {
    // SAFETY: fflush(NULL) flushes every open C output stream.
    unsafe {
        libc::fflush(std::ptr::null_mut());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::windows::io::FromRawHandle;
    use windows_sys::Win32::System::Pipes::CreatePipe;

    fn pipe() -> (File, File) {
        let mut r = std::ptr::null_mut();
        let mut w = std::ptr::null_mut();
        // SAFETY: two out-pointers; the handles are owned by the Files.
        unsafe {
            assert_ne!(CreatePipe(&mut r, &mut w, std::ptr::null(), 0), 0);
            (File::from_raw_handle(r), File::from_raw_handle(w))
        }
    }

    #[test]
    fn readiness_waits_for_bytes_then_eof_without_consuming() {
        let (r, mut w) = pipe();
        let (ready, mut src) = open(r);
        // Nothing written: the check and a short wait time out.
        assert!(!ready.wait(0));
        let t0 = std::time::Instant::now();
        assert!(!ready.wait(50));
        assert!(t0.elapsed() >= Duration::from_millis(40));
        // A write wakes a waiter; waiting does not consume the bytes.
        let writer = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(30));
            w.write_all(b"abc\n").unwrap();
            w
        });
        assert!(ready.wait(5000));
        assert!(ready.wait(0));
        let mut buf = [0u8; 16];
        assert_eq!(src.read(&mut buf).unwrap(), 4);
        assert_eq!(&buf[..4], b"abc\n");
        assert!(!ready.wait(0));
        // Closing the write end (ERROR_BROKEN_PIPE) is end of input.
        drop(writer.join().unwrap());
        assert!(ready.wait(5000));
        assert_eq!(src.read(&mut buf).unwrap(), 0);
    }

    #[test]
    fn more_than_the_pipe_buffer_arrives_whole_and_in_order() {
        let (r, mut w) = pipe();
        let (ready, mut src) = open(r);
        let data: Vec<u8> = (0..(6 << 20)).map(|i: u32| (i % 251) as u8).collect();
        let expect = data.clone();
        let writer = std::thread::spawn(move || w.write_all(&data).unwrap());
        let mut got = Vec::new();
        let mut buf = vec![0u8; 100_000];
        while ready.wait(5000) {
            let n = src.read(&mut buf).unwrap();
            if n == 0 {
                break;
            }
            got.extend_from_slice(&buf[..n]);
            if got.len() == expect.len() {
                break;
            }
        }
        writer.join().unwrap();
        assert!(got == expect, "read {} of {} bytes, or out of order", got.len(), expect.len());
    }
}
