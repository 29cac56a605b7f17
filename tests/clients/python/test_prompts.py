"""Prompts and completion (RULES section 16, issue 45) with the official Python SDK (mcp==2.3.0)
over stdio, in the legacy and the 2026-07-28 era: the conformance server's
prompt templates are listed with their arguments and filled by the engine."""

from __future__ import annotations

import asyncio

import pytest
from mcp import Client, StdioServerParameters

from mcplite_driver import MODERN_VERSION, server_command, server_env

TIMEOUT = 60


def params() -> StdioServerParameters:
    cmd, args = server_command("conformance.R")
    return StdioServerParameters(command=cmd, args=args, env=server_env())


@pytest.mark.parametrize("mode", ["legacy", MODERN_VERSION])
def test_q1_q2_prompts_listed_and_filled(mode):
    async def go():
        async with Client(params(), mode=mode, client_info=None) as client:
            listing = await client.list_prompts()
            by_name = {p.name: p for p in listing.prompts}
            args = by_name["test_prompt_with_arguments"].arguments
            assert [(a.name, a.required) for a in args] == [("arg1", True), ("arg2", True)]
            got = await client.get_prompt("test_prompt_with_arguments", {"arg1": "héllo", "arg2": "{{arg1}}"})
            assert got.messages[0].role == "user"
            assert got.messages[0].content.text == "Prompt with arguments: arg1='héllo', arg2='{{arg1}}'"
            emb = await client.get_prompt("test_prompt_with_embedded_resource", {"resourceUri": "test://r"})
            assert str(emb.messages[0].content.resource.uri) == "test://r"
            img = await client.get_prompt("test_prompt_with_image")
            assert img.messages[0].content.mime_type == "image/png"
            with pytest.raises(Exception):
                await client.get_prompt("test_prompt_with_arguments", {"arg1": "only one"})
            # RULES Q3: the values of arg1 that start with what was typed.
            from mcp.types import PromptReference

            done = await client.complete(PromptReference(type="ref/prompt", name="test_prompt_with_arguments"),
                                         {"name": "arg1", "value": "PAR"})
            assert done.completion.values == ["paris", "park", "party"]
            assert done.completion.total == 3 and not done.completion.has_more

    asyncio.run(asyncio.wait_for(go(), TIMEOUT))
