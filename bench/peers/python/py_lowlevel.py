"""Benchmark peer: official Python SDK (mcp 2.x), low-level Server API.

Hand-written tool list and dispatch on the SDK's low-level Server, the
fastest way to use the Python SDK. Same tools as every benchmarked server.
Over stdio, or over Streamable HTTP (uvicorn) when BENCH_HTTP_PORT is set.
"""

import os
import time
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server
from mcp.server.stdio import stdio_server

ALL = os.environ.get("BENCH_TOOLS", "54") != "1"
_cache: dict[str, Any] = {}


def _schema(props: dict[str, dict[str, Any]]) -> dict[str, Any]:
    s: dict[str, Any] = {"type": "object", "properties": props}
    if props:
        s["required"] = list(props)
    s["additionalProperties"] = False
    return s


TOOLS = [
    types.Tool(name="add", description="Add two numbers.", input_schema=_schema({
        "x": {"type": "number", "description": "First number."},
        "y": {"type": "number", "description": "Second number."}}))
]
if ALL:
    TOOLS += [
        types.Tool(name="text_length", description="Return the number of characters in a text.",
                   input_schema=_schema({"text": {"type": "string", "description": "Any text."}})),
        types.Tool(name="big_text", description="Return a 10 MB text.", input_schema=_schema({})),
        types.Tool(name="frame", description="Return a 100,000 x 5 data frame as structured content.",
                   input_schema=_schema({})),
    ]
    extra_schema = _schema({
        "a": {"type": "string", "description": "A string."},
        "b": {"type": "integer", "description": "An integer."},
        "c": {"type": "number", "description": "A number."},
        "d": {"type": "boolean", "description": "A flag."},
        "e": {"type": "string", "enum": ["red", "green", "blue"], "description": "A colour."},
    })
    TOOLS += [types.Tool(name=f"tool_{i:02d}", description=f"Extra tool {i:02d} with five typed arguments.",
                         input_schema=extra_schema) for i in range(1, 51)]
# The HTTP workloads (bench/http/) add a tool that sleeps for `s` seconds.
if os.environ.get("BENCH_NAP") == "1":
    TOOLS.append(types.Tool(name="nap", description="Sleep for s seconds.",
                            input_schema=_schema({"s": {"type": "number", "description": "Seconds."}})))
# The worker benchmark (bench/workers/) adds a busy loop of `ms` milliseconds:
# it never awaits, so it holds the event loop as a CPU-bound tool does.
if os.environ.get("BENCH_SPIN") == "1":
    TOOLS.append(types.Tool(name="spin", description="A busy loop of ms milliseconds.",
                            input_schema=_schema({"ms": {"type": "number", "description": "Milliseconds."}})))
NAMES = {t.name for t in TOOLS}


def _text(s: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=s)])


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    name, args = params.name, params.arguments or {}
    if name not in NAMES:
        return types.CallToolResult(content=[types.TextContent(text=f"unknown tool {name}")], is_error=True)
    if name == "add":
        z = float(args["x"]) + float(args["y"])
        return _text(str(int(z)) if z.is_integer() else repr(z))
    if name == "spin":
        until, n = time.monotonic() + float(args["ms"]) / 1000, 0
        while time.monotonic() < until:
            n += 1
        return _text("spun")
    if name == "nap":
        await anyio.sleep(float(args["s"]))
        return _text("rested")
    if name == "text_length":
        return _text(str(len(args["text"])))
    if name == "big_text":
        if "text" not in _cache:
            _cache["text"] = "abcdefghij" * 1_000_000
        return _text(_cache["text"])
    if name == "frame":
        if "rows" not in _cache:
            groups = ("a", "b", "c", "d", "e")
            _cache["rows"] = [
                {"id": i, "value": i + 0.5, "label": f"r{i}", "flag": i % 2 == 0, "group": groups[(i - 1) % 5]}
                for i in range(1, 100_001)
            ]
        structured = {"rows": _cache["rows"]}
        import json
        return types.CallToolResult(content=[types.TextContent(text=json.dumps(structured, separators=(",", ":")))],
                                    structured_content=structured)
    return _text("ok")


server = Server("bench-py-lowlevel", version="0.0.0", on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    port = os.environ.get("BENCH_HTTP_PORT")
    if port:
        # Streamable HTTP on uvicorn (bench/http/): the SDK's app, JSON
        # answers (no event streams), sessions as the SDK keeps them.
        import uvicorn

        app = server.streamable_http_app(json_response=True)
        uvicorn.run(app, host="127.0.0.1", port=int(port), log_level="warning", access_log=False)
    else:
        anyio.run(main)
