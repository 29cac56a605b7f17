"""Tracing end to end: a real mcplite stdio server (Rscript) exporting its spans
(SPEC section 8) to a real OTLP/HTTP receiver on loopback, directly and through
the Rotel collector, and to stderr; stdout must stay pure protocol."""

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
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from otlp_receiver import free_port, rotel_binary, start_receiver, start_rotel

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
    "tools/call child_traceparent", "tools/call fails", "tools/call chatty", "no/such",
]


def run_server(env_extra: dict, lines=TRANSCRIPT, timeout=90):
    rscript = shutil.which("Rscript")
    assert rscript, "Rscript not on PATH"
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("OTEL_") and k not in ("TRACEPARENT", "TRACESTATE")}
    lib = os.environ.get("MCPLITE_LIB")
    if lib:
        env["R_LIBS"] = lib + (":" + env["R_LIBS"] if env.get("R_LIBS") else "")
    env.update(env_extra)
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
    assert set(by_name["notifications/initialized"].attributes) == {"mcp.method.name", "network.transport"}
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
    unknown = by_name["no/such"]
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
    assert all(h.get("Content-Type") == "application/x-protobuf" for _, h in receiver.requests)
    # The tool's stdout went to stderr, not to the protocol.
    assert "tool output on stdout" in p.stderr.decode()


@pytest.mark.skipif(rotel_binary() is None, reason="rotel (PyPI) not installed")
def test_otlp_http_through_rotel_collector(receiver):
    collector = start_rotel(receiver.endpoint)
    try:
        p, _ = run_server({
            "OTEL_R_TRACES_EXPORTER": "http",
            "OTEL_TRACES_EXPORTER": "none",
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": collector.endpoint + "/v1/traces",
            "OTEL_SERVICE_NAME": "R",
        })
        assert p.returncode == 0, p.stderr.decode()
        responses = check_pure_protocol(p.stdout)
        spans = receiver.wait_for(len(EXPECTED_NAMES), timeout=20)
        assert len(spans) == len(EXPECTED_NAMES), collector.log()[-2000:]
        check_spans(spans, responses)
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
            spans.append(ReceivedSpan(ss.spans[0], attrs(rs.resource.attributes), ss.scope.name, ss.scope.version))
        else:
            other.append(line)
    return spans, other


def test_stderr_exporter():
    p, _ = run_server({"OTEL_R_TRACES_EXPORTER": "stderr"})
    assert p.returncode == 0, p.stderr.decode()
    responses = check_pure_protocol(p.stdout)
    spans, other = stderr_spans(p.stderr)
    check_spans(spans, responses)
    assert not any("warning" in l.lower() for l in other), other


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
    # No telemetry diagnostics; the only mcplite line is the one SPEC W2.2 owes
    # for the client response at the end of the transcript.
    diagnostics = [l for l in other if l.startswith("mcplite:")]
    assert spans == [] and len(diagnostics) == 1 and "response" in diagnostics[0], other
    assert child_traceparents(responses) in ([""], [])
    time.sleep(0.2)
    assert receiver.spans == []
