//! Inputs found by fuzzing (fuzz/) and by the hostile-input review, kept as
//! regression tests. Tests marked `#[ignore]` describe a known deviation from
//! RULES.md in a file owned by someone else; they pass once it is fixed
//! (run them with `cargo test -p mcplite-engine --test integration regressions:: -- --ignored`).

use crate::common::*;
use mcplite_engine::message::{parse_line, Incoming};

fn answer(line: &[u8]) -> String {
    let mut host = FakeHost::default();
    let server = new_server(&mut host);
    let out = server.handle(&mut Default::default(), line, &mut host).into_line().expect("a response");
    String::from_utf8(out).unwrap()
}

/// Found by the `dispatch` fuzz target (first minute, engine ae1a453): an
/// `id` nested deeper than the nesting limit was read as a `RawValue`, which
/// serde_json skips without its recursion limit, so the line was answered
/// -32600 although the rest of the line was never checked against the
/// limit. Since W1.4 (a well-formed line over a limit is not a parse error)
/// -32600 with id null is the intended answer: an array is not a valid id
/// (W3.1), however deep, and the whole line is still checked to be JSON.
#[test]
fn deep_id() {
    let invalid = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}"#;
    for depth in [600, 200] {
        let line = format!(r#"{{"id":{}1{},"jsonrpc":"2.0","method":"ping"}}"#, "[".repeat(depth), "]".repeat(depth));
        assert_eq!(answer(line.as_bytes()), invalid, "depth {depth}");
    }
    // Not JSON (unbalanced) stays a parse error, however deep.
    let line = format!(r#"{{"id":{}1{},"jsonrpc":"2.0","method":"ping"}}"#, "[".repeat(600), "]".repeat(599));
    assert_eq!(
        answer(line.as_bytes()),
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#
    );
}

/// The deep-id case above must at least never crash, however deep.
#[test]
fn deep_id_never_crashes() {
    for depth in [513usize, 10_000, 1_000_000] {
        let line = format!(r#"{{"id":{}{},"jsonrpc":"2.0","method":"ping"}}"#, "[".repeat(depth), "]".repeat(depth));
        let out = answer(line.as_bytes());
        check_line_shape(out.as_bytes()).unwrap();
        assert!(out.contains(r#""id":null"#), "{out}");
        assert!(out.contains("-32600"), "{out}");
    }
}

/// Numbers outside the f64 range are valid RFC 8259 JSON (W1.3 requires
/// strict JSON, not f64-representable JSON). serde_json keeps number tokens
/// as text (`arbitrary_precision`), so they are accepted anywhere: as ids
/// (echoed unchanged, W3.4), in ignored members and in `params` (a tool
/// gets `Inf` for `1e400`, J6.1; tested in R).
#[test]
fn huge_numbers_outside_ids() {
    for num in ["1e400".to_string(), "-1e400".to_string(), "9".repeat(400)] {
        for line in [
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"x":{num}}}}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"ping","ignored":{num}}}"#),
        ] {
            assert_eq!(answer(line.as_bytes()), r#"{"jsonrpc":"2.0","id":1,"result":{}}"#, "{line}");
        }
    }
    let id = "9".repeat(5000);
    let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
    assert_eq!(answer(line.as_bytes()), format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#));
    let line = br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":1e400}}"#;
    assert!(!matches!(parse_line(line), Incoming::ParseError));
}

/// A lone surrogate escape is valid JSON grammar (RFC 8259 section 8.2
/// leaves its meaning open). As an id it is echoed byte for byte (W3.4).
#[test]
fn lone_surrogates() {
    assert_eq!(
        answer(br#"{"jsonrpc":"2.0","id":"\udc00x","method":"ping"}"#),
        r#"{"jsonrpc":"2.0","id":"\udc00x","result":{}}"#
    );
    // Inside params (or any other member) they are read as U+FFFD instead of
    // failing the line; the id is still echoed as received.
    assert_eq!(
        answer(br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":"\ud800"}}"#),
        r#"{"jsonrpc":"2.0","id":1,"result":{}}"#
    );
    assert_eq!(
        answer(br#"{"jsonrpc":"2.0","id":"\udc00x","method":"ping","x\ud800":"\udfff"}"#),
        r#"{"jsonrpc":"2.0","id":"\udc00x","result":{}}"#
    );
    match parse_line(br#"{"jsonrpc":"2.0","id":"\ud800","method":"m","params":{"a":"x\udc00y"}}"#) {
        Incoming::Message(m) => {
            assert_eq!(m.id.as_deref(), Some(r#""\ud800""#));
            assert_eq!(m.params, Some(serde_json::json!({"a": "x\u{fffd}y"})));
        }
        other => panic!("{other:?}"),
    }
    // A correctly paired surrogate is fine everywhere.
    assert_eq!(
        answer(br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":"\ud83d\ude00"}}"#),
        r#"{"jsonrpc":"2.0","id":1,"result":{}}"#
    );
}

/// Found by the `projection` fuzz target (round 1, after ~40 minutes): an
/// output schema whose root `type` is `"object"` but which nested deeper than
/// 128 levels was dropped for 2025-06-18 and 2025-11-25 clients. P1 says it is
/// emitted "only if root `type` is `"object"`"; the decision is made by
/// `projection::schema_root_is_object`, which parses the whole schema with
/// serde_json's default recursion limit (128), so a deep schema fails to
/// parse and counts as "not an object". (The message parser accepts 512
/// levels, and jsonlite writes schemas of any depth.)
/// Fixed in projection.rs: only the root members are decoded (raw values
/// skip nested content iteratively, without the limit).
#[test]
fn deep_object_output_schema_is_listed() {
    use mcplite_engine::host::ToolSpec;
    use mcplite_engine::projection::write_tool;
    use mcplite_engine::Version;
    let depth = 100_000;
    let schema = format!(
        r#"{{"type":"object","properties":{{"a":{}{{}}{}}}}}"#,
        r#"{"type":"array","items":"#.repeat(depth),
        "}".repeat(depth)
    );
    let t = ToolSpec {
        name: "deep".into(),
        description: "d".into(),
        input_schema: r#"{"type":"object"}"#.into(),
        annotations: vec![],
        output_schema: Some(schema.clone()),
    };
    for v in [Version::V2025_06_18, Version::V2025_11_25] {
        let mut out = Vec::new();
        write_tool(&mut out, &t, v);
        let out = String::from_utf8(out).unwrap();
        assert!(out.ends_with(&format!(r#","outputSchema":{schema}}}"#)), "{} {}", v.as_str(), clip(&out));
    }
}

/// The shallow case is emitted (guards the test above against a typo).
#[test]
fn shallow_object_output_schema_is_listed() {
    use mcplite_engine::host::ToolSpec;
    use mcplite_engine::projection::write_tool;
    use mcplite_engine::Version;
    let schema = r#"{"type":"object","properties":{"a":{"type":"array","items":{}}}}"#;
    let t = ToolSpec {
        name: "shallow".into(),
        description: "d".into(),
        input_schema: r#"{"type":"object"}"#.into(),
        annotations: vec![],
        output_schema: Some(schema.into()),
    };
    let mut out = Vec::new();
    write_tool(&mut out, &t, Version::V2025_06_18);
    assert!(String::from_utf8(out).unwrap().ends_with(&format!(r#","outputSchema":{schema}}}"#)));
}

/// Found by the `dispatch` fuzz target (round 2): serde_json, with its
/// `raw_value` and `arbitrary_precision` features (enabled by the engine),
/// reserves the member names `$serde_json::private::RawValue` and
/// `$serde_json::private::Number` as internal markers. A JSON object with
/// such a first member inside `params` (or any member the engine decodes
/// into a `Value`) cannot be decoded, although it is valid JSON (W1.3). It
/// used to be answered `Parse error` with id null; since W1.4 it is a limit
/// of the engine on a well-formed line, answered with the request's id. An
/// `id` holding such an object is read as a raw value and correctly
/// answered -32600.
#[test]
fn serde_json_raw_value_marker_key() {
    let key = "$serde_json::private::RawValue";
    let in_id = format!(r#"{{"jsonrpc":"2.0","id":{{"{key}":1}},"method":"ping"}}"#);
    assert_eq!(
        answer(in_id.as_bytes()),
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}"#
    );
    for key in [key, "$serde_json::private::Number"] {
        let in_params = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"{key}":1}}}}"#);
        assert_eq!(
            answer(in_params.as_bytes()),
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: a member name is reserved by the JSON reader"}}"#
        );
    }
}

/// Found by the `projection` fuzz target (CI run on 875a4e3): a tool result
/// whose `_meta` holds serde_json's reserved member name is written as it
/// came (valid JSON that other clients read), but the fuzz oracle read the
/// output back into a `Value` and failed. The oracle now checks such output
/// with `common::well_formed`; this pins the engine side.
#[test]
fn reserved_member_name_in_result_meta_is_written_as_is() {
    use mcplite_engine::host::ToolResult;
    use mcplite_engine::projection::write_call_result;
    use mcplite_engine::Version;
    for key in ["$serde_json::private::Number", "$serde_json::private::RawValue"] {
        let r = ToolResult { meta: vec![(key.into(), "true".into())], ..Default::default() };
        for v in Version::ALL {
            let mut out = Vec::new();
            assert!(!write_call_result(&mut out, &r, v, r#"{"name":"s","version":"1"}"#));
            let out = String::from_utf8(out).unwrap();
            assert!(well_formed(&out).is_ok(), "{out}");
            assert!(out.contains(&format!(r#""_meta":{{"{key}":true"#)), "{} {out}", v.as_str());
        }
    }
}

/// Found by the `projection` fuzz target (long run on b187e65): the oracle
/// could not read a tool's output schema holding serde_json's reserved
/// member name, and the engine must still judge it by its root `type`.
#[test]
fn reserved_member_name_in_output_schema() {
    use mcplite_engine::host::ToolSpec;
    use mcplite_engine::projection::write_tool;
    use mcplite_engine::Version;
    for (schema, listed) in [
        (r#"{"$serde_json::private::RawValue":true,"type":"object"}"#, true),
        (r#"{"type":"object","p":{"$serde_json::private::Number":"x"}}"#, true),
        (r#"{"$serde_json::private::Number":"1"}"#, false),
    ] {
        let t = ToolSpec { output_schema: Some(schema.into()), ..ToolSpec::new("t", "d") };
        let mut out = Vec::new();
        write_tool(&mut out, &t, Version::V2025_06_18);
        let out = String::from_utf8(out).unwrap();
        assert!(well_formed(&out).is_ok(), "{out}");
        assert_eq!(out.ends_with(&format!(r#","outputSchema":{schema}}}"#)), listed, "{out}");
    }
}
