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
        // A call promoted to a task outlives its exchange (RULES V2.5):
        // only tasks/cancel stops it.
        if self.armed && !self.state.as_ref().is_some_and(|s| s.is_task()) {
            self.queued.cancelled.store(true, Ordering::SeqCst);
            match &self.state {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ask_state::Asks;
    use crate::progress::ProgressPolicy;
    use crate::tasks::{Support, TaskOptions, Tasks};
    use crate::workers::Calls;

    /// RULES C6, V2.5: a modern exchange that ends before its answer
    /// cancels its call, unless the call became a task (its handle was the
    /// answer): then neither the call nor its queue entry is cancelled.
    #[test]
    fn an_exchange_gone_cancels_its_call_but_not_a_tasks() {
        let inflight = Arc::new(Inflight::new(ProgressPolicy::default(), None));
        let calls = Calls::new(Arc::clone(&inflight));
        let tasks = Tasks::new(TaskOptions::default(), vec![Support::Optional]).unwrap();
        let guard = |reg: &crate::workers::Registered, no: u64| {
            let queued = Arc::new(Queued {
                no,
                scope: format!("#{no}"),
                id: Value::from(no),
                cancelled: AtomicBool::new(false),
            });
            let g = CancelOnDrop {
                inflight: Arc::clone(&inflight),
                queued: Arc::clone(&queued),
                state: Some(Arc::clone(reg.state())),
                armed: true,
            };
            (g, queued)
        };
        let plain = calls.register(Some("#1".into()), "1", None);
        let (g, queued) = guard(&plain, 1);
        drop(g);
        assert!(queued.cancelled.load(Ordering::SeqCst) && plain.state().is_cancelled());

        let promoted = calls.register(Some("#2".into()), "2", None);
        let task = tasks.create(None, true, None, Asks::NONE).unwrap();
        assert!(promoted.state().promoted_to(&task));
        let (g, queued) = guard(&promoted, 2);
        drop(g);
        assert!(!queued.cancelled.load(Ordering::SeqCst), "the task's call is not skipped");
        assert!(!promoted.state().is_cancelled(), "nor interrupted");
    }
}
