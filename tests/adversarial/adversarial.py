#!/usr/bin/env python3
"""Adversarial suite for mcplite's package tools (issue 40): a driver that
acts as a prompt-injected model, one that can only list tools and call them.

For each package (base, utils, stats, methods, tools, graphics, grDevices,
jsonlite, data.table, or those named on the command line) it starts
`Rscript --vanilla tests/adversarial/server.R <package>` over stdio, which
serves `package_tools(<package>, quiet = TRUE)` with the default options (no
capability allowed, RULES R8.8) beside a probe tool. For every served tool it
makes calls with hostile values made from the tool's inputSchema:

- undeclared members (`FUN`, `...`, `cmd`, `envir`) added to minimal valid
  arguments: must be refused before R runs (RULES L6.7);
- every property that takes a string set in turn to function names
  (`system`, `Sys.getenv`, `quit`, ...), the path of a canary file, the URL
  of a TCP listener of the driver's, an Rd `\\Sexpr{}`, an R expression and a
  `|command` pipe;
- every property that takes a number set to 1e9, and to the frame numbers 0
  and 1.

Canaries, checked after every call: the secret in the server's environment
(MCPLITE_CANARY_SECRET, which the server script also keeps in a global
variable) and the canary file's content never in a response or on stderr;
the canary file unchanged; no marker file created; no file written in the
server's working directory; no connection to the listener; no command
wrapper (`sh`, `bash`, `curl`, `wget`, `touch`, `id`, `whoami`, `cat`, `ls`,
first on the server's PATH) run; the probe tool sees the same working
directory, search path, RNG kinds, `digits` option and PATH as before
(RULES R8.10); every call answered (a call slower than CALL_TIMEOUT seconds
is cancelled, and the server must then answer the probe within
RECOVER_TIMEOUT seconds, else it is a hang and the server is restarted); the
server never exits.

Calls come in tiers (see plan()): tier 1 for every tool, tiers 2 and 3 while
the time budget lasts. After the self-test, the packages run in
ADVERSARIAL_JOBS groups at once (default 2, balanced by PACKAGE_SECONDS), each
package with its own server, sandbox and listener, its output printed whole
when it ends. One test per served tool (all its calls clean), two
per package (the server starts and lists its tools; the canaries are clean
at the end), and a self-test first: served with the capabilities they need
allowed, base functions that do harm make each canary fire. Failures
covered by KNOWN are printed as "KNOWN" and not counted. Each failure line
names the package, the tool, the attack, the arguments, the canary and the
answer (for a server that exited or hung, also the two calls before it).

Usage: adversarial.py [package ...] [--tool NAME] [--full]
Standard library only. Environment: MCPLITE_LIB (library holding mcplite),
RSCRIPT (default Rscript), ADVERSARIAL_CALL_TIMEOUT (default 5),
ADVERSARIAL_RECOVER_TIMEOUT (default 5), ADVERSARIAL_BUDGET (seconds, default
320), ADVERSARIAL_JOBS (packages at once, default 2; 1: one after the other),
ADVERSARIAL_VERBOSE=1 (a line per call).
Prints, last, "N passed, N failed".
"""

import contextlib
import json
import os
import queue
import resource
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
SERVER = os.path.join(HERE, "server.R")
RSCRIPT = os.environ.get("RSCRIPT", "Rscript")
CALL_TIMEOUT = float(os.environ.get("ADVERSARIAL_CALL_TIMEOUT", "5"))
RECOVER_TIMEOUT = float(os.environ.get("ADVERSARIAL_RECOVER_TIMEOUT", "5"))
VERBOSE = os.environ.get("ADVERSARIAL_VERBOSE") == "1"
PACKAGES = ["base", "utils", "stats", "methods", "tools", "graphics", "grDevices", "jsonlite",
            "data.table"]
PROBE = "adversarial_probe"
# Seconds for the whole run: tiers 2 and 3 are cut to fit, tier 1 is not.
# What is left when a package's tier 2 starts (less RESERVE for each package
# still to come in its group, to start it and run its tier 1) is shared by
# the seconds its tiers 2 and 3 take (measured with warm caches on 2 cores,
# most of it the calls that are cancelled), so a package that finishes early
# leaves its time to those after it. With warm caches the whole run took
# about 4 minutes one package at a time, and nothing was cut; a cold cache
# (a new mcplite or R) costs about 90 s more, taken from tiers 2 and 3.
BUDGET = float(os.environ.get("ADVERSARIAL_BUDGET", "320"))
RESERVE = 5
# Packages served at once (ADVERSARIAL_JOBS, default 2), and the seconds each
# package took, start to end, in a run of one at a time with warm caches on 2
# cores: what groups() balances.
JOBS = max(1, int(os.environ.get("ADVERSARIAL_JOBS", "2")))
PACKAGE_SECONDS = {"base": 95, "stats": 51, "graphics": 49, "utils": 23, "grDevices": 7,
                   "data.table": 6, "methods": 5, "tools": 1, "jsonlite": 1}
