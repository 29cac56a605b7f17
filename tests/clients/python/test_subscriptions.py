"""Resources that tools change (RULES U3, issue 45) with the official Python SDK
(mcp==2.3.0), over stdio and Streamable HTTP: a legacy session subscribes with
resources/subscribe and hears on its connection (stdio) or its GET stream (HTTP);
a 2026-07-28 client listens with subscriptions/listen (Client.listen()). Also
with workers, and every notification of a raw transcript validated against the
official schema of its protocol version."""

from __future__ import annotations

import asyncio

import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.subscriptions import ResourcesListChanged, ResourceUpdated

from mcplite_driver import (
    MODERN_VERSION,
    initialize,
    modern_meta,
    notif,
    req,
    run_lines,
    server_command,
    server_env,
    start_http_server,
    stop_http_server,
    validate,
)

TIMEOUT = 60


def stdio(workers: int = 1) -> StdioServerParameters:
    cmd, args = server_command("notes.R")
    return StdioServerParameters(command=cmd, args=args, env={**server_env(), "MCPLITE_TEST_WORKERS": str(workers)})


def method_of(message) -> str | None:
    inner = getattr(message, "root", message)
    return getattr(inner, "method", None)


async def legacy(target) -> None:
    heard: asyncio.Queue = asyncio.Queue()

    async def handler(message) -> None:
        m = method_of(message)
        if m and m.startswith("notifications/resources/"):
            inner = getattr(message, "root", message)
            uri = getattr(getattr(inner, "params", None), "uri", None)
            await heard.put((m, None if uri is None else str(uri)))

    async with Client(target, mode="legacy", message_handler=handler) as client:
        caps = client.session.initialize_result.capabilities.resources
        assert caps.subscribe is True and caps.list_changed is True
        await client.subscribe_resource("notes://all")
        # Over HTTP the SDK opens the session's GET stream on its own: a call
        # made before it is open is not heard there, so wait for a change that
        # arrives (each call adds a note, so each changes the list).
        got = []
        for i in range(50):
            result = await client.call_tool("add_note", {"text": f"note {i}"})
            assert not result.is_error
            try:
                got.append(await asyncio.wait_for(heard.get(), 0.5))
                break
            except asyncio.TimeoutError:
                continue
        assert got, "no notification was heard"
        while not heard.empty():
            got.append(heard.get_nowait())
        await asyncio.sleep(0.2)
        while not heard.empty():
            got.append(heard.get_nowait())
        assert ("notifications/resources/list_changed", None) in got, got
        assert ("notifications/resources/updated", "notes://all") in got, got
        read = await client.read_resource("notes://all")
        assert read.contents[0].text.splitlines()[-1] == f"note {i}"
        # Unsubscribed: the same text again changes neither the list nor
        # anything the session follows, so nothing is heard; a new note
        # changes the list.
        await client.unsubscribe_resource("notes://all")
        await client.call_tool("touch", {"text": read.contents[0].text})
        await client.call_tool("add_note", {"text": "last"})
        update = await asyncio.wait_for(heard.get(), 10)
        assert update == ("notifications/resources/list_changed", None), update
        await asyncio.sleep(0.2)
        assert heard.empty(), [heard.get_nowait() for _ in range(heard.qsize())]


async def modern(target) -> None:
    async with Client(target, mode=MODERN_VERSION) as client:
        async with client.listen(resources_list_changed=True, resource_subscriptions=["notes://all", "notes://x"]) as sub:
            assert sub.honored.resources_list_changed is True
            assert sub.honored.resource_subscriptions == ["notes://all"]
            assert not (await client.call_tool("add_note", {"text": "milk"})).is_error
            events = set()
            while len(events) < 2:
                events.add(await asyncio.wait_for(sub.__anext__(), 10))
            assert events == {ResourcesListChanged(), ResourceUpdated(uri="notes://all")}
            read = await client.read_resource("notes://all")
            assert read.contents[0].text.endswith("milk")
            # Content only: an update, no list change.
            assert (await client.call_tool("touch", {"text": read.contents[0].text})).content[0].text == "touched"
            assert await asyncio.wait_for(sub.__anext__(), 10) == ResourceUpdated(uri="notes://all")


