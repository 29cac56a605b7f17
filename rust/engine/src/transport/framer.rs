//! Framing (RULES W1.1): a byte stream split into lines on LF, one
//! trailing CR removed, a UTF-8 BOM at the very start of the stream skipped.
//! Pure: no I/O, so it can be tested and fuzzed directly.

/// Splits a byte stream into lines.
#[derive(Debug, Default)]
pub struct Framer {
    buf: Vec<u8>,
    at_start: bool,
    started: bool,
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

impl Framer {
    pub fn new() -> Framer {
        Framer { buf: Vec::new(), at_start: true, started: false }
    }

    /// Feed bytes; complete lines are passed to `emit`.
    pub fn push(&mut self, mut data: &[u8], emit: &mut dyn FnMut(Vec<u8>)) {
        if self.at_start {
            // Skip a BOM at the very start of the stream, even if it arrives
            // split over several reads.
            let have = self.buf.len();
            let need = BOM.len() - have.min(BOM.len());
            let take = need.min(data.len());
            let mut probe = self.buf.clone();
            probe.extend_from_slice(&data[..take]);
            if BOM.starts_with(&probe) {
                if probe.len() == BOM.len() {
                    self.buf.clear();
                    data = &data[take..];
                    self.at_start = false;
                } else {
                    self.buf = probe;
                    return;
                }
            } else {
                self.at_start = false;
            }
        }
        self.started = true;
        let mut start = 0;
        for i in memchr::memchr_iter(b'\n', data) {
            {
                let mut line = if self.buf.is_empty() {
                    data[start..i].to_vec()
                } else {
                    let mut l = std::mem::take(&mut self.buf);
                    l.extend_from_slice(&data[start..i]);
                    l
                };
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                emit(line);
                start = i + 1;
            }
        }
        self.buf.extend_from_slice(&data[start..]);
    }

    /// Is part of a line (without its LF yet) held back?
    pub fn has_partial(&self) -> bool {
        !self.buf.is_empty()
    }

    /// All lines of a stream given in pieces, the final unterminated one
    /// included (for tests and fuzzing).
    pub fn lines_of(chunks: &[&[u8]]) -> Vec<Vec<u8>> {
        let mut f = Framer::new();
        let mut out = Vec::new();
        for c in chunks {
            f.push(c, &mut |l| out.push(l));
        }
        out.extend(f.finish());
        out
    }

    /// End of stream: the final line without LF, if any.
    pub fn finish(&mut self) -> Option<Vec<u8>> {
        if self.buf.is_empty() {
            return None;
        }
        let mut line = std::mem::take(&mut self.buf);
        if self.at_start && BOM.starts_with(&line) {
            return None;
        }
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        Some(line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(chunks: &[&[u8]]) -> Vec<Vec<u8>> {
        Framer::lines_of(chunks)
    }

    #[test]
    fn framing_rules() {
        assert_eq!(frame(&[b"a\nb\r\nc"]), vec![b"a".to_vec(), b"b".to_vec(), b"c".to_vec()]);
        assert_eq!(frame(&[b"a\r\r\n"]), vec![b"a\r".to_vec()]);
        assert_eq!(frame(&[b"\xEF\xBB\xBFx\n"]), vec![b"x".to_vec()]);
        assert_eq!(frame(&[b"\xEF", b"\xBB", b"\xBFx\n"]), vec![b"x".to_vec()]);
        assert_eq!(frame(&[b"x\n\xEF\xBB\xBFy\n"]), vec![b"x".to_vec(), b"\xEF\xBB\xBFy".to_vec()]);
        assert_eq!(frame(&[b"ab", b"c\nd", b"e\n"]), vec![b"abc".to_vec(), b"de".to_vec()]);
        assert_eq!(frame(&[b"\n\n"]), vec![b"".to_vec(), b"".to_vec()]);
        assert_eq!(frame(&[b"\xEF\xBB"]), Vec::<Vec<u8>>::new());
        assert_eq!(frame(&[b"\xEFz\n"]), vec![b"\xEFz".to_vec()]);
    }
}
