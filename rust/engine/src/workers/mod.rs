//! Worker processes: tool calls run at the same time, each in an R process
//! of its own, behind one server (RULES section 14, N1–N6).
//!
//! The server process keeps everything that needs no R: the transports, the
//! dispatcher, listings, progress timing, telemetry. Each `tools/call` that
//! the transport accepts is registered in [`Calls`] (for progress and
//! cancellation), given a [`Ticket`] by the [`Pool`] (or refused when the
//! queue is full, with [`SERVER_BUSY`]), and queued; the first free driver
//! thread takes it and runs it with [`Server::handle_parsed`] and its
//! [`WorkerHost`], which sends the call to its worker process and waits for
//! the worker's frames ([`wire`]). A worker is a process running the same
//! program (for R: the same script) that serves calls with
//! [`serve_worker`] instead of a transport.
//!
//! * [`wire`]: the frames between engine and worker (call, interrupt;
//!   hello, progress, result), and [`Frames`], which cuts a byte stream into
//!   them.
//! * [`calls`]: the calls running or queued at once: their progress and
//!   cancellation.
//! * [`fair`]: the queue the drivers take jobs from, in turn between tokens
//!   and in arrival order within each.
//! * [`pool`]: starting, replacing and stopping the workers; the admission
//!   tickets; crash detection.
//! * `process`: one worker process seen from the engine: its pipe, a call
//!   run on it, how it ended.
//! * `drive`: the driver threads, one per worker, and how they take jobs.
//! * `worker_host`: [`WorkerHost`], the `Host` of a call run on a worker,
//!   and [`Busy`], the host of a refused call.
//! * [`worker`]: the worker's side.
//! * `sys`: starting a process ([`WorkerCommand`]) with its pipes on
//!   descriptors 3 and 4 (and, on Linux, killed with the server's thread
//!   that started it), polling.
//!
//! [`Server::handle_parsed`]: crate::server::Server::handle_parsed
//! [`Frames`]: wire::Frames

pub mod calls;
mod drive;
pub mod fair;
pub mod pool;
mod process;
mod sys;
pub mod wire;
pub mod worker;
mod worker_host;

pub use calls::{progress_of, CallState, Calls, Registered};
pub use fair::{Caller, FairQueue};
pub use pool::{Pool, PoolError, PoolOptions, PoolStats, Ticket};
#[cfg(feature = "net")]
pub(crate) use process::STOP_GRACE;
pub use sys::{take_worker_fds, WorkerCommand, WORKER_IN_FD, WORKER_OUT_FD};
pub use worker::{serve_worker, WorkerEnd, WorkerOptions};
pub use worker_host::{Busy, WorkerHost, SERVER_BUSY};
