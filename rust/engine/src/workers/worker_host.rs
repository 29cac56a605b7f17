//! The engine-side hosts of worker calls: [`WorkerHost`], the [`Host`] a
//! driver hands the transport for one job (it sends the call to the driver's
//! worker and waits for its frames), and [`Busy`], the host of a call the
//! queue had no room for.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use super::calls::CallState;
use super::pool::{Pool, NO_SPINNER};
use super::process::{Fail, Worker};
use super::sys;
use super::wire::CallFrame;
use crate::ask_state::Asks;
use crate::host::{CallContext, Host, ToolFailure, ToolResult, ToolSpec, WorkerRun};

/// The message of the JSON-RPC error (`-32603`) for a call the queue has no
/// room for, in plain words (RULES N3.1).
pub const SERVER_BUSY: &str = "Server busy: every worker process is running a tool call and the queue of calls \
                               waiting for one is full, so this call was not run; retry in a moment";

/// The [`Host`] a driver hands the transport for one job: runs the call on
/// the driver's worker (see the module documentation).
pub struct WorkerHost<'p> {
    pub(super) pool: &'p Pool,
    pub(super) slot: usize,
    pub(super) worker: Option<Worker>,
    pub(super) call: Option<Arc<CallState>>,
    pub(super) last: Option<WorkerRun>,
    /// This driver became the spinner as its worker answered (see
    /// [`Host::call_tool`] below).
    pub(super) claimed: bool,
}

impl WorkerHost<'_> {
    /// The call the next [`Host::call_tool`] belongs to: it is cancelled
    /// through it, its progress reported to it.
    pub fn set_call(&mut self, call: Arc<CallState>) {
        self.call = Some(call);
    }

    /// Make sure a live worker is there, replacing a dead one. False when
    /// none can be started (the pool has failed).
    pub(super) fn ensure_worker(&mut self) -> bool {
        if let Some(w) = self.worker.as_mut() {
            if w.alive() {
                return true;
            }
            let mut w = self.worker.take().expect("checked");
            let how = w.ended();
            eprintln!("mcplite: worker {} (process {}) {how} while idle; starting a new one", w.slot + 1, w.pid);
            self.pool.counters.live.fetch_sub(1, Ordering::SeqCst);
        }
        self.worker = self.pool.replace(self.slot);
        self.worker.is_some()
    }

    /// RULES N5.3: a worker that holds much more memory after a call than
    /// when it became ready (R keeps what a tool allocated) is stopped, on a
    /// thread of its own so that the call's answer does not wait; the next
    /// call on this driver starts a new one.
    fn retire_if_grown(&mut self) {
        let Some(limit) = self.pool.opts.max_growth else { return };
        let Some(w) = self.worker.as_ref() else { return };
        let (Some(base), Some(now)) = (w.ready_rss, sys::resident_bytes(w.pid)) else { return };
        if now <= base.saturating_add(limit) {
            return;
        }
        let w = self.worker.take().expect("checked");
        self.pool.counters.live.fetch_sub(1, Ordering::SeqCst);
        let mb = |b: u64| b / (1 << 20);
        eprintln!(
            "mcplite: worker {} (process {}) holds {} MB after a call, {} MB more than when it started (the \
             limit is {} MB more): replacing it",
            w.slot + 1,
            w.pid,
            mb(now),
            mb(now - base),
            mb(limit)
        );
        let grace = self.pool.opts.stop_grace;
        let _ = std::thread::Builder::new().name("mcplite-retire".into()).spawn(move || w.stop(grace));
    }

    fn lost(&mut self, fail: Fail) -> ToolFailure {
        let w = self.worker.take().expect("a worker ran the call");
        self.pool.counters.live.fetch_sub(1, Ordering::SeqCst);
        let how = match fail {
            Fail::Died(how) => how,
            Fail::Broken(why) => format!("broke the worker protocol ({why}) and was stopped"),
        };
        if let Some(run) = self.last.as_mut() {
            run.crashed = true;
        }
        // RULES N5.1: the line names the call's tool and token.
        let (tool, token) = self.call.as_ref().map_or((None, None), |c| c.who());
        let stopping = self.call.as_ref().is_some_and(|c| c.stopping_since().is_some());
        eprintln!(
            "mcplite: worker {} (process {}) {how} during a call of tool {} (token {}); {}",
            w.slot + 1,
            w.pid,
            quoted(tool),
            quoted(token),
            if stopping { "the server is stopping" } else { "starting a new one" }
        );
        ToolFailure::Error(format!(
            "The R worker process running this tool call (worker {}, process {}) {how}, so the call has no result. \
             The server goes on with a new worker; other calls are not affected.",
            w.slot + 1,
            w.pid
        ))
    }
}

