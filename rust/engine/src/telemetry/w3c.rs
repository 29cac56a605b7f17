//! W3C Trace Context and Baggage from `params._meta` (RULES T6) and for
//! tools (T9).
//!
//! `traceparent`/`tracestate` are parsed here, strictly, because the SDK's
//! `TraceContextPropagator` is lenient where the W3C text is not: it trims
//! whitespace, accepts ids shorter than 32/16 hex digits, a `+` sign, a
//! one-digit version and a trailing `-` after version 00 (the test
//! `sdk_propagator_is_lenient` below shows each). A client's malformed
//! context must be ignored, not half-read. Baggage goes through the SDK's
//! `BaggagePropagator`, which enforces the W3C limits.

use std::collections::HashMap;

use opentelemetry::propagation::{Extractor, TextMapPropagator};
use opentelemetry::trace::{SpanContext, SpanId, TraceFlags, TraceId, TraceState};
use opentelemetry::Context;
use opentelemetry_sdk::propagation::BaggagePropagator;
use serde_json::{Map, Value};

fn lower_hex(s: &[u8]) -> bool {
    s.iter().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

fn hex_val(s: &[u8]) -> u128 {
    s.iter().fold(0u128, |acc, b| {
        let d = match b {
            b'0'..=b'9' => b - b'0',
            _ => b - b'a' + 10,
        };
        (acc << 4) | d as u128
    })
}

/// Parse a `traceparent` value strictly (W3C Trace Context):
/// `version-traceid-parentid-flags`, lowercase hex only, version not `ff`,
/// all-zero trace or parent ids rejected, version `00` exactly 55
/// characters, later versions 55 characters or followed by `-`.
/// Returns the trace id, parent span id and flags (only the sampled bit is
/// kept).
pub fn parse_traceparent(s: &str) -> Option<(TraceId, SpanId, TraceFlags)> {
    let b = s.as_bytes();
    if b.len() < 55 {
        return None;
    }
    let (version, trace, parent, flags) = (&b[0..2], &b[3..35], &b[36..52], &b[53..55]);
    if b[2] != b'-' || b[35] != b'-' || b[52] != b'-' {
        return None;
    }
    if !(lower_hex(version) && lower_hex(trace) && lower_hex(parent) && lower_hex(flags)) {
        return None;
    }
    if version == b"ff" {
        return None;
    }
    if version == b"00" {
        if b.len() != 55 {
            return None;
        }
    } else if b.len() > 55 && b[55] != b'-' {
        return None;
    }
    let trace_id = hex_val(trace);
    let span_id = hex_val(parent) as u64;
    if trace_id == 0 || span_id == 0 {
        return None;
    }
    let flags = (hex_val(flags) as u8) & 0x01;
    Some((
        TraceId::from_bytes(trace_id.to_be_bytes()),
        SpanId::from_bytes(span_id.to_be_bytes()),
        TraceFlags::new(flags),
    ))
}

fn key_char(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'_' | b'-' | b'*' | b'/')
}

fn valid_key(k: &[u8]) -> bool {
    match k.iter().position(|&b| b == b'@') {
        None => !k.is_empty() && k.len() <= 256 && k[0].is_ascii_lowercase() && k.iter().all(|&b| key_char(b)),
        Some(at) => {
            let (tenant, system) = (&k[..at], &k[at + 1..]);
            !tenant.is_empty()
                && tenant.len() <= 241
                && (tenant[0].is_ascii_lowercase() || tenant[0].is_ascii_digit())
                && tenant.iter().all(|&b| key_char(b))
                && !system.is_empty()
                && system.len() <= 14
                && system[0].is_ascii_lowercase()
                && system.iter().all(|&b| key_char(b))
        }
    }
}

fn valid_value(v: &[u8]) -> bool {
    !v.is_empty()
        && v.len() <= 256
        && v.iter().all(|&b| (0x20..=0x7e).contains(&b) && b != b',' && b != b'=')
        && v[v.len() - 1] != b' '
}

