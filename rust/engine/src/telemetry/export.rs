//! Where spans and metrics go (RULES T8): OTLP/HTTP protobuf (`otlp.rs`),
//! or OTLP/JSON lines on
//! stderr written with the official OTLP types' serde mapping; the SDK's
//! batch span processor and periodic metric reader in front of them.
//!
//! Written here, because no crate does it for this setting:
//!
//! * [`Gate`]: an admission gate in front of the batch processor. The SDK's
//!   processor drops spans on a full queue silently (its internal log is
//!   off); the gate keeps the same bound itself so that drops are counted and
//!   reported on stderr once, as RULES T8 asks;
//! * [`Reporting`]: counts failed exports and reports the first one, and
//!   lowers the export thread's priority (background work must never take
//!   the CPU the protocol thread needs).
//!
//! (The SDK starts its threads itself; the recorders start it inside
//! `crate::signals::masked`, so R's signal handlers stay off those threads.)

use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, TryLockError};
use std::time::{Duration, Instant};

use opentelemetry::Context;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::transform::common::tonic::ResourceAttributesWithSchema;
use opentelemetry_proto::transform::trace::tonic::group_spans_by_resource_and_scope;
use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};
use opentelemetry_sdk::metrics::data::ResourceMetrics;
use opentelemetry_sdk::metrics::exporter::PushMetricExporter;
use opentelemetry_sdk::trace::{Span, SpanData, SpanExporter, SpanProcessor};
use opentelemetry_sdk::Resource;

/// Write one diagnostic line on stderr, ignoring failures (a closed stderr
/// must never panic or disturb the server).
pub(crate) fn diag(msg: &str) {
    let _ = writeln!(std::io::stderr(), "mcplite: {msg}");
}

/// RULES T8 (`stderr`): span and metric lines never land inside a line a
/// tool is printing. A tool's output goes to stderr too (RULES S1), and R
/// writes one printed line in several pieces (`print(1:3)` writes `[1]`,
/// ` 1`, ` 2`, ` 3` and the newline separately), so an exporter thread
/// writing between two pieces would splice its line into the tool's. The
/// stdio serve loop holds this gate while an in-process tool runs; the
/// exporters take it for each write, so their lines wait for the tool.
static TOOL_OUTPUT: Mutex<()> = Mutex::new(());

/// How long the serve loop waits for an exporter to finish its write.
const GATE_WAIT: Duration = Duration::from_millis(10);

/// Hold while R code that may print runs in this process (see
/// [`TOOL_OUTPUT`]). Never take it on a thread that holds it already.
/// `None` when an exporter has held the gate for longer than [`GATE_WAIT`]:
/// its write is stuck on a stderr nobody reads, and exporting never holds
/// up requests (RULES T8); a line may then be spliced.
pub(crate) fn tool_output_gate() -> Option<MutexGuard<'static, ()>> {
    let until = Instant::now() + GATE_WAIT;
    loop {
        match TOOL_OUTPUT.try_lock() {
            Ok(g) => return Some(g),
            Err(TryLockError::Poisoned(p)) => return Some(p.into_inner()),
            Err(TryLockError::WouldBlock) if Instant::now() < until => std::thread::sleep(Duration::from_micros(50)),
            Err(TryLockError::WouldBlock) => return None,
        }
    }
}

/// Run `f` (a write on stderr) when no in-process tool is printing (see
/// [`TOOL_OUTPUT`]): for the engine's other stderr lines, the access log's
/// (RULES H7).
#[cfg(feature = "net")]
pub(crate) fn between_tool_output<T>(f: impl FnOnce() -> T) -> T {
    let _gate = TOOL_OUTPUT.lock().unwrap_or_else(PoisonError::into_inner);
    f()
}

fn write_stderr(bytes: &[u8]) -> OTelSdkResult {
    let _gate = TOOL_OUTPUT.lock().unwrap_or_else(PoisonError::into_inner);
    let stderr = std::io::stderr();
    let mut lock = stderr.lock();
    lock.write_all(bytes).and_then(|_| lock.flush()).map_err(|e| OTelSdkError::InternalFailure(e.to_string()))
}

