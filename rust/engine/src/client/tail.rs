//! A bounded tail of a byte stream (a server's standard error): the last
//! `cap` bytes are kept, older ones are counted and dropped.

#[derive(Debug)]
pub struct Tail {
    buf: Vec<u8>,
    cap: usize,
    dropped: u64,
}

impl Tail {
    pub fn new(cap: usize) -> Tail {
        Tail { buf: Vec::new(), cap: cap.max(1), dropped: 0 }
    }

    pub fn push(&mut self, data: &[u8]) {
        if data.len() >= self.cap {
            self.dropped += (self.buf.len() + data.len() - self.cap) as u64;
            self.buf.clear();
            self.buf.extend_from_slice(&data[data.len() - self.cap..]);
            return;
        }
        self.buf.extend_from_slice(data);
        // Trim in batches: keep at most twice the cap between trims.
        if self.buf.len() > 2 * self.cap {
            let cut = self.buf.len() - self.cap;
            self.buf.drain(..cut);
            self.dropped += cut as u64;
        }
    }

    /// Bytes dropped so far.
    pub fn dropped(&self) -> u64 {
        self.dropped + self.buf.len().saturating_sub(self.cap) as u64
    }

    /// The kept text (invalid UTF-8 replaced). When older output was dropped,
    /// the text starts at the first complete line.
    pub fn text(&self) -> String {
        let start = self.buf.len().saturating_sub(self.cap);
        let mut b = &self.buf[start..];
        if self.dropped() > 0 {
            if let Some(i) = memchr::memchr(b'\n', b) {
                b = &b[i + 1..];
            }
        }
        String::from_utf8_lossy(b).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_last_bytes_from_a_line_start() {
        let mut t = Tail::new(10);
        t.push(b"first line\nsecond\n");
        assert_eq!(t.text(), "second\n");
        t.push(b"x");
        assert!(t.dropped() > 0);
        let mut small = Tail::new(100);
        small.push(b"a\nb\n");
        assert_eq!(small.text(), "a\nb\n");
        assert_eq!(small.dropped(), 0);
    }

    #[test]
    fn huge_pushes_stay_bounded() {
        let mut t = Tail::new(8);
        for _ in 0..1000 {
            t.push(b"0123456789\n");
        }
        assert!(t.text().len() <= 8);
        let mut u = Tail::new(4);
        u.push(&[b'z'; 100]);
        assert_eq!(u.buf.len(), 4);
        assert_eq!(u.dropped(), 96);
    }
}
