//! The OTLP/HTTP exporters (protobuf over HTTP, `opentelemetry-otlp`), over
//! a blocking `ureq` client written here because no crate offers one
//! without an async runtime:
//!
//! * `UreqClient`: the `opentelemetry-http` client trait over `ureq`, which
//!   skips connecting for a second after the collector could not be
//!   reached, so a dead collector costs next to nothing;
//! * [`spans`], [`metrics`]: an OTLP exporter for a signal's configuration,
//!   wrapped in `Reporting` with the client's own error text as the cause
//!   of a failure.
//!
//! Without the engine's `net` feature (the build without HTTP: the fuzz
//! targets) there is no OTLP exporter: a configuration that asks for one
//! says so on standard error and that exporter is off; export to standard
//! error works as always.

#[cfg(feature = "net")]
mod http {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};

    use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response};
    use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
    use opentelemetry_sdk::metrics::Temporality;

    use super::super::config::OtlpConfig;
    use super::super::export::{diag, Counters, Reporting};

    /// How long to skip connecting after the collector could not be reached.
    const RETRY_AFTER: Duration = Duration::from_secs(1);

    /// Largest collector response read (OTLP responses are a few bytes).
    const MAX_RESPONSE: u64 = 4 * 1024 * 1024;

    /// The `opentelemetry-http` client trait over a blocking `ureq` agent. It is
    /// only ever called on an exporter thread (the SDK drives the exporter's
    /// future with a plain `block_on`), so blocking is fine there.
    #[derive(Debug)]
    pub(crate) struct UreqClient {
        agent: ureq::Agent,
        down_until: Mutex<Option<Instant>>,
        /// Why the last request failed (the OTLP exporter keeps only "network
        /// error"), for the diagnostic.
        last_error: Mutex<Option<String>>,
    }

    impl UreqClient {
        pub(crate) fn new(timeout: Duration) -> UreqClient {
            let agent = ureq::Agent::config_builder()
                .timeout_global(Some(timeout))
                .http_status_as_error(false)
                .user_agent(concat!("mcplite/", env!("CARGO_PKG_VERSION")))
                .build()
                .new_agent();
            UreqClient { agent, down_until: Mutex::new(None), last_error: Mutex::new(None) }
        }

        /// Why the last request failed, if it did.
        pub(crate) fn last_error(&self) -> Option<String> {
            self.last_error.lock().ok().and_then(|e| e.clone())
        }
    }

    #[async_trait::async_trait]
    impl HttpClient for UreqClient {
        async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
            let mut down = self.down_until.lock().unwrap_or_else(|e| e.into_inner());
            if down.is_some_and(|t| Instant::now() < t) {
                return Err("the collector was unreachable moments ago".into());
            }
            let (parts, body) = request.into_parts();
            let request = Request::from_parts(parts, body.as_ref());
            match self.agent.run(request) {
                Ok(mut response) => {
                    *down = None;
                    if let Ok(mut e) = self.last_error.lock() {
                        *e = None;
                    }
                    let body = response.body_mut().with_config().limit(MAX_RESPONSE).read_to_vec()?;
                    let (parts, _) = response.into_parts();
                    Ok(Response::from_parts(parts, Bytes::from(body)))
                }
                Err(e) => {
                    *down = Some(Instant::now() + RETRY_AFTER);
                    if let Ok(mut last) = self.last_error.lock() {
                        *last = Some(e.to_string());
                    }
                    Err(Box::new(e))
                }
            }
        }
    }

    /// Headers for `opentelemetry-otlp`, which percent-decodes header values
    /// once more: the configuration has decoded them already, so a literal `%`
    /// is escaped again.
    pub(crate) fn otlp_headers(headers: &[(String, String)]) -> HashMap<String, String> {
        headers.iter().map(|(k, v)| (k.clone(), v.replace('%', "%25"))).collect()
    }

    /// An OTLP span exporter posting to `o.url`, each export within
    /// `timeout`; `None` (said on standard error) when it cannot be built.
    pub(crate) fn spans(
        o: &OtlpConfig,
        timeout: Duration,
        counters: Arc<Counters>,
    ) -> Option<Reporting<opentelemetry_otlp::SpanExporter>> {
        let client = Arc::new(UreqClient::new(timeout));
        let built = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_shared_http_client(client.clone())
            .with_endpoint(o.url.clone())
            .with_protocol(Protocol::HttpBinary)
            .with_timeout(timeout)
            .with_headers(otlp_headers(&o.headers))
            .with_retry_policy(opentelemetry_otlp::RetryPolicy::disabled())
            .build();
        match built {
            Ok(x) => Some(
                Reporting::new(x, counters, format!("OTLP endpoint {}", o.url), "spans")
                    .with_cause(Box::new(move || client.last_error())),
            ),
            Err(e) => {
                diag(&format!("cannot export spans to {} ({e}); that exporter is off", o.url));
                None
            }
        }
    }

    /// An OTLP metric exporter posting to `o.url` with `temporality`;
    /// `None` (said on standard error) when it cannot be built.
    pub(crate) fn metrics(
        o: &OtlpConfig,
        temporality: Temporality,
        counters: Arc<Counters>,
    ) -> Option<Reporting<opentelemetry_otlp::MetricExporter>> {
        let client = Arc::new(UreqClient::new(o.timeout));
        let built = opentelemetry_otlp::MetricExporter::builder()
            .with_http()
            .with_shared_http_client(client.clone())
            .with_endpoint(o.url.clone())
            .with_protocol(Protocol::HttpBinary)
            .with_timeout(o.timeout)
            .with_headers(otlp_headers(&o.headers))
            .with_retry_policy(opentelemetry_otlp::RetryPolicy::disabled())
            .with_temporality(temporality)
            .build();
        match built {
            Ok(x) => Some(
                Reporting::new(x, counters, format!("OTLP endpoint {}", o.url), "metrics")
                    .with_cause(Box::new(move || client.last_error())),
            ),
            Err(e) => {
                diag(&format!("cannot export metrics to {} ({e}); that exporter is off", o.url));
                None
            }
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn dead_endpoint_fails_fast_then_skips() {
            // Bind then drop to get a port with nobody listening.
            let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
            let client = UreqClient::new(Duration::from_secs(5));
            let req = || {
                Request::builder()
                    .method("POST")
                    .uri(format!("http://127.0.0.1:{port}/v1/traces"))
                    .body(Bytes::from_static(b"x"))
                    .unwrap()
            };
            let e = block_on(client.send_bytes(req())).unwrap_err().to_string();
            assert!(!e.contains("moments ago"), "{e}");
            // Within the next second: no connection attempt at all.
            let e = block_on(client.send_bytes(req())).unwrap_err().to_string();
            assert!(e.contains("moments ago"), "{e}");
        }

        #[test]
        fn silent_endpoint_respects_the_timeout() {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            let port = l.local_addr().unwrap().port();
            let client = UreqClient::new(Duration::from_millis(200));
            let req = Request::builder()
                .method("POST")
                .uri(format!("http://127.0.0.1:{port}/"))
                .body(Bytes::from_static(b"abc"))
                .unwrap();
            // The listener never answers: without the timeout this would hang.
            assert!(block_on(client.send_bytes(req)).is_err());
            drop(l);
        }

        /// Drive a future to completion on this thread (what the SDK's batch
        /// processor does with an exporter's future).
        fn block_on<F: std::future::Future>(f: F) -> F::Output {
            use std::task::{Context as TaskContext, Poll, RawWaker, RawWakerVTable, Waker};
            fn noop(_: *const ()) {}
            fn clone(p: *const ()) -> RawWaker {
                RawWaker::new(p, &VTABLE)
            }
            static VTABLE: RawWakerVTable = RawWakerVTable::new(clone, noop, noop, noop);
            // SAFETY: the vtable's functions do nothing with the data pointer.
            let waker = unsafe { Waker::from_raw(RawWaker::new(std::ptr::null(), &VTABLE)) };
            let mut cx = TaskContext::from_waker(&waker);
            let mut f = std::pin::pin!(f);
            loop {
                if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
                    return v;
                }
            }
        }
    }
}

