"""End-to-end per-call latency of a real stdio server (Rscript) with telemetry
off versus on: spans over OTLP/HTTP batch export to a loopback sink, spans and
metrics over OTLP/HTTP, spans with the stderr exporter into /dev/null, and the
MCPLITE_LOG=info diagnostics into /dev/null. N pipelined tools/call requests are fed from a file;
per-call time = (time for N calls - time for 0 calls) / N, which removes R's
startup; the same for the server's CPU time (all its threads, exporters
included), which a loaded machine disturbs less than wall time. Modes
alternate; medians are reported. Not a test: numbers depend on the machine's
load.

Usage: python bench/trace_overhead.py [N] [rounds]   (R_LIBS must find mcplite)
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

HERE = Path(__file__).resolve().parent
N = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 3


class Sink(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    spans_bytes = 0

    def do_POST(self):  # noqa: N802
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        Sink.spans_bytes += len(body)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *a):
        pass


def transcript(n: int) -> bytes:
    lines = [json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"}}})]
    lines += [json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                          "params": {"name": "echo", "arguments": {"x": i}}}) for i in range(1, n + 1)]
    return ("\n".join(lines) + "\n").encode()


def child_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run(path: str, env: dict):
    """Wall time, CPU time of the server process, and its stdout line count."""
    with open(path, "rb") as inp:
        c0 = child_cpu()
        t0 = time.perf_counter()
        p = subprocess.run([shutil.which("Rscript"), "--vanilla", str(HERE / "trace_server.R")],
                           stdin=inp, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        dt = time.perf_counter() - t0
        cpu = child_cpu() - c0
    assert p.returncode == 0
    return dt, cpu, p.stdout.count(b"\n")


def main() -> None:
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Sink)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    base = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_") and k != "MCPLITE_LOG"}
    endpoint = f"http://127.0.0.1:{srv.server_address[1]}"
    # A span queue that holds the whole run: no span is dropped, so the
    # export thread's CPU covers every call (the default queue of 2,048
    # overflows at this rate, and a dropped span costs the exporter nothing).
    queue = {"OTEL_BSP_MAX_QUEUE_SIZE": str(N + 1024)}
    modes = {
        "off": {},
        "otlp": {"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, **queue},
        "metrics": {"OTEL_METRICS_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint},
        "otlp+metrics": {"OTEL_TRACES_EXPORTER": "otlp", "OTEL_METRICS_EXPORTER": "otlp",
                         "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, **queue},
        "stderr": {"OTEL_TRACES_EXPORTER": "stderr", **queue},
        "log": {"MCPLITE_LOG": "info"},
    }
    tmp = tempfile.mkdtemp()
    full, empty = os.path.join(tmp, "full.jsonl"), os.path.join(tmp, "empty.jsonl")
    Path(full).write_bytes(transcript(N))
    Path(empty).write_bytes(transcript(0))
    per_call = {m: [] for m in modes}
    cpu_call = {m: [] for m in modes}
    for r in range(ROUNDS):
        for m, extra in modes.items():
            env = {**base, **extra}
            t_full, c_full, lines = run(full, env)
            assert lines == N + 1, (m, lines)
            t_empty, c_empty, _ = run(empty, env)
            per_call[m].append((t_full - t_empty) / N * 1e6)
            cpu_call[m].append((c_full - c_empty) / N * 1e6)
    print(f"end to end through Rscript, {N} pipelined tools/call, {ROUNDS} rounds (medians)")
    for label, table in (("wall", per_call), ("cpu ", cpu_call)):
        off = statistics.median(table["off"])
        print(f"{label} {'off':12} {off:7.2f} us/call")
        for m in list(modes)[1:]:
            v = statistics.median(table[m])
            print(f"{label} {m:12} {v:7.2f} us/call  overhead {v - off:+6.2f} us/call  ratio {v / off:.2f}")
    print("all rounds (wall):", {m: [round(x, 2) for x in v] for m, v in per_call.items()})
    print("all rounds (cpu):", {m: [round(x, 2) for x in v] for m, v in cpu_call.items()})
    print(f"OTLP bytes received: {Sink.spans_bytes}")
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