/// Lower the calling thread's scheduling priority (on Linux, nice values
/// are per thread): under CPU contention the protocol thread goes first. A
/// starved exporter costs dropped telemetry, never request latency.
#[cfg(unix)]
fn lower_priority() {
    // SAFETY: plain syscall on the calling thread.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, 0, 10);
    }
}

/// Windows: the calling thread's priority one step below normal.
#[cfg(windows)]
fn lower_priority() {
    use windows_sys::Win32::System::Threading::{GetCurrentThread, SetThreadPriority, THREAD_PRIORITY_BELOW_NORMAL};
    // SAFETY: the pseudo-handle of the calling thread is always valid.
    unsafe {
        SetThreadPriority(GetCurrentThread(), THREAD_PRIORITY_BELOW_NORMAL);
    }
}

#[cfg(not(any(unix, windows)))]
fn lower_priority() {}

/// Why an export failed, as the exporter's HTTP client last saw it.
pub(crate) type Cause = Box<dyn Fn() -> Option<String> + Send + Sync>;

/// Dropped and failed counts, shared by a [`Gate`] and its [`Reporting`]
/// exporter.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    /// Spans admitted to the batch processor.
    admitted: AtomicU64,
    /// Spans handed to the exporter.
    taken: AtomicU64,
    /// Dropped because the queue was full.
    queue_full: AtomicU64,
    warned_full: AtomicBool,
    /// Items lost in failed exports.
    failed: AtomicU64,
    warned_failed: AtomicBool,
    lowered: AtomicBool,
}

/// An exporter that counts and reports failures (spans or metrics).
pub(crate) struct Reporting<E> {
    inner: E,
    counters: Arc<Counters>,
    /// Where the data goes, for diagnostics.
    target: String,
    /// `spans` or `metrics`.
    what: &'static str,
    /// The cause of the last failure as the exporter's HTTP client saw it
    /// (the OTLP exporter keeps only "network error").
    cause: Option<Cause>,
}

impl<E: std::fmt::Debug> std::fmt::Debug for Reporting<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reporting").field("inner", &self.inner).field("target", &self.target).finish_non_exhaustive()
    }
}

impl<E> Reporting<E> {
    pub(crate) fn new(inner: E, counters: Arc<Counters>, target: String, what: &'static str) -> Reporting<E> {
        Reporting { inner, counters, target, what, cause: None }
    }

    /// Report `cause`'s text (the HTTP client's own error) on failure.
    #[cfg_attr(not(feature = "net"), allow(dead_code))]
    pub(crate) fn with_cause(mut self, cause: Cause) -> Reporting<E> {
        self.cause = Some(cause);
        self
    }

    fn before(&self, n: u64) {
        if !self.counters.lowered.swap(true, Ordering::Relaxed) {
            lower_priority();
        }
        self.counters.taken.fetch_add(n, Ordering::AcqRel);
    }

    fn after(&self, n: u64, r: &OTelSdkResult) {
        if let Err(e) = r {
            self.counters.failed.fetch_add(n, Ordering::Relaxed);
            if !self.counters.warned_failed.swap(true, Ordering::Relaxed) {
                let cause = self.cause.as_ref().and_then(|c| c()).unwrap_or_else(|| e.to_string());
                diag(&format!(
                    "exporting {} to {} failed ({cause}); telemetry is dropped, requests are not affected",
                    self.what, self.target
                ));
            }
        }
    }
}

impl<E: SpanExporter> SpanExporter for Reporting<E> {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        let n = batch.len() as u64;
        self.before(n);
        let r = self.inner.export(batch).await;
        self.after(n, &r);
        r
    }
    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }
    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}

