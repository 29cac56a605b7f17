"""Telemetry end to end: a real mcplite stdio server (Rscript) exporting its
spans and metrics (RULES section 8) to a real OTLP/HTTP receiver on loopback,
directly and through the Rotel collector, and to stderr; stdout must stay pure
protocol."""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from google.protobuf import json_format
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from otlp_receiver import free_port, histogram_points, rotel_binary, server_env, start_receiver, start_rotel

HERE = Path(__file__).resolve().parent
SERVER = HERE / "trace_server.R"

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"
TP = f"00-{TRACE_ID}-{PARENT_ID}-01"
TRACE_ID2 = "0af7651916cd43dd8448eb211c80319c"
TP2 = f"00-{TRACE_ID2}-b7ad6b7169203331-01"
SECRET = "SECRET-e2e-argument-7d1f"
SPAN_KIND_SERVER = 2
STATUS_ERROR = 2
SCHEMA_URL = "https://opentelemetry.io/schemas/gen-ai-dev/1.42.0-dev"
BOUNDS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300]


def msg(**kw) -> str:
    return json.dumps({"jsonrpc": "2.0", **kw})


TRANSCRIPT = [
    msg(id=1, method="initialize", params={
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "otel-e2e-client", "version": "1"}}),
    msg(method="notifications/initialized"),
    "",
    "{not json",
    msg(id=2, method="tools/list"),
    msg(id=3, method="tools/call", params={
        "name": "echo", "arguments": {"text": SECRET},
        "_meta": {"traceparent": TP, "tracestate": "vendor=v1"}}),
    msg(id=4, method="tools/call", params={
        "name": "child_traceparent", "arguments": {}, "_meta": {"traceparent": TP2}}),
    msg(id=5, method="tools/call", params={"name": "fails", "arguments": {"text": SECRET}}),
    msg(id=6, method="tools/call", params={"name": "chatty", "arguments": {}}),
    msg(id=7, method="no/such"),
    msg(id=99, result={}),
]
EXPECTED_IDS = [1, None, 2, 3, 4, 5, 6, 7]
EXPECTED_NAMES = [
    "initialize", "notifications/initialized", "tools/list", "tools/call echo",
    "tools/call child_traceparent", "tools/call fails", "tools/call chatty", "_OTHER",
]


def run_server(env_extra: dict, lines=TRANSCRIPT, timeout=90):
    rscript = shutil.which("Rscript")
    assert rscript, "Rscript not on PATH"
    env = server_env(env_extra)
    data = "".join(l + "\n" for l in lines).encode()
    t0 = time.monotonic()
    p = subprocess.run([rscript, "--vanilla", str(SERVER)], input=data, capture_output=True,
                       env=env, timeout=timeout)
    return p, time.monotonic() - t0


def check_pure_protocol(stdout: bytes) -> list[dict]:
    """Every stdout line is one JSON-RPC response, in order; nothing else."""
    assert stdout.endswith(b"\n")
    out = [json.loads(l) for l in stdout.decode().splitlines()]
    assert [r.get("id") for r in out] == EXPECTED_IDS
    for r in out:
        assert r["jsonrpc"] == "2.0" and (("result" in r) != ("error" in r))
    assert out[1]["error"]["code"] == -32700
    assert SECRET in out[3]["result"]["content"][0]["text"]
    assert out[5]["result"]["isError"] is True
    assert out[6]["result"]["content"][0]["text"] == "done"
    assert out[7]["error"]["code"] == -32601
    return out


def child_traceparents(responses) -> list[str]:
    """(child process TRACEPARENT, mcp_trace_context()) seen by child_traceparent."""
    return responses[4]["result"]["content"][0]["text"].split(" ")


