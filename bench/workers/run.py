#!/usr/bin/env python3
"""Worker processes (issue 32): what `workers = N` costs and what it buys, over
stdio and Streamable HTTP, against bench/workers/server.R.

    bash bench/workers/run.sh [--quick] [--rounds N] [--only w2,naps,busy,spin,memory]
    R_LIBS=/path/to/lib python3 bench/workers/run.py [same arguments]

Rows (bench/README.md, "Worker processes"):
  w2        the cost a worker adds to one call: sequential `add` p50/p99 with
            workers = 2 against workers = 1 (rounds interleaved), and the CPU
            time per call of the server and its workers (all threads)
  naps      16 concurrent calls of a tool that sleeps 200 ms, for N = 1, 2, 4, 8
            workers: calls/s and the share of the ideal N x (rate with 1)
  busy      with 4 workers, the p50 of `add` while 3 calls of a 2 s (sleeping)
            tool run, against the idle p50
  spin      16 concurrent calls of a 200 ms busy loop (CPU-bound) over stdio:
            mcplite with 1, 2 and 4 workers beside the official Python SDK's
            low-level server and the TypeScript SDK 1.x server
            (bench/peers/, BENCH_SPIN=1), whose busy loop holds the event loop
  memory    resident memory of the server process and of each worker
Standard library only: the client speaks the raw protocol (one line per
message on stdio; one POST per message over HTTP, modern era, keep-alive)."""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SERVER = HERE / "server.R"
MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}


def call(i: int, tool: str, args: dict) -> dict:
    return {"jsonrpc": "2.0", "id": i, "method": "tools/call",
            "params": {"name": tool, "arguments": args, "_meta": META}}


def children(pid: int) -> list[int]:
    out = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                stat = (p / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(p.name))
    return out


def cpu_ns(pid: int) -> int:
    """CPU time (ns) of a process's threads and of its children's (the workers):
    the sum of every thread's schedstat run time."""
    total = 0
    for p in [pid, *children(pid)]:
        for t in Path(f"/proc/{p}/task").glob("*/schedstat"):
            try:
                total += int(t.read_text().split()[0])
            except (OSError, ValueError, IndexError):
                pass
    return total


def rss_mb(pid: int) -> float:
    m = re.search(r"VmRSS:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text())
    return int(m.group(1)) / 1024 if m else float("nan")


class Stdio:
    """A server over stdio; responses are matched to requests by id."""

    def __init__(self, workers: int):
        env = dict(os.environ, MCPLITE_WORKERS=str(workers), MCPLITE_TRANSPORT="stdio")
        self.proc = subprocess.Popen(["Rscript", "--vanilla", str(SERVER)], env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.lock = threading.Lock()
        self.next = 0
        # The server answers once its workers are ready.
        self.request("tools/list", {"_meta": META})

    def send(self, msg: dict) -> None:
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())
        self.proc.stdin.flush()

    def recv(self) -> dict:
        while True:
            msg = json.loads(self.proc.stdout.readline())
            if "id" in msg:
                return msg

    def request(self, method: str, params: dict) -> dict:
        self.next += 1
        self.send({"jsonrpc": "2.0", "id": self.next, "method": method, "params": params})
        return self.recv()

    def one(self, tool: str, args: dict) -> dict:
        self.next += 1
        self.send(call(self.next, tool, args))
        return self.recv()

    def batch(self, tool: str, args: dict, n: int) -> list[dict]:
        """n calls sent at once; all answers."""
        first = self.next + 1
        self.proc.stdin.write(b"".join((json.dumps(call(first + k, tool, args)) + "\n").encode() for k in range(n)))
        self.proc.stdin.flush()
        self.next += n
        return [self.recv() for _ in range(n)]

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


class Http:
    """A server over HTTP; one keep-alive connection per client thread."""

    def __init__(self, workers: int):
        env = dict(os.environ, MCPLITE_WORKERS=str(workers), MCPLITE_TRANSPORT="http", MCPLITE_PORT="0",
                   MCPLITE_MAX_QUEUE="64")
        self.proc = subprocess.Popen(["Rscript", "--vanilla", str(SERVER)], env=env, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        while True:
            line = self.proc.stderr.readline()
            if not line:
                raise RuntimeError("the HTTP server did not start")
            m = re.search(r"http://([^/\s]+)(/\S*)", line)
            if m:
                self.host, self.path = m.group(1), m.group(2)
                break
        threading.Thread(target=lambda: [None for _ in self.proc.stderr], daemon=True).start()
        self.local = threading.local()
        self.next = 0

    def conn(self) -> http.client.HTTPConnection:
        c = getattr(self.local, "c", None)
        if c is None:
            c = self.local.c = http.client.HTTPConnection(self.host, timeout=120)
        return c

    def one(self, tool: str, args: dict, i: int = 1) -> dict:
        body = json.dumps(call(i, tool, args))
        c = self.conn()
        c.request("POST", self.path, body, {
            "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": tool})
        r = c.getresponse()
        return json.loads(r.read())

    def batch(self, tool: str, args: dict, n: int) -> list[dict]:
        out: list[dict] = [{}] * n

        def go(k: int) -> None:
            out[k] = self.one(tool, args, k)

        ts = [threading.Thread(target=go, args=(k,)) for k in range(n)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        return out

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=60)


def transport(kind: str, workers: int):
    return Stdio(workers) if kind == "stdio" else Http(workers)


def ok(msg: dict) -> None:
    if "result" not in msg or msg["result"].get("isError"):
        raise RuntimeError(f"call failed: {msg}")


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))]


