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

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use tracing::{dispatcher, Dispatch, Level};

use super::attrs::truncate;
use super::{SpanEnd, SpanRecorder, SpanStart, Started};
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
}

/// Writes `MCPLITE_LOG` lines through a `tracing` dispatcher.
pub struct LogRecorder {
    dispatch: Dispatch,
    answered: AtomicU64,
    done: AtomicBool,
}

impl LogRecorder {
    /// Log at `level` and above to stderr, as `key=value` text lines.
    pub fn stderr(level: Level) -> LogRecorder {
        let subscriber = tracing_subscriber::fmt().with_writer(std::io::stderr).with_max_level(level).finish();
        LogRecorder::with_dispatch(Dispatch::new(subscriber))
    }

    /// Log through any dispatcher (tests capture the lines).
    pub fn with_dispatch(dispatch: Dispatch) -> LogRecorder {
        LogRecorder { dispatch, answered: AtomicU64::new(0), done: AtomicBool::new(false) }
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
    fn start(&self, s: &SpanStart) -> Started {
        let method = truncate(s.method, LOG_STRING_LIMIT).to_string();
        let id = s.id.map(|i| truncate(i, LOG_STRING_LIMIT).to_string());
        let tool = s.tool_name.map(|t| if s.tool_registered { t } else { truncate(t, LOG_STRING_LIMIT) }.to_string());
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
        Started::new(CallContext::default(), Op { start: Instant::now(), method, id, tool, modern: s.modern })
    }

    fn end(&self, mut started: Started, e: &SpanEnd) {
        let Some(op) = started.take::<Op>() else { return };
        let duration_ms = (op.start.elapsed().as_secs_f64() * 1e6).round() / 1e3;
        let version = e.protocol_version.map(Version::as_str);
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
        self.answered.fetch_add(1, Ordering::Relaxed);
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

    fn shutdown(&self) {
        if self.done.swap(true, Ordering::SeqCst) {
            return;
        }
        let n = self.answered.load(Ordering::Relaxed);
        dispatcher::with_default(&self.dispatch, || {
            tracing::info!(target: "mcplite", messages = n, "stopped");
        });
    }
}
