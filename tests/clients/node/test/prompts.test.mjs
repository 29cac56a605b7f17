// Prompts and completion (RULES section 16, issue 45) with the TypeScript SDK
// v2 (@modelcontextprotocol/client) over stdio, legacy and pinned 2026-07-28:
// the conformance server's templates are listed, filled by the engine (a value
// is never filled again), and an argument's values are offered as it is typed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import { serverParams, MODERN } from './helpers.mjs';

for (const [label, negotiation] of [['legacy', null], ['2026-07-28', { mode: { pin: MODERN } }]]) {
  test(`${label}: prompts are listed, filled and completed`, async () => {
    const client = new Client({ name: 'mcplite-node-prompts', version: '1.0.0' }, negotiation ? { versionNegotiation: negotiation } : {});
    await client.connect(new StdioClientTransport(serverParams(getDefaultEnvironment(), { script: 'conformance.R' })));
    try {
      const { prompts } = await client.listPrompts();
      const withArgs = prompts.find(p => p.name === 'test_prompt_with_arguments');
      assert.deepEqual(withArgs.arguments.map(a => [a.name, a.required]), [['arg1', true], ['arg2', true]]);
      const got = await client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'a', arg2: '{{arg1}}' } });
      assert.equal(got.messages[0].content.text, "Prompt with arguments: arg1='a', arg2='{{arg1}}'");
      const img = await client.getPrompt({ name: 'test_prompt_with_image' });
      assert.equal(img.messages[0].content.mimeType, 'image/png');
      const done = await client.complete({ ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' }, argument: { name: 'arg1', value: 'pa' } });
      assert.deepEqual(done.completion.values, ['paris', 'park', 'party']);
      await assert.rejects(client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'only' } }));
    } finally {
      await client.close();
    }
  });
}
