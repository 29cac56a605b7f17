//! Resources that change while the server runs, and who hears of it (RULES
//! U3).
//!
//! A tool changes the server's resources ([`ResourceChange`], made in R by
//! `mcp_resource_set()` and `mcp_resource_remove()`); the dispatcher applies
//! a call's changes when it returns, before its answer, and publishes them
//! to the [`Hub`]:
//!
//! * every [`Listener`] whose filter names a changed URI gets
//!   `notifications/resources/updated` for it;
//! * every listener that asked for list changes gets
//!   `notifications/resources/list_changed` when a resource came, went or
//!   changed what `resources/list` says of it.
//!
//! A listener is a legacy session's (its `resources/subscribe` URIs, and
//! list changes always: over stdio the connection, over HTTP the session's
//! `GET` stream) or a 2026-07-28 `subscriptions/listen` request's (its
//! filter; every message on its stream carries its id in `_meta`). The
//! transport that owns a listener holds it ([`Arc`]); the hub holds it
//! weakly, so a listener is gone when its stream is. How a message reaches
//! the client is the listener's sink: the hub only encodes and hands over.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, PoisonError, Weak};

use serde_json::Value;

use crate::json::write_str;
use crate::resources::{self, Resources};
use crate::version::META_SUBSCRIPTION_ID;

pub use crate::host::ResourceChange;

/// `notifications/resources/updated`.
pub const RESOURCE_UPDATED: &str = "notifications/resources/updated";
/// `notifications/resources/list_changed`.
pub const RESOURCES_LIST_CHANGED: &str = "notifications/resources/list_changed";
/// `notifications/subscriptions/acknowledged`.
pub const ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";
/// `subscriptions/listen`.
pub const LISTEN: &str = "subscriptions/listen";

/// Most URIs one session or one `subscriptions/listen` request follows
/// (RULES U3.1, U3.3), and most bytes of them: a client cannot make the
/// server hold an unbounded set (1000 sessions hold at most 64 MB).
pub const MAX_URIS: usize = 1024;
pub const MAX_URI_BYTES: usize = 64 << 10;

/// What a listener wants to hear of.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    /// `notifications/resources/list_changed`.
    pub list_changed: bool,
    /// `notifications/resources/updated` for these URIs.
    pub uris: BTreeSet<String>,
    /// `notifications/tasks` for these tasks (RULES V3.7).
    pub tasks: BTreeSet<String>,
    /// The session ended: its stream ends too.
    pub closed: bool,
}

/// The method of a task's status notification (2026-07-28, RULES V3.7).
pub const TASK_STATUS: &str = "notifications/tasks";

/// Most task ids one `subscriptions/listen` request follows.
pub const MAX_TASK_IDS: usize = 1024;

/// A legacy session's subscriptions (RULES U3.1): the filter its listener
/// reads, shared by the session's state and the listener.
#[derive(Debug, Clone)]
pub struct SessionFilter(Arc<Mutex<Filter>>);

impl Default for SessionFilter {
    fn default() -> Self {
        SessionFilter(Arc::new(Mutex::new(Filter::default())))
    }
}

impl PartialEq for SessionFilter {
    fn eq(&self, other: &Self) -> bool {
        // One filter shared by two states (a clone) is equal to itself:
        // locking it twice would deadlock.
        Arc::ptr_eq(&self.0, &other.0) || *lock(&self.0) == *lock(&other.0)
    }
}

impl SessionFilter {
    /// Follow `uri`; `false` when the session follows [`MAX_URIS`] already,
    /// or [`MAX_URI_BYTES`] with it.
    pub fn add(&self, uri: &str) -> bool {
        let mut f = lock(&self.0);
        if f.uris.contains(uri) {
            return true;
        }
        if f.uris.len() >= MAX_URIS || uri_bytes(&f.uris) + uri.len() > MAX_URI_BYTES {
            return false;
        }
        f.uris.insert(uri.to_owned())
    }

    /// Stop following `uri`.
    pub fn remove(&self, uri: &str) {
        lock(&self.0).uris.remove(uri);
    }

