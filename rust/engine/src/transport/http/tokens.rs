//! Who a request is (RULES H6): the bearer tokens the endpoint accepts, each
//! with a name, from the single token ([`HttpOptions::token`], named
//! `default`) and a tokens file ([`HttpOptions::tokens_file`]); and the
//! optional per-token limit of tool calls per minute.
//!
//! The tokens file has one token per line: a name, the token (or
//! `sha256:` and the hex SHA-256 of the token), and optionally a number of
//! tool calls per minute, separated by blanks; blank lines and lines
//! starting with `#` are skipped. It must be readable by its owner only, or
//! also by the server's own group (see [`check_access`]). It is read again on
//! SIGHUP and when it changes (its size, modification or change time or inode
//! differ, checked on every request), so removing a line takes effect at the
//! next request, without a restart. A bad line read again is skipped, its
//! name keeping the token it had (the other lines take effect); a file that
//! cannot be used any more (missing, unreadable, open to others, no token
//! left) refuses every request (`503`, and `/health` says so) until it is
//! fixed.
//!
//! Tokens are compared in constant time, with every accepted token compared
//! (no early exit on a match).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Instant, SystemTime};

use hyper::header::HeaderMap;
use subtle::ConstantTimeEq;

use super::access::stderr_line;
use super::options::{HttpError, HttpOptions};

/// Shortest token accepted (RULES H6.2).
pub const MIN_TOKEN_LEN: usize = 16;

/// The name of the single token ([`HttpOptions::token`]).
pub const DEFAULT_NAME: &str = "default";

/// A token that may use the endpoint.
#[derive(Debug)]
pub(super) struct Token {
    pub(super) name: Arc<str>,
    secret: Secret,
    /// Tool calls per minute, if limited.
    pub(super) per_minute: Option<u32>,
}

#[derive(Debug)]
enum Secret {
    Plain(Vec<u8>),
    Sha256([u8; 32]),
}

/// The outcome of checking a request's `Authorization` header.
pub(super) enum Auth {
    /// No token is configured: the endpoint is open.
    Open,
    /// A token that is accepted.
    Known(Arc<Token>),
    /// No bearer token in the request.
    Missing,
    /// A bearer token that is not accepted.
    Wrong,
    /// The tokens file cannot be used (why).
    Unavailable(String),
}

/// The accepted tokens.
pub(super) struct Tokens {
    single: Option<Arc<Token>>,
    file: Option<TokensFile>,
}

struct TokensFile {
    /// There is a single token too: no line may take its name.
    with_single: bool,
    path: PathBuf,
    state: Mutex<FileState>,
}

struct FileState {
    stamp: Option<Stamp>,
    tokens: Result<Arc<Vec<Arc<Token>>>, String>,
}

/// What tells that the file changed.
#[derive(PartialEq, Eq, Clone, Copy, Debug)]
struct Stamp {
    len: u64,
    modified: Option<SystemTime>,
    #[cfg(unix)]
    ino: u64,
    #[cfg(unix)]
    ctime: (i64, i64),
}

fn stamp(path: &Path) -> std::io::Result<Stamp> {
    let m = std::fs::metadata(path)?;
    #[cfg(unix)]
    use std::os::unix::fs::MetadataExt;
    Ok(Stamp {
        len: m.len(),
        modified: m.modified().ok(),
        #[cfg(unix)]
        ino: m.ino(),
        #[cfg(unix)]
        ctime: (m.ctime(), m.ctime_nsec()),
    })
}

/// Check a token's length (RULES H6.2); `what` names where it came from.
pub fn check_token(token: &str, what: &str) -> Result<(), String> {
    if token.len() < MIN_TOKEN_LEN {
        return Err(format!(
            "{what} is {} characters long: tokens must have at least {MIN_TOKEN_LEN} (make one with \
             `openssl rand -hex 32`)",
            token.len()
        ));
    }
    if !token.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(format!("{what} must be visible ASCII characters only"));
    }
    let lower = token.to_ascii_lowercase();
    if PLACEHOLDERS.iter().any(|p| lower.contains(p)) {
        return Err(format!("{what} looks like a placeholder, not a secret: make one with `openssl rand -hex 32`"));
    }
    if estimated_bits(token) < MIN_TOKEN_BITS {
        return Err(format!(
            "{what} is too easy to guess (it repeats a few characters): make one with `openssl rand -hex 32`"
        ));
    }
    Ok(())
}

