//! What a tool's progress report costs on the tool's thread while a ticker
//! waits (RULES C2; bench/README.md, issue 17): one million
//! `Progress::report` calls, waking the ticker as the R bridge does (only
//! when `report` asks for it) and, for comparison, on every report.
//!
//! `cargo run --release -p mcplite-engine --example report_cost`

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcplite_engine::progress::{CallStart, CallWatch, Inflight, ProgressPolicy};
use mcplite_engine::Version;

const REPORTS: u32 = 1_000_000;

/// A ticker like the stdio transport's: poll, then sleep until the next
/// notification is due or until woken. Returns how often it woke.
fn ticker(f: &Inflight, stop: &AtomicBool) -> u64 {
    let mut wakes = 0;
    while !stop.load(Ordering::SeqCst) {
        let epoch = f.epoch();
        let idle = Instant::now() + Duration::from_millis(100);
        let due = match f.progress() {
            Some(p) => {
                let _ = p.poll(Instant::now());
                p.next_due().map_or(idle, |d| d.min(idle))
            }
            None => idle,
        };
        f.wait_after(epoch, due);
        wakes += 1;
    }
    wakes
}

fn main() {
    for always in [false, true] {
        let f = Arc::new(Inflight::new(ProgressPolicy::default(), None));
        f.started(&CallStart {
            id: "1",
            progress_token: Some("1"),
            log_level: None,
            asks: mcplite_engine::progress::Asks::NONE,
            version: Version::V2025_11_25,
        });
        let stop = Arc::new(AtomicBool::new(false));
        let (tf, ts) = (Arc::clone(&f), Arc::clone(&stop));
        let t = std::thread::spawn(move || ticker(&tf, &ts));
        let p = f.progress().expect("a call with a token");
        let t0 = Instant::now();
        for i in 1..=REPORTS {
            let wake = p.report(f64::from(i), Some(f64::from(REPORTS)), None).expect("increasing");
            if wake || always {
                f.notify();
            }
        }
        let per = t0.elapsed().as_nanos() as f64 / f64::from(REPORTS);
        stop.store(true, Ordering::SeqCst);
        f.notify();
        let wakes = t.join().expect("ticker");
        let how = if always { "every report wakes the ticker" } else { "wake-ups as report() asks" };
        eprintln!("{how}: {per:.0} ns per report, {} notifications, ticker woke {wakes} times", p.sent());
    }
}
