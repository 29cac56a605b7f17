//! Telemetry configuration from the standard OpenTelemetry environment
//! variables (RULES T8), and `MCPLITE_LOG`, read once through a lookup
//! function so tests need not touch the process environment.

use std::time::Duration;

use opentelemetry::trace::SpanContext;

use super::scope::{SCOPE_NAME, SCOPE_PACKAGE};
use super::w3c;

/// Where finished spans or metrics go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExporterKind {
    /// OTLP/JSON lines on stderr: one per finished span, one per metrics
    /// export.
    Stderr,
    /// OTLP over HTTP (protobuf).
    Otlp,
}

/// The sampler (`OTEL_TRACES_SAMPLER`, `OTEL_TRACES_SAMPLER_ARG`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SamplerKind {
    AlwaysOn,
    AlwaysOff,
    TraceIdRatio(f64),
    ParentBasedAlwaysOn,
    ParentBasedAlwaysOff,
    ParentBasedTraceIdRatio(f64),
}

/// OTLP/HTTP settings of one signal.
#[derive(Debug, Clone, PartialEq)]
pub struct OtlpConfig {
    /// The full URL the signal is posted to (`.../v1/traces`,
    /// `.../v1/metrics`).
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub timeout: Duration,
}

/// Exporters of one signal (traces or metrics).
#[derive(Debug, Clone, PartialEq)]
pub struct SignalConfig {
    /// One or more exporters (a list is allowed in `OTEL_*_EXPORTER`).
    pub exporters: Vec<ExporterKind>,
    /// Set when `exporters` has [`ExporterKind::Otlp`].
    pub otlp: Option<OtlpConfig>,
}

/// Aggregation temporality of exported metrics
/// (`OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Temporality {
    Cumulative,
    Delta,
    LowMemory,
}

/// Attribute value length limits in characters (`None`: unlimited).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Limits {
    /// `OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT`, else
    /// `OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT`.
    pub span_value_length: Option<usize>,
    /// `OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT` (metric attributes).
    pub value_length: Option<usize>,
}

/// Everything the recorders need, resolved from the environment.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Spans: `None` when off.
    pub traces: Option<SignalConfig>,
    /// Metrics: `None` when off.
    pub metrics: Option<SignalConfig>,
    pub service_name: String,
    /// `OTEL_RESOURCE_ATTRIBUTES`, decoded, in order (without `service.name`).
    pub resource: Vec<(String, String)>,
    pub sampler: SamplerKind,
    pub max_queue_size: usize,
    pub schedule_delay: Duration,
    pub max_export_batch_size: usize,
    pub export_timeout: Duration,
    /// `OTEL_METRIC_EXPORT_INTERVAL`.
    pub metric_interval: Duration,
    pub temporality: Temporality,
    pub limits: Limits,
    /// A valid `TRACEPARENT` (with `TRACESTATE`) in the environment at
    /// start: the ambient context every span links to.
    pub ambient: Option<SpanContext>,
}

fn get(env: &dyn Fn(&str) -> Option<String>, key: &str) -> Option<String> {
    env(key).map(|v| v.trim().to_string()).filter(|v| !v.is_empty())
}

/// Match `name` against a glob with `*` and `?`.
pub(crate) fn glob_match(pat: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pat.chars().collect(), name.chars().collect());
    let (mut pi, mut ni) = (0usize, 0usize);
    let (mut star, mut mark) = (None::<usize>, 0usize);
    while ni < n.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == n[ni]) {
            pi += 1;
            ni += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ni;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ni = mark;
        } else {
            return false;
        }
    }
    while pi < p.len() && p[pi] == '*' {
        pi += 1;
    }
    pi == p.len()
}

fn any_match(list: &str, names: &[&str]) -> bool {
    list.split(',').map(str::trim).filter(|p| !p.is_empty()).any(|p| names.iter().any(|n| glob_match(p, n)))
}

