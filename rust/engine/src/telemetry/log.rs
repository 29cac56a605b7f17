//! `MCPLITE_LOG`: mcplite's own diagnostics, one structured line on stderr
//! per message received (`debug`) and answered (`info`), through the
//! `tracing` crate.
//!
//! The lines are derived from the same start and end events the span
//! recorder receives, so the dispatcher knows nothing about logging, and
//! with `MCPLITE_LOG` unset no recorder is installed at all (zero cost).
//! Events go to a dispatcher owned by the recorder (not a process-global
//! subscriber), so other Rust code in the R process is unaffected.
//!
//! What a line holds: the method (an unknown one cut to 64 characters), the
//! request id (cut to 64), the era, the protocol version, the tool name (a
//! registered one; an unknown one cut to 64), the duration, the outcome and,
//! for errors, the code and the fixed message sent (`error`). Never tool arguments,
//! results, `_meta` or condition messages.

use std::time::Instant;

use tracing::{dispatcher, Dispatch, Level};

use super::attrs::{claimed_modern_version, truncate, Session};
use super::{SpanEnd, SpanRecorder, SpanStart};
use crate::host::CallContext;
use crate::version::Version;

/// Longest client-chosen text (method, id, tool name) in a log line.
const LOG_STRING_LIMIT: usize = 64;

/// The message in progress.
struct Op {
    start: Instant,
    method: String,
    id: Option<String>,
    tool: Option<String>,
    modern: bool,
    claim: Option<Version>,
}

/// Writes `MCPLITE_LOG` lines through a `tracing` dispatcher.
pub struct LogRecorder {
    dispatch: Dispatch,
    current: Option<Op>,
    session: Session,
    answered: u64,
    done: bool,
}

impl LogRecorder {
    /// Log at `level` and above to stderr, as `key=value` text lines.
    pub fn stderr(level: Level) -> LogRecorder {
        let subscriber = tracing_subscriber::fmt().with_writer(std::io::stderr).with_max_level(level).finish();
        LogRecorder::with_dispatch(Dispatch::new(subscriber))
    }

    /// Log through any dispatcher (tests capture the lines).
    pub fn with_dispatch(dispatch: Dispatch) -> LogRecorder {
        LogRecorder { dispatch, current: None, session: Session::default(), answered: 0, done: false }
    }

    /// Say once which telemetry is on (the first thing to check when spans
    /// or metrics do not arrive).
    pub fn note_telemetry(&self, spans: &str, metrics: &str) {
        dispatcher::with_default(&self.dispatch, || {
            tracing::info!(target: "mcplite", spans, metrics, "logging on");
        });
    }
}

fn era(modern: bool) -> &'static str {
    if modern {
        "modern"
    } else {
        "legacy"
    }
}

impl SpanRecorder for LogRecorder {
    fn start(&mut self, s: &SpanStart) -> CallContext {
        let method = truncate(s.method, LOG_STRING_LIMIT).to_string();
        let id = s.id.map(|i| truncate(i, LOG_STRING_LIMIT).to_string());
        let tool = s.tool_name.map(|t| if s.tool_registered { t } else { truncate(t, LOG_STRING_LIMIT) }.to_string());
        let claim = if s.id.is_none() && s.modern { claimed_modern_version(s.meta) } else { None };
        dispatcher::with_default(&self.dispatch, || {
            tracing::debug!(
                target: "mcplite",
                method = method.as_str(),
                id = id.as_deref(),
                tool = tool.as_deref(),
                known_tool = s.tool_name.map(|_| s.tool_registered),
                era = era(s.modern),
                "received"
            );
        });
        self.current = Some(Op { start: Instant::now(), method, id, tool, modern: s.modern, claim });
        CallContext::default()
    }

    fn end(&mut self, e: &SpanEnd) {
        let Some(op) = self.current.take() else { return };
        let duration_ms = (op.start.elapsed().as_secs_f64() * 1e6).round() / 1e3;
        let version = self.session.version_for(op.claim, op.modern, e).map(Version::as_str);
        self.session.observe(&op.method, op.modern, e);
        let outcome = if e.error_code.is_some() {
            "error"
        } else if e.cancelled {
            "cancelled"
        } else if e.tool_error {
            "tool_error"
        } else {
            "ok"
        };
        let message = e.message_text();
        self.answered += 1;
        dispatcher::with_default(&self.dispatch, || {
            tracing::info!(
                target: "mcplite",
                method = op.method.as_str(),
                id = op.id.as_deref(),
                tool = op.tool.as_deref(),
                era = era(op.modern),
                version,
                duration_ms,
                outcome,
                code = e.error_code,
                error = message.as_deref(),
                "{}",
                if e.notification { "handled" } else { "answered" }
            );
        });
    }

    fn shutdown(&mut self) {
        if self.done {
            return;
        }
        self.done = true;
        let n = self.answered;
        dispatcher::with_default(&self.dispatch, || {
            tracing::info!(target: "mcplite", messages = n, "stopped");
        });
    }
}
