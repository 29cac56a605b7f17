//! The queue of calls waiting for a worker, fair between tokens (RULES
//! N3.3): each caller (an HTTP token's name; calls without a token are one
//! caller) has a lane of its own, in arrival order, and the next job is
//! taken from the lanes in turn. A token that sent many slow calls waits
//! behind its own calls, not in front of everyone else's: another token's
//! call is the next one taken after at most one call of each other waiting
//! token.
//!
//! The queue is what the drivers take jobs from ([`Pool::drive`]), and what
//! a server without workers takes its jobs from on R's thread over HTTP. It
//! is a mutex around the lanes, with a count read without it (a driver that
//! spins for the next job looks at the count, not the lock) and a condition
//! variable for a single receiver that blocks ([`FairQueue::recv_timeout`]).
//!
//! [`Pool::drive`]: super::Pool::drive

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

pub use crossbeam_channel::{RecvTimeoutError, TryRecvError};

/// Who sent a job: the name of its token, `None` without one.
pub type Caller = Option<Arc<str>>;

struct Lanes<J> {
    /// The callers with jobs waiting, in the order they are served next;
    /// each with its jobs in arrival order. A lane that empties is removed;
    /// a caller's next job starts a lane at the end.
    lanes: VecDeque<(Caller, VecDeque<J>)>,
    closed: bool,
}

/// A queue of jobs taken round-robin between callers, first in first out
/// within each (see the module documentation).
pub struct FairQueue<J> {
    lanes: Mutex<Lanes<J>>,
    len: AtomicUsize,
    /// `Lanes::closed`, read without the lock.
    closed: AtomicBool,
    ready: Condvar,
    /// Receivers blocked in [`FairQueue::recv_timeout`] (none: a send
    /// wakes nobody).
    sleepers: AtomicUsize,
}

impl<J> Default for FairQueue<J> {
    fn default() -> Self {
        FairQueue::new()
    }
}

impl<J> FairQueue<J> {
    pub fn new() -> FairQueue<J> {
        FairQueue {
            lanes: Mutex::new(Lanes { lanes: VecDeque::new(), closed: false }),
            len: AtomicUsize::new(0),
            closed: AtomicBool::new(false),
            ready: Condvar::new(),
            sleepers: AtomicUsize::new(0),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Lanes<J>> {
        self.lanes.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queue `job` from `caller`; the job back when the queue is closed.
    pub fn send(&self, caller: Caller, job: J) -> Result<(), J> {
        let mut g = self.lock();
        if g.closed {
            return Err(job);
        }
        match g.lanes.iter_mut().find(|(c, _)| *c == caller) {
            Some((_, lane)) => lane.push_back(job),
            None => g.lanes.push_back((caller, VecDeque::from([job]))),
        }
        self.len.fetch_add(1, Ordering::SeqCst);
        drop(g);
        if self.sleepers.load(Ordering::SeqCst) > 0 {
            self.ready.notify_one();
        }
        Ok(())
    }

    /// The next job: the first of the lane whose turn it is.
    pub fn try_recv(&self) -> Result<J, TryRecvError> {
        if self.len.load(Ordering::SeqCst) == 0 {
            // Looked at without the lock (a driver spinning for a job calls
            // this in a loop): once closed, no job comes any more.
            let closed = self.closed.load(Ordering::SeqCst);
            if closed && self.len.load(Ordering::SeqCst) == 0 {
                return Err(TryRecvError::Disconnected);
            }
            return Err(TryRecvError::Empty);
        }
        let mut g = self.lock();
        self.take(&mut g)
    }

    fn take(&self, g: &mut Lanes<J>) -> Result<J, TryRecvError> {
        let Some((caller, mut lane)) = g.lanes.pop_front() else {
            return Err(if g.closed { TryRecvError::Disconnected } else { TryRecvError::Empty });
        };
        let job = lane.pop_front().expect("a lane holds a job");
        if !lane.is_empty() {
            // Its next job waits for every other caller's turn.
            g.lanes.push_back((caller, lane));
        }
        self.len.fetch_sub(1, Ordering::SeqCst);
        Ok(job)
    }

    /// [`FairQueue::try_recv`], waiting up to `limit` for a job (one
    /// receiver: a send wakes one).
    pub fn recv_timeout(&self, limit: Duration) -> Result<J, RecvTimeoutError> {
        let until = Instant::now() + limit;
        let mut g = self.lock();
        loop {
            match self.take(&mut g) {
                Ok(j) => return Ok(j),
                Err(TryRecvError::Disconnected) => return Err(RecvTimeoutError::Disconnected),
                Err(TryRecvError::Empty) => {}
            }
            let now = Instant::now();
            if now >= until {
                return Err(RecvTimeoutError::Timeout);
            }
            self.sleepers.fetch_add(1, Ordering::SeqCst);
            g = self.ready.wait_timeout(g, until - now).unwrap_or_else(PoisonError::into_inner).0;
            self.sleepers.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// Jobs waiting.
    pub fn len(&self) -> usize {
        self.len.load(Ordering::SeqCst)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// No more jobs are accepted; those waiting are still taken, then the
    /// receivers see [`TryRecvError::Disconnected`].
    pub fn close(&self) {
        self.lock().closed = true;
        self.closed.store(true, Ordering::SeqCst);
        self.ready.notify_all();
    }

    /// Was [`FairQueue::close`] called?
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn who(n: &str) -> Caller {
        Some(n.into())
    }

    #[test]
    fn n3_3_round_robin_between_callers_fifo_within_each() {
        let q = FairQueue::new();
        for i in 0..4 {
            q.send(who("alice"), format!("a{i}")).unwrap();
        }
        q.send(who("bob"), "b0".to_string()).unwrap();
        q.send(None, "n0".to_string()).unwrap();
        q.send(who("bob"), "b1".to_string()).unwrap();
        assert_eq!(q.len(), 7);
        let order: Vec<String> = std::iter::from_fn(|| q.try_recv().ok()).collect();
        assert_eq!(order, ["a0", "b0", "n0", "a1", "b1", "a2", "a3"]);
        assert_eq!(q.try_recv(), Err(TryRecvError::Empty));
        // A caller that comes back joins at the end of the round.
        q.send(who("bob"), "b2".into()).unwrap();
        q.send(who("alice"), "a4".into()).unwrap();
        q.send(who("alice"), "a5".into()).unwrap();
        q.send(who("carol"), "c0".into()).unwrap();
        assert_eq!(q.try_recv().unwrap(), "b2");
        assert_eq!(q.try_recv().unwrap(), "a4");
        assert_eq!(q.try_recv().unwrap(), "c0");
        q.close();
        assert!(q.send(None, "late".into()).is_err(), "closed");
        assert_eq!(q.recv_timeout(Duration::from_secs(5)).unwrap(), "a5", "waiting jobs are still taken");
        assert_eq!(q.try_recv(), Err(TryRecvError::Disconnected));
        assert_eq!(q.recv_timeout(Duration::from_secs(5)), Err(RecvTimeoutError::Disconnected));
    }

    #[test]
    fn recv_timeout_wakes_on_a_send() {
        let q = Arc::new(FairQueue::new());
        let r = q.clone();
        let t = std::thread::spawn(move || r.recv_timeout(Duration::from_secs(30)));
        while q.sleepers.load(Ordering::SeqCst) == 0 {
            std::thread::yield_now();
        }
        q.send(None, 7).unwrap();
        assert_eq!(t.join().unwrap(), Ok(7));
        assert_eq!(q.recv_timeout(Duration::from_millis(1)), Err(RecvTimeoutError::Timeout));
    }
}