/// Words of the placeholders in examples and templates (the shipped
/// `inst/deploy/mcplite.env` among them), lower case: a token that holds one
/// was never replaced (RULES H6.2).
const PLACEHOLDERS: [&str; 9] = [
    "replace-me",
    "replace_me",
    "replaceme",
    "change-me",
    "change_me",
    "changeme",
    "placeholder",
    "your-token",
    "<token>",
];

/// The least a token's [`estimated_bits`] may be (RULES H6.2): 16 random
/// hexadecimal digits give 64.
const MIN_TOKEN_BITS: f64 = 60.0;

/// A token's length times the Shannon entropy of its own characters, in
/// bits: an upper bound on its randomness that is low for repetitions
/// (`aaaa…`, `abab…`) whatever their length.
fn estimated_bits(token: &str) -> f64 {
    let mut counts = [0usize; 256];
    for b in token.bytes() {
        counts[b as usize] += 1;
    }
    let n = token.len() as f64;
    let per_char: f64 = counts
        .iter()
        .filter(|c| **c > 0)
        .map(|c| {
            let p = *c as f64 / n;
            -p * p.log2()
        })
        .sum();
    per_char * n
}

fn sha256(data: &[u8]) -> [u8; 32] {
    let d = ring::digest::digest(&ring::digest::SHA256, data);
    let mut out = [0u8; 32];
    out.copy_from_slice(d.as_ref());
    out
}

fn valid_name(n: &str) -> bool {
    !n.is_empty() && n.len() <= 64 && n.bytes().all(|b| b.is_ascii_alphanumeric() || b"_.@-".contains(&b))
}

/// One read of a tokens file: the tokens of its good lines, and what is
/// wrong with each other line (the message, and the name it starts with when
/// that is a valid name).
struct FileRead {
    tokens: Vec<Arc<Token>>,
    bad: Vec<(String, Option<String>)>,
}