def check_spans(spans, responses):
    """The spans of TRANSCRIPT, in any arrival order."""
    by_name = {s.name: s for s in spans}
    assert sorted(by_name) == sorted(EXPECTED_NAMES), [s.name for s in spans]
    assert len(spans) == len(EXPECTED_NAMES)
    for s in spans:
        assert s.span.kind == SPAN_KIND_SERVER
        assert s.scope_name == "r.package.mcplite"
        assert s.schema_url == SCHEMA_URL
        assert s.resource["service.name"] == "R"
        a = s.attributes
        assert a["network.transport"] == "pipe"
        assert a["mcp.method.name"] == s.name.split(" ")[0]
        # Nothing private, anywhere in the encoded span.
        raw = s.span.SerializeToString()
        for secret in (SECRET.encode(), b"otel-e2e-client", b"condition text"):
            assert secret not in raw
        assert not any("vendor=v1" in str(v) or TRACE_ID in str(v) for v in a.values())
    init = by_name["initialize"].attributes
    assert init["jsonrpc.request.id"] == "1"
    assert init["mcp.protocol.version"] == "2025-06-18"
    assert by_name["notifications/initialized"].attributes == {
        "mcp.method.name": "notifications/initialized", "network.transport": "pipe",
        "mcp.protocol.version": "2025-06-18"}
    # Remote parent from params._meta.traceparent; tracestate carried.
    echo = by_name["tools/call echo"]
    assert echo.trace_id == TRACE_ID and echo.parent_span_id == PARENT_ID
    assert echo.span.trace_state == "vendor=v1"
    assert echo.attributes["gen_ai.tool.name"] == "echo"
    assert echo.attributes["gen_ai.operation.name"] == "execute_tool"
    # Without traceparent: a root span.
    assert by_name["tools/list"].parent_span_id == ""
    # Tool errors and JSON-RPC errors.
    fails = by_name["tools/call fails"]
    assert fails.attributes["error.type"] == "tool_error"
    assert fails.span.status.code == STATUS_ERROR and fails.span.status.message == ""
    unknown = by_name["_OTHER"]
    assert unknown.attributes["mcp.method.name"] == "_OTHER"
    assert unknown.attributes["rpc.method_original"] == "no/such"
    assert unknown.attributes["error.type"] == "-32601"
    assert unknown.attributes["rpc.response.status_code"] == "-32601"
    assert unknown.span.status.code == STATUS_ERROR
    assert unknown.span.status.message == responses[7]["error"]["message"]
    # The child process of child_traceparent saw exactly its span's context.
    child = by_name["tools/call child_traceparent"]
    assert child.trace_id == TRACE_ID2
    want = f"00-{child.trace_id}-{child.span_id}-01"
    assert child_traceparents(responses) == [want, want]


@pytest.fixture
def receiver():
    r = start_receiver()
    yield r
    r.close()


def test_otlp_http_to_loopback_receiver(receiver):
    p, _ = run_server({
        "OTEL_TRACES_EXPORTER": "otlp",
        "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint,
        "OTEL_EXPORTER_OTLP_HEADERS": "x-mcplite-test=yes",
    })
    assert p.returncode == 0, p.stderr.decode()
    responses = check_pure_protocol(p.stdout)
    # Flushed at exit: everything is there once the process has ended.
    spans = receiver.wait_for(len(EXPECTED_NAMES), timeout=2)
    check_spans(spans, responses)
    paths = {path for path, _ in receiver.requests}
    assert paths == {"/v1/traces"}
    assert all(h.get("x-mcplite-test") == "yes" for _, h in receiver.requests)
    assert all(h.get("content-type") == "application/x-protobuf" for _, h in receiver.requests)
    # The tool's stdout went to stderr, not to the protocol.
    assert "tool output on stdout" in p.stderr.decode()


def test_metrics_otlp_http_to_loopback_receiver(receiver):
    p, _ = run_server({
        "OTEL_METRICS_EXPORTER": "otlp",
        "OTEL_TRACES_EXPORTER": "otlp",
        "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint,
        "OTEL_EXPORTER_OTLP_METRICS_HEADERS": "x-mcplite-metrics=yes",
    })
    assert p.returncode == 0, p.stderr.decode()
    check_pure_protocol(p.stdout)
    # The final export at shutdown: everything is there once the process ended.
    points = receiver.wait_for_metric("mcp.server.session.duration", timeout=2)
    check_metrics(points)
    paths = {path for path, _ in receiver.requests}
    assert paths == {"/v1/traces", "/v1/metrics"}
    assert all(h.get("x-mcplite-metrics") == "yes" for path, h in receiver.requests if path == "/v1/metrics")
    assert all(h.get("content-type") == "application/x-protobuf" for _, h in receiver.requests)