impl<E: PushMetricExporter> PushMetricExporter for Reporting<E> {
    async fn export(&self, metrics: &ResourceMetrics) -> OTelSdkResult {
        self.before(0);
        let r = self.inner.export(metrics).await;
        self.after(1, &r);
        r
    }
    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }
    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }
    fn temporality(&self) -> opentelemetry_sdk::metrics::Temporality {
        self.inner.temporality()
    }
}

/// Admission gate in front of the SDK's batch span processor: at most
/// `max_queue` spans wait for export; beyond that spans are dropped and
/// counted here, with one stderr diagnostic. The processor behind the gate
/// gets room for one more batch than that (spans taken from its queue but
/// not yet handed to the exporter still count as waiting here), so it never
/// drops on its own.
#[derive(Debug)]
pub(crate) struct Gate<P> {
    inner: P,
    counters: Arc<Counters>,
    max_queue: u64,
}

impl<P> Gate<P> {
    pub(crate) fn new(inner: P, counters: Arc<Counters>, max_queue: usize) -> Gate<P> {
        Gate { inner, counters, max_queue: max_queue as u64 }
    }
}

impl<P: SpanProcessor> SpanProcessor for Gate<P> {
    fn on_start(&self, span: &mut Span, cx: &Context) {
        self.inner.on_start(span, cx);
    }

    fn on_end(&self, span: SpanData) {
        if !span.span_context.is_sampled() {
            return;
        }
        let c = &self.counters;
        let waiting = c.admitted.load(Ordering::Acquire).saturating_sub(c.taken.load(Ordering::Acquire));
        if waiting >= self.max_queue {
            c.queue_full.fetch_add(1, Ordering::Relaxed);
            if !c.warned_full.swap(true, Ordering::Relaxed) {
                diag("the telemetry queue is full; dropping spans (requests are not affected)");
            }
            return;
        }
        c.admitted.fetch_add(1, Ordering::AcqRel);
        self.inner.on_end(span);
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        let r = self.inner.shutdown_with_timeout(timeout);
        if let Err(OTelSdkError::Timeout(t)) = &r {
            diag(&format!("flushing spans did not finish within {} ms; unsent spans are lost", t.as_millis()));
        }
        let full = self.counters.queue_full.load(Ordering::Relaxed);
        let failed = self.counters.failed.load(Ordering::Relaxed);
        if full > 0 || failed > 0 {
            diag(&format!(
                "{} span(s) were dropped ({full} on a full queue, {failed} in failed exports)",
                full + failed
            ));
        }
        r
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}

/// One OTLP/JSON line (an `ExportTraceServiceRequest` holding one span) per
/// finished span, on stderr.
#[derive(Debug, Default)]
pub(crate) struct StderrSpans {
    resource: ResourceAttributesWithSchema,
}

impl SpanExporter for StderrSpans {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        let mut out = Vec::with_capacity(1024 * batch.len());
        for s in batch {
            let req = ExportTraceServiceRequest {
                resource_spans: group_spans_by_resource_and_scope(vec![s], &self.resource),
            };
            serde_json::to_writer(&mut out, &req).map_err(|e| OTelSdkError::InternalFailure(e.to_string()))?;
            out.push(b'\n');
        }
        write_stderr(&out)
    }
    fn set_resource(&mut self, resource: &Resource) {
        self.resource = resource.into();
    }
}

/// One OTLP/JSON line (an `ExportMetricsServiceRequest`) per metrics export,
/// on stderr.
#[derive(Debug)]
pub(crate) struct StderrMetrics {
    pub(crate) temporality: opentelemetry_sdk::metrics::Temporality,
}

