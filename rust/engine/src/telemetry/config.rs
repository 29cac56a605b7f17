//! Tracing configuration from the standard OpenTelemetry environment
//! variables (SPEC T8), read once through a lookup function so tests need not
//! touch the process environment.

use std::time::Duration;

use super::recorder::{SCOPE_NAME, SCOPE_PACKAGE};

/// Where finished spans go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExporterKind {
    /// One OTLP/JSON line per finished span on stderr.
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

/// OTLP/HTTP settings.
#[derive(Debug, Clone, PartialEq)]
pub struct OtlpConfig {
    /// The full URL spans are posted to (`.../v1/traces`).
    pub url: String,
    pub host: String,
    pub port: u16,
    /// Request target: the path and query.
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub timeout: Duration,
}

/// Everything the recorder needs, resolved from the environment.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// One or more exporters (a list is allowed in `OTEL_TRACES_EXPORTER`).
    pub exporters: Vec<ExporterKind>,
    pub service_name: String,
    /// `OTEL_RESOURCE_ATTRIBUTES`, decoded, in order (without `service.name`).
    pub resource: Vec<(String, String)>,
    pub sampler: SamplerKind,
    pub otlp: Option<OtlpConfig>,
    pub max_queue_size: usize,
    pub schedule_delay: Duration,
    pub max_export_batch_size: usize,
    pub export_timeout: Duration,
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

/// Split `http://host[:port][/path]`. Only plain HTTP is supported.
fn parse_http_url(url: &str) -> Result<(String, u16, String), String> {
    let rest = match url.split_once("://") {
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case("http") => rest,
        Some((scheme, _)) if scheme.eq_ignore_ascii_case("https") => {
            return Err("https endpoints are not supported (no TLS); send spans to a local collector over http".into())
        }
        _ => return Err("the endpoint must be an http:// URL".into()),
    };
    let (authority, path) = match rest.find(['/', '?']) {
        Some(i) if rest.as_bytes()[i] == b'/' => (&rest[..i], rest[i..].to_string()),
        Some(i) => (&rest[..i], format!("/{}", &rest[i..])),
        None => (rest, "/".to_string()),
    };
    if authority.is_empty() || authority.contains('@') {
        return Err("the endpoint has no usable host".into());
    }
    let (host, port) = if let Some(h) = authority.strip_prefix('[') {
        // [v6]:port
        let (h, after) = h.split_once(']').ok_or("malformed IPv6 host")?;
        let port = match after.strip_prefix(':') {
            Some(p) => p.parse::<u16>().map_err(|_| "invalid port")?,
            None if after.is_empty() => 80,
            None => return Err("malformed endpoint".into()),
        };
        (h.to_string(), port)
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), p.parse::<u16>().map_err(|_| "invalid port")?),
            None => (authority.to_string(), 80),
        }
    };
    if host.is_empty() || path.bytes().any(|b| b <= b' ' || b == 0x7f) {
        return Err("malformed endpoint".into());
    }
    Ok((host, port, path))
}