def sequential(s, n: int, warm: int, cpu: list | None = None) -> list[float]:
    """Latencies (µs) of n sequential `add` calls after warm ones; the server's
    and its workers' CPU µs per call are appended to `cpu` when given."""
    for _ in range(warm):
        ok(s.one("add", {"x": 1, "y": 2}))
    out = []
    c0 = cpu_ns(s.proc.pid) if cpu is not None else 0
    for _ in range(n):
        t0 = time.perf_counter()
        msg = s.one("add", {"x": 1, "y": 2})
        out.append((time.perf_counter() - t0) * 1e6)
        ok(msg)
    if cpu is not None:
        cpu.append((cpu_ns(s.proc.pid) - c0) / n / 1e3)
    return out


def w2(kind: str, rounds: int, n: int) -> dict:
    """Rounds interleaved (1, 2, 1, 2, ...): each a fresh server, n calls."""
    lat: dict[int, list[float]] = {1: [], 2: []}
    p50s: dict[int, list[float]] = {1: [], 2: []}
    cpus: dict[int, list[float]] = {1: [], 2: []}
    for _ in range(rounds):
        for w in (1, 2):
            s = transport(kind, w)
            try:
                xs = sequential(s, n, n // 10, cpus[w])
            finally:
                s.close()
            lat[w] += xs
            p50s[w].append(statistics.median(xs))
    out = {f"workers{w}": {"p50_us": statistics.median(p50s[w]), "p99_us": pct(lat[w], 0.99),
                           "round_p50s_us": p50s[w], "cpu_us_per_call": statistics.median(cpus[w]),
                           "round_cpu_us_per_call": cpus[w]} for w in (1, 2)}
    out["added_p50_us"] = out["workers2"]["p50_us"] - out["workers1"]["p50_us"]
    out["added_cpu_us_per_call"] = out["workers2"]["cpu_us_per_call"] - out["workers1"]["cpu_us_per_call"]
    return out


def naps(kind: str, ns: list[int], calls: int, ms: int) -> dict:
    out = {}
    for w in ns:
        s = transport(kind, w)
        try:
            ok(s.one("nap", {"ms": 1}))
            t0 = time.perf_counter()
            for msg in s.batch("nap", {"ms": ms}, calls):
                ok(msg)
            dt = time.perf_counter() - t0
        finally:
            s.close()
        out[w] = {"seconds": dt, "calls_per_s": calls / dt}
    base = out[ns[0]]["calls_per_s"] / ns[0]
    for w in ns:
        ideal = min(w, calls) * base
        out[w]["share_of_ideal"] = out[w]["calls_per_s"] / ideal
    return out


def busy(kind: str, n: int) -> dict:
    s = transport(kind, 4)
    try:
        idle = sequential(s, n, n // 10)
        if kind == "stdio":
            # Three 2 s calls in flight the whole time (sent ahead; their
            # answers are skipped as they come).
            for k in range(3):
                s.send(call(10_000_000 + k, "nap", {"ms": 2000}))
            loaded = []
            for _ in range(n):
                s.next += 1
                t0 = time.perf_counter()
                s.send(call(s.next, "add", {"x": 1, "y": 2}))
                while True:
                    msg = s.recv()
                    if msg["id"] == s.next:
                        break
                    s.send(call(msg["id"] + 3, "nap", {"ms": 2000}))
                loaded.append((time.perf_counter() - t0) * 1e6)
        else:
            stop = threading.Event()

            def nap() -> None:
                while not stop.is_set():
                    s.one("nap", {"ms": 2000})

            ts = [threading.Thread(target=nap) for _ in range(3)]
            for t in ts:
                t.start()
            time.sleep(0.2)
            loaded = sequential(s, n, 0)
            stop.set()
            for t in ts:
                t.join()
    finally:
        s.close()
    i, l_ = statistics.median(idle), statistics.median(loaded)
    return {"idle_p50_us": i, "loaded_p50_us": l_, "ratio": l_ / i}


def memory(workers: int) -> dict:
    s = Stdio(workers)
    try:
        for _ in range(20):
            ok(s.one("add", {"x": 1, "y": 2}))
        kids = [p for p in children(s.proc.pid)]
        return {"server_mb": rss_mb(s.proc.pid), "worker_mb": [rss_mb(p) for p in kids]}
    finally:
        s.close()


ROOT = HERE.parent.parent
LEGACY = "2025-06-18"


def peer_command(name: str) -> list[str]:
    py = os.environ.get("PYTHON", "/root/.cache/mcplite-venv/bin/python")
    node = os.environ.get("NODE", "node")
    return {
        "py-lowlevel": [py, str(ROOT / "bench/peers/python/py_lowlevel.py")],
        "ts-sdk1": [node, str(ROOT / "bench/peers/node/ts_sdk1.mjs")],
    }.get(name) or ["Rscript", "--vanilla", str(SERVER)]


def spin(servers: list[str], calls: int, ms: int) -> dict:
    """`calls` calls of a `ms` ms busy loop sent at once over stdio (legacy era,
    after initialize; the same client for every server): the time until the
    last answer, calls/s, each call's latency from the send, and the server's
    CPU (its workers' included)."""
    out = {}
    for name in servers:
        workers = int(name.split(":")[1]) if name.startswith("mcplite:") else 1
        env = dict(os.environ, MCPLITE_WORKERS=str(workers), MCPLITE_TRANSPORT="stdio", BENCH_SPIN="1",
                   BENCH_TOOLS="1")
        proc = subprocess.Popen(peer_command(name), env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL)

        def send(msg: dict) -> None:
            proc.stdin.write((json.dumps(msg) + "\n").encode())
            proc.stdin.flush()

        def answer() -> dict:
            while True:
                msg = json.loads(proc.stdout.readline())
                if "id" in msg:
                    return msg

        try:
            send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}})
            answer()
            send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            legacy = lambda i: {"jsonrpc": "2.0", "id": i, "method": "tools/call",  # noqa: E731
                                "params": {"name": "spin", "arguments": {"ms": ms}}}
            send(legacy(1))
            ok(answer())
            c0 = cpu_ns(proc.pid)
            t0 = time.perf_counter()
            proc.stdin.write(b"".join((json.dumps(legacy(100 + k)) + "\n").encode() for k in range(calls)))
            proc.stdin.flush()
            lat = []
            for _ in range(calls):
                ok(answer())
                lat.append(time.perf_counter() - t0)
            dt = time.perf_counter() - t0
            cpu = (cpu_ns(proc.pid) - c0) / 1e9
        finally:
            proc.stdin.close()
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
        out[name] = {"seconds": dt, "calls_per_s": calls / dt, "latency_p50_s": statistics.median(lat),
                     "latency_max_s": max(lat), "cpu_s": cpu}
    return out


