//! The fast check of structured content (RULES J4.6): the output schemas
//! mcplite's type helpers write, checked on the JSON text in one pass.
//!
//! Written by hand because it must be faster than what the `jsonschema`
//! crate can do here: that crate validates a `serde_json::Value`, and
//! building one (with this workspace's `preserve_order` and
//! `arbitrary_precision` features: a map and strings for every row) costs
//! several times what a whole call of a large result costs (benchmark W5,
//! bench/schema/), and a general pull parser (`jiter`, used before) still
//! cost about a third of such a call. This scanner reads the bytes once,
//! allocates nothing, and matches a member name against the property the
//! schema lists next as raw bytes (a data frame's rows list their members
//! in the schema's order).
//!
//! It is only a shortcut: it covers a subset of JSON Schema (`type`,
//! `properties`, `required`, `additionalProperties` as a boolean, `items`
//! as one schema, `enum` of strings, booleans and null, `anyOf`, and
//! annotations), and it only ever says "valid" for a value the `jsonschema`
//! crate finds valid. A schema with anything else has no fast check, and a
//! value the fast check does not accept (a mismatch, or anything it does not
//! read: an escaped member name it would have to decode, a nesting deeper
//! than [`MAX_NESTING`], text that is not JSON) is validated by
//! `jsonschema`, which also writes the message. The tests compare the two
//! on generated schemas and values.

use serde_json::{Map, Value};

/// JSON types, as bits of [`Node::types`].
const NULL: u8 = 1;
const BOOLEAN: u8 = 2;
/// A number with no fractional part (JSON Schema's "integer").
const INTEGER: u8 = 4;
/// Any other number ("number" also sets [`INTEGER`]).
const FRACTION: u8 = 8;
const STRING: u8 = 16;
const ARRAY: u8 = 32;
const OBJECT: u8 = 64;
const ANY: u8 = 127;

/// Schemas nested deeper than this have no fast check.
const MAX_DEPTH: usize = 64;

/// Values nested deeper than this are left to `jsonschema` (the scanner
/// recurses once per level).
const MAX_NESTING: usize = 256;

/// The dialect whose meaning the fast check has (the one `jsonschema`
/// uses when a schema names none).
const DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

/// An `enum` member the fast check knows.
#[derive(Debug, PartialEq)]
enum Member {
    Null,
    Bool(bool),
    /// A string, with its text as a [`Prefix`] (compared with the raw
    /// text of a string without escapes).
    Str(String, Prefix),
}

/// One compiled (sub)schema.
#[derive(Debug)]
pub(super) struct Node {
    types: u8,
    members: Option<Vec<Member>>,
    /// The string members of fewer than 16 bytes, [`pack`]ed.
    short_strings: Vec<[u64; 2]>,
    properties: Vec<Property>,
    /// The bits of all required properties (see [`Property::required_bit`]).
    required_all: u64,
    /// `additionalProperties` (true when absent).
    additional: bool,
    items: Option<Box<Node>>,
    /// `anyOf` (empty when absent).
    any_of: Vec<Node>,
}

#[derive(Debug)]
struct Property {
    name: String,
    /// The name as compact JSON writes it before a value (`"name":`),
    /// compared with a member name as raw bytes.
    key: Prefix,
    node: Node,
    /// This property's bit in [`Node::required_all`] when it is required,
    /// else 0.
    required_bit: u64,
    /// In `properties` (else only in `required`: subject to
    /// `additionalProperties`).
    declared: bool,
}

impl Property {
    fn new(name: &str, node: Node, declared: bool) -> Property {
        Property {
            name: name.to_owned(),
            key: Prefix::new(format!("{}:", Value::from(name)).into_bytes()),
            node,
            required_bit: 0,
            declared,
        }
    }
}

/// At most this many required properties per object (bits of a `u64`).
const MAX_REQUIRED: usize = 64;

impl Node {
    const fn any() -> Node {
        Node {
            types: ANY,
            members: None,
            short_strings: Vec::new(),
            properties: Vec::new(),
            required_all: 0,
            additional: true,
            items: None,
            any_of: Vec::new(),
        }
    }

    /// Does this node accept any value, `anyOf` aside?
    fn is_any(&self) -> bool {
        self.types == ANY
            && self.members.is_none()
            && self.properties.is_empty()
            && self.additional
            && self.items.as_deref().is_none_or(Node::is_trivial)
    }

    /// Does this node accept any value at all?
    fn is_trivial(&self) -> bool {
        self.is_any() && self.any_of.is_empty()
    }

    /// The fast check of `schema`, when it stays within the subset.
    pub(super) fn compile(schema: &Value) -> Option<Node> {
        Node::compile_at(schema, 0)
    }

