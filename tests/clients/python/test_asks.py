"""Questions to the client (RULES section 18, issue 45): tools that call
mcp_elicit() and mcp_sample(), driven by the official Python SDK (mcp==2.3.0)
with its elicitation and sampling callbacks, over stdio and Streamable HTTP in
the legacy era; a client without the capability, a refusal, a timeout, and an
HTTP call that asks nothing answered as JSON."""

from __future__ import annotations

import asyncio
import json
import urllib.request

import pytest
from mcp import Client, StdioServerParameters
from mcp.types import CreateMessageResult, ElicitResult, ErrorData, TextContent

from mcplite_driver import server_command, server_env, start_http_server, stop_http_server

TIMEOUT = 60


def stdio(workers: int = 0) -> StdioServerParameters:
    cmd, args = server_command("asks.R")
    env = server_env()
    if workers:
        env["MCPLITE_WORKERS"] = str(workers)
    return StdioServerParameters(command=cmd, args=args, env=env)


class Recorder:
    def __init__(self, action="accept", content=None, delay=0.0):
        self.asked = []
        self.action, self.content, self.delay = action, content, delay

    async def elicit(self, context, params):
        self.asked.append(params)
        await asyncio.sleep(self.delay)
        if self.action == "error":
            return ErrorData(code=-1, message="The user closed the dialog")
        return ElicitResult(action=self.action, content=self.content)

    async def sample(self, context, params):
        self.asked.append(params)
        return CreateMessageResult(
            role="assistant",
            content=TextContent(type="text", text="R is a language for statistics."),
            model="test-model",
            stop_reason="endTurn",
        )


def text(result) -> str:
    return result.content[0].text


async def exercise(target, mode="legacy") -> None:
    rec = Recorder(content={"keep": 2, "why": "old"})
    async with Client(target, mode=mode, elicitation_callback=rec.elicit, sampling_callback=rec.sample) as c:
        r = await c.call_tool("confirm", {"n": 5})
        assert not r.is_error and text(r) == "Deleting 3 files (old)"
        asked = rec.asked[0]
        assert asked.message == "Delete 5 files?"
        schema = asked.requested_schema
        assert schema["type"] == "object" and schema["required"] == ["why"]
        assert schema["properties"]["why"] == {"type": "string", "enum": ["old", "large"], "description": "Why delete them."}
        assert "additionalProperties" not in schema
        s = await c.call_tool("summarise", {"text": "R"})
        assert text(s) == "Summary (test-model, endTurn): R is a language for statistics."
        sampled = rec.asked[1]
        assert sampled.max_tokens == 50 and sampled.system_prompt == "Be brief."
        assert sampled.messages[0].content.text == "Summarise: R"
        # Two questions in a row, each answered.
        assert text(await c.call_tool("twice", {})) == "accept accept"
        # The server still answers calls that ask nothing.
        assert text(await c.call_tool("quick", {})) == "quick"
    declined = Recorder(action="decline")
    async with Client(target, mode=mode, elicitation_callback=declined.elicit) as c:
        assert text(await c.call_tool("confirm", {"n": 1})) == "Nothing deleted: decline"
    if mode == "legacy":
        refused = Recorder(action="error")
        async with Client(target, mode=mode, elicitation_callback=refused.elicit) as c:
            r = await c.call_tool("confirm", {"n": 1})
            assert r.is_error and "The user closed the dialog" in text(r)


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
@pytest.mark.parametrize("workers", [0, 2])
def test_a1_a2_questions_over_stdio(mode, workers):
    # 2026-07-28: the SDK answers input_required and calls again (RULES A2);
    # with workers the engine asks for the worker (A1.4).
    asyncio.run(asyncio.wait_for(exercise(stdio(workers), mode), TIMEOUT))


def test_a1_a_client_without_the_capability_is_not_asked():
    async def go():
        async with Client(stdio(), mode="legacy") as c:
            r = await c.call_tool("confirm", {"n": 1})
            assert r.is_error
            assert "did not declare the `elicitation` capability" in text(r)
        async with Client(stdio(), mode="2026-07-28") as c:
            r = await c.call_tool("summarise", {"text": "x"})
            assert r.is_error and "`sampling` capability" in text(r)

    asyncio.run(asyncio.wait_for(go(), TIMEOUT))


