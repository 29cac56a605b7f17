"""Telemetry over Streamable HTTP end to end (RULES T10): a real mcplite HTTP
server (Rscript, `MCPLITE_TRANSPORT=http`) exporting spans and metrics over
OTLP/HTTP to the loopback receiver, which decodes them with the official
protobuf definitions. Concurrent requests each get their own MCP span with
the parent they sent; every HTTP request has an HTTP SERVER span that parents
(or, when `_meta` names a parent, is linked from) the MCP span; legacy HTTP
sessions record `mcp.server.session.duration`."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from otlp_receiver import free_port, server_env, start_receiver

HERE = Path(__file__).resolve().parent
SERVER = HERE / "trace_server.R"
MODERN = "2026-07-28"
SPAN_KIND_SERVER = 2
STATUS_UNSET = 0


@pytest.fixture
def receiver():
    r = start_receiver()
    yield r
    r.close()


def start_http_server(receiver, port: int, extra: dict | None = None) -> subprocess.Popen:
    rscript = shutil.which("Rscript")
    assert rscript, "Rscript not on PATH"
    env = server_env({
        "MCPLITE_TRANSPORT": "http", "MCPLITE_PORT": str(port),
        "OTEL_TRACES_EXPORTER": "otlp", "OTEL_METRICS_EXPORTER": "otlp",
        "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint,
        "OTEL_BSP_SCHEDULE_DELAY": "100",
        **(extra or {}),
    })
    p = subprocess.Popen([rscript, "--vanilla", str(SERVER)], stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
                if r.status == 200:
                    return p
        except OSError:
            time.sleep(0.1)
        assert p.poll() is None, p.stderr.read().decode()
    p.kill()
    raise AssertionError("the HTTP server did not start")


def post(url: str, body: dict, headers: dict) -> tuple[int, dict, dict]:
    h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers}
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers=h, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            raw = r.read()
            return r.status, dict(r.headers), (json.loads(raw) if raw else {})
    except urllib.error.HTTPError as e:
        raw = e.read()
        return e.code, dict(e.headers), (json.loads(raw) if raw else {})


def modern(id_: int, method: str, params: dict, traceparent: str | None = None) -> dict:
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
    if traceparent:
        meta["traceparent"] = traceparent
    return {"jsonrpc": "2.0", "id": id_, "method": method, "params": {**params, "_meta": meta}}


def modern_headers(method: str, name: str | None = None) -> dict:
    h = {"MCP-Protocol-Version": MODERN, "Mcp-Method": method}
    if name:
        h["Mcp-Name"] = name
    return h


def stop(p: subprocess.Popen) -> None:
    p.send_signal(signal.SIGTERM)
    try:
        assert p.wait(timeout=30) == 0, p.stderr.read().decode()
    finally:
        if p.poll() is None:
            p.kill()


def test_http_spans_concurrency_and_sessions(receiver):
    port = free_port()
    p = start_http_server(receiver, port)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        # 1. Concurrent modern requests, each with its own parent in _meta.
        def one(i: int):
            trace, parent = f"{0xabc00000 + i:032x}", f"{0x5000 + i:016x}"
            method = "tools/list" if i % 2 == 0 else "server/discover"
            status, _, body = post(url, modern(i, method, {}, f"00-{trace}-{parent}-01"), modern_headers(method))
            assert status == 200 and body["id"] == i, body
            return i, trace, parent, method

        with ThreadPoolExecutor(max_workers=16) as pool:
            sent = list(pool.map(one, range(1001, 1121)))
        # 2. A tool call whose only context is the traceparent header.
        header_trace, header_parent = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
        status, _, body = post(url, modern(500, "tools/call", {"name": "echo", "arguments": {"text": "x"}}),
                               {**modern_headers("tools/call", "echo"),
                                "traceparent": f"00-{header_trace}-{header_parent}-01"})
        assert status == 200, body
        # 3. Legacy sessions: one ended by DELETE, one left open until shutdown.
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}}
        status, h, _ = post(url, init, {})
        assert status == 200
        sid = {k.lower(): v for k, v in h.items()}["mcp-session-id"]
        status, _, body = post(url, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                     "params": {"name": "echo", "arguments": {"text": "y"}}},
                               {"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"})
        assert status == 200, body
        req = urllib.request.Request(url, headers={"Mcp-Session-Id": sid}, method="DELETE")
        with urllib.request.urlopen(req, timeout=10) as r:
            assert r.status == 200
        init2 = {**init, "params": {**init["params"], "protocolVersion": "2025-11-25"}}
        assert post(url, init2, {})[0] == 200
        # 4. An unknown method: 404, the client's error.
        assert post(url, modern(600, "no/such", {}), modern_headers("no/such"))[0] == 404
    finally:
        stop(p)

    n_http = 120 + 1 + 3 + 1 + 1
    spans = receiver.wait_for(2 * n_http, timeout=10)
    # (The start-up health checks have HTTP spans of their own: GET /health.)
    assert all(s.name == "GET /health" for s in spans
               if "http.request.method" in s.attributes and s.attributes.get("http.route") != "/mcp")
    http = {s.span_id: s for s in spans if s.attributes.get("http.route") == "/mcp"}
    mcp = [s for s in spans if "mcp.method.name" in s.attributes]
    assert len(http) == n_http, sorted(s.name for s in http.values())
    for s in spans:
        assert s.span.kind == SPAN_KIND_SERVER
        assert s.scope_name == "r.package.mcplite"
    for s in http.values():
        a = s.attributes
        assert s.name in ("POST /mcp", "DELETE /mcp"), s.name
        assert a["http.route"] == "/mcp" and a["url.path"] == "/mcp" and a["url.scheme"] == "http"
        assert a["server.address"] == "127.0.0.1" and a["server.port"] == port
        assert a["client.address"] == "127.0.0.1" and isinstance(a["client.port"], int)
        assert a["network.protocol.version"] == "1.1"
        assert a["http.response.status_code"] in (200, 202, 404)
        assert "error.type" not in a and s.span.status.code == STATUS_UNSET
    # Concurrent requests: each its own span, parent and attributes; its own
    # HTTP span linked (the parent came in _meta).
    by_id = {s.attributes.get("jsonrpc.request.id"): s for s in mcp}
    for i, trace, parent, method in sent:
        s = by_id[str(i)]
        assert (s.name, s.trace_id, s.parent_span_id) == (method, trace, parent), i
        assert s.attributes["network.transport"] == "tcp"
        assert s.attributes["mcp.protocol.version"] == MODERN
        assert len(s.span.links) == 1
        linked = http[s.span.links[0].span_id.hex()]
        assert linked.span.start_time_unix_nano <= s.span.start_time_unix_nano
        assert s.span.end_time_unix_nano <= linked.span.end_time_unix_nano
    assert len({s.span.links[0].span_id for s in mcp if s.span.links}) == len(sent)
    # The header's context parents the HTTP span, which parents the MCP span.
    call = by_id["500"]
    assert call.name == "tools/call echo"
    assert call.trace_id == header_trace and not call.span.links
    call_http = http[call.parent_span_id]
    assert call_http.trace_id == header_trace and call_http.parent_span_id == header_parent
    # Answered on R's thread, the call's span still ends inside its HTTP span.
    assert call.span.end_time_unix_nano <= call_http.span.end_time_unix_nano
    # The legacy call names its session.
    legacy_call = next(s for s in mcp if s.name == "tools/call echo" and s.attributes.get("jsonrpc.request.id") == "2")
    assert legacy_call.attributes["mcp.session.id"] == sid
    unknown = by_id["600"]
    assert unknown.attributes["error.type"] == "-32601"
    assert http[unknown.parent_span_id].attributes["http.response.status_code"] == 404

    # Metrics: operation durations over tcp; two HTTP sessions (DELETE, shutdown).
    points = receiver.wait_for_metric("mcp.server.session.duration", timeout=10)
    sessions = sorted((p.attributes["mcp.protocol.version"], p.point.count) for p in points
                      if p.metric == "mcp.server.session.duration")
    assert sessions == [("2025-06-18", 1), ("2025-11-25", 1)], sessions
    for p in points:
        assert p.attributes["network.transport"] == "tcp"
        assert p.attributes["network.protocol.name"] == "http"
    ops = [p for p in points if p.metric == "mcp.server.operation.duration"]
    assert sum(p.point.count for p in ops) == len(mcp)


def test_http_worker_spans_and_queue_wait_metric(receiver):
    """RULES N5.2 end to end: with two worker processes, each call's MCP span
    names the worker that ran it, and the server exports the histogram
    mcplite.worker.queue.duration (seconds) with one point per call."""
    port = free_port()
    p = start_http_server(receiver, port, {"MCPLITE_WORKERS": "2"})
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        def one(i: int):
            status, _, body = post(url, modern(i, "tools/call", {"name": "echo", "arguments": {"text": str(i)}}),
                                   modern_headers("tools/call", "echo"))
            assert status == 200 and body["result"]["content"][0]["text"] == f"echo: {i}", body
        with ThreadPoolExecutor(max_workers=4) as pool:
            list(pool.map(one, range(1, 5)))
    finally:
        stop(p)

    points = receiver.wait_for_metric("mcplite.worker.queue.duration", timeout=10)
    queue = [q for q in points if q.metric == "mcplite.worker.queue.duration"]
    assert queue, "no mcplite.worker.queue.duration exported"
    assert {q.unit for q in queue} == {"s"}
    assert sum(q.point.count for q in queue) == 4
    assert all(q.point.min >= 0 and q.point.sum >= 0 for q in queue)
    # Each request: its HTTP span and its MCP span.
    spans = receiver.wait_for(8, timeout=10)
    calls = [s for s in spans if s.name == "tools/call echo"]
    assert len(calls) == 4, [s.name for s in spans]
    assert {int(s.attributes["mcplite.worker.id"]) for s in calls} <= {1, 2}
    assert all(int(s.attributes["mcplite.worker.pid"]) > 0 for s in calls)


@pytest.mark.parametrize("workers", ["1", "2"])
def test_http_stderr_lines_never_split_a_printed_line(receiver, workers):
    """RULES T8, H7 over HTTP: span, metric and access log lines written
    while a tool pauses in the middle of printing a line on stderr (in the
    server's process, or in a worker, N1.2) never land inside that line. A
    request answered during the pause writes its access log line then (or,
    with the tool in the server's process, right after the tool)."""
    import threading
    port = free_port()
    p = start_http_server(receiver, port, {
        "OTEL_TRACES_EXPORTER": "stderr", "OTEL_METRICS_EXPORTER": "stderr",
        "OTEL_METRIC_EXPORT_INTERVAL": "50", "MCPLITE_WORKERS": workers})
    url = f"http://127.0.0.1:{port}/mcp"
    seen = bytearray()
    paused = threading.Event()

    def read_stderr():
        for chunk in iter(lambda: p.stderr.read1(4096), b""):
            seen.extend(chunk)
            if b"first half," in seen:
                paused.set()
    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    result: list = []
    call = threading.Thread(target=lambda: result.append(post(
        url, modern(1, "tools/call", {"name": "halting", "arguments": {}}), modern_headers("tools/call", "halting"))))
    try:
        call.start()
        assert paused.wait(timeout=30), seen.decode()
        # A request answered while the tool is half-way through its line.
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=10) as r:
            assert r.status == 200
        call.join(timeout=30)
        status, _, body = result[0]
        assert status == 200 and body["result"]["content"][0]["text"] == "printed", body
    finally:
        stop(p)
        reader.join(timeout=10)
    lines = seen.decode().splitlines()
    assert "first half, second half" in lines, "\n".join(l[:100] for l in lines)
    assert sum(l.startswith("mcplite access:") and "http_method=GET" in l for l in lines) >= 2, lines
    exports = [l for l in lines if "resourceMetrics" in l or "resourceSpans" in l]
    assert exports, lines
    assert all(l.startswith("{") for l in exports), lines