/// Parse a `tracestate` value strictly (W3C list syntax: at most 32
/// `key=value` members, valid keys and values, no duplicate keys).
pub fn parse_tracestate(s: &str) -> Option<TraceState> {
    let mut pairs: Vec<(&str, &str)> = Vec::new();
    for member in s.split(',') {
        let m = member.trim_matches([' ', '\t']);
        if m.is_empty() {
            continue;
        }
        let (k, v) = m.split_once('=')?;
        if !valid_key(k.as_bytes()) || !valid_value(v.as_bytes()) || pairs.iter().any(|(k0, _)| *k0 == k) {
            return None;
        }
        pairs.push((k, v));
    }
    if pairs.len() > 32 {
        return None;
    }
    TraceState::from_key_value(pairs).ok()
}

/// The remote parent carried in `params._meta` (RULES T6): `traceparent`
/// must be a string and `tracestate` absent or a string; anything else, or
/// an invalid `traceparent`, gives `None`. An invalid `tracestate` string is
/// dropped (the W3C rule) while the `traceparent` is still honoured.
pub(crate) fn remote_parent(meta: &Map<String, Value>) -> Option<SpanContext> {
    let tp = match meta.get("traceparent")? {
        Value::String(s) => s,
        _ => return None,
    };
    let ts = match meta.get("tracestate") {
        None => None,
        Some(Value::String(s)) => Some(s),
        Some(_) => return None,
    };
    context_from(tp, ts.map(String::as_str))
}

/// A remote span context from a `traceparent` and optional `tracestate`
/// value (an invalid `tracestate` is dropped, an invalid `traceparent` gives
/// `None`).
pub(crate) fn context_from(tp: &str, ts: Option<&str>) -> Option<SpanContext> {
    let (trace_id, span_id, flags) = parse_traceparent(tp)?;
    let state = ts.and_then(parse_tracestate).unwrap_or_default();
    Some(SpanContext::new(trace_id, span_id, flags, true, state))
}

/// One string value read as a propagation carrier.
struct One<'a>(&'a str);

impl Extractor for One<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        (key == "baggage").then_some(self.0)
    }
    fn keys(&self) -> Vec<&str> {
        vec!["baggage"]
    }
}

/// `params._meta.baggage` when it is a string holding valid W3C baggage,
/// re-encoded by the SDK's propagator (invalid members dropped, limits
/// enforced). `None` for any other shape or when nothing valid remains.
pub fn baggage_from_meta(meta: &Map<String, Value>) -> Option<String> {
    baggage_from_str(meta.get("baggage")?.as_str()?)
}

/// A W3C baggage string (a `baggage` HTTP header, `_meta.baggage`)
/// re-encoded by the SDK's propagator; `None` when nothing valid remains.
pub fn baggage_from_str(raw: &str) -> Option<String> {
    let p = BaggagePropagator::new();
    let cx = p.extract_with_context(&Context::new(), &One(raw));
    let mut out: HashMap<String, String> = HashMap::new();
    p.inject_context(&cx, &mut out);
    out.remove("baggage").filter(|b| !b.is_empty())
}

/// `00-<trace id>-<span id>-<flags>` for a span context.
pub fn format_traceparent(sc: &SpanContext) -> String {
    const H: &[u8; 16] = b"0123456789abcdef";
    let mut out = Vec::with_capacity(55);
    out.extend_from_slice(b"00-");
    let hex = |out: &mut Vec<u8>, bytes: &[u8]| {
        for b in bytes {
            out.push(H[(b >> 4) as usize]);
            out.push(H[(b & 15) as usize]);
        }
    };
    hex(&mut out, &sc.trace_id().to_bytes());
    out.push(b'-');
    hex(&mut out, &sc.span_id().to_bytes());
    out.push(b'-');
    hex(&mut out, &[sc.trace_flags().to_u8()]);
    String::from_utf8(out).expect("ascii")
}

#[cfg(test)]
mod tests {
    use super::*;

    const OK: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

    #[test]
    fn accepts_valid_and_round_trips() {
        let (t, s, f) = parse_traceparent(OK).unwrap();
        assert_eq!(t.to_string(), "0af7651916cd43dd8448eb211c80319c");
        assert_eq!(s.to_string(), "b7ad6b7169203331");
        assert!(f.is_sampled());
        let sc = SpanContext::new(t, s, f, true, TraceState::default());
        assert_eq!(format_traceparent(&sc), OK);
        let (_, _, f0) = parse_traceparent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00").unwrap();
        assert!(!f0.is_sampled());
        // A future version may append fields after a dash.
        assert!(parse_traceparent("01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-xyz").is_some());
        assert!(parse_traceparent("01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01").is_some());
    }