    /// The session was (re)initialized: it hears of list changes and
    /// follows no URI yet. Before, it hears nothing (a connection used
    /// only by 2026-07-28 requests has no legacy session).
    pub fn open(&self) {
        *lock(&self.0) = Filter { list_changed: true, ..Filter::default() };
    }

    /// The session ended (`DELETE`, expiry, eviction, shutdown): it hears
    /// nothing more, and its stream ends.
    pub fn close(&self) {
        *lock(&self.0) = Filter { closed: true, ..Filter::default() };
    }

    /// The URIs followed now.
    pub fn uris(&self) -> BTreeSet<String> {
        lock(&self.0).uris.clone()
    }
}

fn uri_bytes(uris: &BTreeSet<String>) -> usize {
    uris.iter().map(String::len).sum()
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Hands one notification (a JSON-RPC line, without LF) to the client;
/// `false` when it never will (the stream is gone).
pub type Sink = Box<dyn Fn(Vec<u8>) -> bool + Send + Sync>;

/// One stream of notifications (see the module documentation).
pub struct Listener {
    /// The `subscriptions/listen` request's id (JSON text); `None` for a
    /// legacy session.
    subscription: Option<String>,
    filter: Arc<Mutex<Filter>>,
    sink: Sink,
}

impl Listener {
    /// The listener of a legacy session: what it subscribes to, and list
    /// changes.
    pub fn session(filter: &SessionFilter, sink: Sink) -> Arc<Listener> {
        Arc::new(Listener { subscription: None, filter: Arc::clone(&filter.0), sink })
    }

    /// The listener of a `subscriptions/listen` request with this id (JSON
    /// text) and the filter it was acknowledged with.
    pub fn stream(id: &str, filter: Filter, sink: Sink) -> Arc<Listener> {
        Arc::new(Listener { subscription: Some(id.to_owned()), filter: Arc::new(Mutex::new(filter)), sink })
    }

    /// Has the listener's session ended ([`SessionFilter::close`])?
    pub fn is_closed(&self) -> bool {
        lock(&self.filter).closed
    }

    /// The notification `method` with `uri` (when given), for this listener.
    fn notification(&self, method: &str, uri: Option<&str>) -> Vec<u8> {
        let mut out = Vec::with_capacity(128);
        out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"method\":");
        write_str(&mut out, method);
        if uri.is_none() && self.subscription.is_none() {
            out.push(b'}');
            return out;
        }
        out.extend_from_slice(b",\"params\":{");
        if let Some(id) = &self.subscription {
            write_subscription_meta(&mut out, id);
        }
        if let Some(u) = uri {
            if self.subscription.is_some() {
                out.push(b',');
            }
            out.extend_from_slice(b"\"uri\":");
            write_str(&mut out, u);
        }
        out.extend_from_slice(b"}}");
        out
    }
}

/// `"_meta":{"io.modelcontextprotocol/subscriptionId":id}`.
fn write_subscription_meta(out: &mut Vec<u8>, id: &str) {
    out.extend_from_slice(b"\"_meta\":{");
    write_str(out, META_SUBSCRIPTION_ID);
    out.push(b':');
    out.extend_from_slice(id.as_bytes());
    out.push(b'}');
}

/// The listeners of one server.
#[derive(Default)]
pub struct Hub {
    listeners: Mutex<Vec<Weak<Listener>>>,
}

impl Hub {
    /// From now on `l` hears of changes, while its owner holds it.
    pub fn add(&self, l: &Arc<Listener>) {
        let mut ls = lock(&self.listeners);
        ls.retain(|w| w.strong_count() > 0);
        ls.push(Arc::downgrade(l));
    }

    /// The listeners still held by their owners (the others are forgotten).
    fn alive(&self) -> Vec<Arc<Listener>> {
        let mut ls = lock(&self.listeners);
        ls.retain(|w| w.strong_count() > 0);
        ls.iter().filter_map(Weak::upgrade).collect()
    }

    /// The listeners alive now.
    pub fn count(&self) -> usize {
        lock(&self.listeners).iter().filter(|w| w.strong_count() > 0).count()
    }