/// May the server use a file with these permissions (RULES H6.1)? No
/// permission for others; for the group, reading only, and only when the
/// group is the server's own: its effective group, named as its user (the
/// group `useradd` makes for a system user, or a user's private group), with
/// the file owned by that user or by root.
#[cfg(unix)]
fn check_access(meta: &std::fs::Metadata, shown: &std::path::Display<'_>) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let mode = meta.mode() & 0o777;
    let fix = "make it readable by its owner only (chmod 600), or owned by root and readable by the group of \
               the server's user only (chown root:<that group>; chmod 640)";
    if mode & 0o007 != 0 {
        return Err(format!("the tokens file {shown} is accessible to others (mode {mode:03o}): {fix}"));
    }
    if mode & 0o030 != 0 {
        return Err(format!("the tokens file {shown} is writable or executable by its group (mode {mode:03o}): {fix}"));
    }
    if mode & 0o040 != 0 {
        // SAFETY: geteuid and getegid cannot fail.
        let (euid, egid) = unsafe { (libc::geteuid(), libc::getegid()) };
        let owner_ok = meta.uid() == euid || meta.uid() == 0;
        let own = meta.gid() == egid && egid != 0 && owner_ok && group_named_as_user(egid, euid);
        if !own {
            return Err(format!(
                "the tokens file {shown} is readable by its group (mode {mode:03o}, group id {}), which is not the \
                 server's own group (the group of the user it runs as, named as that user): {fix}",
                meta.gid()
            ));
        }
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_access(_: &std::fs::Metadata, _: &std::path::Display<'_>) -> Result<(), String> {
    Ok(())
}

/// Is group `gid` named as user `uid` (a system user's group, a private
/// group)?
#[cfg(unix)]
fn group_named_as_user(gid: libc::gid_t, uid: libc::uid_t) -> bool {
    use std::ffi::CStr;
    let mut buf = vec![0 as libc::c_char; 16 << 10];
    // SAFETY: the _r variants write into the buffers given, whose sizes are
    // passed; the names are read only while `buf`/`buf2` live.
    unsafe {
        let mut pw: libc::passwd = std::mem::zeroed();
        let mut pw_out: *mut libc::passwd = std::ptr::null_mut();
        if libc::getpwuid_r(uid, &mut pw, buf.as_mut_ptr(), buf.len(), &mut pw_out) != 0 || pw_out.is_null() {
            return false;
        }
        let user = CStr::from_ptr(pw.pw_name).to_owned();
        let mut buf2 = vec![0 as libc::c_char; 16 << 10];
        let mut gr: libc::group = std::mem::zeroed();
        let mut gr_out: *mut libc::group = std::ptr::null_mut();
        if libc::getgrgid_r(gid, &mut gr, buf2.as_mut_ptr(), buf2.len(), &mut gr_out) != 0 || gr_out.is_null() {
            return false;
        }
        CStr::from_ptr(gr.gr_name) == user.as_c_str()
    }
}

/// Read and check a tokens file (RULES H6.1): an error when the file as a
/// whole cannot be used (missing, unreadable, open to others, not a regular
/// file); otherwise its good lines' tokens and its bad lines. Messages name
/// the file and the line, never a token.
fn read_file(path: &Path) -> Result<FileRead, String> {
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read the tokens file {shown}: {e}"))?;
    check_access(&meta, &shown)?;
    if !meta.is_file() {
        return Err(format!("the tokens file {shown} is not a regular file"));
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read the tokens file {shown}: {e}"))?;
    let mut out: Vec<Arc<Token>> = Vec::new();
    let mut bad = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let at = format!("the tokens file {shown}, line {}", i + 1);
        let name = line.split_whitespace().next().filter(|n| valid_name(n)).map(String::from);
        match parse_line(line, &at, &out) {
            Ok(t) => out.push(Arc::new(t)),
            Err(e) => bad.push((e, name)),
        }
    }
    Ok(FileRead { tokens: out, bad })
}

/// One line of a tokens file (`at` says where it is, for errors); `before`
/// are the tokens of the lines above it.
fn parse_line(line: &str, at: &str, before: &[Arc<Token>]) -> Result<Token, String> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    if fields.len() < 2 || fields.len() > 3 {
        return Err(format!("{at}: expected a name, a token and optionally calls per minute"));
    }
    let name = fields[0];
    if !valid_name(name) {
        return Err(format!("{at}: the name must be 1 to 64 ASCII letters, digits, \"_\", \".\", \"@\" or \"-\""));
    }
    if before.iter().any(|t| &*t.name == name) {
        return Err(format!("{at}: the name \"{name}\" is used twice"));
    }
    let secret = match fields[1].strip_prefix("sha256:") {
        Some(hex) => {
            let bytes = decode_hex(hex)
                .filter(|b| b.len() == 32)
                .ok_or_else(|| format!("{at}: a token hash is \"sha256:\" and 64 hexadecimal digits"))?;
            let mut h = [0u8; 32];
            h.copy_from_slice(&bytes);
            Secret::Sha256(h)
        }
        None => {
            check_token(fields[1], &format!("the token of \"{name}\" ({at})"))?;
            Secret::Plain(fields[1].as_bytes().to_vec())
        }
    };
    let per_minute = match fields.get(2) {
        None => None,
        Some(n) => Some(
            n.parse::<u32>()
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| format!("{at}: calls per minute must be a whole number from 1 up, not \"{n}\""))?,
        ),
    };
    Ok(Token { name: name.into(), secret, per_minute })
}

/// The tokens of a file read at start: every line must be good.
fn read_at_start(path: &Path) -> Result<Vec<Arc<Token>>, String> {
    let read = read_file(path)?;
    if let Some((e, _)) = read.bad.into_iter().next() {
        return Err(e);
    }
    if read.tokens.is_empty() {
        return Err(format!("the tokens file {} holds no token", path.display()));
    }
    Ok(read.tokens)
}

/// The tokens after the file was read again (RULES H6.1): its good lines'
/// tokens; a bad line is skipped, and the token its name had in `last` (the
/// last good set) is kept, so that a typo refuses nobody. Each bad line is
/// said on stderr (when `say`). An error when no token is left.
fn after_reload(
    path: &Path,
    read: FileRead,
    last: Option<&[Arc<Token>]>,
    say: bool,
) -> Result<Vec<Arc<Token>>, String> {
    let mut tokens = read.tokens;
    for (e, name) in read.bad {
        let kept = name.as_deref().and_then(|n| {
            if tokens.iter().any(|t| &*t.name == n) {
                return None;
            }
            last?.iter().find(|t| &*t.name == n).cloned()
        });
        let what = match (&kept, &name) {
            (Some(_), Some(n)) => format!("the line is skipped and \"{n}\" keeps its token from the last good read"),
            _ => "the line is skipped".to_string(),
        };
        if say {
            stderr_line(
                format!("mcplite: {e}; {what} until it is fixed (the file's other lines are in use)").as_bytes(),
            );
        }
        tokens.extend(kept);
    }
    if tokens.is_empty() {
        return Err(format!("the tokens file {} holds no usable token", path.display()));
    }
    Ok(tokens)
}

