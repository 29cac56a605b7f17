"""Worker processes (RULES section 14, issue 32) with the official Python SDK
(mcp==2.3.0) against tests/clients/servers/workers.R, over stdio and HTTP: calls run at the same time
in separate R processes, a worker that quits or segfaults turns only its own call
into a tool error, cancellation interrupts the worker running the call (its
on.exit() runs), a full queue refuses the call, progress crosses the pipe, and no
worker outlives its server (end of input, SIGKILL). Nothing here is timed: calls
prove they ran at once by meeting inside a tool."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp_types import REQUEST_TIMEOUT

from mcplite_driver import (MODERN_VERSION, initialize, req, server_command, server_env, start_http_server,
                            stop_http_server)

TIMEOUT = 120


def params(workers: int, max_queue: int | None = None, **extra: str) -> StdioServerParameters:
    extra.setdefault("MCPLITE_LOG", os.environ.get("DEBUG_LOG", "off"))
    cmd, args = server_command("workers.R")
    env = server_env()
    env["MCPLITE_WORKERS"] = str(workers)
    if max_queue is not None:
        env["MCPLITE_MAX_QUEUE"] = str(max_queue)
    env.update(extra)
    return StdioServerParameters(command=cmd, args=args, env=env)


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, TIMEOUT))


def text(res) -> str:
    return res.content[0].text


def alive(pid: int) -> bool:
    """A live process: not gone and not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def wait_gone(pids: list[int]) -> None:
    deadline = time.monotonic() + 30
    while any(alive(p) for p in pids):
        assert time.monotonic() < deadline, f"workers {[p for p in pids if alive(p)]} outlived their server"
        time.sleep(0.05)


@pytest.mark.parametrize("mode", ["legacy", MODERN_VERSION])
def test_n2_calls_run_at_the_same_time_in_separate_processes(mode):
    """RULES N2.1: three calls are inside the tool at once, each in its own R process."""

    async def go():
        with tempfile.TemporaryDirectory() as d:
            async with Client(params(3), mode=mode, client_info=None) as client:
                results = await asyncio.gather(*(client.call_tool("meet", {"dir": d, "n": 3}) for _ in range(3)))
                # listing is answered by the server process meanwhile
                assert len((await client.list_tools()).tools) == 10
        assert all(r.is_error is False for r in results), [text(r) for r in results]
        pids = {int(text(r)) for r in results}
        assert len(pids) == 3

    run(go())


def test_n5_a_crash_is_the_calls_tool_error_and_other_calls_go_on():
    """RULES N5.1: quit() and SIGSEGV end their worker; the call says how, a call
    running on another worker finishes normally, and a new worker serves next."""

    async def go():
        with tempfile.TemporaryDirectory() as d:
            async with Client(params(2), mode="legacy", client_info=None) as client:
                long = asyncio.create_task(client.call_tool("guarded", {"dir": d, "seconds": 1.5}))
                while not os.path.exists(os.path.join(d, "started")):
                    await asyncio.sleep(0.02)
                quit_res = await client.call_tool("quit", {"status": 3})
                segv_res = await client.call_tool("segv", {})
                long_res = await long
                after = await client.call_tool("tally", {})
                err = await client.call_tool("fail", {})
                return quit_res, segv_res, long_res, after, err, sorted(os.listdir(d))

    quit_res, segv_res, long_res, after, err, marks = run(go())
    assert quit_res.is_error is True
    assert "exited with status 3" in text(quit_res), text(quit_res)
    assert "other calls are not affected" in text(quit_res)
    assert segv_res.is_error is True
    assert "was killed by signal 11 (SIGSEGV" in text(segv_res), text(segv_res)
    assert long_res.is_error is False and text(long_res) == "finished"
    assert marks == ["on_exit", "side_effect", "started"]
    assert after.is_error is False
    assert err.is_error is True and text(err) == "an R error"


@pytest.mark.parametrize("mode", ["legacy", MODERN_VERSION])
def test_c4_cancellation_interrupts_the_worker_running_the_call(mode):
    """RULES N2.3, C4.1: the SDK's cancellation after its read timeout interrupts the
    tool in its worker (on.exit runs, the side effect never happens), and the
    worker serves the next call (no restart)."""

    async def go():
        with tempfile.TemporaryDirectory() as d:
            async with Client(params(2), mode=mode, client_info=None) as client:
                # The server answers once its workers are ready (a modern client
                # sends no handshake): the read timeout below is then the call's.
                await client.list_tools()
                with pytest.raises(MCPError) as e:
                    await client.call_tool("guarded", {"dir": d, "seconds": 5}, read_timeout_seconds=1.5)
                assert e.value.code == REQUEST_TIMEOUT
                while not os.path.exists(os.path.join(d, "on_exit")):
                    await asyncio.sleep(0.02)
                nxt = await client.call_tool("noisy", {})
                await asyncio.sleep(4)
                return sorted(os.listdir(d)), nxt

    marks, nxt = run(go())
    assert marks == ["on_exit", "started"]
    assert text(nxt) == "quiet", "stdout of the tool went to stderr, not the protocol"


