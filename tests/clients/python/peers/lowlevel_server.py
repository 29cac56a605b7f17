"""Peer server for mcplite's client tests: the official Python SDK (mcp 2.x),
low-level Server API.

    python lowlevel_server.py            # stdio
    python lowlevel_server.py http PORT  # Streamable HTTP on 127.0.0.1:PORT/mcp

Tools (listed two per page, so clients must follow `nextCursor`):
  echo(text)            text content
  add(x, y)             structured content {"sum": x + y} plus its JSON text
  fail(message)         a tool error (isError: true) with the message
  slow(steps, delay)    one progress notification per step (when asked for),
                        then "done"; a cancellation is reported on stderr
  crash()               writes to stderr and exits with status 3 mid-call
"""

import json
import os
import sys
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server

PAGE = 2


def _schema(props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": required}


TOOLS = [
    types.Tool(name="echo", description="Echo the text.",
               inputSchema=_schema({"text": {"type": "string"}}, ["text"]),
               annotations=types.ToolAnnotations(readOnlyHint=True, title="Echo")),
    types.Tool(name="add", description="Add two numbers.",
               inputSchema=_schema({"x": {"type": "number"}, "y": {"type": "number"}}, ["x", "y"]),
               outputSchema=_schema({"sum": {"type": "number"}}, ["sum"])),
    types.Tool(name="fail", description="Report a tool error.",
               inputSchema=_schema({"message": {"type": "string"}}, ["message"])),
    types.Tool(name="slow", description="Take a while, reporting progress.",
               inputSchema=_schema({"steps": {"type": "integer"}, "delay": {"type": "number"}}, [])),
    types.Tool(name="crash", description="Exit in the middle of the call.", inputSchema=_schema({}, [])),
]


async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
    cursor = params.cursor if params is not None else None
    start = int(cursor) if cursor else 0
    page = TOOLS[start:start + PAGE]
    nxt = str(start + PAGE) if start + PAGE < len(TOOLS) else None
    return types.ListToolsResult(tools=page, nextCursor=nxt)


def _text(s: str, **kw: Any) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=s)], **kw)


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    name, args = params.name, params.arguments or {}
    if name == "echo":
        return _text(args["text"])
    if name == "add":
        s = {"sum": args["x"] + args["y"]}
        return _text(json.dumps(s), structuredContent=s)
    if name == "fail":
        return _text(args["message"], isError=True)
    if name == "slow":
        steps, delay = int(args.get("steps", 3)), float(args.get("delay", 0.2))
        try:
            for i in range(1, steps + 1):
                await anyio.sleep(delay)
                await ctx.session.report_progress(i, steps, f"step {i}")
        except anyio.get_cancelled_exc_class():
            print(f"peer: slow was cancelled", file=sys.stderr, flush=True)
            raise
        return _text("done")
    if name == "crash":
        print("peer: crashing on purpose", file=sys.stderr, flush=True)
        os._exit(3)
    raise ValueError(f"unknown tool {name}")


server = Server("py-lowlevel-peer", version="1.2.3", on_list_tools=list_tools, on_call_tool=call_tool)


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "http":
        import uvicorn
        app = server.streamable_http_app(host="127.0.0.1")
        uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
        return
    from mcp.server.stdio import stdio_server

    async def run() -> None:
        async with stdio_server() as (r, w):
            await server.run(r, w, server.create_initialization_options())

    anyio.run(run)


if __name__ == "__main__":
    main()
