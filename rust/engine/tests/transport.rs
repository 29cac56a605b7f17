//! The serve loop over real pipes: ordering, EOF handling, broken pipes.

use std::fs::File;
use std::io::{Read, Write};

use mcplite_engine::host::{CallContext, Host, ToolFailure, ToolResult, ToolSpec};
use mcplite_engine::transport::{serve, Reader, ServeEnd, ServeOptions};
use mcplite_engine::{Server, ServerInfo};
use serde_json::{Map, Value};

use crate::pipes::pipe;

struct Echo;

impl Host for Echo {
    fn tools(&mut self) -> Vec<ToolSpec> {
        vec![ToolSpec {
            name: "echo".into(),
            description: "Echo.".into(),
            input_schema: r#"{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"],"additionalProperties":false}"#.into(),
            annotations: vec![],
            output_schema: None,
        }]
    }
    fn call_tool(
        &mut self,
        _i: usize,
        a: Option<&Map<String, Value>>,
        _c: &CallContext,
    ) -> Result<ToolResult, ToolFailure> {
        Ok(ToolResult::text(a.unwrap()["n"].to_string()))
    }
}

fn inflight() -> std::sync::Arc<mcplite_engine::progress::Inflight> {
    std::sync::Arc::new(mcplite_engine::progress::Inflight::new(Default::default(), None))
}

fn server() -> Server {
    Server::new(ServerInfo { name: "mcplite".into(), version: "1".into(), instructions: None }, &mut Echo)
}

#[test]
fn pipelined_requests_then_eof_are_all_answered_in_order() {
    let (in_r, mut in_w) = pipe();
    let (mut out_r, mut out_w) = pipe();
    let writer = std::thread::spawn(move || {
        let mut buf = String::from("\u{feff}");
        buf.push_str("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}\r\n");
        for i in 1..=1000 {
            buf.push_str(&format!("{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"tools/call\",\"params\":{{\"name\":\"echo\",\"arguments\":{{\"n\":{i}}}}}}}\n"));
        }
        // Final line without LF is still processed.
        buf.push_str("{\"jsonrpc\":\"2.0\",\"id\":1001,\"method\":\"ping\"}");
        in_w.write_all(buf.as_bytes()).unwrap();
        // dropping in_w closes stdin immediately
    });
    let reader_thread = std::thread::spawn(move || {
        let mut s = String::new();
        out_r.read_to_string(&mut s).unwrap();
        s
    });
    let srv = server();
    let end = serve(&srv, &mut Echo, Reader::spawn(in_r), &mut out_w, &ServeOptions::default(), &inflight());
    drop(out_w);
    writer.join().unwrap();
    assert_eq!(end, ServeEnd::Eof);
    let out = reader_thread.join().unwrap();
    let lines: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 1002);
    // RULES C5: the final ping, read with calls queued ahead of it, may be
    // answered before them; everything else in order.
    let (pings, ordered): (Vec<&Value>, Vec<&Value>) = lines.iter().partition(|v| v["id"] == 1001);
    assert_eq!(pings.len(), 1);
    assert_eq!(pings[0]["result"], serde_json::json!({}));
    for (i, v) in ordered.iter().enumerate() {
        assert_eq!(v["id"], i as u64);
        if (1..=1000).contains(&i) {
            assert_eq!(v["result"]["content"][0]["text"], i.to_string());
        }
    }
}

#[test]
fn broken_pipe_ends_serving_cleanly() {
    #[cfg(unix)]
    // SAFETY: ignoring SIGPIPE installs no handler; a write to the closed
    // pipe then fails with EPIPE, as it does while serving.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN)
    };
    let (in_r, mut in_w) = pipe();
    let (out_r, mut out_w) = pipe();
    drop(out_r); // the client stopped reading
    in_w.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n").unwrap();
    let srv = server();
    let end = serve(&srv, &mut Echo, Reader::spawn(in_r), &mut out_w, &ServeOptions::default(), &inflight());
    assert_eq!(end, ServeEnd::BrokenPipe);
    drop(in_w);
}

/// A host whose `echo` tool sleeps while `n` is 0, flagging that it runs.
struct Slow(std::sync::Arc<std::sync::atomic::AtomicBool>);

impl Host for Slow {
    fn tools(&mut self) -> Vec<ToolSpec> {
        Echo.tools()
    }
    fn call_tool(
        &mut self,
        i: usize,
        a: Option<&Map<String, Value>>,
        c: &CallContext,
    ) -> Result<ToolResult, ToolFailure> {
        if a.unwrap()["n"] == 0 {
            self.0.store(true, std::sync::atomic::Ordering::SeqCst);
            std::thread::sleep(std::time::Duration::from_secs(2));
            self.0.store(false, std::sync::atomic::Ordering::SeqCst);
        }
        Echo.call_tool(i, a, c)
    }
}

fn calls(from: u64, to: u64) -> String {
    let mut buf = String::new();
    for i in from..to {
        buf.push_str(&format!("{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"tools/call\",\"params\":{{\"name\":\"echo\",\"arguments\":{{\"n\":{i}}}}}}}\n"));
    }
    buf
}

