"""Every response the stdio server writes, for every protocol version, validated
against the official MCP JSON schema of that version (RULES P5), plus the per-version
projection rules (RULES P1-P3) that the schemas alone cannot see.

Each version gets one server process driven with raw lines: a complete session
(all methods, every tool of tests/clients/servers/everything.R, every error of L8)."""

from __future__ import annotations

import json

import pytest

from mcplite_driver import (
    ALL_VERSIONS,
    LEGACY_VERSIONS,
    MODERN_VERSION,
    SUPPORTED,
    has_definition,
    initialize,
    modern_meta,
    notif,
    req,
    result_envelope_name,
    run_lines,
    validate,
    validate_error_response,
)

# name -> arguments for every tool of everything.R (sleepy kept short).
TOOL_CALLS = {
    "echo": {"text": "héllo \"quoted\" \n line"},
    "add": {"x": 1.5, "y": 2.25},
    "fail": {"message": "boom: {\"a\":1}"},
    "flagged_error": {},
    "stats": {"values": [1, 2, 4]},
    "describe_point": {"x": 1, "y": -2.5},
    "series": {"n": 3},
    "greeting": None,
    "all_content": None,
    "basic_content": {},
    "table": None,
    "nothing": None,
    "forged": None,
    "noisy": None,
    "reader": None,
    "sleepy": {"seconds": 0},
    "search": {"query": "mcp", "limit": 3, "options": {"upper": True}, "mode": "fast"},
}

RESULT_DEF = {
    "initialize": "InitializeResult",
    "ping": "EmptyResult",
    "tools/list": "ListToolsResult",
    "tools/call": "CallToolResult",
    "server/discover": "DiscoverResult",
}

# Lines that are malformed whatever the version: (line, expected code, expected id).
MALFORMED = [
    (b"this is not json", -32700, None),
    (b'{"jsonrpc":"2.0","id":1,"method":"ping"', -32700, None),
    (b'{"jsonrpc":"2.0","id":"\xff\xfe","method":"ping"}', -32700, None),
    (b'{"jsonrpc":"2.0","id":1,"method":"ping"} trailing', -32700, None),
    (b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]', -32600, None),
    (b"42", -32600, None),
    (b"null", -32600, None),
    (b'{"jsonrpc":"2.0","id":73}', -32600, 73),
    (b'{"method":"ping"}', -32600, None),
    (b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', -32600, None),
    (b'{"jsonrpc":"1.0","id":"old","method":"ping"}', -32600, "old"),
    # Over the nesting limit, but the id can be read: answered with it (W1.4).
    (b'{"jsonrpc":"2.0","id":"deep","method":"ping","params":{"x":' + b"[" * 5000 + b"]" * 5000 + b"}}", -32602, "deep"),
]

# Lines that must produce no output at all.
SILENT = [
    b"",
    b"   \t",
    b'{"jsonrpc":"2.0","id":99,"result":{}}',
    # a cancellation for an id never sent (one naming an earlier request still
    # waiting its turn would drop that request, RULES C4.3)
    b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"never-sent"}}',
    b'{"jsonrpc":"2.0","method":"tools/call","params":{"name":"fail","arguments":{"message":"never runs"}}}',
]


class Session:
    """Lines to send, with what each request expects, then the server's answers."""

    def __init__(self, version: str):
        self.version = version
        self.lines: list[bytes] = []
        self.expect: list[tuple] = []  # (id, kind, method_or_code)
        # Legacy requests interleaved in a modern session are answered in the legacy
        # era, so they are validated against the newest legacy schema.
        self.schema_version: dict = {}
        # Legacy pings may be answered before requests sent earlier (RULES C5.1).
        self.may_overtake: set = set()

    def add(self, line, expect=None):
        self.lines.append(line if isinstance(line, bytes) else line.encode("utf-8"))
        if expect is not None:
            self.expect.append(expect)

    def request(self, id_, method, params=None, error=None):
        self.add(req(id_, method, params), (id_, "error", error) if error else (id_, "result", method))
        meta = params.get("_meta") if isinstance(params, dict) else None
        if method == "ping" and not (isinstance(meta, dict) and "io.modelcontextprotocol/protocolVersion" in meta):
            self.may_overtake.add(id_)

    def run(self):
        out = run_lines(self.lines)
        assert out.returncode == 0, out.stderr
        self.stderr = out.stderr
        self.responses = out.messages
        assert len(self.responses) == len(self.expect), (
            f"{len(self.expect)} responses expected, got {len(self.responses)}:\n{out.stdout.decode()}"
        )
        # Put the answers of legacy pings that overtook earlier requests back in their place.
        early = {m.get("id"): m for m in self.responses if m.get("id") in self.may_overtake}
        rest = iter([m for m in self.responses if m.get("id") not in early])
        self.responses = [early.pop(e[0]) if e[0] in early else next(rest) for e in self.expect]
        self.by_id = {}
        for (id_, kind, what), msg in zip(self.expect, self.responses):
            assert msg["id"] == id_, (id_, msg)
            assert kind in msg, (kind, msg)
            if kind == "error":
                assert msg["error"]["code"] == what, msg
            if id_ is not None:
                self.by_id[id_] = msg
        return self