fn decode_hex(s: &str) -> Option<Vec<u8>> {
    if s.len() % 2 != 0 {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok()).collect()
}

impl Tokens {
    /// The tokens of `opts`; an error says why they cannot be used (a short
    /// token, a tokens file that is missing, open to others or malformed).
    pub(super) fn new(opts: &HttpOptions) -> Result<Tokens, HttpError> {
        let single = match &opts.token {
            Some(t) => {
                check_token(t, "the token").map_err(HttpError::Config)?;
                Some(Arc::new(Token {
                    name: DEFAULT_NAME.into(),
                    secret: Secret::Plain(t.as_bytes().to_vec()),
                    per_minute: None,
                }))
            }
            None => None,
        };
        let file = match &opts.tokens_file {
            Some(path) => {
                let st = stamp(path).ok();
                let tokens = read_at_start(path).map_err(HttpError::Config)?;
                if single.is_some() && tokens.iter().any(|t| &*t.name == DEFAULT_NAME) {
                    return Err(HttpError::Config(format!(
                        "the tokens file {} names a token \"{DEFAULT_NAME}\", the name of the single token",
                        path.display()
                    )));
                }
                Some(TokensFile {
                    with_single: single.is_some(),
                    path: path.clone(),
                    state: Mutex::new(FileState { stamp: st, tokens: Ok(Arc::new(tokens)) }),
                })
            }
            None => None,
        };
        Ok(Tokens { single, file })
    }

    /// Whether any token is configured.
    pub(super) fn any(&self) -> bool {
        self.single.is_some() || self.file.is_some()
    }

    /// Who sent a request with headers `h`.
    pub(super) fn check(&self, h: &HeaderMap) -> Auth {
        if !self.any() {
            return Auth::Open;
        }
        let given = h.get("authorization").map(|v| v.as_bytes()).unwrap_or_default();
        let given = match given.get(..7) {
            Some(p) if p.eq_ignore_ascii_case(b"bearer ") => given[7..].trim_ascii(),
            _ => return Auth::Missing,
        };
        if given.is_empty() {
            return Auth::Missing;
        }
        let from_file = match &self.file {
            Some(f) => match f.current() {
                Ok(t) => Some(t),
                Err(e) => return Auth::Unavailable(e),
            },
            None => None,
        };
        let hash = sha256(given);
        let mut found: Option<Arc<Token>> = None;
        for t in self.single.iter().chain(from_file.iter().flat_map(|v| v.iter())) {
            let eq = match &t.secret {
                Secret::Plain(p) => given.ct_eq(p.as_slice()),
                Secret::Sha256(d) => hash.ct_eq(d),
            };
            if bool::from(eq) && found.is_none() {
                found = Some(t.clone());
            }
        }
        found.map_or(Auth::Wrong, Auth::Known)
    }
}

impl Tokens {
    /// Why the endpoint refuses every request now (the tokens file cannot be
    /// used), if it does: `/health` says so (RULES H1.3, H6.1).
    pub(super) fn unusable(&self) -> Option<String> {
        self.file.as_ref().and_then(|f| f.current().err())
    }

    /// How many tokens are accepted now (the start-up line says it).
    pub(super) fn count(&self) -> usize {
        let file = self.file.as_ref().and_then(|f| f.current().ok()).map_or(0, |t| t.len());
        usize::from(self.single.is_some()) + file
    }

    /// Read the tokens file again now (SIGHUP), whether or not it changed.
    pub(super) fn reload(&self) {
        if let Some(f) = &self.file {
            f.state.lock().unwrap_or_else(PoisonError::into_inner).stamp = None;
            let _ = f.current();
        }
    }
}

