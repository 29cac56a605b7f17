"""The official Python SDK (mcp==2.3.0) as a real client of an mcplite server over
stdio, in each connection mode: legacy (initialize handshake), auto (probes with
server/discover, then adopts the modern era) and pinned 2026-07-28 (no probe).
Also the manual's add_numbers example served exactly as written."""

from __future__ import annotations

import asyncio
import json

import pytest
from mcp import Client, StdioServerParameters
from mcp.types import (
    AudioContent,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
)

from mcplite_driver import MODERN_VERSION, server_command, server_env

TIMEOUT = 60


def params(script: str = "everything.R") -> StdioServerParameters:
    cmd, args = server_command(script)
    return StdioServerParameters(command=cmd, args=args, env=server_env())


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, TIMEOUT))


async def exercise(mode: str) -> dict:
    """Connect, list, call a text tool, an error tool and structured-output tools."""
    out: dict = {}
    async with Client(params(), mode=mode, client_info=None) as client:
        out["protocol_version"] = client.protocol_version
        out["server_info"] = client.server_info
        out["instructions"] = client.instructions
        out["capabilities"] = client.server_capabilities
        out["discover"] = client.session.discover_result
        if mode not in ("legacy", "auto"):
            # A pinned client adopts a synthesized discover result without any wire
            # traffic; ask the server explicitly, on the same connection.
            out["raw_discover"] = await client.session.send_discover(mode)
        listing = await client.list_tools()
        out["tools"] = {t.name: t for t in listing.tools}
        out["echo"] = await client.call_tool("echo", {"text": "héllo, wörld"})
        out["add"] = await client.call_tool("add", {"x": 1.5, "y": 2.25})
        out["fail"] = await client.call_tool("fail", {"message": "the tool failed"})
        out["flagged"] = await client.call_tool("flagged_error", {})
        out["stats"] = await client.call_tool("stats", {"values": [1, 2, 4]})
        out["point"] = await client.call_tool("describe_point", {"x": 3, "y": 4})
        out["series"] = await client.call_tool("series", {"n": 4})
        out["all_content"] = await client.call_tool("all_content", {})
        out["noisy"] = await client.call_tool("noisy", {})
        out["unknown_error"] = None
        try:
            await client.call_tool("no_such_tool", {})
        except Exception as e:  # the SDK raises MCPError for JSON-RPC errors
            out["unknown_error"] = e
    return out


def check_common(out: dict, connect_state: bool = True) -> None:
    if connect_state:
        assert out["server_info"] is not None and out["server_info"].name == "mcplite"
        assert out["instructions"] == "Test server for mcplite client tests."
        assert out["capabilities"].tools is not None and out["capabilities"].tools.list_changed is False

    tools = out["tools"]
    assert list(tools)[:4] == ["echo", "add", "fail", "flagged_error"]
    assert tools["echo"].input_schema["properties"]["text"]["type"] == "string"
    assert tools["echo"].annotations.read_only_hint is True
    assert tools["echo"].annotations.title == "Echo"
    assert tools["stats"].output_schema["properties"]["mean"]["type"] == "number"

    echo = out["echo"]
    assert echo.is_error is False
    assert [type(b) for b in echo.content] == [TextContent]
    assert echo.content[0].text == "héllo, wörld"
    assert out["add"].content[0].text == "3.75"

    fail = out["fail"]
    assert fail.is_error is True
    assert fail.content[0].text == "the tool failed"
    assert out["flagged"].is_error is True
    assert out["flagged"].content[0].text == "The file does not exist."

    stats = out["stats"]
    assert stats.is_error is False
    assert stats.structured_content == {"mean": 2.3333, "sd": 1.5275, "n": 3}
    assert json.loads(stats.content[0].text) == stats.structured_content
    assert out["point"].structured_content == {"x": 3, "y": 4, "label": "(3, 4)"}

    blocks = out["all_content"].content
    assert [type(b) for b in blocks] == [
        TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource, EmbeddedResource,
    ]
    assert blocks[0].annotations.priority == 0.5
    assert blocks[1].mime_type == "image/png"
    assert blocks[3].uri.startswith("file:///tmp/report.csv") and blocks[3].size == 42
    assert blocks[4].resource.text == "Some notes."
    assert blocks[5].resource.blob == "AAEC"
    assert out["all_content"].structured_content == {"count": 6}

    assert out["noisy"].content[0].text == "quiet"

    err = out["unknown_error"]
    assert err is not None and "unknown tool" in str(err)