/// Is mcplite's scope switched off by `OTEL_R_SUPPRESS_SCOPES` or
/// `OTEL_R_EMIT_SCOPES` (comma-separated globs over scope or package names)?
pub(crate) fn scope_suppressed(env: &dyn Fn(&str) -> Option<String>) -> bool {
    let names = [SCOPE_NAME, SCOPE_PACKAGE];
    if let Some(emit) = get(env, "OTEL_R_EMIT_SCOPES") {
        if !any_match(&emit, &names) {
            return true;
        }
    }
    match get(env, "OTEL_R_SUPPRESS_SCOPES") {
        Some(sup) => any_match(&sup, &names),
        None => false,
    }
}

fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let h = b.get(i + 1..i + 3)?;
            let v = u8::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok()?;
            out.push(v);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// `k=v,k2=v2` with percent-encoded values. `None` when malformed.
fn parse_pairs(s: &str) -> Option<Vec<(String, String)>> {
    let mut out = Vec::new();
    for item in s.split(',') {
        let item = item.trim();
        if item.is_empty() {
            continue;
        }
        let (k, v) = item.split_once('=')?;
        let k = k.trim();
        if k.is_empty() {
            return None;
        }
        out.push((percent_decode(k)?, percent_decode(v.trim())?));
    }
    Some(out)
}

fn parse_ms(
    env: &dyn Fn(&str) -> Option<String>,
    keys: &[&str],
    default: u64,
    warn: &mut dyn FnMut(String),
) -> Duration {
    for k in keys {
        if let Some(v) = get(env, k) {
            return match v.parse::<u64>() {
                Ok(ms) => Duration::from_millis(ms),
                Err(_) => {
                    warn(format!("ignoring invalid {k}={v:?} (milliseconds expected)"));
                    Duration::from_millis(default)
                }
            };
        }
    }
    Duration::from_millis(default)
}

fn parse_count(env: &dyn Fn(&str) -> Option<String>, key: &str, default: usize, warn: &mut dyn FnMut(String)) -> usize {
    match get(env, key) {
        None => default,
        Some(v) => match v.parse::<usize>() {
            Ok(n) if n > 0 => n,
            _ => {
                warn(format!("ignoring invalid {key}={v:?} (a positive integer expected)"));
                default
            }
        },
    }
}

fn parse_sampler(env: &dyn Fn(&str) -> Option<String>, warn: &mut dyn FnMut(String)) -> SamplerKind {
    let ratio = |warn: &mut dyn FnMut(String)| match get(env, "OTEL_TRACES_SAMPLER_ARG") {
        None => 1.0,
        Some(a) => match a.parse::<f64>() {
            Ok(r) if (0.0..=1.0).contains(&r) => r,
            _ => {
                warn(format!("ignoring invalid OTEL_TRACES_SAMPLER_ARG={a:?} (a ratio in [0, 1] expected)"));
                1.0
            }
        },
    };
    match get(env, "OTEL_TRACES_SAMPLER").map(|s| s.to_ascii_lowercase()).as_deref() {
        None | Some("parentbased_always_on") => SamplerKind::ParentBasedAlwaysOn,
        Some("always_on") => SamplerKind::AlwaysOn,
        Some("always_off") => SamplerKind::AlwaysOff,
        Some("parentbased_always_off") => SamplerKind::ParentBasedAlwaysOff,
        Some("traceidratio") => SamplerKind::TraceIdRatio(ratio(warn)),
        Some("parentbased_traceidratio") => SamplerKind::ParentBasedTraceIdRatio(ratio(warn)),
        Some(other) => {
            warn(format!("unsupported OTEL_TRACES_SAMPLER={other:?}; using parentbased_always_on"));
            SamplerKind::ParentBasedAlwaysOn
        }
    }
}

