"""Benchmark peer: official Python SDK (mcp 2.x), high-level MCPServer API.

Same tools as every benchmarked server (see bench/README.md). BENCH_TOOLS=1
serves only `add`; otherwise the 54-tool set. Each tool uses the cheapest
idiomatic configuration: text-only tools opt out of structured output.
"""

import os
from typing import Any, Literal

from mcp.server import MCPServer
from pydantic import Field
from typing_extensions import Annotated

ALL = os.environ.get("BENCH_TOOLS", "54") != "1"
server = MCPServer("bench-py-mcpserver", version="0.0.0")
_cache: dict[str, Any] = {}


@server.tool(description="Add two numbers.", structured_output=False)
def add(
    x: Annotated[float, Field(description="First number.")],
    y: Annotated[float, Field(description="Second number.")],
) -> str:
    z = x + y
    return str(int(z)) if z.is_integer() else repr(z)


if ALL:

    @server.tool(description="Return the number of characters in a text.", structured_output=False)
    def text_length(text: Annotated[str, Field(description="Any text.")]) -> str:
        return str(len(text))

    @server.tool(description="Return a 10 MB text.", structured_output=False)
    def big_text() -> str:
        if "text" not in _cache:
            _cache["text"] = "abcdefghij" * 1_000_000
        return _cache["text"]

    @server.tool(description="Return a 100,000 x 5 data frame as structured content.")
    def frame() -> dict[str, Any]:
        if "rows" not in _cache:
            groups = ("a", "b", "c", "d", "e")
            _cache["rows"] = [
                {"id": i, "value": i + 0.5, "label": f"r{i}", "flag": i % 2 == 0, "group": groups[(i - 1) % 5]}
                for i in range(1, 100_001)
            ]
        return {"rows": _cache["rows"]}

    def make_extra(i: int) -> None:
        def extra(
            a: Annotated[str, Field(description="A string.")],
            b: Annotated[int, Field(description="An integer.")],
            c: Annotated[float, Field(description="A number.")],
            d: Annotated[bool, Field(description="A flag.")],
            e: Annotated[Literal["red", "green", "blue"], Field(description="A colour.")],
        ) -> str:
            return "ok"

        server.tool(name=f"tool_{i:02d}", description=f"Extra tool {i:02d} with five typed arguments.",
                    structured_output=False)(extra)

    for _i in range(1, 51):
        make_extra(_i)

if __name__ == "__main__":
    server.run("stdio")
