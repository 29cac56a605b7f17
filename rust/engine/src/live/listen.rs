//! The session's side of a live session (RULES R10.3, R10.4).
//!
//! [`Listener::bind`] creates the socket in the verified directory and a
//! thread that accepts connections; each connection is refused unless its
//! peer is this user ([`super::check_peer`]) and gets a thread that reads
//! its messages. Those threads never touch R: they answer `hello`, `info`
//! and `cancel` themselves and put `call`s in a queue, then write a byte to
//! the wake pipe. R's main thread watches that pipe with an input handler
//! (`rust/mcplite-r/src/live.rs`): R's event loop runs the handler only
//! while it waits for input, and the handler takes calls from the queue
//! ([`Listener::next_job`]) only when R is idle at the top-level prompt.
//!
//! Whether R is idle is learnt the same way: an `info` request wakes the
//! handler and waits up to [`PROBE`] for it to confirm
//! ([`Listener::confirm_idle`]); no answer means the user's code is running.

use std::collections::{HashMap, VecDeque};
use std::fs;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use serde_json::{json, Map, Value};

use super::frame::{read_frame, write_frame, Frame};
use super::{check_peer, dir, no_sigpipe, PROTOCOL};
use crate::signals::spawn_masked;

/// How long an `info` request waits for R to say it is idle.
pub const PROBE: Duration = Duration::from_millis(300);
/// How often the accepting thread looks whether the listener was closed.
const ACCEPT_POLL_MS: i32 = 200;

/// One connection (a server): its socket and the lock its writers share.
struct Conn {
    stream: UnixStream,
    write: Mutex<()>,
}

impl Conn {
    fn send(&self, header: &Value, body: &[u8]) -> io::Result<()> {
        let _g = self.write.lock().unwrap_or_else(|p| p.into_inner());
        write_frame(&self.stream, header, body)
    }
}

/// A call for R to run.
pub struct Job {
    pub conn: u64,
    pub id: u64,
    pub header: Value,
    pub body: Vec<u8>,
    to: Arc<Conn>,
}

struct State {
    jobs: VecDeque<Job>,
    running: Option<(u64, u64)>,
    conns: HashMap<u64, Arc<Conn>>,
    next_conn: u64,
    closed: bool,
    /// R's input handler found R busy while calls waited: the accepting
    /// thread wakes it again at its next poll (see [`Listener::retry_later`]).
    retry: bool,
    /// When R last confirmed it was idle at the prompt.
    idle_at: Option<Instant>,
    /// When the user's last top-level command or the last call ended.
    last_active: Instant,
    wd: String,
}

struct Shared {
    st: Mutex<State>,
    cond: Condvar,
    wake_w: OwnedFd,
    info: Map<String, Value>,
    /// Interrupts the call R runs (RULES R10.6): set by
    /// [`Listener::set_interrupter`], called under the state's lock while
    /// the cancelled call is the running one.
    interrupter: Mutex<Option<Interrupter>>,
}

/// What interrupts R's main thread (SIGINT to it, in R).
pub type Interrupter = Arc<dyn Fn() + Send + Sync>;

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.st.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn wake(&self) {
        let b = [1u8];
        // SAFETY: a valid descriptor and buffer; a full pipe (EAGAIN) already
        // holds a wake-up.
        unsafe { libc::write(self.wake_w.as_raw_fd(), b.as_ptr() as *const libc::c_void, 1) };
    }

    /// The session's description, as `list_r_sessions` shows it.
    fn info(&self, probe: bool) -> Value {
        let asked = Instant::now();
        if probe {
            self.wake();
        }
        let mut st = self.lock();
        let mut idle = false;
        if probe {
            loop {
                if st.idle_at.is_some_and(|t| t >= asked) {
                    idle = true;
                    break;
                }
                let left = PROBE.saturating_sub(asked.elapsed());
                if left.is_zero() || st.running.is_some() || st.closed {
                    break;
                }
                st = self.cond.wait_timeout(st, left).unwrap_or_else(|p| p.into_inner()).0;
            }
        }
        let mut m = self.info.clone();
        m.insert("wd".into(), Value::from(st.wd.clone()));
        m.insert("busy".into(), Value::from(!idle));
        m.insert("running_call".into(), Value::from(st.running.is_some()));
        m.insert("queued".into(), Value::from(st.jobs.len()));
        let idle_s = if idle { Value::from(st.last_active.elapsed().as_secs_f64().floor()) } else { Value::Null };
        m.insert("idle_seconds".into(), idle_s);
        Value::Object(m)
    }
}

/// A listening session. Dropping it closes it.
pub struct Listener {
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
    wake_r: OwnedFd,
    path: PathBuf,
}

fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `fds` has room for two descriptors.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and are owned here.
    let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    for fd in [&r, &w] {
        // SAFETY: valid descriptors; plain flag changes.
        unsafe {
            let fl = libc::fcntl(fd.as_raw_fd(), libc::F_GETFL);
            libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, fl | libc::O_NONBLOCK);
            libc::fcntl(fd.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC);
        }
    }
    Ok((r, w))
}

impl Listener {
    /// Listen as session `id` in `dir` (already verified by
    /// [`dir::open`]). `info` holds what `list_r_sessions` shows that does
    /// not change (id, pid, R version, front end, ...); `wd` the working
    /// directory now. A stale socket of the same name (its session died)
    /// is replaced; a live one is an error.
    pub fn bind(dir_path: &Path, id: &str, info: Map<String, Value>, wd: String) -> io::Result<Listener> {
        let path = dir::socket_path(dir_path, id).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        if fs::symlink_metadata(&path).is_ok() {
            if UnixStream::connect(&path).is_ok() {
                return Err(io::Error::new(
                    io::ErrorKind::AddrInUse,
                    format!("another session listens on {}", path.display()),
                ));
            }
            fs::remove_file(&path)?;
        }
        let listener = UnixListener::bind(&path)?;
        fs::set_permissions(&path, fs::Permissions::from_mode(0o600))?;
        listener.set_nonblocking(true)?;
        let (wake_r, wake_w) = pipe()?;
        let shared = Arc::new(Shared {
            st: Mutex::new(State {
                jobs: VecDeque::new(),
                running: None,
                conns: HashMap::new(),
                next_conn: 1,
                closed: false,
                retry: false,
                idle_at: None,
                last_active: Instant::now(),
                wd,
            }),
            cond: Condvar::new(),
            wake_w,
            info,
            interrupter: Mutex::new(None),
        });
        let sh = Arc::clone(&shared);
        let accept = spawn_masked("mcplite-live-accept", move || accept_loop(listener, sh))?;
        Ok(Listener { shared, accept: Some(accept), wake_r, path })
    }

    /// From now on, a cancellation of the call that is running interrupts
    /// it with `f` (which must leave no interrupt pending once the call has
    /// ended: the caller consumes a late one before R returns to the prompt).
    pub fn set_interrupter(&self, f: Interrupter) {
        *self.shared.interrupter.lock().unwrap_or_else(|p| p.into_inner()) = Some(f);
    }

    /// The socket's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The descriptor R's input handler watches.
    pub fn wake_fd(&self) -> RawFd {
        self.wake_r.as_raw_fd()
    }

    /// Empty the wake pipe (the handler does, each time it runs).
    pub fn drain(&self) {
        let mut buf = [0u8; 256];
        // SAFETY: a valid non-blocking descriptor and buffer.
        while unsafe { libc::read(self.wake_r.as_raw_fd(), buf.as_mut_ptr() as *mut libc::c_void, buf.len()) } > 0 {}
    }

    /// R is idle at the prompt now.
    pub fn confirm_idle(&self) {
        self.shared.lock().idle_at = Some(Instant::now());
        self.shared.cond.notify_all();
    }

    /// R was woken but not idle (its user's code runs, or R waits inside a
    /// function such as `Sys.sleep()`, which runs the handler too; the
    /// handler emptied the pipe). While calls wait, R is woken again every
    /// [`ACCEPT_POLL_MS`] (by the accepting thread), so a waiting call runs
    /// soon after R is back at the prompt however the user's code ended (R
    /// runs no task callback after an error).
    pub fn retry_later(&self) {
        self.shared.lock().retry = true;
    }

    /// The user's command ended (R's task callback), in working directory
    /// `wd`.
    pub fn touch(&self, wd: String) {
        let mut st = self.shared.lock();
        st.last_active = Instant::now();
        st.wd = wd;
    }

    /// Are calls waiting?
    pub fn has_jobs(&self) -> bool {
        !self.shared.lock().jobs.is_empty()
    }

    /// The next call, marked running; its server is told it started.
    pub fn next_job(&self) -> Option<Job> {
        let job = {
            let mut st = self.shared.lock();
            let job = st.jobs.pop_front()?;
            st.running = Some((job.conn, job.id));
            job
        };
        // A server that is gone is noticed by its reading thread.
        let _ = job.to.send(&json!({"type": "started", "id": job.id}), &[]);
        Some(job)
    }