    /// Tell the listeners that follow task `id` its state (`members`: the
    /// task object's members as JSON text, RULES V3.7).
    pub fn publish_task(&self, id: &str, members: &str) {
        let alive = self.alive();
        for l in alive.iter().filter(|l| lock(&l.filter).tasks.contains(id)) {
            let Some(sub) = &l.subscription else { continue };
            let mut out = Vec::with_capacity(160 + members.len());
            out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"method\":");
            write_str(&mut out, TASK_STATUS);
            out.extend_from_slice(b",\"params\":{");
            write_subscription_meta(&mut out, sub);
            out.push(b',');
            out.extend_from_slice(members.as_bytes());
            out.extend_from_slice(b"}}");
            let _ = (l.sink)(out);
        }
    }

    /// Tell every listener what it asked for of these changes: the URIs
    /// whose content changed and whether the list did.
    pub fn publish(&self, updated: &BTreeSet<String>, list_changed: bool) {
        let alive = self.alive();
        for l in alive {
            let (lists, uris): (bool, Vec<String>) = {
                let f = lock(&l.filter);
                (f.list_changed, f.uris.intersection(updated).cloned().collect())
            };
            if list_changed && lists && !(l.sink)(l.notification(RESOURCES_LIST_CHANGED, None)) {
                continue;
            }
            for u in uris {
                if !(l.sink)(l.notification(RESOURCE_UPDATED, Some(&u))) {
                    break;
                }
            }
        }
    }
}

/// What applying a call's changes did: the URIs whose content changed (or
/// that came or went), and whether `resources/list` changed.
#[derive(Debug, Default, PartialEq)]
pub struct Applied {
    pub updated: BTreeSet<String>,
    pub list_changed: bool,
}

/// Apply `changes` to `res` in order (RULES U3.2).
pub fn apply(res: &mut Resources, changes: Vec<ResourceChange>) -> Applied {
    let mut a = Applied::default();
    for c in changes {
        match c {
            ResourceChange::Set(spec) => {
                a.updated.insert(spec.uri.clone());
                match res.resources.iter_mut().find(|r| r.uri == spec.uri) {
                    Some(r) => {
                        let listed_same = r.name == spec.name
                            && r.title == spec.title
                            && r.description == spec.description
                            && r.mime_type == spec.mime_type
                            && r.size == spec.size;
                        a.list_changed |= !listed_same;
                        *r = spec;
                    }
                    None => {
                        res.resources.push(spec);
                        a.list_changed = true;
                    }
                }
            }
            ResourceChange::Remove(uri) => {
                if let Some(i) = res.resources.iter().position(|r| r.uri == uri) {
                    res.resources.remove(i);
                    a.list_changed = true;
                    a.updated.insert(uri);
                }
            }
        }
    }
    a
}

/// Why a `subscriptions/listen` request was refused (its `-32602` detail).
pub const LISTEN_PARAMS: &str = "subscriptions/listen needs `notifications`: an object whose `resourcesListChanged` \
                                 is a boolean and whose `resourceSubscriptions` is an array of at most 1024 URI \
                                 strings";

/// The filter a `subscriptions/listen` request's `params` ask for, as this
/// server honours it (RULES U3.3): list changes of resources, and updates
/// of the URIs it can read now. Tool and prompt lists never change, so
/// `toolsListChanged` and `promptsListChanged` are not honoured. Also the
/// `notifications` object the acknowledgment carries.
pub fn listen_filter(
    params: Option<&Value>,
    res: &Resources,
    tasks: Option<BTreeSet<String>>,
) -> Result<(Filter, Vec<u8>), &'static str> {
    let n = params
        .and_then(Value::as_object)
        .and_then(|p| p.get("notifications"))
        .and_then(Value::as_object)
        .ok_or(LISTEN_PARAMS)?;
    let list_changed = match n.get("resourcesListChanged") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(LISTEN_PARAMS),
    };
    let asked = match n.get("resourceSubscriptions") {
        None | Some(Value::Null) => None,
        Some(Value::Array(a)) if a.len() <= MAX_URIS => {
            Some(a.iter().map(|u| u.as_str().ok_or(LISTEN_PARAMS)).collect::<Result<Vec<&str>, _>>()?)
        }
        Some(_) => return Err(LISTEN_PARAMS),
    };
    // Honoured: the URIs that can be read now, within the bytes a filter
    // may hold.
    let mut uris = BTreeSet::new();
    let mut bytes = 0;
    for u in asked.iter().flatten().filter(|u| resources::names(res, u)) {
        if bytes + u.len() <= MAX_URI_BYTES && uris.insert((*u).to_owned()) {
            bytes += u.len();
        }
    }
    let mut ack = b"{".to_vec();
    if list_changed {
        ack.extend_from_slice(b"\"resourcesListChanged\":true");
    }
    if asked.is_some() {
        if list_changed {
            ack.push(b',');
        }
        write_strings(&mut ack, "resourceSubscriptions", &uris);
    }
    if let Some(ids) = &tasks {
        if ack.len() > 1 {
            ack.push(b',');
        }
        write_strings(&mut ack, "taskIds", ids);
    }
    ack.push(b'}');
    Ok((Filter { list_changed, uris, tasks: tasks.unwrap_or_default(), closed: false }, ack))
}

