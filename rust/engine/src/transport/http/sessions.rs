//! Legacy sessions (RULES H3): one [`LegacyState`] per `MCP-Session-Id`,
//! bounded in number (the least recently used is dropped when full) and
//! ended when idle. The store is kept in order of last use (an LRU map), so
//! expiry and eviction look only at the oldest sessions, never at all of
//! them. Session ids come from the operating system's random source only.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use lru::LruCache;

use super::options::HttpOptions;
use crate::server::{LegacyState, Server};

struct Entry {
    state: LegacyState,
    used: Instant,
}

/// The legacy sessions of one bound server.
pub(super) struct Sessions {
    server: Arc<Server>,
    replica: Option<String>,
    max: usize,
    idle: Duration,
    /// Least recently used first: touching a session moves it to the back.
    map: Mutex<LruCache<String, Entry>>,
}

/// A new session id: 16 bytes from the operating system's random source as
/// 32 lowercase hexadecimal characters, after `<replica>.` when a replica
/// name is given (RULES H3.1). There is no fallback: without the OS random
/// source no session is made.
pub(super) fn new_id(replica: Option<&str>) -> Result<String, getrandom::Error> {
    let mut raw = [0u8; 16];
    getrandom::fill(&mut raw)?;
    let mut id = replica.map(|r| format!("{r}.")).unwrap_or_default();
    id.extend(raw.iter().map(|b| format!("{b:02x}")));
    Ok(id)
}

impl Sessions {
    pub(super) fn new(server: Arc<Server>, opts: &HttpOptions) -> Sessions {
        Sessions {
            server,
            replica: opts.replica.clone(),
            max: opts.max_sessions.max(1),
            idle: opts.session_idle,
            map: Mutex::new(LruCache::unbounded()),
        }
    }

    /// This server's replica name, if it has one.
    pub(super) fn replica(&self) -> Option<&str> {
        self.replica.as_deref()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, LruCache<String, Entry>> {
        self.map.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn expired(&self, e: &Entry, now: Instant) -> bool {
        now.saturating_duration_since(e.used) >= self.idle
    }

    /// A session is over (`DELETE`, idle expiry, eviction, shutdown):
    /// `mcp.server.session.duration` is recorded. An expired one ended when
    /// its idle time ran out.
    fn over(&self, mut e: Entry, now: Instant) {
        // RULES U3.1: its GET stream hears nothing more and ends.
        e.state.subscriptions.close();
        let end = if self.expired(&e, now) { e.used + self.idle } else { now };
        self.server.end_session_at(&mut e.state, end, true);
    }

    /// Keep `state` as a new session and return its id, after ending the
    /// sessions that expired and, when the store is full, the least
    /// recently used ones. `None` when the OS random source failed.
    pub(super) fn mint(&self, state: LegacyState) -> Option<String> {
        let id = new_id(self.replica.as_deref()).ok()?;
        let mut map = self.lock();
        let now = Instant::now();
        while let Some((_, e)) = map.peek_lru() {
            if !self.expired(e, now) && map.len() < self.max {
                break;
            }
            if let Some((_, e)) = map.pop_lru() {
                self.over(e, now);
            }
        }
        map.push(id.clone(), Entry { state, used: now });
        Some(id)
    }

    /// Run `f` on a live session (touching it), or `None` when unknown or
    /// expired.
    pub(super) fn with<T>(&self, id: &str, f: impl FnOnce(&mut LegacyState) -> T) -> Option<T> {
        let mut map = self.lock();
        let now = Instant::now();
        if self.expired(map.peek(id)?, now) {
            if let Some(e) = map.pop(id) {
                self.over(e, now);
            }
            return None;
        }
        let e = map.get_mut(id)?;
        e.used = now;
        Some(f(&mut e.state))
    }

    /// End session `id` (`DELETE`); false when there is none.
    pub(super) fn end(&self, id: &str) -> bool {
        let removed = self.lock().pop(id);
        match removed {
            Some(e) => {
                self.over(e, Instant::now());
                true
            }
            None => false,
        }
    }

    /// End every session (the server stops).
    pub(super) fn end_all(&self) {
        let mut map = std::mem::replace(&mut *self.lock(), LruCache::unbounded());
        let now = Instant::now();
        while let Some((_, e)) = map.pop_lru() {
            self.over(e, now);
        }
    }

    #[cfg(test)]
    fn ids(&self) -> Vec<String> {
        self.lock().iter().map(|(k, _)| k.clone()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::ServerInfo;
    use std::collections::HashSet;

    fn store(max: usize, idle: Duration) -> Sessions {
        let server = Arc::new(Server::with_tools(
            ServerInfo { name: "t".into(), version: "1".into(), instructions: None },
            Vec::new(),
        ));
        Sessions::new(server, &HttpOptions { max_sessions: max, session_idle: idle, ..HttpOptions::default() })
    }

    #[test]
    fn ids_are_random_hex_and_unique() {
        let mut seen = HashSet::new();
        for _ in 0..20_000 {
            let id = new_id(None).unwrap();
            assert_eq!(id.len(), 32, "{id}");
            assert!(id.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)), "{id}");
            assert!(seen.insert(id), "ids are unique");
        }
        let id = new_id(Some("eu-1")).unwrap();
        let (replica, rest) = id.split_once('.').unwrap();
        assert_eq!((replica, rest.len()), ("eu-1", 32));
        // Not a clock: two ids made back to back share no long prefix.
        let (a, b) = (new_id(None).unwrap(), new_id(None).unwrap());
        assert!(a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count() < 16, "{a} {b}");
    }

    #[test]
    fn least_recently_used_is_dropped_when_full() {
        let s = store(2, Duration::from_secs(3600));
        let a = s.mint(LegacyState::default()).unwrap();
        let b = s.mint(LegacyState::default()).unwrap();
        assert!(s.with(&a, |_| ()).is_some(), "touch a: b is now the oldest");
        let c = s.mint(LegacyState::default()).unwrap();
        assert_eq!(s.ids(), vec![c.clone(), a.clone()]);
        assert!(s.with(&b, |_| ()).is_none());
        assert!(s.end(&a) && !s.end(&a));
        s.end_all();
        assert!(s.ids().is_empty());
    }

    #[test]
    fn idle_sessions_expire() {
        let s = store(10, Duration::ZERO);
        let a = s.mint(LegacyState::default()).unwrap();
        assert!(s.with(&a, |_| ()).is_none(), "expired on use");
        let _ = s.mint(LegacyState::default()).unwrap();
        let b = s.mint(LegacyState::default()).unwrap();
        assert_eq!(s.ids(), vec![b], "expired ones end when a session is made");
    }
}