fn valid_header_name(k: &str) -> bool {
    !k.is_empty() && k.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

fn otlp_config(env: &dyn Fn(&str) -> Option<String>, warn: &mut dyn FnMut(String)) -> Option<OtlpConfig> {
    let url = match get(env, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
        Some(u) => u,
        None => {
            let base = get(env, "OTEL_EXPORTER_OTLP_ENDPOINT").unwrap_or_else(|| "http://localhost:4318".to_string());
            format!("{}/v1/traces", base.trim_end_matches('/'))
        }
    };
    let (host, port, path) = match parse_http_url(&url) {
        Ok(x) => x,
        Err(e) => {
            warn(format!("OTLP endpoint {url:?} not usable: {e}; tracing is off"));
            return None;
        }
    };
    for key in ["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"] {
        if let Some(p) = get(env, key) {
            if !matches!(p.as_str(), "http/protobuf" | "http") {
                warn(format!("{key}={p:?} is not supported; using http/protobuf"));
            }
            break;
        }
    }
    let mut headers: Vec<(String, String)> = Vec::new();
    for key in ["OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"] {
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
    let timeout = parse_ms(env, &["OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"], 10_000, warn);
    Some(OtlpConfig { url, host, port, path, headers, timeout })
}

impl Config {
    /// Resolve the configuration. `None` means tracing is off. Problems are
    /// reported through `warn` (one message each).
    pub fn from_env(env: &dyn Fn(&str) -> Option<String>, warn: &mut dyn FnMut(String)) -> Option<Config> {
        let (var, value) = match get(env, "OTEL_R_TRACES_EXPORTER") {
            Some(v) => ("OTEL_R_TRACES_EXPORTER", v),
            None => ("OTEL_TRACES_EXPORTER", get(env, "OTEL_TRACES_EXPORTER")?),
        };
        if get(env, "OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true")) {
            return None;
        }
        let mut exporters = Vec::new();
        let mut add = |k: ExporterKind| {
            if !exporters.contains(&k) {
                exporters.push(k);
            }
        };
        for item in value.split(',').map(|s| s.trim().to_ascii_lowercase()) {
            match item.as_str() {
                "" | "none" => {}
                "stderr" => add(ExporterKind::Stderr),
                "otlp" | "http" => add(ExporterKind::Otlp),
                "stdout" | "console" => {
                    warn(format!(
                        "{var}={item:?} would write spans to stdout, which carries the MCP protocol; writing them to stderr instead"
                    ));
                    add(ExporterKind::Stderr);
                }
                other => warn(format!("unsupported {var}={other:?}; that exporter is off")),
            }
        }
        if exporters.is_empty() || scope_suppressed(env) {
            return None;
        }
        let otlp = if exporters.contains(&ExporterKind::Otlp) {
            match otlp_config(env, warn) {
                Some(o) => Some(o),
                None => {
                    exporters.retain(|k| *k != ExporterKind::Otlp);
                    if exporters.is_empty() {
                        return None;
                    }
                    None
                }
            }
        } else {
            None
        };
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
        Some(Config {
            exporters,
            service_name,
            resource,
            sampler,
            otlp,
            max_queue_size,
            schedule_delay,
            max_export_batch_size,
            export_timeout,
        })
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

    #[test]
    fn exporter_values() {
        let (c, w) = cfg(&[("OTEL_TRACES_EXPORTER", "stderr")]);
        let c = c.unwrap();
        assert_eq!(c.exporters, vec![ExporterKind::Stderr]);
        assert!(w.is_empty());
        assert_eq!(c.service_name, "R");
        assert_eq!(c.sampler, SamplerKind::ParentBasedAlwaysOn);

        for v in ["stdout", "console"] {
            let (c, w) = cfg(&[("OTEL_R_TRACES_EXPORTER", v)]);
            assert_eq!(c.unwrap().exporters, vec![ExporterKind::Stderr]);
            assert_eq!(w.len(), 1);
            assert!(w[0].contains("stdout") && w[0].contains("stderr"), "{w:?}");
        }
        let (c, w) = cfg(&[("OTEL_TRACES_EXPORTER", "jaeger")]);
        assert!(c.is_none());
        assert_eq!(w.len(), 1);
        assert!(w[0].contains("jaeger"));

        for v in ["otlp", "http", "OTLP"] {
            let (c, w) = cfg(&[("OTEL_TRACES_EXPORTER", v)]);
            let c = c.unwrap();
            assert_eq!(c.exporters, vec![ExporterKind::Otlp]);
            let o = c.otlp.unwrap();
            assert_eq!((o.host.as_str(), o.port, o.path.as_str()), ("localhost", 4318, "/v1/traces"));
            assert_eq!(o.timeout, Duration::from_secs(10));
            assert!(w.is_empty());
        }
        let (c, _) = cfg(&[("OTEL_TRACES_EXPORTER", "otlp,stderr")]);
        assert_eq!(c.unwrap().exporters, vec![ExporterKind::Otlp, ExporterKind::Stderr]);
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
        let o = c.unwrap().otlp.unwrap();
        assert_eq!(o.url, "http://127.0.0.1:9999/base/v1/traces");
        assert_eq!((o.host.as_str(), o.port, o.path.as_str()), ("127.0.0.1", 9999, "/base/v1/traces"));
        assert_eq!(o.headers, vec![("authorization".into(), "Bearer x".into()), ("X-A".into(), "2".into())]);
        assert_eq!(o.timeout, Duration::from_millis(2500));

        // The signal-specific endpoint is used as is.
        let (c, _) = cfg(&[
            ("OTEL_TRACES_EXPORTER", "otlp"),
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://ignored:1"),
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://[::1]:4000/custom"),
            ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "7"),
        ]);
        let o = c.unwrap().otlp.unwrap();
        assert_eq!((o.host.as_str(), o.port, o.path.as_str()), ("::1", 4000, "/custom"));
        assert_eq!(o.timeout, Duration::from_millis(7));

        // https is refused with a warning (tracing off).
        let (c, w) = cfg(&[("OTEL_TRACES_EXPORTER", "otlp"), ("OTEL_EXPORTER_OTLP_ENDPOINT", "https://example.com")]);
        assert!(c.is_none());
        assert_eq!(w.len(), 1);
        // Header injection is refused.
        let (c, w) = cfg(&[("OTEL_TRACES_EXPORTER", "otlp"), ("OTEL_EXPORTER_OTLP_HEADERS", "a=b%0D%0AHost: evil")]);
        assert!(c.unwrap().otlp.unwrap().headers.is_empty());
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