    fn compile_at(schema: &Value, depth: usize) -> Option<Node> {
        if depth > MAX_DEPTH {
            return None;
        }
        let map: &Map<String, Value> = match schema {
            Value::Bool(true) => return Some(Node::any()),
            Value::Object(m) => m,
            _ => return None,
        };
        let mut node = Node::any();
        let mut required: Vec<&str> = Vec::new();
        for (key, v) in map {
            match key.as_str() {
                "type" => node.types = types(v)?,
                "properties" => {
                    for (name, sub) in v.as_object()? {
                        node.properties.push(Property::new(name, Node::compile_at(sub, depth + 1)?, true));
                    }
                }
                "required" => {
                    for name in v.as_array()? {
                        required.push(name.as_str()?);
                    }
                }
                "additionalProperties" => node.additional = v.as_bool()?,
                "items" if v.is_object() || v.is_boolean() => {
                    node.items = Some(Box::new(Node::compile_at(v, depth + 1)?));
                }
                "enum" => {
                    let members = v.as_array()?.iter().map(member).collect::<Option<Vec<_>>>()?;
                    if members.is_empty() {
                        return None;
                    }
                    node.short_strings = members
                        .iter()
                        .filter_map(|m| match m {
                            Member::Str(v, _) if v.len() < 16 => {
                                let mut head = [0u8; 16];
                                head[..v.len()].copy_from_slice(v.as_bytes());
                                Some(pack(&head, v.len()))
                            }
                            _ => None,
                        })
                        .collect();
                    node.members = Some(members);
                }
                "anyOf" => {
                    let branches = v.as_array()?;
                    if branches.is_empty() {
                        return None;
                    }
                    node.any_of =
                        branches.iter().map(|b| Node::compile_at(b, depth + 1)).collect::<Option<Vec<_>>>()?;
                }
                "$schema" if v.as_str() == Some(DRAFT_2020_12) => {}
                // Annotations: no effect on validity (`format` included,
                // as formats are not checked).
                "description" | "title" | "default" | "examples" | "format" | "$comment" | "deprecated"
                | "readOnly" | "writeOnly" => {}
                _ => return None,
            }
        }
        // A required name is one more property (without a schema when
        // `properties` has none for it), found when present.
        required.sort_unstable();
        required.dedup();
        if required.len() > MAX_REQUIRED {
            return None;
        }
        for (i, name) in required.into_iter().enumerate() {
            let bit = 1u64 << i;
            node.required_all |= bit;
            match node.properties.iter_mut().find(|p| p.name == name) {
                Some(p) => p.required_bit = bit,
                None => {
                    let mut p = Property::new(name, Node::any(), false);
                    p.required_bit = bit;
                    node.properties.push(p);
                }
            }
        }
        Some(node.fold_nullable())
    }

    /// `anyOf` of a schema and `{"type":"null"}` (the nullable spelling of
    /// RULES R2.3) with no keyword beside it but annotations: that schema,
    /// also accepting null, so that a value is read once, not once per
    /// branch.
    fn fold_nullable(mut self) -> Node {
        let plain_null = |n: &Node| {
            n.types == NULL
                && n.members.is_none()
                && n.properties.is_empty()
                && n.additional
                && n.items.is_none()
                && n.any_of.is_empty()
        };
        if !self.is_any() || self.any_of.len() != 2 {
            return self;
        }
        let other = match (plain_null(&self.any_of[0]), plain_null(&self.any_of[1])) {
            (_, true) => 0,
            (true, false) => 1,
            (false, false) => return self,
        };
        if !self.any_of[other].any_of.is_empty() {
            return self;
        }
        let mut node = self.any_of.swap_remove(other);
        node.types |= NULL;
        if let Some(members) = &mut node.members {
            if !members.contains(&Member::Null) {
                members.push(Member::Null);
            }
        }
        node
    }

    /// Is `json` (one JSON value) valid? `false` also when the text is
    /// not read here: then `jsonschema` decides.
    pub(super) fn accepts(&self, json: &str) -> bool {
        let mut s = Scan { b: json.as_bytes(), i: 0, last: 0 };
        s.ws();
        self.value(&mut s, 0) && {
            s.ws();
            s.i == s.b.len()
        }
    }

    /// Read one value (at its first byte) and check it; stops at the first
    /// mismatch (`false`: the rest is not read). Scalars are read here,
    /// inlined into the loops over an array's items and an object's
    /// members (a data frame's cells), the rest in [`Node::compound`].
    #[inline(always)]
    fn value(&self, s: &mut Scan<'_>, nesting: usize) -> bool {
        if self.any_of.is_empty() {
            match s.peek() {
                b'"' => return self.string(s),
                b'-' | b'0'..=b'9' => return self.number(s),
                b't' => return s.literal(b"true") && self.boolean(true),
                b'f' => return s.literal(b"false") && self.boolean(false),
                b'n' => return s.literal(b"null") && self.types & NULL != 0 && self.member(&Member::Null),
                _ => {}
            }
        }
        self.compound(s, nesting)
    }

    #[inline(always)]
    fn boolean(&self, b: bool) -> bool {
        self.types & BOOLEAN != 0 && self.member(&Member::Bool(b))
    }

