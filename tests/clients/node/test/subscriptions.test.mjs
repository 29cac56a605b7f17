// Resources that tools change (RULES U3, issue 45) with the TypeScript SDK v2
// (@modelcontextprotocol/client), over stdio and Streamable HTTP: a legacy
// session subscribes (resources/subscribe) and hears on its connection or
// its GET stream; a pinned 2026-07-28 client listens (client.listen()) and
// hears on the listen stream, until it closes the subscription.
import assert from 'node:assert/strict';
import { test, before, after } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import { serverParams, startHttpServer, stopHttpServer, MODERN } from './helpers.mjs';

let http;

before(async () => {
  http = await startHttpServer('notes.R');
});

after(async () => {
  assert.equal(await stopHttpServer(http.server), 0);
});

// What the client hears, and a way to wait for the next one.
function hearing(client) {
  const heard = [];
  let wake = () => {};
  const push = n => { heard.push(n); wake(); };
  client.setNotificationHandler('notifications/resources/updated', n => push(`updated ${n.params.uri}`));
  client.setNotificationHandler('notifications/resources/list_changed', () => push('list_changed'));
  const next = (ms = 10000) => heard.length ? Promise.resolve(heard.shift()) : new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('nothing heard')), ms);
    wake = () => { clearTimeout(t); wake = () => {}; resolve(heard.shift()); };
  });
  return { heard, next };
}

async function legacy(client) {
  const { heard, next } = hearing(client);
  assert.deepEqual(client.getServerCapabilities().resources, { subscribe: true, listChanged: true });
  await client.subscribeResource({ uri: 'notes://all' });
  // Over HTTP the SDK opens the session's GET stream on its own; a change
  // made before it is open is not heard there, so call until one is.
  let got;
  for (let i = 0; i < 50 && !got; i++) {
    await client.callTool({ name: 'add_note', arguments: { text: `note ${i}` } });
    got = await next(500).catch(() => undefined);
  }
  assert.ok(got, 'nothing was heard');
  const all = [got, await next()];
  assert.deepEqual(all.sort(), ['list_changed', 'updated notes://all']);
  const read = await client.readResource({ uri: 'notes://all' });
  await client.unsubscribeResource({ uri: 'notes://all' });
  // The same text again: nothing the session follows changed.
  await client.callTool({ name: 'touch', arguments: { text: read.contents[0].text } });
  await client.callTool({ name: 'add_note', arguments: { text: 'last' } });
  assert.equal(await next(), 'list_changed');
  assert.deepEqual(heard, []);
}

async function modern(client) {
  const { heard, next } = hearing(client);
  const sub = await client.listen({ resourcesListChanged: true, resourceSubscriptions: ['notes://all', 'notes://none'] });
  assert.deepEqual(sub.honoredFilter, { resourcesListChanged: true, resourceSubscriptions: ['notes://all'] });
  await client.callTool({ name: 'add_note', arguments: { text: 'milk' } });
  assert.deepEqual([await next(), await next()].sort(), ['list_changed', 'updated notes://all']);
  const read = await client.readResource({ uri: 'notes://all' });
  assert.match(read.contents[0].text, /milk$/);
  await client.callTool({ name: 'touch', arguments: { text: read.contents[0].text } });
  assert.equal(await next(), 'updated notes://all');
  // Closed: a new note is not heard.
  await sub.close();
  await client.callTool({ name: 'add_note', arguments: { text: 'unheard' } });
  await new Promise(r => setTimeout(r, 300));
  assert.deepEqual(heard, []);
}

for (const [label, isModern] of [['legacy', false], ['2026-07-28', true]]) {
  const options = isModern ? { versionNegotiation: { mode: { pin: MODERN } } } : {};
  const exercise = isModern ? modern : legacy;

  test(`stdio, ${label}: a subscriber hears what a tool changed`, async () => {
    const client = new Client({ name: 'mcplite-node-subscriptions', version: '1.0.0' }, options);
    await client.connect(new StdioClientTransport(serverParams(getDefaultEnvironment(), { script: 'notes.R' })));
    try {
      await exercise(client);
    } finally {
      await client.close();
    }
  });

  test(`HTTP, ${label}: a subscriber hears what a tool changed`, async () => {
    const client = new Client({ name: 'mcplite-node-subscriptions', version: '1.0.0' }, options);
    await client.connect(new StreamableHTTPClientTransport(new URL(http.url)));
    try {
      await exercise(client);
    } finally {
      await client.close();
    }
  });
}
