// Progress and cancellation over Streamable HTTP with the TypeScript client
// 2.4.0 (RULES C6) against tests/clients/servers/progress_http.R served with
// progress_interval 0.5 s: a 6-second tool called with `timeout: 2000,
// resetTimeoutOnProgress: true, onprogress` succeeds because the server's
// heartbeats reset the timeout; the same call without `onprogress` (no
// progress token) times out (the control); and an AbortSignal cancels a
// running call: the tool is interrupted (its on.exit() marker appears, its
// end-of-sleep marker never does) and the next call is answered. The
// TypeScript SDK 1.32.2 client (2025 sessions) gets the same heartbeats and
// cancels the same way.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { test, before, after } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpTransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startHttpServer, stopHttpServer, MODERN } from './helpers.mjs';

let server;
let url;
const markers = mkdtempSync(join(tmpdir(), 'mcplite-http-progress-'));

before(async () => {
  ({ server, url } = await startHttpServer('progress_http.R', {
    MCPLITE_PROGRESS_INTERVAL: '0.5',
    MCPLITE_TEST_MARKERS: markers
  }));
});

after(async () => {
  assert.equal(await stopHttpServer(server), 0);
});

async function connect(modern) {
  const client = new Client(
    { name: 'mcplite-node-http-progress', version: '1.0.0' },
    modern ? { versionNegotiation: { mode: { pin: MODERN } } } : {}
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  if (modern) assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
  return client;
}

const marker = (tag, what) => join(markers, `${tag}.${what}`);

async function waitFor(what, f, ms = 20000) {
  const end = Date.now() + ms;
  while (!f()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

// The tool was interrupted: on.exit() ran, the end of its sleep never came,
// and the server answers the next call.
async function assertCancelled(client, tag) {
  await waitFor(`${tag}: on.exit() of the interrupted tool`, () => existsSync(marker(tag, 'exit')));
  const next = await client.callTool({ name: 'slow', arguments: { seconds: 0, tag: `${tag}-next` } });
  assert.equal(next.content[0].text, 'slept 0');
  assert.equal(existsSync(marker(tag, 'done')), false, 'the cancelled tool ran to its end');
}

for (const modern of [true, false]) {
  const era = modern ? 'modern' : 'legacy';

  test(`${era}: a 6 s tool with timeout 2000 and resetTimeoutOnProgress succeeds on heartbeats`, async () => {
    const client = await connect(modern);
    try {
      const seen = [];
      const tag = `ok-${era}`;
      const res = await client.callTool(
        { name: 'slow', arguments: { seconds: 6, tag } },
        { timeout: 2000, resetTimeoutOnProgress: true, onprogress: p => seen.push(p) }
      );
      assert.equal(res.content[0].text, 'slept 6');
      assert.ok(seen.length >= 5, `heartbeats: ${JSON.stringify(seen)}`);
      for (let i = 1; i < seen.length; i++) assert.ok(seen[i].progress > seen[i - 1].progress);
      assert.match(seen[0].message, /^still running after \d+ s$/);
      assert.ok(existsSync(marker(tag, 'done')));
    } finally {
      await client.close();
    }
  });

  test(`${era}: without onprogress the same call times out (control), and is cancelled`, async () => {
    const client = await connect(modern);
    try {
      const tag = `timeout-${era}`;
      await assert.rejects(
        client.callTool({ name: 'slow', arguments: { seconds: 6, tag } }, { timeout: 2000, resetTimeoutOnProgress: true }),
        /timed out/i
      );
      await assertCancelled(client, tag);
    } finally {
      await client.close();
    }
  });

  test(`${era}: an AbortSignal cancels the running call`, async () => {
    const client = await connect(modern);
    try {
      const tag = `abort-${era}`;
      const ac = new AbortController();
      const call = client.callTool(
        { name: 'slow', arguments: { seconds: 6, tag } },
        { signal: ac.signal, onprogress: () => ac.abort('user stop') }
      );
      await assert.rejects(call);
      await assertCancelled(client, tag);
    } finally {
      await client.close();
    }
  });
}

async function connectV1() {
  const client = new ClientV1({ name: 'mcplite-node-http-progress-v1', version: '1.0.0' });
  await client.connect(new HttpTransportV1(new URL(url)));
  return client;
}

test('SDK 1.32.2: a 6 s tool with timeout 2000 and resetTimeoutOnProgress succeeds on heartbeats', async () => {
  const client = await connectV1();
  try {
    const seen = [];
    const tag = 'ok-v1';
    const res = await client.callTool(
      { name: 'slow', arguments: { seconds: 6, tag } },
      undefined,
      { timeout: 2000, resetTimeoutOnProgress: true, onprogress: p => seen.push(p) }
    );
    assert.equal(res.content[0].text, 'slept 6');
    assert.ok(seen.length >= 5, `heartbeats: ${JSON.stringify(seen)}`);
    for (let i = 1; i < seen.length; i++) assert.ok(seen[i].progress > seen[i - 1].progress);
    assert.ok(existsSync(marker(tag, 'done')));
  } finally {
    await client.close();
  }
});

test('SDK 1.32.2: without onprogress the call times out (control); an AbortSignal cancels', async () => {
  const client = await connectV1();
  try {
    await assert.rejects(
      client.callTool({ name: 'slow', arguments: { seconds: 6, tag: 'timeout-v1' } }, undefined, { timeout: 2000 }),
      /timed out/i
    );
    await assertCancelled(client, 'timeout-v1');
    const ac = new AbortController();
    const call = client.callTool(
      { name: 'slow', arguments: { seconds: 6, tag: 'abort-v1' } },
      undefined,
      { signal: ac.signal, onprogress: () => ac.abort('user stop') }
    );
    await assert.rejects(call);
    await assertCancelled(client, 'abort-v1');
  } finally {
    await client.close();
  }
});
