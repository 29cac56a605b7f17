"""Calls that take time (RULES section 11, issue 17) with the official Python SDK
(mcp==2.3.0) over stdio: the tool's own mcp_progress() reports reach
`progress_callback` in order, and a read timeout shorter than the call behaves as
the SDK documents: progress does not extend it (the timeout is a budget per
`tools/call` round), the call fails with REQUEST_TIMEOUT, and the SDK's courtesy
`notifications/cancelled` stops the R tool on the server."""

from __future__ import annotations

import asyncio
import os
import tempfile
import time

import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp_types import REQUEST_TIMEOUT

from mcplite_driver import MODERN_VERSION, server_command, server_env

TIMEOUT = 90


def params(interval: str = "0.3") -> StdioServerParameters:
    cmd, args = server_command("slow.R")
    env = server_env()
    env["MCPLITE_PROGRESS_INTERVAL"] = interval
    return StdioServerParameters(command=cmd, args=args, env=env)


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, TIMEOUT))


@pytest.mark.parametrize("mode", ["legacy", MODERN_VERSION])
def test_c2_progress_callback_receives_mcp_progress_values_in_order(mode):
    """RULES C2.1/C2.3: the tool's reports arrive in order, with total and message."""
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress, total, message):
        seen.append((progress, total, message))

    async def go():
        async with Client(params(interval="5"), mode=mode, client_info=None) as client:
            res = await client.call_tool("count", {"n": 4, "pause": 0.5}, progress_callback=on_progress)
            assert res.is_error is False
            assert res.content[0].text == "4"
            # without a callback there is no token and the tool's reports go nowhere
            quiet = await client.call_tool("hammer", {"n": 1000})
            assert quiet.content[0].text == "1000 reports, listening: FALSE"

    run(go())
    assert seen == [(float(i), 4.0, f"step {i} of 4") for i in range(1, 5)]


def test_c2_non_increasing_report_is_a_tool_error():
    """RULES C2.1: a value that does not increase is an error of the tool's code."""

    async def on_progress(progress, total, message):
        pass

    async def go():
        async with Client(params(), mode="legacy", client_info=None) as client:
            res = await client.call_tool("backwards", {}, progress_callback=on_progress)
            assert res.is_error is True
            assert "`progress` must increase" in res.content[0].text
            assert (await client.call_tool("echo", {"text": "fine"})).content[0].text == "fine"

    run(go())


@pytest.mark.parametrize("mode", ["legacy", MODERN_VERSION])
def test_c4_read_timeout_with_progress_cancels_the_tool(mode):
    """The SDK's read timeout is not reset by progress: the call fails with
    REQUEST_TIMEOUT after progress arrived, the SDK's cancellation interrupts the
    tool (RULES C4.1: on.exit and tryCatch(interrupt=) run, the side effect after
    the sleep never happens), and the next call is answered."""
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress, total, message):
        seen.append((progress, total, message))

    with tempfile.TemporaryDirectory() as d:

        async def go():
            async with Client(params(), mode=mode, client_info=None) as client:
                started = time.monotonic()
                with pytest.raises(MCPError) as err:
                    await client.call_tool(
                        "guarded", {"dir": d, "seconds": 4}, read_timeout_seconds=1.5, progress_callback=on_progress
                    )
                assert err.value.code == REQUEST_TIMEOUT
                assert (await client.call_tool("echo", {"text": "next"})).content[0].text == "next"
                # wait past the moment the tool would have finished
                await asyncio.sleep(max(0.0, 4.5 - (time.monotonic() - started)))
                assert (await client.call_tool("echo", {"text": "later"})).content[0].text == "later"

        run(go())
        assert sorted(os.listdir(d)) == ["interrupted", "on_exit", "started"]
    assert seen and seen[0][2] == "started"
    values = [p for p, _, _ in seen]
    assert values == sorted(set(values))
