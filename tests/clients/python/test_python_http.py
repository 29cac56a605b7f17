"""The official Python SDK (mcp==2.3.0) Streamable HTTP client against an mcplite
server started over HTTP (MCPLITE_TRANSPORT=http, the same everything.R script the
stdio tests use), in each connection mode: legacy (initialize handshake and an
MCP-Session-Id), auto (probes server/discover first) and pinned 2026-07-28."""

from __future__ import annotations

import asyncio

import pytest
from mcp import Client
from mcp.types import TextContent

from mcplite_driver import MODERN_VERSION, start_http_server, stop_http_server

TIMEOUT = 60


@pytest.fixture(scope="module")
def http_server():
    try:
        proc, url = start_http_server("everything.R")
    except RuntimeError as e:
        pytest.fail(str(e))
    yield url
    assert stop_http_server(proc) == 0


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, TIMEOUT))


async def exercise(url: str, mode: str) -> dict:
    out: dict = {}
    async with Client(url, mode=mode) as client:
        out["protocol_version"] = client.protocol_version
        out["server_info"] = client.server_info
        listing = await client.list_tools()
        out["tools"] = [t.name for t in listing.tools]
        out["echo"] = await client.call_tool("echo", {"text": "héllo, wörld"})
        out["add"] = await client.call_tool("add", {"x": 1.5, "y": 2.25})
        out["fail"] = await client.call_tool("fail", {"message": "the tool failed"})
        out["stats"] = await client.call_tool("stats", {"values": [1, 2, 4]})
    return out


def check(out: dict) -> None:
    assert out["tools"][:4] == ["echo", "add", "fail", "flagged_error"]
    echo = out["echo"]
    assert isinstance(echo.content[0], TextContent)
    assert echo.content[0].text == "héllo, wörld"
    assert echo.is_error is False
    assert out["add"].content[0].text == "3.75"
    assert out["fail"].is_error is True
    assert out["fail"].content[0].text == "the tool failed"
    assert out["stats"].structured_content == {"mean": 2.3333, "sd": 1.5275, "n": 3}


def test_legacy_mode_over_http(http_server):
    out = run(exercise(http_server, "legacy"))
    assert out["protocol_version"] == "2025-11-25"
    assert out["server_info"].name == "mcplite"
    check(out)


def test_auto_mode_over_http_adopts_the_modern_era(http_server):
    out = run(exercise(http_server, "auto"))
    assert out["protocol_version"] == MODERN_VERSION
    check(out)


def test_pinned_modern_mode_over_http(http_server):
    out = run(exercise(http_server, MODERN_VERSION))
    assert out["protocol_version"] == MODERN_VERSION
    check(out)