def add_common_errors(s: Session):
    for line, code, id_ in MALFORMED:
        s.add(line, (id_, "error", code))
    for line in SILENT:
        s.add(line)


def build_legacy(version: str) -> Session:
    s = Session(version)
    s.request("pre-list", "tools/list", error=-32600)
    s.request("pre-ping", "ping")
    s.request("pre-discover", "server/discover", {}, error=-32602)
    s.request("bad-init", "initialize", {"protocolVersion": version, "capabilities": {}}, error=-32602)
    s.add(initialize("init", version), ("init", "result", "initialize"))
    s.add(notif("notifications/initialized"))
    s.request("ni", "notifications/initialized", error=-32600)
    s.request("ping", "ping", {"_meta": {"progressToken": 1}})
    s.request(1, "tools/list")
    s.request(2, "tools/list", {"cursor": None, "_meta": {}})
    s.request("cursor", "tools/list", {"cursor": "page-2"}, error=-32602)
    s.request("list-params", "tools/list", ["not", "an", "object"], error=-32602)
    for name, args in TOOL_CALLS.items():
        params = {"name": name}
        if args is not None:
            params["arguments"] = args
        s.request(f"call-{name}", "tools/call", params)
    s.request("call-unused", "tools/call", {"name": "echo", "arguments": {"text": "a", "extra": 1}})
    s.request("call-unknown", "tools/call", {"name": "nope"}, error=-32602)
    s.request("call-noname", "tools/call", {"arguments": {}}, error=-32602)
    s.request("call-badargs", "tools/call", {"name": "echo", "arguments": [1]}, error=-32602)
    s.request("discover", "server/discover", {"_meta": {}}, error=-32602)
    s.request("resources", "resources/list", error=-32601)
    s.request("prompts", "prompts/list", {}, error=-32601)
    add_common_errors(s)
    # re-initialization replaces the version and still validates
    s.add(initialize("reinit", version), ("reinit", "result", "initialize"))
    s.request("big-id-check", "ping")
    return s


