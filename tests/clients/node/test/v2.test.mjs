// TypeScript SDK v2 (@modelcontextprotocol/client 2.4.0) over stdio: legacy,
// auto negotiation (probes on a short-lived sibling server process) and a
// pinned 2026-07-28 era.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import { exercise, serverParams, newSpawnLog, spawnedPids, waitGone, MODERN, SUPPORTED, INSTRUCTIONS } from './helpers.mjs';

async function connect(versionNegotiation, spawnLog) {
  const client = new Client({ name: 'mcplite-node-v2', version: '1.0.0' }, versionNegotiation ? { versionNegotiation } : {});
  const transport = new StdioClientTransport(serverParams(getDefaultEnvironment(), { spawnLog }));
  let stderr = '';
  transport.stderr.on('data', d => (stderr += d));
  await client.connect(transport);
  return { client, transport, stderrText: () => stderr };
}

test('v2 auto mode negotiates 2026-07-28 and serves tools', async () => {
  const log = newSpawnLog();
  const { client, stderrText } = await connect({ mode: 'auto' }, log);
  try {
    assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
    assert.equal(client.getProtocolEra(), 'modern');
    const disc = client.getDiscoverResult();
    assert.deepEqual(disc.supportedVersions, SUPPORTED);
    assert.equal(client.getInstructions(), INSTRUCTIONS);
    assert.equal(client.getServerVersion().name, 'mcplite');
    assert.equal(client.getServerCapabilities().tools.listChanged, false);
    await exercise(client, { modern: true });
    // stray tool output went to stderr, never into the protocol stream
    assert.match(stderrText(), /stray-cat/);
    assert.match(stderrText(), /stray-system/);
  } finally {
    await client.close();
  }
  const pids = spawnedPids(log);
  assert.ok(pids.length >= 2, `expected a probe process and a session process, saw ${pids.length}`);
  assert.ok(await waitGone(pids), `server processes left running: ${pids}`);
});

test('v2 pinned 2026-07-28 serves tools', async () => {
  const log = newSpawnLog();
  const { client } = await connect({ mode: { pin: MODERN } }, log);
  try {
    assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
    assert.equal(client.getProtocolEra(), 'modern');
    await exercise(client, { modern: true });
    const disc = await client.discover();
    assert.deepEqual(disc.supportedVersions, SUPPORTED);
    assert.equal(disc.ttlMs, 300000);
  } finally {
    await client.close();
  }
  const pids = spawnedPids(log);
  assert.ok(pids.length >= 1);
  assert.ok(await waitGone(pids), `server processes left running: ${pids}`);
});

test('v2 default (legacy) mode uses initialize', async () => {
  const log = newSpawnLog();
  const { client } = await connect(undefined, log);
  try {
    assert.equal(client.getProtocolEra(), 'legacy');
    assert.equal(client.getNegotiatedProtocolVersion(), '2025-11-25');
    assert.equal(client.getInstructions(), INSTRUCTIONS);
    await exercise(client, { modern: false });
    await client.ping();
  } finally {
    await client.close();
  }
  assert.ok(await waitGone(spawnedPids(log)));
});
