"""Helpers shared by the Python client tests: locating the server scripts and R,
running a server over raw stdio lines, and validating against the official schemas."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import jsonschema
from referencing import Registry, Resource

HERE = Path(__file__).resolve().parent
CLIENTS = HERE.parent
REPO = CLIENTS.parent.parent
SERVERS = CLIENTS / "servers"
# The official schemas: tests/data/mcp-schema (its README.md says where they come from).
SCHEMA_DIR = Path(os.environ.get("MCPLITE_SCHEMA_DIR", REPO / "tests" / "data" / "mcp-schema")).resolve()

LEGACY_VERSIONS = ("2024-11-05", "2025-06-18", "2025-11-25")
MODERN_VERSION = "2026-07-28"
ALL_VERSIONS = LEGACY_VERSIONS + (MODERN_VERSION,)
SUPPORTED = ["2026-07-28", "2025-11-25", "2025-06-18", "2024-11-05"]


def rscript() -> str:
    found = shutil.which("Rscript")
    if not found:
        raise RuntimeError("Rscript not found on PATH")
    return found


def server_env() -> dict[str, str]:
    """The environment the server needs beyond a client's default minimal one.

    MCP clients do not forward the shell environment, so R_LIBS (where the test
    build of mcplite lives) is passed explicitly, like a client configuration would."""
    env: dict[str, str] = {}
    lib = os.environ.get("MCPLITE_LIB") or os.environ.get("R_LIBS")
    if lib:
        env["R_LIBS"] = lib
    return env


def server_command(script: str = "everything.R") -> tuple[str, list[str]]:
    return rscript(), ["--vanilla", str(SERVERS / script)]


@dataclass
class Run:
    stdout: bytes
    stderr: str
    returncode: int

    @property
    def lines(self) -> list[bytes]:
        assert self.stdout == b"" or self.stdout.endswith(b"\n"), "output must end with a newline"
        return self.stdout.split(b"\n")[:-1] if self.stdout else []

    @property
    def messages(self) -> list[dict]:
        return [json.loads(line) for line in self.lines]


def run_lines(lines: list[str | bytes], script: str = "everything.R", timeout: float = 120) -> Run:
    """Start the server, write every line at once, close stdin and collect the output."""
    cmd, args = server_command(script)
    data = b"".join((line if isinstance(line, bytes) else line.encode("utf-8")) + b"\n" for line in lines)
    env = dict(os.environ)
    env.update(server_env())
    proc = subprocess.run([cmd, *args], input=data, capture_output=True, timeout=timeout, env=env)
    return Run(proc.stdout, proc.stderr.decode("utf-8", "replace"), proc.returncode)


def req(id_, method, params=None) -> str:
    msg: dict = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        msg["params"] = params
    return json.dumps(msg)


def notif(method, params=None) -> str:
    msg: dict = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        msg["params"] = params
    return json.dumps(msg)


def modern_meta(version=MODERN_VERSION, **extra) -> dict:
    meta = {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "pytest", "version": "1.0"},
    }
    meta.update(extra)
    return meta


def initialize(id_, version) -> str:
    return req(
        id_,
        "initialize",
        {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "pytest", "version": "1.0"}},
    )


# ---------------------------------------------------------------------------
# Schema validation


@lru_cache(maxsize=None)
def _schema(version: str) -> tuple[dict, str, Registry]:
    path = SCHEMA_DIR / f"{version}.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    uri = f"urn:mcp-schema:{version}"
    registry = Registry().with_resource(uri, Resource.from_contents(doc))
    return doc, uri, registry


def definitions(version: str) -> dict:
    doc, _, _ = _schema(version)
    return doc.get("$defs") or doc["definitions"]


def has_definition(version: str, name: str) -> bool:
    return name in definitions(version)


@lru_cache(maxsize=None)
def _validator(version: str, name: str):
    doc, uri, registry = _schema(version)
    section = "$defs" if "$defs" in doc else "definitions"
    if name not in doc[section]:
        raise KeyError(f"{name} is not defined in the {version} schema")
    cls = jsonschema.validators.validator_for(doc)
    return cls({"$ref": f"{uri}#/{section}/{name}"}, registry=registry)


def validate(instance, version: str, name: str) -> None:
    """Raise jsonschema.ValidationError (with every error listed) unless valid."""
    errors = list(_validator(version, name).iter_errors(instance))
    if errors:
        detail = "\n".join(f"- at {list(e.absolute_path)}: {e.message}" for e in errors[:10])
        raise jsonschema.ValidationError(f"{version} {name} rejects {json.dumps(instance)[:600]}\n{detail}")


def error_envelope_name(version: str) -> str:
    return "JSONRPCErrorResponse" if has_definition(version, "JSONRPCErrorResponse") else "JSONRPCError"


def result_envelope_name(version: str) -> str:
    return "JSONRPCResultResponse" if has_definition(version, "JSONRPCResultResponse") else "JSONRPCResponse"


def validate_error_response(msg: dict, version: str) -> None:
    """Validate a JSON-RPC error response; `id: null` is special-cased (RULES P5).

    Every schema version types RequestId as string or integer, while JSON-RPC 2.0
    requires `null` when the request id cannot be determined. For those responses
    the envelope is checked by hand (exact members, id null) and the rest is
    validated with the id member removed (the error object is still validated in
    full, including the envelope's other members)."""
    assert list(msg.keys()) == ["jsonrpc", "id", "error"], msg
    name = error_envelope_name(version)
    if msg["id"] is None:
        rest = {k: v for k, v in msg.items() if k != "id"}
        if "id" in definitions(version)[name].get("required", []):
            # Older schemas require an id: validate the error member on its own.
            validate({"jsonrpc": "2.0", "id": 0, "error": msg["error"]}, version, name)
        else:
            validate(rest, version, name)
    else:
        validate(msg, version, name)
    if msg["error"]["code"] == -32022 and has_definition(version, "UnsupportedProtocolVersionError"):
        validate(msg, version, "UnsupportedProtocolVersionError")


def start_http_server(script: str, extra_env: dict[str, str] | None = None) -> tuple[subprocess.Popen, str]:
    """Start `script` over HTTP on a free port (MCPLITE_TRANSPORT=http); returns the
    process and the endpoint URL read from its start-up line on stderr."""
    cmd, args = server_command(script)
    env = dict(os.environ, **server_env(), MCPLITE_TRANSPORT="http", MCPLITE_PORT="0", **(extra_env or {}))
    proc = subprocess.Popen([cmd, *args], env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    seen = []
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        seen.append(line)
        m = re.search(r"(http://\S+/mcp)", line)
        if m:
            return proc, m.group(1)
    proc.kill()
    raise RuntimeError("the HTTP server did not start: " + "".join(seen))


def stop_http_server(proc: subprocess.Popen) -> int:
    """SIGTERM, then the exit status (the process is killed after 30 s)."""
    proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
