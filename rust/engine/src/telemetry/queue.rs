//! A bounded batch queue between span recording (the protocol thread) and
//! exporting (a background thread). The protocol thread only ever does a
//! non-blocking `try_send`: when the queue is full the span is dropped and
//! counted, with one diagnostic on stderr. A dead or slow collector therefore
//! costs dropped spans, never protocol latency.

use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{bounded, unbounded, Receiver, RecvTimeoutError, Sender, TrySendError};
use opentelemetry::Context;
use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};
use opentelemetry_sdk::trace::{Span, SpanData, SpanProcessor};

use super::otlp::Export;

/// Write one diagnostic line on stderr, ignoring failures (a closed stderr
/// must never panic or disturb the server).
pub(crate) fn diag(msg: &str) {
    let _ = writeln!(std::io::stderr(), "mcplite: {msg}");
}

enum Ctl {
    /// A batch is ready (or, with no schedule delay, a span): export now.
    Wake,
    Flush(Instant, Sender<()>),
    Shutdown(Instant, Sender<()>),
}

/// Batch settings.
#[derive(Debug, Clone)]
pub(crate) struct QueueSettings {
    pub max_queue_size: usize,
    /// Zero: export as soon as the queue is momentarily empty.
    pub schedule_delay: Duration,
    pub max_export_batch_size: usize,
    pub export_timeout: Duration,
}

#[derive(Debug, Default)]
struct Counters {
    /// Spans dropped because the queue was full.
    queue_full: AtomicU64,
    /// Spans lost because an export failed.
    export_failed: AtomicU64,
    warned_full: AtomicBool,
    /// A `Wake` is on its way; the worker clears it before draining.
    wake_pending: AtomicBool,
}

/// The span processor installed in the SDK tracer provider.
pub(crate) struct QueueProcessor {
    tx: Sender<SpanData>,
    ctl: Sender<Ctl>,
    counters: Arc<Counters>,
    handle: Mutex<Option<JoinHandle<()>>>,
    is_shutdown: AtomicBool,
    /// Queue length that wakes the exporter thread (1 with no delay).
    wake_at: usize,
}

impl std::fmt::Debug for QueueProcessor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("QueueProcessor")
    }
}

/// Spawn with every signal blocked so that R's signal handlers (SIGPIPE,
/// SIGINT, SIGUSR1, ...) never run on this thread.
fn spawn_blocking_signals<F: FnOnce() + Send + 'static>(f: F) -> std::io::Result<JoinHandle<()>> {
    // SAFETY: plain sigset manipulation of the calling thread, restored below.
    unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_BLOCK, &all, &mut old);
        let r = std::thread::Builder::new().name("mcplite-otel".into()).spawn(f);
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        r
    }
}

impl QueueProcessor {
    pub(crate) fn new(exporters: Vec<Box<dyn Export>>, s: QueueSettings) -> std::io::Result<QueueProcessor> {
        let (tx, rx) = bounded::<SpanData>(s.max_queue_size.max(1));
        let (ctl, ctl_rx) = unbounded::<Ctl>();
        let counters = Arc::new(Counters::default());
        let c2 = Arc::clone(&counters);
        let wake_at = if s.schedule_delay.is_zero() { 1 } else { s.max_export_batch_size.max(1) };
        let handle = spawn_blocking_signals(move || worker(rx, ctl_rx, exporters, s, c2))?;
        Ok(QueueProcessor {
            tx,
            ctl,
            counters,
            handle: Mutex::new(Some(handle)),
            is_shutdown: AtomicBool::new(false),
            wake_at,
        })
    }

    fn control(&self, make: fn(Instant, Sender<()>) -> Ctl, timeout: Duration) -> OTelSdkResult {
        let (ack_tx, ack_rx) = bounded(1);
        let deadline = Instant::now() + timeout;
        if self.ctl.send(make(deadline, ack_tx)).is_err() {
            return Err(OTelSdkError::AlreadyShutdown);
        }
        match ack_rx.recv_timeout(timeout) {
            Ok(()) => Ok(()),
            Err(_) => Err(OTelSdkError::Timeout(timeout)),
        }
    }
}

impl SpanProcessor for QueueProcessor {
    fn on_start(&self, _span: &mut Span, _cx: &Context) {}

