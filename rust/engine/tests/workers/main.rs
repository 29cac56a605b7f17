//! Worker processes (RULES section 14) with real processes: this very
//! executable started as a worker (`MCPLITE_WORKER` set) serves a fake
//! host's tools with the engine's worker loop (`worker.rs`), and the tests
//! drive a [`Pool`](mcplite_engine::workers::Pool) directly (`pool.rs`),
//! through the stdio transport over real pipes (`stdio.rs`) and over HTTP
//! (`http.rs`), with what they share in `shared.rs`. `harness = false`:
//! `main` is a worker, a pool parent (for the orphan test), or a small test
//! runner that prints libtest's lines; tests are named `<module>::<test>`
//! (`cargo test -p mcplite-engine --test workers stdio::` runs one file's)
//! and `--list` lists them.

// The runner reports on stdout, as libtest does.
#![allow(clippy::print_stdout)]

/// A module's tests for the runner: `tests()`, the `(name, test)` pairs,
/// named `<module>::<test>` as libtest names them.
#[cfg(unix)]
macro_rules! tests {
    ($($test:ident),* $(,)?) => {
        pub fn tests() -> Vec<(String, fn())> {
            let module = module_path!().rsplit("::").next().unwrap();
            vec![$((format!("{module}::{}", stringify!($test)), $test as fn())),*]
        }
    };
}

#[cfg(unix)]
#[path = "../pipes/mod.rs"]
mod pipes;

#[cfg(unix)]
mod http;
#[cfg(unix)]
mod pool;
#[cfg(unix)]
mod shared;
#[cfg(unix)]
mod stdio;
#[cfg(unix)]
mod worker;

#[cfg(unix)]
fn main() {
    if std::env::var_os("MCPLITE_WORKER").is_some() {
        return worker::worker_main();
    }
    if let Ok(out) = std::env::var("FAKE_PARENT_OUT") {
        return pool::parent_main(&out);
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let filter: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    let chosen: Vec<(String, fn())> = [pool::tests(), stdio::tests(), http::tests()]
        .into_iter()
        .flatten()
        .filter(|(name, _)| filter.is_empty() || filter.iter().any(|p| name.contains(p.as_str())))
        .collect();
    if args.iter().any(|a| a == "--list") {
        for (name, _) in &chosen {
            println!("{name}: test");
        }
        println!("\n{} tests, 0 benchmarks", chosen.len());
        return;
    }
    let mut failed = 0;
    let mut passed = 0;
    let t0 = std::time::Instant::now();
    for (name, f) in chosen {
        match std::panic::catch_unwind(f) {
            Ok(()) => {
                passed += 1;
                println!("test {name} ... ok");
            }
            Err(_) => {
                failed += 1;
                println!("test {name} ... FAILED");
            }
        }
    }
    let status = if failed == 0 { "ok" } else { "FAILED" };
    println!(
        "\ntest result: {status}. {passed} passed; {failed} failed; 0 ignored; 0 measured; 0 filtered out; finished in {:.2}s",
        t0.elapsed().as_secs_f64()
    );
    if failed > 0 {
        std::process::exit(101);
    }
}

/// Worker processes are not available on this platform.
#[cfg(not(unix))]
fn main() {
    println!("\ntest result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s");
}