    /// The call ended: send its outcome (`header` holds the R side's
    /// fields; `type` and `id` are set here).
    pub fn finish(&self, job: Job, header: Value, body: &[u8]) -> io::Result<()> {
        {
            let mut st = self.shared.lock();
            st.running = None;
            st.last_active = Instant::now();
        }
        let mut h = match header {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        h.insert("type".into(), Value::from("result"));
        h.insert("id".into(), Value::from(job.id));
        job.to.send(&Value::Object(h), body)
    }

    /// Stop listening: connections are closed, waiting calls dropped, the
    /// socket removed.
    pub fn close(&mut self) {
        {
            let mut st = self.shared.lock();
            if st.closed {
                return;
            }
            st.closed = true;
            st.jobs.clear();
            for c in st.conns.values() {
                let _ = c.stream.shutdown(std::net::Shutdown::Both);
            }
            st.conns.clear();
        }
        self.shared.cond.notify_all();
        let _ = fs::remove_file(&self.path);
        if let Some(h) = self.accept.take() {
            let _ = h.join();
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.close();
    }
}

fn accept_loop(listener: UnixListener, sh: Arc<Shared>) {
    loop {
        let wake = {
            let mut st = sh.lock();
            if st.closed {
                return;
            }
            let wake = st.retry && !st.jobs.is_empty();
            st.retry = false;
            wake
        };
        if wake {
            sh.wake(); // Listener::retry_later
        }
        let mut pfd = libc::pollfd { fd: listener.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        // SAFETY: one valid pollfd.
        unsafe { libc::poll(&mut pfd, 1, ACCEPT_POLL_MS) };
        let stream = match listener.accept() {
            Ok((s, _)) => s,
            Err(_) => continue,
        };
        let _ = stream.set_nonblocking(false);
        no_sigpipe(&stream);
        if let Err(e) = check_peer(&stream) {
            let _ = write_frame(&stream, &json!({"type": "refused", "message": e.to_string()}), &[]);
            continue;
        }
        let Ok(reader) = stream.try_clone() else { continue };
        let conn = Arc::new(Conn { stream, write: Mutex::new(()) });
        let id = {
            let mut st = sh.lock();
            if st.closed {
                return;
            }
            let id = st.next_conn;
            st.next_conn += 1;
            st.conns.insert(id, Arc::clone(&conn));
            id
        };
        let sh2 = Arc::clone(&sh);
        let _ = spawn_masked("mcplite-live-conn", move || conn_loop(id, conn, reader, sh2));
    }
}

fn error(message: &str) -> Value {
    json!({"type": "error", "message": message})
}

fn conn_loop(cid: u64, conn: Arc<Conn>, mut reader: UnixStream, sh: Arc<Shared>) {
    while let Ok(Some(f)) = read_frame(&mut reader) {
        if !on_frame(cid, &conn, f, &sh) {
            break;
        }
    }
    let mut st = sh.lock();
    st.conns.remove(&cid);
    st.jobs.retain(|j| j.conn != cid);
}

/// Answer one message; false ends the connection.
fn on_frame(cid: u64, conn: &Arc<Conn>, f: Frame, sh: &Shared) -> bool {
    match f.kind() {
        "hello" => {
            let theirs = f.header.get("protocol").and_then(Value::as_u64);
            if theirs != Some(PROTOCOL) {
                let msg = format!(
                    "this session speaks live-session protocol {PROTOCOL}, the server {}: use the same mcplite version in both",
                    theirs.map_or("none".to_string(), |p| p.to_string())
                );
                let _ = conn.send(&error(&msg), &[]);
                return false;
            }
            conn.send(&json!({"type": "hello", "protocol": PROTOCOL}), &[]).is_ok()
        }
        "info" => conn.send(&json!({"type": "info", "info": sh.info(true)}), &[]).is_ok(),
        "call" => {
            let Some(id) = f.id() else {
                return conn.send(&error("a call needs a numeric id"), &[]).is_ok();
            };
            let job = Job { conn: cid, id, header: f.header, body: f.body, to: Arc::clone(conn) };
            {
                let mut st = sh.lock();
                if st.closed {
                    return false;
                }
                st.jobs.push_back(job);
            }
            sh.wake();
            true
        }
        "cancel" => {
            let Some(id) = f.id() else { return true };
            let removed = {
                let mut st = sh.lock();
                let before = st.jobs.len();
                st.jobs.retain(|j| !(j.conn == cid && j.id == id));
                let removed = st.jobs.len() != before;
                // A call that already started ("started" was sent) is
                // interrupted, under the lock, so while it still runs:
                // [`Listener::finish`] takes the lock to end it.
                if !removed && st.running == Some((cid, id)) {
                    if let Some(f) = sh.interrupter.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
                        f();
                    }
                }
                removed
            };
            !removed || conn.send(&json!({"type": "cancelled", "id": id}), &[]).is_ok()
        }
        _ => conn.send(&error("unknown message type"), &[]).is_ok(),
    }
}

/// Seconds since the Unix epoch (for `started` in the session's info).
pub fn unix_now() -> f64 {
    SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64())
}
