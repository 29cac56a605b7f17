//! Benchmark floor: the cheapest honest MCP stdio server we can write.
//!
//! It speaks just enough of the protocol for the benchmark workloads
//! (initialize, ping, tools/list, tools/call, plus the per-request `_meta`
//! claim of 2026-07-28) with the same tools as every other benchmarked
//! server, parses every request fully with serde_json and serializes every
//! result on each call. It does no validation beyond what the workloads need:
//! it is the cost of the protocol alone, not a conforming server.
//!
//! `BENCH_TOOLS=1` serves only `add`; anything else serves the 54-tool set.

use serde_json::{Map, Value};
use std::io::{self, BufRead, BufReader, BufWriter, Write};

const MODERN: &str = "2026-07-28";
const PV_KEY: &str = "io.modelcontextprotocol/protocolVersion";
const SERVER_INFO: &str = r#"{"name":"mcp-floor","version":"0.1.0"}"#;
const BIG_TEXT_CHARS: usize = 10_000_000;
const FRAME_ROWS: usize = 100_000;
const GROUPS: [&str; 5] = ["a", "b", "c", "d", "e"];

fn push_json_str(out: &mut Vec<u8>, s: &str) {
    serde_json::to_writer(&mut *out, s).expect("writing to a Vec cannot fail");
}

fn tool_json(out: &mut Vec<u8>, name: &str, description: &str, props: &[(&str, &str, &str)]) {
    out.extend_from_slice(b"{\"name\":");
    push_json_str(out, name);
    out.extend_from_slice(b",\"description\":");
    push_json_str(out, description);
    out.extend_from_slice(b",\"inputSchema\":{\"type\":\"object\",\"properties\":{");
    for (i, (arg, schema, desc)) in props.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        push_json_str(out, arg);
        out.push(b':');
        out.extend_from_slice(schema.as_bytes());
        out.truncate(out.len() - 1); // drop the closing brace to append the description
        out.extend_from_slice(b",\"description\":");
        push_json_str(out, desc);
        out.push(b'}');
    }
    out.extend_from_slice(b"}");
    if !props.is_empty() {
        out.extend_from_slice(b",\"required\":[");
        for (i, (arg, _, _)) in props.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            push_json_str(out, arg);
        }
        out.push(b']');
    }
    out.extend_from_slice(b",\"additionalProperties\":false}}");
}