/// Check `http://host[:port][/path]`. Only plain HTTP is supported.
fn check_http_url(url: &str) -> Result<(), String> {
    let rest = match url.split_once("://") {
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case("http") => rest,
        Some((scheme, _)) if scheme.eq_ignore_ascii_case("https") => {
            return Err(
                "https endpoints are not supported (no TLS); send telemetry to a local collector over http".into()
            )
        }
        _ => return Err("the endpoint must be an http:// URL".into()),
    };
    let authority = match rest.find(['/', '?', '#']) {
        Some(i) => &rest[..i],
        None => rest,
    };
    if authority.is_empty() || authority.contains('@') {
        return Err("the endpoint has no usable host".into());
    }
    let port = if let Some(h) = authority.strip_prefix('[') {
        let (h, after) = h.split_once(']').ok_or("malformed IPv6 host")?;
        if h.is_empty() {
            return Err("malformed endpoint".into());
        }
        match after.strip_prefix(':') {
            Some(p) => Some(p),
            None if after.is_empty() => None,
            None => return Err("malformed endpoint".into()),
        }
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) if !h.is_empty() => Some(p),
            Some(_) => return Err("the endpoint has no usable host".into()),
            None => None,
        }
    };
    if let Some(p) = port {
        p.parse::<u16>().map_err(|_| "invalid port")?;
    }
    if url.bytes().any(|b| b <= b' ' || b == 0x7f) {
        return Err("malformed endpoint".into());
    }
    Ok(())
}

