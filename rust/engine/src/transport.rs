//! stdio transport (SPEC W1, S3–S5): a reader thread frames lines and queues
//! them on a channel; the caller's thread (R's main thread in production)
//! handles them one at a time and writes each response as one line.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::unix::io::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{unbounded, Receiver, Sender};

use crate::host::Host;
use crate::server::Server;

/// What the reader thread sends.
#[derive(Debug)]
pub enum Inbound {
    /// One line, without its LF and without one trailing CR.
    Line(Vec<u8>),
    /// End of input (after the final unterminated line, if any).
    Eof,
    /// Reading failed; treated like EOF after a diagnostic.
    Failed(String),
}

/// Splits a byte stream into lines (SPEC W1.1). Kept separate from the thread
/// so it can be tested and fuzzed directly.
#[derive(Debug, Default)]
pub struct Framer {
    buf: Vec<u8>,
    at_start: bool,
    started: bool,
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

impl Framer {
    pub fn new() -> Framer {
        Framer { buf: Vec::new(), at_start: true, started: false }
    }

    /// Feed bytes; complete lines are passed to `emit`.
    pub fn push(&mut self, mut data: &[u8], emit: &mut dyn FnMut(Vec<u8>)) {
        if self.at_start {
            // Skip a BOM at the very start of the stream, even if it arrives
            // split over several reads.
            let have = self.buf.len();
            let need = BOM.len() - have.min(BOM.len());
            let take = need.min(data.len());
            let mut probe = self.buf.clone();
            probe.extend_from_slice(&data[..take]);
            if BOM.starts_with(&probe) {
                if probe.len() == BOM.len() {
                    self.buf.clear();
                    data = &data[take..];
                    self.at_start = false;
                } else {
                    self.buf = probe;
                    return;
                }
            } else {
                self.at_start = false;
            }
        }
        self.started = true;
        let mut start = 0;
        for i in memchr::memchr_iter(b'\n', data) {
            {
                let mut line = if self.buf.is_empty() {
                    data[start..i].to_vec()
                } else {
                    let mut l = std::mem::take(&mut self.buf);
                    l.extend_from_slice(&data[start..i]);
                    l
                };
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                emit(line);
                start = i + 1;
            }
        }
        self.buf.extend_from_slice(&data[start..]);
    }

    /// Is part of a line (without its LF yet) held back?
    pub fn has_partial(&self) -> bool {
        !self.buf.is_empty()
    }

    /// All lines of a stream given in pieces, the final unterminated one
    /// included (for tests and fuzzing).
    pub fn lines_of(chunks: &[&[u8]]) -> Vec<Vec<u8>> {
        let mut f = Framer::new();
        let mut out = Vec::new();
        for c in chunks {
            f.push(c, &mut |l| out.push(l));
        }
        out.extend(f.finish());
        out
    }

