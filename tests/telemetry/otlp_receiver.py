"""A small OTLP/HTTP receiver for the tests, plus helpers to run the Rotel
collector in front of it.

The receiver decodes every POST body with the official `opentelemetry-proto`
package: `/v1/metrics` as an `ExportMetricsServiceRequest` (keeping every
histogram data point), anything else as an `ExportTraceServiceRequest`
(keeping the spans), each with its resource and instrumentation scope."""

from __future__ import annotations

import gzip
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.proto.metrics.v1 import metrics_pb2
from opentelemetry.proto.trace.v1 import trace_pb2


def attrs(kvs) -> dict:
    """KeyValue list -> {key: python value} (strings, bools, ints, doubles)."""
    out = {}
    for kv in kvs:
        v = kv.value
        kind = v.WhichOneof("value")
        out[kv.key] = getattr(v, kind) if kind else None
    return out


@dataclass
class ReceivedSpan:
    span: trace_pb2.Span
    resource: dict
    scope_name: str
    scope_version: str
    schema_url: str = ""

    @property
    def name(self) -> str:
        return self.span.name

    @property
    def attributes(self) -> dict:
        return attrs(self.span.attributes)

    @property
    def trace_id(self) -> str:
        return self.span.trace_id.hex()

    @property
    def span_id(self) -> str:
        return self.span.span_id.hex()

    @property
    def parent_span_id(self) -> str:
        return self.span.parent_span_id.hex()


@dataclass
class ReceivedPoint:
    """One histogram data point of a metrics export."""
    metric: str
    unit: str
    point: metrics_pb2.HistogramDataPoint
    resource: dict
    scope_name: str
    schema_url: str

    @property
    def attributes(self) -> dict:
        return attrs(self.point.attributes)


def histogram_points(req, scope_filter=None) -> list:
    out = []
    for rm in req.resource_metrics:
        res = attrs(rm.resource.attributes)
        for sm in rm.scope_metrics:
            for m in sm.metrics:
                if m.WhichOneof("data") != "histogram":
                    continue
                for dp in m.histogram.data_points:
                    out.append(ReceivedPoint(m.name, m.unit, dp, res, sm.scope.name, sm.schema_url))
    return out


@dataclass
class Receiver:
    server: ThreadingHTTPServer
    spans: list = field(default_factory=list)
    requests: list = field(default_factory=list)
    # One list of histogram points per metrics request, in arrival order.
    metric_exports: list = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def port(self) -> int:
        return self.server.server_address[1]

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def add(self, path: str, headers: dict, body: bytes) -> None:
        if path.endswith("/v1/metrics"):
            mreq = metrics_service_pb2.ExportMetricsServiceRequest()
            mreq.ParseFromString(body)
            points = histogram_points(mreq)
            with self.lock:
                self.requests.append((path, headers))
                self.metric_exports.append(points)
            return
        req = trace_service_pb2.ExportTraceServiceRequest()
        req.ParseFromString(body)
        got = []
        for rs in req.resource_spans:
            res = attrs(rs.resource.attributes)
            for ss in rs.scope_spans:
                for sp in ss.spans:
                    got.append(ReceivedSpan(sp, res, ss.scope.name, ss.scope.version, ss.schema_url))
        with self.lock:
            self.requests.append((path, headers))
            self.spans.extend(got)

    def wait_for_metric(self, name: str, timeout: float = 15.0) -> list:
        """The points of the last export that has metric `name`."""
        deadline = time.monotonic() + timeout
        while True:
            with self.lock:
                for export in reversed(self.metric_exports):
                    if any(p.metric == name for p in export):
                        return list(export)
            if time.monotonic() >= deadline:
                return []
            time.sleep(0.05)

    def wait_for(self, n: int, timeout: float = 15.0) -> list:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if len(self.spans) >= n:
                    return list(self.spans)
            time.sleep(0.05)
        with self.lock:
            return list(self.spans)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def start_receiver() -> Receiver:
    holder: dict = {}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):  # noqa: N802
            length = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(length)
            if self.headers.get("Content-Encoding", "").lower() == "gzip":
                body = gzip.decompress(body)
            try:
                holder["r"].add(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                status, out = 200, trace_service_pb2.ExportTraceServiceResponse().SerializeToString()
            except Exception as e:  # undecodable: a failure the test will see
                status, out = 400, str(e).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        def log_message(self, *args):
            pass

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    r = Receiver(srv)
    holder["r"] = r
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return r


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rotel_binary() -> str | None:
    try:
        import rotel  # noqa: F401
    except ImportError:
        return None
    path = Path(rotel.__file__).parent / "rotel-agent"
    return str(path) if path.exists() else shutil.which("rotel-agent")


@dataclass
class Collector:
    proc: subprocess.Popen
    http_port: int
    workdir: str

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    def log(self) -> str:
        p = Path(self.workdir) / "rotel.log"
        return p.read_text(errors="replace") if p.exists() else ""

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.workdir, ignore_errors=True)


def start_rotel(forward_to: str) -> Collector:
    """Run the Rotel collector (foreground) receiving OTLP/HTTP on a free
    loopback port and exporting OTLP/HTTP to `forward_to`."""
    binary = rotel_binary()
    if binary is None:
        raise RuntimeError("the rotel package is not installed")
    http_port, grpc_port = free_port(), free_port()
    workdir = tempfile.mkdtemp(prefix="mcplite-rotel-")
    args = [
        binary, "start",
        "--otlp-http-endpoint", f"127.0.0.1:{http_port}",
        "--otlp-grpc-endpoint", f"127.0.0.1:{grpc_port}",
        "--pid-file", os.path.join(workdir, "rotel.pid"),
        "--log-file", os.path.join(workdir, "rotel.log"),
        "--exporter", "otlp",
        "--otlp-exporter-endpoint", forward_to,
        "--otlp-exporter-protocol", "http",
        "--batch-timeout", "50ms",
    ]
    # Rotel reads ROTEL_* variables too: start it from a clean slate.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ROTEL_", "OTEL_"))}
    log = open(os.path.join(workdir, "stdout.log"), "wb")
    proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=env)
    c = Collector(proc, http_port, workdir)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            out = Path(workdir, "stdout.log").read_text(errors="replace")
            raise RuntimeError(f"rotel exited early ({proc.returncode}): {out}")
        try:
            with socket.create_connection(("127.0.0.1", http_port), timeout=0.2):
                return c
        except OSError:
            time.sleep(0.05)
    c.stop()
    raise RuntimeError("rotel did not start listening")


def server_env(extra: dict) -> dict:
    """The environment of a test server: this process's, without any
    telemetry variable, with mcplite found in $MCPLITE_LIB, plus `extra`."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("OTEL_") and k not in ("TRACEPARENT", "TRACESTATE", "BAGGAGE", "MCPLITE_LOG")}
    lib = os.environ.get("MCPLITE_LIB")
    if lib:
        env["R_LIBS"] = lib + (":" + env["R_LIBS"] if env.get("R_LIBS") else "")
    env.update(extra)
    return env
