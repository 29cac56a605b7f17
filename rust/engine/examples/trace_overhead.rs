//! Per-message cost of telemetry inside the engine (run by
//! bench/trace_overhead.sh; not a test). A `Server` with a trivial host
//! handles pre-built `tools/call` lines in a tight loop, in these modes:
//!
//! * `off`, `off2`: no recorder installed (telemetry off), twice: the noise
//!   floor;
//! * `spans`: the recorders from `recorder_from_env` with OTLP/HTTP batch
//!   export of spans to a loopback sink that accepts every request;
//! * `metrics`: metrics only (OTLP/HTTP, default 60 s interval);
//! * `both`: spans and metrics;
//! * `dead`: spans, but nobody listens at the endpoint (spans are dropped);
//! * `log`: `MCPLITE_LOG=info` (one line per message, to stderr).
//!
//! Rounds alternate between modes; the median per-message time is reported.
//!
//! Usage: cargo run --release -p mcplite-engine --example trace_overhead [messages] [rounds] [modes]
//! (`modes`: a comma-separated subset, `off` always included; `breakdown`
//! instead times the pieces of one metric measurement alone.)
// A benchmark program: its report goes to stdout.
#![allow(clippy::print_stdout)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use mcplite_engine::host::{CallContext, Host, ToolFailure, ToolResult, ToolSpec};
use mcplite_engine::server::{LegacyState, Server, ServerInfo};
use mcplite_engine::telemetry::recorder_from_env;
use serde_json::Value;

struct Echo;

impl Host for Echo {
    fn tools(&mut self) -> Vec<ToolSpec> {
        vec![ToolSpec {
            name: "echo".into(),
            description: "Echo.".into(),
            input_schema: r#"{"type":"object","properties":{"text":{"type":"string"}}}"#.into(),
            annotations: vec![],
            output_schema: None,
        }]
    }
    fn call_tool(
        &mut self,
        _i: usize,
        _a: Option<&serde_json::Map<String, Value>>,
        _c: &CallContext,
    ) -> Result<ToolResult, ToolFailure> {
        Ok(ToolResult::text("ok"))
    }
}

/// Accept OTLP POSTs, count bytes, answer 200.
fn sink() -> (u16, Arc<AtomicU64>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let received = Arc::new(AtomicU64::new(0));
    let r2 = Arc::clone(&received);
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            let mut r = BufReader::new(s.try_clone().unwrap());
            let mut len = 0usize;
            loop {
                let mut h = String::new();
                if r.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
                    break;
                }
                if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0u8; len];
            let _ = r.read_exact(&mut body);
            r2.fetch_add(len as u64, Ordering::Relaxed);
            let _ = (&s).write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
        }
    });
    (port, received)
}

/// CPU time of the calling thread, in nanoseconds.
fn thread_cpu_ns() -> f64 {
    cpu_ns(3) // CLOCK_THREAD_CPUTIME_ID
}

/// CPU time of the whole process (all threads), in nanoseconds.
fn process_cpu_ns() -> f64 {
    cpu_ns(2) // CLOCK_PROCESS_CPUTIME_ID
}

fn cpu_ns(clock: i32) -> f64 {
    let mut ts = libc_timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime with a valid clock id and pointer.
    unsafe { clock_gettime(clock, &mut ts) };
    ts.tv_sec as f64 * 1e9 + ts.tv_nsec as f64
}

#[repr(C)]
struct libc_timespec {
    tv_sec: i64,
    tv_nsec: i64,
}

extern "C" {
    fn clock_gettime(clk: i32, ts: *mut libc_timespec) -> i32;
}

