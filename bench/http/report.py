"""Tables of the HTTP workloads: bench/results/http/results.json -> results.md.

    python bench/http/report.py bench/results/http

"Fastest peer" is the best peer (role "peer") for each metric; the ratios
compare medians from the same run. Goals (issue 16): sequential p50 at most
half the fastest peer's, throughput at least 3x, tools/list latency while a
2-second tool runs unaffected (p50 within 1.5x of the idle p50), flat RSS
(growth from 1,000 to 10,000 requests under 5 MB).
"""

import json
import sys
from pathlib import Path

out = Path(sys.argv[1])
doc = json.loads((out / "results.json").read_text())
servers = doc["servers"]
peers = [s for s in servers if s["role"] == "peer"]


def m(s, *path):
    v = s["metrics"]
    for p in path:
        v = v.get(p) if isinstance(v, dict) else None
        if v is None:
            return None
    return v


def best(path, lower=True):
    vals = [(m(p, *path), p["label"]) for p in peers if m(p, *path) is not None]
    if not vals:
        return None, None
    return (min if lower else max)(vals)


def f(x, d=1):
    return "n/a" if x is None else f"{x:,.{d}f}"


lines = []
machine = (out / "machine.txt").read_text().strip().splitlines() if (out / "machine.txt").exists() else []
lines += ["# HTTP workloads (bench/http/run.sh)", ""]
lines += [f"- {l}" for l in machine]
lines += [f"- driver: {doc['seconds']:.0f} s{' (quick run)' if doc['quick'] else ''}; load at the end {doc['loadavg_end']}", ""]
lines += [
    "| Server | add p50 (µs) | add p99 (µs) | no-tool request p50 (µs) | 16 connections (calls/s) | server CPU per call, sequential / 16 connections (µs) | driver CPU per call, 16 connections (µs) | tools/list p50 idle (µs) | tools/list p50 during a 2 s tool (µs) | 10 MB result (ms) | RSS start / 1k / 10k requests (MB) |",
    "|---|---|---|---|---|---|---|---|---|---|---|",
]
for s in servers:
    r = m(s, "rss_mb") or {}
    lines.append(
        f"| {s['label']} | {f(m(s, 'seq_add_us', 'median'))} | {f(m(s, 'seq_add_us', 'p99'))} "
        f"| {f(m(s, 'seq_notool_us', 'median'))} "
        f"| {f(m(s, 'throughput', 'per_second'), 0)} "
        f"| {f(m(s, 'seq_add_server_cpu_us'))} / {f(m(s, 'throughput', 'server_cpu_us_per_call'))} "
        f"| {f(m(s, 'throughput', 'driver_cpu_us_per_call'))} "
        f"| {f(m(s, 'list_us', 'idle', 'median'))} "
        f"| {f(m(s, 'list_us', 'during_tool', 'median'))} | {f(m(s, 'big_text_ms', 'median'))} "
        f"| {f(r.get('start'))} / {f(r.get('after_1k'))} / {f(r.get('after_10k'))} |"
    )
lines += ["", "## Goals (issue 16), mcplite against the fastest peer", ""]
lines += ["| Goal | mcplite | mcplite 2026-07-28 | Fastest peer | Status |", "|---|---|---|---|---|"]
ours = {s["id"]: s for s in servers if s["role"] == "mcplite"}
legacy, modern = ours.get("mcplite"), ours.get("mcplite-modern")


def row(name, path, lower, goal, fmt=1, unit=""):
    b, who = best(path, lower)
    vals = []
    ok = True
    for s in (legacy, modern):
        v = m(s, *path) if s else None
        if v is None or b is None:
            vals.append("n/a")
            continue
        ratio = v / b
        vals.append(f"{f(v, fmt)}{unit} = **{ratio:.2f}×**")
        # A goal holds for both protocol eras, or it is missed.
        ok = ok and goal(ratio)
    status = "met" if ok else "**missed**"
    lines.append(f"| {name} | {vals[0]} | {vals[1]} | {f(b, fmt)}{unit} ({who}) | {status} |")


row("add p50 ≤ 0.5× fastest peer", ("seq_add_us", "median"), True, lambda r: r <= 0.5, unit=" µs")
row("add p99 (info)", ("seq_add_us", "p99"), True, lambda r: True, unit=" µs")
row("throughput ≥ 3× fastest peer", ("throughput", "per_second"), False, lambda r: r >= 3, fmt=0, unit="/s")
row("server CPU per call, 16 connections (info)", ("throughput", "server_cpu_us_per_call"), True, lambda r: True, unit=" µs")
row("10 MB result (info)", ("big_text_ms", "median"), True, lambda r: True, unit=" ms")
for s in (legacy, modern):
    if not s:
        continue
    idle, busy = m(s, "list_us", "idle", "median"), m(s, "list_us", "during_tool", "median")
    r = m(s, "rss_mb") or {}
    growth = (r.get("after_10k") or 0) - (r.get("after_1k") or 0)
    lines.append(
        f"| {s['label']}: tools/list during a 2 s tool unaffected | {f(busy)} µs vs {f(idle)} µs idle "
        f"= {busy / idle:.2f}× | | | {'met' if busy <= 1.5 * idle else '**missed**'} |"
    )
    lines.append(
        f"| {s['label']}: flat RSS (1k → 10k requests) | {f(r.get('after_1k'))} → {f(r.get('after_10k'))} MB "
        f"({growth:+.1f} MB) | | | {'met' if growth < 5 else '**missed**'} |"
    )
for p in peers:
    idle, busy = m(p, "list_us", "idle", "median"), m(p, "list_us", "during_tool", "median")
    r = m(p, "rss_mb") or {}
    lines.append(
        f"| {p['label']} (peer, info) | tools/list {f(busy)} vs {f(idle)} µs idle; "
        f"RSS {f(r.get('after_1k'))} → {f(r.get('after_10k'))} MB | | | |"
    )
(out / "results.md").write_text("\n".join(lines) + "\n")
print("\n".join(lines))

# Rows for the README's speed table: how many times better mcplite (legacy
# sessions, what every peer speaks) is than each peer (above 1: mcplite is
# faster or smaller).
if legacy:
    by_id = {p["id"]: p for p in peers}
    cols = ["py-lowlevel", "ts-sdk1"]

    def ratio_row(name, path, lower=True, fmt=1, unit=""):
        ours_v = m(legacy, *path)
        cells = []
        for c in cols:
            v = m(by_id[c], *path) if c in by_id else None
            if v is None or ours_v is None:
                cells.append("n/a")
            else:
                r = v / ours_v if lower else ours_v / v
                cells.append(f"{r:.2g}×" if r < 10 else f"{r:.0f}×")
        return f"| {name} ({f(ours_v, fmt)}{unit}) | n/a | {cells[0]} | {cells[1]} | n/a | n/a |"

    readme = [
        ratio_row("HTTP `tools/call` latency, p50", ("seq_add_us", "median"), unit=" µs"),
        ratio_row("HTTP calls/s, 16 connections", ("throughput", "per_second"), lower=False, fmt=0, unit="/s"),
        ratio_row("HTTP `tools/list` p50 during a 2 s tool", ("list_us", "during_tool", "median"), unit=" µs"),
        ratio_row("HTTP 10 MB text result", ("big_text_ms", "median"), unit=" ms"),
        ratio_row("HTTP server RSS after 10,000 requests", ("rss_mb", "after_10k"), unit=" MB"),
    ]
    with open(out / "results.md", "a") as fh:
        fh.write("\n## Rows for the README speed table\n\n" + "\n".join(readme) + "\n")
    print("\n".join(readme))
