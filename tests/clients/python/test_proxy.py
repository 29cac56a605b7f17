"""Re-served tools (RULES K8.2, issue 30) with the official Python SDK (mcp==2.3.0)
over stdio: tests/clients/servers/client-proxy.R serves the tools of slow.R again
(`mcp_tools()` served by `mcp_server()`). The remote tool's own progress reports
reach the SDK client's `progress_callback` through the proxy, and the SDK's
cancellation (sent when its read timeout expires) is passed on to the remote
server, whose tool is interrupted."""

from __future__ import annotations

import asyncio
import os
import tempfile
import time

import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp_types import REQUEST_TIMEOUT

from mcplite_driver import MODERN_VERSION, SERVERS, server_command, server_env

TIMEOUT = 120


def params() -> StdioServerParameters:
    cmd, args = server_command("client-proxy.R")
    env = server_env()
    # no heartbeat of the proxy's own between the remote reports
    env["MCPLITE_PROGRESS_INTERVAL"] = "5"
    return StdioServerParameters(command=cmd, args=[*args, str(SERVERS / "slow.R")], env=env)


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, TIMEOUT))


@pytest.mark.parametrize("mode", ["legacy", MODERN_VERSION])
def test_k8_remote_progress_reaches_the_client_through_the_proxy(mode):
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress, total, message):
        seen.append((progress, total, message))

    async def go():
        async with Client(params(), mode=mode, client_info=None) as client:
            res = await client.call_tool("up_count", {"n": 4, "pause": 0.4}, progress_callback=on_progress)
            assert res.is_error is False
            assert res.content[0].text == "4"

    run(go())
    assert seen == [(float(i), 4.0, f"step {i} of 4") for i in range(1, 5)]


@pytest.mark.parametrize("mode", ["legacy", MODERN_VERSION])
def test_k8_cancelling_the_proxied_call_cancels_the_remote_tool(mode):
    with tempfile.TemporaryDirectory() as d:

        async def on_progress(progress, total, message):
            pass

        async def go():
            async with Client(params(), mode=mode, client_info=None) as client:
                with pytest.raises(MCPError) as err:
                    await client.call_tool(
                        "up_guarded", {"dir": d, "seconds": 30}, read_timeout_seconds=3, progress_callback=on_progress
                    )
                assert err.value.code == REQUEST_TIMEOUT
                # the remote tool was interrupted: its on.exit() ran, its work did not finish
                deadline = time.monotonic() + 20
                while not os.path.exists(os.path.join(d, "on_exit")) and time.monotonic() < deadline:
                    await asyncio.sleep(0.05)
                assert sorted(os.listdir(d)) == ["interrupted", "on_exit", "started"]
                # and the proxy still serves
                assert (await client.call_tool("up_echo", {"text": "next"})).content[0].text == "next"

        run(go())
