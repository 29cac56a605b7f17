// SSE polling (RULES H8) with the TypeScript clients against
// tests/clients/servers/progress_http.R served with stream_hold 0.3 s: the
// server closes a 2025-11-25 call's connection every 0.3 s (after a priming
// event and `retry`), and the client reconnects with Last-Event-ID until
// the answer, progress reports made between connections included. The
// TypeScript SDK 1.32.2 client and the 2.4.0 client in its legacy mode (2025-11-25).
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, before, after } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpTransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startHttpServer, stopHttpServer } from './helpers.mjs';

let server;
let url;

before(async () => {
  ({ server, url } = await startHttpServer('progress_http.R', {
    MCPLITE_PROGRESS_INTERVAL: '0.5',
    MCPLITE_STREAM_HOLD: '0.3',
    MCPLITE_TEST_MARKERS: mkdtempSync(join(tmpdir(), 'mcplite-http-polling-'))
  }));
});

after(async () => {
  assert.equal(await stopHttpServer(server), 0);
});

// `v1`: the 1.x client, whose callTool() takes a result schema before its
// options.
async function polled(client, v1) {
  const slow = await client.callTool({ name: 'slow', arguments: { seconds: 1.5, tag: 'polled' } });
  assert.equal(slow.content[0].text, 'slept 1.5');
  const seen = [];
  const options = { onprogress: (p) => seen.push(p) };
  const params = { name: 'folds', arguments: { k: 4 } };
  const folded = v1 ? await client.callTool(params, undefined, options) : await client.callTool(params, options);
  assert.equal(folded.content[0].text, 'folded');
  const reports = seen.filter((p) => p.message?.startsWith('fold')).map((p) => [p.progress, p.total, p.message]);
  assert.deepEqual(reports, [1, 2, 3, 4].map((i) => [i, 4, `fold ${i} of 4`]));
}

test('the 1.32.2 client polls a call whose connections the server closes', async () => {
  const client = new ClientV1({ name: 'mcplite-node-polling', version: '1.0.0' });
  await client.connect(new HttpTransportV1(new URL(url)));
  try {
    await polled(client, true);
  } finally {
    await client.close();
  }
});

test('the 2.4.0 client (2025-11-25) polls a call whose connections the server closes', async () => {
  const client = new Client(
    { name: 'mcplite-node-polling', version: '1.0.0' },
    { versionNegotiation: { mode: 'legacy' } }
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  assert.equal(client.getNegotiatedProtocolVersion(), '2025-11-25');
  try {
    await polled(client, false);
  } finally {
    await client.close();
  }
});