    /// [`Node::value`] for arrays, objects, `anyOf` and what is not JSON.
    #[inline(never)]
    fn compound(&self, s: &mut Scan<'_>, nesting: usize) -> bool {
        if !self.any_of.is_empty() {
            // Each branch reads the value from its start; with the
            // node's own keywords (as `anyOf`'s neighbours) it is read
            // once more.
            let start = s.i;
            let Some(end) = self.any_of.iter().find_map(|b| {
                s.i = start;
                b.value(s, nesting).then_some(s.i)
            }) else {
                return false;
            };
            if self.is_any() {
                s.i = end;
                return true;
            }
            s.i = start;
        }
        match s.peek() {
            b'n' => s.literal(b"null") && self.types & NULL != 0 && self.member(&Member::Null),
            b't' => s.literal(b"true") && self.boolean(true),
            b'f' => s.literal(b"false") && self.boolean(false),
            b'"' => self.string(s),
            b'-' | b'0'..=b'9' => self.number(s),
            b'[' => {
                if self.types & ARRAY == 0 || self.members.is_some() || nesting >= MAX_NESTING {
                    return false;
                }
                let items = self.items.as_deref().unwrap_or(&ANY_NODE);
                s.i += 1;
                s.ws();
                if s.peek() == b']' {
                    s.i += 1;
                    return true;
                }
                loop {
                    if !items.value(s, nesting + 1) {
                        return false;
                    }
                    match s.after_member(b']') {
                        Some(false) => {}
                        Some(true) => return true,
                        None => return false,
                    }
                }
            }
            b'{' => self.object(s, nesting),
            // Not JSON: let jsonschema's side report it.
            _ => false,
        }
    }

    /// A string (the cursor at its opening quote).
    #[inline(always)]
    fn string(&self, s: &mut Scan<'_>) -> bool {
        if self.types & STRING == 0 {
            return false;
        }
        let from = s.i + 1;
        let Some((raw, escaped)) = s.string() else { return false };
        match &self.members {
            None => true,
            Some(_) if escaped => self.escaped_member(raw),
            // Compared as a packed word pair with every short string
            // member at once (no branch per member).
            Some(_) => match s.b.get(from..from + 16) {
                Some(head) if raw.len() < 16 => {
                    let packed = pack(head, raw.len());
                    self.short_strings.iter().fold(false, |hit, p| hit | (*p == packed))
                }
                _ => {
                    let rest = &s.b[from..];
                    self.members
                        .iter()
                        .flatten()
                        .any(|m| matches!(m, Member::Str(_, p) if p.len() == raw.len() && p.starts(rest)))
                }
            },
        }
    }

    /// Is the string with escapes whose raw text is `raw` a member?
    #[inline(never)]
    fn escaped_member(&self, raw: &[u8]) -> bool {
        let Some(text) = decode_string(raw) else { return false };
        self.members.iter().flatten().any(|m| matches!(m, Member::Str(v, _) if *v == text))
    }

    /// A number (the cursor at its first byte).
    #[inline(always)]
    fn number(&self, s: &mut Scan<'_>) -> bool {
        let number = self.types & (INTEGER | FRACTION);
        if number == 0 || self.members.is_some() {
            return false;
        }
        let Some(fraction_or_exponent) = s.number() else { return false };
        // Parsed only when the schema tells integers from other numbers
        // and the text does not say.
        if number == INTEGER | FRACTION || !fraction_or_exponent {
            return number & INTEGER != 0;
        }
        number == if integral(&s.b[s.last..s.i]) { INTEGER } else { FRACTION }
    }

    fn object(&self, s: &mut Scan<'_>, nesting: usize) -> bool {
        if self.types & OBJECT == 0 || self.members.is_some() || nesting >= MAX_NESTING {
            return false;
        }
        s.i += 1;
        s.ws();
        if s.peek() == b'}' {
            s.i += 1;
            return self.required_all == 0;
        }
        // The required names seen, as bits of `required_bit`; members
        // usually come in the order of `properties` (a data frame's rows
        // do), so the property after the last one found is tried first,
        // on the raw bytes.
        let mut seen = 0u64;
        let mut next = 0;
        loop {
            let found = match self.properties.get(next) {
                // The name and the colon, as compact JSON has them.
                Some(p) if p.key.starts(&s.b[s.i..]) => {
                    s.i += p.key.len();
                    Some(next)
                }
                _ => {
                    if s.peek() != b'"' {
                        return false;
                    }
                    let Some((raw, escaped)) = s.string() else { return false };
                    if escaped {
                        // A name with escapes: jsonschema reads it.
                        return false;
                    }
                    let found = self.properties.iter().position(|p| p.name.as_bytes() == raw);
                    s.ws();
                    if s.peek() != b':' {
                        return false;
                    }
                    s.i += 1;
                    found
                }
            };
            let sub = match found {
                Some(i) if self.properties[i].declared || self.additional => {
                    next = i + 1;
                    seen |= self.properties[i].required_bit;
                    &self.properties[i].node
                }
                Some(_) => return false,
                None if self.additional => &ANY_NODE,
                None => return false,
            };
            s.ws();
            if !sub.value(s, nesting + 1) {
                return false;
            }
            match s.after_member(b'}') {
                Some(false) => {}
                Some(true) => return seen == self.required_all,
                None => return false,
            }
        }
    }

    fn member(&self, m: &Member) -> bool {
        self.members.as_ref().is_none_or(|ms| ms.contains(m))
    }
}

