//! The stdio serve loop (RULES W1, S3–S5, C1–C5): take each line from the
//! [`Reader`], hand it to the dispatcher with this connection's legacy
//! session and call watch, and write each response as one line. The
//! ticker thread beside it (module [`super::control`]) writes progress
//! notifications and answers pings while a tool runs.

use std::io::{self, Write};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::control::{lock, Control, Output, Watch};
use super::reader::{Inbound, Reader};
use super::sys;
use crate::host::Host;
use crate::message::parse_line;
use crate::progress::Inflight;
use crate::server::{Carrier, LegacyState, Server};
use crate::telemetry::masked;

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
///
/// `inflight` is the call watch of this connection (RULES C1–C5): the
/// running call's progress is written by a ticker thread that lives as long
/// as this function, cancellations and pings are acted on as they are read
/// (see [`super::control`]), and whoever interrupts tools is the
/// `Inflight`'s interrupter. The ticker starts with signals blocked, like
/// the reader thread should be (see [`Reader::spawn`]).
pub fn serve(
    server: &Server,
    host: &mut dyn Host,
    reader: Reader,
    output: &mut (dyn Write + Send),
    opts: &ServeOptions,
    inflight: &Arc<Inflight>,
) -> ServeEnd {
    let control = Arc::new(Control::new(Arc::clone(inflight)));
    reader.attach(Arc::clone(&control));
    let out: Output<'_> = Mutex::new(output);
    let mut session = LegacyState::default();
    let end = std::thread::scope(|s| {
        let ticker = masked(|| {
            std::thread::Builder::new()
                .name("mcplite-ticker".into())
                .spawn_scoped(s, || control.run_ticker(server, &out))
                .expect("spawn ticker thread")
        });
        // Stops the ticker however the loop ends (a panic too: the scope
        // would otherwise wait for the ticker forever).
        let stop = StopTicker(&control);
        let end = serve_loop(server, host, &mut session, &reader, &out, opts, &control);
        drop(stop);
        let _ = ticker.join();
        end
    });
    reader.stop();
    // The connection's legacy session ends with its input.
    server.end_session(&mut session);
    end
}

struct StopTicker<'a>(&'a Control);

impl Drop for StopTicker<'_> {
    fn drop(&mut self) {
        self.0.stop_ticker();
    }
}

fn serve_loop(
    server: &Server,
    host: &mut dyn Host,
    session: &mut LegacyState,
    reader: &Reader,
    out: &Output<'_>,
    opts: &ServeOptions,
    control: &Control,
) -> ServeEnd {
    let watch = Watch { control, out };
    // The stream position of the next queued line (as the reader counts).
    let mut seq = 0u64;
    loop {
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
            Inbound::Eof => return ServeEnd::Eof,
            Inbound::Failed(e) => {
                eprintln!("mcplite: reading stdin failed ({e}); stopping");
                return ServeEnd::ReadError;
            }
            Inbound::Line(line) => {
                let at = seq;
                seq += 1;
                reader.set_busy(true);
                let call = control.may_be_call(&line);
                let reply = if control.has_cancels() {
                    let incoming = parse_line(&line);
                    if control.reached(&incoming, at) {
                        // RULES C4: cancelled while queued, never answered.
                        control.done(call);
                        reader.set_busy(false);
                        continue;
                    }
                    server.handle_parsed(session, incoming, host, &Carrier::watched(&watch))
                } else {
                    server.handle_parsed(session, parse_line(&line), host, &Carrier::watched(&watch))
                };
                // What a tool printed through C stdio goes out before the
                // response.
                sys::flush_c_stdio();
                if let Some(d) = reply.diagnostic() {
                    eprintln!("mcplite: {d}");
                }
                // Ends the message's span once the line is written. The
                // writer lock keeps the ticker's lines whole and, with the
                // call's progress ended by now, before the response.
                let written = reply.write_line(&mut **lock(out));
                control.done(call);
                if let Err(e) = written {
                    if e.kind() == io::ErrorKind::BrokenPipe {
                        eprintln!("mcplite: the client closed stdout (broken pipe); stopping");
                        return ServeEnd::BrokenPipe;
                    }
                    eprintln!("mcplite: writing a response failed ({e}); stopping");
                    return ServeEnd::WriteError;
                }
                reader.set_busy(false);
            }
        }
    }
}
