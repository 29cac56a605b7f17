//! One worker process seen from the engine: the pipe to it ([`Link`], shared
//! with the calls it runs so that a cancellation can interrupt them), and
//! [`Worker`]: reading its frames, running one call on it, noticing and
//! describing its end, stopping it.

use std::fs::File;
use std::io::{self, Write};
use std::process::Child;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use super::calls::{CallState, Interrupt};
use super::sys;
use super::wire::{CallFrame, Frames, FromWorker, ToWorker};
use crate::ask_state::AskError;
use crate::host::{ToolFailure, ToolResult};

/// After sending a call, how long the driver keeps reading its worker's pipe
/// before it sleeps in `poll` (a quick tool's answer comes back within this
/// time, and waking a thread parked in `poll` is slow on a virtual machine).
const RESULT_SPIN: Duration = Duration::from_micros(200);

/// While a call runs, how often its worker process is checked (a worker's
/// pipe can stay open after it died when a process it started holds it).
pub(super) const CHECK_EVERY: Duration = Duration::from_secs(1);

/// While a call with a call state runs, how often the driver looks at its
/// cancellation and stop.
const WATCH_EVERY: Duration = Duration::from_millis(250);

/// How long a call interrupted at the end of a stopping server's drain time
/// may take to return before its worker is killed (RULES H4.2).
pub(crate) const STOP_GRACE: Duration = Duration::from_secs(1);

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The pipe to one worker, shared with the calls it runs (to interrupt
/// them). Closing it asks the worker to finish.
pub(super) struct Link {
    pub(super) to: Mutex<Option<File>>,
}

impl Link {
    fn send(&self, frame: &ToWorker) -> io::Result<()> {
        let mut buf = Vec::with_capacity(64);
        frame.encode(&mut buf);
        match lock(&self.to).as_mut() {
            Some(f) => f.write_all(&buf),
            None => Err(io::Error::new(io::ErrorKind::BrokenPipe, "closed")),
        }
    }

    pub(super) fn close(&self) {
        lock(&self.to).take();
    }
}

impl Interrupt for Link {
    fn interrupt(&self, seq: u64) {
        // A worker that is gone cannot be interrupted; its call ends anyway.
        let _ = self.send(&ToWorker::Interrupt { seq });
    }
}

/// One live worker process.
pub(super) struct Worker {
    /// 0-based slot.
    pub(super) slot: usize,
    pub(super) child: Child,
    pub(super) pid: u32,
    pub(super) link: Arc<Link>,
    pub(super) from: File,
    pub(super) frames: Frames,
    /// Calls sent so far (the next one's `seq`).
    pub(super) seq: u64,
    /// The thread writing the worker's output to stderr (RULES N1.2).
    pub(super) output: Option<std::thread::JoinHandle<()>>,
    /// Its resident memory when it became ready (RULES N5.3).
    pub(super) ready_rss: Option<u64>,
    /// Its own temporary directory, removed with it (RULES N6.4).
    pub(super) tmp: Option<std::path::PathBuf>,
    /// Its CPU time limit between calls (RULES N7.5).
    pub(super) cpu_limit: Option<sys::CpuLimit>,
}

impl Drop for Worker {
    fn drop(&mut self) {
        // Dropped once stopped, lost or killed: what R left in its temporary
        // directory (a killed R removes nothing) goes with it.
        if let Some(d) = self.tmp.take() {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

/// How a worker ended, as a sentence's end: "exited with status 3".
fn ending(child: &mut Child) -> String {
    // The pipe closed as the process exits: give it a moment to be reaped.
    let until = Instant::now() + Duration::from_secs(2);
    loop {
        match child.try_wait() {
            Ok(Some(st)) => return sys::describe(st),
            Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(5)),
            Ok(None) => {
                sys::kill(child);
                let _ = child.wait();
                return "stopped answering (it was killed)".into();
            }
            Err(e) => return format!("ended (its status cannot be read: {e})"),
        }
    }
}

pub(super) enum Fail {
    /// The process ended (the sentence's end says how).
    Died(String),
    /// It broke the protocol (it was killed).
    Broken(String),
}

impl Worker {
    /// How it ended ([`ending`]), after what it printed last.
    pub(super) fn ended(&mut self) -> String {
        let how = ending(&mut self.child);
        self.flush_output();
        how
    }

    /// Wait (at most a second) for the worker's last output to be written,
    /// so that it comes before what the engine says of the worker's end.
    pub(super) fn flush_output(&mut self) {
        if let Some(h) = self.output.take() {
            let until = Instant::now() + Duration::from_secs(1);
            while !h.is_finished() && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(2));
            }
            if h.is_finished() {
                let _ = h.join();
            }
        }
    }

    pub(super) fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Wait for the next frame until `deadline` (`None`: no limit), checking
    /// every [`CHECK_EVERY`] that the process lives.
    pub(super) fn next_frame(&mut self, deadline: Option<Instant>) -> Result<Option<FromWorker>, Fail> {
        self.next_frame_spin(deadline, None)
    }

    /// [`Worker::next_frame`], reading the pipe without sleeping until
    /// `spin_until`.
    fn next_frame_spin(
        &mut self,
        deadline: Option<Instant>,
        spin_until: Option<Instant>,
    ) -> Result<Option<FromWorker>, Fail> {
        loop {
            match self.frames.next_frame() {
                Ok(Some(body)) => {
                    return FromWorker::decode(body).map(Some).map_err(|e| self.broken(&e.to_string()));
                }
                Ok(None) => {}
                Err(e) => return Err(self.broken(&e.to_string())),
            }
            let now = Instant::now();
            if deadline.is_some_and(|d| now >= d) {
                return Ok(None);
            }
            if spin_until.is_some_and(|t| now < t) {
                match self.frames.read_from(&mut self.from) {
                    Ok(0) => return Err(Fail::Died(self.ended())),
                    Ok(_) => {}
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => std::thread::yield_now(),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(self.broken(&format!("its pipe failed: {e}"))),
                }
                continue;
            }
            let wait = deadline.map_or(CHECK_EVERY, |d| (d - now).min(CHECK_EVERY));
            if !sys::readable(&self.from, wait.as_millis().max(1) as i32) {
                if !self.alive() {
                    return Err(Fail::Died(self.ended()));
                }
                continue;
            }
            match self.frames.read_from(&mut self.from) {
                Ok(0) => return Err(Fail::Died(self.ended())),
                Ok(_) => {}
                Err(e) if matches!(e.kind(), io::ErrorKind::Interrupted | io::ErrorKind::WouldBlock) => {}
                Err(e) => return Err(self.broken(&format!("its pipe failed: {e}"))),
            }
        }
    }

    fn broken(&mut self, why: &str) -> Fail {
        sys::kill(&mut self.child);
        let _ = self.child.wait();
        self.flush_output();
        Fail::Broken(why.to_string())
    }

    /// Run one call: send it, relay its progress, return its outcome.
    ///
    /// A call still running `grace` after its cancellation kills the worker
    /// (RULES N4.3): its outcome is then [`Fail::Died`]. A call still running
    /// after `timeout` is interrupted, and its worker killed `grace` later
    /// if it has not stopped (RULES N7.7); either way the call's tool error
    /// says why.
    pub(super) fn call(
        &mut self,
        frame: CallFrame,
        state: Option<&CallState>,
        grace: Duration,
        timeout: Option<Duration>,
    ) -> Result<Result<ToolResult, ToolFailure>, Fail> {
        let seq = frame.seq;
        let started = Instant::now();
        // When the call's wall time ran out and it was interrupted.
        let mut timed_out: Option<Instant> = None;
        self.link.send(&ToWorker::Call(frame)).map_err(|_| Fail::Died(self.ended()))?;
        // Attached only now, so that a cancellation's interrupt never reaches
        // the worker before the call it is for (the worker would drop it);
        // one cancelled since the caller looked is interrupted here.
        if let Some(c) = state {
            if !c.attach(self.link.clone(), seq) {
                let _ = self.link.send(&ToWorker::Interrupt { seq });
            }
        }
        let spin = Some(Instant::now() + RESULT_SPIN);
        let mut cancelled: Option<Instant> = None;
        loop {
            // With a call state, wake at least every WATCH_EVERY to see
            // whether the call was cancelled or interrupted at a stop, and
            // has outlived its grace.
            let deadline = (state.is_some() || timeout.is_some()).then(|| Instant::now() + WATCH_EVERY);
            match self.next_frame_spin(deadline, spin)? {
                Some(FromWorker::Result { seq: s, outcome }) if s == seq => {
                    // Interrupted for its time: whatever the tool made of the
                    // interrupt (RULES N7.7), the tool error says so.
                    return Ok(match timeout.filter(|_| timed_out.is_some()) {
                        Some(limit) => Err(ToolFailure::Error(timeout_text(limit))),
                        None => outcome,
                    });
                }
                Some(FromWorker::Progress { seq: s, progress, total, message }) if s == seq => {
                    if let Some(c) = state {
                        c.report(progress, total, message.as_deref());
                    }
                }
                Some(FromWorker::Log { seq: s, entry }) if s == seq => {
                    if let Some(c) = state {
                        c.log(entry);
                    }
                }
                // RULES A1.4: the tool asks its client; the engine asks, for
                // no longer than the call's wall time left.
                Some(FromWorker::Ask { seq: s, kind, timeout: t, params }) if s == seq => {
                    let mut wait = Duration::try_from_secs_f64(t).unwrap_or(Duration::from_secs(600));
                    if let Some(limit) = timeout {
                        wait = wait.min(limit.saturating_sub(started.elapsed()));
                    }
                    let answer = match state {
                        Some(c) => c.ask(kind, &params, wait),
                        None => Err(AskError::NoCall),
                    };
                    let outcome = answer.map(|v| v.to_string()).map_err(|e| e.message());
                    let _ = self.link.send(&ToWorker::Answer { seq, outcome });
                }
                // A late report, message or question of an earlier call.
                Some(FromWorker::Progress { .. } | FromWorker::Log { .. } | FromWorker::Ask { .. }) => {}
                Some(_) => return Err(self.broken("it sent an unexpected frame")),
                None => {}
            }
            if state.is_some_and(|c| c.is_cancelled()) {
                let since = *cancelled.get_or_insert_with(Instant::now);
                if since.elapsed() >= grace {
                    sys::kill(&mut self.child);
                    let _ = self.child.wait();
                    self.flush_output();
                    return Err(Fail::Died(format!(
                        "did not stop within {} s of the call's cancellation (it was killed)",
                        grace.as_secs_f64()
                    )));
                }
            }
            // RULES N7.7: out of wall time, interrupted once; killed when it
            // has not stopped `grace` later.
            if let Some(limit) = timeout {
                match timed_out {
                    None if started.elapsed() >= limit => {
                        timed_out = Some(Instant::now());
                        let _ = self.link.send(&ToWorker::Interrupt { seq });
                    }
                    Some(since) if since.elapsed() >= grace => {
                        sys::kill(&mut self.child);
                        let _ = self.child.wait();
                        self.flush_output();
                        return Err(Fail::Died(format!(
                            "ran longer than {} s, the most one call may take (MCPLITE_CALL_TIMEOUT), and did not \
                             stop within {} s of its interrupt (it was killed)",
                            limit.as_secs_f64(),
                            grace.as_secs_f64()
                        )));
                    }
                    _ => {}
                }
            }
            // RULES H4.2, N6.1: a call interrupted at the end of a stopping
            // server's drain time has STOP_GRACE to return, so that the
            // server stops in time.
            if let Some(since) = state.and_then(CallState::stopping_since) {
                if since.elapsed() >= STOP_GRACE {
                    sys::kill(&mut self.child);
                    let _ = self.child.wait();
                    self.flush_output();
                    return Err(Fail::Died(format!(
                        "did not stop within {} s of its interrupt as the server was stopping (it was killed)",
                        STOP_GRACE.as_secs_f64()
                    )));
                }
            }
        }
    }

    /// Close its pipe and wait for it to exit, at most `grace`; then kill it.
    pub(super) fn stop(self, grace: Duration) {
        self.stop_by(Instant::now() + grace);
    }

    /// Close its pipe and wait for it to exit until `until`; then kill it.
    /// Workers stopped together share one deadline, so they take the grace
    /// once, not once each (RULES N6.1).
    pub(super) fn stop_by(mut self, until: Instant) {
        self.link.close();
        while Instant::now() < until {
            if !matches!(self.child.try_wait(), Ok(None)) {
                self.flush_output();
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        sys::kill(&mut self.child);
        let _ = self.child.wait();
        self.flush_output();
    }
}

/// The tool error of a call interrupted because it ran out of wall time
/// (RULES N7.7).
fn timeout_text(limit: Duration) -> String {
    format!(
        "The tool call ran longer than {} s, the most one call may take on this server (MCPLITE_CALL_TIMEOUT), \
         so it was interrupted and has no result.",
        limit.as_secs_f64()
    )
}