impl PushMetricExporter for StderrMetrics {
    async fn export(&self, metrics: &ResourceMetrics) -> OTelSdkResult {
        let req = ExportMetricsServiceRequest::from(metrics);
        let mut out = serde_json::to_vec(&req).map_err(|e| OTelSdkError::InternalFailure(e.to_string()))?;
        out.push(b'\n');
        write_stderr(&out)
    }
    fn force_flush(&self) -> OTelSdkResult {
        Ok(())
    }
    fn shutdown_with_timeout(&self, _timeout: Duration) -> OTelSdkResult {
        Ok(())
    }
    fn temporality(&self) -> opentelemetry_sdk::metrics::Temporality {
        self.temporality
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry::trace::{Tracer, TracerProvider};
    use opentelemetry_sdk::trace::{BatchConfigBuilder, BatchSpanProcessor, SdkTracerProvider};
    use std::sync::atomic::AtomicUsize;
    use std::sync::mpsc;

    /// Blocks on every export until released; counts exported spans.
    #[derive(Debug)]
    struct Stuck {
        release: Mutex<mpsc::Receiver<()>>,
        exported: Arc<AtomicUsize>,
    }

    impl SpanExporter for Stuck {
        async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
            let _ = self.release.lock().unwrap().recv_timeout(Duration::from_secs(30));
            self.exported.fetch_add(batch.len(), Ordering::SeqCst);
            Ok(())
        }
    }

    fn gated(q: usize, delay_ms: u64) -> (SdkTracerProvider, mpsc::Sender<()>, Arc<AtomicUsize>, Arc<Counters>) {
        let (tx, rx) = mpsc::channel();
        let exported = Arc::new(AtomicUsize::new(0));
        let counters = Arc::new(Counters::default());
        let exporter = Reporting::new(
            Stuck { release: Mutex::new(rx), exported: Arc::clone(&exported) },
            Arc::clone(&counters),
            "stuck".into(),
            "spans",
        );
        let batch = BatchConfigBuilder::default()
            .with_max_queue_size(2 * q)
            .with_max_export_batch_size(q)
            .with_scheduled_delay(Duration::from_millis(delay_ms))
            .build();
        let bsp = BatchSpanProcessor::builder(exporter).with_batch_config(batch).build();
        let provider =
            SdkTracerProvider::builder().with_span_processor(Gate::new(bsp, Arc::clone(&counters), q)).build();
        (provider, tx, exported, counters)
    }

    #[test]
    fn full_queue_drops_without_blocking_and_counts() {
        let (provider, release, exported, counters) = gated(4, 1);
        let tracer = provider.tracer("t");
        // 200 spans against an exporter that is stuck until released below:
        // if ending a span waited for the exporter, this loop would never end.
        for _ in 0..200 {
            tracer.in_span("x", |_| {});
        }
        let dropped = counters.queue_full.load(Ordering::SeqCst);
        assert!(dropped >= 200 - 2 * 4, "dropped {dropped}");
        for _ in 0..100 {
            let _ = release.send(());
        }
        provider.shutdown_with_timeout(Duration::from_secs(5)).unwrap();
        // Every span is either exported or counted as dropped: the processor
        // behind the gate never dropped one silently.
        assert_eq!(exported.load(Ordering::SeqCst) as u64 + dropped, 200);
    }

    #[test]
    fn batches_by_delay_and_flushes_on_shutdown() {
        let (provider, release, exported, counters) = gated(1000, 60_000);
        for _ in 0..100 {
            release.send(()).unwrap();
        }
        let tracer = provider.tracer("t");
        for _ in 0..10 {
            tracer.in_span("x", |_| {});
        }
        std::thread::sleep(Duration::from_millis(50));
        // Long schedule delay: nothing exported yet.
        assert_eq!(exported.load(Ordering::SeqCst), 0);
        provider.shutdown_with_timeout(Duration::from_secs(5)).unwrap();
        assert_eq!(exported.load(Ordering::SeqCst), 10);
        assert_eq!(counters.queue_full.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn shutdown_is_bounded_when_the_exporter_hangs() {
        let (provider, _keep, exported, _) = gated(10, 1);
        provider.tracer("t").in_span("x", |_| {});
        std::thread::sleep(Duration::from_millis(50));
        // The exporter holds the batch for 30 s; shutdown gives up after its
        // own timeout instead of waiting for it.
        assert!(provider.shutdown_with_timeout(Duration::from_millis(300)).is_err());
        assert_eq!(exported.load(Ordering::SeqCst), 0);
    }
}
