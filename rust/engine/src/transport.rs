//! stdio transport (SPEC W1, S3–S5): a reader thread frames lines and queues
//! them on a channel; the caller's thread (R's main thread in production)
//! handles them one at a time and writes each response as one line.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::unix::io::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::{unbounded, Receiver, RecvTimeoutError};

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

/// The reader thread and its channel.
pub struct Reader {
    pub rx: Receiver<Inbound>,
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

/// Wait until `fd` is readable or `ms` passed. Returns false on timeout.
fn wait_readable(fd: i32, ms: i32) -> bool {
    let mut p = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
    // SAFETY: one valid pollfd on the stack.
    let r = unsafe { libc::poll(&mut p, 1, ms) };
    r != 0
}

impl Reader {
    /// Start reading `input` on a new thread. The caller should block signals
    /// around this call if the thread must not receive them.
    pub fn spawn(mut input: File) -> Reader {
        let (tx, rx) = unbounded();
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = Arc::clone(&stop);
        let handle = std::thread::Builder::new()
            .name("mcplite-reader".into())
            .spawn(move || {
                let fd = input.as_raw_fd();
                let mut framer = Framer::new();
                let mut chunk = vec![0u8; 64 * 1024];
                loop {
                    if stop2.load(Ordering::Relaxed) {
                        return;
                    }
                    if !wait_readable(fd, 100) {
                        continue;
                    }
                    match input.read(&mut chunk) {
                        Ok(0) => {
                            if let Some(l) = framer.finish() {
                                let _ = tx.send(Inbound::Line(l));
                            }
                            let _ = tx.send(Inbound::Eof);
                            return;
                        }
                        Ok(n) => {
                            let mut gone = false;
                            framer.push(&chunk[..n], &mut |l| {
                                if tx.send(Inbound::Line(l)).is_err() {
                                    gone = true;
                                }
                            });
                            if gone {
                                return;
                            }
                        }
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                        Err(e) => {
                            let _ = tx.send(Inbound::Failed(e.to_string()));
                            return;
                        }
                    }
                }
            })
            .expect("spawn reader thread");
        Reader { rx, stop, handle: Some(handle) }
    }

    /// Ask the thread to stop and wait for it (it polls every 100 ms).
    pub fn stop(mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
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
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions { poll: Duration::from_millis(100) }
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
        match reader.rx.recv_timeout(opts.poll) {
            Err(RecvTimeoutError::Timeout) => {
                if host.interrupt_pending() {
                    eprintln!("mcplite: interrupt ignored while waiting for requests; close stdin to stop the server");
                }
            }
            Err(RecvTimeoutError::Disconnected) => break ServeEnd::Eof,
            Ok(Inbound::Eof) => break ServeEnd::Eof,
            Ok(Inbound::Failed(e)) => {
                eprintln!("mcplite: reading stdin failed ({e}); stopping");
                break ServeEnd::ReadError;
            }
            Ok(Inbound::Line(line)) => {
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
        let mut f = Framer::new();
        let mut out = Vec::new();
        for c in chunks {
            f.push(c, &mut |l| out.push(l));
        }
        if let Some(l) = f.finish() {
            out.push(l);
        }
        out
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