    /// End of stream: the final line without LF, if any.
    pub fn finish(&mut self) -> Option<Vec<u8>> {
        if self.buf.is_empty() {
            return None;
        }
        let mut line = std::mem::take(&mut self.buf);
        if self.at_start && BOM.starts_with(&line) {
            return None;
        }
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        Some(line)
    }
}

/// The request reader, shared by the reader thread and the serving thread.
///
/// Reading is handed back and forth. While the serving thread waits for work
/// it reads stdin itself, so a request costs one wake-up, as in a
/// single-threaded server. Once it has been busy with one message (running a
/// tool, or writing a response the client is not reading yet) for longer than
/// [`HANDOFF`], the reader thread reads and queues whatever arrives (SPEC S3):
/// a client that writes everything before reading answers never blocks. It
/// also reads the rest of a long line once the first part is in (a 10 MB
/// argument arrives in many pieces; one thread looping over blocking reads
/// does that best). Short calls never involve the reader thread, so
/// sequential and pipelined traffic pays no thread hand-off. Bytes are read
/// and framed under one lock, so lines reach the queue in stream order
/// whichever thread read them.
pub struct Reader {
    rx: Receiver<Inbound>,
    shared: Arc<Shared>,
    handle: Option<JoinHandle<()>>,
}

/// How long the serving thread may be busy with one message before the
/// reader thread starts reading.
pub const HANDOFF: Duration = Duration::from_millis(1);

/// Without a message for this long the reader thread sleeps until woken.
const NAP_AFTER: Duration = Duration::from_millis(20);

struct Shared {
    fd: i32,
    input: Mutex<Input>,
    tx: Sender<Inbound>,
    /// The serving thread is handling a message.
    busy: AtomicBool,
    /// Part of a line has been read; the rest is still to come.
    partial: AtomicBool,
    /// The serving thread waits for the rest of a long line: the reader
    /// thread reads it.
    long_line: AtomicBool,
    /// Incremented for every message the serving thread handles.
    turn: AtomicU64,
    /// The reader thread sleeps until woken (no recent activity).
    napping: AtomicBool,
    stop: AtomicBool,
}

struct Input {
    file: File,
    framer: Framer,
    chunk: Vec<u8>,
    /// EOF or a read error was queued; nothing more is read.
    done: bool,
}

/// Wait until `fd` is readable (or at EOF) or `ms` passed. Returns false on
/// timeout.
fn wait_readable(fd: i32, ms: i32) -> bool {
    let mut p = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
    // SAFETY: one valid pollfd on the stack.
    let r = unsafe { libc::poll(&mut p, 1, ms) };
    r != 0
}

impl Shared {
    /// Read what is available now and queue its complete lines. Never
    /// blocks: readiness is checked again under the lock, where no other
    /// thread can consume the bytes. Returns false once input has ended.
    fn pump(&self) -> bool {
        self.pump_counted().is_some()
    }

    /// [`Shared::pump`], returning how many bytes were read (`None` once
    /// input has ended).
    fn pump_counted(&self) -> Option<usize> {
        let mut guard = self.input.lock().unwrap_or_else(|e| e.into_inner());
        let Input { file, framer, chunk, done } = &mut *guard;
        if *done {
            return None;
        }
        if !wait_readable(self.fd, 0) {
            return Some(0);
        }
        loop {
            match file.read(chunk) {
                Ok(0) => {
                    if let Some(l) = framer.finish() {
                        let _ = self.tx.send(Inbound::Line(l));
                    }
                    let _ = self.tx.send(Inbound::Eof);
                    *done = true;
                    return None;
                }
                Ok(n) => {
                    let tx = &self.tx;
                    framer.push(&chunk[..n], &mut |l| {
                        let _ = tx.send(Inbound::Line(l));
                    });
                    self.partial.store(framer.has_partial(), Ordering::Relaxed);
                    return Some(n);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    let _ = self.tx.send(Inbound::Failed(e.to_string()));
                    *done = true;
                    return None;
                }
            }
        }
    }

