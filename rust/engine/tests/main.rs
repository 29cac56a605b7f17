//! The engine's integration tests, one module per file of this directory,
//! in one test binary: one link (and, on the Windows leg of
//! tests/suites/40-cross.sh, one Wine start-up) instead of one per file.
//! Tests are named `<file>::<test>`: `cargo test -p mcplite-engine --test
//! integration http::` runs one file's. Tests that need a process of their
//! own (`client_stdio.rs`, `workers/`: the binary is also the server or
//! the worker they start) stay binaries of their own (Cargo.toml).

mod common;
mod pipes;

mod dispatch;
mod hostile_lines;
mod http;
mod http_progress;
mod live;
mod progress;
mod properties;
mod regressions;
mod server_api;
mod spec_conformance;
mod stdio_progress;
mod subscriptions;
mod telemetry;
mod telemetry_export;
mod telemetry_log;
mod telemetry_metrics;
mod transport;
