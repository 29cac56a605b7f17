// Calls that take time (RULES section 11, issue 17) with the TypeScript
// clients: heartbeats keep a call alive past the client's request timeout
// (resetTimeoutOnProgress), the same call without progress times out (the
// control), and an AbortSignal cancels a running R tool.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import {
  StdioClientTransport as StdioClientTransportV1,
  getDefaultEnvironment as getDefaultEnvironmentV1
} from '@modelcontextprotocol/sdk/client/stdio.js';
import { serverParams } from './helpers.mjs';

// Heartbeats every 0.5 s: well under the 2 s request timeout used below.
function slowParams(defaultEnv) {
  const params = serverParams(defaultEnv, { script: 'slow.R' });
  params.env.MCPLITE_PROGRESS_INTERVAL = '0.5';
  return params;
}

// Every message the server sends, seen before the client handles it.
function tap(transport) {
  const seen = [];
  const handler = transport.onmessage;
  transport.onmessage = (message, extra) => {
    seen.push(message);
    handler?.(message, extra);
  };
  return seen;
}

async function connectV2(versionNegotiation) {
  const client = new Client({ name: 'mcplite-progress-v2', version: '1.0.0' }, versionNegotiation ? { versionNegotiation } : {});
  const transport = new StdioClientTransport(slowParams(getDefaultEnvironment()));
  await client.connect(transport);
  return { client, seen: tap(transport) };
}

async function connectV1() {
  const client = new ClientV1({ name: 'mcplite-progress-v1', version: '1.0.0' });
  const transport = new StdioClientTransportV1(slowParams(getDefaultEnvironmentV1()));
  await client.connect(transport);
  return { client, seen: tap(transport) };
}

const text = res => res.content.filter(b => b.type === 'text').map(b => b.text);
const sleep = ms => new Promise(r => setTimeout(r, ms));

function assertIncreasing(values) {
  assert.ok(values.length >= 3, `expected several progress notifications, got ${values.length}`);
  for (let i = 1; i < values.length; i++) assert.ok(values[i] > values[i - 1], `not increasing: ${values}`);
}

for (const [label, mode] of [['legacy', undefined], ['2026-07-28', { mode: { pin: '2026-07-28' } }]]) {
  test(`C1.2 v2 client (${label}): a 6 s tool outlives a 2 s timeout thanks to heartbeats; without onprogress it times out`, async () => {
    const { client, seen } = await connectV2(mode);
    try {
      const progress = [];
      const res = await client.callTool(
        { name: 'wait', arguments: { seconds: 6 } },
        { timeout: 2000, resetTimeoutOnProgress: true, onprogress: p => progress.push(p) }
      );
      assert.deepEqual(text(res), ['waited']);
      assertIncreasing(progress.map(p => p.progress));
      for (const p of progress) assert.match(p.message, /^still running after \d+ s$/);

      // the control: no onprogress means no token, no heartbeat, and the client gives up
      const started = Date.now();
      await assert.rejects(
        client.callTool({ name: 'wait', arguments: { seconds: 6 } }, { timeout: 2000, resetTimeoutOnProgress: true }),
        err => /timed out/i.test(String(err))
      );
      assert.ok(Date.now() - started < 5000);
      // the client cancelled the timed-out call: the server stops it and answers the next one
      assert.deepEqual(text(await client.callTool({ name: 'echo', arguments: { text: 'after' } })), ['after']);
      const ids = seen.filter(m => m.id !== undefined).map(m => m.id);
      assert.equal(new Set(ids).size, ids.length, 'one response per request at most');
    } finally {
      await client.close();
    }
  });
}

test('C1.2 v1 SDK 1.32.2: resetTimeoutOnProgress keeps a 6 s call alive; without onprogress it times out', async () => {
  const { client } = await connectV1();
  try {
    const progress = [];
    const res = await client.callTool({ name: 'wait', arguments: { seconds: 6 } }, undefined, {
      timeout: 2000,
      resetTimeoutOnProgress: true,
      onprogress: p => progress.push(p)
    });
    assert.deepEqual(text(res), ['waited']);
    assertIncreasing(progress.map(p => p.progress));
    await assert.rejects(
      client.callTool({ name: 'wait', arguments: { seconds: 6 } }, undefined, { timeout: 2000, resetTimeoutOnProgress: true }),
      err => /timed out/i.test(String(err))
    );
    assert.deepEqual(text(await client.callTool({ name: 'echo', arguments: { text: 'v1' } })), ['v1']);
  } finally {
    await client.close();
  }
});

test('C2 v2 client: the tool\'s own mcp_progress() values arrive in order with total and message', async () => {
  const { client } = await connectV2();
  try {
    const progress = [];
    const res = await client.callTool(
      { name: 'count', arguments: { n: 4, pause: 0.6 } },
      { timeout: 30000, onprogress: p => progress.push(p) }
    );
    assert.deepEqual(text(res), ['4']);
    const own = progress.filter(p => p.total === 4 && /^step \d of 4$/.test(p.message));
    assert.deepEqual(own.map(p => p.progress), [1, 2, 3, 4]);
    assertIncreasing(progress.map(p => p.progress));
  } finally {
    await client.close();
  }
});

for (const [label, mode] of [['legacy', undefined], ['2026-07-28', { mode: { pin: '2026-07-28' } }]]) {
  test(`C4.1 v2 client (${label}): an AbortSignal cancels the running R tool; no response, the next call is answered`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcplite-cancel-'));
    const { client, seen } = await connectV2(mode);
    try {
      const ac = new AbortController();
      let started;
      const startedP = new Promise(r => (started = r));
      const call = client.callTool(
        { name: 'guarded', arguments: { dir, seconds: 3 } },
        { signal: ac.signal, onprogress: p => p.message === 'started' && started() }
      );
      await startedP;
      const cancelledAt = Date.now();
      ac.abort('user pressed stop');
      await assert.rejects(call);
      assert.deepEqual(text(await client.callTool({ name: 'echo', arguments: { text: 'next' } })), ['next']);
      // wait past the moment the tool would have finished its sleep
      await sleep(Math.max(0, 3500 - (Date.now() - cancelledAt)));
      assert.deepEqual(text(await client.callTool({ name: 'echo', arguments: { text: 'later' } })), ['later']);
      assert.deepEqual(readdirSync(dir).sort(), ['interrupted', 'on_exit', 'started']);
      assert.ok(!existsSync(join(dir, 'side_effect')));
      const responses = seen.filter(m => m.id !== undefined && m.method === undefined);
      const guardedId = seen.find(m => m.method === 'notifications/progress').params.progressToken;
      assert.equal(responses.filter(m => m.id === guardedId).length, 0, 'no response for the cancelled call');
    } finally {
      await client.close();
    }
  });
}
