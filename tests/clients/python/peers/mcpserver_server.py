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


# 2026-07-28 multi round-trip requests beside tools (RULES K12.3): a prompt
# and a resource template that first ask the user which, then answer with it.
def _which(ctx: Context, question: str):
    from mcp_types import ElicitRequest, ElicitRequestFormParams, InputRequiredResult

    answers = ctx.input_responses or {}
    if "which" in answers:
        a = answers["which"]
        content = getattr(a, "content", None) or (a.get("content") if isinstance(a, dict) else None) or {}
        return None, content.get("choice", "none")
    schema = {"type": "object", "properties": {"choice": {"type": "string", "default": "tea"}}}
    ask = ElicitRequest(params=ElicitRequestFormParams(mode="form", message=question, requested_schema=schema))
    return InputRequiredResult(input_requests={"which": ask}, request_state="asked-once"), None


@server.prompt(description="Ask which drink, then suggest it.")
def drink(ctx: Context, meal: str):
    pending, choice = _which(ctx, f"Which drink with {meal}?")
    if pending is not None:
        return pending
    return f"Serve {choice} with {meal} (state {ctx.request_state})."


@server.resource("menu://{meal}", description="Ask which drink, then give the menu.")
def menu(meal: str, ctx: Context):
    pending, choice = _which(ctx, f"Which drink with {meal}?")
    if pending is not None:
        return pending
    return f"{meal} and {choice}"


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]), streamable_http_path="/mcp")
    else:
        server.run()
