#!/usr/bin/env python3
"""Before/after of one change on the tools/call path, interleaved: the same
server script, run from two R libraries (two builds of mcplite), called in
alternating rounds so that drift of a shared machine hits both alike.

    python3 bench/ab/run.py --lib before=/tmp/lib-a --lib after=/tmp/lib-b \
        [--workers 0] [--rounds 5] [--calls 2000] [--log-level LEVEL] [--out FILE]

A library may carry its own log level as `name=path@level` (the same build
with and without a level set: what asking for log messages costs a call).

Each round starts a fresh stdio server per library (`bench/ab/server.R`, an
`add` tool; `--workers N` serves it from N worker processes), sends one
`initialize`, warms up with 200 calls, then times `--calls` sequential
`tools/call` round trips (a request is sent when the previous answer was
read). With `--log-level`, the session first sets that level with
`logging/setLevel` (RULES G1.1), so the calls pay for log handling; the tool
logs nothing. With `--asks`, the client declares the `elicitation` and
`sampling` capabilities (as Claude Code does), so every call may ask it
(RULES A1); the tool asks nothing. Prints and writes (JSON) p50, p90 and
p99 per library, pooled over rounds, and the ratio of the medians.
Standard library only."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SERVER = HERE / "server.R"


def rscript() -> str:
    return os.environ.get("RSCRIPT", "Rscript")


class Server:
    def __init__(self, lib: str, workers: int):
        env = dict(os.environ, R_LIBS=lib, MCPLITE_TRANSPORT="stdio", BENCH_WORKERS=str(workers))
        self.p = subprocess.Popen(
            [rscript(), "--vanilla", str(SERVER)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
        )
        self.n = 0

    def request(self, method: str, params: dict) -> dict:
        self.n += 1
        line = json.dumps({"jsonrpc": "2.0", "id": self.n, "method": method, "params": params})
        self.p.stdin.write(line.encode() + b"\n")
        self.p.stdin.flush()
        while True:
            out = self.p.stdout.readline()
            if not out:
                raise RuntimeError("the server ended")
            msg = json.loads(out)
            if msg.get("id") == self.n:
                return msg

    def close(self) -> None:
        self.p.stdin.close()
        self.p.wait(timeout=60)


def round_of(lib: str, workers: int, calls: int, level: str | None, asks: bool = False) -> list[float]:
    s = Server(lib, workers)
    try:
        caps = {"elicitation": {}, "sampling": {}} if asks else {}
        init = s.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": caps,
                                        "clientInfo": {"name": "ab", "version": "1"}})
        assert "result" in init, init
        if level:
            assert "result" in s.request("logging/setLevel", {"level": level})
        args = {"name": "add", "arguments": {"x": 1, "y": 2}}
        for _ in range(200):
            s.request("tools/call", args)
        times = []
        for _ in range(calls):
            t0 = time.perf_counter()
            r = s.request("tools/call", args)
            times.append((time.perf_counter() - t0) * 1e6)
            assert r["result"]["content"][0]["text"] == "3", r
        return times
    finally:
        s.close()


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", action="append", required=True, help="name=path, twice")
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--log-level")
    ap.add_argument("--asks", action="store_true", help="the client declares elicitation and sampling")
    ap.add_argument("--out")
    a = ap.parse_args()
    libs = [tuple(x.split("=", 1)) for x in a.lib]
    levels = {n: (p.split("@", 1)[1] if "@" in p else a.log_level) for n, p in libs}
    libs = [(n, p.split("@", 1)[0]) for n, p in libs]
    samples: dict[str, list[float]] = {n: [] for n, _ in libs}
    per_round: dict[str, list[float]] = {n: [] for n, _ in libs}
    load0 = os.getloadavg()
    for r in range(a.rounds):
        order = libs if r % 2 == 0 else list(reversed(libs))
        for name, lib in order:
            t = round_of(lib, a.workers, a.calls, levels[name], a.asks)
            samples[name] += t
            per_round[name].append(statistics.median(t))
            print(f"round {r + 1} {name}: p50 {statistics.median(t):.1f} us", file=sys.stderr)
    load1 = os.getloadavg()
    res = {
        "workers": a.workers, "rounds": a.rounds, "calls": a.calls, "log_levels": levels, "asks": a.asks,
        "load_before": load0, "load_after": load1,
        "libs": {n: {"p50_us": statistics.median(samples[n]), "p90_us": pct(samples[n], 0.9),
                     "p99_us": pct(samples[n], 0.99), "round_p50s_us": per_round[n]} for n, _ in libs},
    }
    (first, _), (second, _) = libs[0], libs[1]
    res["ratio_p50"] = res["libs"][second]["p50_us"] / res["libs"][first]["p50_us"]
    print(json.dumps(res, indent=2))
    if a.out:
        Path(a.out).write_text(json.dumps(res, indent=2) + "\n")


if __name__ == "__main__":
    main()