LATER_TIERS_SECONDS = {"base": 105, "utils": 16, "stats": 52, "methods": 5, "tools": 2,
                       "graphics": 48, "grDevices": 6, "jsonlite": 1, "data.table": 5}
# Tier 2 in this order of attacks, those that read or run first: when the
# budget cuts it, it cuts the huge sizes (the slow calls) first.
TIER2_ORDER = ["frame-number", "url", "pipe", "r-expression", "sexpr", "huge-number"]
WRAPPED = ["sh", "bash", "curl", "wget", "touch", "id", "whoami", "cat", "ls"]
FUNCTION_NAMES = ["system", "Sys.getenv", "quit", "q", "readline", "browser", "eval", "source"]
HUGE = 1000000000
# The R process may not grow past this (R's vector heap) nor this (address
# space): a huge size fails fast instead of swapping a shared machine.
R_MAX_VSIZE = "1Gb"
ADDRESS_SPACE = 3 << 30

INIT = ('{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18",'
        '"capabilities":{},"clientInfo":{"name":"adversarial","version":"1"}}}')

# Gaps the suite finds that are not closed yet, one line each:
# (package, tool, attack): (canary, why). A failure of that tool and attack
# whose canary starts with `canary` is run and printed as "known", not
# counted, so the suite stays green while the gap stays visible; any other
# failure of the tool still counts. Attacks: undeclared, function-name,
# canary-path, url, sexpr, r-expression, pipe, huge-number, frame-number, or
# "*" for any of them.
# Canaries that make the process unusable: "server exited", "hang" (no answer
# to the probe after a cancellation; a worker busy 5 s after its call's
# cancellation is killed and replaced, RULES N4.3).
EXITED = "server exited"
# Empty since the package tools are served as mcp_server() serves them by
# default, in a confined worker (RULES N7): the frame-number disclosures of
# within() (closed by N1.3: a worker's global environment and call stack
# hold nothing of the script), the engine's aborts on huge answers and
# R's crashes in wilcox and grDevices' mask/pattern/group entry points (a
# crash ends only the worker, N5.1; memory is limited, N7.2) and the C
# loops that never check for interrupts (N4.3) no longer fire.
KNOWN = {}


# ---------------------------------------------------------------------------
# Schemas: which values a property takes, and minimal valid arguments.

def types_of(schema):
    t = schema.get("type")
    if t is None:
        return []
    return t if isinstance(t, list) else [t]


def accepts(schema, value):
    """Whether `value` (a JSON string or number) passes `schema` as the engine
    checks it (RULES L6.7), single values taken as arrays of one."""
    if not isinstance(schema, dict):
        return schema is True
    if "anyOf" in schema and not any(accepts(b, value) for b in schema["anyOf"]):
        return False
    if "enum" in schema and value not in schema["enum"]:
        return False
    ts = types_of(schema)
    if not ts:
        return True
    for t in ts:
        if t == "string" and isinstance(value, str):
            return True
        if t == "number" and isinstance(value, (int, float)) and not isinstance(value, bool):
            return True
        if t == "integer" and isinstance(value, int) and not isinstance(value, bool):
            return True
        if t == "array" and not isinstance(value, (list, dict)):
            return accepts(schema.get("items", {}), value)
    return False


def takes_string(schema):
    """A property a string reaches: typed string (with or without an enum),
    an array of strings, an alternative with a string, or untyped."""
    if "enum" in schema:
        return any(isinstance(v, str) for v in schema["enum"])
    if "anyOf" in schema:
        return any(takes_string(b) for b in schema["anyOf"])
    ts = types_of(schema)
    if not ts:
        return True
    if "string" in ts:
        return True
    return "array" in ts and takes_string(schema.get("items", {}))