def test_legacy_mode():
    out = run(exercise("legacy"))
    assert out["protocol_version"] == "2025-11-25"
    check_common(out)
    # the array-rooted output schema cannot be carried on 2025 versions
    assert out["tools"]["series"].output_schema is None
    assert out["series"].structured_content is None
    assert out["series"].content[0].text == "[1,2,3,4]"
    assert out["stats"].meta is None


def test_auto_mode_probes_and_goes_modern():
    out = run(exercise("auto"))
    assert out["protocol_version"] == MODERN_VERSION
    check_common(out)
    disc = out["discover"]
    assert disc is not None
    assert disc.supported_versions == ["2026-07-28", "2025-11-25", "2025-06-18", "2024-11-05"]
    assert out["tools"]["series"].output_schema == {"type": "array", "items": {"type": "integer"}}
    assert out["series"].structured_content == [1, 2, 3, 4]
    meta = out["stats"].meta
    assert meta["io.modelcontextprotocol/serverInfo"]["name"] == "mcplite"


def test_pinned_modern_mode():
    out = run(exercise(MODERN_VERSION))
    assert out["protocol_version"] == MODERN_VERSION
    check_common(out, connect_state=False)
    raw = out["raw_discover"]
    assert raw["resultType"] == "complete"
    assert raw["supportedVersions"][0] == MODERN_VERSION
    assert raw["instructions"] == "Test server for mcplite client tests."
    assert raw["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "mcplite"
    assert out["series"].structured_content == [1, 2, 3, 4]
    assert out["fail"].meta["io.modelcontextprotocol/serverInfo"]["name"] == "mcplite"


def test_manual_add_numbers_example_legacy():
    """A server written exactly like the manual's add_numbers example (issue 2)."""

    async def go():
        async with Client(params("add_numbers.R"), mode="legacy") as client:
            assert client.server_info.name == "mcplite"
            listing = await client.list_tools()
            assert [t.name for t in listing.tools] == ["add_numbers"]
            tool = listing.tools[0]
            assert tool.description == "Add two numbers and return the result."
            assert tool.input_schema == {
                "type": "object",
                "properties": {
                    "x": {"type": "number", "description": "First number."},
                    "y": {"type": "number", "description": "Second number."},
                },
                "required": ["x", "y"],
                "additionalProperties": False,
            }
            res = await client.call_tool("add_numbers", {"x": 2, "y": 3})
            assert res.is_error is False and res.content[0].text == "5"
            res = await client.call_tool("add_numbers", {"x": 0.1, "y": 0.2})
            assert res.content[0].text == "0.3"
            res = await client.call_tool("add_numbers", {"x": 1})
            assert res.is_error is True
            pong = await client.session.send_ping()
            assert pong is not None

    run(go())


@pytest.mark.parametrize("mode", ["legacy", "auto", MODERN_VERSION])
def test_example_server_shipped_in_package(mode):
    """inst/examples/server.R, the package's own example, in every mode."""

    async def go():
        cmd, _ = server_command()
        from mcplite_driver import REPO

        p = StdioServerParameters(
            command=cmd, args=["--vanilla", str(REPO / "inst" / "examples" / "server.R")], env=server_env()
        )
        async with Client(p, mode=mode) as client:
            res = await client.call_tool("mean_sd", {"values": [1, 2, 4]})
            assert res.structured_content == {"mean": 2.3333, "sd": 1.5275}
            res = await client.call_tool("add_numbers", {"x": 1.5, "y": 2.25})
            assert res.content[0].text == "3.75"

    run(go())


def test_non_ascii_literals_survive_a_minimal_client_environment():
    """Clients launch servers with only HOME/LOGNAME/PATH/SHELL/TERM/USER (plus what
    the configuration adds), so R starts in the C locale. Strings written literally
    in the UTF-8 server script must still reach the client as the same characters."""

    async def go():
        async with Client(params("non_ascii.R"), mode="legacy") as client:
            listing = await client.list_tools()
            assert listing.tools[0].description == "Sagt Grüß Gott ✓"
            res = await client.call_tool("greet", {"name": "Zoë"})
            assert res.content[0].text == "Grüße, Zoë ✓"
            res = await client.call_tool("fail_accent", {})
            assert res.is_error is True and res.content[0].text == "échec ✗"

    run(go())