def test_n3_a_full_queue_refuses_the_call():
    """RULES N3.1: with 2 workers busy and no room to wait, a call is refused at once
    with -32603 "Server busy"; once the workers are free calls run again."""

    async def go():
        with tempfile.TemporaryDirectory() as d:
            async with Client(params(2, max_queue=0), mode="legacy", client_info=None) as client:
                held = [asyncio.create_task(client.call_tool("hold", {"dir": d})) for _ in range(2)]
                while len([f for f in os.listdir(d) if f.startswith("holding-")]) < 2:
                    await asyncio.sleep(0.02)
                with pytest.raises(MCPError) as e:
                    await client.call_tool("tally", {})
                Path(d, "release").touch()
                done = await asyncio.gather(*held)
                again = await client.call_tool("tally", {})
                return e.value, done, again

    err, done, again = run(go())
    assert err.code == -32603
    # RULES N3.1: in plain words, not "Internal error: ..."
    assert err.message == ("Server busy: every worker process is running a tool call and the queue of calls "
                           "waiting for one is full, so this call was not run; retry in a moment")
    assert [text(r) for r in done] == ["released", "released"]
    assert again.is_error is False


def test_n3_calls_wait_their_turn_in_the_queue():
    """RULES N2.1, K3: with one worker busy and room in the queue, a call waits and
    runs when the worker is free."""

    async def go():
        with tempfile.TemporaryDirectory() as d:
            async with Client(params(2, max_queue=4), mode="legacy", client_info=None) as client:
                held = [asyncio.create_task(client.call_tool("hold", {"dir": d})) for _ in range(2)]
                while len([f for f in os.listdir(d) if f.startswith("holding-")]) < 2:
                    await asyncio.sleep(0.02)
                waiting = asyncio.create_task(client.call_tool("tally", {}))
                await asyncio.sleep(0.3)
                assert not waiting.done(), "no worker was free"
                Path(d, "release").touch()
                return await waiting, await asyncio.gather(*held)

    waiting, held = run(go())
    assert waiting.is_error is False
    assert [text(r) for r in held] == ["released", "released"]


@pytest.mark.parametrize("mode", ["legacy", MODERN_VERSION])
def test_n4_progress_from_a_worker(mode):
    """RULES N4.1: mcp_progress() in a worker reaches the client in order."""
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress, total, message):
        seen.append((progress, total, message))

    async def go():
        async with Client(params(2), mode=mode, client_info=None) as client:
            return await client.call_tool("count", {"n": 3}, progress_callback=on_progress)

    res = run(go())
    assert text(res) == "counted to 3"
    assert seen and seen[-1] == (3.0, 3.0, "step 3")
    values = [p for p, _, _ in seen]
    assert values == sorted(set(values))


def raw_server(workers: int, **extra: str) -> subprocess.Popen:
    cmd, args = server_command("workers.R")
    env = dict(os.environ, **server_env(), MCPLITE_WORKERS=str(workers), **extra)
    return subprocess.Popen([cmd, *args], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


def worker_pids(proc: subprocess.Popen, n: int, d: str) -> list[int]:
    """Initialize, then make every worker meet in one call each: their process ids."""
    proc.stdin.write((initialize(0, "2025-11-25") + "\n").encode())
    for i in range(n):
        proc.stdin.write((req(i + 1, "tools/call", {"name": "meet", "arguments": {"dir": d, "n": n}}) + "\n").encode())
    proc.stdin.flush()
    pids = []
    while len(pids) < n:
        msg = json.loads(proc.stdout.readline())
        if msg["id"] != 0:
            pids.append(int(msg["result"]["content"][0]["text"]))
    return pids


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_n6_no_worker_outlives_a_killed_server(sig):
    """RULES N6.2: a server ended by a signal (SIGKILL included) ends its workers too.
    (SIGINT does not stop a stdio server, S7; over HTTP it drains as SIGTERM does.)"""
    with tempfile.TemporaryDirectory() as d:
        proc = raw_server(2)
        try:
            pids = worker_pids(proc, 2, d)
            assert len(set(pids)) == 2 and proc.pid not in pids
            assert all(alive(p) for p in pids)
            proc.send_signal(sig)
            proc.wait(timeout=30)
            wait_gone(pids)
        finally:
            if proc.poll() is None:
                proc.kill()


def test_n6_workers_end_with_the_input():
    """RULES N6.1, S5: at EOF the server answers, stops its workers and exits 0."""
    with tempfile.TemporaryDirectory() as d:
        proc = raw_server(2)
        pids = worker_pids(proc, 2, d)
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0
        wait_gone(pids)


def test_n1_a_broken_script_fails_the_server_with_the_reason():
    """RULES N1.4: workers that fail before mcp_server() make the server fail at
    start, before any answer, with the worker's status and its own error."""
    proc = raw_server(2, WORKERS_BROKEN="1")
    out, err = proc.communicate(timeout=90)
    assert proc.returncode != 0
    assert out == b""
    err = err.decode()
    assert "this worker is broken on purpose" in err
    assert "exited with status 1 before it was ready" in err


# ---- Streamable HTTP ------------------------------------------------------


def http_get(url: str) -> tuple[int, dict, dict]:
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            return r.status, dict(r.headers), json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), json.loads(e.read())


