//! A call that becomes a task when it runs long (RULES V2.5): a 2026-07-28
//! call of an optional tool, from a client that declares the tasks
//! extension, on a server with `task_options(after = )`, runs as an
//! ordinary call; if it has not answered when its time is up, the
//! transport creates its task here and answers the request with the
//! task's handle, and the dispatcher keeps the call's answer in the task.
//!
//! One lock decides the race between the transport's timer
//! ([`Promotion::promote`]), the call's end ([`Promotion::settle`]) and a
//! question of the call ([`Promotion::asking`]): the request is answered
//! once, by whichever comes first.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crate::ask_state::Asks;
use crate::tasks::{Task, Tasks};

/// Where a promotable call stands.
enum Stage {
    /// Running (or queued), not answered: the timer may promote it.
    Open,
    /// A question of the call waits for the request's next round (RULES
    /// A2.1): the call answers `input_required` itself; never promoted.
    Held,
    /// Answered by its handle: the call's answer goes to this task.
    Promoted(Arc<Task>),
    /// The call answered its request (or its task could not be made).
    Answered,
}

/// One promotable call (see the module documentation).
pub struct Promotion {
    tasks: Arc<Tasks>,
    /// When the timer promotes the call.
    pub due: Instant,
    owner: Option<String>,
    asks: Asks,
    /// The request's id, as JSON text.
    request_id: String,
    server_meta: Arc<str>,
    stage: Mutex<Stage>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Promotion {
    /// A call (request id `request_id`, JSON text) of the token named
    /// `owner`, whose request declares `asks`, arrived now: promoted
    /// `after` from now if still open.
    pub fn new(
        tasks: Arc<Tasks>,
        after: Duration,
        (owner, asks): (Option<&str>, Asks),
        request_id: &str,
        server_meta: Arc<str>,
    ) -> Promotion {
        Promotion {
            tasks,
            due: Instant::now() + after,
            owner: owner.map(str::to_owned),
            asks,
            request_id: request_id.to_owned(),
            server_meta,
            stage: Mutex::new(Stage::Open),
        }
    }

    /// The timer: when the call is still open, its task is made (kept in
    /// the task directory, if any), `adopt` gives the running call to it
    /// (under the lock, so that a question asked from now on is the
    /// task's), and the handle's line is returned for the transport to
    /// answer the request with. `None`: the call answered first, waits for
    /// its next round, was cancelled (`adopt` said no: the task is
    /// discarded), or the store is full (it then runs on as an ordinary
    /// call).
    pub fn promote(&self, adopt: impl FnOnce(&Arc<Task>) -> bool) -> Option<Vec<u8>> {
        let mut stage = lock(&self.stage);
        if !matches!(*stage, Stage::Open) {
            return None;
        }
        match self.tasks.create(self.owner.as_deref(), true, None, self.asks) {
            Ok(task) if adopt(&task) => {
                let line = self.tasks.created_line(&self.request_id, &task, &self.server_meta);
                *stage = Stage::Promoted(task);
                Some(line)
            }
            Ok(task) => {
                self.tasks.discard(&task);
                *stage = Stage::Answered;
                None
            }
            Err(_) => {
                *stage = Stage::Answered;
                None
            }
        }
    }

    /// The call ended: `Some(task)` when it was promoted (its answer goes
    /// there and the request was answered already); else it answers its
    /// request, and can no longer be promoted.
    pub fn settle(&self) -> Option<Arc<Task>> {
        let mut stage = lock(&self.stage);
        match &*stage {
            Stage::Promoted(t) => Some(Arc::clone(t)),
            _ => {
                *stage = Stage::Answered;
                None
            }
        }
    }

    /// Can the timer still promote the call?
    pub fn is_open(&self) -> bool {
        matches!(*lock(&self.stage), Stage::Open)
    }

    /// Was the call promoted?
    pub fn is_promoted(&self) -> bool {
        matches!(*lock(&self.stage), Stage::Promoted(_))
    }

    /// The call asks a question, not yet promoted: `ask` runs with the
    /// timer held off, and when it says the question waits for the
    /// request's next round, the call is never promoted (it answers
    /// `input_required` itself). `None` when the call was promoted: the
    /// question is the task's (RULES V2.3).
    pub fn asking<T>(&self, ask: impl FnOnce() -> (T, bool)) -> Option<T> {
        let mut stage = lock(&self.stage);
        if matches!(*stage, Stage::Promoted(_)) {
            return None;
        }
        let (answer, waits) = ask();
        if waits && matches!(*stage, Stage::Open) {
            *stage = Stage::Held;
        }
        Some(answer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tasks::{Support, TaskOptions};

    fn promotion(max_tasks: usize) -> Promotion {
        let opts = TaskOptions { max_tasks, ..TaskOptions::default() };
        let tasks = Arc::new(Tasks::new(opts, vec![Support::Optional]).unwrap());
        let meta: Arc<str> = Arc::from(r#""io.modelcontextprotocol/serverInfo":{"name":"t","version":"1"}"#);
        Promotion::new(tasks, Duration::ZERO, (None, Asks::NONE), "7", meta)
    }

    #[test]
    fn the_first_of_timer_and_end_answers() {
        let p = promotion(10);
        let mut adopted = None;
        let line = p
            .promote(|t| {
                adopted = Some(Arc::clone(t));
                true
            })
            .expect("promoted");
        let v: serde_json::Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(v["id"], 7);
        assert_eq!(v["result"]["resultType"], "task");
        let task = adopted.unwrap();
        assert_eq!(v["result"]["taskId"], task.id.as_str());
        assert!(p.promote(|_| panic!("promoted twice")).is_none());
        assert!(Arc::ptr_eq(&p.settle().unwrap(), &task));
        assert!(p.is_promoted());

        let p = promotion(10);
        assert!(p.settle().is_none());
        assert!(p.promote(|_| panic!("promoted after its answer")).is_none());
        assert!(!p.is_promoted());
    }

    #[test]
    fn a_waiting_question_holds_the_call_and_a_promoted_call_asks_its_task() {
        let p = promotion(10);
        assert_eq!(p.asking(|| ("answered", false)), Some("answered"));
        assert!(p.promote(|_| true).is_some(), "an answered question leaves the call promotable");
        assert_eq!(p.asking(|| ("never", false)), None, "the promoted call's question is the task's");

        let p = promotion(10);
        assert_eq!(p.asking(|| ("input_required", true)), Some("input_required"));
        assert!(p.promote(|_| panic!("promoted while its round waits")).is_none());
        assert!(p.settle().is_none());
    }

    #[test]
    fn a_cancelled_call_is_not_promoted_and_its_task_is_discarded() {
        let p = promotion(10);
        let mut made = None;
        assert!(p
            .promote(|t| {
                made = Some(Arc::clone(t));
                false
            })
            .is_none());
        let made = made.unwrap();
        assert!(p.tasks.find(&made.id, None).is_none(), "the task made for it is gone");
        assert!(!p.is_open() && !p.is_promoted());
        assert!(p.settle().is_none());
    }

    #[test]
    fn a_full_store_leaves_the_call_ordinary() {
        let p = promotion(0);
        assert!(p.promote(|_| panic!("no room, no task")).is_none());
        assert!(p.settle().is_none());
    }
}
