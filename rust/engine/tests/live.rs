//! Live sessions without R (RULES R10): a listener whose "R thread" is a
//! test thread, and the server's side over the real socket: listing, info,
//! calls, a busy session, a session that goes away, interrupts, stale
//! sockets, another protocol version.
#![cfg(unix)]

use std::fs;
use std::os::unix::fs::DirBuilderExt;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use mcplite_engine::live::connect::{list, ConnectError, Outcome, Session};
use mcplite_engine::live::frame::{read_frame, write_frame};
use mcplite_engine::live::listen::Listener;
use serde_json::{json, Map, Value};

const SLICE: Duration = Duration::from_millis(20);
const LONG: Duration = Duration::from_secs(10);

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mcplite-live-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    fs::DirBuilder::new().mode(0o700).create(&d).unwrap();
    d
}

fn info(id: &str) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("id".into(), Value::from(id));
    m.insert("pid".into(), Value::from(std::process::id()));
    m
}

/// A stand-in for R's main thread: while `idle`, it answers probes and runs
/// calls (the result body is the call body reversed); it counts the calls.
struct FakeR {
    idle: Arc<AtomicBool>,
    ran: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    handle: Option<thread::JoinHandle<Listener>>,
}

impl FakeR {
    fn start(l: Listener, idle: bool, run_for: Duration) -> FakeR {
        let idle = Arc::new(AtomicBool::new(idle));
        let ran = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (i, r, s) = (Arc::clone(&idle), Arc::clone(&ran), Arc::clone(&stop));
        let handle = thread::spawn(move || {
            while !s.load(Ordering::SeqCst) {
                let mut pfd = libc::pollfd { fd: l.wake_fd(), events: libc::POLLIN, revents: 0 };
                // SAFETY: one valid pollfd.
                unsafe { libc::poll(&mut pfd, 1, 20) };
                if !i.load(Ordering::SeqCst) {
                    continue; // busy: the handler does not run (or runs below top level)
                }
                l.drain();
                l.confirm_idle();
                while let Some(job) = l.next_job() {
                    thread::sleep(run_for);
                    r.fetch_add(1, Ordering::SeqCst);
                    let mut body = job.body.clone();
                    body.reverse();
                    l.finish(job, json!({"status": "ok"}), &body).unwrap();
                }
            }
            l
        });
        FakeR { idle, ran, stop, handle: Some(handle) }
    }

    fn stop(mut self) -> Listener {
        self.stop.store(true, Ordering::SeqCst);
        self.handle.take().unwrap().join().unwrap()
    }
}

fn never() -> bool {
    false
}

/// A directory, a session `id` in it whose stand-in R is `idle` or not, and
/// a server connected to it.
fn session(name: &str, id: &str, idle: bool) -> (PathBuf, FakeR, Session) {
    let d = tmpdir(name);
    let l = Listener::bind(&d, id, info(id), "/work".into()).unwrap();
    let r = FakeR::start(l, idle, Duration::ZERO);
    let s = Session::connect(&d, id, LONG).unwrap();
    (d, r, s)
}

