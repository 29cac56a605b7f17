//! RULES U3: resources a tool changes, and the notifications subscribers
//! get: in process (the catalog follows the changes; no stream, so no
//! `subscriptions/listen`) and over stdio pipes (a legacy session's
//! subscriptions and list changes, 2026-07-28 listen streams with their
//! acknowledgment, ids and cancellation).

use std::io::{Read, Write};

use mcplite_engine::transport::{serve, Reader, ServeEnd, ServeOptions};
use mcplite_engine::{LegacyState, Server};
use serde_json::{json, Value};

use crate::common::{new_server, new_server_with_notes, FakeHost};
use crate::pipes::pipe;

const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
const M: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

/// A `tools/call` of the fake `blocks` tool making `changes` (legacy, or
/// modern with `_meta`).
fn call(id: u32, changes: Value, modern: bool) -> String {
    let meta = if modern { format!(",{M}") } else { String::new() };
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"blocks","arguments":{{"kinds":["text"],"changes":{changes}}}{meta}}}}}"#
    )
}

fn handle(server: &Server, session: &mut LegacyState, host: &mut FakeHost, line: &str) -> Value {
    serde_json::from_slice(&server.handle(session, line.as_bytes(), host).into_line().unwrap()).unwrap()
}

#[test]
fn u3_2_a_call_changes_what_is_listed_and_read() {
    let mut host = FakeHost::default();
    let server = new_server_with_notes(&mut host);
    let mut s = LegacyState::default();
    let init = handle(&server, &mut s, &mut host, INIT);
    assert_eq!(init["result"]["capabilities"]["resources"], json!({"subscribe": true, "listChanged": true}));
    let read = |server: &Server, s: &mut LegacyState, host: &mut FakeHost, uri: &str| {
        handle(
            server,
            s,
            host,
            &format!(r#"{{"jsonrpc":"2.0","id":9,"method":"resources/read","params":{{"uri":"{uri}"}}}}"#),
        )
    };
    let r = handle(
        &server,
        &mut s,
        &mut host,
        &call(1, json!([{"set": "notes://all", "text": "milk"}, {"set": "notes://new", "text": "n"}]), false),
    );
    assert_eq!(r["result"]["isError"], false);
    assert_eq!(read(&server, &mut s, &mut host, "notes://all")["result"]["contents"][0]["text"], "milk");
    assert_eq!(read(&server, &mut s, &mut host, "notes://new")["result"]["contents"][0]["text"], "n");
    let list = handle(&server, &mut s, &mut host, r#"{"jsonrpc":"2.0","id":2,"method":"resources/list"}"#);
    let uris: Vec<&str> =
        list["result"]["resources"].as_array().unwrap().iter().map(|r| r["uri"].as_str().unwrap()).collect();
    assert_eq!(uris, ["notes://all", "notes://new"]);
    assert_eq!(list["result"]["resources"][0]["size"], 4);
    // Removed: not found, and unsubscribing from it is still accepted.
    handle(&server, &mut s, &mut host, &call(3, json!([{"remove": "notes://new"}]), false));
    assert_eq!(read(&server, &mut s, &mut host, "notes://new")["error"]["code"], -32002);
    let unsub = handle(
        &server,
        &mut s,
        &mut host,
        r#"{"jsonrpc":"2.0","id":4,"method":"resources/unsubscribe","params":{"uri":"notes://new"}}"#,
    );
    assert_eq!(unsub["result"], json!({}));
    // In process no stream stays open: subscriptions/listen is not found.
    let listen = handle(
        &server,
        &mut s,
        &mut host,
        &format!(r#"{{"jsonrpc":"2.0","id":5,"method":"subscriptions/listen","params":{{"notifications":{{}},{M}}}}}"#),
    );
    assert_eq!(listen["error"]["code"], -32601);
}

#[test]
fn u3_2_a_server_that_does_not_allow_changes_is_not_changed() {
    let mut host = FakeHost::default();
    let server = new_server_with_notes(&mut host).with_resource_changes(false);
    let mut s = LegacyState::default();
    let init = handle(&server, &mut s, &mut host, INIT);
    assert_eq!(init["result"]["capabilities"]["resources"], json!({"subscribe": true, "listChanged": false}));
    let r = handle(&server, &mut s, &mut host, &call(1, json!([{"set": "notes://all", "text": "x"}]), false));
    assert_eq!(r["result"]["isError"], false);
    let read = handle(
        &server,
        &mut s,
        &mut host,
        r#"{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"notes://all"}}"#,
    );
    assert_eq!(read["result"]["contents"][0]["text"], "", "unchanged: {read}");
}

#[test]
fn u3_2_a_server_without_resources_is_not_changed() {
    let mut host = FakeHost::default();
    let server = new_server(&mut host).with_resource_changes(true);
    let mut s = LegacyState::default();
    handle(&server, &mut s, &mut host, INIT);
    let r = handle(&server, &mut s, &mut host, &call(1, json!([{"set": "notes://all", "text": "x"}]), false));
    assert_eq!(r["result"]["isError"], false);
    let list = handle(&server, &mut s, &mut host, r#"{"jsonrpc":"2.0","id":2,"method":"resources/list"}"#);
    assert_eq!(list["error"]["code"], -32601, "still no resources: {list}");
}

/// A stdio connection to a server with resources, over pipes: the test
/// writes a line, reads the lines the server writes, and ends the input.
struct Connection {
    input: Option<std::fs::File>,
    output: std::io::BufReader<std::fs::File>,
    serving: Option<std::thread::JoinHandle<(ServeEnd, usize)>>,
}

impl Connection {
    fn open() -> Connection {
        let (in_r, in_w) = pipe();
        let (out_r, mut out_w) = pipe();
        let serving = std::thread::spawn(move || {
            let mut host = FakeHost::default();
            let server = new_server_with_notes(&mut host);
            let inflight = std::sync::Arc::new(mcplite_engine::progress::Inflight::new(Default::default(), None));
            let end = serve(&server, &mut host, Reader::spawn(in_r), &mut out_w, &ServeOptions::default(), &inflight);
            (end, server.hub().count())
        });
        Connection { input: Some(in_w), output: std::io::BufReader::new(out_r), serving: Some(serving) }
    }

    fn send(&mut self, line: &str) {
        let w = self.input.as_mut().unwrap();
        w.write_all(line.as_bytes()).unwrap();
        w.write_all(b"\n").unwrap();
    }

    fn recv(&mut self) -> Value {
        let mut line = String::new();
        assert!(std::io::BufRead::read_line(&mut self.output, &mut line).unwrap() > 0, "the server ended");
        serde_json::from_str(&line).unwrap()
    }

    /// Lines up to and including the answer to `id`.
    fn until_answer(&mut self, id: Value) -> Vec<Value> {
        let mut got = Vec::new();
        loop {
            let v = self.recv();
            let done = v.get("id") == Some(&id);
            got.push(v);
            if done {
                return got;
            }
        }
    }

    /// End the input: serving ends, and with it every listener; nothing
    /// more was written.
    fn close(mut self) {
        drop(self.input.take());
        let (end, listeners) = self.serving.take().unwrap().join().unwrap();
        assert_eq!(end, ServeEnd::Eof);
        assert_eq!(listeners, 0, "the connection's listeners end with it");
        let mut rest = String::new();
        self.output.read_to_string(&mut rest).unwrap();
        assert_eq!(rest, "");
    }
}

/// A line's kind: `answer <id>`, or the notification's method and URI.
fn shape(v: &Value) -> String {
    match (v.get("id"), v.get("method")) {
        (Some(id), _) => format!("answer {id}"),
        (None, Some(m)) => {
            format!("{} {}", m.as_str().unwrap(), v["params"]["uri"].as_str().unwrap_or("")).trim().into()
        }
        _ => panic!("{v}"),
    }
}

#[test]
fn u3_1_a_legacy_session_hears_what_it_subscribed_to_before_the_answer() {
    let mut c = Connection::open();
    c.send(INIT);
    c.send(r#"{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"notes://all"}}"#);
    // Same size: content only, so no list change for notes://all.
    c.send(&call(2, json!([{"set": "notes://other", "text": ""}, {"set": "notes://all", "text": ""}]), false));
    c.send(r#"{"jsonrpc":"2.0","id":3,"method":"resources/unsubscribe","params":{"uri":"notes://all"}}"#);
    c.send(&call(4, json!([{"set": "notes://all", "text": "x"}]), false));
    let got: Vec<Value> = c.until_answer(json!(4));
    let shapes: Vec<String> = got.iter().map(shape).collect();
    assert_eq!(
        shapes,
        [
            "answer 0",
            "answer 1",
            "notifications/resources/list_changed",
            "notifications/resources/updated notes://all",
            "answer 2",
            "answer 3",
            // Unsubscribed: the list changed (the size), the content is not followed.
            "notifications/resources/list_changed",
            "answer 4",
        ]
    );
    assert!(got[2].get("params").is_none(), "a legacy list change has no params: {}", got[2]);
    c.close();
}

#[test]
fn u3_3_listen_streams_are_acknowledged_first_tagged_and_cancelled() {
    let listen = |id: &str, notifications: Value| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"subscriptions/listen","params":{{"notifications":{notifications},{M}}}}}"#
        )
    };
    let sub = |v: &Value| v["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"].clone();
    let mut c = Connection::open();
    // The acknowledgments, with what is honoured (no tool list changes, no
    // URI the server cannot read); a bad filter is -32602.
    c.send(&listen(
        "\"s1\"",
        json!({"resourceSubscriptions": ["notes://all", "notes://none"], "toolsListChanged": true}),
    ));
    let ack = c.recv();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(sub(&ack), json!("s1"));
    assert_eq!(ack["params"]["notifications"], json!({"resourceSubscriptions": ["notes://all"]}));
    c.send(&listen("7", json!({"resourcesListChanged": true})));
    let ack = c.recv();
    assert_eq!(sub(&ack), json!(7));
    assert_eq!(ack["params"]["notifications"], json!({"resourcesListChanged": true}));
    c.send(&listen("8", json!({"resourceSubscriptions": "notes://all"})));
    let bad = c.recv();
    assert_eq!((bad["id"].clone(), bad["error"]["code"].clone()), (json!(8), json!(-32602)));
    // A call: a list change for 7, an update for s1, then the answer. A
    // connection that never initialized has no legacy session to tell.
    c.send(&call(1, json!([{"set": "notes://all", "text": "x"}]), true));
    let got = c.until_answer(json!(1));
    let heard: Vec<(String, Value)> = got.iter().map(|v| (shape(v), sub(v))).collect();
    assert_eq!(heard.len(), 3, "{heard:?}");
    assert!(heard.contains(&("notifications/resources/list_changed".into(), json!(7))), "{heard:?}");
    assert!(heard.contains(&("notifications/resources/updated notes://all".into(), json!("s1"))), "{heard:?}");
    // s1 cancelled: the next call is heard by 7 only; listen requests are
    // never answered while the connection lasts.
    c.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"s1"}}"#);
    c.send(&call(2, json!([{"set": "notes://all", "text": "yy"}]), true));
    let got = c.until_answer(json!(2));
    let heard: Vec<(String, Value)> = got.iter().map(|v| (shape(v), sub(v))).collect();
    assert_eq!(heard, [("notifications/resources/list_changed".into(), json!(7)), ("answer 2".into(), Value::Null)]);
    c.close();
}

#[test]
fn u3_3_a_connection_holds_a_bounded_number_of_listen_streams() {
    let mut c = Connection::open();
    for i in 0..65 {
        c.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{i},"method":"subscriptions/listen","params":{{"notifications":{{"resourcesListChanged":true}},{M}}}}}"#
        ));
        let v = c.recv();
        if i < 64 {
            assert_eq!(v["method"], "notifications/subscriptions/acknowledged", "{v}");
        } else {
            assert_eq!((v["id"].clone(), v["error"]["code"].clone()), (json!(64), json!(-32602)), "{v}");
        }
    }
    // Cancelling one makes room.
    c.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}"#);
    c.send(&format!(
        r#"{{"jsonrpc":"2.0","id":99,"method":"subscriptions/listen","params":{{"notifications":{{}},{M}}}}}"#
    ));
    assert_eq!(c.recv()["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 99);
    c.close();
}