    fn on_end(&self, span: SpanData) {
        if !span.span_context.is_sampled() {
            return;
        }
        // The worker sleeps on its timer and the control channel, never on
        // the span queue, so a send costs no wake-up (no syscall) except
        // once per full batch.
        match self.tx.try_send(span) {
            Ok(()) => {
                if self.tx.len() >= self.wake_at && !self.counters.wake_pending.swap(true, Ordering::AcqRel) {
                    let _ = self.ctl.send(Ctl::Wake);
                }
            }
            Err(TrySendError::Full(_)) => {
                self.counters.queue_full.fetch_add(1, Ordering::Relaxed);
                if !self.counters.warned_full.swap(true, Ordering::Relaxed) {
                    diag("the tracing queue is full; dropping spans (requests are not affected)");
                }
            }
            Err(TrySendError::Disconnected(_)) => {
                self.counters.export_failed.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.control(Ctl::Flush, Duration::from_secs(5))
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        if self.is_shutdown.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        let r = self.control(Ctl::Shutdown, timeout);
        match &r {
            Ok(()) => {
                if let Some(h) = self.handle.lock().ok().and_then(|mut g| g.take()) {
                    let _ = h.join();
                }
            }
            Err(_) => {
                diag(&format!("flushing spans did not finish within {} ms; unsent spans are lost", timeout.as_millis()))
            }
        }
        let full = self.counters.queue_full.load(Ordering::Relaxed);
        let failed = self.counters.export_failed.load(Ordering::Relaxed);
        if full > 0 || failed > 0 {
            diag(&format!(
                "{} span(s) were dropped ({full} on a full queue, {failed} in failed exports)",
                full + failed
            ));
        }
        r
    }
}

fn worker(
    rx: Receiver<SpanData>,
    ctl: Receiver<Ctl>,
    mut exporters: Vec<Box<dyn Export>>,
    s: QueueSettings,
    counters: Arc<Counters>,
) {
    // Exporting is background work: under CPU contention the protocol thread
    // goes first (on Linux, nice values are per thread). A starved exporter
    // costs dropped spans, never request latency.
    // SAFETY: plain syscall on the calling thread.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, 0, 10);
    }
    let mut batch: Vec<SpanData> = Vec::with_capacity(s.max_export_batch_size);
    let mut warned = false;
    let mut export = |batch: &mut Vec<SpanData>, deadline: Instant| {
        if batch.is_empty() {
            return;
        }
        let mut spans = Some(std::mem::take(batch));
        let n = spans.as_ref().map_or(0, |v| v.len()) as u64;
        let last = exporters.len().saturating_sub(1);
        for (i, exporter) in exporters.iter_mut().enumerate() {
            let data = if i == last { spans.take().unwrap_or_default() } else { spans.clone().unwrap_or_default() };
            if let Err(e) = exporter.export(data, deadline) {
                counters.export_failed.fetch_add(n, Ordering::Relaxed);
                if !warned {
                    warned = true;
                    diag(&format!(
                        "exporting spans to {} failed ({e}); spans are dropped, requests are not affected",
                        exporter.describe()
                    ));
                }
            }
        }
    };
    // With no schedule delay spans are exported as they arrive; the timer
    // then only has to wake up rarely.
    let tick = if s.schedule_delay.is_zero() { Duration::from_secs(3600) } else { s.schedule_delay };
    let mut next = Instant::now() + tick;
    // Export everything queued, a batch at a time, until `deadline`.
    let mut drain = |batch: &mut Vec<SpanData>, deadline: Instant| loop {
        while batch.len() < s.max_export_batch_size {
            match rx.try_recv() {
                Ok(x) => batch.push(x),
                Err(_) => break,
            }
        }
        if batch.is_empty() {
            return;
        }
        export(batch, deadline.min(Instant::now() + s.export_timeout));
        if Instant::now() >= deadline {
            return;
        }
    };
    loop {
        let wait = next.saturating_duration_since(Instant::now());
        match ctl.recv_timeout(wait) {
            Ok(Ctl::Wake) => {
                counters.wake_pending.store(false, Ordering::Release);
                drain(&mut batch, Instant::now() + s.export_timeout);
            }
            Ok(Ctl::Flush(deadline, ack)) => {
                drain(&mut batch, deadline);
                let _ = ack.send(());
                next = Instant::now() + tick;
            }
            Ok(Ctl::Shutdown(deadline, ack)) => {
                drain(&mut batch, deadline);
                let _ = ack.send(());
                return;
            }
            Err(RecvTimeoutError::Timeout) => {
                drain(&mut batch, Instant::now() + s.export_timeout);
                next = Instant::now() + tick;
            }
            Err(RecvTimeoutError::Disconnected) => {
                drain(&mut batch, Instant::now() + s.export_timeout);
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry::trace::{Tracer, TracerProvider};
    use opentelemetry_sdk::trace::SdkTracerProvider;
    use std::sync::atomic::AtomicUsize;

    /// Blocks on every export until released; counts exported spans.
    struct Stuck {
        release: Receiver<()>,
        exported: Arc<AtomicUsize>,
    }

    impl Export for Stuck {
        fn export(&mut self, spans: Vec<SpanData>, deadline: Instant) -> Result<(), String> {
            let _ = self.release.recv_deadline(deadline);
            self.exported.fetch_add(spans.len(), Ordering::SeqCst);
            Ok(())
        }
        fn describe(&self) -> String {
            "stuck".into()
        }
    }

    fn settings(q: usize, delay_ms: u64) -> QueueSettings {
        QueueSettings {
            max_queue_size: q,
            schedule_delay: Duration::from_millis(delay_ms),
            max_export_batch_size: q,
            export_timeout: Duration::from_secs(30),
        }
    }

    #[test]
    fn full_queue_drops_without_blocking() {
        let (release_tx, release) = unbounded();
        let exported = Arc::new(AtomicUsize::new(0));
        let p = QueueProcessor::new(vec![Box::new(Stuck { release, exported: Arc::clone(&exported) })], settings(4, 0))
            .unwrap();
        let counters = Arc::clone(&p.counters);
        let provider = SdkTracerProvider::builder().with_span_processor(p).build();
        let tracer = provider.tracer("t");
        // 200 spans against an exporter that is stuck until released below:
        // if ending a span waited for the exporter, this loop would never end.
        for _ in 0..200 {
            tracer.in_span("x", |_| {});
        }
        let dropped = counters.queue_full.load(Ordering::SeqCst);
        assert!(dropped >= 200 - 4 - 4, "dropped {dropped}");
        for _ in 0..100 {
            let _ = release_tx.send(());
        }
        provider.shutdown_with_timeout(Duration::from_secs(5)).unwrap();
        assert_eq!(exported.load(Ordering::SeqCst) as u64 + dropped, 200);
    }

    #[test]
    fn batches_by_delay_and_flushes_on_shutdown() {
        let (release_tx, release) = unbounded();
        for _ in 0..100 {
            release_tx.send(()).unwrap();
        }
        let exported = Arc::new(AtomicUsize::new(0));
        let p = QueueProcessor::new(
            vec![Box::new(Stuck { release, exported: Arc::clone(&exported) })],
            settings(1000, 60_000),
        )
        .unwrap();
        let provider = SdkTracerProvider::builder().with_span_processor(p).build();
        let tracer = provider.tracer("t");
        for _ in 0..10 {
            tracer.in_span("x", |_| {});
        }
        std::thread::sleep(Duration::from_millis(50));
        // Long schedule delay: nothing exported yet.
        assert_eq!(exported.load(Ordering::SeqCst), 0);
        provider.shutdown_with_timeout(Duration::from_secs(5)).unwrap();
        assert_eq!(exported.load(Ordering::SeqCst), 10);
    }

    #[test]
    fn shutdown_is_bounded_when_the_exporter_hangs() {
        let (_keep, release) = unbounded::<()>();
        let exported = Arc::new(AtomicUsize::new(0));
        let p =
            QueueProcessor::new(vec![Box::new(Stuck { release, exported: Arc::clone(&exported) })], settings(10, 0))
                .unwrap();
        let provider = SdkTracerProvider::builder().with_span_processor(p).build();
        provider.tracer("t").in_span("x", |_| {});
        // The exporter holds the batch for its 30 s export timeout; shutdown
        // gives up after its own timeout instead of waiting for it.
        assert!(provider.shutdown_with_timeout(Duration::from_millis(300)).is_err());
        assert_eq!(exported.load(Ordering::SeqCst), 0);
    }
}
