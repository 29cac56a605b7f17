#!/usr/bin/env python3
"""Hostile stdio suite for mcplite (issue 8): spawns `Rscript --vanilla
tests/hostile/server.R` over pipes, as an MCP client would, and throws at it
every hostile input and misbehaving tool on the list. For each case the
server must give the right JSON-RPC answer (or a contained tool error), stay
up (a request sent after each case is answered), and keep stdout to exactly one
valid JSON-RPC response (or progress notification) per line (every stdout line of every process is
checked). Also: 100,000 pipelined mixed requests answered exactly once and in
order (pings may overtake calls, RULES C5) with RSS sampled, and the
process-level cases (quit(), SIGINT, SIGTERM, stdin closed mid-call, stdout
closed by the client). Calls that take time (issue 17) run against
tests/clients/servers/slow.R: progress tokens of every JSON type,
cancellations for never-sent ids, bursts of 1,000 cancellations,
cancellations racing completion, a tool under suspendInterrupts().

Standard library only. Environment: MCPLITE_LIB (library holding mcplite),
RSCRIPT (default: Rscript), HOSTILE_LOAD (number of load requests, default
100000), HOSTILE_REPORT (file to write measured figures to, optional).
Prints one line per case and, last, "N passed, N failed".
"""

import json
import os
import queue
import random
import shutil
import signal
import subprocess
import tempfile
import sys
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
SERVER = os.path.join(HERE, "server.R")
RSCRIPT = os.environ.get("RSCRIPT", "Rscript")
LOAD = int(os.environ.get("HOSTILE_LOAD", "100000"))
REPORT = os.environ.get("HOSTILE_REPORT")

INIT = ('{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18",'
        '"capabilities":{},"clientInfo":{"name":"hostile","version":"1"}}}')
MODERN_META = ('"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
               '"io.modelcontextprotocol/clientCapabilities":{}}')

figures = {}
CONTROL = bytes(range(0x20))


def env():
    e = dict(os.environ)
    lib = os.environ.get("MCPLITE_LIB")
    if lib:
        e["R_LIBS"] = lib + (":" + e["R_LIBS"] if e.get("R_LIBS") else "")
    return e


def call(id_, name, arguments=None, modern=False):
    params = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    p = json.dumps(params, separators=(",", ":"))
    if modern:
        p = p[:-1] + "," + MODERN_META + "}"
    return '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":%s}' % (json.dumps(id_), p)


def check_response_line(line):
    """One stdout line: valid UTF-8 JSON object, members jsonrpc, id, then
    result or error; or a progress notification (RULES C3.1). Returns the
    parsed object."""
    text = line.decode("utf-8")
    pairs = json.loads(text, object_pairs_hook=lambda kv: kv)
    keys = [k for k, _ in pairs]
    if keys == ["jsonrpc", "method", "params"] and dict(pairs)["method"] == "notifications/progress":
        pass
    elif keys not in (["jsonrpc", "id", "result"], ["jsonrpc", "id", "error"]):
        raise AssertionError("bad members %r in %s" % (keys, text[:300]))
    if len(line.translate(None, CONTROL)) != len(line):
        raise AssertionError("control byte in response")
    return json.loads(text)


class Server:
    def __init__(self, read_stdout=True, script=SERVER, extra_env=None):
        e = env()
        e.update(extra_env or {})
        self.p = subprocess.Popen([RSCRIPT, "--vanilla", script], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=e)
        self.lines = queue.Queue()
        self.stderr = bytearray()
        self.partial = b""
        self.nlines = 0
        self.bad_lines = []
        self.t_out = threading.Thread(target=self._read_out, daemon=True)
        self.t_err = threading.Thread(target=self._read_err, daemon=True)
        if read_stdout:
            self.t_out.start()
        self.t_err.start()

    def _read_out(self):
        buf = bytearray()
        fd = self.p.stdout.fileno()
        while True:
            try:
                chunk = os.read(fd, 1 << 20)
            except OSError:
                break
            if not chunk:
                break
            scan = len(buf)  # only the new bytes can hold a new LF
            buf += chunk
            start = 0
            while True:
                i = buf.find(b"\n", max(start, scan))
                if i < 0:
                    break
                line = bytes(buf[start:i])
                start = i + 1
                self.nlines += 1
                try:
                    check_response_line(line)
                except Exception as e:  # a non-protocol line on stdout
                    self.bad_lines.append("%s: %r" % (e, line[:200]))
                self.lines.put(line)
            del buf[:start]
        self.partial = bytes(buf)
        self.lines.put(None)

    def _read_err(self):
        while True:
            try:
                chunk = os.read(self.p.stderr.fileno(), 65536)
            except OSError:
                break
            if not chunk:
                break
            self.stderr += chunk

    def send(self, data):
        if isinstance(data, str):
            data = data.encode("utf-8")
        self.p.stdin.write(data)
        self.p.stdin.flush()

    def recv(self, timeout=60):
        line = self.lines.get(timeout=timeout)
        if line is None:
            raise AssertionError("stdout closed (exit %r); stderr tail: %s"
                                 % (self.p.poll(), bytes(self.stderr[-500:]).decode("utf-8", "replace")))
        return line

    def request(self, line, timeout=60):
        self.send(line + "\n")
        return json.loads(self.recv(timeout))

    def close_stdin(self):
        try:
            self.p.stdin.close()
        except BrokenPipeError:
            pass

    def finish(self, timeout=60):
        """Close stdin and wait: exit status 0, no stray output."""
        self.close_stdin()
        rc = self.p.wait(timeout)
        self.t_out.join(10)
        self.check_stdout()
        if rc != 0:
            raise AssertionError("exit status %r; stderr tail: %s" % (rc, self.stderr_text()[-800:]))

    def check_stdout(self):
        if self.bad_lines:
            raise AssertionError("non-protocol stdout lines: %s" % self.bad_lines[:3])
        if self.partial:
            raise AssertionError("unterminated stdout bytes: %r" % self.partial[:200])

    def stderr_text(self):
        return bytes(self.stderr).decode("utf-8", "replace")

    def rss_kb(self):
        with open("/proc/%d/status" % self.p.pid) as f:
            for l in f:
                if l.startswith("VmRSS:"):
                    return int(l.split()[1])
        return -1

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait(10)


