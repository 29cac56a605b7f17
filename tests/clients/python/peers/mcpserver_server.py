"""Peer server for mcplite's client tests: the official Python SDK (mcp 2.x),
high-level MCPServer API with decorated functions.

    python mcpserver_server.py            # stdio
    python mcpserver_server.py http PORT  # Streamable HTTP on 127.0.0.1:PORT/mcp
"""

import sys

from pydantic import BaseModel

from mcp.server import MCPServer
from mcp.server.mcpserver import Context

server = MCPServer("py-mcpserver-peer", version="2.0.0", instructions="Peer for mcplite tests.")


class Sum(BaseModel):
    sum: float


@server.tool(description="Echo the text.", structured_output=False)
def echo(text: str) -> str:
    return text


@server.tool(description="Add two numbers.")
def add(x: float, y: float) -> Sum:
    return Sum(sum=x + y)


@server.tool(description="Fail with the message.")
def fail(message: str) -> str:
    raise ValueError(message)


@server.tool(description="Take a while, reporting progress.", structured_output=False)
async def slow(ctx: Context, steps: int = 3, delay: float = 0.2) -> str:
    import anyio
    for i in range(1, steps + 1):
        await anyio.sleep(delay)
        await ctx.report_progress(i, steps, f"step {i}")
    return "done"


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]), streamable_http_path="/mcp")
    else:
        server.run()