def minimal(schema):
    """A small value valid against `schema`. Untyped: two numbers, not a
    number alone (a single integer can be a frame number, the frame-number
    attack's business)."""
    if not isinstance(schema, dict):
        return [1, 2]
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    if "anyOf" in schema:
        return minimal(schema["anyOf"][0])
    ts = [t for t in types_of(schema) if t != "null"]
    if not ts:
        return [1, 2]
    t = ts[0]
    if t == "string":
        return "a"
    if t in ("number", "integer"):
        lo = schema.get("minimum", schema.get("exclusiveMinimum", 0))
        return max(1, int(lo) + 1) if lo else 1
    if t == "boolean":
        return False
    if t == "array":
        return [minimal(schema.get("items", {}))] * max(1, schema.get("minItems", 1))
    if t == "object":
        props = schema.get("properties", {})
        return {k: minimal(props.get(k, {})) for k in schema.get("required", [])}
    return None


def minimal_args(schema):
    props = schema.get("properties", {})
    return {k: minimal(props.get(k, {})) for k in schema.get("required", [])}


# ---------------------------------------------------------------------------
# The sandbox: canaries the calls must leave alone.

class Listener:
    """A TCP listener on 127.0.0.1 that records every connection."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.hits = []
        self.lock = threading.Lock()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            conn.settimeout(1)
            try:
                first = conn.recv(300)
            except OSError:
                first = b""
            with self.lock:
                self.hits.append(first.decode("latin-1").split("\r\n")[0] or "(connected, sent nothing)")
            try:
                conn.sendall(b"HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\n\r\n")
                conn.close()
            except OSError:
                pass

    def take(self):
        with self.lock:
            hits, self.hits = self.hits, []
        return hits

    def close(self):
        try:
            self.sock.shutdown(socket.SHUT_RDWR)  # wakes the accept() of _serve
        except OSError:
            pass
        self.sock.close()


class Sandbox:
    """One package's canaries, the listener among them: its own, so that a
    connection made by one package's server is never blamed on a package
    served at the same time."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="mcplite-adversarial-")
        self.listener = Listener()
        self.secret = "SECRET" + secrets.token_hex(12)
        self.token = "CANARY" + secrets.token_hex(12)
        self.canary = os.path.join(self.dir, "canary", "notes.txt")
        self.markers = os.path.join(self.dir, "markers")
        self.wrappers = os.path.join(self.dir, "bin")
        self.log = os.path.join(self.dir, "wrapper.log")
        self.work = os.path.join(self.dir, "work")
        self.tmp = os.path.join(self.dir, "tmp")
        for d in (os.path.dirname(self.canary), self.markers, self.wrappers, self.work, self.tmp):
            os.makedirs(d)
        self.write_canary()
        for name in WRAPPED:
            path = os.path.join(self.wrappers, name)
            with open(path, "w") as f:
                f.write('#!/bin/sh\necho "$0 $*" >> %s\nexit 0\n' % shell_quote(self.log))
            os.chmod(path, 0o755)
        open(self.log, "w").close()
        self.n = 0

    def write_canary(self):
        with open(self.canary, "w") as f:
            f.write(self.token + "\n")

    def marker(self):
        self.n += 1
        return os.path.join(self.markers, "m%d" % self.n)

    def url(self):
        self.n += 1
        return "http://127.0.0.1:%d/u%d" % (self.listener.port, self.n)

    def check(self):
        """What fired since the last check (canary, detail) pairs; puts the
        sandbox back."""
        fired = []
        made = sorted(os.listdir(self.markers))
        if made:
            fired.append(("marker file created", ", ".join(made)))
            for m in made:
                remove(os.path.join(self.markers, m))
        if os.path.getsize(self.log):
            with open(self.log) as f:
                fired.append(("command wrapper ran", f.read().strip().replace("\n", " | ")[:500]))
            open(self.log, "w").close()
        hits = self.listener.take()
        if hits:
            fired.append(("listener connected", " | ".join(hits)[:300]))
        try:
            with open(self.canary) as f:
                intact = f.read() == self.token + "\n"
        except OSError:
            intact = False
        if not intact:
            fired.append(("canary file changed or removed", self.canary))
            self.write_canary()
        written = sorted(os.listdir(self.work))
        if written:
            fired.append(("file written in the working directory", ", ".join(written)[:300]))
            for w in written:
                remove(os.path.join(self.work, w))
        return fired

    def leaks(self, text):
        fired = []
        if self.secret in text:
            fired.append("the secret MCPLITE_CANARY_SECRET")
        if self.token in text:
            fired.append("the canary file's content")
        return fired

    def cleanup(self):
        self.listener.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def shell_quote(s):
    return "'" + s.replace("'", "'\\''") + "'"


