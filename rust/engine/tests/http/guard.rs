//! Who may talk to the server (RULES H5, H6): the Host and Origin checks,
//! bearer tokens and tokens files, and binds that are refused.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;

use mcplite_engine::transport::http::{HttpError, HttpOptions, HttpServer};
use mcplite_engine::{Server, ServerInfo};
use serde_json::json;

use super::{health_ok, modern_body, opts, post, raw_exchange, start, MODERN};

#[test]
fn host_origin_and_token_checks() {
    let r = start(HttpOptions {
        token: Some("s3cret-0123456789ab".into()),
        allowed_origins: vec!["https://app.example".into()],
        ..opts()
    });
    let url = r.url("/mcp");
    let mh = [("MCP-Protocol-Version", MODERN), ("Mcp-Method", "tools/list")];
    let list = modern_body(1, "tools/list", json!({}));
    // No token, wrong token: 401 with WWW-Authenticate.
    for auth in [None, Some("Bearer nope"), Some("Basic czNjcmV0"), Some("Bearer s3cret-0123456789ab2")] {
        let mut h = mh.to_vec();
        if let Some(a) = auth {
            h.push(("Authorization", a));
        }
        let g = post(&url, &h, &list);
        assert_eq!(g.status, 401, "{auth:?}");
        assert_eq!(g.header("www-authenticate"), Some("Bearer"));
        // RULES H6.3: missing and wrong are told apart.
        let want = if auth.is_some_and(|a| a.starts_with("Bearer")) {
            "invalid bearer token"
        } else {
            "bearer token required"
        };
        assert!(g.body.contains(want), "{auth:?}: {}", g.body);
    }
    let auth = ("Authorization", "Bearer s3cret-0123456789ab");
    assert_eq!(post(&url, &[mh[0], mh[1], auth], &list).status, 200);
    // /health stays open.
    health_ok(&r);
    // Origins: foreign 403, configured and loopback fine.
    let g = post(&url, &[mh[0], mh[1], auth, ("Origin", "https://evil.example")], &list);
    assert_eq!(g.status, 403);
    for o in ["https://app.example", "http://localhost:6274", "http://127.0.0.1"] {
        assert_eq!(post(&url, &[mh[0], mh[1], auth, ("Origin", o)], &list).status, 200, "{o}");
    }
    // DNS rebinding: a foreign Host on a loopback bind is refused.
    let mut s = TcpStream::connect(r.addr).unwrap();
    write!(s, "GET /health HTTP/1.1\r\nHost: evil.example:8080\r\nConnection: close\r\n\r\n").unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    assert!(out.starts_with("HTTP/1.1 403"), "{out}");
}

#[test]
fn public_bind_without_token_is_refused() {
    let server = Arc::new(Server::with_tools(
        ServerInfo { name: "m".into(), version: "1".into(), instructions: None },
        Vec::new(),
    ));
    let e = HttpServer::bind(server.clone(), HttpOptions { host: "0.0.0.0".into(), ..opts() });
    match e {
        Err(HttpError::Config(m)) => assert!(m.contains("without a token"), "{m}"),
        _ => panic!("a public bind without a token must be refused"),
    }
    let ok = HttpServer::bind(
        server.clone(),
        HttpOptions { host: "0.0.0.0".into(), allow_public_without_token: true, ..opts() },
    );
    assert!(ok.is_ok());
    let bad = HttpServer::bind(server, HttpOptions { path: "mcp".into(), ..opts() });
    assert!(matches!(bad, Err(HttpError::Config(_))));
}

/// RULES H6.1, H6.2: short tokens and tokens files open to others are
/// refused at bind, with the reason; a tokens file's names are accepted.
/// (Unix: file modes.)
#[cfg(unix)]
#[test]
fn short_tokens_and_open_tokens_files_are_refused() {
    use std::os::unix::fs::PermissionsExt;
    let server = Arc::new(Server::with_tools(
        ServerInfo { name: "m".into(), version: "1".into(), instructions: None },
        Vec::new(),
    ));
    let bind = |o: HttpOptions| match HttpServer::bind(server.clone(), o) {
        Err(HttpError::Config(m)) => m,
        Err(e) => panic!("{e}"),
        Ok(_) => String::from("bound"),
    };
    assert!(bind(HttpOptions { token: Some("fifteen-chars!!".into()), ..opts() }).contains("at least 16"));
    let dir = std::env::temp_dir().join(format!("mcplite-tokens-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("tokens");
    let write = |text: &str, mode: u32| {
        std::fs::write(&file, text).unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode)).unwrap();
    };
    let with_file = || HttpOptions { tokens_file: Some(file.clone()), ..opts() };
    write("alice 0123456789abcdef0123\n", 0o644);
    assert!(bind(with_file()).contains("accessible to others (mode 644)"));
    write("alice short\n", 0o600);
    let m = bind(with_file());
    assert!(m.contains("line 1") && m.contains("at least 16") && !m.contains("short"), "{m}");
    write("alice 0123456789abcdef0123\nalice 0123456789abcdef0124\n", 0o600);
    assert!(bind(with_file()).contains("used twice"));
    write(&format!("# team\nalice 0123456789abcdef0123 30\nbob sha256:{}\n", "ab".repeat(32)), 0o600);
    assert_eq!(bind(with_file()), "bound");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn configured_hosts_are_enforced_on_a_public_bind() {
    // RULES H5.2: bound to 0.0.0.0 with a token and allowed_hosts, a Host
    // not listed is refused; without allowed_hosts any Host is accepted.
    let auth = ("Authorization", "Bearer s3cret-0123456789ab");
    let public = HttpOptions {
        host: "0.0.0.0".into(),
        token: Some("s3cret-0123456789ab".into()),
        allow_public_without_token: true,
        ..opts()
    };
    let r = start(HttpOptions { allowed_hosts: vec!["Example.TEST".into()], ..public.clone() });
    let port = r.addr.port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let mh = [("MCP-Protocol-Version", MODERN), ("Mcp-Method", "tools/list"), auth];
    let list = modern_body(1, "tools/list", json!({}));
    for (host, status) in [
        ("evil.test", 403),
        (&*format!("evil.test:{port}"), 403),
        ("example.test.evil", 403),
        ("example.test", 200),
        (&*format!("example.test:{port}"), 200),
        (&*format!("localhost:{port}"), 200),
    ] {
        let g = post(&url, &[mh[0], mh[1], mh[2], ("Host", host)], &list);
        assert_eq!(g.status, status, "Host: {host}: {}", g.body);
        if status == 403 {
            assert!(g.body.contains("Host header not allowed"), "{}", g.body);
        }
    }
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let out = raw_exchange(&mut s, "GET /health HTTP/1.1\r\nHost: evil.test\r\nConnection: close\r\n\r\n");
    assert!(out.starts_with("HTTP/1.1 403 "), "{out}");
    drop(r);
    // Not configured: a public bind accepts any Host (the operator's proxy
    // or network decides which names reach it).
    let r = start(public);
    let url = format!("http://127.0.0.1:{}/mcp", r.addr.port());
    let g = post(&url, &[mh[0], mh[1], mh[2], ("Host", "evil.test")], &list);
    assert_eq!(g.status, 200, "{}", g.body);
}