#[test]
fn a_call_runs_in_the_session_and_its_result_comes_back() {
    let (d, r, mut s) = session("call", "101", true);
    let mut fields = Map::new();
    fields.insert("tool".into(), Value::from("echo"));
    match s.call(fields, b"abc", LONG, SLICE, never) {
        Outcome::Done(f) => {
            assert_eq!(f.body, b"cba");
            assert_eq!(f.header["status"], "ok");
        }
        o => panic!("{o:?}"),
    }
    let i = s.info(LONG).unwrap();
    assert_eq!(i["id"], "101");
    assert_eq!(i["wd"], "/work");
    assert_eq!(i["busy"], false);
    assert!(i["idle_seconds"].is_number());
    assert_eq!(r.ran.load(Ordering::SeqCst), 1);
    drop(r.stop());
    assert!(!d.join("101.sock").exists(), "closing removes the socket");
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_busy_session_makes_the_call_wait_then_withdraws_it() {
    let (d, r, mut s) = session("busy", "102", false);
    assert_eq!(s.info(LONG).unwrap()["busy"], true);
    let t0 = Instant::now();
    let o = s.call(Map::new(), b"x", Duration::from_millis(300), SLICE, never);
    assert!(matches!(o, Outcome::Busy), "{o:?}");
    assert!(t0.elapsed() >= Duration::from_millis(300));
    // The user's code ends: the withdrawn call never runs, a new one does.
    r.idle.store(true, Ordering::SeqCst);
    match s.call(Map::new(), b"yz", LONG, SLICE, never) {
        Outcome::Done(f) => assert_eq!(f.body, b"zy"),
        o => panic!("{o:?}"),
    }
    assert_eq!(r.ran.load(Ordering::SeqCst), 1);
    drop(r.stop());
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_call_that_waits_runs_once_the_session_is_idle() {
    let (d, r, mut s) = session("wait", "103", false);
    let idle = Arc::clone(&r.idle);
    let flip = thread::spawn(move || {
        thread::sleep(Duration::from_millis(200));
        idle.store(true, Ordering::SeqCst);
    });
    // The watcher hears when the session starts it, once (RULES N3.2).
    let mut starts = 0;
    let o = s.call_watched(Map::new(), b"1", LONG, SLICE, never, || starts += 1);
    assert!(matches!(o, Outcome::Done(_)), "{o:?}");
    assert_eq!(starts, 1);
    flip.join().unwrap();
    drop(r.stop());
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_session_that_goes_away_ends_the_call() {
    let d = tmpdir("gone");
    // Closed while the call waits: it never started.
    let l = Listener::bind(&d, "104", info("104"), "/".into()).unwrap();
    let mut s = Session::connect(&d, "104", LONG).unwrap();
    let closer = thread::spawn(move || {
        thread::sleep(Duration::from_millis(150));
        drop(l);
    });
    match s.call(Map::new(), b"1", LONG, SLICE, never) {
        Outcome::Gone { started: false, .. } => {}
        o => panic!("{o:?}"),
    }
    closer.join().unwrap();
    assert_eq!(Session::connect(&d, "104", LONG).err(), Some(ConnectError::Missing));
    // Closed while the call runs: it had started.
    let l = Listener::bind(&d, "105", info("105"), "/".into()).unwrap();
    let r = FakeR::start(l, true, Duration::from_millis(400));
    let mut s = Session::connect(&d, "105", LONG).unwrap();
    let stop = Arc::clone(&r.stop);
    let h = thread::spawn(move || {
        let o = s.call(Map::new(), b"1", LONG, SLICE, never);
        (o, s)
    });
    thread::sleep(Duration::from_millis(150));
    stop.store(true, Ordering::SeqCst);
    let mut l = r.handle.unwrap().join().unwrap();
    l.close();
    let (o, _s) = h.join().unwrap();
    // The fake finished the call before it saw the stop, or the close came first.
    assert!(matches!(o, Outcome::Done(_) | Outcome::Gone { started: true, .. }), "{o:?}");
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn an_interrupt_stops_the_wait() {
    let (d, r, mut s) = session("intr", "106", false);
    let t0 = Instant::now();
    let o = s.call(Map::new(), b"1", LONG, SLICE, || t0.elapsed() > Duration::from_millis(100));
    assert!(matches!(o, Outcome::Interrupted { started: false }), "{o:?}");
    r.idle.store(true, Ordering::SeqCst);
    // The interrupted call was withdrawn: the next one is the only one run.
    assert!(matches!(s.call(Map::new(), b"2", LONG, SLICE, never), Outcome::Done(_)));
    assert_eq!(r.ran.load(Ordering::SeqCst), 1);
    drop(r.stop());
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn r10_6_an_interrupt_of_a_running_call_interrupts_it_in_the_session() {
    let d = tmpdir("intr-running");
    let l = Listener::bind(&d, "107", info("107"), "/work".into()).unwrap();
    // The session's interrupter: what SIGINT to R's main thread does.
    let interrupted = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&interrupted);
    l.set_interrupter(Arc::new(move || flag.store(true, Ordering::SeqCst)));
    // A stand-in R that runs the call until it is interrupted.
    let running = Arc::new(AtomicBool::new(false));
    let (i, r) = (Arc::clone(&interrupted), Arc::clone(&running));
    let fake = thread::spawn(move || {
        let t0 = Instant::now();
        let job = loop {
            if let Some(job) = l.next_job() {
                break job;
            }
            assert!(t0.elapsed() < LONG, "no call came");
            thread::sleep(Duration::from_millis(5));
        };
        r.store(true, Ordering::SeqCst);
        while !i.load(Ordering::SeqCst) {
            assert!(t0.elapsed() < LONG, "never interrupted");
            thread::sleep(Duration::from_millis(5));
        }
        l.finish(job, json!({"status": "error", "message": "interrupted"}), &[]).unwrap();
        l
    });
    let mut s = Session::connect(&d, "107", LONG).unwrap();
    let o = s.call(Map::new(), b"1", LONG, SLICE, || running.load(Ordering::SeqCst));
    assert!(matches!(o, Outcome::Interrupted { started: true }), "{o:?}");
    assert!(interrupted.load(Ordering::SeqCst), "the session's interrupter ran");
    drop(fake.join().unwrap());
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn listing_shows_live_sessions_and_removes_stale_sockets() {
    let d = tmpdir("list");
    let a = FakeR::start(Listener::bind(&d, "201", info("201"), "/a".into()).unwrap(), true, Duration::ZERO);
    let b = FakeR::start(Listener::bind(&d, "202", info("202"), "/b".into()).unwrap(), false, Duration::ZERO);
    // A socket whose listener is gone (R killed) is stale.
    let stale = std::os::unix::net::UnixListener::bind(d.join("203.sock")).unwrap();
    drop(stale);
    assert!(d.join("203.sock").exists());
    let all = list(&d, Duration::from_secs(2));
    let infos: Vec<Value> = all.into_iter().map(|r| r.unwrap()).collect();
    assert_eq!(infos.len(), 2);
    assert_eq!((infos[0]["id"].as_str(), infos[0]["busy"].as_bool()), (Some("201"), Some(false)));
    assert_eq!((infos[1]["id"].as_str(), infos[1]["busy"].as_bool()), (Some("202"), Some(true)));
    assert!(!d.join("203.sock").exists(), "the stale socket was removed");
    // A second listener under a live id is refused.
    assert!(Listener::bind(&d, "201", info("201"), "/".into()).is_err());
    drop(a.stop());
    drop(b.stop());
    assert!(list(&d, Duration::from_secs(2)).is_empty());
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn another_protocol_version_is_refused() {
    let d = tmpdir("proto");
    let l = Listener::bind(&d, "301", info("301"), "/".into()).unwrap();
    let mut s = UnixStream::connect(d.join("301.sock")).unwrap();
    write_frame(&s, &json!({"type": "hello", "protocol": 999}), &[]).unwrap();
    let f = read_frame(&mut s).unwrap().unwrap();
    assert_eq!(f.kind(), "error");
    assert!(f.header["message"].as_str().unwrap().contains("same mcplite version"));
    assert_eq!(read_frame(&mut s).unwrap(), None, "the session hangs up");
    drop(l);
    fs::remove_dir_all(&d).unwrap();
}
