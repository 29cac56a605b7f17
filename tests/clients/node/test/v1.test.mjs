// TypeScript SDK v1 (@modelcontextprotocol/sdk 1.32.2) over stdio: legacy only.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { exercise, serverParams, newSpawnLog, spawnedPids, waitGone, INSTRUCTIONS } from './helpers.mjs';

test('v1 client: initialize handshake, list and call tools', async () => {
  const log = newSpawnLog();
  const client = new Client({ name: 'mcplite-node-v1', version: '1.0.0' });
  const transport = new StdioClientTransport(serverParams(getDefaultEnvironment(), { spawnLog: log }));
  await client.connect(transport);
  try {
    assert.equal(client.getServerVersion().name, 'mcplite');
    assert.equal(client.getInstructions(), INSTRUCTIONS);
    assert.deepEqual(client.getServerCapabilities(), { tools: { listChanged: false }, logging: {} });
    await exercise(client, { modern: false });
    await client.ping();
  } finally {
    await client.close();
  }
  const pids = spawnedPids(log);
  assert.equal(pids.length, 1);
  assert.ok(await waitGone(pids), `server process left running: ${pids}`);
});

test('v1 client with the manual add_numbers server', async () => {
  const client = new Client({ name: 'mcplite-node-v1', version: '1.0.0' });
  await client.connect(new StdioClientTransport(serverParams(getDefaultEnvironment(), { script: 'add_numbers.R' })));
  try {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map(t => t.name), ['add_numbers']);
    const res = await client.callTool({ name: 'add_numbers', arguments: { x: 2, y: 3 } });
    assert.deepEqual(res, { content: [{ type: 'text', text: '5' }], isError: false });
  } finally {
    await client.close();
  }
});
