//! Cancellation of a queued or running HTTP tool call: what identifies the
//! call ([`Queued`]), and [`CancelOnDrop`], which cancels a modern call whose
//! HTTP exchange ended before its answer (RULES C6). Shared by the queue
//! (`queue.rs`), which arms it, and the SSE task (`sse.rs`), which holds it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use serde_json::Value;

use crate::progress::Inflight;
use crate::workers::CallState;

/// What identifies a tool call for cancellation, while it is queued and
/// while it runs.
pub(super) struct Queued {
    /// Its number in arrival order (the key of [`Calls::queued`](super::queue::Calls)).
    pub(super) no: u64,
    /// The legacy session id, or `#<no>` for a modern call (scoped to its
    /// own HTTP exchange).
    pub(super) scope: String,
    /// The request id, parsed (ids compare as JSON values).
    pub(super) id: Value,
    /// Cancelled by the client while queued: skip it.
    pub(super) cancelled: AtomicBool,
}

/// Cancels a modern call when its HTTP exchange ends before the answer
/// (the client went away): a queued call is skipped, a running one
/// interrupted. Legacy calls are not armed: for them a disconnect is not a
/// cancellation.
pub(super) struct CancelOnDrop {
    pub(super) inflight: Arc<Inflight>,
    pub(super) queued: Arc<Queued>,
    /// With workers: the call in the pool's registry.
    pub(super) state: Option<Arc<CallState>>,
    pub(super) armed: bool,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if self.armed {
            self.queued.cancelled.store(true, Ordering::SeqCst);
            match &self.state {
                // A call promoted to a task outlives its exchange (RULES
                // V2.5): only tasks/cancel stops it.
                Some(s) if s.is_task() => {}
                Some(s) => {
                    s.cancel();
                }
                None => {
                    self.inflight.cancel(Some(&self.queued.scope), &self.queued.id);
                }
            }
        }
    }
}
