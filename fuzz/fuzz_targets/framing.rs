//! Framing (RULES W1.1): arbitrary bytes (invalid UTF-8, CR/LF mixes, BOMs)
//! pushed in arbitrary pieces. The lines must not depend on how the stream
//! was split, and must equal a direct reading of the rule.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcplite_engine::transport::Framer;

fn frame(chunks: &[&[u8]]) -> Vec<Vec<u8>> {
    Framer::lines_of(chunks)
}

/// W1.1 read literally: skip a BOM at the very start; split on LF; drop one
/// trailing CR per line; a final line without LF counts unless empty. A
/// stream that is only part of a BOM yields nothing.
fn reference(data: &[u8]) -> Vec<Vec<u8>> {
    const BOM: &[u8] = b"\xEF\xBB\xBF";
    if !data.is_empty() && data.len() < 3 && BOM.starts_with(data) {
        return vec![];
    }
    let body = data.strip_prefix(BOM).unwrap_or(data);
    let mut parts: Vec<&[u8]> = body.split(|b| *b == b'\n').collect();
    let last = parts.pop().unwrap();
    let mut lines: Vec<Vec<u8>> = parts.into_iter().map(|p| p.to_vec()).collect();
    if !last.is_empty() {
        lines.push(last.to_vec());
    }
    for l in &mut lines {
        if l.last() == Some(&b'\r') {
            l.pop();
        }
    }
    lines
}

fuzz_target!(|input: (Vec<u8>, Vec<u8>)| {
    let (cuts, data) = input;
    let want = reference(&data);
    let whole = frame(&[&data]);
    assert_eq!(whole, want, "one chunk");
    let mut chunks: Vec<&[u8]> = vec![];
    let mut rest: &[u8] = &data;
    for c in cuts {
        let n = (c as usize % 8).min(rest.len());
        let (a, b) = rest.split_at(n);
        chunks.push(a);
        rest = b;
    }
    chunks.push(rest);
    let split = frame(&chunks);
    assert_eq!(split, want, "split into {:?}", chunks.iter().map(|c| c.len()).collect::<Vec<_>>());
    for l in &split {
        assert!(!l.contains(&b'\n'));
    }
});