    #[test]
    fn rejects_malformed() {
        let bad = [
            "",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331",
            "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319c-B7AD6B7169203331-01",
            "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            "00-00000000000000000000000000000000-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-0g",
            "00_0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            "0-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01x",
            "01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01x",
            " 00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01 ",
            "00-+af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        ];
        for b in bad {
            assert!(parse_traceparent(b).is_none(), "{b:?} accepted");
        }
    }

    fn meta(v: serde_json::Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn meta_shapes() {
        use serde_json::json;
        let p = remote_parent(&meta(json!({"traceparent": OK, "tracestate": "a=1,b=2"}))).unwrap();
        assert!(p.is_remote());
        assert_eq!(p.trace_state().header(), "a=1,b=2");
        assert!(remote_parent(&meta(json!({"traceparent": OK}))).is_some());
        // Invalid tracestate text: dropped, parent kept.
        let p = remote_parent(&meta(json!({"traceparent": OK, "tracestate": "=="}))).unwrap();
        assert_eq!(p.trace_state().header(), "");
        for bad in ["a", "A=1", "a=1,a=2", "a=x\u{1}", "a= ", "1a=x", "a@=x", "@b=x", "a@B=x", "a=x=y"] {
            assert!(parse_tracestate(bad).is_none(), "{bad:?} accepted");
        }
        for good in ["", "a=1", " a=1 ,\tb=2", "t1@sys=v v", "k-_*/=!x~", "a=1,,b=2"] {
            assert!(parse_tracestate(good).is_some(), "{good:?} rejected");
        }
        let many: Vec<String> = (0..33).map(|i| format!("k{i}=v")).collect();
        assert!(parse_tracestate(&many.join(",")).is_none());
        // Wrong shapes: ignored entirely.
        assert!(remote_parent(&meta(json!({"traceparent": OK, "tracestate": 1}))).is_none());
        assert!(remote_parent(&meta(json!({"traceparent": OK, "tracestate": null}))).is_none());
        assert!(remote_parent(&meta(json!({"traceparent": [OK]}))).is_none());
        assert!(remote_parent(&meta(json!({"tracestate": "a=1"}))).is_none());
    }

    #[test]
    fn baggage_shapes() {
        use serde_json::json;
        let b = baggage_from_meta(&meta(json!({"baggage": "userId=alice,isProduction=false"}))).unwrap();
        let mut members: Vec<&str> = b.split(',').collect();
        members.sort_unstable();
        assert_eq!(members, ["isProduction=false", "userId=alice"]);
        // Percent-encoding survives the round trip; properties are kept.
        let b = baggage_from_meta(&meta(json!({"baggage": "node=DF%2028;p=1"}))).unwrap();
        assert_eq!(b, "node=DF%2028;p=1");
        for bad in [json!({"baggage": 1}), json!({"baggage": ["a=1"]}), json!({"baggage": ""}), json!({})] {
            assert_eq!(baggage_from_meta(&meta(bad.clone())), None, "{bad}");
        }
        // Over the W3C limit of 8192 bytes: dropped whole.
        let huge = format!("k={}", "v".repeat(9000));
        assert_eq!(baggage_from_meta(&meta(json!({ "baggage": huge }))), None);
    }

    /// Why `parse_traceparent` exists: the SDK's propagator accepts each of
    /// these, the W3C grammar none of them.
    #[test]
    fn sdk_propagator_is_lenient() {
        use opentelemetry::trace::TraceContextExt;
        use opentelemetry_sdk::propagation::TraceContextPropagator;
        let lenient = [
            " 00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-",
            "00-+af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            "00-af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            "0-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        ];
        for tp in lenient {
            let carrier: HashMap<String, String> = [("traceparent".to_string(), tp.to_string())].into();
            let cx = TraceContextPropagator::new().extract(&carrier);
            assert!(cx.span().span_context().is_valid(), "the SDK now rejects {tp:?}: use its propagator");
            assert!(parse_traceparent(tp).is_none(), "{tp:?} accepted");
        }
    }
}