fn server(mode: &str, port: u16, dead_port: u16, n: usize, host: &mut Echo) -> Server {
    let mut s = Server::new(ServerInfo { name: "b".into(), version: "1".into(), instructions: None }, host);
    let live = format!("http://127.0.0.1:{port}");
    let dead = format!("http://127.0.0.1:{dead_port}");
    let vars: Vec<(&str, String)> = match mode {
        "spans" => vec![("OTEL_TRACES_EXPORTER", "otlp".into()), ("OTEL_EXPORTER_OTLP_ENDPOINT", live)],
        "metrics" => vec![("OTEL_METRICS_EXPORTER", "otlp".into()), ("OTEL_EXPORTER_OTLP_ENDPOINT", live)],
        "both" => vec![
            ("OTEL_TRACES_EXPORTER", "otlp".into()),
            ("OTEL_METRICS_EXPORTER", "otlp".into()),
            ("OTEL_EXPORTER_OTLP_ENDPOINT", live),
        ],
        "dead" => vec![("OTEL_TRACES_EXPORTER", "otlp".into()), ("OTEL_EXPORTER_OTLP_ENDPOINT", dead)],
        "log" => vec![("MCPLITE_LOG", "info".into())],
        _ => return s,
    };
    let mut vars: HashMap<&str, String> = vars.into_iter().collect();
    // A queue that holds a whole round, so that no span is dropped and the
    // export threads' CPU covers every message (the default queue of 2,048
    // overflows at this rate, and dropped spans cost the exporter nothing).
    if mode != "dead" {
        vars.insert("OTEL_BSP_MAX_QUEUE_SIZE", (n + 1024).to_string());
    }
    s.set_recorder(recorder_from_env(&|k| vars.get(k).cloned()));
    s
}

