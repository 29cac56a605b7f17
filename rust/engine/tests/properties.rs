//! Property tests (proptest) of the engine's pure parts: framing, string
//! escaping, number formatting, id tokens, and whole dispatch sequences
//! checked by the independent oracle in `common`.

use crate::common::*;
use mcplite_engine::json::{is_valid_id_token, write_shortest_f64, write_str};
use mcplite_engine::transport::Framer;
use proptest::prelude::*;
use serde_json::{json, Map, Value};

fn frame(chunks: &[&[u8]]) -> Vec<Vec<u8>> {
    Framer::lines_of(chunks)
}

/// Bytes rich in LF, CR, BOM pieces and invalid UTF-8.
fn stream() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        Just(b"\n".to_vec()),
        Just(b"\r".to_vec()),
        Just(b"\r\n".to_vec()),
        Just(b"\xEF\xBB\xBF".to_vec()),
        Just(b"\xEF".to_vec()),
        Just(b"\xBB\xBF".to_vec()),
        Just(b"{}".to_vec()),
        prop::collection::vec(any::<u8>(), 0..8),
    ];
    prop::collection::vec(piece, 0..24).prop_map(|v| v.concat())
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|i| json!(i)),
        any::<f64>().prop_map(|f| serde_json::Number::from_f64(f).map(Value::Number).unwrap_or(Value::Null)),
        ".{0,12}".prop_map(Value::String),
        prop::sample::select(vec!["", "\u{0}", "\n", "</", "2026-07-28", "echo", "é\u{2028}"]).prop_map(|s| json!(s)),
    ];
    leaf.prop_recursive(6, 48, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec(("[a-z_]{0,6}", inner), 0..5).prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

fn id_token() -> impl Strategy<Value = Option<String>> {
    prop_oneof![
        Just(None),
        any::<i64>().prop_map(|i| Some(i.to_string())),
        "[0-9]{1,40}".prop_map(Some),
        ".{0,8}".prop_map(|s| Some(serde_json::to_string(&s).unwrap())),
        prop::sample::select(vec!["null", "true", "1.5", "1e2", "-0", "[]", "{}", "\"\\u0041\""])
            .prop_map(|s| Some(s.to_string())),
    ]
}

fn message() -> impl Strategy<Value = Vec<u8>> {
    let method = prop::sample::select(vec![
        "initialize",
        "notifications/initialized",
        "ping",
        "tools/list",
        "tools/call",
        "server/discover",
        "x/y",
    ]);
    let meta = prop_oneof![
        Just(None),
        Just(Some(
            json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}})
        )),
        Just(Some(json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"}))),
        Just(Some(
            json!({"io.modelcontextprotocol/protocolVersion": "2025-06-18", "io.modelcontextprotocol/clientCapabilities": {}})
        )),
        json_value().prop_map(|v| Some(
            json!({"io.modelcontextprotocol/protocolVersion": v, "io.modelcontextprotocol/clientCapabilities": {}})
        )),
        json_value().prop_map(Some),
    ];
    let init_version = prop::sample::select(vec!["2024-11-05", "2025-06-18", "2025-11-25", "2026-07-28", "1"]);
    let tool = prop::sample::select(TOOL_NAMES.to_vec().into_iter().chain(["", "nope"]).collect::<Vec<_>>());
    let args = prop_oneof![
        Just(None),
        json_value().prop_map(Some),
        (json_value(), any::<bool>(), prop::collection::vec(prop::sample::select(vec!["text", "image", "audio", "resource_link", "resource"]), 0..4))
            .prop_map(|(v, e, k)| Some(json!({"value": v, "structured": v, "is_error": e, "kinds": k, "meta": {"m": v}, "annotations": {"priority": 0.5}}))),
    ];
    (
        prop::sample::select(vec!["\"2.0\"", "\"2.0\"", "\"2.0\"", "\"1.0\"", "2"]),
        id_token(),
        method,
        meta,
        init_version,
        tool,
        args,
        any::<u8>(),
    )
        .prop_map(|(jsonrpc, id, method, meta, iv, tool, args, shape)| {
            let mut params = Map::new();
            match method {
                "initialize" => {
                    params.insert("protocolVersion".into(), json!(iv));
                    params.insert("capabilities".into(), json!({}));
                    params.insert("clientInfo".into(), json!({"name": "p", "version": "1"}));
                }
                "tools/call" => {
                    params.insert("name".into(), json!(tool));
                    if let Some(a) = args {
                        params.insert("arguments".into(), a);
                    }
                }
                _ => {}
            }
            if let Some(m) = meta {
                params.insert("_meta".into(), m);
            }
            let mut s = format!("{{\"jsonrpc\":{jsonrpc}");
            if let Some(id) = id {
                s.push_str(&format!(",\"id\":{id}"));
            }
            s.push_str(&format!(",\"method\":{}", serde_json::to_string(method).unwrap()));
            if shape % 4 != 0 {
                s.push_str(&format!(",\"params\":{}", serde_json::to_string(&Value::Object(params)).unwrap()));
            }
            s.push('}');
            if shape % 16 == 1 {
                s.push('\r');
            }
            s.into_bytes()
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn framing_ignores_read_boundaries(data in stream(), cuts in prop::collection::vec(0usize..9, 0..16)) {
        let whole = frame(&[&data]);
        let mut chunks: Vec<&[u8]> = vec![];
        let mut rest: &[u8] = &data;
        for c in cuts {
            let (a, b) = rest.split_at(c.min(rest.len()));
            chunks.push(a);
            rest = b;
        }
        chunks.push(rest);
        prop_assert_eq!(frame(&chunks), whole.clone());
        for l in &whole {
            prop_assert!(!l.contains(&b'\n'));
        }
        // Rejoining the lines gives the stream back, less one BOM at the
        // start and one CR before each LF.
        let body = data.strip_prefix(b"\xEF\xBB\xBF".as_slice()).unwrap_or(&data);
        let lf = body.iter().filter(|b| **b == b'\n').count();
        prop_assert!(whole.len() == lf || whole.len() == lf + 1 || body.len() < 3);
    }

    #[test]
    fn strings_escape_to_one_line_and_round_trip(s in any::<String>()) {
        let mut out = Vec::new();
        write_str(&mut out, &s);
        prop_assert!(!out.iter().any(|b| *b < 0x20));
        let back: String = serde_json::from_slice(&out).unwrap();
        prop_assert_eq!(back, s);
    }

    #[test]
    fn shortest_doubles_round_trip(x in any::<f64>().prop_filter("finite", |x| x.is_finite())) {
        let mut out = Vec::new();
        write_shortest_f64(&mut out, x);
        let s = String::from_utf8(out).unwrap();
        let back: f64 = s.parse().unwrap();
        prop_assert_eq!(back, if x == 0.0 { 0.0 } else { x }, "{}", s);
        // ECMAScript Number::toString: plain for 1e-6 <= |x| < 1e21.
        let plain = x == 0.0 || (1e-6..1e21).contains(&x.abs());
        prop_assert_eq!(!s.contains('e'), plain, "{}", s);
        // Valid JSON number text.
        let v: Value = serde_json::from_str(&s).unwrap();
        prop_assert!(v.is_number());
    }

    #[test]
    fn id_tokens_match_the_rule(raw in prop_oneof!["-?[0-9]{0,25}", "-?[0-9]{1,5}\\.[0-9]{1,3}", "-?[0-9]e[0-9]", "\"[a-z]{0,4}\""]) {
        let want = match raw.strip_prefix('-').unwrap_or(&raw) {
            d if d.starts_with('"') => true,
            "" => false,
            "0" => true,
            d => !d.starts_with('0') && d.bytes().all(|c| c.is_ascii_digit()),
        };
        prop_assert_eq!(is_valid_id_token(&raw), want, "{}", raw);
    }

    #[test]
    fn dispatch_sequences_follow_the_spec(lines in prop::collection::vec(message(), 1..12)) {
        if let Err(e) = run_lines(&lines) {
            prop_assert!(false, "{}", e);
        }
    }

    #[test]
    fn dispatch_sequences_after_initialize(lines in prop::collection::vec(message(), 1..12), v in 0usize..3) {
        let mut all = vec![format!(
            r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{}","capabilities":{{}},"clientInfo":{{"name":"p","version":"1"}}}}}}"#,
            LEGACY[v]
        ).into_bytes()];
        all.extend(lines);
        if let Err(e) = run_lines(&all) {
            prop_assert!(false, "{}", e);
        }
    }

    #[test]
    fn any_json_value_as_a_line(v in json_value()) {
        let line = serde_json::to_vec(&v).unwrap();
        if let Err(e) = run_lines(&[line]) {
            prop_assert!(false, "{}", e);
        }
    }
}
