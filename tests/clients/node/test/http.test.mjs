// TypeScript SDK clients over Streamable HTTP against an mcplite server
// started with MCPLITE_TRANSPORT=http (the same everything.R as over stdio):
// v2 (@modelcontextprotocol/client 2.4.0) in auto, pinned 2026-07-28 and
// legacy modes, and v1 (@modelcontextprotocol/sdk 1.32.2, legacy sessions).
import assert from 'node:assert/strict';
import { test, before, after } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { exercise, startHttpServer, stopHttpServer, MODERN } from './helpers.mjs';

let server;
let url;

before(async () => {
  ({ server, url } = await startHttpServer('everything.R'));
});

after(async () => {
  assert.equal(await stopHttpServer(server), 0);
});

async function v2(versionNegotiation, modern) {
  const client = new Client({ name: 'mcplite-node-http', version: '1.0.0' }, versionNegotiation ? { versionNegotiation } : {});
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  try {
    if (modern) assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
    assert.equal(client.getServerVersion().name, 'mcplite');
    await exercise(client, { modern });
  } finally {
    await client.close();
  }
}

test('v2 auto mode over HTTP adopts 2026-07-28', () => v2({ mode: 'auto' }, true));
test('v2 pinned 2026-07-28 over HTTP', () => v2({ mode: { pin: MODERN } }, true));
test('v2 legacy over HTTP', () => v2(undefined, false));

test('v1 SDK over HTTP uses a legacy session', async () => {
  const client = new ClientV1({ name: 'mcplite-node-v1-http', version: '1.0.0' });
  const transport = new TransportV1(new URL(url));
  await client.connect(transport);
  try {
    assert.match(transport.sessionId, /^[0-9a-f]{32}$/);
    await exercise(client, { modern: false });
  } finally {
    await transport.terminateSession();
    await client.close();
  }
});