def test_a1_3_an_answer_too_late_ends_the_question():
    async def go():
        slow = Recorder(delay=3)
        async with Client(stdio(), mode="legacy", elicitation_callback=slow.elicit) as c:
            r = await c.call_tool("impatient", {})
            assert r.is_error and "did not answer within 1 s" in text(r)
            # The late answer is ignored, and the server goes on.
            assert text(await c.call_tool("quick", {})) == "quick"

    asyncio.run(asyncio.wait_for(go(), TIMEOUT))


@pytest.fixture(scope="module")
def http_server():
    try:
        proc, url = start_http_server("asks.R")
    except RuntimeError as e:
        pytest.fail(str(e))
    yield url
    assert stop_http_server(proc) == 0


@pytest.fixture(scope="module")
def http_workers():
    try:
        proc, url = start_http_server("asks.R", {"MCPLITE_WORKERS": "2"})
    except RuntimeError as e:
        pytest.fail(str(e))
    yield url
    assert stop_http_server(proc) == 0


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_a1_a2_questions_over_http(http_server, mode):
    asyncio.run(asyncio.wait_for(exercise(http_server, mode), TIMEOUT))


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_a1_4_questions_from_workers_over_http(http_workers, mode):
    asyncio.run(asyncio.wait_for(exercise(http_workers, mode), TIMEOUT))


def post(url, body, headers):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST")
    for k, v in {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers}.items():
        req.add_header(k, v)
    return urllib.request.urlopen(req, timeout=30)


def test_a1_2_a_call_that_asks_nothing_is_answered_as_json(http_server):
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}, "sampling": {}},
        "clientInfo": {"name": "raw", "version": "1"}}}
    with post(http_server, init, {}) as r:
        sid = r.headers["Mcp-Session-Id"]
    h = {"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
    with post(http_server, {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                            "params": {"name": "quick", "arguments": {}}}, h) as r:
        assert r.headers["Content-Type"].startswith("application/json")
        assert json.loads(r.read())["result"]["content"][0]["text"] == "quick"
    # A call that asks: an event stream whose first event is the question.
    # Another session cannot answer it; this one can.
    with post(http_server, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                            "params": {"name": "confirm", "arguments": {"n": 3}}}, h) as r:
        assert r.headers["Content-Type"] == "text/event-stream"
        first = json.loads(next(l for l in r if l.startswith(b"data: "))[6:])
        assert first["method"] == "elicitation/create"
        with post(http_server, init, {}) as o:
            other = {"Mcp-Session-Id": o.headers["Mcp-Session-Id"], "MCP-Protocol-Version": "2025-11-25"}
        answer = {"jsonrpc": "2.0", "id": first["id"], "result": {"action": "accept", "content": {"why": "large"}}}
        with post(http_server, {**answer, "result": {"action": "decline"}}, other) as a:
            assert a.status == 202
        with post(http_server, answer, h) as a:
            assert a.status == 202
        last = json.loads(next(l for l in r if l.startswith(b"data: "))[6:])
        assert last["id"] == 2 and last["result"]["content"][0]["text"] == "Deleting 3 files (large)"