# ---------------------------------------------------------------------------
# Cases in one long-lived session. Each case sends its line(s) followed by a
# sentinel request; the lines before its answer are the case's answers.

sentinel = [0]


def exchange(srv, data, timeout=120):
    # The sentinel is a modern server/discover: it keeps its place in the
    # order (a legacy ping may overtake a tool call, RULES C5).
    sentinel[0] += 1
    sid = "sentinel-%d" % sentinel[0]
    if isinstance(data, str):
        data = data.encode("utf-8")
    sentinel_line = '{"jsonrpc":"2.0","id":"%s","method":"server/discover","params":{%s}}\n' % (sid, MODERN_META)
    srv.send(data + b"\n" + sentinel_line.encode())
    got = []
    while True:
        line = srv.recv(timeout)
        msg = json.loads(line)
        if msg.get("id") == sid:
            if "supportedVersions" not in msg.get("result", {}):
                raise AssertionError("bad sentinel answer %r" % msg)
            return got, line
        got.append((msg, line))


def exchange_call(srv, data, id_raw, timeout=120):
    """exchange() for a tools/call of a server with workers (RULES N2.2):
    its answer may come after the sentinel's, so wait for both."""
    got, _ = exchange(srv, data, timeout)
    prefix = b'{"jsonrpc":"2.0","id":' + id_raw.encode() + b","
    while not any(line.startswith(prefix) for _, line in got):
        line = srv.recv(timeout)
        got.append((json.loads(line), line))
    return got


def expect_error(srv, data, code, id_raw="null", message=None, workers=False):
    got = exchange_call(srv, data, id_raw) if workers else exchange(srv, data)[0]
    if len(got) != 1:
        raise AssertionError("expected one answer, got %d" % len(got))
    msg, line = got[0]
    if "error" not in msg or msg["error"]["code"] != code:
        raise AssertionError("expected error %d, got %s" % (code, line[:300]))
    if message is not None and msg["error"]["message"] != message:
        raise AssertionError("message %r != %r" % (msg["error"]["message"], message))
    prefix = b'{"jsonrpc":"2.0","id":' + id_raw.encode() + b',"error":'
    if not line.startswith(prefix):
        raise AssertionError("id not echoed byte for byte: %s" % line[:200])


def expect_nothing(srv, data):
    got, _ = exchange(srv, data)
    if got:
        raise AssertionError("expected no answer, got %s" % got[0][1][:300])


def expect_tool(srv, id_, name, arguments=None, is_error=False, text=None, contains=None, modern=False,
                timeout=120, workers=False):
    data = call(id_, name, arguments, modern)
    got = exchange_call(srv, data, json.dumps(id_), timeout) if workers else exchange(srv, data, timeout)[0]
    if len(got) != 1:
        raise AssertionError("expected one answer, got %d" % len(got))
    msg, line = got[0]
    if msg.get("id") != id_ or "result" not in msg:
        raise AssertionError("expected a result for %r: %s" % (id_, line[:300]))
    r = msg["result"]
    if r.get("isError") is not is_error:
        raise AssertionError("isError %r: %s" % (r.get("isError"), line[:400]))
    t = r["content"][0].get("text")
    if text is not None and t != text:
        raise AssertionError("text %r != %r" % (t[:200], text[:200]))
    if contains is not None and not any(c in t for c in contains):
        raise AssertionError("text %r contains none of %r" % (t[:300], contains))
    return r, line


