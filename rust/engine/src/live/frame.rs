//! Messages on a live-session socket: an 8-byte prefix (the header's length
//! and the body's length, each a big-endian `u32`), a JSON object (the
//! header: `type`, `id`, ...) and the body (bytes the R sides read: R's
//! `serialize()` of a call or of its outcome). One writer at a time per
//! socket (the callers hold a lock); a frame is written with one `send()`
//! loop so frames never interleave.

use std::io::{self, Read};
use std::os::unix::net::UnixStream;

use serde_json::Value;

/// Largest header accepted.
pub const MAX_HEADER: usize = 1 << 20;
/// Largest body accepted (a call's arguments, or its result).
pub const MAX_BODY: usize = 256 << 20;

/// One message.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    pub header: Value,
    pub body: Vec<u8>,
}

impl Frame {
    /// The header's `type` ("" when absent).
    pub fn kind(&self) -> &str {
        self.header.get("type").and_then(Value::as_str).unwrap_or("")
    }

    /// The header's `id` (call ids are numbers).
    pub fn id(&self) -> Option<u64> {
        self.header.get("id").and_then(Value::as_u64)
    }
}

fn too_large(what: &str, n: usize, max: usize) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("the {what} is too large ({n} bytes; at most {max})"))
}

/// Write one frame.
pub fn write_frame(stream: &UnixStream, header: &Value, body: &[u8]) -> io::Result<()> {
    let h = serde_json::to_vec(header)?;
    if h.len() > MAX_HEADER {
        return Err(too_large("message header", h.len(), MAX_HEADER));
    }
    if body.len() > MAX_BODY {
        return Err(too_large("message", body.len(), MAX_BODY));
    }
    let mut buf = Vec::with_capacity(8 + h.len() + body.len());
    buf.extend_from_slice(&(h.len() as u32).to_be_bytes());
    buf.extend_from_slice(&(body.len() as u32).to_be_bytes());
    buf.extend_from_slice(&h);
    buf.extend_from_slice(body);
    super::send_all(stream, &buf)
}

/// Read one frame; `None` at a clean end of stream (between frames).
pub fn read_frame(r: &mut impl Read) -> io::Result<Option<Frame>> {
    let mut pre = [0u8; 8];
    let mut got = 0;
    while got < pre.len() {
        match r.read(&mut pre[got..]) {
            Ok(0) if got == 0 => return Ok(None),
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    let hlen = u32::from_be_bytes([pre[0], pre[1], pre[2], pre[3]]) as usize;
    let blen = u32::from_be_bytes([pre[4], pre[5], pre[6], pre[7]]) as usize;
    if hlen > MAX_HEADER {
        return Err(too_large("message header", hlen, MAX_HEADER));
    }
    if blen > MAX_BODY {
        return Err(too_large("message", blen, MAX_BODY));
    }
    let mut h = vec![0u8; hlen];
    r.read_exact(&mut h)?;
    let header: Value = serde_json::from_slice(&h).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
    if !header.is_object() {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "a message header must be a JSON object"));
    }
    let mut body = vec![0u8; blen];
    r.read_exact(&mut body)?;
    Ok(Some(Frame { header, body }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn frames_round_trip_and_end_cleanly() {
        let (a, mut b) = UnixStream::pair().unwrap();
        write_frame(&a, &json!({"type": "call", "id": 7}), b"\x00\x01body").unwrap();
        write_frame(&a, &json!({"type": "info"}), b"").unwrap();
        drop(a);
        let f = read_frame(&mut b).unwrap().unwrap();
        assert_eq!((f.kind(), f.id(), f.body.as_slice()), ("call", Some(7), &b"\x00\x01body"[..]));
        assert_eq!(read_frame(&mut b).unwrap().unwrap().kind(), "info");
        assert_eq!(read_frame(&mut b).unwrap(), None);
    }

    #[test]
    fn bad_frames_are_errors() {
        let cases: Vec<Vec<u8>> = vec![
            vec![0, 0, 0],                                                  // cut in the prefix
            [&2u32.to_be_bytes()[..], &0u32.to_be_bytes(), b"[]"].concat(), // not an object
            [&(MAX_HEADER as u32 + 1).to_be_bytes()[..], &0u32.to_be_bytes()].concat(),
            [&2u32.to_be_bytes()[..], &(MAX_BODY as u32 + 1).to_be_bytes(), b"{}"].concat(),
            [&2u32.to_be_bytes()[..], &5u32.to_be_bytes(), b"{}ab"].concat(), // cut in the body
        ];
        for bytes in cases {
            assert!(read_frame(&mut bytes.as_slice()).is_err(), "{bytes:?}");
        }
    }

    #[test]
    fn a_closed_peer_is_an_error_not_a_signal() {
        let (a, b) = UnixStream::pair().unwrap();
        drop(b);
        assert!(write_frame(&a, &json!({"type": "x"}), &[0u8; 1 << 16]).is_err());
    }
}