/// `"key":[…]`: a member whose value is these strings.
fn write_strings(out: &mut Vec<u8>, key: &str, items: &BTreeSet<String>) {
    write_str(out, key);
    out.extend_from_slice(b":[");
    for (i, s) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_str(out, s);
    }
    out.push(b']');
}

/// The acknowledgment that opens the stream of the `subscriptions/listen`
/// request `id` (JSON text), with the `notifications` it honours.
pub fn acknowledgment(id: &str, notifications: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(160 + notifications.len());
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"method\":");
    write_str(&mut out, ACKNOWLEDGED);
    out.extend_from_slice(b",\"params\":{");
    write_subscription_meta(&mut out, id);
    out.extend_from_slice(b",\"notifications\":");
    out.extend_from_slice(notifications);
    out.extend_from_slice(b"}}");
    out
}

/// The response that ends the stream of the `subscriptions/listen` request
/// `id` gracefully (the server stops, RULES U3.3), with the server's
/// identity (`server_info`, JSON text) as every modern result has.
pub fn closing(id: &str, server_info: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(192);
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    out.extend_from_slice(id.as_bytes());
    out.extend_from_slice(b",\"result\":{\"resultType\":\"complete\",");
    write_subscription_meta(&mut out, id);
    out.truncate(out.len() - 1);
    out.push(b',');
    write_str(&mut out, crate::version::META_SERVER_INFO);
    out.push(b':');
    out.extend_from_slice(server_info.as_bytes());
    out.extend_from_slice(b"}}}");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::{ResourceBody, ResourceSpec};
    use serde_json::json;

    fn spec(uri: &str, text: &str) -> ResourceSpec {
        ResourceSpec {
            uri: uri.into(),
            name: uri.into(),
            title: None,
            description: None,
            mime_type: "text/plain".into(),
            size: text.len() as u64,
            body: ResourceBody::Text(text.into()),
        }
    }

    fn collect() -> (Sink, Arc<Mutex<Vec<String>>>) {
        let got = Arc::new(Mutex::new(Vec::new()));
        let g = Arc::clone(&got);
        (
            Box::new(move |l| {
                lock(&g).push(String::from_utf8(l).unwrap());
                true
            }),
            got,
        )
    }

    #[test]
    fn u3_2_changes_apply_in_order_and_say_what_changed() {
        let mut res = Resources { resources: vec![spec("a://1", "x")], templates: vec![] };
        // Same listing (size too): content only.
        let a = apply(&mut res, vec![ResourceChange::Set(spec("a://1", "y"))]);
        assert_eq!(a, Applied { updated: ["a://1".to_string()].into(), list_changed: false });
        assert_eq!(res.resources[0].body, ResourceBody::Text("y".into()));
        let a = apply(&mut res, vec![ResourceChange::Set(spec("a://1", "longer"))]);
        assert!(a.list_changed, "the size listed changed");
        let a = apply(
            &mut res,
            vec![
                ResourceChange::Set(spec("a://2", "z")),
                ResourceChange::Remove("a://1".into()),
                ResourceChange::Remove("a://none".into()),
            ],
        );
        assert!(a.list_changed);
        assert_eq!(a.updated, ["a://1".to_string(), "a://2".to_string()].into());
        assert_eq!(res.resources.iter().map(|r| r.uri.as_str()).collect::<Vec<_>>(), ["a://2"]);
        assert_eq!(apply(&mut res, vec![]), Applied::default());
    }

    #[test]
    fn u3_hub_tells_each_listener_what_it_asked_for() {
        let hub = Hub::default();
        let session = SessionFilter::default();
        session.open();
        assert!(session.add("a://1"));
        let (s1, legacy) = collect();
        let l1 = Listener::session(&session, s1);
        let (s2, modern) = collect();
        let l2 = Listener::stream("7", Filter { uris: ["a://2".to_string()].into(), ..Filter::default() }, s2);
        hub.add(&l1);
        hub.add(&l2);
        hub.publish(&["a://1".to_string(), "a://2".to_string()].into(), true);
        assert_eq!(
            *lock(&legacy),
            [
                r#"{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}"#,
                r#"{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"a://1"}}"#,
            ]
        );
        assert_eq!(
            *lock(&modern),
            [
                r#"{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":7},"uri":"a://2"}}"#
            ]
        );
        // Unsubscribed, and a listener dropped by its owner, hear nothing.
        session.remove("a://1");
        drop(l2);
        assert_eq!(hub.count(), 1);
        hub.publish(&["a://1".to_string(), "a://2".to_string()].into(), false);
        assert_eq!(lock(&legacy).len(), 2);
        assert_eq!(lock(&modern).len(), 1);
        // A session that ended hears nothing, and its stream knows.
        assert!(session.add("a://1"));
        session.close();
        assert!(l1.is_closed());
        hub.publish(&["a://1".to_string()].into(), true);
        assert_eq!(lock(&legacy).len(), 2);
    }

    #[test]
    fn u3_session_filter_is_bounded() {
        let f = SessionFilter::default();
        for i in 0..MAX_URIS {
            assert!(f.add(&format!("a://{i}")));
        }
        assert!(f.add("a://0"), "one already followed");
        assert!(!f.add("a://over"));
        assert_eq!(f.uris().len(), MAX_URIS);
        let f = SessionFilter::default();
        let long = "u".repeat(2000);
        let n = (0..MAX_URIS).take_while(|i| f.add(&format!("{long}{i:04}"))).count();
        assert_eq!(n, MAX_URI_BYTES / 2004, "bounded by bytes");
    }

    #[test]
    fn u3_3_listen_filter_honours_what_can_change() {
        let res = Resources { resources: vec![spec("a://1", "x")], templates: vec![] };
        let p = json!({"notifications": {"toolsListChanged": true, "resourcesListChanged": true,
            "resourceSubscriptions": ["a://1", "a://missing"]}});
        let (f, ack) = listen_filter(Some(&p), &res, None).unwrap();
        assert!(f.list_changed);
        assert_eq!(f.uris, ["a://1".to_string()].into());
        assert_eq!(
            String::from_utf8(ack.clone()).unwrap(),
            r#"{"resourcesListChanged":true,"resourceSubscriptions":["a://1"]}"#
        );
        assert_eq!(
            String::from_utf8(acknowledgment("\"s\"", &ack)).unwrap(),
            r#"{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"s"},"notifications":{"resourcesListChanged":true,"resourceSubscriptions":["a://1"]}}}"#
        );
        let (_, ack) =
            listen_filter(Some(&json!({"notifications": {"promptsListChanged": true}})), &res, None).unwrap();
        assert_eq!(ack, b"{}");
        for bad in [
            json!({}),
            json!({"notifications": []}),
            json!({"notifications": {"resourcesListChanged": 1}}),
            json!({"notifications": {"resourceSubscriptions": "a://1"}}),
            json!({"notifications": {"resourceSubscriptions": [1]}}),
            json!({"notifications": {"resourceSubscriptions": vec!["a://1"; MAX_URIS + 1]}}),
        ] {
            assert_eq!(listen_filter(Some(&bad), &res, None).unwrap_err(), LISTEN_PARAMS, "{bad}");
        }
        assert_eq!(
            String::from_utf8(closing("3", r#"{"name":"s","version":"1"}"#)).unwrap(),
            r#"{"jsonrpc":"2.0","id":3,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":3,"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}}}"#
        );
    }
}