/// Serve the `Echo` host on another thread until EOF.
fn serve_echo_in_thread(input: File, mut output: File) -> std::thread::JoinHandle<ServeEnd> {
    std::thread::spawn(move || {
        let srv = server();
        serve(&srv, &mut Echo, Reader::spawn(input), &mut output, &ServeOptions::default(), &inflight())
    })
}

/// Read everything the server writes, on another thread.
fn collect_in_thread(mut output: File) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut s = String::new();
        output.read_to_string(&mut s).unwrap();
        s
    })
}

const INIT: &str = "{\"jsonrpc\":\"2.0\",\"id\":\"init\",\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}\n";

#[test]
fn requests_sent_while_a_tool_runs_are_read_and_queued() {
    // RULES S3: while the tool sleeps, the reader thread keeps reading, so a
    // client writing far more than a pipe buffer (64 KB) is not blocked.
    let running = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (in_r, mut in_w) = pipe();
    let (out_r, mut out_w) = pipe();
    let flag = std::sync::Arc::clone(&running);
    let serving = std::thread::spawn(move || {
        let mut host = Slow(flag);
        let srv =
            Server::new(ServerInfo { name: "mcplite".into(), version: "1".into(), instructions: None }, &mut host);
        serve(&srv, &mut host, Reader::spawn(in_r), &mut out_w, &ServeOptions::default(), &inflight())
    });
    let collector = collect_in_thread(out_r);
    in_w.write_all(INIT.as_bytes()).unwrap();
    in_w.write_all(calls(0, 1).as_bytes()).unwrap();
    while !running.load(std::sync::atomic::Ordering::SeqCst) {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let more = calls(1, 4001);
    assert!(more.len() > 256 * 1024);
    in_w.write_all(more.as_bytes()).unwrap();
    assert!(
        running.load(std::sync::atomic::Ordering::SeqCst),
        "the client's writes were blocked until the tool finished"
    );
    drop(in_w);
    let s = collector.join().unwrap();
    assert_eq!(serving.join().unwrap(), ServeEnd::Eof);
    let lines: Vec<&str> = s.lines().collect();
    assert_eq!(lines.len(), 4002);
    for (k, l) in lines[1..].iter().enumerate() {
        let v: Value = serde_json::from_str(l).unwrap();
        assert_eq!(v["id"], k as u64);
        assert_eq!(v["result"]["content"][0]["text"], k.to_string());
    }
}

#[test]
fn a_client_that_writes_everything_before_reading_is_served() {
    // Responses (~350 KB) and requests (~450 KB) both exceed the pipe
    // buffers: the server must keep reading while its writes wait.
    let (in_r, mut in_w) = pipe();
    let (mut out_r, out_w) = pipe();
    let serving = serve_echo_in_thread(in_r, out_w);
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    let writer = std::thread::spawn(move || {
        in_w.write_all(INIT.as_bytes()).unwrap();
        in_w.write_all(calls(1, 5001).as_bytes()).unwrap();
        drop(in_w);
        done_tx.send(()).unwrap();
    });
    // Only start reading once everything is written (or fail after 60 s
    // instead of hanging).
    done_rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the client could not write all requests before reading: the server stopped reading");
    writer.join().unwrap();
    let mut s = String::new();
    out_r.read_to_string(&mut s).unwrap();
    assert_eq!(serving.join().unwrap(), ServeEnd::Eof);
    let lines: Vec<&str> = s.lines().collect();
    assert_eq!(lines.len(), 5001);
    assert!(s.len() > 256 * 1024);
    let last: Value = serde_json::from_str(lines[5000]).unwrap();
    assert_eq!(last["id"], 5000);
}

#[test]
fn a_long_line_arriving_in_pieces_is_framed_whole() {
    // The first bytes are read by the serving thread, the rest by the
    // reader thread; the line must come out whole and in order.
    let (in_r, mut in_w) = pipe();
    let (out_r, out_w) = pipe();
    let serving = serve_echo_in_thread(in_r, out_w);
    let collector = collect_in_thread(out_r);
    in_w.write_all(INIT.as_bytes()).unwrap();
    let pad = "x".repeat(3 << 20);
    let long = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{{\"name\":\"echo\",\"arguments\":{{\"n\":7}}}},\"pad\":\"{pad}\"}}\n"
    );
    for (k, piece) in long.as_bytes().chunks(40_000).enumerate() {
        in_w.write_all(piece).unwrap();
        if k % 10 == 0 {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }
    in_w.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\"}\n").unwrap();
    drop(in_w);
    let s = collector.join().unwrap();
    assert_eq!(serving.join().unwrap(), ServeEnd::Eof);
    let mut lines: Vec<Value> = s.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 3);
    // RULES C5: the ping may overtake the long line (which may be a call).
    lines[1..].sort_by_key(|v| v["id"].as_u64());
    assert_eq!(lines[1]["id"], 7);
    assert_eq!(lines[1]["result"]["content"][0]["text"], "7");
    assert_eq!(lines[2]["id"], 8);
}