def test_metrics_exported_periodically(receiver):
    """With a short interval, metrics arrive while the server still runs."""
    rscript = shutil.which("Rscript")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    lib = os.environ.get("MCPLITE_LIB")
    if lib:
        env["R_LIBS"] = lib + (":" + env["R_LIBS"] if env.get("R_LIBS") else "")
    env.update({"OTEL_METRICS_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint,
                "OTEL_METRIC_EXPORT_INTERVAL": "200"})
    proc = subprocess.Popen([rscript, "--vanilla", str(SERVER)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    try:
        proc.stdin.write((TRANSCRIPT[0] + "\n").encode())
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["id"] == 1
        points = receiver.wait_for_metric("mcp.server.operation.duration", timeout=20)
        assert proc.poll() is None  # still serving
        assert [p.attributes["mcp.method.name"] for p in points] == ["initialize"]
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
        proc.stdout.close()
    assert proc.returncode == 0


@pytest.mark.skipif(rotel_binary() is None, reason="rotel (PyPI) not installed")
def test_otlp_http_through_rotel_collector(receiver):
    """Spans and metrics through a real collector (Rotel) to the receiver."""
    collector = start_rotel(receiver.endpoint)
    try:
        p, _ = run_server({
            "OTEL_R_TRACES_EXPORTER": "http",
            "OTEL_TRACES_EXPORTER": "none",
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": collector.endpoint + "/v1/traces",
            "OTEL_R_METRICS_EXPORTER": "otlp",
            "OTEL_METRICS_EXPORTER": "none",
            "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": collector.endpoint + "/v1/metrics",
            "OTEL_SERVICE_NAME": "R",
        })
        assert p.returncode == 0, p.stderr.decode()
        responses = check_pure_protocol(p.stdout)
        spans = receiver.wait_for(len(EXPECTED_NAMES), timeout=20)
        assert len(spans) == len(EXPECTED_NAMES), collector.log()[-2000:]
        check_spans(spans, responses)
        points = receiver.wait_for_metric("mcp.server.session.duration", timeout=20)
        assert points, collector.log()[-2000:]
        check_metrics(points)
    finally:
        collector.stop()


def hex_ids_to_base64(obj):
    """OTLP/JSON writes trace and span ids as hex; protobuf's JSON mapping
    expects base64 for bytes fields. Convert so the official parser can check
    the rest of the structure."""
    if isinstance(obj, dict):
        return {k: (base64.b64encode(bytes.fromhex(v)).decode()
                    if k in ("traceId", "spanId", "parentSpanId") else hex_ids_to_base64(v))
                for k, v in obj.items()}
    if isinstance(obj, list):
        return [hex_ids_to_base64(x) for x in obj]
    return obj


def stderr_spans(stderr: bytes):
    from otlp_receiver import ReceivedSpan, attrs
    spans, other = [], []
    for line in stderr.decode().splitlines():
        if line.startswith('{"resourceSpans"'):
            req = trace_service_pb2.ExportTraceServiceRequest()
            json_format.Parse(json.dumps(hex_ids_to_base64(json.loads(line))), req)
            assert len(req.resource_spans) == 1
            rs = req.resource_spans[0]
            assert len(rs.scope_spans) == 1 and len(rs.scope_spans[0].spans) == 1
            ss = rs.scope_spans[0]
            spans.append(ReceivedSpan(ss.spans[0], attrs(rs.resource.attributes), ss.scope.name, ss.scope.version,
                                      ss.schema_url))
        else:
            other.append(line)
    return spans, other


def stderr_metrics(stderr: bytes) -> list:
    """Histogram points of the OTLP/JSON metrics lines on stderr (one line per
    export), parsed with the official protobuf JSON mapping."""
    exports = []
    for line in stderr.decode().splitlines():
        if line.startswith('{"resourceMetrics"'):
            req = metrics_service_pb2.ExportMetricsServiceRequest()
            json_format.Parse(json.dumps(hex_ids_to_base64(json.loads(line))), req)
            exports.append(histogram_points(req))
    return exports


def check_metrics(points):
    """The metrics of TRANSCRIPT (one export after shutdown: cumulative)."""
    ops = [p for p in points if p.metric == "mcp.server.operation.duration"]
    for p in points:
        assert p.scope_name == "r.package.mcplite"
        assert p.schema_url == SCHEMA_URL
        assert p.unit == "s"
        assert list(p.point.explicit_bounds) == BOUNDS
        assert p.resource["service.name"] == "R"
        a = p.attributes
        assert a["network.transport"] == "pipe"
        assert "jsonrpc.request.id" not in a and "rpc.method_original" not in a
    assert sum(p.point.count for p in ops) == len(EXPECTED_NAMES)

    def count(**want):
        return sum(p.point.count for p in ops if p.attributes == want)

    v = "2025-06-18"
    common = {"network.transport": "pipe", "mcp.protocol.version": v}
    assert count(**{"mcp.method.name": "initialize"}, **common) == 1
    assert count(**{"mcp.method.name": "notifications/initialized"}, **common) == 1
    assert count(**{"mcp.method.name": "tools/list"}, **common) == 1
    call = {"mcp.method.name": "tools/call", "gen_ai.operation.name": "execute_tool", **common}
    for tool in ("echo", "child_traceparent", "chatty"):
        assert count(**call, **{"gen_ai.tool.name": tool}) == 1, tool
    assert count(**call, **{"gen_ai.tool.name": "fails", "error.type": "tool_error"}) == 1
    assert count(**{"mcp.method.name": "_OTHER", "error.type": "-32601", "rpc.response.status_code": "-32601"},
                 **common) == 1
    sessions = [p for p in points if p.metric == "mcp.server.session.duration"]
    assert len(sessions) == 1 and sessions[0].point.count == 1
    assert sessions[0].attributes == {"mcp.protocol.version": v, "network.transport": "pipe"}


def test_stderr_exporter():
    p, _ = run_server({"OTEL_R_TRACES_EXPORTER": "stderr", "OTEL_METRICS_EXPORTER": "stderr"})
    assert p.returncode == 0, p.stderr.decode()
    responses = check_pure_protocol(p.stdout)
    spans, other = stderr_spans(p.stderr)
    check_spans(spans, responses)
    exports = stderr_metrics(p.stderr)
    # The default interval is a minute: one export, at shutdown.
    assert len(exports) == 1
    check_metrics(exports[0])
    assert not any("warning" in l.lower() for l in other), other


@pytest.mark.parametrize("workers", ["1", "2"])
def test_stderr_lines_wait_for_a_printing_tool(workers):
    """RULES T8: metric lines exported every 50 ms while a tool pauses in the
    middle of printing a line wait for the tool; its line stays whole and
    every telemetry line stays one parseable line. With worker processes
    (RULES N1) their output reaches stderr in whole lines."""
    lines = [TRANSCRIPT[0], TRANSCRIPT[1],
             msg(id=2, method="tools/call", params={"name": "halting", "arguments": {}})]
    p, _ = run_server({"OTEL_R_TRACES_EXPORTER": "stderr", "OTEL_METRICS_EXPORTER": "stderr",
                       "OTEL_METRIC_EXPORT_INTERVAL": "50", "MCPLITE_WORKERS": workers}, lines=lines)
    assert p.returncode == 0, p.stderr.decode()
    out = [json.loads(l) for l in p.stdout.decode().splitlines()]
    assert out[1]["result"]["content"][0]["text"] == "printed"
    spans, other = stderr_spans(p.stderr)
    assert sorted(s.name for s in spans) == ["initialize", "notifications/initialized", "tools/call halting"], other
    assert "first half, second half" in other, other
    # Every other telemetry line is a whole metrics export.
    exports = stderr_metrics(p.stderr)
    telemetry = [l for l in other if "resource" in l]
    assert exports and len(exports) == len(telemetry), other
    assert all(l.startswith('{"resourceMetrics"') for l in telemetry), other


def test_unread_stderr_never_holds_up_requests():
    """RULES T8: with the stderr exporter and a client that never reads
    stderr, the exporter's write blocks once the pipe is full; requests are
    still answered, every one."""
    import threading
    n = 300
    lines = [TRANSCRIPT[0], TRANSCRIPT[1]] + [msg(id=10 + i, method="tools/list") for i in range(n)]
    proc = subprocess.Popen([shutil.which("Rscript"), "--vanilla", str(SERVER)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=server_env({"OTEL_R_TRACES_EXPORTER": "stderr"}))
    got: list = []
    reader = threading.Thread(target=lambda: got.extend(proc.stdout.readline() for _ in range(n + 1)), daemon=True)
    reader.start()
    try:
        proc.stdin.write("".join(l + "\n" for l in lines).encode())
        proc.stdin.flush()
        reader.join(timeout=60)
        ids = [json.loads(l)["id"] for l in got if l]
        assert ids == [1] + [10 + i for i in range(n)]
    finally:
        proc.kill()
        proc.wait()
        for f in (proc.stdin, proc.stdout, proc.stderr):
            f.close()


@pytest.mark.parametrize("value", ["stdout", "console"])
def test_stdout_exporters_are_redirected_to_stderr(value):
    p, _ = run_server({"OTEL_TRACES_EXPORTER": value})
    assert p.returncode == 0, p.stderr.decode()
    responses = check_pure_protocol(p.stdout)
    spans, other = stderr_spans(p.stderr)
    check_spans(spans, responses)
    warnings = [l for l in other if "stdout" in l and "stderr" in l and l.startswith("mcplite:")]
    assert len(warnings) == 1, other


def test_unknown_exporter_warns_and_stays_off(receiver):
    p, _ = run_server({"OTEL_TRACES_EXPORTER": "zipkin",
                       "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint})
    assert p.returncode == 0
    responses = check_pure_protocol(p.stdout)
    spans, other = stderr_spans(p.stderr)
    assert spans == []
    assert len([l for l in other if "zipkin" in l]) == 1
    # Tracing off: the tool sees no context at all.
    assert child_traceparents(responses) == [""] or child_traceparents(responses) == []


def test_dead_collector_costs_only_spans():
    port = free_port()  # nobody listens there
    p, _ = run_server({
        "OTEL_TRACES_EXPORTER": "otlp",
        "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{port}",
    })
    assert p.returncode == 0, p.stderr.decode()
    check_pure_protocol(p.stdout)
    err = p.stderr.decode()
    failures = [l for l in err.splitlines() if "export" in l and "failed" in l]
    assert 1 <= len(failures) <= 2, err  # one diagnostic, plus the drop summary


def test_tracing_off_by_default(receiver):
    p, _ = run_server({})
    assert p.returncode == 0
    responses = check_pure_protocol(p.stdout)
    spans, other = stderr_spans(p.stderr)
    # No telemetry diagnostics; the only mcplite line is the one RULES W2.2 owes
    # for the client response at the end of the transcript.
    diagnostics = [l for l in other if l.startswith("mcplite:")]
    assert spans == [] and len(diagnostics) == 1 and "response" in diagnostics[0], other
    assert child_traceparents(responses) in ([""], [])
    time.sleep(0.2)
    assert receiver.spans == []


def test_client_strings_stay_bounded(receiver):
    """A 5,000-character method and tool name: fixed span names, attributes
    cut to 256 characters, nothing client-chosen in metrics."""
    long_method, long_tool = "m" * 5000, "t" * 5000
    lines = [
        TRANSCRIPT[0],
        msg(id=2, method=long_method),
        msg(id=3, method="tools/call", params={"name": long_tool, "arguments": {}}),
        msg(id="i" * 5000, method="ping"),
    ]
    p, _ = run_server({"OTEL_TRACES_EXPORTER": "otlp", "OTEL_METRICS_EXPORTER": "otlp",
                       "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint}, lines=lines)
    assert p.returncode == 0, p.stderr.decode()
    # RULES C5.1: the ping may be answered before the tools/call ahead of it.
    by_id = {r["id"]: r for r in (json.loads(l) for l in p.stdout.decode().splitlines())}
    assert [by_id[i]["error"]["code"] for i in (2, 3)] == [-32601, -32602]
    assert by_id["i" * 5000]["result"] == {}
    spans = receiver.wait_for(4, timeout=2)
    assert sorted(s.name for s in spans) == ["_OTHER", "initialize", "ping", "tools/call"]
    by_name = {s.name: s for s in spans}
    assert by_name["_OTHER"].attributes["rpc.method_original"] == "m" * 256
    assert by_name["tools/call"].attributes["gen_ai.tool.name"] == "t" * 256
    assert by_name["ping"].attributes["jsonrpc.request.id"] == "i" * 256
    for s in spans:
        assert all(len(str(v)) <= 256 for v in s.attributes.values())
    points = receiver.wait_for_metric("mcp.server.operation.duration", timeout=2)
    for pt in points:
        assert all(len(str(v)) <= 32 for v in pt.attributes.values()), pt.attributes
    methods = sorted(pt.attributes["mcp.method.name"] for pt in points if pt.metric == "mcp.server.operation.duration")
    assert methods == ["_OTHER", "initialize", "ping", "tools/call"]


def test_attribute_length_limit(receiver):
    p, _ = run_server({"OTEL_TRACES_EXPORTER": "otlp", "OTEL_METRICS_EXPORTER": "otlp",
                       "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint,
                       "OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT": "8",
                       "OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT": "5"})
    assert p.returncode == 0, p.stderr.decode()
    check_pure_protocol(p.stdout)
    spans = receiver.wait_for(len(EXPECTED_NAMES), timeout=2)
    assert len(spans) == len(EXPECTED_NAMES)
    for s in spans:
        assert all(len(str(v)) <= 5 for v in s.attributes.values()), s.attributes
    assert {s.attributes["mcp.method.name"] for s in spans} >= {"tools", "initi"}
    points = receiver.wait_for_metric("mcp.server.operation.duration", timeout=2)
    assert points and all(len(str(v)) <= 8 for pt in points for v in pt.attributes.values())


def test_ambient_traceparent_link_and_baggage(receiver):
    ambient = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    lines = [
        TRANSCRIPT[0],
        msg(id=2, method="tools/call", params={
            "name": "child_env", "arguments": {},
            "_meta": {"traceparent": TP, "baggage": "tenant=acme,user=u%201"}}),
    ]
    p, _ = run_server({"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint,
                       "TRACEPARENT": ambient, "TRACESTATE": "amb=1"}, lines=lines)
    assert p.returncode == 0, p.stderr.decode()
    out = [json.loads(l) for l in p.stdout.decode().splitlines()]
    child = json.loads(out[1]["result"]["content"][0]["text"])
    # The child process saw the client's baggage, and the call's own span.
    assert sorted(child["BAGGAGE"].split(",")) == ["tenant=acme", "user=u%201"]
    assert child["ctx_baggage"] == child["BAGGAGE"]
    assert child["TRACEPARENT"].startswith(f"00-{TRACE_ID}-")
    # The server's own environment still holds the ambient value (RULES T9).
    assert child["own_TRACEPARENT"] == ambient
    spans = receiver.wait_for(2, timeout=2)
    assert len(spans) == 2
    for s in spans:
        assert len(s.span.links) == 1
        link = s.span.links[0]
        assert link.trace_id.hex() == "0af7651916cd43dd8448eb211c80319c"
        assert link.span_id.hex() == "b7ad6b7169203331"
        assert link.trace_state == "amb=1"
        # Baggage is never recorded.
        assert b"tenant" not in s.span.SerializeToString()
    call = next(s for s in spans if s.name == "tools/call child_env")
    assert call.trace_id == TRACE_ID and call.parent_span_id == PARENT_ID
