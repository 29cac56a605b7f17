"""Progress over Streamable HTTP with the official Python SDK (mcp==2.3.0), RULES C6:
a call with `progress_callback` is answered as an SSE stream whose progress
notifications carry the tool's own mcp_progress() reports, in order, before the
result; legacy sessions and the modern 2026-07-28 era alike."""

from __future__ import annotations

import asyncio

import pytest
from mcp import Client

from mcplite_driver import MODERN_VERSION, start_http_server, stop_http_server

TIMEOUT = 60


@pytest.fixture(scope="module")
def progress_server():
    try:
        proc, url = start_http_server("progress_http.R", {"MCPLITE_PROGRESS_INTERVAL": "0.5"})
    except RuntimeError as e:
        pytest.fail(str(e))
    yield url
    assert stop_http_server(proc) == 0


async def folds(url: str, mode: str) -> tuple[str, list[tuple[float, float | None, str | None]], str]:
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async with Client(url, mode=mode) as client:
        result = await client.call_tool("folds", {"k": 4}, progress_callback=on_progress)
        version = client.protocol_version
    return version, seen, result.content[0].text


@pytest.mark.parametrize("mode", ["legacy", MODERN_VERSION])
def test_progress_callback_receives_the_tools_reports_in_order(progress_server, mode):
    version, seen, text = asyncio.run(asyncio.wait_for(folds(progress_server, mode), TIMEOUT))
    assert version == ("2025-11-25" if mode == "legacy" else MODERN_VERSION)
    assert text == "folded"
    reports = [(p, t, m) for (p, t, m) in seen if m is not None and m.startswith("fold") and "running" not in m]
    assert reports == [(float(i), 4.0, f"fold {i} of 4") for i in range(1, 5)], seen
    values = [p for (p, _, _) in seen]
    assert values == sorted(values) and len(set(values)) == len(values), seen


@pytest.fixture(scope="module")
def polled_server():
    # RULES H8: the server holds a call's connection at most 0.3 s.
    try:
        proc, url = start_http_server("progress_http.R", {"MCPLITE_PROGRESS_INTERVAL": "0.5", "MCPLITE_STREAM_HOLD": "0.3"})
    except RuntimeError as e:
        pytest.fail(str(e))
    yield url
    assert stop_http_server(proc) == 0


async def slow_and_folds(url: str) -> tuple[str, str, str, list[tuple[float, float | None, str | None]]]:
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async with Client(url, mode="legacy") as client:
        slow = await client.call_tool("slow", {"seconds": 1.5, "tag": "polled"})
        folded = await client.call_tool("folds", {"k": 4}, progress_callback=on_progress)
        version = client.protocol_version
    return version, slow.content[0].text, folded.content[0].text, seen


def test_a_legacy_client_polls_a_call_whose_connections_the_server_closes(polled_server):
    # The SDK reads the priming event, reconnects with Last-Event-ID after
    # each closed connection (waiting the server's retry time) and gets the
    # answers; the progress reports made while no connection was open too.
    version, slow, folded, seen = asyncio.run(asyncio.wait_for(slow_and_folds(polled_server), TIMEOUT))
    assert version == "2025-11-25"
    assert slow == "slept 1.5"
    assert folded == "folded"
    reports = [(p, t, m) for (p, t, m) in seen if m is not None and m.startswith("fold") and "running" not in m]
    assert reports == [(float(i), 4.0, f"fold {i} of 4") for i in range(1, 5)], seen
