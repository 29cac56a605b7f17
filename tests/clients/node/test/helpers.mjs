// Shared helpers for the TypeScript SDK client tests: how to start the test
// server, the checks every client runs, and process bookkeeping.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const serversDir = resolve(here, '..', '..', 'servers');
export const repoRoot = resolve(here, '..', '..', '..', '..');
export const MODERN = '2026-07-28';
export const SUPPORTED = ['2026-07-28', '2025-11-25', '2025-06-18', '2024-11-05'];
export const INSTRUCTIONS = 'Test server for mcplite client tests.';

export function rscript() {
  return execFileSync('sh', ['-c', 'command -v Rscript'], { encoding: 'utf8' }).trim();
}

// MCP clients do not pass the shell's environment to servers: give the server
// the default safe variables plus where the test build of mcplite lives.
export function serverParams(defaultEnv, { script = 'everything.R', spawnLog } = {}) {
  const env = { ...defaultEnv };
  const lib = process.env.MCPLITE_LIB || process.env.R_LIBS;
  if (lib) env.R_LIBS = lib;
  if (spawnLog) env.MCPLITE_TEST_SPAWN_LOG = spawnLog;
  return {
    command: rscript(),
    args: ['--vanilla', join(serversDir, script)],
    env,
    stderr: 'pipe'
  };
}

export function newSpawnLog() {
  return join(mkdtempSync(join(tmpdir(), 'mcplite-node-')), 'spawned.txt');
}

export function spawnedPids(file) {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8').split('\n').filter(Boolean).map(Number);
}

export function isAlive(pid) {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // a zombie still answers kill(0); look at its state
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) Z/.test(stat);
  } catch {
    return false;
  }
}

export async function waitGone(pids, ms = 10000) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (pids.every(p => !isAlive(p))) return true;
    await new Promise(r => setTimeout(r, 100));
  }
  return pids.every(p => !isAlive(p));
}

const text = res => res.content.filter(b => b.type === 'text').map(b => b.text);

// Lists the tools and calls a text tool, an error tool and structured-output
// tools, checking the results. `modern` selects the 2026-07-28 expectations.
export async function exercise(client, { modern }) {
  const { tools } = await client.listTools();
  const byName = Object.fromEntries(tools.map(t => [t.name, t]));
  assert.deepEqual(tools.slice(0, 4).map(t => t.name), ['echo', 'add', 'fail', 'flagged_error']);
  assert.equal(byName.echo.inputSchema.properties.text.type, 'string');
  assert.deepEqual(byName.echo.inputSchema.required, ['text']);
  assert.equal(byName.echo.annotations.readOnlyHint, true);
  assert.equal(byName.stats.outputSchema.type, 'object');
  if (modern) {
    assert.deepEqual(byName.series.outputSchema, { type: 'array', items: { type: 'integer' } });
  } else {
    assert.equal(byName.series.outputSchema, undefined);
  }

  const echo = await client.callTool({ name: 'echo', arguments: { text: 'héllo ✓ "q"' } });
  assert.equal(echo.isError, false);
  assert.deepEqual(echo.content, [{ type: 'text', text: 'héllo ✓ "q"' }]);

  const add = await client.callTool({ name: 'add', arguments: { x: 0.1, y: 0.2 } });
  assert.deepEqual(text(add), ['0.3']);

  const fail = await client.callTool({ name: 'fail', arguments: { message: 'it broke: {"a":1}' } });
  assert.equal(fail.isError, true);
  assert.deepEqual(text(fail), ['it broke: {"a":1}']);

  const flagged = await client.callTool({ name: 'flagged_error', arguments: {} });
  assert.equal(flagged.isError, true);
  assert.deepEqual(text(flagged), ['The file does not exist.']);

  const stats = await client.callTool({ name: 'stats', arguments: { values: [1, 2, 4] } });
  assert.equal(stats.isError, false);
  assert.deepEqual(stats.structuredContent, { mean: 2.3333, sd: 1.5275, n: 3 });
  assert.deepEqual(JSON.parse(text(stats)[0]), stats.structuredContent);

  const point = await client.callTool({ name: 'describe_point', arguments: { x: 3, y: 4 } });
  assert.deepEqual(point.structuredContent, { x: 3, y: 4, label: '(3, 4)' });

  const series = await client.callTool({ name: 'series', arguments: { n: 2 } });
  assert.deepEqual(text(series), ['[1,2]']);
  if (modern) assert.deepEqual(series.structuredContent, [1, 2]);
  else assert.equal(series.structuredContent, undefined);

  const all = await client.callTool({ name: 'all_content', arguments: {} });
  assert.deepEqual(all.content.map(b => b.type), ['text', 'image', 'audio', 'resource_link', 'resource', 'resource']);
  assert.equal(all.content[3].size, 42);
  assert.equal(all.content[5].resource.blob, 'AAEC');
  assert.equal(all._meta.request_kind, 'demo');

  const noisy = await client.callTool({ name: 'noisy', arguments: {} });
  assert.deepEqual(text(noisy), ['quiet']);

  await assert.rejects(client.callTool({ name: 'no_such_tool', arguments: {} }), /unknown tool/);

  if (modern) {
    for (const res of [echo, fail, stats]) {
      assert.equal(res._meta['io.modelcontextprotocol/serverInfo'].name, 'mcplite');
    }
  } else {
    assert.equal(echo._meta, undefined);
  }
  return { tools, stats };
}

// Start `script` over HTTP on a free port (MCPLITE_TRANSPORT=http, plus
// `extraEnv`); resolves to the process and the endpoint URL read from its
// start-up line on stderr.
export async function startHttpServer(script, extraEnv = {}) {
  const env = { ...process.env, MCPLITE_TRANSPORT: 'http', MCPLITE_PORT: '0', ...extraEnv };
  const lib = process.env.MCPLITE_LIB || process.env.R_LIBS;
  if (lib) env.R_LIBS = lib;
  const server = spawn(rscript(), ['--vanilla', join(serversDir, script)], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${err}`)), 60000);
    server.stderr.on('data', d => {
      err += d;
      const m = err.match(/(http:\/\/\S+\/mcp)/);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    server.on('exit', code => reject(new Error(`server exited (${code}): ${err}`)));
  });
  return { server, url };
}

// SIGTERM, then the exit status.
export async function stopHttpServer(server) {
  const exited = new Promise(resolve => server.on('exit', code => resolve(code)));
  server.kill('SIGTERM');
  return exited;
}