fn valid_header_name(k: &str) -> bool {
    !k.is_empty() && k.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// The variables of one signal.
struct Signal {
    /// `traces` or `metrics`.
    name: &'static str,
    r_exporter: &'static str,
    exporter: &'static str,
    endpoint: &'static str,
    headers: &'static str,
    timeout: &'static str,
    protocol: &'static str,
    /// What the signal is called in messages.
    what: &'static str,
}

const TRACES: Signal = Signal {
    name: "traces",
    r_exporter: "OTEL_R_TRACES_EXPORTER",
    exporter: "OTEL_TRACES_EXPORTER",
    endpoint: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    headers: "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
    timeout: "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
    protocol: "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
    what: "spans",
};

const METRICS: Signal = Signal {
    name: "metrics",
    r_exporter: "OTEL_R_METRICS_EXPORTER",
    exporter: "OTEL_METRICS_EXPORTER",
    endpoint: "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
    headers: "OTEL_EXPORTER_OTLP_METRICS_HEADERS",
    timeout: "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT",
    protocol: "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
    what: "metrics",
};

fn otlp_config(env: &dyn Fn(&str) -> Option<String>, s: &Signal, warn: &mut dyn FnMut(String)) -> Option<OtlpConfig> {
    let url = match get(env, s.endpoint) {
        Some(u) => u,
        None => {
            let base = get(env, "OTEL_EXPORTER_OTLP_ENDPOINT").unwrap_or_else(|| "http://localhost:4318".to_string());
            format!("{}/v1/{}", base.trim_end_matches('/'), s.name)
        }
    };
    if let Err(e) = check_http_url(&url) {
        warn(format!("OTLP endpoint {url:?} not usable: {e}; exporting {} is off", s.what));
        return None;
    }
    for key in [s.protocol, "OTEL_EXPORTER_OTLP_PROTOCOL"] {
        if let Some(p) = get(env, key) {
            if !matches!(p.as_str(), "http/protobuf" | "http") {
                warn(format!("{key}={p:?} is not supported; using http/protobuf"));
            }
            break;
        }
    }
    let mut headers: Vec<(String, String)> = Vec::new();
    for key in ["OTEL_EXPORTER_OTLP_HEADERS", s.headers] {
        if let Some(h) = get(env, key) {
            match parse_pairs(&h) {
                Some(pairs)
                    if pairs.iter().all(|(k, v)| {
                        valid_header_name(k) && !v.bytes().any(|b| b == b'\r' || b == b'\n' || b == 0)
                    }) =>
                {
                    for (k, v) in pairs {
                        headers.retain(|(k0, _)| !k0.eq_ignore_ascii_case(&k));
                        headers.push((k, v));
                    }
                }
                _ => warn(format!("ignoring malformed {key} (expected key=value,...)")),
            }
        }
    }
    let timeout = parse_ms(env, &[s.timeout, "OTEL_EXPORTER_OTLP_TIMEOUT"], 10_000, warn);
    Some(OtlpConfig { url, headers, timeout })
}

/// The exporters of one signal; `None` when it is off.
fn signal(env: &dyn Fn(&str) -> Option<String>, s: &Signal, warn: &mut dyn FnMut(String)) -> Option<SignalConfig> {
    let (var, value) = match get(env, s.r_exporter) {
        Some(v) => (s.r_exporter, v),
        None => (s.exporter, get(env, s.exporter)?),
    };
    let mut exporters = Vec::new();
    let mut add = |k: ExporterKind| {
        if !exporters.contains(&k) {
            exporters.push(k);
        }
    };
    for item in value.split(',').map(|x| x.trim().to_ascii_lowercase()) {
        match item.as_str() {
            "" | "none" => {}
            "stderr" => add(ExporterKind::Stderr),
            "otlp" | "http" => add(ExporterKind::Otlp),
            "stdout" | "console" => {
                warn(format!(
                    "{var}={item:?} would write {} to stdout, which carries the MCP protocol; writing them to stderr instead",
                    s.what
                ));
                add(ExporterKind::Stderr);
            }
            other => warn(format!("unsupported {var}={other:?}; that exporter is off")),
        }
    }
    let otlp = if exporters.contains(&ExporterKind::Otlp) {
        let o = otlp_config(env, s, warn);
        if o.is_none() {
            exporters.retain(|k| *k != ExporterKind::Otlp);
        }
        o
    } else {
        None
    };
    if exporters.is_empty() {
        return None;
    }
    Some(SignalConfig { exporters, otlp })
}

fn parse_limit(env: &dyn Fn(&str) -> Option<String>, key: &str, warn: &mut dyn FnMut(String)) -> Option<usize> {
    let v = get(env, key)?;
    match v.parse::<usize>() {
        Ok(n) => Some(n),
        Err(_) => {
            warn(format!("ignoring invalid {key}={v:?} (a non-negative integer expected)"));
            None
        }
    }
}

fn parse_temporality(env: &dyn Fn(&str) -> Option<String>, warn: &mut dyn FnMut(String)) -> Temporality {
    const KEY: &str = "OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE";
    match get(env, KEY).map(|v| v.to_ascii_lowercase()).as_deref() {
        None | Some("cumulative") => Temporality::Cumulative,
        Some("delta") => Temporality::Delta,
        Some("lowmemory") => Temporality::LowMemory,
        Some(other) => {
            warn(format!("unsupported {KEY}={other:?}; using cumulative"));
            Temporality::Cumulative
        }
    }
}

/// The ambient context: a valid `TRACEPARENT` (and `TRACESTATE`) in the
/// environment, as set by whoever started the server. Invalid values are
/// ignored, as in `_meta`.
fn ambient(env: &dyn Fn(&str) -> Option<String>) -> Option<SpanContext> {
    let tp = env("TRACEPARENT")?;
    let ts = env("TRACESTATE");
    w3c::context_from(&tp, ts.as_deref())
}

impl Config {
    /// Resolve the configuration. `None` means spans and metrics are both
    /// off. Problems are reported through `warn` (one message each).
    pub fn from_env(env: &dyn Fn(&str) -> Option<String>, warn: &mut dyn FnMut(String)) -> Option<Config> {
        let has_any = [TRACES.r_exporter, TRACES.exporter, METRICS.r_exporter, METRICS.exporter]
            .iter()
            .any(|k| get(env, k).is_some());
        if !has_any || get(env, "OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true")) {
            return None;
        }
        let traces = signal(env, &TRACES, warn);
        let metrics = signal(env, &METRICS, warn);
        if (traces.is_none() && metrics.is_none()) || scope_suppressed(env) {
            return None;
        }
        let mut resource = match get(env, "OTEL_RESOURCE_ATTRIBUTES") {
            None => Vec::new(),
            Some(r) => parse_pairs(&r).unwrap_or_else(|| {
                warn("ignoring malformed OTEL_RESOURCE_ATTRIBUTES (expected key=value,...)".into());
                Vec::new()
            }),
        };
        let from_attrs = resource.iter().rev().find(|(k, _)| k == "service.name").map(|(_, v)| v.clone());
        resource.retain(|(k, _)| k != "service.name");
        let service_name = get(env, "OTEL_SERVICE_NAME").or(from_attrs).unwrap_or_else(|| "R".to_string());
        let sampler = parse_sampler(env, warn);
        let max_queue_size = parse_count(env, "OTEL_BSP_MAX_QUEUE_SIZE", 2048, warn);
        let max_export_batch_size = parse_count(env, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512, warn).min(max_queue_size);
        let schedule_delay = parse_ms(env, &["OTEL_BSP_SCHEDULE_DELAY"], 5_000, warn);
        let export_timeout = parse_ms(env, &["OTEL_BSP_EXPORT_TIMEOUT"], 30_000, warn);
        let mut metric_interval = parse_ms(env, &["OTEL_METRIC_EXPORT_INTERVAL"], 60_000, warn);
        if metric_interval.is_zero() {
            warn("ignoring OTEL_METRIC_EXPORT_INTERVAL=0 (a positive interval expected)".into());
            metric_interval = Duration::from_secs(60);
        }
        let value_length = parse_limit(env, "OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT", warn);
        let span_value_length = parse_limit(env, "OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT", warn).or(value_length);
        Some(Config {
            traces,
            metrics,
            service_name,
            resource,
            sampler,
            max_queue_size,
            schedule_delay,
            max_export_batch_size,
            export_timeout,
            metric_interval,
            temporality: parse_temporality(env, warn),
            limits: Limits { span_value_length, value_length },
            ambient: ambient(env),
        })
    }
}

