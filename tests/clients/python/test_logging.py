"""Log messages from running tools (RULES section 15, issue 45) with the official
Python SDK (mcp==2.3.0) over stdio: a legacy client sets its session's level with
`set_logging_level`, a 2026-07-28 client asks per request (`log_level`); the
tool's mcp_log() and message() reach `logging_callback` in order, before the
result, at the level asked for and above only."""

from __future__ import annotations

import asyncio

import pytest
from mcp import Client, StdioServerParameters

from mcplite_driver import MODERN_VERSION, server_command, server_env

TIMEOUT = 60
WANT = ["Tool execution started", "Tool processing data", "Tool execution completed"]


def params() -> StdioServerParameters:
    cmd, args = server_command("conformance.R")
    return StdioServerParameters(command=cmd, args=args, env=server_env())


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, TIMEOUT))


async def call_logged(mode: str, level: str | None, set_level: str | None = None):
    seen = []

    async def on_log(p):
        seen.append(p)

    async with Client(params(), mode=mode, client_info=None, logging_callback=on_log, log_level=level) as client:
        if mode != MODERN_VERSION:
            # A pinned client synthesizes its discover result without asking.
            assert client.server_capabilities.logging is not None
        if set_level is not None:
            await client.set_logging_level(set_level)
        res = await client.call_tool("test_tool_with_logging", {})
        assert res.content[0].text == "Logging tool executed."
    return seen


def test_g1_legacy_session_level():
    """RULES G1.1: nothing before setLevel; after it, the three messages in order."""
    assert run(call_logged("legacy", None)) == []
    seen = run(call_logged("legacy", None, set_level="info"))
    assert [s.data for s in seen] == WANT
    assert {s.level for s in seen} == {"info"}
    assert {s.logger for s in seen} == {"test_tool_with_logging"}
    assert run(call_logged("legacy", None, set_level="warning")) == []


@pytest.mark.parametrize("mode", [MODERN_VERSION, "auto"])
def test_g1_modern_request_level(mode):
    """RULES G1.2: the request's own level in _meta; none asked, none sent."""
    assert [s.data for s in run(call_logged(mode, "debug"))] == WANT
    assert run(call_logged(mode, "error")) == []
    assert run(call_logged(mode, None)) == []
