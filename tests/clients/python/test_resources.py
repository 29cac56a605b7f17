"""Resources (RULES section 17, issue 45) with the official Python SDK (mcp==2.3.0)
over stdio and Streamable HTTP, in the legacy and the 2026-07-28 era, and every
result and error of a raw transcript validated against the official schema of
each protocol version."""

from __future__ import annotations

import asyncio
import base64

import pytest
from mcp import Client, StdioServerParameters
from mcp.types import ResourceTemplateReference

from mcplite_driver import (
    MODERN_VERSION,
    initialize,
    modern_meta,
    notif,
    req,
    result_envelope_name,
    error_envelope_name,
    run_lines,
    server_command,
    server_env,
    start_http_server,
    stop_http_server,
    validate,
)

TIMEOUT = 60
PNG_1PX = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)


def stdio() -> StdioServerParameters:
    cmd, args = server_command("conformance.R")
    return StdioServerParameters(command=cmd, args=args, env=server_env())


async def exercise(target, mode: str) -> None:
    async with Client(target, mode=mode, client_info=None) as client:
        listing = await client.list_resources()
        uris = [str(r.uri) for r in listing.resources]
        assert uris == ["test://static-text", "test://static-binary", "test://watched-resource"]
        assert listing.resources[1].mime_type == "image/png" and listing.resources[1].size == 70
        templates = await client.list_resource_templates()
        assert [t.uri_template for t in templates.resource_templates] == ["test://template/{id}/data"]
        text = await client.read_resource("test://static-text")
        assert text.contents[0].text == "This is the content of the static text resource."
        assert text.contents[0].mime_type == "text/plain"
        blob = await client.read_resource("test://static-binary")
        assert blob.contents[0].blob == PNG_1PX
        assert base64.b64decode(blob.contents[0].blob)[:4] == b"\x89PNG"
        filled = await client.read_resource("test://template/caf%C3%A9/data")
        assert str(filled.contents[0].uri) == "test://template/caf%C3%A9/data"
        assert '"id":"café"' in filled.contents[0].text
        with pytest.raises(Exception) as missing:
            await client.read_resource("test://missing")
        assert "Resource not found" in str(missing.value)
        done = await client.complete(ResourceTemplateReference(type="ref/resource", uri="test://template/{id}/data"),
                                     {"name": "id", "value": "12"})
        assert done.completion.values == ["123", "124"]
        prompt = await client.get_prompt("test_simple_prompt")
        assert prompt.messages[0].content.text == "This is a simple prompt for testing."
        if mode == "legacy":
            await client.subscribe_resource("test://watched-resource")
            await client.unsubscribe_resource("test://watched-resource")


@pytest.mark.parametrize("mode", ["legacy", MODERN_VERSION])
def test_u_resources_over_stdio(mode):
    asyncio.run(asyncio.wait_for(exercise(stdio(), mode), TIMEOUT))


@pytest.fixture(scope="module")
def http_server():
    try:
        proc, url = start_http_server("conformance.R")
    except RuntimeError as e:
        pytest.fail(str(e))
    yield url
    assert stop_http_server(proc) == 0


@pytest.mark.parametrize("mode", ["legacy", MODERN_VERSION])
def test_u_resources_over_http(http_server, mode):
    # 2026-07-28 over HTTP mirrors the URI of resources/read in Mcp-Name
    # (RULES H2.1): the SDK sends it and the server checks it.
    asyncio.run(asyncio.wait_for(exercise(http_server, mode), TIMEOUT))


READS = [
    ("resources/list", {}, "ListResourcesResult"),
    ("resources/templates/list", {}, "ListResourceTemplatesResult"),
    ("resources/read", {"uri": "test://static-text"}, "ReadResourceResult"),
    ("resources/read", {"uri": "test://static-binary"}, "ReadResourceResult"),
    ("resources/read", {"uri": "test://template/7/data"}, "ReadResourceResult"),
    (
        "completion/complete",
        {"ref": {"type": "ref/resource", "uri": "test://template/{id}/data"}, "argument": {"name": "id", "value": ""}},
        "CompleteResult",
    ),
]