/// The `tools` array, built once.
fn tools_array(all: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(32 * 1024);
    out.push(b'[');
    tool_json(
        &mut out,
        "add",
        "Add two numbers.",
        &[("x", r#"{"type":"number"}"#, "First number."), ("y", r#"{"type":"number"}"#, "Second number.")],
    );
    if all {
        out.push(b',');
        tool_json(
            &mut out,
            "text_length",
            "Return the number of characters in a text.",
            &[("text", r#"{"type":"string"}"#, "Any text.")],
        );
        out.push(b',');
        tool_json(&mut out, "big_text", "Return a 10 MB text.", &[]);
        out.push(b',');
        tool_json(&mut out, "frame", "Return a 100,000 x 5 data frame as structured content.", &[]);
        for i in 1..=50 {
            out.push(b',');
            let name = format!("tool_{i:02}");
            let desc = format!("Extra tool {i:02} with five typed arguments.");
            tool_json(
                &mut out,
                &name,
                &desc,
                &[
                    ("a", r#"{"type":"string"}"#, "A string."),
                    ("b", r#"{"type":"integer"}"#, "An integer."),
                    ("c", r#"{"type":"number"}"#, "A number."),
                    ("d", r#"{"type":"boolean"}"#, "A flag."),
                    ("e", r#"{"type":"string","enum":["red","green","blue"]}"#, "A colour."),
                ],
            );
        }
    }
    out.push(b']');
    out
}

struct Row {
    id: i32,
    value: f64,
    label: String,
    flag: bool,
    group: &'static str,
}

struct State {
    all: bool,
    tools: Vec<u8>,
    big_text: Option<String>,
    frame: Option<Vec<Row>>,
}

fn fmt_number(out: &mut Vec<u8>, x: f64) {
    if x.is_finite() && x == x.trunc() && x.abs() < 1e15 {
        out.extend_from_slice((x as i64).to_string().as_bytes());
    } else {
        serde_json::to_writer(&mut *out, &x).expect("vec");
    }
}

fn text_result(out: &mut Vec<u8>, text: &str) {
    out.extend_from_slice(b"\"content\":[{\"type\":\"text\",\"text\":");
    push_json_str(out, text);
    out.extend_from_slice(b"}],\"isError\":false");
}

fn error_result(out: &mut Vec<u8>, text: &str) {
    out.extend_from_slice(b"\"content\":[{\"type\":\"text\",\"text\":");
    push_json_str(out, text);
    out.extend_from_slice(b"}],\"isError\":true");
}

fn num_arg(args: Option<&Map<String, Value>>, key: &str) -> Option<f64> {
    args?.get(key)?.as_f64()
}

/// Writes the members of a CallToolResult (without braces).
fn call_tool(state: &mut State, params: &Map<String, Value>, out: &mut Vec<u8>) -> Result<(), ()> {
    let name = params.get("name").and_then(Value::as_str).ok_or(())?;
    let args = params.get("arguments").and_then(Value::as_object);
    match name {
        "add" => match (num_arg(args, "x"), num_arg(args, "y")) {
            (Some(x), Some(y)) => {
                let mut s = Vec::with_capacity(24);
                fmt_number(&mut s, x + y);
                text_result(out, std::str::from_utf8(&s).unwrap());
            }
            _ => error_result(out, "x and y must be numbers"),
        },
        "text_length" if state.all => match args.and_then(|a| a.get("text")).and_then(Value::as_str) {
            Some(t) => text_result(out, &t.chars().count().to_string()),
            None => error_result(out, "text must be a string"),
        },
        "big_text" if state.all => {
            let text = state.big_text.get_or_insert_with(|| "abcdefghij".repeat(BIG_TEXT_CHARS / 10));
            text_result(out, text);
        }
        "frame" if state.all => {
            let rows = state.frame.get_or_insert_with(|| {
                (1..=FRAME_ROWS)
                    .map(|i| Row {
                        id: i as i32,
                        value: i as f64 + 0.5,
                        label: format!("r{i}"),
                        flag: i % 2 == 0,
                        group: GROUPS[(i - 1) % 5],
                    })
                    .collect()
            });
            let mut sc = Vec::with_capacity(rows.len() * 64);
            sc.extend_from_slice(b"{\"rows\":[");
            for (i, r) in rows.iter().enumerate() {
                if i > 0 {
                    sc.push(b',');
                }
                sc.extend_from_slice(b"{\"id\":");
                sc.extend_from_slice(r.id.to_string().as_bytes());
                sc.extend_from_slice(b",\"value\":");
                serde_json::to_writer(&mut sc, &r.value).expect("vec");
                sc.extend_from_slice(b",\"label\":");
                push_json_str(&mut sc, &r.label);
                sc.extend_from_slice(if r.flag { b",\"flag\":true" } else { b",\"flag\":false" });
                sc.extend_from_slice(b",\"group\":");
                push_json_str(&mut sc, r.group);
                sc.push(b'}');
            }
            sc.extend_from_slice(b"]}");
            let sc_str = std::str::from_utf8(&sc).expect("ascii");
            text_result(out, sc_str);
            out.extend_from_slice(b",\"structuredContent\":");
            out.extend_from_slice(&sc);
        }
        n if state.all && n.starts_with("tool_") => text_result(out, "ok"),
        _ => return Err(()),
    }
    Ok(())
}

fn handle(state: &mut State, line: &[u8], out: &mut Vec<u8>) {
    let msg: Value = match serde_json::from_slice(line) {
        Ok(v) => v,
        Err(_) => {
            out.extend_from_slice(
                b"{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error\"}}\n",
            );
            return;
        }
    };
    let Some(obj) = msg.as_object() else { return };
    let Some(id) = obj.get("id") else { return }; // notification
    let method = obj.get("method").and_then(Value::as_str).unwrap_or("");
    let empty = Map::new();
    let params = obj.get("params").and_then(Value::as_object).unwrap_or(&empty);
    let modern = params.get("_meta").and_then(Value::as_object).and_then(|m| m.get(PV_KEY)).and_then(Value::as_str)
        == Some(MODERN);

    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    serde_json::to_writer(&mut *out, id).expect("vec");
    let start = out.len();
    out.extend_from_slice(b",\"result\":{");
    if modern {
        out.extend_from_slice(b"\"resultType\":\"complete\",");
    }
    let ok = match method {
        "initialize" if !modern => {
            let v = params.get("protocolVersion").and_then(Value::as_str).unwrap_or("2025-11-25");
            out.extend_from_slice(b"\"protocolVersion\":");
            push_json_str(out, v);
            out.extend_from_slice(b",\"capabilities\":{\"tools\":{\"listChanged\":false}},\"serverInfo\":");
            out.extend_from_slice(SERVER_INFO.as_bytes());
            true
        }
        "ping" if !modern => true,
        "tools/list" => {
            out.extend_from_slice(b"\"tools\":");
            out.extend_from_slice(&state.tools);
            if modern {
                out.extend_from_slice(b",\"ttlMs\":300000,\"cacheScope\":\"public\"");
            }
            true
        }
        "tools/call" => call_tool(state, params, out).is_ok(),
        _ => false,
    };
    if ok {
        if modern {
            out.extend_from_slice(b",\"_meta\":{\"io.modelcontextprotocol/serverInfo\":");
            out.extend_from_slice(SERVER_INFO.as_bytes());
            out.push(b'}');
        }
        out.extend_from_slice(b"}}\n");
    } else {
        out.truncate(start);
        let (code, message) =
            if method == "tools/call" { (-32602, "Invalid params") } else { (-32601, "Method not found") };
        out.extend_from_slice(format!(",\"error\":{{\"code\":{code},\"message\":\"{message}\"}}}}\n").as_bytes());
    }
}

fn main() {
    let all = std::env::var("BENCH_TOOLS").map(|v| v != "1").unwrap_or(true);
    let mut state = State { all, tools: tools_array(all), big_text: None, frame: None };
    let stdin = io::stdin();
    let mut reader = BufReader::with_capacity(1 << 16, stdin.lock());
    let stdout = io::stdout();
    let mut writer = BufWriter::with_capacity(1 << 16, stdout.lock());
    let mut line = Vec::with_capacity(1 << 16);
    let mut out = Vec::with_capacity(1 << 16);
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        while matches!(line.last(), Some(b'\n' | b'\r')) {
            line.pop();
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        out.clear();
        handle(&mut state, &line, &mut out);
        if !out.is_empty() {
            if writer.write_all(&out).and_then(|_| writer.flush()).is_err() {
                break;
            }
        }
        if out.capacity() > (1 << 20) {
            out = Vec::with_capacity(1 << 16); // do not keep 20 MB around between big calls
        }
    }
}
