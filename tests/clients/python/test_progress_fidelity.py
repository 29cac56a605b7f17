"""Progress reaches the client as the tool reported it (RULES C2, issue 30), with the
official Python SDK (mcp==2.3.0) over stdio and over Streamable HTTP, in both eras,
against tests/clients/servers/slow.R:

- a short burst (0, 50 and 100 of 100, 50 ms apart: the conformance suite's
  `tools-call-with-progress`) arrives whole and unchanged;
- a report made just before the tool returns is always sent, before the result;
- a heartbeat before the tool's first report sets no scale: the tool's 0.5 of 1
  arrives as 0.5 of 1;
- a loop of a million reports sends few notifications, the last report included."""

from __future__ import annotations

import asyncio
import time

import pytest
from mcp import Client, StdioServerParameters

from mcplite_driver import MODERN_VERSION, server_command, server_env, start_http_server, stop_http_server

TIMEOUT = 120
INTERVAL = "1"  # heartbeats after 1 s of silence: none before a burst, even on a loaded machine

Seen = list[tuple[float, "float | None", "str | None"]]


@pytest.fixture(scope="module")
def http_url():
    try:
        proc, url = start_http_server("slow.R", {"MCPLITE_PROGRESS_INTERVAL": INTERVAL})
    except RuntimeError as e:
        pytest.fail(str(e))
    yield url
    assert stop_http_server(proc) == 0


def stdio_params() -> StdioServerParameters:
    cmd, args = server_command("slow.R")
    env = server_env()
    env["MCPLITE_PROGRESS_INTERVAL"] = INTERVAL
    return StdioServerParameters(command=cmd, args=args, env=env)


@pytest.fixture(params=["stdio", "http"])
def target(request):
    if request.param == "stdio":
        return stdio_params()
    return request.getfixturevalue("http_url")


async def calls(target, mode: str, name: str, args: dict, times: int = 1) -> list[tuple[str, Seen]]:
    """Call `name` `times` times in one session; each call's result text and the
    progress its callback saw."""
    out = []
    async with Client(target, mode=mode, client_info=None) as client:
        for _ in range(times):
            seen: Seen = []

            async def on_progress(progress, total, message, seen=seen):
                seen.append((progress, total, message))

            res = await client.call_tool(name, args, progress_callback=on_progress)
            assert res.is_error is False, res
            out.append((res.content[0].text, seen))
    return out


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, TIMEOUT))


def increasing(seen: Seen) -> None:
    values = [p for p, _, _ in seen]
    assert all(a < b for a, b in zip(values, values[1:])), seen


@pytest.mark.parametrize("mode", ["legacy", MODERN_VERSION])
def test_c2_a_short_burst_arrives_whole_and_unchanged(target, mode):
    burst = {"values": [0, 50, 100], "total": 100}
    for text, seen in run(calls(target, mode, "burst", burst, times=5)):
        assert text == "burst"
        assert seen == [(0.0, 100.0, None), (50.0, 100.0, None), (100.0, 100.0, None)]


@pytest.mark.parametrize("mode", ["legacy", MODERN_VERSION])
def test_c2_the_report_made_just_before_returning_is_sent(target, mode):
    for text, seen in run(calls(target, mode, "count", {"n": 1, "pause": 0}, times=10)):
        assert text == "1"
        assert seen == [(1.0, 1.0, "step 1 of 1")]


@pytest.mark.parametrize("mode", ["legacy", MODERN_VERSION])
def test_c2_a_heartbeat_before_the_first_report_sets_no_scale(target, mode):
    [(text, seen)] = run(calls(target, mode, "late", {"seconds": 2.5}))
    assert text == "late"
    increasing(seen)
    at = [m for _, _, m in seen].index("half")
    assert at >= 1, f"heartbeats came first: {seen}"
    assert all(p < 1e-6 and t is None for p, t, _ in seen[:at]), seen
    assert seen[at] == (0.5, 1.0, "half")


@pytest.mark.parametrize("mode", ["legacy", MODERN_VERSION])
def test_c2_a_million_reports_send_few_notifications(target, mode):
    started = time.monotonic()
    [(text, seen)] = run(calls(target, mode, "hammer", {"n": 1_000_000}))
    secs = time.monotonic() - started
    assert text == "1000000 reports, listening: TRUE"
    increasing(seen)
    # The burst, ten a second after it, a heartbeat per interval, the last report.
    assert len(seen) <= 10 + 10 * secs + secs / float(INTERVAL) + 2, (len(seen), secs)
    assert seen[-1] == (1e6, 1e6, None)