    /// The reader thread's loop.
    fn run_reader(&self) {
        let mut seen = u64::MAX;
        let mut last_busy = Instant::now();
        loop {
            if self.stop.load(Ordering::SeqCst) {
                return;
            }
            if self.long_line.load(Ordering::SeqCst) {
                last_busy = Instant::now();
                if wait_readable(self.fd, 100) && self.long_line.load(Ordering::SeqCst) && !self.pump() {
                    return;
                }
                continue;
            }
            if self.busy.load(Ordering::SeqCst) {
                last_busy = Instant::now();
                let turn = self.turn.load(Ordering::SeqCst);
                if turn != seen {
                    // A new message: give it one hand-off period first.
                    seen = turn;
                    std::thread::park_timeout(HANDOFF);
                    continue;
                }
                // Busy with the same message for over a period: read.
                if wait_readable(self.fd, 100) && self.busy.load(Ordering::SeqCst) && !self.pump() {
                    return;
                }
                continue;
            }
            if last_busy.elapsed() < NAP_AFTER {
                std::thread::park_timeout(HANDOFF);
                continue;
            }
            // Idle for a while: sleep until the serving thread starts a
            // message (it wakes us when `napping` is set) or 100 ms pass.
            self.napping.store(true, Ordering::SeqCst);
            if !self.busy.load(Ordering::SeqCst)
                && !self.long_line.load(Ordering::SeqCst)
                && !self.stop.load(Ordering::SeqCst)
            {
                std::thread::park_timeout(Duration::from_millis(100));
            }
            self.napping.store(false, Ordering::SeqCst);
        }
    }
}

impl Reader {
    /// Start the reader thread for `input`. The caller should block signals
    /// around this call if the thread must not receive them.
    pub fn spawn(input: File) -> Reader {
        let (tx, rx) = unbounded();
        let shared = Arc::new(Shared {
            fd: input.as_raw_fd(),
            input: Mutex::new(Input { file: input, framer: Framer::new(), chunk: vec![0u8; 64 * 1024], done: false }),
            tx,
            busy: AtomicBool::new(false),
            partial: AtomicBool::new(false),
            long_line: AtomicBool::new(false),
            turn: AtomicU64::new(0),
            napping: AtomicBool::new(false),
            stop: AtomicBool::new(false),
        });
        let s = Arc::clone(&shared);
        let handle = std::thread::Builder::new()
            .name("mcplite-reader".into())
            .spawn(move || s.run_reader())
            .expect("spawn reader thread");
        Reader { rx, shared, handle: Some(handle) }
    }

    /// The next queued message, reading stdin on this thread while the queue
    /// is empty: first by checking for up to `spin` (a client that answers
    /// quickly finds this thread still running), then by sleeping in poll()
    /// for up to `timeout`. There is no spinning once part of a line has
    /// arrived: the rest of a long line is waited for without taking the CPU
    /// its writer needs. `None` when no complete line arrived.
    fn next(&self, spin: Duration, timeout: Duration) -> Option<Inbound> {
        if let Ok(m) = self.rx.try_recv() {
            return Some(m);
        }
        if self.shared.partial.load(Ordering::Relaxed) {
            return self.rest_of_long_line(timeout);
        }
        if !spin.is_zero() {
            let t0 = Instant::now();
            loop {
                if wait_readable(self.shared.fd, 0) {
                    let read = self.shared.pump_counted();
                    if let Ok(m) = self.rx.try_recv() {
                        return Some(m);
                    }
                    if read != Some(0) {
                        break;
                    }
                }
                if t0.elapsed() >= spin {
                    break;
                }
                std::hint::spin_loop();
            }
        }
        let ms = timeout.as_millis().min(i32::MAX as u128) as i32;
        if wait_readable(self.shared.fd, ms) {
            self.shared.pump();
        }
        self.rx.try_recv().ok()
    }

    /// Part of a line is in: let the reader thread read the rest (which
    /// takes many reads for a long line) and wait for it on the channel.
    fn rest_of_long_line(&self, timeout: Duration) -> Option<Inbound> {
        let s = &self.shared;
        s.long_line.store(true, Ordering::SeqCst);
        if let Some(h) = &self.handle {
            h.thread().unpark();
        }
        let got = self.rx.recv_timeout(timeout).ok();
        s.long_line.store(false, Ordering::SeqCst);
        got
    }

    /// The serving thread starts (`true`) or finished handling a message.
    fn set_busy(&self, busy: bool) {
        let s = &self.shared;
        if busy {
            s.turn.fetch_add(1, Ordering::SeqCst);
            s.busy.store(true, Ordering::SeqCst);
            if s.napping.load(Ordering::SeqCst) {
                if let Some(h) = &self.handle {
                    h.thread().unpark();
                }
            }
        } else {
            s.busy.store(false, Ordering::SeqCst);
        }
    }

    /// Stop the reader thread and wait for it (at most about 100 ms).
    pub fn stop(mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        if let Some(h) = self.handle.take() {
            h.thread().unpark();
            let _ = h.join();
        }
    }
}

/// Why serving ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServeEnd {
    Eof,
    BrokenPipe,
    WriteError,
    ReadError,
}

