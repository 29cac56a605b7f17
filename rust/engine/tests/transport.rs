//! The serve loop over real pipes: ordering, EOF handling, broken pipes.

use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::io::FromRawFd;

use mcplite_engine::host::{CallContext, Host, ToolFailure, ToolResult, ToolSpec};
use mcplite_engine::transport::{serve, Reader, ServeEnd, ServeOptions};
use mcplite_engine::{Server, ServerInfo};
use serde_json::{Map, Value};

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
    fn call_tool(&mut self, _i: usize, a: Option<&Map<String, Value>>, _c: &CallContext) -> Result<ToolResult, ToolFailure> {
        Ok(ToolResult::text(a.unwrap()["n"].to_string()))
    }
}

fn pipe() -> (File, File) {
    let mut fds = [0; 2];
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    unsafe { (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) }
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
    let mut srv = server();
    let end = serve(&mut srv, &mut Echo, Reader::spawn(in_r), &mut out_w, &ServeOptions::default());
    drop(out_w);
    writer.join().unwrap();
    assert_eq!(end, ServeEnd::Eof);
    let out = reader_thread.join().unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1002);
    for (i, l) in lines.iter().enumerate() {
        let v: Value = serde_json::from_str(l).unwrap();
        assert_eq!(v["id"], i as u64);
        if (1..=1000).contains(&i) {
            assert_eq!(v["result"]["content"][0]["text"], i.to_string());
        }
    }
}

#[test]
fn broken_pipe_ends_serving_cleanly() {
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
    let (in_r, mut in_w) = pipe();
    let (out_r, mut out_w) = pipe();
    drop(out_r); // the client stopped reading
    in_w.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n").unwrap();
    let mut srv = server();
    let end = serve(&mut srv, &mut Echo, Reader::spawn(in_r), &mut out_w, &ServeOptions::default());
    assert_eq!(end, ServeEnd::BrokenPipe);
    drop(in_w);
}