@pytest.mark.parametrize("workers", [1, 2])
def test_u3_legacy_over_stdio(workers):
    asyncio.run(asyncio.wait_for(legacy(stdio(workers)), TIMEOUT))


@pytest.mark.parametrize("workers", [1, 2])
def test_u3_modern_over_stdio(workers):
    asyncio.run(asyncio.wait_for(modern(stdio(workers)), TIMEOUT))


@pytest.fixture(scope="module")
def http_server():
    try:
        proc, url = start_http_server("notes.R")
    except RuntimeError as e:
        pytest.fail(str(e))
    yield url
    assert stop_http_server(proc) == 0


def test_u3_legacy_over_http(http_server):
    asyncio.run(asyncio.wait_for(legacy(http_server), TIMEOUT))


def test_u3_modern_over_http(http_server):
    asyncio.run(asyncio.wait_for(modern(http_server), TIMEOUT))


@pytest.mark.parametrize("version", ["2024-11-05", "2025-06-18", "2025-11-25", MODERN_VERSION])
def test_u3_notifications_match_the_official_schema(version):
    modern_era = version == MODERN_VERSION
    meta = {"_meta": modern_meta()} if modern_era else {}
    call = req(2, "tools/call", {"name": "add_note", "arguments": {"text": "a"}, **meta})
    if modern_era:
        filt = {"resourcesListChanged": True, "resourceSubscriptions": ["notes://all"]}
        lines = [req(1, "subscriptions/listen", {"notifications": filt, **meta}), call]
    else:
        lines = [initialize(0, version), notif("notifications/initialized"),
                 req(1, "resources/subscribe", {"uri": "notes://all"}), call]
    run = run_lines(lines, script="notes.R")
    notes = [m for m in run.messages if "method" in m]
    methods = [m["method"] for m in notes]
    expected = ["notifications/resources/list_changed", "notifications/resources/updated"]
    if modern_era:
        expected = ["notifications/subscriptions/acknowledged", *expected]
        for m in notes:
            assert m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 1, m
    assert methods == expected, run.messages
    names = {
        "notifications/subscriptions/acknowledged": "SubscriptionsAcknowledgedNotification",
        "notifications/resources/list_changed": "ResourceListChangedNotification",
        "notifications/resources/updated": "ResourceUpdatedNotification",
    }
    for m in notes:
        validate(m, version, names[m["method"]])
    # The answer to the call comes after what it changed was heard.
    ids = [m.get("id") for m in run.messages]
    assert ids.index(2) > max(i for i, m in enumerate(run.messages) if "method" in m)


def test_u3_3_a_stopping_server_ends_a_listen_stream_with_its_response():
    import http.client
    import json
    import threading
    from urllib.parse import urlparse

    proc, url = start_http_server("notes.R")
    try:
        u = urlparse(url)
        body = req(7, "subscriptions/listen", {"notifications": {"resourcesListChanged": True}, "_meta": modern_meta()})
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": MODERN_VERSION,
            "Mcp-Method": "subscriptions/listen",
        }
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=TIMEOUT)
        conn.request("POST", u.path, body=body, headers=headers)
        r = conn.getresponse()
        assert r.status == 200 and r.getheader("content-type") == "text/event-stream"
        events, stopped = [], None
        while True:
            line = r.readline()
            if not line:
                break
            if not line.startswith(b"data: "):
                continue
            events.append(json.loads(line[len(b"data: "):]))
            if len(events) == 1:
                # Acknowledged: now stop the server (the stream is open).
                stopped = threading.Thread(target=lambda: stop_http_server(proc))
                stopped.start()
        stopped.join()
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0
    assert [e.get("method") for e in events] == ["notifications/subscriptions/acknowledged", None]
    validate(events[0], MODERN_VERSION, "SubscriptionsAcknowledgedNotification")
    validate(events[1], MODERN_VERSION, "SubscriptionsListenResultResponse")
    assert events[1]["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 7