def raw_call(url: str, tool: str) -> tuple[int, dict, dict]:
    """A modern tools/call as one plain HTTP request: status, headers, JSON body."""
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
            "io.modelcontextprotocol/clientCapabilities": {}}
    body = json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                       "params": {"name": tool, "arguments": {}, "_meta": meta}}).encode()
    request = urllib.request.Request(url, data=body, method="POST", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": MODERN_VERSION, "Mcp-Method": "tools/call", "Mcp-Name": tool})
    try:
        with urllib.request.urlopen(request, timeout=30) as r:
            return r.status, {k.lower(): v for k, v in r.headers.items()}, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, {k.lower(): v for k, v in e.headers.items()}, json.loads(e.read())


@pytest.fixture(scope="module")
def http_workers():
    """workers.R over HTTP with 3 workers and room for one waiting call."""
    proc, url = start_http_server("workers.R", {"MCPLITE_WORKERS": "3", "MCPLITE_MAX_QUEUE": "1"})
    yield proc, url
    if proc.poll() is None:
        assert stop_http_server(proc) == 0


def health(url: str) -> dict:
    status, _, body = http_get(url.removesuffix("/mcp") + "/health")
    assert status == 200
    return body


@pytest.mark.parametrize("mode", ["legacy", MODERN_VERSION])
def test_n2_http_calls_run_at_the_same_time_in_separate_processes(http_workers, mode):
    """RULES N2.1 over HTTP: three calls are inside the tool at once, each in its
    own R process, and /health reports the three workers."""
    _, url = http_workers

    async def go():
        with tempfile.TemporaryDirectory() as d:
            async with Client(url, mode=mode) as client:
                results = await asyncio.gather(*(client.call_tool("meet", {"dir": d, "n": 3}) for _ in range(3)))
                assert len((await client.list_tools()).tools) == 10
        return results

    results = run(go())
    assert all(r.is_error is False for r in results), [text(r) for r in results]
    assert len({int(text(r)) for r in results}) == 3
    w = health(url)["workers"]
    assert (w["total"], w["busy"], w["idle"], w["queued"]) == (3, 0, 3, 0), w


def test_n3_http_a_full_queue_is_503_and_health_counts_it(http_workers):
    """RULES N3.1, H1.3 over HTTP: with every worker busy and the queue full, a call
    is refused at once with 503, Retry-After and -32603 "Server busy"; /health
    shows the busy workers and the waiting call."""
    _, url = http_workers

    async def go():
        with tempfile.TemporaryDirectory() as d:
            async with Client(url, mode=MODERN_VERSION) as client:
                held = [asyncio.create_task(client.call_tool("hold", {"dir": d})) for _ in range(3)]
                while len([f for f in os.listdir(d) if f.startswith("holding-")]) < 3:
                    await asyncio.sleep(0.02)
                waiting = asyncio.create_task(client.call_tool("tally", {}))
                while health(url)["workers"]["queued"] < 1:
                    await asyncio.sleep(0.02)
                during = health(url)["workers"]
                raw = raw_call(url, "tally")
                with pytest.raises(MCPError) as e:
                    await client.call_tool("tally", {})
                Path(d, "release").touch()
                return during, raw, e.value, await asyncio.gather(*held), await waiting

    during, raw, err, held, waiting = run(go())
    status, headers, body = raw
    assert status == 503
    assert headers.get("retry-after") == "1"
    assert body["error"]["code"] == -32603 and body["id"] == 9
    assert (during["total"], during["busy"], during["idle"], during["queued"]) == (3, 3, 0, 1), during
    assert err.code == -32603
    assert "Server busy" in err.message
    assert [text(r) for r in held] == ["released"] * 3
    assert waiting.is_error is False


def test_n5_http_a_crash_is_the_calls_tool_error(http_workers):
    """RULES N5.1 over HTTP: a segfault and quit() end only their own call; a
    replacement starts (/health counts it) and the next calls are served."""
    _, url = http_workers
    before = health(url)["workers"]["restarts"]

    async def go():
        async with Client(url, mode="legacy") as client:
            segv = await client.call_tool("segv", {})
            quit_res = await client.call_tool("quit", {"status": 2})
            after = await asyncio.gather(*(client.call_tool("tally", {}) for _ in range(3)))
            return segv, quit_res, after

    segv, quit_res, after = run(go())
    assert segv.is_error is True and "was killed by signal 11 (SIGSEGV" in text(segv), text(segv)
    assert quit_res.is_error is True and "exited with status 2" in text(quit_res), text(quit_res)
    assert all(r.is_error is False for r in after)
    deadline = time.monotonic() + 60
    while health(url)["workers"]["restarts"] < before + 2:
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_c6_http_cancellation_interrupts_the_worker(http_workers):
    """RULES N2.3, C6 over HTTP (legacy session): the SDK's cancellation after its
    read timeout interrupts the tool in its worker; on.exit runs, the side effect
    never happens."""
    _, url = http_workers

    async def go():
        with tempfile.TemporaryDirectory() as d:
            async with Client(url, mode="legacy") as client:
                with pytest.raises(MCPError):
                    await client.call_tool("guarded", {"dir": d, "seconds": 5}, read_timeout_seconds=1.5)
                while not os.path.exists(os.path.join(d, "on_exit")):
                    await asyncio.sleep(0.02)
                nxt = await client.call_tool("noisy", {})
            return sorted(os.listdir(d)), nxt

    marks, nxt = run(go())
    assert marks == ["on_exit", "started"]
    assert text(nxt) == "quiet"


def test_n1_http_a_workers_marker_does_not_reach_its_tools_children(http_workers):
    """RULES N1.3: a worker reads MCPLITE_WORKER and removes it, so a process a
    tool starts (an Rscript calling mcp_server() among them) is not a worker."""
    _, url = http_workers

    async def go():
        async with Client(url, mode=MODERN_VERSION) as client:
            return await client.call_tool("child_env", {})

    res = run(go())
    assert res.is_error is False and text(res) == "unset", text(res)


def test_n6_http_workers_that_keep_dying_at_start_stop_the_server():
    """RULES N6.3 over HTTP: once every new worker fails before mcp_server(), the
    replacement of one that quit fails MAX_FAILED_STARTS times in a row and the
    server stops with a failure status and the reason, instead of looping."""
    with tempfile.TemporaryDirectory() as d:
        broken = os.path.join(d, "broken")
        proc, url = start_http_server("workers.R", {"MCPLITE_WORKERS": "2", "WORKERS_BROKEN_WHEN": broken})
        try:
            Path(broken).touch()

            async def go():
                async with Client(url, mode=MODERN_VERSION) as client:
                    return await client.call_tool("quit", {"status": 3})

            res = run(go())
            assert res.is_error is True and "exited with status 3" in text(res), text(res)
            assert proc.wait(timeout=90) != 0
            err = proc.stderr.read()
        finally:
            if proc.poll() is None:
                proc.kill()
    assert "worker processes keep failing to start (3 in a row" in err, err
    assert "this worker is broken on purpose" in err, err
    assert "exited with status 1 before it was ready" in err, err
    assert "HTTP server stopped (worker processes keep failing to start)" in err, err


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_n6_http_a_stop_drains_and_ends_the_workers(sig):
    """RULES N6.1 over HTTP: SIGTERM or SIGINT lets the running call finish (H4.2),
    then the server exits 0 and its workers are gone."""
    proc, url = start_http_server("workers.R", {"MCPLITE_WORKERS": "2"})
    try:
        async def go():
            with tempfile.TemporaryDirectory() as d:
                async with Client(url, mode="legacy") as client:
                    pids = [int(text(r)) for r in
                            await asyncio.gather(*(client.call_tool("meet", {"dir": d, "n": 2}) for _ in range(2)))]
                    running = asyncio.create_task(client.call_tool("guarded", {"dir": d, "seconds": 1}))
                    while not os.path.exists(os.path.join(d, "started")):
                        await asyncio.sleep(0.02)
                    proc.send_signal(sig)
                    return pids, await running

        pids, res = run(go())
        assert text(res) == "finished"
        assert proc.wait(timeout=60) == 0
        wait_gone(pids)
    finally:
        if proc.poll() is None:
            proc.kill()