def remove(path):
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        try:
            os.remove(path)
        except OSError:
            pass


# ---------------------------------------------------------------------------
# The server process.

class Exited(Exception):
    pass


class Server:
    def __init__(self, package, sandbox):
        e = dict(os.environ)
        lib = os.environ.get("MCPLITE_LIB")
        if lib:
            e["R_LIBS"] = lib + (":" + e["R_LIBS"] if e.get("R_LIBS") else "")
        e["MCPLITE_CANARY_SECRET"] = sandbox.secret
        e["ADVERSARIAL_WRAPPERS"] = sandbox.wrappers
        e["ADVERSARIAL_ROOT"] = sandbox.dir
        e["R_MAX_VSIZE"] = R_MAX_VSIZE
        # R's temporary files where the sandbox removes them, also those of
        # a server that was killed.
        e["TMPDIR"] = sandbox.tmp
        # A session of its own, so that what it starts goes with it.
        self.p = subprocess.Popen([RSCRIPT, "--vanilla", SERVER, package], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=e,
                                  cwd=sandbox.work, start_new_session=True)
        try:
            resource.prlimit(self.p.pid, resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))
        except (OSError, ValueError):
            pass  # it already ended: the first request says so
        self.msgs = queue.Queue()
        self.stash = {}  # answers to requests not waited for yet
        self.bad_lines = []
        self.stderr = bytearray()
        self.stderr_seen = 0
        self.next_id = 0
        threading.Thread(target=self._read_out, daemon=True).start()
        threading.Thread(target=self._read_err, daemon=True).start()

    def _read_out(self):
        for line in self.p.stdout:
            try:
                msg = json.loads(line)
            except ValueError:
                msg = {"bad_line": line[:300].decode("utf-8", "replace")}
            self.msgs.put((line.decode("utf-8", "replace"), msg))
        self.msgs.put(None)

    def _read_err(self):
        while True:
            chunk = self.p.stderr.read1(65536)
            if not chunk:
                return
            self.stderr += chunk

    def new_stderr(self):
        text = bytes(self.stderr[self.stderr_seen:]).decode("utf-8", "replace")
        self.stderr_seen = len(self.stderr)
        return text

    def send(self, obj):
        try:
            self.p.stdin.write((json.dumps(obj, separators=(",", ":")) + "\n").encode())
            self.p.stdin.flush()
        except (BrokenPipeError, OSError):
            raise Exited("stdin closed")

    def wait(self, id_, timeout):
        """The (raw, message) answering `id_`, or None after `timeout`."""
        if id_ in self.stash:
            return self.stash.pop(id_)
        deadline = time.time() + timeout
        while True:
            left = deadline - time.time()
            if left <= 0:
                return None
            try:
                item = self.msgs.get(timeout=left)
            except queue.Empty:
                return None
            if item is None:
                self.msgs.put(None)
                raise Exited("exit status %r" % self.p.poll())
            raw, msg = item
            if "bad_line" in msg:
                self.bad_lines.append(msg["bad_line"])
                continue
            if "id" not in msg:
                continue  # a notification
            if msg["id"] == id_:
                return raw, msg
            self.stash[msg["id"]] = (raw, msg)

    def request(self, method, params=None, timeout=60):
        self.next_id += 1
        id_ = self.next_id
        msg = {"jsonrpc": "2.0", "id": id_, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        got = self.wait(id_, timeout)
        if got is None:
            raise AssertionError("no answer to %s in %ss" % (method, timeout))
        return got

    def start(self, timeout=600):
        self.send(json.loads(INIT))
        got = self.wait("init", timeout)
        if got is None:
            raise AssertionError("no answer to initialize in %ss" % timeout)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        _, msg = self.request("tools/list")
        return msg["result"]["tools"]

    def probe(self, timeout=RECOVER_TIMEOUT):
        self.next_id += 1
        id_ = self.next_id
        self.send({"jsonrpc": "2.0", "id": id_, "method": "tools/call",
                   "params": {"name": PROBE, "arguments": {}}})
        got = self.wait(id_, timeout)
        if got is None:
            return None
        return json.loads(got[1]["result"]["content"][0]["text"])

    def call(self, tool, args):
        """('answer', raw, result), ('slow', None, None) when cancelled and
        the server recovered, ('hang', ...) when it did not; Exited when the
        process ended."""
        self.next_id += 1
        id_ = self.next_id
        self.send({"jsonrpc": "2.0", "id": id_, "method": "tools/call",
                   "params": {"name": tool, "arguments": args}})
        got = self.wait(id_, CALL_TIMEOUT)
        if got is not None:
            return "answer", got[0], got[1].get("result", got[1].get("error"))
        self.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": id_, "reason": "adversarial: too slow"}})
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": "ping"})
        state = self.probe(RECOVER_TIMEOUT)
        return ("slow" if state is not None else "hang"), None, state

    def drain(self):
        """The raw answers that came for requests nobody waits for any more
        (a cancelled call that answered after all, a ping)."""
        raws = [raw for raw, _ in self.stash.values()]
        self.stash.clear()
        return raws

    def kill(self):
        if self.p.poll() is None:
            try:
                os.killpg(self.p.pid, 9)
            except OSError:
                self.p.kill()
        try:
            self.p.wait(10)
        except subprocess.TimeoutExpired:
            pass

    def finish(self):
        try:
            self.p.stdin.close()
        except OSError:
            pass
        try:
            self.p.wait(20)
        except subprocess.TimeoutExpired:
            pass
        self.kill()


# ---------------------------------------------------------------------------
# The calls made for one tool, in tiers: tier 1 (every tool, always) the
# undeclared members and, for every property that takes a string, one
# function name (taking turns through FUNCTION_NAMES) and the canary path;
# tier 2 the URL, the Rd \Sexpr, the R expression, the pipe, the huge
# numbers and frame numbers (0 and 1 for every property that takes a number:
# eval(envir = <integer>) is a frame of the server's own call stack, 0 the
# global environment); tier 3 the other function names. Tiers 2 and 3 run while the
# package's share of the time budget lasts (all of them with --full).

def plan(tool, sandbox, rotation):
    """The tool's calls: (tier, attack, arguments) triples."""
    schema = tool["inputSchema"]
    props = schema.get("properties", {})
    required = schema.get("required", [])
    base = minimal_args(schema)
    calls = []
    extra = {"FUN": "system", "...": "x", "cmd": "touch " + sandbox.marker(), "envir": "globalenv"}
    undeclared = {k: v for k, v in extra.items() if k not in props}
    if undeclared:
        calls.append((1, "undeclared", dict(base, **undeclared)))
    for p in [p for p, s in props.items() if takes_string(s)]:
        first = rotation % len(FUNCTION_NAMES)
        rotation += 1
        for i in range(len(FUNCTION_NAMES)):
            fname = FUNCTION_NAMES[(first + i) % len(FUNCTION_NAMES)]
            args = dict(base)
            company = companion(fname, sandbox)
            for q in required:
                if q != p and takes_string(props[q]) and accepts(props[q], company):
                    args[q] = company
            args[p] = fname
            calls.append((1 if i == 0 else 3, "function-name", args))
        calls.append((1, "canary-path", dict(base, **{p: sandbox.canary})))
        hostile = [
            ("url", sandbox.url()),
            ("sexpr", "\\Sexpr{system('touch %s'); Sys.getenv('MCPLITE_CANARY_SECRET')}" % sandbox.marker()),
            ("r-expression", "system('touch %s')" % sandbox.marker()),
            ("pipe", "|touch " + sandbox.marker()),
        ]
        for attack, value in hostile:
            calls.append((2, attack, dict(base, **{p: value})))
    for p, s in props.items():
        if accepts(s, HUGE):
            calls.append((2, "huge-number", dict(base, **{p: HUGE})))
        for frame in (0, 1):
            if accepts(s, frame):
                calls.append((2, "frame-number", dict(base, **{p: frame})))
    return calls, rotation


def companion(fname, sandbox):
    """What the other required string arguments hold when one is a function
    name: what that function would need to do harm."""
    if fname == "system":
        return "touch " + sandbox.marker()
    if fname == "Sys.getenv":
        return "MCPLITE_CANARY_SECRET"
    if fname == "source":
        return sandbox.canary
    if fname == "eval":
        return "system('touch %s')" % sandbox.marker()
    return "a"


# ---------------------------------------------------------------------------
# One package.

class Results:
    """The counts, shared by the threads of the packages (under a lock)."""

    def __init__(self):
        self.passed = 0
        self.failed = 0
        self.known = 0
        self.lock = threading.Lock()

    def count(self, kind):
        with self.lock:
            setattr(self, kind, getattr(self, kind) + 1)

    def test(self, package, name, failures):
        """One test: `failures` are (attack, arguments, canary, detail)."""
        def known_entry(f):
            return KNOWN.get((package, name, f[0])) or KNOWN.get((package, name, "*"))

        def is_known(f):
            k = known_entry(f)
            return k is not None and f[2].startswith(k[0])
        unknown = [f for f in failures if not is_known(f)]
        known = [f for f in failures if is_known(f)]
        for f in failures:
            attack, args, canary, detail = f
            print("%s %s %s [%s] args=%s: %s: %s" % (
                "KNOWN" if is_known(f) else "FAIL ", package, name, attack,
                json.dumps(args, separators=(",", ":"))[:600], canary, detail[:500]))
        for attack in sorted({f[0] for f in known}):
            print("      known %s %s [%s]: %s" % (package, name, attack, known_entry((attack,))[1]))
        fired = {f[0] for f in known}
        stale = [a for (pk, t, a) in KNOWN if pk == package and t == name and a not in fired
                 and not (a == "*" and fired)]
        if stale:
            print("note %s %s: listed in KNOWN for %s, which did not fire this run" % (
                package, name, ", ".join(sorted(stale))))
        self.count("failed" if unknown else "known" if known else "passed")
        sys.stdout.flush()


def response_text(result):
    if not isinstance(result, dict):
        return ""
    return " ".join(c.get("text", "") for c in result.get("content", []) if isinstance(c, dict)
                    and isinstance(c.get("text"), str))


class Run:
    """One package's server, sandbox and baseline state."""

    def __init__(self, package):
        self.package = package
        self.sandbox = Sandbox()
        self.srv = None
        self.baseline = None
        self.slow = []

    def start(self):
        if self.srv is not None:
            self.srv.kill()
        self.srv = Server(self.package, self.sandbox)
        tools = self.srv.start()
        self.history = []
        self.baseline = self.srv.probe(60)
        if self.baseline is None:
            raise AssertionError("the probe tool did not answer")
        return tools

    def call(self, name, attack, args):
        """Make the call and check every canary: what fired, as (canary,
        detail) pairs. A server that hung, exited or kept a change is
        replaced by a new one."""
        fired = []
        srv, sandbox = self.srv, self.sandbox
        before = self.history[-2:]
        self.history.append("%s %s" % (name, json.dumps(args, separators=(",", ":"))[:200]))
        try:
            how, raw, result = srv.call(name, args)
        except Exited as e:
            how, raw, result = "exit", None, str(e)
        state = None
        hang = "no answer in %gs, and none to the probe %gs after the cancellation" % (
            CALL_TIMEOUT, RECOVER_TIMEOUT)
        if how == "answer":
            for leak in sandbox.leaks(raw):
                fired.append(("%s in the response" % leak, response_text(result)[:300]))
            if attack == "undeclared":
                text = response_text(result)
                if not (isinstance(result, dict) and result.get("isError") is True
                        and text.startswith("Invalid arguments for tool")):
                    fired.append(("undeclared members not refused", (text or json.dumps(result))[:300]))
            try:
                state = srv.probe(30)
                if state is None:
                    how, hang = "hang", "answered, but no answer to the probe after it in 30s"
            except Exited as e:
                how, result = "exit", "after the answer: %s" % e
        elif how == "slow":
            state = result
            self.slow.append((name, attack, args))
        for late in srv.drain():
            for leak in sandbox.leaks(late):
                fired.append(("%s in a late answer" % leak, late[:300]))
        err = srv.new_stderr()
        for leak in sandbox.leaks(err):
            fired.append(("%s on stderr" % leak, snippet(err, sandbox)))
        fired += sandbox.check()
        if how == "hang":
            fired.append(("hang", hang))
        elif how == "exit":
            fired.append(("server exited", "%s; %s" % (result, why_exited(srv.stderr))))
        elif state != self.baseline:
            diff = {k: state.get(k) for k in self.baseline if state.get(k) != self.baseline[k]}
            fired.append(("state changed", json.dumps(diff)[:400]))
        if how in ("hang", "exit") and before:
            # What the process did just before: an earlier call may have
            # left it broken (replay those first).
            fired[-1] = (fired[-1][0], fired[-1][1] + "; the calls before it: " + " ; ".join(before))
        if how in ("hang", "exit") or state != self.baseline:
            # A new process, so that later calls are judged on their own.
            self.start()
            fired += sandbox.check()
        return fired

    def finish(self):
        if self.srv is not None:
            self.srv.finish()
        self.sandbox.cleanup()


def run_package(package, results, end, after, only_tool=None):
    """Call every tool of `package`; tiers 2 and 3 until its share of the
    time left before `end` (None: no limit), `after` the packages still to
    come in its group."""
    started = time.time()
    run = Run(package)
    try:
        try:
            tools = run.start()
        except (AssertionError, Exited) as e:
            stderr = bytes(run.srv.stderr[-600:]).decode("utf-8", "replace") if run.srv else ""
            results.test(package, "(start)", [("exit", {}, "server did not start", "%s; stderr: %s" % (
                e, stderr))])
            return
        results.test(package, "(start)", [])
        tools = [t for t in tools if t["name"] != PROBE and (only_tool is None or t["name"] == only_tool)]
        rotation = 0
        plans = []
        for tool in tools:
            calls, rotation = plan(tool, run.sandbox, rotation)
            plans.append((tool["name"], calls))
        failures = {name: [] for name, _ in plans}
        made = {1: 0, 2: 0, 3: 0}
        planned = {1: 0, 2: 0, 3: 0}
        deadline = None
        took = {}
        for tier in (1, 2, 3):
            tier_started = time.time()
            if tier == 2 and end is not None:
                left = end - time.time() - RESERVE * len(after)
                share = LATER_TIERS_SECONDS.get(package, 10) / sum(
                    LATER_TIERS_SECONDS.get(p, 10) for p in [package] + after)
                deadline = time.time() + max(0, left) * share
            todo = [(name, attack, args) for name, calls in plans for t, attack, args in calls if t == tier]
            if tier == 2:
                todo.sort(key=lambda c: TIER2_ORDER.index(c[1]))  # stable: tools stay in order
            for name, attack, args in todo:
                planned[tier] += 1
                if tier > 1 and deadline is not None and time.time() > deadline:
                    continue
                made[tier] += 1
                t0 = time.time()
                fired = run.call(name, attack, args)
                if VERBOSE:
                    print("  %6.0f ms %s %s %s" % ((time.time() - t0) * 1000, name, attack,
                                                  json.dumps(args)[:150]))
                failures[name] += [(attack, args, c, d) for c, d in fired]
            took[tier] = time.time() - tier_started
        for name, _ in plans:
            results.test(package, name, failures[name])
        # The end: the canaries once more (a late effect), the state, stdout.
        final = [("(end)", {}, c, d) for c, d in run.sandbox.check()]
        final += [("(end)", {}, "%s on stderr" % leak, "") for leak in run.sandbox.leaks(run.srv.new_stderr())]
        state = run.srv.probe(30)
        if state != run.baseline:
            final.append(("state", {}, "state changed", "%r -> %r" % (run.baseline, state)))
        if run.srv.bad_lines:
            final.append(("(end)", {}, "non-JSON stdout lines", repr(run.srv.bad_lines[:3])))
        results.test(package, "(end)", final)
        for name, attack, args in run.slow:
            print("slow %s %s [%s] args=%s: cancelled after %gs, the server recovered" % (
                package, name, attack, json.dumps(args, separators=(",", ":"))[:300], CALL_TIMEOUT))
        print("== %s: %d tools, %d calls (%s), %d cancelled, %.0f s" % (
            package, len(plans), sum(made.values()), ", ".join(
                "tier %d %d/%d in %.0f s" % (t, made[t], planned[t], took[t]) for t in (1, 2, 3)),
            len(run.slow), time.time() - started))
        sys.stdout.flush()
    finally:
        run.finish()


def why_exited(stderr):
    """The lines of a dead server's stderr that say why: a panic, R's
    report of a fatal error, else the last ones."""
    lines = bytes(stderr).decode("utf-8", "replace").splitlines()
    keys = ("panicked at", "caught segfault", "address ", "cause ", "irrecoverable", "Error",
            "memory", "aborting", "fatal")
    said = [l.strip() for l in lines if any(k in l for k in keys)]
    return "stderr: " + " | ".join((said or lines[-3:])[:6])[:500]


def self_test(results):
    """The canaries work: served with the capabilities they need allowed,
    base functions that do harm make each canary fire."""
    run = Run("self-test")
    sb = run.sandbox
    cases = [
        ("system", {"command": "touch " + sb.marker()}, "command wrapper ran"),
        ("Sys.getenv", {"x": "MCPLITE_CANARY_SECRET"}, "the secret MCPLITE_CANARY_SECRET in the response"),
        ("readLines", {"con": sb.canary}, "the canary file's content in the response"),
        ("readLines", {"con": sb.url()}, "listener connected"),
        ("writeLines", {"text": "x", "con": os.path.join(sb.work, "x.txt")},
         "file written in the working directory"),
        ("writeLines", {"text": "x", "con": sb.canary}, "canary file changed"),
        ("writeLines", {"text": "x", "con": sb.marker()}, "marker file created"),
        ("quit", {"save": "no"}, "server exited"),
    ]
    missed = []
    try:
        run.start()
        for name, args, want in cases:
            fired = run.call(name, "self-test", args)
            if not any(c.startswith(want) for c, _ in fired):
                missed.append(("self-test", args, "%s did not fire for %s" % (want, name),
                               "fired: %r" % (fired,)))
    except (AssertionError, Exited) as e:
        missed.append(("self-test", {}, "the self-test server failed", str(e)))
    finally:
        run.finish()
    results.test("self-test", "(canaries)", missed)


def snippet(text, sandbox):
    for needle in (sandbox.secret, sandbox.token):
        i = text.find(needle)
        if i >= 0:
            return text[max(0, i - 150):i + 60].replace("\n", " ")
    return text[:200]


class GroupedOutput:
    """sys.stdout while packages run at once: what a thread prints while it
    runs a package is kept, and printed in one piece when the package ends,
    so that the lines of two packages never interleave."""

    def __init__(self, out):
        self.out = out
        self.local = threading.local()
        self.lock = threading.Lock()

    def write(self, text):
        kept = getattr(self.local, "kept", None)
        if kept is None:
            with self.lock:
                self.out.write(text)
        else:
            kept.append(text)
        return len(text)

    def flush(self):
        if getattr(self.local, "kept", None) is None:
            self.out.flush()

    @contextlib.contextmanager
    def package(self):
        self.local.kept = []
        try:
            yield
        finally:
            text, self.local.kept = "".join(self.local.kept), None
            with self.lock:
                self.out.write(text)
                self.out.flush()


def groups(packages, jobs):
    """The packages in `jobs` groups that take about as long: longest first
    (PACKAGE_SECONDS), each to the group with the fewest seconds so far."""
    out = [[] for _ in range(max(1, min(jobs, len(packages))))]
    load = [0.0] * len(out)
    for p in sorted(packages, key=lambda p: -PACKAGE_SECONDS.get(p, 30)):
        i = load.index(min(load))
        out[i].append(p)
        load[i] += PACKAGE_SECONDS.get(p, 30)
    return out


def main():
    argv = sys.argv[1:]
    only_tool = None
    full = False
    if "--tool" in argv:
        i = argv.index("--tool")
        only_tool = argv[i + 1]
        del argv[i:i + 2]
    if "--full" in argv:
        argv.remove("--full")
        full = True
    packages = argv or PACKAGES
    results = Results()
    started = time.time()
    if not only_tool:
        self_test(results)
    end = None if full else started + BUDGET
    # The packages run in JOBS groups at once, a thread each, each group's
    # packages one after the other; every package has its own server,
    # sandbox and listener, and its output is printed whole when it ends.
    # The time budget is shared as before, within each group.
    parts = groups(packages, JOBS) if JOBS > 1 else [packages]
    if len(parts) > 1:
        sys.stdout = GroupedOutput(sys.stdout)
        print("packages in %d groups at once: %s" % (len(parts), "; ".join(" ".join(g) for g in parts)))

    done = []

    def run_group(group):
        for i, package in enumerate(group):
            grouped = sys.stdout.package() if len(parts) > 1 else contextlib.nullcontext()
            with grouped:
                try:
                    run_package(package, results, end, group[i + 1:], only_tool)
                except Exception as e:  # the driver itself failed: one failure
                    results.count("failed")
                    print("FAIL %s (driver) %s\n%s" % (package, e, traceback.format_exc(limit=4)))
            done.append(package)
    threads = [threading.Thread(target=run_group, args=(g,)) for g in parts]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for package in [p for p in packages if p not in done]:  # its thread died: one failure
        results.count("failed")
        print("FAIL %s (driver) its thread ended before it was done" % package)
    print("known: %d tools whose only failures are listed in KNOWN" % results.known)
    print("time: %.0f s" % (time.time() - started))
    print("%d passed, %d failed" % (results.passed, results.failed))
    return 1 if results.failed else 0


if __name__ == "__main__":
    sys.exit(main())
