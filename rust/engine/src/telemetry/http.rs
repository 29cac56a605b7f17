//! A minimal synchronous HTTP/1.1 POST, enough for OTLP/HTTP to a collector
//! (plain HTTP, one connection per export, bounded by a deadline). It runs
//! on the exporter thread only.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use super::config::OtlpConfig;

fn remaining(deadline: Instant) -> Result<Duration, String> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left < Duration::from_millis(1) {
        Err("timed out".into())
    } else {
        Ok(left)
    }
}

/// POST `body` to the configured endpoint. Returns the HTTP status code.
pub(crate) fn post(cfg: &OtlpConfig, content_type: &str, body: &[u8], deadline: Instant) -> Result<u16, String> {
    let addrs =
        (cfg.host.as_str(), cfg.port).to_socket_addrs().map_err(|e| format!("cannot resolve {}: {e}", cfg.host))?;
    let mut last = String::from("no address");
    let mut stream = None;
    for a in addrs {
        match TcpStream::connect_timeout(&a, remaining(deadline)?) {
            Ok(s) => {
                stream = Some(s);
                break;
            }
            Err(e) => last = e.to_string(),
        }
    }
    let mut s = stream.ok_or_else(|| format!("cannot connect: {last}"))?;
    let _ = s.set_nodelay(true);
    let host = if cfg.host.contains(':') {
        format!("[{}]:{}", cfg.host, cfg.port)
    } else {
        format!("{}:{}", cfg.host, cfg.port)
    };
    let mut head = format!(
        "POST {} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: mcplite/{}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n",
        cfg.path,
        env!("CARGO_PKG_VERSION"),
        body.len()
    );
    for (k, v) in &cfg.headers {
        head.push_str(k);
        head.push_str(": ");
        head.push_str(v);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    s.set_write_timeout(Some(remaining(deadline)?)).map_err(|e| e.to_string())?;
    s.write_all(head.as_bytes()).and_then(|_| s.write_all(body)).map_err(|e| format!("sending failed: {e}"))?;
    // Read the status line.
    let mut buf = Vec::with_capacity(256);
    let mut chunk = [0u8; 512];
    loop {
        s.set_read_timeout(Some(remaining(deadline)?)).map_err(|e| e.to_string())?;
        let n = s.read(&mut chunk).map_err(|e| format!("no response: {e}"))?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
        if buf.windows(2).any(|w| w == b"\r\n") || buf.len() > 8192 {
            break;
        }
    }
    let line_end = buf.windows(2).position(|w| w == b"\r\n").unwrap_or(buf.len());
    let line = String::from_utf8_lossy(&buf[..line_end]);
    let mut parts = line.split(' ');
    match (parts.next(), parts.next().and_then(|c| c.parse::<u16>().ok())) {
        (Some(v), Some(code)) if v.starts_with("HTTP/") => Ok(code),
        _ => Err("malformed HTTP response".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::BufRead;
    use std::net::TcpListener;

    #[test]
    fn posts_and_reads_status() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let h = std::thread::spawn(move || {
            let (s, _) = l.accept().unwrap();
            let mut r = std::io::BufReader::new(s.try_clone().unwrap());
            let mut head = Vec::new();
            let mut len = 0usize;
            loop {
                let mut line = String::new();
                r.read_line(&mut line).unwrap();
                if line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length: ") {
                    len = v.trim().parse().unwrap();
                }
                head.push(line);
            }
            let mut body = vec![0u8; len];
            r.read_exact(&mut body).unwrap();
            (&s).write_all(b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n").unwrap();
            (head, body)
        });
        let cfg = OtlpConfig {
            url: String::new(),
            host: "127.0.0.1".into(),
            port,
            path: "/v1/traces".into(),
            headers: vec![("x-key".into(), "v 1".into())],
            timeout: Duration::from_secs(5),
        };
        let code = post(&cfg, "application/x-protobuf", b"\x01\x02", Instant::now() + Duration::from_secs(5)).unwrap();
        assert_eq!(code, 202);
        let (head, body) = h.join().unwrap();
        assert_eq!(head[0], "POST /v1/traces HTTP/1.1\r\n");
        assert!(head.contains(&"x-key: v 1\r\n".to_string()));
        assert!(head.contains(&"Content-Type: application/x-protobuf\r\n".to_string()));
        assert_eq!(body, b"\x01\x02");
    }

    #[test]
    fn dead_endpoint_fails_fast() {
        // Bind then drop to get a port with nobody listening.
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let cfg = OtlpConfig {
            url: String::new(),
            host: "127.0.0.1".into(),
            port,
            path: "/".into(),
            headers: vec![],
            timeout: Duration::from_secs(5),
        };
        let e = post(&cfg, "x", b"", Instant::now() + Duration::from_secs(30)).unwrap_err();
        assert!(e.contains("cannot connect"), "{e}");
    }

    #[test]
    fn silent_endpoint_respects_deadline() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let cfg = OtlpConfig {
            url: String::new(),
            host: "127.0.0.1".into(),
            port,
            path: "/".into(),
            headers: vec![],
            timeout: Duration::from_secs(5),
        };
        // The listener never answers: without the deadline this would hang.
        let e = post(&cfg, "x", b"abc", Instant::now() + Duration::from_millis(200)).unwrap_err();
        assert!(e.contains("no response") || e.contains("timed out"), "{e}");
        drop(l);
    }
}