impl TokensFile {
    /// The tokens now: read again when the file changed.
    fn current(&self) -> Result<Arc<Vec<Arc<Token>>>, String> {
        let now = stamp(&self.path).ok();
        let mut st = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if now.is_none() || st.stamp.is_none() || now != st.stamp {
            let before = st.tokens.as_ref().err().cloned();
            let last = st.tokens.as_ref().ok().cloned();
            st.tokens = read_file(&self.path)
                .and_then(|r| after_reload(&self.path, r, last.as_deref().map(Vec::as_slice), true))
                .map(|mut tokens| {
                    // RULES H6.1: the single token's name stays its own (a
                    // line taking it would share its sessions, limits and
                    // tasks, V4.1); refused at start, skipped on a reload.
                    if self.with_single && tokens.iter().any(|t| &*t.name == DEFAULT_NAME) {
                        tokens.retain(|t| &*t.name != DEFAULT_NAME);
                        stderr_line(
                            format!(
                                "mcplite: the tokens file {} names a token \"{DEFAULT_NAME}\", the name of the single \
                                 token: that line is skipped",
                                self.path.display()
                            )
                            .as_bytes(),
                        );
                    }
                    tokens
                })
                .map(Arc::new);
            st.stamp = now;
            match &st.tokens {
                Ok(t) => stderr_line(
                    format!("mcplite: the tokens file {} was read again: {} token(s)", self.path.display(), t.len())
                        .as_bytes(),
                ),
                Err(e) if before.as_deref() != Some(e) => {
                    stderr_line(format!("mcplite: {e}; every request is refused until it is fixed").as_bytes())
                }
                Err(_) => {}
            }
        }
        st.tokens.clone()
    }
}

/// Per-token limits of tool calls per minute (RULES H6.4): a token bucket
/// per name holding up to the limit, refilled at the limit per minute.
#[derive(Default)]
pub(super) struct RateLimits {
    buckets: Mutex<HashMap<Arc<str>, (f64, Instant)>>,
}

