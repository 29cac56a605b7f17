#!/usr/bin/env python3
"""tasks/get latency (issue 46: "tasks/get p50 <= 100 us"), over stdio and
Streamable HTTP, in both eras.

    python3 bench/tasks/run.py [--lib PATH] [--transport stdio,http] [--era legacy,modern]
        [--rounds 5] [--calls 1000] [--warmup 500] [--out FILE]

Each round starts a fresh server (`bench/tasks/server.R`: tools `echo` and
`wait` that may run as tasks, one worker process) per transport and era,
makes two tasks, `echo` (awaited until `completed`; in 2026-07-28 tasks/get
inlines its result) and `wait` (3600 s, so it stays `working`), sends
`--warmup` rounds of three requests, then times `--calls` requests of each
case in a block (the blocks' order rotated per round), one at a time (each
sent when the previous answer was read): `tasks/get` of the finished task,
`tasks/get` of the working one, and `tools/list` (answered from a prepared
page: the floor of transport, dispatcher and driver; not `ping`, which
2026-07-28 lacks and which over stdio, while a call runs, the ticker thread
answers, RULES C5). Around each block it reads the server
process's CPU time (all its threads, /proc/PID/task/*/schedstat), which a
loaded machine disturbs much less than wall time. The working task is cancelled before the server is closed.

2025-11-25 ("legacy"): `initialize` first (over HTTP a session:
`Mcp-Session-Id`), `tools/call` with `params.task`. 2026-07-28 ("modern"):
every request carries `_meta` with the protocol version and the tasks
extension in its capabilities; over HTTP the headers `MCP-Protocol-Version`,
`Mcp-Method` and `Mcp-Name` (the task id). HTTP requests go over one
keep-alive connection (a raw socket with TCP_NODELAY, each request one write).

Prints and writes (JSON) p50, p90 and p99 per case, pooled over rounds, each
round's p50, and the median over rounds of the server's CPU time per request. Standard library only."""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlparse

HERE = Path(__file__).resolve().parent
SERVER = HERE / "server.R"
MODERN = "2026-07-28"
LEGACY = "2025-11-25"
EXT = "io.modelcontextprotocol/tasks"
META = {"io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {EXT: {}}},
        "io.modelcontextprotocol/clientInfo": {"name": "bench-tasks", "version": "1"}}


def rscript() -> str:
    return os.environ.get("RSCRIPT", "Rscript")


def env_for(lib: str | None, transport: str) -> dict:
    env = dict(os.environ, MCPLITE_TRANSPORT=transport)
    if lib:
        env["R_LIBS"] = lib
    if transport == "http":
        env.update(MCPLITE_PORT="0", MCPLITE_ACCESS_LOG="false")
    return env