def session_cases():
    srv = Server()
    cases = []

    def case(name):
        def deco(f):
            cases.append((name, f))
            return f
        return deco

    @case("BOM at the very start, then initialize")
    def _():
        srv.send(b"\xef\xbb\xbf" + INIT.encode() + b"\n")
        msg = json.loads(srv.recv())
        assert msg["id"] == "init" and msg["result"]["protocolVersion"] == "2025-06-18", msg
        expect_nothing(srv, '{"jsonrpc":"2.0","method":"notifications/initialized"}')

    @case("a BOM later in the stream is a parse error")
    def _():
        expect_error(srv, b"\xef\xbb\xbf" + b'{"jsonrpc":"2.0","id":1,"method":"ping"}', -32700)

    @case("malformed JSON")
    def _():
        for bad in ['{"jsonrpc":', '{"a":1} x', "NaN", "{'a':1}", '{"a":1,}', "// c", "{\"a\":1}}"]:
            expect_error(srv, bad, -32700, message="Parse error")

    @case("blank and whitespace lines, CRLF")
    def _():
        for blank in [b"", b"   ", b"\t \t", b"\r", b" \r"]:
            expect_nothing(srv, blank)
        msg = srv.request('{"jsonrpc":"2.0","id":"crlf","method":"ping"}\r')
        assert msg == {"jsonrpc": "2.0", "id": "crlf", "result": {}}, msg

    @case("batches and non-objects")
    def _():
        for bad in ['[{"jsonrpc":"2.0","id":1,"method":"ping"}]', "[]", "null", "1", '"x"', "true"]:
            expect_error(srv, bad, -32600, message="Invalid Request")

    @case("every invalid id type")
    def _():
        for bad in ["null", "true", "false", "1.5", "1.0", "1e2", "-1E-2", "[]", "[1]", "{}", '{"a":1}']:
            expect_error(srv, '{"jsonrpc":"2.0","id":%s,"method":"ping"}' % bad, -32600)
        # envelope-invalid with a valid id: the id is echoed
        expect_error(srv, '{"jsonrpc":"1.0","id":7,"method":"ping"}', -32600, "7")
        expect_error(srv, '{"jsonrpc":"2.0","id":"m","method":42}', -32600, '"m"')

    @case("huge and odd ids echoed byte for byte")
    def _():
        for id_raw in ["9" * 1000, "-0", '"a\\u0041"', '""', '"' + "x" * (1 << 20) + '"',
                       '"\\ud800"', "12345678901234567890"]:
            line = '{"jsonrpc":"2.0","id":%s,"method":"ping"}' % id_raw
            srv.send(line + "\n")
            out = srv.recv()
            want = ('{"jsonrpc":"2.0","id":%s,"result":{}}' % id_raw).encode()
            assert out == want, out[:200]

    @case("unknown methods")
    def _():
        for m in ["resources/list", "prompts/get", "", "tools/call/x", "PING"]:
            expect_error(srv, '{"jsonrpc":"2.0","id":"u","method":%s}' % json.dumps(m), -32601, '"u"',
                         "Method not found")
        # modern claim: ping and initialize are gone
        expect_error(srv, '{"jsonrpc":"2.0","id":"p","method":"ping","params":{%s}}' % MODERN_META,
                     -32601, '"p"')

    @case("notifications with ids, notifications, client responses")
    def _():
        expect_error(srv, '{"jsonrpc":"2.0","id":5,"method":"notifications/initialized"}', -32600, "5")
        before = srv.stderr_text().count("a message for stderr")
        expect_nothing(srv, '{"jsonrpc":"2.0","method":"tools/call","params":{"name":"messenger"}}')
        expect_nothing(srv, '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}')
        expect_nothing(srv, '{"jsonrpc":"2.0","method":"whatever"}')
        expect_nothing(srv, '{"jsonrpc":"2.0","id":1,"result":{}}')
        expect_nothing(srv, '{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"x"}}')
        time.sleep(0.2)
        assert srv.stderr_text().count("a message for stderr") == before, "a tools/call notification ran"

    @case("10,000-deep nesting")
    def _():
        # Well-formed but over the nesting limit (RULES W1.4): answered with
        # the request's id, never run; id null only when no id can be read.
        nest = ("[" * 10000, "]" * 10000)
        too_deep = "Invalid params: nesting deeper than the limit of 512 levels"
        deep = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":%s"x"%s}}}' % nest
        expect_error(srv, deep, -32602, "1", too_deep)
        modern = call("m", "echo", {"text": 0}, modern=True).replace('"text":0', '"text":%s"x"%s' % nest)
        expect_error(srv, modern, -32602, '"m"', too_deep)
        params = '{"jsonrpc":"2.0","id":2,"method":"tools/list","params":%s1%s}' % nest
        expect_error(srv, params, -32602, "2", too_deep)
        expect_error(srv, "[" * 10000 + "]" * 10000, -32600, "null", "Invalid Request")
        expect_error(srv, "[" * 10000, -32700, "null", "Parse error")

    @case("invalid UTF-8 bytes")
    def _():
        expect_error(srv, b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":"\xff\xfe"}}', -32700)
        expect_error(srv, b'{"jsonrpc":"2.0","id":"\xc3\x28","method":"ping"}', -32700)
        expect_error(srv, b"\xed\xa0\x80", -32700)  # an encoded surrogate

    @case("\\u0000 in strings")
    def _():
        expect_error(srv, call(11, "echo", {"text": "a\u0000b"}), -32602, "11")
        expect_error(srv, call(12, "count_args", {"a\u0000": 1}), -32602, "12")
        # in a method name: just an unknown method
        expect_error(srv, '{"jsonrpc":"2.0","id":13,"method":"ping\\u0000"}', -32601, "13")

    @case("tool calls stop()")
    def _():
        expect_tool(srv, 20, "stopper", is_error=True, text='boom "quoted"\nsecond line')
        expect_tool(srv, 21, "stopper", is_error=True, text='boom "quoted"\nsecond line', modern=True)

    @case("tool calls warning(): result kept, warning on stderr")
    def _():
        expect_tool(srv, 22, "warner", text="warned")
        wait_stderr(srv, "careful: a warning")
        # stderr is in order: the earlier stop() calls left no R error
        # print there (their message is the tool result, RULES S8)
        if 'boom "quoted"' in srv.stderr_text():
            raise AssertionError("R printed a tool error on stderr: %r" % srv.stderr_text()[-500:])

    @case("tool calls message()")
    def _():
        expect_tool(srv, 23, "messenger", text="messaged")
        wait_stderr(srv, "a message for stderr")

    @case("tool calls print() and cat()")
    def _():
        expect_tool(srv, 24, "printer", text="printed")
        wait_stderr(srv, "cat output")

    @case("tool runs system() children")
    def _():
        expect_tool(srv, 25, "shell", text="ran children")
        wait_stderr(srv, "from-system-child")
        wait_stderr(srv, "from-system2-child")

    @case("tool calls readline() and readLines(stdin())")
    def _():
        # a request queued behind the call must not be eaten by the tool
        srv.send(call(26, "reader") + "\n" + '{"jsonrpc":"2.0","id":27,"method":"tools/list"}\n')
        a = json.loads(srv.recv())
        b = json.loads(srv.recv())
        assert a["id"] == 26 and a["result"]["content"][0]["text"] == "readline=[] readLines=0", a
        assert b["id"] == 27 and b["result"]["tools"], b

    @case("infinite R recursion")
    def _():
        expect_tool(srv, 28, "recurse_r", is_error=True,
                    contains=["nested too deeply", "infinite recursion", "stack"])

    @case("infinite recursion to the C stack limit")
    def _():
        expect_tool(srv, 29, "recurse_c", is_error=True, contains=["stack", "nested too deeply"])

    @case("tools returning an environment, a function, an external pointer")
    def _():
        # Environments and external pointers cannot be encoded: contained
        # tool errors (J3.2). Functions become their deparsed lines (J2.4).
        for i, name in enumerate(["environment", "xptr"]):
            r, line = expect_tool(srv, 30 + i, name, is_error=True, contains=["could not be converted"])
            figures["unencodable_" + name] = r["content"][0]["text"][:200]
        expect_tool(srv, 32, "closure", text='["function (x) ","x"]')

    @case("unused and missing arguments are tool errors")
    def _():
        # Refused by the input schema before R runs (RULES L6.7).
        expect_tool(srv, 33, "add", {"x": 1, "y": 2, "z": 3}, is_error=True, contains=["unexpected argument `z`"])
        expect_tool(srv, 34, "add", {"x": 1}, is_error=True, contains=["missing required argument `y`"])
        expect_tool(srv, 35, "add", {"x": "1", "y": 2}, is_error=True, contains=['`x` must be of type "number"'])
        expect_tool(srv, 36, "add", {"x": 1e308, "y": 1e308}, is_error=False)

    @case("arguments are values, never evaluated")
    def _():
        expect_tool(srv, 37, "echo", {"text": "quit(status = 9)"}, text="quit(status = 9)")
        expect_tool(srv, 38, "echo", {"text": "`system('echo pwned')`"}, text="`system('echo pwned')`")
        r, _ = expect_tool(srv, 39, "count_args", {"a": 1, "_meta": {"x": 1}, "b": [1, 2]})
        assert r["content"][0]["text"] == "3", r
        # params._meta never reaches the tool
        got, _ = exchange(srv, '{"jsonrpc":"2.0","id":40,"method":"tools/call","params":{"name":"count_args",'
                               '"arguments":{},"_meta":{"progressToken":1,"x":2}}}')
        assert got[0][0]["result"]["content"][0]["text"] == "0", got

    @case("a 100 MB request line")
    def _():
        big = "y" * 100_000_000
        t0 = time.time()
        expect_tool(srv, 41, "size_of", {"text": big}, text="100000000", timeout=300)
        figures["request_100mb_seconds"] = round(time.time() - t0, 2)

    @case("a 100 MB result")
    def _():
        t0 = time.time()
        r, line = expect_tool(srv, 42, "big_result", {"mb": 100}, timeout=300)
        assert len(r["content"][0]["text"]) == 100_000_000
        figures["result_100mb_seconds"] = round(time.time() - t0, 2)
        figures["result_100mb_line_bytes"] = len(line)

    @case("server still serves after everything, and exits 0 at EOF")
    def _():
        expect_tool(srv, 43, "add", {"x": 1, "y": 2}, text="3")
        expect_tool(srv, 44, "add", {"x": 1, "y": 2}, text="3", modern=True)
        srv.finish()

    results = []
    for name, f in cases:
        try:
            f()
            results.append((name, None))
        except Exception as e:
            results.append((name, "%s\n%s" % (e, traceback.format_exc(limit=3))))
            if srv.p.poll() is not None:
                # The server died: later cases cannot run in this session.
                results.append(("server alive after: " + name, "exited with %r" % srv.p.poll()))
                break
    if not srv.bad_lines and not srv.partial:
        results.append(("session stdout: every line one valid JSON-RPC response (%d lines)" % srv.nlines, None))
    else:
        results.append(("session stdout", "bad lines %s partial %r" % (srv.bad_lines[:3], srv.partial[:100])))
    srv.kill()
    return results


# ---------------------------------------------------------------------------
# Process-level cases, each with its own server.

def wait_stderr(srv, text, timeout=60):
    deadline = time.time() + timeout
    while text not in srv.stderr_text():
        if time.time() > deadline:
            raise AssertionError("never saw %r on stderr" % text)
        time.sleep(0.05)


def case_quit():
    """A tool that calls quit(): R exits immediately with the tool's status.
    The call gets no response; lines already written stay intact."""
    srv = Server()
    try:
        srv.send(INIT + "\n")
        srv.recv()
        # (tools/list, not ping: a ping may be answered while the tool runs, RULES C5)
        srv.send(call(1, "quitter", {"status": 3}) + "\n" + '{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n')
        rc = srv.p.wait(60)
        srv.t_out.join(10)
        srv.check_stdout()
        figures["quit_exit_status"] = rc
        figures["quit_stdout_lines"] = srv.nlines
        assert srv.nlines == 1, "lines after quit(): %d" % srv.nlines
        assert rc == 3, rc
    finally:
        srv.kill()


def case_package_tools():
    """package_tools() defaults (issue 28): what can run commands, read, write
    or delete files, reach the network, signal processes, quit or change the
    session is not served; calling it changes nothing, the process survives
    quit() and still answers ping."""
    d = tempfile.mkdtemp(prefix="hostile-pkg-")
    sleeper = subprocess.Popen(["sleep", "300"])
    srv = Server(script=os.path.join(HERE, "packages.R"),
                 extra_env={"HOSTILE_CACHE": os.path.join(d, "cache"), "HOSTILE_PROBE": "unchanged"})
    try:
        secret = os.path.join(d, "secret.txt")
        with open(secret, "w") as f:
            f.write("TOP SECRET\n")
        marker = os.path.join(d, "marker")
        srv.send(INIT + "\n")
        srv.recv(300)  # the first start classifies the functions (no cache yet)
        listing = srv.request('{"jsonrpc":"2.0","id":"list","method":"tools/list"}')
        names = {t["name"] for t in listing["result"]["tools"]}
        for safe in ("mean", "toupper", "seq", "head", "file_ext", "toJSON", "fifelse", "probe"):
            assert safe in names, "%s not served: %s" % (safe, sorted(names))
        attempts = [
            ("system", {"command": "touch " + marker}), ("system2", {"command": "touch", "args": marker}),
            ("fread", {"cmd": "touch " + marker}), ("fread", {"file": secret}),
            ("readLines", {"con": secret}), ("fromJSON", {"txt": secret}), ("read_json", {"path": secret}),
            ("read.csv", {"file": secret}), ("readRDS", {"file": secret}),
            ("source", {"file": secret}), ("writeLines", {"text": "x", "con": marker}),
            ("fwrite", {"x": {"a": [1]}, "file": marker}), ("write.csv", {"x": {"a": [1]}, "file": marker}),
            ("write_json", {"x": [1], "path": marker}), ("unlink", {"x": secret}),
            ("file.remove", {}), ("download.file", {"url": "http://127.0.0.1:9/", "destfile": marker}),
            ("install.packages", {"pkgs": "x"}), ("remove.packages", {"pkgs": "jsonlite"}),
            ("pskill", {"pid": sleeper.pid}), ("psnice", {"pid": sleeper.pid, "value": 19}),
            ("Sys.setenv", {"HOSTILE_PROBE": "changed"}), ("Sys.getenv", {"x": "HOSTILE_PROBE"}),
            ("setwd", {"dir": "/"}), ("options", {"digits": 3}), ("assign", {"x": "a", "value": 1, "pos": 1}),
            ("library", {"package": "tools"}), ("dyn.load", {"x": marker}),
            ("quit", {"save": "no", "status": 9}), ("q", {}),
        ]
        for i, (name, args) in enumerate(attempts):
            assert name not in names, "%s is served by default" % name
            # The package tools run in a confined worker (RULES N7.1).
            expect_error(srv, call("pkg%d" % i, name, args, modern=True), -32602, '"pkg%d"' % i, workers=True)
        # Nothing happened: no command ran, no file was written or deleted,
        # the process was not signalled, the session is unchanged, and the
        # server still answers.
        assert not os.path.exists(marker), "a command ran or a file was written"
        with open(secret) as f:
            assert f.read() == "TOP SECRET\n"
        assert sleeper.poll() is None, "the sleeper was signalled"
        r, _ = expect_tool(srv, "probe", "probe", {}, modern=True, workers=True)
        state = json.loads(r["content"][0]["text"])
        assert state["probe"] in ("unchanged", ["unchanged"]), state
        assert state["digits"] in (7, [7]), state
        assert state["wd"] != "/" and state["wd"] != ["/"], state
        pong = srv.request('{"jsonrpc":"2.0","id":"ping","method":"ping"}')
        assert pong == {"jsonrpc": "2.0", "id": "ping", "result": {}}, pong
        assert "TOP SECRET" not in srv.stderr_text()
        srv.finish()
    finally:
        srv.kill()
        sleeper.kill()
        sleeper.wait()
        shutil.rmtree(d, ignore_errors=True)


def case_sigint():
    srv = Server()
    try:
        srv.send(INIT + "\n")
        srv.recv()
        srv.send(call(1, "sleepy", {"seconds": 60}) + "\n")
        wait_stderr(srv, "sleepy: started")
        t0 = time.time()
        srv.p.send_signal(signal.SIGINT)
        msg = json.loads(srv.recv(30))
        figures["sigint_to_answer_seconds"] = round(time.time() - t0, 2)
        assert msg["id"] == 1 and msg["result"]["isError"] is True, msg
        assert "interrupt" in msg["result"]["content"][0]["text"], msg
        # idle interrupt: ignored
        srv.p.send_signal(signal.SIGINT)
        wait_stderr(srv, "interrupt ignored")
        msg = srv.request(call(2, "add", {"x": 2, "y": 2}))
        assert msg["result"]["content"][0]["text"] == "4", msg
        srv.finish()
    finally:
        srv.kill()


def case_stdin_closed_mid_call():
    srv = Server()
    try:
        srv.send(INIT + "\n" + call(1, "sleepy", {"seconds": 2}) + "\n" + call(2, "add", {"x": 1, "y": 1}) + "\n")
        srv.recv()
        wait_stderr(srv, "sleepy: started")
        srv.close_stdin()
        a = json.loads(srv.recv(30))
        b = json.loads(srv.recv(30))
        assert a["id"] == 1 and a["result"]["content"][0]["text"] == "slept", a
        assert b["id"] == 2 and b["result"]["content"][0]["text"] == "2", b
        rc = srv.p.wait(30)
        srv.t_out.join(10)
        srv.check_stdout()
        assert rc == 0, rc
    finally:
        srv.kill()


def case_stdout_closed():
    """The client stops reading and closes its end of stdout: the server
    notices on its next write (broken pipe), stops and exits 0 without
    hanging, even with more requests queued and stdin still open."""
    # No reader thread here: a thread blocked in read() would keep the pipe's
    # read end alive after close().
    srv = Server(read_stdout=False)
    try:
        srv.send(INIT + "\n")
        first = b""
        while not first.endswith(b"\n"):
            chunk = os.read(srv.p.stdout.fileno(), 65536)
            assert chunk, "no answer to initialize"
            first += chunk
        check_response_line(first[:-1])
        srv.p.stdout.close()
        t0 = time.time()
        try:
            for i in range(50):
                srv.send(call(i, "add", {"x": i, "y": 1}) + "\n")
        except BrokenPipeError:
            pass
        rc = srv.p.wait(30)
        figures["stdout_closed_exit_seconds"] = round(time.time() - t0, 2)
        figures["stdout_closed_exit_status"] = rc
        srv.t_err.join(10)
        assert rc == 0, rc
        assert "broken pipe" in srv.stderr_text().lower(), srv.stderr_text()[-300:]
    finally:
        srv.kill()


def case_sigterm():
    """SIGTERM keeps its default effect (RULES S7): the process ends at once,
    idle or mid-call; stdout holds only complete responses."""
    for mid_call in (False, True):
        srv = Server()
        try:
            srv.send(INIT + "\n")
            srv.recv()
            if mid_call:
                srv.send(call(1, "sleepy", {"seconds": 60}) + "\n")
                wait_stderr(srv, "sleepy: started")
            srv.p.send_signal(signal.SIGTERM)
            rc = srv.p.wait(30)
            srv.t_out.join(10)
            srv.check_stdout()
            figures["sigterm_exit_status_%s" % ("mid_call" if mid_call else "idle")] = rc
            assert rc == -signal.SIGTERM, rc
        finally:
            srv.kill()


def case_load():
    """LOAD mixed requests pipelined (plus notifications and garbage lines):
    every request answered exactly once, in order (pings may come early, C5); RSS sampled."""
    srv = Server()
    try:
        srv.send(INIT + "\n")
        srv.recv()
        # Warm up so the RSS baseline includes steady-state allocations.
        warm = "".join(call("w%d" % i, "flaky", {"i": i}) + "\n" for i in range(1, 2001))
        srv.send(warm)
        for _ in range(2000):
            srv.recv()
        rss_start = srv.rss_kb()
        expected = []
        chunks = []
        buf = []
        for k in range(LOAD):
            kind = k % 10
            if kind in (0, 1, 2):
                line = call(k, "flaky", {"i": k})
                expected.append((k, "flaky"))
            elif kind == 3:
                line = '{"jsonrpc":"2.0","id":%d,"method":"ping"}' % k
                expected.append((k, "ping"))
            elif kind == 4:
                line = call(k, "add", {"x": k, "y": 0.5}, modern=True)
                expected.append((k, "add_modern"))
            elif kind == 5:
                line = call(k, "echo", {"text": "t%d \u00e9\n\"" % k})
                expected.append((k, "echo"))
            elif kind == 6:
                line = call(k, "stopper")
                expected.append((k, "stopper"))
            elif kind == 7:
                line = '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"nope"}}' % k
                expected.append((k, "unknown"))
            elif kind == 8:
                line = '{"jsonrpc":"2.0","id":%d,"method":"tools/list"}' % k if k % 100 == 8 else \
                    '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"add","arguments":{"x":1,"y":2}}}' % k
                expected.append((k, "list" if k % 100 == 8 else "add"))
            else:
                # a request plus a notification, a blank line and a client response
                line = ('{"jsonrpc":"2.0","id":%d,"method":"ping"}\n' % k +
                        '{"jsonrpc":"2.0","method":"notifications/progress","params":{}}\n\n' +
                        '{"jsonrpc":"2.0","id":%d,"result":{}}' % k)
                expected.append((k, "ping"))
            buf.append(line + "\n")
            if len(buf) == 500:
                chunks.append("".join(buf).encode())
                buf = []
        if buf:
            chunks.append("".join(buf).encode())

        answered = [0]

        def writer():
            # Pipelined, but at most ~2,500 requests ahead of the answers, so
            # RSS measures the server rather than the backlog of unread input
            # (the reader thread queues everything it is sent).
            for j, c in enumerate(chunks):
                while answered[0] < (j - 5) * 500:
                    time.sleep(0.001)
                srv.p.stdin.write(c)
                srv.p.stdin.flush()

        t0 = time.time()
        w = threading.Thread(target=writer, daemon=True)
        w.start()
        rss_peak = rss_start
        rss_samples = []
        # RULES C5: a ping read while calls wait ahead of it may be answered
        # before them; every other answer comes in request order.
        pings = {k for (k, kind) in expected if kind == "ping"}
        in_order = iter([(k, kind) for (k, kind) in expected if kind != "ping"])
        for n in range(len(expected)):
            msg = json.loads(srv.recv(120))
            answered[0] = n + 1
            if msg.get("id") in pings:
                pings.remove(msg["id"])
                k, kind = msg["id"], "ping"
            else:
                k, kind = next(in_order)
            if msg.get("id") != k:
                raise AssertionError("answer %d has id %r, expected %r" % (n, msg.get("id"), k))
            r = msg.get("result")
            if kind == "flaky":
                if k % 7 == 0:
                    assert r["isError"] is True and r["content"][0]["text"] == "flaky failure %d" % k, msg
                else:
                    assert r["isError"] is False and r["content"][0]["text"] == str(k * 2), msg
            elif kind == "ping":
                assert r == {}, msg
            elif kind == "add_modern":
                assert r["resultType"] == "complete" and r["isError"] is False, msg
            elif kind == "echo":
                assert r["content"][0]["text"] == "t%d \u00e9\n\"" % k, msg
            elif kind == "stopper":
                assert r["isError"] is True, msg
            elif kind == "unknown":
                assert msg["error"]["code"] == -32602, msg
            elif kind == "list":
                assert len(r["tools"]) > 10, msg
            elif kind == "add":
                assert r["content"][0]["text"] == "3", msg
            if n % 10000 == 0:
                rss_samples.append(srv.rss_kb())
                rss_peak = max(rss_peak, rss_samples[-1])
        elapsed = time.time() - t0
        w.join(60)
        rss_end = srv.rss_kb()
        srv.finish()
        figures.update({
            "load_requests": len(expected),
            "load_seconds": round(elapsed, 2),
            "load_requests_per_second": round(len(expected) / elapsed),
            "load_rss_start_kb": rss_start,
            "load_rss_peak_kb": max(rss_peak, rss_end),
            "load_rss_end_kb": rss_end,
            "load_stdout_lines": srv.nlines,
            "load_rss_every_10000_kb": rss_samples,
        })
        assert srv.nlines == len(expected) + 2001, "stdout lines %d" % srv.nlines
        assert not pings and next(in_order, None) is None, "unanswered requests"
        # Flat memory (measured growth is well under 1 MB): a margin for
        # allocator noise only.
        assert rss_end - rss_start < 16 * 1024, "RSS grew from %d kB to %d kB" % (rss_start, rss_end)
    finally:
        srv.kill()


# ---------------------------------------------------------------------------
# Calls that take time (RULES section 11, issue 17): progress tokens and
# cancellation, against tests/clients/servers/slow.R (heartbeats every 0.2 s).

SLOW = os.path.join(HERE, "..", "clients", "servers", "slow.R")


def slow_server():
    srv = Server(script=SLOW, extra_env={"MCPLITE_PROGRESS_INTERVAL": "0.2"})
    srv.send(INIT + "\n")
    msg = json.loads(srv.recv())
    assert msg["id"] == "init", msg
    return srv


def cancel(id_raw):
    return '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%s}}' % id_raw


def collect_until(srv, id_, timeout=60):
    """Messages up to and including the response for `id_`."""
    got = []
    while True:
        msg = json.loads(srv.recv(timeout))
        got.append(msg)
        if msg.get("id") == id_ and "method" not in msg:
            return got


def responses(msgs, id_):
    return [m for m in msgs if m.get("id") == id_ and "method" not in m]


def wait_file(path, timeout=60):
    deadline = time.time() + timeout
    while not os.path.exists(path):
        if time.time() > deadline:
            raise AssertionError("never saw %s" % path)
        time.sleep(0.02)


def case_progress_tokens():
    """progress tokens of every JSON type: strings and integers get heartbeats with the token as sent, others none"""
    valid = ['"s"', '""', '"\\u0041"', '"\u00e9 \u2713 \\"q\\""', "0", "-7", "9007199254740993",
             "12345678901234567890", "-9223372036854775808"]
    invalid = ["null", "true", "false", "1.5", "1.0", "1e2", "-1E-2", "[]", "[1]", "{}", '{"a":1}',
               "123456789012345678901234567890"]
    srv = slow_server()
    try:
        msgs = []
        for i, tok in enumerate(valid + invalid):
            line = ('{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"wait",'
                    '"arguments":{"seconds":0.5},"_meta":{"progressToken":%s}}}' % (100 + i, tok))
            srv.send(line + "\n")
            got = collect_until(srv, 100 + i)
            assert responses(got, 100 + i)[0]["result"]["content"][0]["text"] == "waited", got[-1]
            notes = [m for m in got if m.get("method") == "notifications/progress"]
            if tok in valid:
                assert notes, "no heartbeat for token %s" % tok
                want = json.loads(tok)
                for m in notes:
                    got_tok = m["params"]["progressToken"]
                    assert got_tok == want and type(got_tok) is type(want), (tok, m)
            else:
                assert not notes, "heartbeat for invalid token %s: %r" % (tok, notes[0])
            msgs += got
        # no notification after the last response, up to EOF
        time.sleep(0.5)
        srv.finish()
        assert srv.lines.get(timeout=5) is None
        figures["progress_tokens_notifications"] = sum(1 for m in msgs if "method" in m)
    finally:
        srv.kill()


def case_cancel_unknown():
    """cancels for never-sent, malformed and future ids are ignored; a later request with such an id is answered"""
    srv = slow_server()
    try:
        junk = [cancel(x) for x in ["5", '"five"', "null", "true", "1.5", "{}", "[5]", '"' + "x" * 100000 + '"']]
        junk += ['{"jsonrpc":"2.0","method":"notifications/cancelled"}',
                 '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{}}',
                 '{"jsonrpc":"2.0","method":"notifications/cancelled","params":[5]}',
                 '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5,"reason":7}}']
        srv.send("\n".join(junk) + "\n")
        for id_raw, id_ in [("5", 5), ('"five"', "five")]:
            msg = srv.request(call(id_, "echo", {"text": "still answered"}))
            assert msg["id"] == id_ and msg["result"]["content"][0]["text"] == "still answered", msg
        msg = srv.request('{"jsonrpc":"2.0","id":6,"method":"ping"}')
        assert msg == {"jsonrpc": "2.0", "id": 6, "result": {}}, msg
        srv.finish()
        assert srv.nlines == 4, srv.nlines
    finally:
        srv.kill()


def case_cancel_burst():
    """1,000 cancels in a burst while a tool runs and 1,000 while idle: one interrupted call, no answer for it, serving continues"""
    d = tempfile.mkdtemp(prefix="mcplite-hostile-")
    srv = slow_server()
    try:
        srv.send(call(1, "guarded", {"dir": d, "seconds": 30}) + "\n")
        wait_file(os.path.join(d, "started"))
        burst = [cancel(str(1000 + i)) for i in range(400)] + [cancel("1")] * 200 + \
                [cancel('"%d"' % i) for i in range(400)]
        srv.send("\n".join(burst) + "\n" + call(2, "echo", {"text": "after burst"}) + "\n")
        got = collect_until(srv, 2)
        assert [m.get("id") for m in got] == [2], got
        srv.send("\n".join(cancel(str(i)) for i in range(1000)) + "\n")
        msg = srv.request(call(3, "wait", {"seconds": 0.3}))
        assert msg["id"] == 3 and msg["result"]["content"][0]["text"] == "waited", msg
        srv.finish()
        assert sorted(os.listdir(d)) == ["interrupted", "on_exit", "started"], os.listdir(d)
        assert srv.nlines == 3, srv.nlines
    finally:
        srv.kill()
        shutil.rmtree(d, ignore_errors=True)


def case_cancel_race():
    """cancels racing completion: each call answered at most once, the next call never hit by a stale interrupt"""
    srv = slow_server()
    rng = random.Random(17)
    answered_ = cancelled = 0
    try:
        for i in range(60):
            cid, nid = 1000 + 2 * i, 1001 + 2 * i
            srv.send(call(cid, "wait", {"seconds": rng.choice([0, 0.001, 0.01, 0.03])}) + "\n")
            time.sleep(rng.choice([0, 0, 0.001, 0.005, 0.02, 0.05]))
            srv.send(cancel(str(cid)) + "\n" + call(nid, "echo", {"text": "n%d" % i}) + "\n")
            got = collect_until(srv, nid)
            mine = responses(got, cid)
            assert len(mine) <= 1, "two answers for %d" % cid
            if mine:
                assert mine[0]["result"]["content"][0]["text"] == "waited", mine
                answered_ += 1
            else:
                cancelled += 1
            nxt = responses(got, nid)
            assert len(nxt) == 1 and nxt[0]["result"]["content"][0]["text"] == "n%d" % i, got
        # a call after all that runs to its end (no interrupt left over)
        msg = srv.request(call(9, "wait", {"seconds": 0.5}))
        assert msg["result"]["content"][0]["text"] == "waited", msg
        srv.finish()
        figures["cancel_race_answered"] = answered_
        figures["cancel_race_cancelled"] = cancelled
    finally:
        srv.kill()


def case_suspended_interrupts():
    """a cancelled tool under suspendInterrupts() ends with one answer or none, never two; the next call is answered"""
    d = tempfile.mkdtemp(prefix="mcplite-hostile-")
    srv = slow_server()
    try:
        srv.send(call(1, "stubborn", {"dir": d, "seconds": 1.5}) + "\n")
        wait_file(os.path.join(d, "started"))
        srv.send(cancel("1") + "\n" + cancel("1") + "\n" + call(2, "echo", {"text": "two"}) + "\n")
        got = collect_until(srv, 2)
        assert len(responses(got, 1)) <= 1, got
        msg = srv.request(call(3, "wait", {"seconds": 0.3}))
        assert msg["result"]["content"][0]["text"] == "waited", msg
        srv.finish()
        figures["suspended_cancel_answers"] = len(responses(got, 1))
    finally:
        srv.kill()
        shutil.rmtree(d, ignore_errors=True)


def main():
    only = sys.argv[1:]
    results = []
    if not only or "session" in only:
        results += session_cases()
    for name, f in [("quit", case_quit), ("package_tools", case_package_tools), ("sigint", case_sigint), ("stdin_closed", case_stdin_closed_mid_call),
                    ("stdout_closed", case_stdout_closed), ("sigterm", case_sigterm),
                    ("progress_tokens", case_progress_tokens), ("cancel_unknown", case_cancel_unknown),
                    ("cancel_burst", case_cancel_burst), ("cancel_race", case_cancel_race),
                    ("suspended_interrupts", case_suspended_interrupts), ("load", case_load)]:
        if only and name not in only:
            continue
        try:
            f()
            results.append((name + ": " + (f.__doc__ or "").strip().split("\n")[0], None))
        except Exception as e:
            results.append((name, "%s\n%s" % (e, traceback.format_exc(limit=3))))
    passed = failed = 0
    for name, err in results:
        if err is None:
            passed += 1
            print("ok   " + name)
        else:
            failed += 1
            print("FAIL " + name + "\n     " + err.replace("\n", "\n     "))
    print("figures: " + json.dumps(figures, sort_keys=True))
    if REPORT:
        with open(REPORT, "w") as f:
            json.dump(figures, f, indent=1, sort_keys=True)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