impl RateLimits {
    /// Take one call for `token`; `Err(seconds)` when it is over its limit,
    /// with the whole seconds until a call is allowed again.
    pub(super) fn take(&self, name: &Arc<str>, per_minute: Option<u32>) -> Result<(), u64> {
        let Some(limit) = per_minute else { return Ok(()) };
        let cap = f64::from(limit);
        let rate = cap / 60.0;
        let now = Instant::now();
        let mut b = self.buckets.lock().unwrap_or_else(PoisonError::into_inner);
        let (level, at) = b.entry(name.clone()).or_insert((cap, now));
        *level = (*level + now.duration_since(*at).as_secs_f64() * rate).min(cap);
        *at = now;
        if *level >= 1.0 {
            *level -= 1.0;
            Ok(())
        } else {
            Err(((1.0 - *level) / rate).ceil().max(1.0) as u64)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_and_lengths() {
        assert_eq!(decode_hex("00ff"), Some(vec![0, 255]));
        assert_eq!(decode_hex("0g"), None);
        assert!(check_token("0123456789abcdef", "t").is_ok());
        assert!(check_token("short", "t").unwrap_err().contains("at least 16"));
        // The shipped template's placeholder, and repetitions of any length.
        let e = check_token("replace-me-with-the-output-of-openssl-rand-hex-32", "the token").unwrap_err();
        assert!(e.contains("looks like a placeholder"), "{e}");
        assert!(!e.contains("replace-me"), "the token is never shown: {e}");
        for weak in ["aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "abababababababababababababababab", "aaaaaaaaaaaaaaab"] {
            assert!(check_token(weak, "t").unwrap_err().contains("too easy to guess"), "{weak}");
        }
        assert!(check_token("3f9a1c0e7b2d4a6f8e1c3b5d7f9a0c2e4b6d8f0a1c3e5b7d9f1a3c5e7b9d1f3a", "t").is_ok());
    }

    fn write(dir: &Path, text: &str) -> PathBuf {
        #[cfg(unix)]
        use std::os::unix::fs::PermissionsExt;
        let f = dir.join("tokens");
        std::fs::write(&f, text).unwrap();
        #[cfg(unix)]
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
        f
    }

    fn names(t: &[Arc<Token>]) -> Vec<String> {
        t.iter().map(|t| t.name.to_string()).collect()
    }

    /// Review of issue 46: a line taking the single token's name, added
    /// while serving, would share its tasks (RULES V4.1): it is skipped.
    #[test]
    fn h6_1_a_reloaded_line_named_default_beside_the_single_token_is_skipped() {
        let dir = std::env::temp_dir().join(format!("mcplite-tokens-default-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let single = "5d7f9a0c2e4b6d8f0a3f9a1c0e7b2d4a";
        let eve = "e7b2d4a6f8e1c3b5d7f9a0c2e4b6d8aa";
        let f = write(&dir, "alice 3f9a1c0e7b2d4a6f8e1c3b5d7f9a0c2e\n");
        let opts = HttpOptions { token: Some(single.into()), tokens_file: Some(f.clone()), ..HttpOptions::default() };
        let tokens = Tokens::new(&opts).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        write(&dir, &format!("alice 3f9a1c0e7b2d4a6f8e1c3b5d7f9a0c2e\ndefault {eve}\n"));
        tokens.reload();
        let mut h = HeaderMap::new();
        h.insert("authorization", format!("Bearer {eve}").parse().unwrap());
        assert!(matches!(tokens.check(&h), Auth::Wrong), "eve's line is skipped");
        h.insert("authorization", format!("Bearer {single}").parse().unwrap());
        assert!(matches!(tokens.check(&h), Auth::Known(t) if &*t.name == DEFAULT_NAME));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn h6_1_a_bad_line_read_again_keeps_that_names_last_token_and_the_rest_applies() {
        let dir = std::env::temp_dir().join(format!("mcplite-tokens-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let a = "3f9a1c0e7b2d4a6f8e1c3b5d7f9a0c2e";
        let b = "9b2d4a6f8e1c3b5d7f9a0c2e4b6d8f0a";
        let c = "c0e7b2d4a6f8e1c3b5d7f9a0c2e4b6d8";
        let f = write(&dir, &format!("alice {a}\nbob {b}\ncarol {c}\n"));
        let last = read_at_start(&f).unwrap();
        assert_eq!(names(&last), ["alice", "bob", "carol"]);
        // bob's line broken, carol's removed, dave added.
        let f = write(&dir, &format!("alice {a}\nbob short\ndave {c}x\n"));
        let e = read_at_start(&f).unwrap_err();
        assert!(
            e.ends_with(
                "line 2) is 5 characters long: tokens must have at least 16 (make one with `openssl rand -hex 32`)"
            ),
            "{e}"
        );
        let now = after_reload(&f, read_file(&f).unwrap(), Some(&last), false).unwrap();
        assert_eq!(names(&now), ["alice", "dave", "bob"], "bob keeps his token; carol's removal applies");
        let bob = now.iter().find(|t| &*t.name == "bob").unwrap();
        assert!(matches!(&bob.secret, Secret::Plain(p) if p == b.as_bytes()), "his last good token");
        // A bad line with no last good token is only skipped; nothing left is an error.
        let f = write(&dir, "eve short\n");
        assert!(after_reload(&f, read_file(&f).unwrap(), Some(&last), false)
            .unwrap_err()
            .contains("holds no usable token"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[cfg(unix)]
    #[test]
    fn h6_1_group_and_others() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("mcplite-tokens-mode-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = write(&dir, "alice 3f9a1c0e7b2d4a6f8e1c3b5d7f9a0c2e\n");
        for (mode, what) in [(0o604, "accessible to others"), (0o620, "writable or executable by its group")] {
            std::fs::set_permissions(&f, std::fs::Permissions::from_mode(mode)).unwrap();
            let e = read_file(&f).err().unwrap();
            assert!(e.contains(what), "{e}");
        }
        // Group-readable: only for the server's own group (named as its
        // user); root's group (0) is never one.
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o640)).unwrap();
        // SAFETY: getegid cannot fail.
        let egid = unsafe { libc::getegid() };
        // SAFETY: geteuid cannot fail.
        let own = egid != 0 && group_named_as_user(egid, unsafe { libc::geteuid() });
        let r = read_file(&f);
        assert_eq!(r.is_ok(), own, "{:?}", r.err());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_bucket_refills_at_the_limit() {
        let name: Arc<str> = "a".into();
        let l = RateLimits::default();
        assert!(l.take(&name, Some(2)).is_ok());
        assert!(l.take(&name, Some(2)).is_ok());
        assert!(l.take(&"b".into(), Some(2)).is_ok());
        assert!(l.take(&name, None).is_ok());
        let wait = l.take(&name, Some(2)).unwrap_err();
        assert!((29..=30).contains(&wait), "{wait}");
    }
}