#[cfg(feature = "net")]
pub(crate) use http::{metrics, spans};

#[cfg(not(feature = "net"))]
mod off {
    use std::sync::Arc;
    use std::time::Duration;

    use opentelemetry_sdk::metrics::Temporality;

    use super::super::config::OtlpConfig;
    use super::super::export::{diag, Counters, Reporting, StderrMetrics, StderrSpans};

    fn say(o: &OtlpConfig, what: &str) {
        diag(&format!(
            "cannot export {what} to {}: this build of the engine has no OTLP exporter (its `net` feature is off); that exporter is off",
            o.url
        ));
    }

    /// Always `None`: this build has no OTLP exporter (said on standard error).
    pub(crate) fn spans(
        o: &OtlpConfig,
        _timeout: Duration,
        _counters: Arc<Counters>,
    ) -> Option<Reporting<StderrSpans>> {
        say(o, "spans");
        None
    }

    /// Always `None`: this build has no OTLP exporter (said on standard error).
    pub(crate) fn metrics(
        o: &OtlpConfig,
        _temporality: Temporality,
        _counters: Arc<Counters>,
    ) -> Option<Reporting<StderrMetrics>> {
        say(o, "metrics");
        None
    }
}

#[cfg(not(feature = "net"))]
pub(crate) use off::{metrics, spans};