@pytest.mark.parametrize("version", ["2024-11-05", "2025-06-18", "2025-11-25", MODERN_VERSION])
def test_u_results_and_errors_match_the_official_schema(version):
    modern = version == MODERN_VERSION
    lines = [] if modern else [initialize(0, version), notif("notifications/initialized")]
    for i, (method, params, _) in enumerate(READS, start=1):
        lines.append(req(i, method, {**params, "_meta": modern_meta()} if modern else params))
    missing = {"uri": "test://nope"}
    lines.append(req(99, "resources/read", {**missing, "_meta": modern_meta()} if modern else missing))
    run = run_lines(lines, script="conformance.R")
    by_id = {m["id"]: m for m in run.messages}
    for i, (method, _, name) in enumerate(READS, start=1):
        msg = by_id[i]
        assert "result" in msg, (method, msg)
        validate(msg, version, result_envelope_name(version))
        validate(msg["result"], version, name)
    err = by_id[99]
    validate(err, version, error_envelope_name(version))
    assert err["error"]["code"] == (-32602 if modern else -32002)
    assert err["error"]["data"] == missing


async def follow(list_page, key: str) -> list[list[str]]:
    """The items of every page of a listing, following next_cursor."""
    pages, cursor = [], None
    while True:
        page = await list_page(cursor=cursor)
        pages.append([str(getattr(i, key)) for i in getattr(page, "resources", None) or getattr(page, "tools", [])])
        cursor = page.next_cursor
        if cursor is None:
            return pages


@pytest.mark.parametrize("mode", ["legacy", MODERN_VERSION])
def test_l5_2_the_sdk_follows_pages(monkeypatch, mode):
    # MCPLITE_PAGE_SIZE=2: three resources in two pages, the tools in pages of two.
    monkeypatch.setenv("MCPLITE_PAGE_SIZE", "2")
    cmd, args = server_command("conformance.R")
    target = StdioServerParameters(command=cmd, args=args, env={**server_env(), "MCPLITE_PAGE_SIZE": "2"})

    async def go():
        async with Client(target, mode=mode, client_info=None) as client:
            pages = await follow(client.list_resources, "uri")
            assert pages == [["test://static-text", "test://static-binary"], ["test://watched-resource"]]
            tools = await follow(client.list_tools, "name")
            assert len(tools) > 1 and all(len(p) == 2 for p in tools[:-1]) and 1 <= len(tools[-1]) <= 2
            names = [n for p in tools for n in p]
            assert len(names) == len(set(names)) and "test_simple_text" in names

    asyncio.run(asyncio.wait_for(go(), TIMEOUT))
    # The raw pages are valid results of every version's schema.
    for version in ["2024-11-05", "2025-11-25", MODERN_VERSION]:
        modern = version == MODERN_VERSION
        lines = [] if modern else [initialize(0, version), notif("notifications/initialized")]
        meta = {"_meta": modern_meta()} if modern else {}
        lines += [req(1, "resources/list", meta), req(2, "resources/list", {**meta, "cursor": "page-1"}),
                  req(3, "tools/list", {**meta, "cursor": "page-1"}), req(4, "resources/list", {**meta, "cursor": "page-2"})]
        run = run_lines(lines, script="conformance.R")
        by_id = {m["id"]: m for m in run.messages}
        assert by_id[1]["result"]["nextCursor"] == "page-1"
        assert "nextCursor" not in by_id[2]["result"]
        for i, name in [(1, "ListResourcesResult"), (2, "ListResourcesResult"), (3, "ListToolsResult")]:
            validate(by_id[i]["result"], version, name)
        assert by_id[4]["error"] == {"code": -32602, "message": "Invalid params: invalid cursor"}