impl ServeEnd {
    pub fn as_str(self) -> &'static str {
        match self {
            ServeEnd::Eof => "eof",
            ServeEnd::BrokenPipe => "broken_pipe",
            ServeEnd::WriteError => "write_error",
            ServeEnd::ReadError => "read_error",
        }
    }
}

/// Options of the serve loop.
pub struct ServeOptions {
    /// How often to check for interrupts while idle.
    pub poll: Duration,
    /// How long to keep checking for the next request before sleeping.
    pub spin: Duration,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions { poll: Duration::from_millis(100), spin: Duration::from_micros(100) }
    }
}

fn flush_c_stdio() {
    // SAFETY: fflush(NULL) flushes every open C output stream.
    unsafe {
        libc::fflush(std::ptr::null_mut());
    }
}

/// Serve until EOF or until the client stops reading. Every line received
/// before EOF is answered (SPEC S5).
pub fn serve(
    server: &mut Server,
    host: &mut dyn Host,
    reader: Reader,
    output: &mut dyn Write,
    opts: &ServeOptions,
) -> ServeEnd {
    let end = loop {
        let msg = match reader.next(opts.spin, opts.poll) {
            Some(m) => m,
            None => {
                if host.interrupt_pending() {
                    eprintln!("mcplite: interrupt ignored while waiting for requests; close stdin to stop the server");
                }
                continue;
            }
        };
        match msg {
            Inbound::Eof => break ServeEnd::Eof,
            Inbound::Failed(e) => {
                eprintln!("mcplite: reading stdin failed ({e}); stopping");
                break ServeEnd::ReadError;
            }
            Inbound::Line(line) => {
                reader.set_busy(true);
                let reply = server.handle_line(&line, host);
                flush_c_stdio();
                if let Some(d) = server.take_diagnostic() {
                    eprintln!("mcplite: {d}");
                }
                if let Some(mut resp) = reply {
                    resp.push(b'\n');
                    let res = output.write_all(&resp).and_then(|_| output.flush());
                    if let Err(e) = res {
                        server.after_write();
                        if e.kind() == io::ErrorKind::BrokenPipe {
                            eprintln!("mcplite: the client closed stdout (broken pipe); stopping");
                            break ServeEnd::BrokenPipe;
                        }
                        eprintln!("mcplite: writing a response failed ({e}); stopping");
                        break ServeEnd::WriteError;
                    }
                }
                server.after_write();
                reader.set_busy(false);
            }
        }
    };
    reader.stop();
    end
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(chunks: &[&[u8]]) -> Vec<Vec<u8>> {
        Framer::lines_of(chunks)
    }

    #[test]
    fn framing_rules() {
        assert_eq!(frame(&[b"a\nb\r\nc"]), vec![b"a".to_vec(), b"b".to_vec(), b"c".to_vec()]);
        assert_eq!(frame(&[b"a\r\r\n"]), vec![b"a\r".to_vec()]);
        assert_eq!(frame(&[b"\xEF\xBB\xBFx\n"]), vec![b"x".to_vec()]);
        assert_eq!(frame(&[b"\xEF", b"\xBB", b"\xBFx\n"]), vec![b"x".to_vec()]);
        assert_eq!(frame(&[b"x\n\xEF\xBB\xBFy\n"]), vec![b"x".to_vec(), b"\xEF\xBB\xBFy".to_vec()]);
        assert_eq!(frame(&[b"ab", b"c\nd", b"e\n"]), vec![b"abc".to_vec(), b"de".to_vec()]);
        assert_eq!(frame(&[b"\n\n"]), vec![b"".to_vec(), b"".to_vec()]);
        assert_eq!(frame(&[b"\xEF\xBB"]), Vec::<Vec<u8>>::new());
        assert_eq!(frame(&[b"\xEFz\n"]), vec![b"\xEFz".to_vec()]);
    }
}
