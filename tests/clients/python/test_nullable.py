"""Nullable types (type_number(nullable = TRUE) etc.) with options(mcplite.json.na = "null"):
a structured result with NA fields is validated by the official Python SDK client against the
tool's output schema, in every connection mode, and every response validates against the
official schema of its protocol version. Without the option the server answers with a tool
error naming the option (it validates the result first, RULES J4.6), instead of a result the
SDK would reject."""

from __future__ import annotations

import asyncio
import os

import pytest
from mcp import Client, StdioServerParameters

from mcplite_driver import (
    ALL_VERSIONS,
    MODERN_VERSION,
    initialize,
    modern_meta,
    notif,
    req,
    result_envelope_name,
    run_lines,
    server_command,
    server_env,
    validate,
)

TIMEOUT = 60
NULLABLE_NUMBER = [{"type": "number"}, {"type": "null"}]
EXPECTED_MISSING = {
    "term": "wt",
    "estimate": -5.3445,
    "p_value": None,
    "interval": [-6.4863, None],
    "status": None,
}


def params(extra_env: dict[str, str] | None = None) -> StdioServerParameters:
    cmd, args = server_command("nullable.R")
    env = server_env()
    env.update(extra_env or {})
    return StdioServerParameters(command=cmd, args=args, env=env)


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, TIMEOUT))


@pytest.mark.parametrize("mode", ["legacy", "auto", MODERN_VERSION])
def test_sdk_accepts_null_fields_against_the_nullable_schema(mode):
    async def go():
        async with Client(params(), mode=mode) as client:
            listing = await client.list_tools()
            tools = {t.name: t for t in listing.tools}
            props = tools["fit_summary"].output_schema["properties"]
            # nullable types are spelled anyOf (no type arrays: RULES R2.3)
            assert props["p_value"]["anyOf"] == NULLABLE_NUMBER
            assert props["interval"]["items"]["anyOf"] == NULLABLE_NUMBER
            assert props["status"]["anyOf"] == [{"type": "string", "enum": ["ok", "warning"]}, {"type": "null"}]
            # call_tool() validates structuredContent against the output schema
            res = await client.call_tool("fit_summary", {"missing": True})
            assert res.is_error is False
            assert res.structured_content == EXPECTED_MISSING
            res = await client.call_tool("fit_summary", {"missing": False})
            assert res.structured_content["p_value"] == 1.29e-10
            assert res.structured_content["status"] == "ok"
            # a nullable root is not "object": only 2026-07-28 carries that schema
            root = tools["maybe_point"].output_schema
            if client.protocol_version == MODERN_VERSION:
                assert root["anyOf"][1] == {"type": "null"}
                assert root["anyOf"][0]["type"] == "object"
            else:
                assert root is None
            res = await client.call_tool("maybe_point", {})
            assert res.is_error is False

    run(go())


@pytest.mark.parametrize("mode", ["legacy", MODERN_VERSION])
def test_na_strings_without_the_option_are_a_tool_error_naming_the_fix(mode):
    """RULES J4.6: the server validates structured content against the output schema
    before sending it, so the SDK (which would reject the whole result, raising
    "'NA' is not of type 'number', 'null'") gets a tool error that says what to fix;
    the next call is answered as usual."""

    async def go():
        async with Client(params({"MCPLITE_TEST_NA_UNSET": "1"}), mode=mode) as client:
            res = await client.call_tool("fit_summary", {"missing": True})
            assert res.is_error is True
            assert res.structured_content is None
            text = res.content[0].text
            assert text.startswith("The result of tool `fit_summary` does not match its output schema: at `/")
            assert '"NA" is not of types "number", "null"' in text
            assert 'options(mcplite.json.na = "null")' in text
            ok = await client.call_tool("fit_summary", {"missing": False})
            assert ok.is_error is False
            assert ok.structured_content["p_value"] == 1.29e-10

    run(go())


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_responses_validate_against_the_official_schema(version):
    if version == MODERN_VERSION:
        meta = {"_meta": modern_meta()}
        lines = [
            req(1, "tools/list", meta),
            req(2, "tools/call", {"name": "fit_summary", "arguments": {"missing": True}, **meta}),
            req(3, "tools/call", {"name": "maybe_point", **meta}),
        ]
    else:
        lines = [
            initialize(0, version),
            notif("notifications/initialized"),
            req(1, "tools/list"),
            req(2, "tools/call", {"name": "fit_summary", "arguments": {"missing": True}}),
            req(3, "tools/call", {"name": "maybe_point"}),
        ]
    out = run_lines(lines, script="nullable.R")
    assert out.returncode == 0, out.stderr
    by_id = {m["id"]: m for m in out.messages}
    listing = by_id[1]
    validate(listing, version, result_envelope_name(version))
    validate(listing["result"], version, "ListToolsResult")
    tools = {t["name"]: t for t in listing["result"]["tools"]}
    if version == "2024-11-05":
        assert "outputSchema" not in tools["fit_summary"]
    else:
        assert tools["fit_summary"]["outputSchema"]["properties"]["p_value"]["anyOf"] == NULLABLE_NUMBER
    assert ("outputSchema" in tools["maybe_point"]) == (version == MODERN_VERSION)
    for id_ in (2, 3):
        validate(by_id[id_]["result"], version, "CallToolResult")
    call = by_id[2]["result"]
    if version == "2024-11-05":
        assert "structuredContent" not in call
    else:
        assert call["structuredContent"] == EXPECTED_MISSING
    assert call["content"][0]["text"] == (
        '{"term":"wt","estimate":-5.3445,"p_value":null,"interval":[-6.4863,null],"status":null}'
    )