/// Any value (an absent `items`, a property without a schema).
static ANY_NODE: Node = Node::any();

/// The JSON text being read.
struct Scan<'a> {
    b: &'a [u8],
    i: usize,
    /// Where the last number read began.
    last: usize,
}

/// The bytes that end the plain run of a JSON string: `"`, `\` and the
/// control characters (not allowed unescaped).
static STRING_STOP: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 0x20 {
        t[c] = true;
        c += 1;
    }
    t[b'"' as usize] = true;
    t[b'\\' as usize] = true;
    t
};

impl<'a> Scan<'a> {
    /// The byte at the cursor (0 at the end).
    #[inline]
    fn peek(&self) -> u8 {
        self.b.get(self.i).copied().unwrap_or(0)
    }

    #[inline]
    fn ws(&mut self) {
        while matches!(self.peek(), b' ' | b'\n' | b'\r' | b'\t') {
            self.i += 1;
        }
    }

    /// After a member of an array or object: `Some(false)` after a comma
    /// (another member follows), `Some(true)` after `close`, else `None`.
    #[inline]
    fn after_member(&mut self, close: u8) -> Option<bool> {
        self.ws();
        let c = self.peek();
        self.i += 1;
        if c == b',' {
            self.ws();
            Some(false)
        } else {
            (c == close).then_some(true)
        }
    }

    /// `true`, `false` or `null` (compared as one word, not with a call
    /// of `memcmp`).
    #[inline(always)]
    fn literal<const N: usize>(&mut self, text: &[u8; N]) -> bool {
        let ok = self.b.get(self.i..self.i + N).is_some_and(|b| b == text);
        self.i += N;
        ok
    }

    /// A string (the cursor at its opening quote): its raw content, and
    /// whether it has escapes (all checked). `None` when it is not a valid
    /// JSON string.
    #[inline(always)]
    fn string(&mut self) -> Option<(&'a [u8], bool)> {
        let start = self.i + 1;
        let i = plain_run(self.b, start);
        if self.b.get(i) == Some(&b'"') {
            self.i = i + 1;
            return Some((&self.b[start..i], false));
        }
        self.string_rest(start, i)
    }

    /// The rest of [`Scan::string`] from `i`, the first byte that ends a
    /// plain run.
    #[inline(never)]
    fn string_rest(&mut self, start: usize, mut i: usize) -> Option<(&'a [u8], bool)> {
        let mut escaped = false;
        loop {
            match *self.b.get(i)? {
                b'"' => break,
                b'\\' => {
                    escaped = true;
                    match *self.b.get(i + 1)? {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => i += 2,
                        b'u' => {
                            let hex = self.b.get(i + 2..i + 6)?;
                            if !hex.iter().all(u8::is_ascii_hexdigit) {
                                return None;
                            }
                            i += 6;
                        }
                        _ => return None,
                    }
                }
                _ => return None,
            }
            i = plain_run(self.b, i);
        }
        self.i = i + 1;
        Some((&self.b[start..i], escaped))
    }

    /// A number, checked against JSON's grammar: whether it has a fraction
    /// or an exponent. Its text is `b[last..i]`.
    #[inline(always)]
    fn number(&mut self) -> Option<bool> {
        self.last = self.i;
        if self.peek() == b'-' {
            self.i += 1;
        }
        match self.peek() {
            b'0' => self.i += 1,
            b'1'..=b'9' => self.digits(),
            _ => return None,
        }
        let mut more = false;
        if self.peek() == b'.' {
            self.i += 1;
            if !self.peek().is_ascii_digit() {
                return None;
            }
            self.digits();
            more = true;
        }
        if matches!(self.peek(), b'e' | b'E') {
            self.i += 1;
            if matches!(self.peek(), b'+' | b'-') {
                self.i += 1;
            }
            if !self.peek().is_ascii_digit() {
                return None;
            }
            self.digits();
            more = true;
        }
        Some(more)
    }

    /// Skip ASCII digits: eight at a time (as bits of a word: digits are
    /// the bytes `b ^ b'0'` below 10) while eight bytes remain.
    #[inline(always)]
    fn digits(&mut self) {
        while let Some(chunk) = self.b.get(self.i..self.i + 8) {
            let v = word(chunk) ^ (ONES * u64::from(b'0'));
            // The high bit of each byte that is not a digit: `v & 0x7f`
            // plus 0x76 reaches 0x80 from 10 on (and never carries), and
            // bytes from 0x80 on have it already.
            let other = (((v & (ONES * 0x7f)) + ONES * 0x76) | v) & HIGHS;
            if other != 0 {
                self.i += (other.trailing_zeros() / 8) as usize;
                return;
            }
            self.i += 8;
        }
        while self.peek().is_ascii_digit() {
            self.i += 1;
        }
    }
}

/// Bytes `0x01` and `0x80` in each byte of a word (the SWAR tricks of
/// [`plain_run`] and [`Scan::digits`]).
const ONES: u64 = u64::from_ne_bytes([1; 8]);
const HIGHS: u64 = ONES * 0x80;