/// `MCPLITE_LOG`: the level of mcplite's own diagnostics on stderr
/// (`error`, `warn`, `info`, `debug`, `trace`); `None` when unset, empty or
/// `off`. Any other value is reported through `warn` and leaves logging off.
pub fn log_level_from_env(
    env: &dyn Fn(&str) -> Option<String>,
    warn: &mut dyn FnMut(String),
) -> Option<tracing::Level> {
    let v = get(env, "MCPLITE_LOG")?;
    match v.to_ascii_lowercase().as_str() {
        "off" | "none" => None,
        "error" => Some(tracing::Level::ERROR),
        "warn" => Some(tracing::Level::WARN),
        "info" => Some(tracing::Level::INFO),
        "debug" => Some(tracing::Level::DEBUG),
        "trace" => Some(tracing::Level::TRACE),
        _ => {
            warn(format!(
                "ignoring MCPLITE_LOG={v:?} (expected off, error, warn, info, debug or trace); logging is off"
            ));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn cfg(vars: &[(&str, &str)]) -> (Option<Config>, Vec<String>) {
        let m: HashMap<String, String> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let env = move |k: &str| m.get(k).cloned();
        let mut warnings = Vec::new();
        let c = Config::from_env(&env, &mut |w| warnings.push(w));
        (c, warnings)
    }

    #[test]
    fn off_unless_an_exporter_is_chosen() {
        assert_eq!(cfg(&[]), (None, vec![]));
        assert_eq!(cfg(&[("OTEL_TRACES_EXPORTER", "none")]), (None, vec![]));
        assert_eq!(cfg(&[("OTEL_TRACES_EXPORTER", "")]), (None, vec![]));
        // The R-specific variable wins, even when it says none.
        assert_eq!(cfg(&[("OTEL_R_TRACES_EXPORTER", "none"), ("OTEL_TRACES_EXPORTER", "stderr")]).0, None);
        assert!(cfg(&[("OTEL_R_TRACES_EXPORTER", "stderr"), ("OTEL_TRACES_EXPORTER", "none")]).0.is_some());
        assert_eq!(cfg(&[("OTEL_TRACES_EXPORTER", "stderr"), ("OTEL_SDK_DISABLED", "TRUE")]).0, None);
        assert!(cfg(&[("OTEL_TRACES_EXPORTER", "stderr"), ("OTEL_SDK_DISABLED", "false")]).0.is_some());
    }

    fn traces(c: &Option<Config>) -> SignalConfig {
        c.as_ref().unwrap().traces.clone().unwrap()
    }

    #[test]
    fn exporter_values() {
        let (c, w) = cfg(&[("OTEL_TRACES_EXPORTER", "stderr")]);
        assert_eq!(traces(&c).exporters, vec![ExporterKind::Stderr]);
        assert!(w.is_empty());
        let c = c.unwrap();
        assert_eq!(c.service_name, "R");
        assert_eq!(c.sampler, SamplerKind::ParentBasedAlwaysOn);
        assert_eq!(c.metrics, None);

        for v in ["stdout", "console"] {
            let (c, w) = cfg(&[("OTEL_R_TRACES_EXPORTER", v)]);
            assert_eq!(traces(&c).exporters, vec![ExporterKind::Stderr]);
            assert_eq!(w.len(), 1);
            assert!(w[0].contains("stdout") && w[0].contains("stderr"), "{w:?}");
        }
        let (c, w) = cfg(&[("OTEL_TRACES_EXPORTER", "jaeger")]);
        assert!(c.is_none());
        assert_eq!(w.len(), 1);
        assert!(w[0].contains("jaeger"));

        for v in ["otlp", "http", "OTLP"] {
            let (c, w) = cfg(&[("OTEL_TRACES_EXPORTER", v)]);
            let t = traces(&c);
            assert_eq!(t.exporters, vec![ExporterKind::Otlp]);
            let o = t.otlp.unwrap();
            assert_eq!(o.url, "http://localhost:4318/v1/traces");
            assert_eq!(o.timeout, Duration::from_secs(10));
            assert!(w.is_empty());
        }
        let (c, _) = cfg(&[("OTEL_TRACES_EXPORTER", "otlp,stderr")]);
        assert_eq!(traces(&c).exporters, vec![ExporterKind::Otlp, ExporterKind::Stderr]);
    }

    #[test]
    fn metrics_like_traces() {
        // Metrics alone.
        let (c, w) = cfg(&[("OTEL_METRICS_EXPORTER", "otlp"), ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://h:1/")]);
        let c = c.unwrap();
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(c.traces, None);
        let m = c.metrics.unwrap();
        assert_eq!(m.exporters, vec![ExporterKind::Otlp]);
        assert_eq!(m.otlp.unwrap().url, "http://h:1/v1/metrics");
        assert_eq!(c.metric_interval, Duration::from_secs(60));
        assert_eq!(c.temporality, Temporality::Cumulative);
        // Each signal has its own endpoint, headers and timeout variables.
        let (c, _) = cfg(&[
            ("OTEL_TRACES_EXPORTER", "otlp"),
            ("OTEL_R_METRICS_EXPORTER", "otlp,stderr"),
            ("OTEL_METRICS_EXPORTER", "none"),
            ("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "http://m:2/custom"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "a=1"),
            ("OTEL_EXPORTER_OTLP_METRICS_HEADERS", "b=2"),
            ("OTEL_EXPORTER_OTLP_METRICS_TIMEOUT", "70"),
            ("OTEL_METRIC_EXPORT_INTERVAL", "250"),
            ("OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE", "Delta"),
        ]);
        let c = c.unwrap();
        let t = c.traces.unwrap().otlp.unwrap();
        assert_eq!(
            (t.url.as_str(), t.headers.len(), t.timeout),
            ("http://localhost:4318/v1/traces", 1, Duration::from_secs(10))
        );
        let m = c.metrics.unwrap();
        assert_eq!(m.exporters, vec![ExporterKind::Otlp, ExporterKind::Stderr]);
        let m = m.otlp.unwrap();
        assert_eq!(m.url, "http://m:2/custom");
        assert_eq!(m.headers, vec![("a".into(), "1".into()), ("b".into(), "2".into())]);
        assert_eq!(m.timeout, Duration::from_millis(70));
        assert_eq!(c.metric_interval, Duration::from_millis(250));
        assert_eq!(c.temporality, Temporality::Delta);
        // stdout is redirected for metrics too; unknown values warn.
        let (c, w) = cfg(&[("OTEL_METRICS_EXPORTER", "console"), ("OTEL_TRACES_EXPORTER", "zipkin")]);
        assert_eq!(c.unwrap().metrics.unwrap().exporters, vec![ExporterKind::Stderr]);
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w[0].contains("zipkin") && w[1].contains("metrics"), "{w:?}");
        let (c, w) = cfg(&[("OTEL_METRICS_EXPORTER", "prometheus")]);
        assert!(c.is_none());
        assert_eq!(w.len(), 1);
        // Off switches apply to both signals.
        assert!(cfg(&[("OTEL_METRICS_EXPORTER", "stderr"), ("OTEL_SDK_DISABLED", "true")]).0.is_none());
        assert!(cfg(&[("OTEL_METRICS_EXPORTER", "stderr"), ("OTEL_R_SUPPRESS_SCOPES", "mcplite")]).0.is_none());
        let (_, w) =
            cfg(&[("OTEL_METRICS_EXPORTER", "stderr"), ("OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE", "x")]);
        assert_eq!(w.len(), 1);
    }

    #[test]
    fn limits_and_ambient_context() {
        let (c, w) = cfg(&[("OTEL_TRACES_EXPORTER", "stderr")]);
        let c = c.unwrap();
        assert!(w.is_empty());
        assert_eq!(c.limits, Limits::default());
        assert_eq!(c.ambient, None);
        let (c, _) = cfg(&[("OTEL_TRACES_EXPORTER", "stderr"), ("OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT", "20")]);
        assert_eq!(c.unwrap().limits, Limits { span_value_length: Some(20), value_length: Some(20) });
        let (c, w) = cfg(&[
            ("OTEL_TRACES_EXPORTER", "stderr"),
            ("OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT", "20"),
            ("OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT", "7"),
            ("TRACEPARENT", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"),
            ("TRACESTATE", "a=1"),
        ]);
        let c = c.unwrap();
        assert!(w.is_empty());
        assert_eq!(c.limits, Limits { span_value_length: Some(7), value_length: Some(20) });
        let a = c.ambient.unwrap();
        assert_eq!(a.trace_id().to_string(), "0af7651916cd43dd8448eb211c80319c");
        assert!(a.is_remote());
        assert_eq!(a.trace_state().header(), "a=1");
        let (c, w) = cfg(&[
            ("OTEL_TRACES_EXPORTER", "stderr"),
            ("OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT", "-1"),
            ("TRACEPARENT", "not a traceparent"),
        ]);
        let c = c.unwrap();
        assert_eq!(c.limits, Limits::default());
        assert_eq!(c.ambient, None);
        assert_eq!(w.len(), 1);
    }

    #[test]
    fn mcplite_log_levels() {
        let level = |v: Option<&str>| {
            let m: HashMap<String, String> = v.iter().map(|v| ("MCPLITE_LOG".to_string(), v.to_string())).collect();
            let mut w = Vec::new();
            let l = log_level_from_env(&move |k| m.get(k).cloned(), &mut |x| w.push(x));
            (l, w.len())
        };
        assert_eq!(level(None), (None, 0));
        assert_eq!(level(Some("")), (None, 0));
        assert_eq!(level(Some("off")), (None, 0));
        assert_eq!(level(Some("debug")), (Some(tracing::Level::DEBUG), 0));
        assert_eq!(level(Some("INFO")), (Some(tracing::Level::INFO), 0));
        assert_eq!(level(Some("trace")), (Some(tracing::Level::TRACE), 0));
        assert_eq!(level(Some("verbose")), (None, 1));
    }

    #[test]
    fn otlp_endpoints_headers_timeouts() {
        let (c, _) = cfg(&[
            ("OTEL_TRACES_EXPORTER", "otlp"),
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9999/base/"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer%20x, x-a = 1"),
            ("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "X-A=2"),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "2500"),
        ]);
        let o = traces(&c).otlp.unwrap();
        assert_eq!(o.url, "http://127.0.0.1:9999/base/v1/traces");
        assert_eq!(o.headers, vec![("authorization".into(), "Bearer x".into()), ("X-A".into(), "2".into())]);
        assert_eq!(o.timeout, Duration::from_millis(2500));

        // The signal-specific endpoint is used as is.
        let (c, _) = cfg(&[
            ("OTEL_TRACES_EXPORTER", "otlp"),
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://ignored:1"),
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://[::1]:4000/custom"),
            ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "7"),
        ]);
        let o = traces(&c).otlp.unwrap();
        assert_eq!(o.url, "http://[::1]:4000/custom");
        assert_eq!(o.timeout, Duration::from_millis(7));

        // https is refused with a warning (tracing off).
        let (c, w) = cfg(&[("OTEL_TRACES_EXPORTER", "otlp"), ("OTEL_EXPORTER_OTLP_ENDPOINT", "https://example.com")]);
        assert!(c.is_none());
        assert_eq!(w.len(), 1);
        for bad in
            ["http://", "http://:80/x", "http://h:99999", "ftp://h", "http://u@h/", "http://h/a b", "http://[::1"]
        {
            let (c, w) = cfg(&[("OTEL_TRACES_EXPORTER", "otlp"), ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", bad)]);
            assert!(c.is_none(), "{bad}");
            assert_eq!(w.len(), 1, "{bad}");
        }
        // Header injection is refused.
        let (c, w) = cfg(&[("OTEL_TRACES_EXPORTER", "otlp"), ("OTEL_EXPORTER_OTLP_HEADERS", "a=b%0D%0AHost: evil")]);
        assert!(traces(&c).otlp.unwrap().headers.is_empty());
        assert_eq!(w.len(), 1);
    }

    #[test]
    fn resource_sampler_batch() {
        let (c, w) = cfg(&[
            ("OTEL_TRACES_EXPORTER", "stderr"),
            ("OTEL_RESOURCE_ATTRIBUTES", "service.name=fromattrs,deployment.environment=dev%2C1"),
            ("OTEL_TRACES_SAMPLER", "parentbased_traceidratio"),
            ("OTEL_TRACES_SAMPLER_ARG", "0.25"),
            ("OTEL_BSP_MAX_QUEUE_SIZE", "100"),
            ("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "500"),
            ("OTEL_BSP_SCHEDULE_DELAY", "20"),
        ]);
        let c = c.unwrap();
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(c.service_name, "fromattrs");
        assert_eq!(c.resource, vec![("deployment.environment".into(), "dev,1".into())]);
        assert_eq!(c.sampler, SamplerKind::ParentBasedTraceIdRatio(0.25));
        assert_eq!((c.max_queue_size, c.max_export_batch_size), (100, 100));
        assert_eq!(c.schedule_delay, Duration::from_millis(20));

        let (c, w) = cfg(&[
            ("OTEL_TRACES_EXPORTER", "stderr"),
            ("OTEL_SERVICE_NAME", "svc"),
            ("OTEL_RESOURCE_ATTRIBUTES", "service.name=x,broken"),
            ("OTEL_TRACES_SAMPLER", "xray"),
            ("OTEL_BSP_MAX_QUEUE_SIZE", "-1"),
        ]);
        let c = c.unwrap();
        assert_eq!(c.service_name, "svc");
        assert!(c.resource.is_empty());
        assert_eq!(c.sampler, SamplerKind::ParentBasedAlwaysOn);
        assert_eq!(c.max_queue_size, 2048);
        assert_eq!(w.len(), 3, "{w:?}");
    }

    #[test]
    fn scope_switches() {
        let on = |vars: &[(&str, &str)]| {
            let mut v = vec![("OTEL_TRACES_EXPORTER", "stderr")];
            v.extend_from_slice(vars);
            cfg(&v).0.is_some()
        };
        assert!(on(&[]));
        assert!(!on(&[("OTEL_R_SUPPRESS_SCOPES", "r.package.mcplite")]));
        assert!(!on(&[("OTEL_R_SUPPRESS_SCOPES", "dplyr, mcplite")]));
        assert!(!on(&[("OTEL_R_SUPPRESS_SCOPES", "r.package.*")]));
        assert!(on(&[("OTEL_R_SUPPRESS_SCOPES", "dplyr")]));
        assert!(on(&[("OTEL_R_SUPPRESS_SCOPES", "")]));
        assert!(on(&[("OTEL_R_EMIT_SCOPES", "")]));
        assert!(on(&[("OTEL_R_EMIT_SCOPES", "r.package.mcp*")]));
        assert!(on(&[("OTEL_R_EMIT_SCOPES", "x,mcplite")]));
        assert!(!on(&[("OTEL_R_EMIT_SCOPES", "dplyr")]));
        assert!(glob_match("a*b?c", "axxxbyc"));
        assert!(!glob_match("a*b?c", "axxxbc"));
    }
}