def build_modern() -> Session:
    s = Session(MODERN_VERSION)
    m = modern_meta()
    s.request("disc", "server/discover", {"_meta": m})
    s.request("list", "tools/list", {"_meta": m})
    s.request("list-null-cursor", "tools/list", {"_meta": m, "cursor": None})
    for name, args in TOOL_CALLS.items():
        params = {"name": name, "_meta": m}
        if args is not None:
            params["arguments"] = args
        s.request(f"call-{name}", "tools/call", params)
    s.request("call-unused", "tools/call", {"name": "echo", "arguments": {"text": "a", "extra": 1}, "_meta": m})
    s.request("call-unknown", "tools/call", {"name": "nope", "_meta": m}, error=-32602)
    s.request("call-badargs", "tools/call", {"name": "echo", "arguments": "x", "_meta": m}, error=-32602)
    s.request("cursor", "tools/list", {"_meta": m, "cursor": "x"}, error=-32602)
    s.request("ping", "ping", {"_meta": m}, error=-32601)
    s.request("init", "initialize", {"_meta": m}, error=-32601)
    s.request("other", "resources/list", {"_meta": m}, error=-32601)
    s.request("old-version", "tools/list", {"_meta": modern_meta("2025-11-25")}, error=-32022)
    s.request("future", "server/discover", {"_meta": modern_meta("2099-01-01")}, error=-32022)
    s.request("nonstring", "tools/list", {"_meta": modern_meta(20260728)}, error=-32602)
    no_caps = {"io.modelcontextprotocol/protocolVersion": MODERN_VERSION}
    s.request("no-caps", "tools/list", {"_meta": no_caps}, error=-32602)
    s.request(
        "bad-caps",
        "tools/call",
        {"name": "echo", "_meta": {**no_caps, "io.modelcontextprotocol/clientCapabilities": []}},
        error=-32602,
    )
    s.request("bad-info", "tools/list", {"_meta": {**m, "io.modelcontextprotocol/clientInfo": "junk"}})
    # RULES G1.2: a log level that names no level is refused
    s.request("bad-level", "tools/list", {"_meta": {**m, "io.modelcontextprotocol/logLevel": 3}}, error=-32602)
    s.add(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized", "params": {"_meta": m}}))
    # legacy traffic interleaved on the same stream: not initialized, ping works
    s.request("legacy-list", "tools/list", error=-32600)
    s.request("legacy-ping", "ping")
    s.schema_version.update({"legacy-list": "2025-11-25", "legacy-ping": "2025-11-25"})
    add_common_errors(s)
    s.request("after", "tools/call", {"name": "add", "arguments": {"x": 2, "y": 3}, "_meta": m})
    return s


_sessions: dict[str, Session] = {}


@pytest.fixture(params=ALL_VERSIONS)
def session(request) -> Session:
    v = request.param
    if v not in _sessions:
        _sessions[v] = (build_modern() if v == MODERN_VERSION else build_legacy(v)).run()
    return _sessions[v]


def method_of(s: Session, id_):
    for line in s.lines:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if isinstance(msg, dict) and msg.get("id") == id_ and "method" in msg:
            return msg["method"]
    raise KeyError(id_)


def test_every_response_validates_against_its_version_schema(session: Session):
    checked = 0
    for (id_, kind, what), msg in zip(session.expect, session.responses):
        v = session.schema_version.get(id_, session.version)
        if kind == "error":
            validate_error_response(msg, v)
        else:
            assert list(msg.keys()) == ["jsonrpc", "id", "result"], msg
            validate(msg, v, result_envelope_name(v))
            method = what
            validate(msg["result"], v, RESULT_DEF[method])
            wrapper = RESULT_DEF[method] + "Response"
            if has_definition(v, wrapper):
                validate(msg, v, wrapper)
        checked += 1
    assert checked == len(session.expect) > 40


def test_error_messages_follow_l8(session: Session):
    r = session.by_id
    if session.version in LEGACY_VERSIONS:
        assert r["pre-list"]["error"]["message"] == "Invalid Request: server not initialized"
        assert r["pre-discover"]["error"]["message"] == (
            "Invalid params: missing _meta io.modelcontextprotocol/protocolVersion"
        )
        assert r["ni"]["error"]["message"] == "Invalid Request"
        assert r["resources"]["error"]["message"] == "Method not found"
        assert r["call-noname"]["error"]["message"] == "Invalid params"
    else:
        err = r["old-version"]["error"]
        assert err == {
            "code": -32022,
            "message": "Unsupported protocol version",
            "data": {"supported": SUPPORTED, "requested": "2025-11-25"},
        }
        assert r["future"]["error"]["data"]["requested"] == "2099-01-01"
        assert r["nonstring"]["error"]["message"] == (
            "Invalid params: _meta io.modelcontextprotocol/protocolVersion must be a string"
        )
        msg = "Invalid params: _meta io.modelcontextprotocol/clientCapabilities must be an object"
        assert r["no-caps"]["error"]["message"] == msg
        assert r["bad-caps"]["error"]["message"] == msg
        assert r["ping"]["error"] == {"code": -32601, "message": "Method not found"}
        assert r["legacy-list"]["error"]["message"] == "Invalid Request: server not initialized"
        assert r["legacy-ping"]["result"] == {}
    assert r["cursor"]["error"]["message"] == "Invalid params: invalid cursor"
    assert r["call-unknown"]["error"]["message"] == "Invalid params: unknown tool"
    parse_errors = [m for m in session.responses if m["id"] is None and m["error"]["code"] == -32700]
    assert parse_errors and all(m["error"] == {"code": -32700, "message": "Parse error"} for m in parse_errors)
    invalid = [m for m in session.responses if m["id"] is None and m["error"]["code"] == -32600]
    assert invalid and all(m["error"] == {"code": -32600, "message": "Invalid Request"} for m in invalid)
    for m in session.responses:
        if "error" in m:
            assert ("data" in m["error"]) == (m["error"]["code"] == -32022), m


def tools_of(s: Session) -> dict[str, dict]:
    return {t["name"]: t for t in s.by_id[1 if s.version in LEGACY_VERSIONS else "list"]["result"]["tools"]}


def call(s: Session, name: str) -> dict:
    return s.by_id[f"call-{name}"]["result"]


def test_tool_listing_projection(session: Session):
    v = session.version
    tools = tools_of(session)
    assert list(tools) == list(TOOL_CALLS)
    for t in tools.values():
        if v == "2024-11-05":
            assert list(t) == ["name", "description", "inputSchema"], t
        else:
            assert set(t) <= {"name", "description", "inputSchema", "annotations", "outputSchema"}, t
    if v != "2024-11-05":
        assert tools["echo"]["annotations"] == {"title": "Echo", "readOnlyHint": True, "idempotentHint": True}
        assert tools["stats"]["outputSchema"]["type"] == "object"
        assert tools["fail"]["annotations"] == {"destructiveHint": False, "openWorldHint": False, "x-vendor": "kept"}
    assert tools["search"]["inputSchema"]["$defs"]["options"]["type"] == "object"
    assert list(tools["search"]["inputSchema"]) == ["$schema", "type", "properties", "required", "$defs"]
    array_schema = {"type": "array", "items": {"type": "integer"}}
    if v == MODERN_VERSION:
        assert tools["series"]["outputSchema"] == array_schema
        res = session.by_id["list"]["result"]
        assert list(res) == ["resultType", "tools", "ttlMs", "cacheScope", "_meta"]
        assert res["ttlMs"] == 300000 and res["cacheScope"] == "public"
    else:
        assert "outputSchema" not in tools["series"]
        res = session.by_id[1]["result"]
        assert list(res) == ["tools"]


def test_call_results_projection(session: Session):
    v = session.version
    modern = v == MODERN_VERSION
    for name in TOOL_CALLS:
        res = call(session, name)
        keys = [k for k in res]
        if modern:
            assert keys[0] == "resultType" and res["resultType"] == "complete"
            assert list(res["_meta"])[-1] == "io.modelcontextprotocol/serverInfo"
            assert res["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "mcplite"
            assert "ttlMs" not in res and "cacheScope" not in res
        else:
            assert "resultType" not in res
            assert "io.modelcontextprotocol/serverInfo" not in res.get("_meta", {})
        assert isinstance(res["isError"], bool)

    assert call(session, "echo")["content"] == [{"type": "text", "text": TOOL_CALLS["echo"]["text"]}]
    assert call(session, "add")["content"] == [{"type": "text", "text": "3.75"}]
    assert call(session, "fail")["isError"] is True
    assert call(session, "fail")["content"] == [{"type": "text", "text": "boom: {\"a\":1}"}]
    assert call(session, "flagged_error")["isError"] is True
    assert call(session, "table")["content"][0]["text"] == '[{"x":1,"y":"a"},{"x":2,"y":"b"}]'
    assert call(session, "nothing")["content"][0]["text"] == "{}"
    assert call(session, "forged")["isError"] is True
    assert call(session, "noisy")["content"] == [{"type": "text", "text": "quiet"}]
    assert call(session, "unused")["isError"] is True
    assert call(session, "sleepy")["content"][0]["text"] == "woke up"
    assert call(session, "search")["content"][0]["text"] == "MCP-1\nMCP-2\nMCP-3"

    stats = call(session, "stats")
    assert json.loads(stats["content"][0]["text"]) == {"mean": 2.3333, "sd": 1.5275, "n": 3}
    series = call(session, "series")
    greeting = call(session, "greeting")
    point = call(session, "describe_point")
    if v == "2024-11-05":
        for r in (stats, series, greeting, point):
            assert "structuredContent" not in r
    else:
        assert stats["structuredContent"] == {"mean": 2.3333, "sd": 1.5275, "n": 3}
        assert point["structuredContent"] == {"x": 1, "y": -2.5, "label": "(1, -2.5)"}
        if modern:
            assert series["structuredContent"] == [1, 2, 3]
            assert greeting["structuredContent"] == "hello"
        else:
            assert "structuredContent" not in series and "structuredContent" not in greeting
    # text content survives whatever the projection drops
    assert series["content"] == [{"type": "text", "text": "[1,2,3]"}]
    assert greeting["content"] == [{"type": "text", "text": '"hello"'}]


def test_structured_content_matches_advertised_output_schema(session: Session):
    from jsonschema import Draft202012Validator

    tools = tools_of(session)
    for name in ("stats", "series"):
        schema = tools[name].get("outputSchema")
        res = call(session, name)
        if schema is not None:
            assert "structuredContent" in res
            Draft202012Validator(schema).validate(res["structuredContent"])


def test_content_blocks_projection(session: Session):
    v = session.version
    allc = call(session, "all_content")
    basic = call(session, "basic_content")
    if v == "2024-11-05":
        assert allc["isError"] is True and len(allc["content"]) == 1
        text = allc["content"][0]["text"]
        assert "2024-11-05" in text and "audio" in text and "resource_link" in text
        assert text.index("audio") < text.index("resource_link")
        assert "structuredContent" not in allc and "_meta" not in allc
        first = basic["content"][0]
        assert first["annotations"] == {"priority": 1}
        assert basic["_meta"] == {"note": "basic"}
    else:
        types_ = [b["type"] for b in allc["content"]]
        assert types_ == ["text", "image", "audio", "resource_link", "resource", "resource"]
        text = allc["content"][0]
        assert text["annotations"] == {
            "audience": ["user"],
            "priority": 0.5,
            "lastModified": "2025-01-01T00:00:00Z",
        }
        assert text["_meta"] == {"source": "test"}
        link = allc["content"][3]
        assert link == {
            "type": "resource_link",
            "uri": "file:///tmp/report.csv",
            "name": "report.csv",
            "title": "Report",
            "description": "A CSV report.",
            "mimeType": "text/csv",
            "size": 42,
        }
        blob = allc["content"][5]
        assert blob["resource"] == {
            "uri": "file:///tmp/blob.bin",
            "mimeType": "application/octet-stream",
            "blob": "AAEC",
        }
        assert blob["_meta"] == {"origin": "memory"}
        assert allc["_meta"]["request_kind"] == "demo"
        assert list(allc["_meta"])[0] == "request_kind"
        assert basic["content"][0]["annotations"] == {"priority": 1, "lastModified": "2025-06-01T12:00:00Z"}
    assert basic["content"][2] == {"type": "resource", "resource": {"uri": "mem://greeting", "text": "hi"}}


def test_initialize_and_discover(session: Session):
    v = session.version
    if v in LEGACY_VERSIONS:
        res = session.by_id["init"]["result"]
        assert list(res) == ["protocolVersion", "capabilities", "serverInfo", "instructions"]
        assert res["protocolVersion"] == v
        assert res["capabilities"] == {"tools": {"listChanged": False}, "logging": {}}
        assert res["instructions"] == "Test server for mcplite client tests."
        assert session.by_id["ping"]["result"] == {}
        assert session.by_id["pre-ping"]["result"] == {}
    else:
        res = session.by_id["disc"]["result"]
        assert list(res) == [
            "resultType", "supportedVersions", "capabilities", "instructions", "ttlMs", "cacheScope", "_meta",
        ]
        assert res["supportedVersions"] == SUPPORTED
        assert res["ttlMs"] == 300000 and res["cacheScope"] == "public"
        assert list(res["_meta"]) == ["io.modelcontextprotocol/serverInfo"]


def test_unknown_legacy_version_negotiates_latest():
    out = run_lines([initialize(1, "2025-03-26"), initialize(2, "9999-01-01"), initialize(3, MODERN_VERSION)])
    assert out.returncode == 0
    msgs = out.messages
    assert [m["result"]["protocolVersion"] for m in msgs] == ["2025-11-25"] * 3
    for m in msgs:
        validate(m["result"], "2025-11-25", "InitializeResult")


def test_ids_are_echoed_byte_for_byte():
    ids = [b'"a\\u0041"', b"12345678901234567890", b"-0", b'""', b"0"]
    lines = [b'{"jsonrpc":"2.0","id":' + i + b',"method":"ping"}' for i in ids]
    out = run_lines(lines)
    assert out.lines == [b'{"jsonrpc":"2.0","id":' + i + b',"result":{}}' for i in ids]
    for m in out.messages:
        for v in LEGACY_VERSIONS:
            validate(m, v, result_envelope_name(v))
            validate(m["result"], v, "EmptyResult")
