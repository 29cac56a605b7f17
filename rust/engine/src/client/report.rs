//! What a failed client operation tells the user (RULES K7.2): one message
//! that names the server and what was asked of it, adds what the server
//! wrote that was not JSON-RPC and the end of its standard error, and the
//! fields of the R condition the bridge raises. Built here, once, so that
//! every failure reads the same whichever entry point met it.

use serde_json::Value;

use super::{human_duration, ClientError};

/// What the failed operation was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum What<'a> {
    /// Starting or reaching the server and negotiating.
    Connect,
    /// A request other than a tool call (`tools/list`).
    Method(&'a str),
    /// A call of this tool.
    Tool(&'a str),
}

/// What is known around a failure besides the error itself.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// The connection's name.
    pub server: &'a str,
    pub what: What<'a>,
    /// The kept tail of the server's standard error ("" for HTTP).
    pub stderr: &'a str,
    /// The server's exit status, when it exited with one.
    pub exit_status: Option<i32>,
    /// Lines the server wrote that were not JSON-RPC: how many, the last.
    pub garbage: (u64, Option<&'a str>),
}

/// The condition for one failure: its kind (the R class suffix), message
/// and fields.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// `rpc`, `timeout`, `connection`, `tls` or `interrupted`.
    pub kind: &'static str,
    pub message: String,
    /// The engine's name of the failure (`spawn`, `connect`, `tls`,
    /// `closed`, `http`, `protocol`): the `reason` of connection errors.
    pub reason: &'static str,
    /// JSON-RPC errors: the code, the server's message and its data.
    pub code: Option<i64>,
    pub error_message: Option<String>,
    pub data: Option<Value>,
    /// The HTTP status of an `http` failure, or the exit status of a
    /// server that exited with one.
    pub status: Option<i64>,
    /// Timeouts: the seconds waited.
    pub seconds: Option<f64>,
    /// TLS failures: the URL.
    pub url: Option<String>,
    /// The server's standard error, one element per line.
    pub stderr: Vec<String>,
}

/// Lines shown from the end of the server's standard error, and the
/// longest line shown whole.
const EXCERPT_LINES: usize = 10;
const EXCERPT_WIDTH: usize = 300;

/// The text's lines, without the final line end.
pub fn split_lines(text: &str) -> Vec<String> {
    if text.is_empty() {
        return Vec::new();
    }
    let text = text.strip_suffix('\n').unwrap_or(text);
    text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l).to_string()).collect()
}

/// `"\nThe server's standard error ended with:\n  ..."` with its last
/// non-blank lines, or "" when it wrote nothing.
fn stderr_excerpt(lines: &[String]) -> String {
    let kept: Vec<&String> = lines.iter().filter(|l| !l.trim().is_empty()).collect();
    if kept.is_empty() {
        return String::new();
    }
    let mut out = String::from("\nThe server's standard error ended with:");
    for l in &kept[kept.len().saturating_sub(EXCERPT_LINES)..] {
        out.push_str("\n  ");
        match l.char_indices().nth(EXCERPT_WIDTH) {
            Some((cut, _)) => {
                out.push_str(&l[..cut]);
                out.push_str("...");
            }
            None => out.push_str(l),
        }
    }
    out
}

/// `" (the server also wrote 2 lines that are not JSON-RPC, the last: ...)"`.
fn garbage_note((n, last): (u64, Option<&str>)) -> String {
    if n == 0 {
        return String::new();
    }
    format!(
        " (the server also wrote {n} line{} that {} not JSON-RPC, the last: {})",
        if n == 1 { "" } else { "s" },
        if n == 1 { "is" } else { "are" },
        last.unwrap_or("")
    )
}

/// End a sentence: a full stop unless it ends with one already.
fn sentence(mut s: String) -> String {
    if !s.ends_with(['.', '?', '!']) {
        s.push('.');
    }
    s
}

