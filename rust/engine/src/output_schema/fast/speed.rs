//! The fast check's speed, without R (issue 30: benchmark W5.frame,
//! bench/schema/, must stay within 10% of the call without the check).
//! Not part of the test command (`#[ignore]`d); run by hand:
//!
//! ```sh
//! cargo test --release -p mcplite-engine --lib speed -- --ignored --nocapture
//! ```
//!
//! For each case it prints the best time of many repetitions (the
//! machine is shared: the minimum is the figure least disturbed by load)
//! and that time per byte. `MCPLITE_SPEED_REPS` sets the repetitions
//! (default 200, or fewer when a case takes longer than 10 seconds), and
//! `MCPLITE_SPEED_CASE` picks the cases whose name contains it.
//! Figures are in bench/results/schema-fast/scanner.md.

use std::hint::black_box;
use std::time::{Duration, Instant};

use super::Node;

const ROWS: usize = 100_000;

/// The output schema W5.frame declares, as the type helpers write it
/// (RULES R2.3): `type_object(rows = type_array(type_object(id =
/// type_integer(), value = type_number(), label = type_string(), flag =
/// type_boolean(), group = type_enum(c("a", "b", "c", "d", "e")))))`.
const FRAME_SCHEMA: &str = r#"{"type":"object","properties":{"rows":{"type":"array","items":{"type":"object","properties":{"id":{"type":"integer"},"value":{"type":"number"},"label":{"type":"string"},"flag":{"type":"boolean"},"group":{"type":"string","enum":["a","b","c","d","e"]}},"required":["id","value","label","flag","group"],"additionalProperties":false}}},"required":["rows"],"additionalProperties":false}"#;

const GROUPS: [&str; 5] = ["a", "b", "c", "d", "e"];

/// W5.frame's structured content as the bridge writes it (jsonlite's
/// `dataframe = "rows"`, RULES J1.1): `list(rows = data.frame(id = i,
/// value = i + 0.5, label = paste0("r", i), flag = i %% 2 == 0, group =
/// rep_len(c("a", "b", "c", "d", "e"), length(i))))`, 7.0 MB.
fn frame_rows() -> String {
    let mut s = String::from(r#"{"rows":["#);
    for i in 1..=ROWS {
        if i > 1 {
            s.push(',');
        }
        s.push_str(&format!(
            r#"{{"id":{i},"value":{i}.5,"label":"r{i}","flag":{},"group":"{}"}}"#,
            i % 2 == 0,
            GROUPS[(i - 1) % 5]
        ));
    }
    s.push_str("]}");
    s
}

/// The same data as columns (a named list of vectors), nullable as the
/// helpers write it (`anyOf`), with some nulls and negative and
/// exponent-form numbers.
const COLUMNS_SCHEMA: &str = r#"{"type":"object","properties":{"id":{"type":"array","items":{"type":"integer"}},"value":{"type":"array","items":{"anyOf":[{"type":"number"},{"type":"null"}]}},"label":{"type":"array","items":{"type":"string"}},"flag":{"type":"array","items":{"type":"boolean"}},"group":{"type":"array","items":{"anyOf":[{"type":"string","enum":["a","b","c","d","e"]},{"type":"null"}]}}},"required":["id","value","label","flag","group"],"additionalProperties":false}"#;

fn frame_columns() -> String {
    let column = |f: &dyn Fn(usize) -> String| (1..=ROWS).map(f).collect::<Vec<_>>().join(",");
    format!(
        r#"{{"id":[{}],"value":[{}],"label":[{}],"flag":[{}],"group":[{}]}}"#,
        column(&|i| i.to_string()),
        column(&|i| match i % 10 {
            0 => "null".to_owned(),
            1 => format!("-{i}.25e-3"),
            _ => format!("{i}.5"),
        }),
        column(&|i| format!(r#""r{i}""#)),
        column(&|i| (i % 2 == 0).to_string()),
        column(&|i| if i % 7 == 0 { "null".to_owned() } else { format!(r#""{}""#, GROUPS[i % 5]) }),
    )
}

/// Long strings (a text column of paragraphs), with an escape now and
/// then: the scanner's string loop.
const TEXTS_SCHEMA: &str = r#"{"type":"object","properties":{"texts":{"type":"array","items":{"type":"string"}}},"required":["texts"],"additionalProperties":false}"#;

fn texts() -> String {
    let paragraph = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor \
                     incididunt ut labore et dolore magna aliqua. \\\"Quoted\\\" caf\\u00e9 \u{e9}t\u{e9}.\\n";
    let one = format!(r#""{}""#, paragraph.repeat(40));
    format!(r#"{{"texts":[{}]}}"#, vec![one; 1000].join(","))
}

/// The best time of `reps` checks of `json`.
fn best(node: &Node, json: &str, reps: usize) -> Duration {
    let mut best = Duration::MAX;
    let budget = Instant::now();
    for _ in 0..reps {
        let t = Instant::now();
        assert!(black_box(node).accepts(black_box(json)));
        best = best.min(t.elapsed());
        if budget.elapsed() > Duration::from_secs(10) {
            break;
        }
    }
    best
}

#[test]
#[ignore = "a benchmark: run by hand with --release (see the module's documentation)"]
#[allow(clippy::print_stdout)] // its output is the figures
fn speed_of_the_fast_check() {
    let reps = std::env::var("MCPLITE_SPEED_REPS").ok().and_then(|r| r.parse().ok()).unwrap_or(200);
    let cases = [
        ("W5.frame rows", FRAME_SCHEMA, frame_rows()),
        ("columns, nullable", COLUMNS_SCHEMA, frame_columns()),
        ("long strings", TEXTS_SCHEMA, texts()),
    ];
    let only = std::env::var("MCPLITE_SPEED_CASE").unwrap_or_default();
    for (name, schema, json) in cases.into_iter().filter(|c| c.0.contains(&only)) {
        let node = Node::compile(&serde_json::from_str(schema).unwrap()).expect("a fast check");
        let t = best(&node, &json, reps);
        println!(
            "{name}: {:.2} MB, best of {reps}: {:.2} ms, {:.3} ns/byte",
            json.len() as f64 / 1e6,
            t.as_secs_f64() * 1e3,
            t.as_secs_f64() * 1e9 / json.len() as f64
        );
    }
}
