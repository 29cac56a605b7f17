//! Driver scheduling: one driver thread per worker takes the jobs a transport
//! sends to one [`FairQueue`] (in turn between tokens, in arrival order within
//! each, RULES N3.3), and runs each on its worker through a [`WorkerHost`]. After a job one driver at a time spins for the next one;
//! the others park on the pool, woken by [`Pool::job_sent`] only when no
//! driver spins (see the fields `spinner` and `parked` of [`Pool`]).

use std::sync::atomic::{fence, Ordering};
use std::time::{Duration, Instant};

use super::fair::{FairQueue, RecvTimeoutError, TryRecvError};
use super::pool::{Pool, NO_SPINNER};
use super::process::{lock, CHECK_EVERY};
use super::worker_host::WorkerHost;
use crate::signals::masked;

/// How a driver looks for the next job after one: it keeps looking for this
/// long before it parks (waking a parked thread is slow on an idle virtual
/// machine; a client that sends calls one after another sends the next one
/// within this time).
const JOB_SPIN: Duration = Duration::from_micros(500);

impl Pool {
    /// Drive worker `slot`: run the jobs of `jobs` on it, one at a time, with
    /// `run` (which answers the job through the [`WorkerHost`]), until the
    /// queue is closed and empty. One thread per worker (see
    /// [`Pool::spawn_drivers`]).
    pub fn drive<J>(&self, slot: usize, jobs: &FairQueue<J>, run: &(dyn Fn(J, &mut WorkerHost<'_>) + Sync)) {
        let worker = lock(&self.slots[slot]).take();
        let mut host = WorkerHost { pool: self, slot, worker, call: None, last: None, claimed: false };
        let mut spin_until: Option<Instant> = None;
        loop {
            let spun = spin_until.and_then(|t| spin_recv(jobs, t));
            if spin_until.is_some() {
                // The spin is over (with a job or without): another driver
                // may spin while this one runs its job or parks.
                let _ = self.spinner.compare_exchange(slot, NO_SPINNER, Ordering::SeqCst, Ordering::SeqCst);
                // Pairs with the fence in `job_sent`: a job sent while this
                // driver still looked like the spinner is seen below (then a
                // parked driver is woken for it), or this one takes it as it
                // parks.
                fence(Ordering::SeqCst);
            }
            let job = match spun {
                Some(j) => Ok(j),
                None => self.park_recv(jobs),
            };
            if job.is_ok() && !jobs.is_empty() {
                // More jobs wait (sent while a driver spun, or at once): the
                // next parked driver takes one, and wakes the next.
                self.wake_driver();
            }
            match job {
                Ok(job) => {
                    run(job, &mut host);
                    host.call = None;
                    if host.worker.is_none() && !(jobs.is_closed() && jobs.is_empty()) {
                        // Its worker died during the call: the replacement
                        // starts now that the answer is out (not when the
                        // server stops and no call is left for it).
                        host.ensure_worker();
                    }
                    // Only one driver at a time spins (see `spinner`); this
                    // one may have claimed it as its worker answered.
                    let claimed = std::mem::take(&mut host.claimed)
                        || self.spinner.compare_exchange(NO_SPINNER, slot, Ordering::SeqCst, Ordering::SeqCst).is_ok();
                    spin_until = claimed.then(|| Instant::now() + JOB_SPIN);
                }
                Err(RecvTimeoutError::Timeout) => {
                    spin_until = None;
                    // A worker that died while idle is replaced now, so the
                    // next call does not wait for it.
                    host.ensure_worker();
                }
                Err(RecvTimeoutError::Disconnected) => break,
            }
        }
        if let Some(w) = host.worker.take() {
            *lock(&self.slots[slot]) = Some(w);
        }
    }

    /// Wait up to [`CHECK_EVERY`] for a job, parked until [`Pool::job_sent`]
    /// or [`Pool::wake_drivers`] wakes this driver (see `parked`).
    fn park_recv<J>(&self, jobs: &FairQueue<J>) -> Result<J, RecvTimeoutError> {
        let until = Instant::now() + CHECK_EVERY;
        loop {
            // Read before looking at the channel, so that a wake-up in
            // between is not lost.
            let seen = *lock(&self.parked);
            match jobs.try_recv() {
                Ok(j) => return Ok(j),
                Err(TryRecvError::Disconnected) => return Err(RecvTimeoutError::Disconnected),
                Err(TryRecvError::Empty) => {}
            }
            let now = Instant::now();
            if now >= until {
                return Err(RecvTimeoutError::Timeout);
            }
            let g = lock(&self.parked);
            let _ = self.unpark.wait_timeout_while(g, until - now, |n| *n == seen);
        }
    }

    fn wake_driver(&self) {
        let mut n = lock(&self.parked);
        *n = n.wrapping_add(1);
        self.unpark.notify_one();
    }

    /// A transport sent a job to the drivers' queue: wake a parked driver
    /// for it, unless one spins for jobs (it takes this one; see `parked`).
    pub fn job_sent(&self) {
        // Pairs with the fence in `drive` after a driver stops spinning.
        fence(Ordering::SeqCst);
        if self.spinner.load(Ordering::SeqCst) == NO_SPINNER {
            self.wake_driver();
        }
    }

    /// The drivers' queue was closed: wake every parked driver, so that
    /// each finds it closed and returns.
    pub fn wake_drivers(&self) {
        let mut n = lock(&self.parked);
        *n = n.wrapping_add(1);
        self.unpark.notify_all();
    }

    /// Start one driver per worker in `scope` (see [`Pool::drive`]).
    pub fn spawn_drivers<'scope, 'env, J: Send + 'env>(
        &'env self,
        scope: &'scope std::thread::Scope<'scope, 'env>,
        jobs: &'env FairQueue<J>,
        run: &'env (dyn Fn(J, &mut WorkerHost<'_>) + Sync),
    ) {
        for slot in 0..self.opts.workers {
            masked(|| {
                std::thread::Builder::new()
                    .name(format!("mcplite-worker-{}", slot + 1))
                    .spawn_scoped(scope, move || self.drive(slot, jobs, run))
                    .expect("spawn a worker's driver thread")
            });
        }
    }
}

fn spin_recv<J>(jobs: &FairQueue<J>, until: Instant) -> Option<J> {
    loop {
        match jobs.try_recv() {
            Ok(j) => return Some(j),
            Err(TryRecvError::Empty) if Instant::now() < until => std::thread::yield_now(),
            Err(_) => return None,
        }
    }
}