/// Where a metric measurement's time goes on the serving thread: the pieces
/// of `MetricsRecorder` (clock reads, the attribute list with its
/// allocations, the SDK's `Histogram::record`, which hashes the attribute
/// set and updates the buckets), timed alone in tight loops (thread CPU, ns
/// per call; median of `rounds`).
fn breakdown(n: usize, rounds: usize) {
    use opentelemetry::metrics::MeterProvider as _;
    use opentelemetry::KeyValue;
    use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
    let reader = PeriodicReader::builder(InMemoryMetricExporter::default())
        .with_interval(std::time::Duration::from_secs(3600))
        .build();
    let provider = SdkMeterProvider::builder().with_reader(reader).build();
    let h = provider.meter("b").f64_histogram("h").with_boundaries(vec![0.01, 0.1, 1.0]).build();
    let tool = String::from("echo");
    let attrs7 = |t: &str| {
        vec![
            KeyValue::new("mcp.method.name", "tools/call"),
            KeyValue::new("network.transport", "pipe"),
            KeyValue::new("gen_ai.operation.name", "execute_tool"),
            KeyValue::new("gen_ai.tool.name", t.to_string()),
            KeyValue::new("mcp.protocol.version", "2025-06-18"),
        ]
    };
    let fixed = attrs7(&tool);
    let fixed3 = fixed[..3].to_vec();
    type Case<'a> = (&'a str, Box<dyn Fn() + 'a>);
    let cases: Vec<Case> = vec![
        (
            "two Instant::now()",
            Box::new(|| {
                std::hint::black_box((Instant::now(), Instant::now()));
            }),
        ),
        (
            "attribute Vec (5, one owned String)",
            Box::new(|| {
                std::hint::black_box(attrs7(&tool));
            }),
        ),
        ("record, 5 attributes (prebuilt)", Box::new(|| h.record(1e-4, &fixed))),
        ("record, 3 attributes (prebuilt)", Box::new(|| h.record(1e-4, &fixed3))),
        ("record, no attributes", Box::new(|| h.record(1e-4, &[]))),
        (
            "Box<dyn Any> state (alloc + free)",
            Box::new(|| {
                let b: Box<dyn std::any::Any + Send> = Box::new((Instant::now(), "tools/call", Some(tool.clone())));
                std::hint::black_box(b);
            }),
        ),
    ];
    println!("metric measurement pieces, serving-thread CPU per call (median of {rounds} rounds x {n}):");
    for (label, f) in &cases {
        let mut v = Vec::new();
        for _ in 0..=rounds {
            let c0 = thread_cpu_ns();
            for _ in 0..n {
                f();
            }
            v.push((thread_cpu_ns() - c0) / n as f64);
        }
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        println!("  {label:40} {:7.1} ns", v[v.len() / 2]);
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(3).map(String::as_str) == Some("breakdown") {
        let n = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(200_000);
        return breakdown(n, args.get(2).and_then(|s| s.parse().ok()).unwrap_or(5));
    }
    let n: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(20_000);
    let rounds: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(7);
    let (port, received) = sink();
    let dead_port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let init = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}"#;
    let lines: Vec<Vec<u8>> = (1..=n)
        .map(|i| {
            format!(
                r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"hello"}},"_meta":{{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}}}}}"#
            )
            .into_bytes()
        })
        .collect();
    // "off2" is a second tracing-off server: the off/off2 ratio is the noise
    // floor (tracing off costs one `Option` check per message).
    let all = ["off", "off2", "spans", "metrics", "both", "dead", "log"];
    let chosen: Vec<&str> = match args.get(3) {
        Some(list) => all.iter().copied().filter(|m| *m == "off" || list.split(',').any(|x| x == *m)).collect(),
        None => all.to_vec(),
    };
    let modes = chosen.as_slice();
    let mut results: HashMap<&str, Vec<f64>> = HashMap::new();
    let mut cpu: HashMap<&str, Vec<f64>> = HashMap::new();
    let mut other: HashMap<&str, Vec<f64>> = HashMap::new();
    for round in 0..=rounds {
        for &mode in modes {
            let mut host = Echo;
            let srv = server(mode, port, dead_port, n, &mut host);
            let mut legacy = LegacyState::default();
            drop(srv.handle(&mut legacy, init, &mut host));
            let t0 = Instant::now();
            let c0 = thread_cpu_ns();
            let p0 = process_cpu_ns();
            let mut bytes = 0usize;
            for l in &lines {
                let r = srv.handle(&mut legacy, l, &mut host);
                bytes += r.line().map_or(0, |b| b.len());
                drop(r);
            }
            let ns = t0.elapsed().as_nanos() as f64 / n as f64;
            let cpu_ns = (thread_cpu_ns() - c0) / n as f64;
            std::hint::black_box(bytes);
            let t1 = Instant::now();
            srv.shutdown_recorder();
            let other_ns = ((process_cpu_ns() - p0) - (thread_cpu_ns() - c0)) / n as f64;
            let flush_ms = t1.elapsed().as_secs_f64() * 1e3;
            if round > 0 {
                // Round 0 warms up.
                results.entry(mode).or_default().push(ns);
                cpu.entry(mode).or_default().push(cpu_ns);
                other.entry(mode).or_default().push(other_ns);
                if mode != "off" && round == 1 {
                    eprintln!("  {mode}: shutdown flush took {flush_ms:.1} ms");
                }
            }
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        v[v.len() / 2]
    };
    println!("messages per round: {n}, rounds: {rounds} (medians; wall = elapsed time per message,");
    println!("cpu = CPU time of the protocol thread per message, the export thread excluded)");
    for (label, table) in [("wall", &mut results), ("cpu ", &mut cpu)] {
        let off = median(table.get_mut("off").unwrap());
        println!("{label} off   {:8.3} us/message", off / 1e3);
        for mode in &modes[1..] {
            let m = median(table.get_mut(mode).unwrap());
            println!(
                "{label} {mode:5} {:8.3} us/message  overhead {:+.3} us/message  ratio {:.2}",
                m / 1e3,
                (m - off) / 1e3,
                m / off
            );
        }
    }
    for &mode in modes {
        println!(
            "other threads (exporter, test sink) {mode:5} {:8.3} us CPU/message",
            median(other.get_mut(mode).unwrap()) / 1e3
        );
    }
    println!("OTLP bytes received by the sink: {}", received.load(Ordering::Relaxed));
}