def load() -> str:
    """The load averages (1, 5, 15 min): how shared the machine was."""
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default=str(HERE.parent / "results" / "workers"))
    ap.add_argument("--transports", default="stdio,http")
    ap.add_argument("--only", default="", help="comma-separated rows to run (w2,naps,busy,memory); default all")
    ap.add_argument("--spin-servers", default="mcplite:1,mcplite:2,mcplite:4,py-lowlevel,ts-sdk1",
                    help="servers of the spin row: mcplite:N (N workers), py-lowlevel, ts-sdk1")
    a = ap.parse_args()
    rounds, n = (1, 300) if a.quick else (a.rounds, 2000)
    only = set(a.only.split(",")) if a.only else {"w2", "naps", "busy", "spin", "memory"}
    res: dict = {"machine": os.uname().release, "nproc": os.cpu_count(), "load_before": load(),
                 "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    for kind in a.transports.split(","):
        print(f"== {kind}", file=sys.stderr)
        res[kind] = {}
        if "w2" in only:
            res[kind]["w2"] = w2(kind, rounds, n)
        if "naps" in only:
            res[kind]["naps"] = naps(kind, [1, 2, 4, 8], 16, 200)
        if "busy" in only:
            res[kind]["busy"] = busy(kind, n // 4)
        print(json.dumps(res[kind], indent=1), file=sys.stderr)
    if "spin" in only:
        res["spin"] = spin(a.spin_servers.split(","), 16, 200)
        print(json.dumps(res["spin"], indent=1), file=sys.stderr)
    if "memory" in only:
        res["memory"] = {"workers1": memory(1), "workers4": memory(4)}
    res["load_after"] = load()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(res, indent=1) + "\n")
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
