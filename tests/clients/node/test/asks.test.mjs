// Questions to the client (RULES section 18, issue 45) with the TypeScript
// SDK v2 (@modelcontextprotocol/client) over stdio and Streamable HTTP in the
// legacy era: a tool's mcp_elicit() and mcp_sample() reach the client's
// handlers, and their answers reach the tool.
import assert from 'node:assert/strict';
import { test, before, after } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import { serverParams, startHttpServer, stopHttpServer, MODERN } from './helpers.mjs';

let http;

before(async () => {
  http = await startHttpServer('asks.R');
});

after(async () => {
  assert.equal(await stopHttpServer(http.server), 0);
});

function newClient(asked, modern = false) {
  const client = new Client(
    { name: 'mcplite-node-asks', version: '1.0.0' },
    {
      capabilities: { elicitation: { form: {} }, sampling: {} },
      ...(modern ? { versionNegotiation: { mode: { pin: MODERN } } } : {})
    }
  );
  client.setRequestHandler('elicitation/create', async request => {
    asked.push(request.params);
    return { action: 'accept', content: { why: 'large', keep: 1 } };
  });
  client.setRequestHandler('sampling/createMessage', async request => {
    asked.push(request.params);
    return { role: 'assistant', content: { type: 'text', text: 'Short.' }, model: 'm', stopReason: 'endTurn' };
  });
  return client;
}

async function exercise(client, asked) {
  const r = await client.callTool({ name: 'confirm', arguments: { n: 4 } });
  assert.equal(r.content[0].text, 'Deleting 3 files (large)');
  assert.equal(asked[0].message, 'Delete 4 files?');
  const s = await client.callTool({ name: 'summarise', arguments: { text: 'long' } });
  assert.equal(s.content[0].text, 'Summary (m, endTurn): Short.');
  assert.equal(asked[1].maxTokens, 50);
  const q = await client.callTool({ name: 'quick', arguments: {} });
  assert.equal(q.content[0].text, 'quick');
}

test('stdio, legacy: a tool asks the user and the model', async () => {
  const asked = [];
  const client = newClient(asked);
  await client.connect(new StdioClientTransport(serverParams(getDefaultEnvironment(), { script: 'asks.R' })));
  try {
    await exercise(client, asked);
  } finally {
    await client.close();
  }
});

test('HTTP, legacy: a tool asks the user and the model on its event stream', async () => {
  const asked = [];
  const client = newClient(asked);
  await client.connect(new StreamableHTTPClientTransport(new URL(http.url)));
  try {
    await exercise(client, asked);
  } finally {
    await client.close();
  }
});

// 2026-07-28: the call answers input_required, the SDK asks its handlers
// and calls again with the answers (RULES A2).
test('stdio, 2026-07-28: the answers come back in a new round', async () => {
  const asked = [];
  const client = newClient(asked, true);
  await client.connect(new StdioClientTransport(serverParams(getDefaultEnvironment(), { script: 'asks.R' })));
  try {
    assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
    await exercise(client, asked);
  } finally {
    await client.close();
  }
});

test('HTTP, 2026-07-28: the answers come back in a new round', async () => {
  const asked = [];
  const client = newClient(asked, true);
  await client.connect(new StreamableHTTPClientTransport(new URL(http.url)));
  try {
    await exercise(client, asked);
  } finally {
    await client.close();
  }
});
