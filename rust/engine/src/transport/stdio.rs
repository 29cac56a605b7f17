//! The stdio serve loop (RULES W1, S3–S5): take each line from the
//! [`Reader`], hand it to the dispatcher with this connection's legacy
//! session, and write each response as one line.

use std::io::{self, Write};
use std::time::Duration;

use super::reader::{Inbound, Reader};
use super::sys;
use crate::host::Host;
use crate::server::{LegacyState, Server};

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

/// Serve one client until EOF or until it stops reading. Every line
/// received before EOF is answered (RULES S5). The stdio connection is one
/// legacy session: its [`LegacyState`] lives here, for as long as serving.
pub fn serve(
    server: &Server,
    host: &mut dyn Host,
    reader: Reader,
    output: &mut dyn Write,
    opts: &ServeOptions,
) -> ServeEnd {
    let mut session = LegacyState::default();
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
                let reply = server.handle(&mut session, &line, host);
                // What a tool printed through C stdio goes out before the
                // response.
                sys::flush_c_stdio();
                if let Some(d) = reply.diagnostic() {
                    eprintln!("mcplite: {d}");
                }
                // Ends the message's span once the line is written.
                if let Err(e) = reply.write_line(output) {
                    if e.kind() == io::ErrorKind::BrokenPipe {
                        eprintln!("mcplite: the client closed stdout (broken pipe); stopping");
                        break ServeEnd::BrokenPipe;
                    }
                    eprintln!("mcplite: writing a response failed ({e}); stopping");
                    break ServeEnd::WriteError;
                }
                reader.set_busy(false);
            }
        }
    };
    reader.stop();
    // The connection's legacy session ends with its input.
    server.end_session(&mut session);
    end
}
