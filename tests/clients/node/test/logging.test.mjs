// Log messages from running tools (RULES section 15, issue 45) with the
// TypeScript SDK v2 (@modelcontextprotocol/client) over stdio: a legacy
// session sets its level with setLoggingLevel(), a 2026-07-28 call asks in
// its own _meta; the tool's mcp_log() and message() arrive in order, before
// the result, at that level and above only.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import { serverParams, MODERN } from './helpers.mjs';

const WANT = ['Tool execution started', 'Tool processing data', 'Tool execution completed'];
const LOG_LEVEL = 'io.modelcontextprotocol/logLevel';

async function withClient(versionNegotiation, f) {
  const client = new Client({ name: 'mcplite-node-logging', version: '1.0.0' }, versionNegotiation ? { versionNegotiation } : {});
  const seen = [];
  client.setNotificationHandler('notifications/message', n => { seen.push(n.params); });
  await client.connect(new StdioClientTransport(serverParams(getDefaultEnvironment(), { script: 'conformance.R' })));
  try {
    await f(client, seen);
  } finally {
    await client.close();
  }
}

async function callLogging(client, meta) {
  const res = await client.callTool({ name: 'test_tool_with_logging', arguments: {}, ...(meta ? { _meta: meta } : {}) });
  assert.equal(res.content[0].text, 'Logging tool executed.');
}

test('legacy: nothing before setLoggingLevel, then the messages in order', async () => {
  await withClient(null, async (client, seen) => {
    assert.deepEqual(client.getServerCapabilities().logging, {});
    await callLogging(client);
    assert.equal(seen.length, 0);
    await client.setLoggingLevel('info');
    await callLogging(client);
    assert.deepEqual(seen.map(p => p.data), WANT);
    assert.ok(seen.every(p => p.level === 'info' && p.logger === 'test_tool_with_logging'));
    seen.length = 0;
    await client.setLoggingLevel('error');
    await callLogging(client);
    assert.equal(seen.length, 0);
  });
});

test('2026-07-28: each call asks for its own messages', async () => {
  await withClient({ mode: { pin: MODERN } }, async (client, seen) => {
    await callLogging(client, { [LOG_LEVEL]: 'debug' });
    assert.deepEqual(seen.map(p => p.data), WANT);
    seen.length = 0;
    await callLogging(client);
    await callLogging(client, { [LOG_LEVEL]: 'warning' });
    assert.equal(seen.length, 0);
  });
});