/// The condition for `e`.
pub fn report(e: &ClientError, cx: &Context) -> Report {
    let server = cx.server;
    let what = match cx.what {
        What::Connect => "the connection".to_string(),
        What::Method(m) => format!("`{m}`"),
        What::Tool(t) => format!("the call to `{t}`"),
    };
    let connecting = cx.what == What::Connect;
    let stderr = split_lines(cx.stderr);
    let note = garbage_note(cx.garbage);
    let excerpt = stderr_excerpt(&stderr);
    let mut r = Report {
        kind: "connection",
        message: String::new(),
        reason: e.kind(),
        code: None,
        error_message: None,
        data: None,
        status: None,
        seconds: None,
        url: None,
        stderr,
    };
    match e {
        ClientError::Interrupted => {
            r.kind = "interrupted";
            r.message = "interrupted".into();
        }
        ClientError::Rpc { code, message, data } => {
            r.kind = "rpc";
            r.message = format!("MCP server `{server}` answered {what} with JSON-RPC error {code}: {message}");
            r.code = Some(*code);
            r.error_message = Some(message.clone());
            r.data = data.as_deref().cloned();
            r.stderr = Vec::new();
        }
        ClientError::Timeout(d) => {
            r.kind = "timeout";
            r.seconds = Some(d.as_secs_f64());
            let head = match (connecting, d.is_zero()) {
                (true, _) => {
                    format!("MCP server `{server}` did not complete the handshake within {}", human_duration(*d))
                }
                (false, true) => format!("MCP server `{server}` stopped reading its input during {what}"),
                (false, false) => format!(
                    "MCP server `{server}` did not answer {what} within {}; the request was cancelled",
                    human_duration(*d)
                ),
            };
            r.message = sentence(head + &note) + &excerpt;
        }
        ClientError::Tls { url, .. } => {
            r.kind = "tls";
            r.url = Some(url.clone());
            r.stderr = Vec::new();
            r.message = sentence(format!("Cannot connect to MCP server `{server}`: {e}"));
        }
        _ => {
            let intro = match e {
                ClientError::Spawn(_) => format!("Cannot start MCP server `{server}`: "),
                ClientError::Connect(_) => format!("Cannot connect to MCP server `{server}`: "),
                ClientError::Auth(_) => format!("Cannot sign in to MCP server `{server}`: "),
                ClientError::Closed(_) if connecting => {
                    format!("MCP server `{server}` closed the connection while connecting: ")
                }
                ClientError::Closed(_) => format!("MCP server `{server}` closed the connection during {what}: "),
                ClientError::Http { status, .. } => {
                    r.status = Some(i64::from(*status));
                    if connecting {
                        format!("MCP server `{server}` answered with ")
                    } else {
                        format!("MCP server `{server}` answered {what} with ")
                    }
                }
                _ if connecting => format!("MCP server `{server}` (connecting): "),
                _ => format!("MCP server `{server}` ({what}): "),
            };
            if matches!(e, ClientError::Closed(_)) {
                r.status = cx.exit_status.map(i64::from);
            }
            r.message = sentence(format!("{intro}{e}{note}")) + &excerpt;
        }
    }
    r
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn cx<'a>(what: What<'a>, stderr: &'a str, garbage: (u64, Option<&'a str>)) -> Context<'a> {
        Context { server: "srv", what, stderr, exit_status: Some(3), garbage }
    }

    #[test]
    fn messages_name_the_server_and_the_operation() {
        let r = report(
            &ClientError::Closed("the server exited with status 3".into()),
            &cx(What::Connect, "", (1, Some("junk"))),
        );
        assert_eq!(
            r.message,
            "MCP server `srv` closed the connection while connecting: the server exited with status 3 (the server \
             also wrote 1 line that is not JSON-RPC, the last: junk)."
        );
        assert_eq!((r.kind, r.reason, r.status), ("connection", "closed", Some(3)));

        let r = report(&ClientError::Timeout(Duration::from_secs(2)), &cx(What::Tool("slow"), "a\n\nb\n", (0, None)));
        assert_eq!(
            r.message,
            "MCP server `srv` did not answer the call to `slow` within 2 s; the request was cancelled.\nThe \
             server's standard error ended with:\n  a\n  b"
        );
        assert_eq!((r.kind, r.seconds, r.stderr.len()), ("timeout", Some(2.0), 3));

        let r = report(&ClientError::Timeout(Duration::from_secs(1)), &cx(What::Connect, "", (2, Some("more junk"))));
        assert_eq!(
            r.message,
            "MCP server `srv` did not complete the handshake within 1 s (the server also wrote 2 lines that are not \
             JSON-RPC, the last: more junk)."
        );

        let e = ClientError::Rpc { code: -32602, message: "unknown tool".into(), data: None };
        let r = report(&e, &cx(What::Tool("nope"), "ignored", (0, None)));
        assert_eq!(r.message, "MCP server `srv` answered the call to `nope` with JSON-RPC error -32602: unknown tool");
        assert_eq!((r.kind, r.code, r.stderr.len()), ("rpc", Some(-32602), 0));

        let e = ClientError::Http { status: 404, message: "not found".into() };
        let r = report(&e, &cx(What::Method("tools/list"), "", (0, None)));
        assert_eq!(r.message, "MCP server `srv` answered `tools/list` with HTTP 404: not found.");
        assert_eq!(r.status, Some(404));
    }

    #[test]
    fn long_stderr_lines_are_cut_and_only_the_last_ten_shown() {
        let text: String = (0..15).map(|i| format!("line {i}\n")).collect::<String>() + &"x".repeat(400);
        let r = report(&ClientError::Spawn("cannot start".into()), &cx(What::Connect, &text, (0, None)));
        assert!(!r.message.contains("line 5\n") && r.message.contains("line 6\n"), "{}", r.message);
        assert!(r.message.ends_with(&format!("{}...", "x".repeat(300))), "{}", r.message);
        assert_eq!(r.stderr.len(), 16);
    }
}