def test_a2_input_required_matches_the_schema_and_inputs_are_checked():
    from mcplite_driver import MODERN_VERSION, modern_meta, req, result_envelope_name, error_envelope_name, run_lines, validate

    meta = modern_meta(**{"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}})

    def call(id_, **extra):
        return req(id_, "tools/call", {"name": "confirm", "arguments": {"n": 2}, "_meta": meta, **extra})

    answer = {"action": "accept", "content": {"why": "old"}}
    run = run_lines(
        [
            call(1),
            call(2, inputResponses={"q1": answer}),
            call(3, inputResponses={"q1": answer}, requestState="forged.state"),
            call(4, inputResponses=[answer]),
            call(5, inputResponses={"q1": "yes"}),
        ],
        script="asks.R",
    )
    by_id = {m["id"]: m for m in run.messages}
    first = by_id[1]
    validate(first, MODERN_VERSION, result_envelope_name(MODERN_VERSION))
    validate(first["result"], MODERN_VERSION, "InputRequiredResult")
    assert first["result"]["resultType"] == "input_required"
    assert first["result"]["inputRequests"]["q1"]["method"] == "elicitation/create"
    assert first["result"]["inputRequests"]["q1"]["params"]["message"] == "Delete 2 files?"
    assert isinstance(first["result"]["requestState"], str)
    # The tool runs again with the answer.
    assert by_id[2]["result"]["content"][0]["text"] == "Deleting 2 files (old)"
    for bad in (3, 4):
        validate(by_id[bad], MODERN_VERSION, error_envelope_name(MODERN_VERSION))
        assert by_id[bad]["error"]["code"] == -32602
    assert "requestState" in by_id[3]["error"]["message"]
    # An answer that is not an object is the tool's error.
    assert by_id[5]["result"]["isError"] is True


def test_a1_3_a_question_whose_stream_closes_fails_at_once(http_server):
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "raw", "version": "1"}}}
    with post(http_server, init, {}) as r:
        h = {"Mcp-Session-Id": r.headers["Mcp-Session-Id"], "MCP-Protocol-Version": "2025-11-25"}
    r = post(http_server, {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                           "params": {"name": "confirm", "arguments": {"n": 1}}}, h)
    first = json.loads(next(l for l in r if l.startswith(b"data: "))[6:])
    assert first["method"] == "elicitation/create"
    # The client goes away without answering: the question fails now, not
    # after its 600 s, and the server (one R thread) answers the next call.
    r.close()
    with post(http_server, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                            "params": {"name": "quick", "arguments": {}}}, h) as q:
        assert json.loads(q.read())["result"]["content"][0]["text"] == "quick"


def test_a1_3_over_stdio_a_client_that_closes_its_input_ends_the_question():
    import os
    import subprocess

    from mcplite_driver import initialize, notif, req

    cmd, args = server_command("asks.R")
    env = dict(os.environ)
    env.update(server_env())
    proc = subprocess.Popen([cmd, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        caps = json.loads(initialize(0, "2025-11-25"))
        caps["params"]["capabilities"] = {"elicitation": {}}
        for line in (json.dumps(caps), notif("notifications/initialized"),
                     req(1, "tools/call", {"name": "confirm", "arguments": {"n": 1}})):
            proc.stdin.write(line.encode() + b"\n")
        proc.stdin.flush()
        lines = []
        while True:
            msg = json.loads(proc.stdout.readline())
            lines.append(msg)
            if msg.get("method") == "elicitation/create":
                break
        proc.stdin.close()
        # Not after the question's 600 s: the call is answered and the server ends.
        proc.wait(timeout=30)
        out = proc.stdout.read()
        last = json.loads(out.splitlines()[-1])
        assert last["id"] == 1 and last["result"]["isError"] is True
        assert "went away" in last["result"]["content"][0]["text"]
        assert proc.returncode == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a2_3_replicas_that_share_the_state_key_accept_each_others_state():
    """The first round on one server, the retry on another (a load balancer's
    replicas): accepted when both have MCPLITE_STATE_KEY, refused otherwise."""
    import os
    import subprocess

    from mcplite_driver import modern_meta, req

    meta = modern_meta(**{"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}})

    def start(key):
        cmd, args = server_command("asks.R")
        env = dict(os.environ)
        env.update(server_env())
        env.pop("MCPLITE_STATE_KEY", None)
        if key:
            env["MCPLITE_STATE_KEY"] = key
        return subprocess.Popen([cmd, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, env=env)

    def ask(proc, id_, **extra):
        line = req(id_, "tools/call", {"name": "confirm", "arguments": {"n": 2}, "_meta": meta, **extra})
        proc.stdin.write(line.encode() + b"\n")
        proc.stdin.flush()
        return json.loads(proc.stdout.readline())

    for shared, expect_ok in ((True, True), (False, False)):
        a, b = start("s3cret" if shared else None), start("s3cret" if shared else None)
        try:
            first = ask(a, 1)["result"]
            assert first["resultType"] == "input_required"
            retry = ask(b, 2, inputResponses={"q1": {"action": "accept", "content": {"why": "old"}}},
                        requestState=first["requestState"])
            if expect_ok:
                assert retry["result"]["content"][0]["text"] == "Deleting 2 files (old)"
            else:
                assert retry["error"]["code"] == -32602 and "requestState" in retry["error"]["message"]
        finally:
            for p in (a, b):
                p.stdin.close()
                p.wait(timeout=30)