impl Host for WorkerHost<'_> {
    fn tools(&mut self) -> Vec<ToolSpec> {
        Vec::new()
    }

    fn call_tool(
        &mut self,
        index: usize,
        arguments: Option<&Map<String, Value>>,
        ctx: &CallContext,
    ) -> Result<ToolResult, ToolFailure> {
        self.last = None;
        let call = self.call.clone();
        if call.as_ref().is_some_and(|c| c.is_cancelled()) {
            return Err(ToolFailure::Interrupted);
        }
        if !self.ensure_worker() {
            let why = self.pool.failure().unwrap_or_else(|| "the server is stopping".into());
            return Err(ToolFailure::Error(format!("No R worker process could run this tool call: {why}.")));
        }
        // RULES N7.6: the worker's list leaves out the tools the server runs.
        let Some(tool) = self.pool.worker_index(index) else {
            return Err(ToolFailure::Error("This tool runs in the server, not in a worker (a bug).".into()));
        };
        let w = self.worker.as_mut().expect("ensured");
        w.seq += 1;
        let seq = w.seq;
        let frame = CallFrame {
            seq,
            tool,
            arguments: arguments.map(|a| serde_json::to_string(a).unwrap_or_else(|_| "{}".into())),
            context: ctx.clone(),
            // A task's reports are its status messages (RULES V2.2), also
            // once a call is promoted to one (V2.5).
            progress: call.as_ref().is_some_and(|c| {
                c.is_task() || c.may_become_task() || c.progress().is_some_and(|p| p.token().is_some())
            }),
            log: call.as_ref().and_then(|c| c.progress()).and_then(|p| p.log_level()),
            asks: call
                .as_ref()
                .map_or(Asks::NONE, |c| c.task_asks().unwrap_or_else(|| c.progress().map_or(Asks::NONE, |p| p.asks()))),
        };
        self.last = Some(WorkerRun {
            worker: (self.slot + 1) as u32,
            pid: w.pid,
            queue_wait: call.as_ref().map_or(Duration::ZERO, |c| c.arrived().elapsed()),
            crashed: false,
        });
        if let Some(limit) = self.pool.opts.call_cpu {
            // RULES N7.5: from this call's start. A limit that cannot be set
            // is said, not fatal (the call runs as without one).
            if let Err(e) = sys::limit_cpu(w.pid, limit, &mut w.cpu_limit) {
                eprintln!(
                    "mcplite: worker {} (process {}): no CPU time limit for this call: {e}",
                    self.slot + 1,
                    w.pid
                );
            }
        }
        let busy = &self.pool.counters.busy;
        busy.fetch_add(1, Ordering::SeqCst);
        let out = w.call(frame, call.as_deref(), self.pool.opts.interrupt_grace, self.pool.opts.call_timeout);
        busy.fetch_sub(1, Ordering::SeqCst);
        if out.is_ok() {
            // The driver is free once the answer is out, and a client that
            // calls one tool after another sends the next call as soon as it
            // reads it: this driver spins for it from now on, so that call
            // wakes no other driver (see `spinner`). Not after a crash: the
            // replacement starts first.
            if !self.claimed {
                let spinner = &self.pool.spinner;
                self.claimed =
                    spinner.compare_exchange(NO_SPINNER, self.slot, Ordering::SeqCst, Ordering::SeqCst).is_ok();
            }
        }
        if let Some(c) = &call {
            c.detach();
        }
        if out.is_ok() {
            self.retire_if_grown();
        }
        match out {
            Ok(outcome) => outcome,
            Err(fail) => {
                let failure = self.lost(fail);
                // Replaced before the next job (the answer goes out first).
                Err(failure)
            }
        }
    }

    fn worker_run(&self) -> Option<WorkerRun> {
        self.last
    }
}

/// A name for a line on standard error: quoted, or `-` when unknown.
fn quoted(name: Option<&str>) -> String {
    name.map_or_else(|| "-".into(), |n| serde_json::to_string(n).unwrap_or_default())
}

/// The host of a call the queue had no room for: refused before it runs
/// (RULES N3).
pub struct Busy;

impl Host for Busy {
    fn tools(&mut self) -> Vec<ToolSpec> {
        Vec::new()
    }

    fn call_tool(
        &mut self,
        _: usize,
        _: Option<&Map<String, Value>>,
        _: &CallContext,
    ) -> Result<ToolResult, ToolFailure> {
        Err(ToolFailure::Error(SERVER_BUSY.into()))
    }

    fn admit(&mut self) -> Result<(), &'static str> {
        Err(SERVER_BUSY)
    }
}