class Stdio:
    def __init__(self, lib: str | None):
        self.p = subprocess.Popen([rscript(), "--vanilla", str(SERVER)], env=env_for(lib, "stdio"),
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.n = 0

    def request(self, method: str, params: dict | None, name: str | None = None) -> dict:
        self.n += 1
        msg = {"jsonrpc": "2.0", "id": self.n, "method": method}
        if params is not None:
            msg["params"] = params
        self.p.stdin.write(json.dumps(msg).encode() + b"\n")
        self.p.stdin.flush()
        while True:
            out = self.p.stdout.readline()
            if not out:
                raise RuntimeError("the server ended")
            got = json.loads(out)
            if got.get("id") == self.n:
                return got

    def close(self) -> None:
        # A stdio client's shutdown: end the input, wait, then SIGTERM (the
        # server keeps running at the end of input while a task's call runs).
        self.p.stdin.close()
        try:
            self.p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.p.send_signal(signal.SIGTERM)
        try:
            self.p.wait(timeout=30)
        finally:
            if self.p.poll() is None:
                self.p.kill()
                self.p.wait()


class Http:
    """A keep-alive HTTP/1.1 client on a raw socket (TCP_NODELAY): each request
    is one prepared write, each answer read by Content-Length or, for an SSE
    answer, to the end of its chunked body; http.client alone costs about
    300 us a request, which would hide the server."""

    def __init__(self, lib: str | None):
        self.p = subprocess.Popen([rscript(), "--vanilla", str(SERVER)], env=env_for(lib, "http"),
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                  text=True)
        url = None
        deadline = time.monotonic() + 60
        while url is None and time.monotonic() < deadline:
            line = self.p.stderr.readline()
            if not line:
                break
            m = re.search(r"(http://\S+/mcp)", line)
            url = m.group(1) if m else None
        if url is None:
            self.close()
            raise RuntimeError("the HTTP server did not start")
        # Keep its stderr drained.
        threading.Thread(target=lambda: [None for _ in iter(self.p.stderr.readline, "")], daemon=True).start()
        u = urlparse(url)
        self.path, self.authority = u.path, u.netloc
        self.sock = socket.create_connection((u.hostname, u.port), timeout=60)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""
        self.headers: dict = {}
        self.n = 0

    def _recv(self) -> bytes:
        chunk = self.sock.recv(65536)
        if not chunk:
            raise RuntimeError("the server closed the connection")
        return chunk

    def _line(self) -> bytes:
        while b"\r\n" not in self.buf:
            self.buf += self._recv()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _exactly(self, n: int) -> bytes:
        while len(self.buf) < n:
            self.buf += self._recv()
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def post(self, body: bytes, extra: dict) -> tuple[dict, bytes]:
        h = {"Host": self.authority, "Content-Type": "application/json",
             "Accept": "application/json, text/event-stream", "Content-Length": str(len(body)),
             **self.headers, **extra}
        head = f"POST {self.path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in h.items()) + "\r\n"
        self.sock.sendall(head.encode() + body)
        status = self._line()
        assert status.split()[1] in (b"200", b"202"), status
        got: dict = {}
        while True:
            line = self._line()
            if not line:
                break
            k, v = line.split(b":", 1)
            got[k.decode().lower()] = v.strip().decode()
        if "content-length" in got:
            return got, self._exactly(int(got["content-length"]))
        assert got.get("transfer-encoding") == "chunked", got
        out = b""
        while True:
            size = int(self._line(), 16)
            if size == 0:
                self._line()
                return got, out
            out += self._exactly(size)
            self._line()

    def request(self, method: str, params: dict | None, name: str | None = None) -> dict:
        self.n += 1
        msg = {"jsonrpc": "2.0", "id": self.n, "method": method}
        if params is not None:
            msg["params"] = params
        extra = {}
        if self.headers.get("MCP-Protocol-Version") == MODERN:
            extra["Mcp-Method"] = method
            if name:
                extra["Mcp-Name"] = name
        h, body = self.post(json.dumps(msg).encode(), extra)
        if method == "initialize":
            self.headers["Mcp-Session-Id"] = h["mcp-session-id"]
        if h.get("content-type", "").startswith("text/event-stream"):
            for line in body.split(b"\n"):
                if line.startswith(b"data:"):
                    got = json.loads(line[5:])
                    if got.get("id") == self.n:
                        return got
            raise RuntimeError(f"no answer in {body[:300]!r}")
        return json.loads(body)

    def notify(self, method: str) -> None:
        self.post(json.dumps({"jsonrpc": "2.0", "method": method}).encode(), {})

    def close(self) -> None:
        try:
            self.sock.close()
        except Exception:
            pass
        self.p.send_signal(signal.SIGTERM)
        try:
            self.p.wait(timeout=30)
        finally:
            if self.p.poll() is None:
                self.p.kill()
                self.p.wait()


def start(transport: str, era: str, lib: str | None):
    s = Stdio(lib) if transport == "stdio" else Http(lib)
    if era == "legacy":
        init = s.request("initialize", {"protocolVersion": LEGACY, "capabilities": {},
                                        "clientInfo": {"name": "bench-tasks", "version": "1"}})
        assert "tasks" in init["result"]["capabilities"], init
        if transport == "http":
            s.headers["MCP-Protocol-Version"] = LEGACY
            s.notify("notifications/initialized")
        else:
            s.p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
            s.p.stdin.flush()
    elif transport == "http":
        s.headers["MCP-Protocol-Version"] = MODERN
    return s


def params(era: str, p: dict) -> dict:
    return {**p, "_meta": META} if era == "modern" else p


def create(s, era: str, tool: str, args: dict) -> str:
    p = {"name": tool, "arguments": args}
    if era == "legacy":
        p["task"] = {}
    r = s.request("tools/call", params(era, p), name=tool)
    res = r["result"]
    return res["task"]["taskId"] if era == "legacy" else res["taskId"]


def get(s, era: str, tid: str) -> dict:
    r = s.request("tasks/get", params(era, {"taskId": tid}), name=tid)
    return r["result"]


def one_round(transport: str, era: str, lib: str | None, calls: int, warmup: int, r: int) -> tuple[dict, dict]:
    s = start(transport, era, lib)
    try:
        done = create(s, era, "echo", {"x": 7})
        deadline = time.monotonic() + 60
        while get(s, era, done)["status"] != "completed":
            if time.monotonic() > deadline:
                raise RuntimeError("the echo task did not complete")
            time.sleep(0.01)
        working = create(s, era, "wait", {"s": 3600})
        got = get(s, era, done)
        if era == "modern":
            assert got["result"]["content"][0]["text"] == "7", got
        assert get(s, era, working)["status"] == "working"

        def check_done(m):
            assert m["result"]["status"] == "completed", m

        def check_working(m):
            assert m["result"]["status"] == "working", m

        def check_list(m):
            assert [t["name"] for t in m["result"]["tools"]] == ["echo", "wait"], m

        cases = [
            ("tasks/get completed", "tasks/get", params(era, {"taskId": done}), done, check_done),
            ("tasks/get working", "tasks/get", params(era, {"taskId": working}), working, check_working),
            # The floor: tools/list, answered from a prepared page. (Not
            # ping: 2026-07-28 has none, and over stdio a legacy ping read
            # while a call runs, here the working task's, is answered by the
            # ticker thread, RULES C5, which costs more than the request.)
            ("tools/list", "tools/list", params(era, {}) if era == "modern" else None, None, check_list),
        ]
        for i in range(warmup):
            for label, method, p, name, check in cases:
                check(s.request(method, p, name=name))
        # One block of `calls` requests per case, the order rotated per
        # round; the server's CPU time (all its threads) around each block.
        times: dict[str, list[float]] = {}
        cpu: dict[str, float] = {}
        k = r % len(cases)
        for label, method, p, name, check in cases[k:] + cases[:k]:
            xs = []
            c0 = server_cpu_ns(s.p.pid)
            for i in range(calls):
                t0 = time.perf_counter()
                m = s.request(method, p, name=name)
                xs.append((time.perf_counter() - t0) * 1e6)
                if i % 97 == 0:
                    check(m)
            cpu[label] = (server_cpu_ns(s.p.pid) - c0) / 1e3 / calls
            times[label] = xs
        r = s.request("tasks/cancel", params(era, {"taskId": working}), name=working)
        assert "result" in r, r
        return times, cpu
    finally:
        s.close()


def server_cpu_ns(pid: int) -> int:
    """CPU time of every thread of the server process (not its workers)."""
    total = 0
    for t in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((t / "schedstat").read_text().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            pass
    return total


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", help="the R library with mcplite (else R's default)")
    ap.add_argument("--transport", default="stdio,http")
    ap.add_argument("--era", default="legacy,modern")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--calls", type=int, default=1000, help="timed requests per case and server")
    ap.add_argument("--warmup", type=int, default=500, help="untimed rounds of the three requests first")
    ap.add_argument("--out")
    a = ap.parse_args()
    runs = [(t, e) for t in a.transport.split(",") for e in a.era.split(",")]
    samples: dict[str, dict[str, list[float]]] = {}
    per_round: dict[str, dict[str, list[float]]] = {}
    cpus: dict[str, dict[str, list[float]]] = {}
    load0 = os.getloadavg()
    for r in range(a.rounds):
        for t, e in (runs if r % 2 == 0 else list(reversed(runs))):
            key = f"{t} {e}"
            got, cpu = one_round(t, e, a.lib, a.calls, a.warmup, r)
            for label, xs in got.items():
                samples.setdefault(key, {}).setdefault(label, []).extend(xs)
                per_round.setdefault(key, {}).setdefault(label, []).append(statistics.median(xs))
                cpus.setdefault(key, {}).setdefault(label, []).append(cpu[label])
            line = ", ".join(f"{label} p50 {statistics.median(xs):.1f} us" for label, xs in got.items())
            print(f"round {r + 1} {key}: {line}", file=sys.stderr)
    load1 = os.getloadavg()
    res = {"rounds": a.rounds, "calls": a.calls, "warmup": a.warmup, "load_before": load0, "load_after": load1,
           "runs": {k: {label: {"n": len(xs), "p50_us": statistics.median(xs), "p90_us": pct(xs, 0.9),
                                "p99_us": pct(xs, 0.99), "round_p50s_us": per_round[k][label],
                                "server_cpu_us_per_request": statistics.median(cpus[k][label]),
                                "round_server_cpu_us": cpus[k][label]}
                        for label, xs in v.items()} for k, v in samples.items()}}
    print(json.dumps(res, indent=2))
    labels = ("tasks/get completed", "tasks/get working", "tools/list")
    print("\n| Transport, era | " + " | ".join(f"{l}: p50 / p90 / p99 (µs), server CPU (µs)" for l in labels) + " |")
    print("|---|---:|---:|---:|")
    for k, v in res["runs"].items():
        cells = [f"{c['p50_us']:.1f} / {c['p90_us']:.1f} / {c['p99_us']:.1f}, {c['server_cpu_us_per_request']:.1f}"
                 for c in (v[label] for label in labels)]
        print(f"| {k} | " + " | ".join(cells) + " |")
    if a.out:
        Path(a.out).write_text(json.dumps(res, indent=2) + "\n")


if __name__ == "__main__":
    main()