/// An eight-byte slice as a word (its first byte lowest).
#[inline]
fn word(b: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[..8]);
    u64::from_le_bytes(w)
}

/// The index of the first byte from `i` on that ends a plain run of a
/// string ([`STRING_STOP`]: `"`, `\` or a control character), or the
/// length of `b`. Eight bytes at a time as a word while eight remain (a
/// data frame's strings are short, so this beats setting up `memchr`,
/// which also could not look for control characters): the high bit of a
/// byte is set in `(x - n) & !x & 0x80` when the byte is below `n` or a
/// lower byte already was, so the lowest such bit is the first stop.
#[inline(always)]
fn plain_run(b: &[u8], mut i: usize) -> usize {
    const QUOTES: u64 = ONES * b'"' as u64;
    const BACKSLASHES: u64 = ONES * b'\\' as u64;
    let below = |x: u64, n: u64| x.wrapping_sub(ONES * n) & !x & HIGHS;
    while let Some(chunk) = b.get(i..i + 8) {
        let x = word(chunk);
        let stop = below(x ^ QUOTES, 1) | below(x ^ BACKSLASHES, 1) | below(x, 0x20);
        if stop != 0 {
            return i + (stop.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while b.get(i).is_some_and(|c| !STRING_STOP[*c as usize]) {
        i += 1;
    }
    i
}

/// Bytes compared with the start of a text (a member name with its
/// colon, an `enum` string): as two masked words when there are at most
/// 16 of them and the text has 16 bytes or more, which is faster than the
/// call of `memcmp` a slice comparison makes.
#[derive(Debug, PartialEq)]
struct Prefix {
    bytes: Vec<u8>,
    words: [u64; 2],
    masks: [u64; 2],
}

impl Prefix {
    fn new(bytes: Vec<u8>) -> Prefix {
        let (mut w, mut m) = ([0u8; 16], [0u8; 16]);
        for (i, c) in bytes.iter().take(16).enumerate() {
            w[i] = *c;
            m[i] = 0xff;
        }
        Prefix { words: [word(&w), word(&w[8..])], masks: [word(&m), word(&m[8..])], bytes }
    }

    fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Does `text` begin with these bytes?
    #[inline]
    fn starts(&self, text: &[u8]) -> bool {
        match text.get(..16) {
            Some(head) if self.bytes.len() <= 16 => {
                ((word(head) ^ self.words[0]) & self.masks[0]) | ((word(&head[8..]) ^ self.words[1]) & self.masks[1])
                    == 0
            }
            _ => text.starts_with(&self.bytes),
        }
    }
}

/// Does the number `text` (with a fraction or an exponent) have an
/// integral value (as `jsonschema` reads it: as an `f64`)?
#[inline(never)]
fn integral(text: &[u8]) -> bool {
    let text = std::str::from_utf8(text).unwrap_or("");
    let f: f64 = text.parse().unwrap_or(f64::NAN);
    f.is_finite() && f.fract() == 0.0
}

/// A string of fewer than 16 bytes as two words: its bytes from `head`
/// (at least 16), zeros after them, and its length in the last byte (so
/// that no two strings give the same words).
#[inline(always)]
fn pack(head: &[u8], len: usize) -> [u64; 2] {
    let mask = |n: usize| if n >= 8 { u64::MAX } else { (1u64 << (8 * n)) - 1 };
    [word(head) & mask(len), (word(&head[8..]) & mask(len.saturating_sub(8))) | ((len as u64) << 56)]
}

/// The text of a string with escapes (rare: compared with `enum` members).
fn decode_string(raw: &[u8]) -> Option<String> {
    let mut quoted = Vec::with_capacity(raw.len() + 2);
    quoted.push(b'"');
    quoted.extend_from_slice(raw);
    quoted.push(b'"');
    serde_json::from_slice(&quoted).ok()
}

fn types(v: &Value) -> Option<u8> {
    let one = |t: &Value| -> Option<u8> {
        Some(match t.as_str()? {
            "null" => NULL,
            "boolean" => BOOLEAN,
            "integer" => INTEGER,
            "number" => INTEGER | FRACTION,
            "string" => STRING,
            "array" => ARRAY,
            "object" => OBJECT,
            _ => return None,
        })
    };
    match v {
        Value::Array(ts) if !ts.is_empty() => ts.iter().try_fold(0, |acc, t| Some(acc | one(t)?)),
        Value::Array(_) => None,
        t => one(t),
    }
}

fn member(v: &Value) -> Option<Member> {
    match v {
        Value::Null => Some(Member::Null),
        Value::Bool(b) => Some(Member::Bool(*b)),
        Value::String(s) => Some(Member::Str(s.clone(), Prefix::new(s.as_bytes().to_vec()))),
        _ => None,
    }
}

#[cfg(test)]
mod speed;

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn fast(schema: &str) -> Option<Node> {
        Node::compile(&serde_json::from_str(schema).unwrap())
    }

    #[test]
    fn j4_6_the_type_helpers_schemas_have_a_fast_check() {
        let s = r#"{"type":"object","properties":{"a":{"type":["number","null"],"description":"A."},"e":{"type":["string","null"],"enum":["a","b",null]},"r":{"type":"array","items":{"type":"object","properties":{"i":{"type":"integer"},"s":{"type":"string"}},"required":["i"],"additionalProperties":false}}},"required":["a","e","r"],"additionalProperties":false}"#;
        let n = fast(s).expect("a fast check");
        assert!(n.accepts(r#"{"a":1.5,"e":null,"r":[{"i":1},{"i":2e0,"s":"x"}]}"#));
        assert!(n.accepts(r#" {"r":[],"e":"b","a":null} "#));
        for bad in [
            r#"{"a":"NA","e":null,"r":[]}"#,
            r#"{"a":1,"e":"c","r":[]}"#,
            r#"{"a":1,"e":"a","r":[{"i":1.5}]}"#,
            r#"{"a":1,"e":"a","r":[{"s":"x"}]}"#,
            r#"{"a":1,"e":"a","r":[],"z":0}"#,
            r#"{"a":1,"e":"a"}"#,
            r#"{"a":1,"e":"a","r":[]} x"#,
            r#"{"a":1,"e":"a","r":[}"#,
        ] {
            assert!(!n.accepts(bad), "{bad}");
        }
    }

    #[test]
    fn j4_6_any_of_spelling_of_nullable_types() {
        let s = r#"{"type":"object","properties":{"p":{"anyOf":[{"type":"number"},{"type":"null"}],"description":"P."},"e":{"anyOf":[{"type":"string","enum":["a","b"]},{"type":"null"}]},"o":{"anyOf":[{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"],"additionalProperties":false},{"type":"null"}]}},"required":["p","e","o"],"additionalProperties":false}"#;
        let n = fast(s).expect("a fast check");
        for good in [
            r#"{"p":1.5,"e":"a","o":{"x":1}}"#,
            r#"{"p":null,"e":null,"o":null}"#,
            r#"{ "o" : { "x" : 2 } , "e" : "b" , "p" : -0 }"#,
        ] {
            assert!(n.accepts(good), "{good}");
        }
        for bad in [
            r#"{"p":"NA","e":"a","o":null}"#,
            r#"{"p":1,"e":"c","o":null}"#,
            r#"{"p":1,"e":"a","o":{}}"#,
            r#"{"p":1,"e":"a","o":{"x":1.5}}"#,
            r#"{"p":1,"e":"a","o":[]}"#,
        ] {
            assert!(!n.accepts(bad), "{bad}");
        }
        // anyOf beside other keywords: both must hold.
        let n = fast(r#"{"type":"number","anyOf":[{"type":"integer"},{"type":"string"}]}"#).unwrap();
        assert!(n.accepts("3") && !n.accepts("3.5") && !n.accepts(r#""s""#));
    }

    #[test]
    fn j4_6_the_scanner_reads_only_strict_json() {
        let n = fast(r#"{"type":"array","items":{"type":["number","string","null","boolean"]}}"#).unwrap();
        assert!(n.accepts(r#"[1,-0,0.5,1e3,1E+3,-2.5e-3,"a\"b\u00e9\n",null,true,false]"#));
        for bad in [
            "[01]",
            "[1.]",
            "[.5]",
            "[-]",
            "[1e]",
            "[+1]",
            "[1,]",
            "[,1]",
            "[nul]",
            "[truex]",
            "[\"a]",
            "[\"\\x\"]",
            "[\"\\u12g4\"]",
            "[\"a\tb\"]",
            "[1] [2]",
            "[1",
            "",
            " ",
            "[NaN]",
        ] {
            assert!(!n.accepts(bad), "{bad}");
        }
        let o = fast(r#"{"type":"object","properties":{"a":{"type":"string","enum":["x\"y","é"]}}}"#).unwrap();
        assert!(o.accepts(r#"{"a":"x\"y"}"#) && o.accepts(r#"{"a":"\u00e9"}"#) && o.accepts(r#"{"a":"é"}"#));
        for bad in [r#"{"a":"x"}"#, r#"{"a" "x"}"#, r#"{"a":"é",}"#, r#"{a:"é"}"#, r#"{"a":"é""#] {
            assert!(!o.accepts(bad), "{bad}");
        }
        // Strings and numbers of every length around the eight bytes the
        // scanner reads at once, with the byte that ends a plain run (or
        // breaks the grammar) at every place.
        let strings = fast(r#"{"type":"array","items":{"type":"string"}}"#).unwrap();
        let numbers = fast(r#"{"type":"array","items":{"type":"number"}}"#).unwrap();
        let integers = fast(r#"{"type":"array","items":{"type":"integer"}}"#).unwrap();
        for n in 0..40 {
            let plain = "é".repeat(n / 2) + &"a".repeat(n % 2);
            assert!(strings.accepts(&format!(r#"["{plain}"]"#)), "{plain}");
            for at in (0..=plain.len()).filter(|at| plain.is_char_boundary(*at)) {
                let (a, b) = plain.split_at(at);
                for good in [r#"\""#, r"\\", r"\n", r"\u001f", r"\u00E9", "\u{7f}", "😀"] {
                    let json = format!(r#"["{a}{good}{b}","{a}"]"#);
                    assert!(strings.accepts(&json), "{json}");
                }
                for bad in ["\"", "\\", "\u{1}", "\n", "\u{1f}", r"\x", r"\u00g0", r"\u00"] {
                    let json = format!(r#"["{a}{bad}{b}"]"#);
                    assert!(!strings.accepts(&json), "{json}");
                }
            }
            if n == 0 {
                continue;
            }
            let digits: String = (0..n).map(|i| char::from(b'1' + (i % 9) as u8)).collect();
            for good in [
                digits.clone(),
                format!("-{digits}"),
                format!("{digits}.{digits}"),
                format!("{digits}e{digits}"),
                format!("-0.{digits}E-{n}"),
            ] {
                assert!(numbers.accepts(&format!("[{good},{good}]")), "{good}");
            }
            assert!(integers.accepts(&format!("[{digits},-{digits}]")), "{digits}");
            // (Beyond 2^53 every f64 is integral, for jsonschema too.)
            assert_eq!(integers.accepts(&format!("[{digits}.5]")), n > 16, "{digits}.5");
            for bad in [format!("{digits}."), format!("{digits}e"), format!("{digits}E+"), format!("0{digits}")] {
                assert!(!numbers.accepts(&format!("[{bad}]")), "{bad}");
            }
            for at in 0..=digits.len() {
                let (a, b) = digits.split_at(at);
                for bad in ["a", "+", "é", "\u{0}", "..", "ee", ",,", "-"] {
                    let json = format!("[{a}{bad}{b}]");
                    assert!(at == 0 && bad == "-" || !numbers.accepts(&json), "{json}");
                }
            }
        }
        for (good, integral) in [
            ("-0", true),
            ("-0.0", true),
            ("1e308", true),
            ("1E-5", false),
            ("1.5E+3", true),
            ("0.000001", false),
            ("123456789012345678901234567890", true),
        ] {
            assert!(numbers.accepts(&format!("[{good}]")), "{good}");
            assert_eq!(integers.accepts(&format!("[{good}]")), integral, "{good}");
        }
        // Member names and enum strings longer than the 16 bytes compared
        // at once, and with escapes: a name with escapes is found when it
        // is the property expected next (its JSON text is compared), else
        // left to jsonschema.
        let q = fast(r#"{"type":"object","properties":{"x\"q":{"type":"integer"},"long name, longer than 16":{"type":"string","enum":["a value longer than 16 bytes","\"","é"]}},"additionalProperties":false}"#).unwrap();
        for good in [
            r#"{"x\"q":1,"long name, longer than 16":"a value longer than 16 bytes"}"#,
            r#"{ "x\"q":1 , "long name, longer than 16" : "\"" }"#,
            r#"{"long name, longer than 16":"\u00e9"}"#,
            r#"{"long name, longer than 16":"é"}"#,
        ] {
            assert!(q.accepts(good), "{good}");
        }
        for bad in [
            r#"{"x\"q":1,"long name, longer than 16":"a value longer than 16 byte"}"#,
            r#"{"x\"q":1,"long name, longer than 16":"a value longer than 16 bytes "}"#,
            r#"{"x\"q":1,"long name, longer than 16":"a"}"#,
            r#"{"x\"q":1,"long name, longer than 1":"a"}"#,
            r#"{"x\"q":1.5}"#,
            // (Valid, but left to jsonschema.)
            r#"{"x\"q" :1}"#,
            r#"{"long name, longer than 16":"\"","x\"q":1}"#,
        ] {
            assert!(!q.accepts(bad), "{bad}");
        }
        // Nesting deeper than the scanner reads is left to jsonschema.
        let deep = format!("{}{}", "[".repeat(MAX_NESTING + 1), "]".repeat(MAX_NESTING + 1));
        assert!(!fast("{}").unwrap().accepts(&deep));
        let shallow = format!("{}{}", "[".repeat(MAX_NESTING), "]".repeat(MAX_NESTING));
        assert!(fast("{}").unwrap().accepts(&shallow));
    }

    #[test]
    fn j4_6_other_keywords_have_no_fast_check() {
        for s in [
            r#"{"type":"object","minProperties":1}"#,
            r##"{"properties":{"a":{"$ref":"#/$defs/x"}}}"##,
            r#"{"enum":[1,2]}"#,
            r#"{"items":[{"type":"string"}]}"#,
            r#"{"additionalProperties":{"type":"string"}}"#,
            r#"{"$schema":"http://json-schema.org/draft-04/schema#","type":"integer"}"#,
            r#"{"type":"decimal"}"#,
            r#"{"oneOf":[{"type":"string"},{"type":"null"}]}"#,
            r#"{"anyOf":[]}"#,
            r#"{"anyOf":[{"type":"string"},{"minLength":1}]}"#,
            "false",
        ] {
            assert!(fast(s).is_none(), "{s}");
        }
    }

    fn scalar_type_any() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec!["null", "boolean", "integer", "number", "string", "array", "object"])
    }

    /// A property name: one letter of `short`, or now and then a name
    /// around the 16 bytes the scanner compares at once (with its quotes
    /// and colon).
    fn name(short: &'static str) -> impl Strategy<Value = String> {
        prop_oneof![
            6 => short,
            1 => prop::sample::select(vec!["abcdefghijklm", "abcdefghijklmn", "é123456789abcdef"]).prop_map(String::from),
        ]
    }

    /// A string `enum` member: short, long, or with escapes.
    fn string_member() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => "[ab]",
            1 => prop::sample::select(vec!["abcdefghijklmnop", "abcdefghijklmnopq", "a\"b", "é", "a\nb"]).prop_map(String::from),
        ]
    }

    /// A schema of the subset, as JSON.
    fn schema() -> impl Strategy<Value = Value> {
        let scalar_type = prop::sample::select(vec!["null", "boolean", "integer", "number", "string"]);
        let leaf = prop_oneof![
            Just(serde_json::json!({})),
            scalar_type.clone().prop_map(|t| serde_json::json!({ "type": t })),
            (scalar_type.clone(), scalar_type).prop_map(|(a, b)| serde_json::json!({ "type": [a, b] })),
            prop::collection::vec(
                prop_oneof![Just(Value::Null), Just(Value::Bool(true)), string_member().prop_map(Value::from)],
                1..3
            )
            .prop_map(|m| serde_json::json!({ "enum": m })),
        ];
        leaf.prop_recursive(3, 16, 3, |inner| {
            prop_oneof![
                inner.clone().prop_map(|i| serde_json::json!({ "type": "array", "items": i })),
                // anyOf, as a nullable type is written (a schema and
                // {"type":"null"}), and in general, alone or beside a type.
                inner.clone().prop_map(|i| serde_json::json!({ "anyOf": [i, { "type": "null" }] })),
                (prop::collection::vec(inner.clone(), 1..3), prop::option::of(scalar_type_any())).prop_map(
                    |(branches, t)| match t {
                        Some(t) => serde_json::json!({ "anyOf": branches, "type": t }),
                        None => serde_json::json!({ "anyOf": branches }),
                    }
                ),
                (
                    prop::collection::btree_map(name("[abc]"), inner, 0..3),
                    prop::collection::vec(name("[abcd]"), 0..3),
                    any::<bool>()
                )
                    .prop_map(|(props, required, additional)| {
                        serde_json::json!({
                            "type": "object", "properties": props, "required": required,
                            "additionalProperties": additional
                        })
                    }),
            ]
        })
    }

    /// Values near what such schemas accept.
    fn instance() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            prop::sample::select(vec![
                "1",
                "-2",
                "1.5",
                "2.0",
                "1e2",
                "NA",
                "-0",
                "0.5e1",
                "1E-2",
                "1e400",
                "-1e400",
                "123456789012345678901234567890",
                "1.0000000000000002",
                "9007199254740993.0",
                "1e308",
                "1E-5",
                "-0.0",
                "1.5E+3",
                "123456789",
                "-1234567890123.5",
                "0.000001"
            ])
            .prop_map(|n| { serde_json::from_str(n).unwrap_or_else(|_| Value::from(n)) }),
            "[abNA]{1,2}".prop_map(Value::from),
            string_member().prop_map(Value::from),
            // Any length, with escapes (quotes, backslashes, newlines)
            // and multi-byte characters.
            r#"[a"\\\né😀 b]{0,40}"#.prop_map(Value::from),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                prop::collection::btree_map(name("[abcd]"), inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    /// The generated pairs exercise both answers (so the comparison below
    /// cannot pass by rejecting everything).
    #[test]
    fn j4_6_generated_values_are_both_valid_and_invalid() {
        use proptest::strategy::ValueTree;
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        let (mut valid, mut n) = (0, 0);
        while n < 1000 {
            let s = schema().new_tree(&mut runner).unwrap().current();
            let v = instance().new_tree(&mut runner).unwrap().current();
            if let Ok(validator) = jsonschema::options().build(&s) {
                n += 1;
                valid += usize::from(validator.is_valid(&v));
            }
        }
        assert!((100..900).contains(&valid), "{valid} of {n} valid");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        /// The fast check agrees with `jsonschema` on every generated pair
        /// (it must never accept what `jsonschema` rejects; here it is
        /// exact, so it never falls back needlessly either).
        #[test]
        fn j4_6_the_fast_check_agrees_with_jsonschema(s in schema(), v in instance()) {
            let node = Node::compile(&s).expect("the subset compiles");
            // (A schema jsonschema refuses, such as one with a type named
            // twice, is never checked at all.)
            let validator = jsonschema::options().should_validate_formats(false).build(&s);
            prop_assume!(validator.is_ok());
            let validator = validator.unwrap();
            let valid = validator.is_valid(&v);
            let text = v.to_string();
            prop_assert_eq!(node.accepts(&text), valid, "schema {} value {}", s, text);
            // The same with whitespace between the tokens.
            let pretty = serde_json::to_string_pretty(&v).unwrap();
            prop_assert_eq!(node.accepts(&pretty), valid, "schema {} value {}", s, pretty);
        }
    }
}
