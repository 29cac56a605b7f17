// Resources (RULES section 17, issue 45) with the TypeScript SDK v2
// (@modelcontextprotocol/client), over stdio and Streamable HTTP, legacy and
// pinned 2026-07-28: the conformance server's resources are listed and read,
// its template is filled from the URI and its variable completed, and a
// legacy session subscribes.
import assert from 'node:assert/strict';
import { test, before, after } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import { serverParams, startHttpServer, stopHttpServer, MODERN } from './helpers.mjs';

let http;

before(async () => {
  http = await startHttpServer('conformance.R');
});

after(async () => {
  assert.equal(await stopHttpServer(http.server), 0);
});

async function exercise(client, modern) {
  const { resources } = await client.listResources();
  assert.deepEqual(resources.map(r => r.uri), ['test://static-text', 'test://static-binary', 'test://watched-resource']);
  assert.equal(resources[0].description, 'A static text resource for testing.');
  const { resourceTemplates } = await client.listResourceTemplates();
  assert.deepEqual(resourceTemplates.map(t => t.uriTemplate), ['test://template/{id}/data']);
  const text = await client.readResource({ uri: 'test://static-text' });
  assert.equal(text.contents[0].text, 'This is the content of the static text resource.');
  const blob = await client.readResource({ uri: 'test://static-binary' });
  assert.equal(Buffer.from(blob.contents[0].blob, 'base64').subarray(1, 4).toString(), 'PNG');
  const filled = await client.readResource({ uri: 'test://template/42/data' });
  assert.equal(JSON.parse(filled.contents[0].text).id, '42');
  await assert.rejects(client.readResource({ uri: 'test://missing' }), /Resource not found/);
  const done = await client.complete({ ref: { type: 'ref/resource', uri: 'test://template/{id}/data' }, argument: { name: 'id', value: '2' } });
  assert.deepEqual(done.completion.values, ['200']);
  // Over HTTP in 2026-07-28 the SDK mirrors the URI of resources/read and
  // the name of prompts/get in Mcp-Name, which the server checks (RULES H2.1).
  const prompt = await client.getPrompt({ name: 'test_simple_prompt' });
  assert.equal(prompt.messages[0].content.text, 'This is a simple prompt for testing.');
  if (!modern) {
    await client.subscribeResource({ uri: 'test://watched-resource' });
    await client.unsubscribeResource({ uri: 'test://watched-resource' });
  }
}

for (const [label, modern] of [['legacy', false], ['2026-07-28', true]]) {
  const options = modern ? { versionNegotiation: { mode: { pin: MODERN } } } : {};

  test(`stdio, ${label}: resources are listed, read, filled and completed`, async () => {
    const client = new Client({ name: 'mcplite-node-resources', version: '1.0.0' }, options);
    await client.connect(new StdioClientTransport(serverParams(getDefaultEnvironment(), { script: 'conformance.R' })));
    try {
      await exercise(client, modern);
    } finally {
      await client.close();
    }
  });

  test(`HTTP, ${label}: resources are listed, read, filled and completed`, async () => {
    const client = new Client({ name: 'mcplite-node-resources', version: '1.0.0' }, options);
    await client.connect(new StreamableHTTPClientTransport(new URL(http.url)));
    try {
      if (modern) assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
      await exercise(client, modern);
    } finally {
      await client.close();
    }
  });
}

// RULES L5.2: with MCPLITE_PAGE_SIZE the listings come in pages. The SDK's
// call without a cursor walks every page (following nextCursor); a call with
// a cursor gets that page.
for (const [label, modern] of [['legacy', false], ['2026-07-28', true]]) {
  const options = modern ? { versionNegotiation: { mode: { pin: MODERN } } } : {};
  test(`stdio, ${label}: listings in pages of MCPLITE_PAGE_SIZE are followed`, async () => {
    const client = new Client({ name: 'mcplite-node-pages', version: '1.0.0' }, options);
    const params = serverParams(getDefaultEnvironment(), { script: 'conformance.R' });
    params.env.MCPLITE_PAGE_SIZE = '2';
    await client.connect(new StdioClientTransport(params));
    try {
      const all = await client.listResources();
      assert.deepEqual(all.resources.map(r => r.uri), ['test://static-text', 'test://static-binary', 'test://watched-resource']);
      const second = await client.listResources({ cursor: 'page-1' });
      assert.deepEqual(second.resources.map(r => r.uri), ['test://watched-resource']);
      assert.equal(second.nextCursor, undefined);
      const tools = await client.listTools();
      const names = tools.tools.map(t => t.name);
      assert.ok(names.length > 2 && new Set(names).size === names.length && names.includes('test_simple_text'));
      const page = await client.listTools({ cursor: 'page-1' });
      assert.deepEqual(page.tools.map(t => t.name), names.slice(2, 4));
      assert.equal(page.nextCursor, names.length > 4 ? 'page-2' : undefined);
      await assert.rejects(client.listTools({ cursor: 'page-99' }), /invalid cursor/);
    } finally {
      await client.close();
    }
  });
}
