// Tools that run as tasks (RULES section 19), driven by the official Tasks
// client (@modelcontextprotocol/ext-tasks) over the TypeScript SDK v2: over
// stdio and Streamable HTTP in the 2025-11-25 era (task-augmented tools/call,
// tasks/get, tasks/result, tasks/list, tasks/cancel) and over HTTP in the
// 2026-07-28 era (the io.modelcontextprotocol/tasks extension: resultType
// "task", tasks/get with the result inlined, tasks/cancel, tasks/update). A
// task made on one connection is fetched from another.
import assert from 'node:assert/strict';
import { test, before, after } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import {
  createTaskSessionFromClient,
  resultFromTaskOutcome,
  JsonRpcResponseError,
  TaskFailedError
} from '@modelcontextprotocol/ext-tasks/client';
import { serverParams, startHttpServer, stopHttpServer, MODERN } from './helpers.mjs';

const INFO = { name: 'mcplite-node-tasks', version: '1.0.0' };
const TASKS = 'io.modelcontextprotocol/tasks';
const RELATED = 'io.modelcontextprotocol/related-task';
const anyJson = { '~standard': { version: 1, vendor: 'test', validate: value => ({ value }) } };
const texts = res => res.content.filter(b => b.type === 'text').map(b => b.text);

let http;

before(async () => {
  http = await startHttpServer('tasks.R', { MCPLITE_TEST_WORKERS: '2' });
});

after(async () => {
  assert.equal(await stopHttpServer(http.server), 0);
});

// ---- a raw request path for 2026-07-28 task traffic ------------------------

// Parse a POST answer: one JSON-RPC message, or an SSE stream ending in it.
async function readAnswer(res, id) {
  const type = res.headers.get('content-type') ?? '';
  if (type.startsWith('application/json')) return res.json();
  if (type.startsWith('text/event-stream')) {
    const body = await res.text();
    for (const event of body.split(/\r?\n\r?\n/)) {
      const data = event.split(/\r?\n/).filter(l => l.startsWith('data:')).map(l => l.slice(5).trimStart()).join('\n');
      if (!data) continue;
      const msg = JSON.parse(data);
      if (msg.id === id) return msg;
    }
  }
  throw new Error(`no JSON-RPC answer (HTTP ${res.status}, ${type})`);
}

// ext-tasks sends 2026-07-28 tools/call and tasks/* through the host's own
// request path (the SDK's codecs do not know the task result shapes): POST
// each one with the headers a modern request carries.
function rawDispatch(url) {
  let n = 0;
  return async (request, options = {}) => {
    const id = `ext-tasks-${++n}`;
    const headers = new Headers({
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN,
      'mcp-method': request.method
    });
    if (request.method === 'tools/call') headers.set('mcp-name', request.params.name);
    for (const [k, v] of Object.entries(options.context?.headers ?? {})) headers.set(k, v);
    const res = await fetch(url, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', id, ...request }),
      signal: options.signal
    });
    const msg = await readAnswer(res, id);
    return msg.error ? { kind: 'error', error: msg.error } : { kind: 'result', result: msg.result };
  };
}

// A raw 2026-07-28 request, with or without the tasks extension declared.
async function modernRequest(url, method, params, { extension = true, name } = {}) {
  const caps = extension ? { extensions: { [TASKS]: {} } } : {};
  const headers = name ? { 'mcp-name': name } : {};
  return rawDispatch(url)({
    method,
    params: {
      ...params,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': MODERN,
        'io.modelcontextprotocol/clientInfo': INFO,
        'io.modelcontextprotocol/clientCapabilities': caps
      }
    }
  }, { context: { headers } });
}

// ---- sessions --------------------------------------------------------------

async function connect(kind, modern) {
  const client = new Client(INFO, modern ? { versionNegotiation: { mode: { pin: MODERN } } } : {});
  const transport = kind === 'stdio'
    ? new StdioClientTransport(serverParams(getDefaultEnvironment(), { script: 'tasks.R' }))
    : new StreamableHTTPClientTransport(new URL(http.url));
  await client.connect(transport);
  return client;
}

function taskSession(client, kind, modern) {
  const endpointId = kind === 'stdio' ? 'mcplite-tasks-stdio' : http.url;
  if (!modern) return createTaskSessionFromClient(client, { endpointId });
  return createTaskSessionFromClient(client, {
    endpointId,
    rawDispatch: rawDispatch(http.url),
    v2RequestFraming: { protocolVersion: MODERN, clientInfo: INFO, clientCapabilities: {} }
  });
}

// Settles an execution, keeping the task views it went through.
async function settle(execution) {
  const seen = [];
  const { outcome, lastTask } = await execution.settle({
    onEvent: e => { if (e.type === 'task') seen.push(e.task); }
  });
  return { outcome, lastTask, seen };
}

// Polls until `pred` holds for what `get` gives (or ~10 s pass).
async function until(get, pred) {
  let value = await get();
  for (let i = 0; i < 200 && !pred(value); i++) {
    await new Promise(r => setTimeout(r, 50));
    value = await get();
  }
  return value;
}

// A running task is cancelled; its worker is free at once (the stdio server
// has one worker, which the 20 s task would otherwise hold).
async function cancelChecks(session, options) {
  const long = await session.callTool('fit', { steps: 200, ms: 100 }, options);
  assert.equal(long.kind, 'task');
  const controller = session.task(long.handle.taskId);
  const running = await until(() => controller.snapshot(), v => v.statusMessage !== undefined);
  assert.equal(running.status, 'working');
  assert.match(running.statusMessage, /^step \d+ of 200$/);
  await long.cancel();
  assert.equal((await long.settle()).outcome.status, 'cancelled');
  const view = await until(() => controller.snapshot(), v => v.status === 'cancelled');
  assert.equal(view.status, 'cancelled');
  const started = Date.now();
  const next = await session.callTool('must', { x: 5 });
  assert.deepEqual(texts(resultFromTaskOutcome((await next.settle()).outcome)), ['10']);
  assert.ok(Date.now() - started < 10000, 'the cancelled task still held the worker');
}

// ---- the checks ------------------------------------------------------------

async function legacyChecks(client, kind) {
  assert.equal(client.getNegotiatedProtocolVersion(), '2025-11-25');
  const caps = client.getServerCapabilities().tasks;
  const requests = { tools: { call: {} } };
  // tasks/list only where a requestor is known: stdio, or HTTP with tokens.
  assert.deepEqual(caps, kind === 'stdio' ? { list: {}, cancel: {}, requests } : { cancel: {}, requests });

  const { tools } = await client.listTools();
  const support = Object.fromEntries(tools.map(t => [t.name, t.execution?.taskSupport]));
  assert.deepEqual(support, { fit: 'optional', must: 'required', plain: undefined, boom: 'optional', greet: 'optional' });

  // A task-only tool called without `task`: method not found.
  await assert.rejects(client.callTool({ name: 'must', arguments: { x: 1 } }), e => e.code === -32601);

  const session = taskSession(client, kind, false);
  try {
    assert.equal(session.capabilities.execution, true);
    assert.equal(session.capabilities.cancellation, true);
    assert.equal(session.capabilities.inventory, kind === 'stdio' ? 'server-list' : 'known-handles');

    // An optional tool runs as a task when the caller prefers one.
    const fit = await session.callTool('fit', { steps: 3, ms: 50 }, { task: { preference: 'prefer', retentionMs: 60000 } });
    assert.equal(fit.kind, 'task');
    const { outcome, lastTask, seen } = await settle(fit);
    assert.equal(outcome.status, 'completed');
    const result = resultFromTaskOutcome(outcome);
    assert.deepEqual(texts(result), ['fitted in 3 steps']);
    assert.equal(result.isError, false);
    assert.deepEqual(result._meta[RELATED], { taskId: fit.handle.taskId });
    assert.equal(lastTask.taskId, fit.handle.taskId);
    assert.equal(lastTask.status, 'completed');
    assert.equal(lastTask.statusMessage, 'step 3 of 3');
    assert.equal(lastTask.retentionMs, 60000);
    assert.deepEqual(lastTask.extensions, {});
    assert.equal(seen[0].status, 'working');
    assert.equal(seen[0].suggestedPollIntervalMs, 50);
    assert.ok(seen.every(t => t.taskId === fit.handle.taskId));

    // A required tool is always a task.
    const must = await session.callTool('must', { x: 21 });
    assert.equal(must.kind, 'task');
    assert.deepEqual(texts(resultFromTaskOutcome((await must.settle()).outcome)), ['42']);

    // A tool error fails the task; tasks/result still returns the tool result.
    const boom = await session.callTool('boom', {}, { task: { preference: 'prefer' } });
    assert.equal(boom.kind, 'task');
    const failed = await settle(boom);
    assert.equal(failed.outcome.status, 'failed');
    assert.ok(failed.outcome.error instanceof TaskFailedError);
    assert.match(failed.outcome.error.message, /the model did not converge/);
    assert.throws(() => resultFromTaskOutcome(failed.outcome), TaskFailedError);
    const boomResult = await client.request({ method: 'tasks/result', params: { taskId: boom.handle.taskId } }, anyJson);
    assert.equal(boomResult.isError, true);
    assert.deepEqual(texts(boomResult), ['the model did not converge']);
    assert.deepEqual(boomResult._meta[RELATED], { taskId: boom.handle.taskId });

    // A forbidden tool answers at once.
    const plain = await session.callTool('plain', { x: 1 });
    assert.equal(plain.kind, 'immediate');
    const plainOutcome = (await plain.settle()).outcome;
    assert.deepEqual(texts(resultFromTaskOutcome(plainOutcome)), ['2']);

    // The list holds the tasks this requestor made.
    if (kind === 'stdio') {
      const page = await session.listTasks();
      const byId = Object.fromEntries(page.tasks.map(t => [t.taskId, t.status]));
      assert.equal(byId[fit.handle.taskId], 'completed');
      assert.equal(byId[must.handle.taskId], 'completed');
      assert.equal(byId[boom.handle.taskId], 'failed');
    }

    // Cancelling a running task; a finished one cannot be cancelled.
    await cancelChecks(session, { task: { preference: 'prefer' } });
    await assert.rejects(session.task(fit.handle.taskId).cancel(),
      e => e instanceof JsonRpcResponseError && e.code === -32602);

    return fit.serializeReference();
  } finally {
    await session.close();
  }
}

async function modernChecks(client) {
  assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
  assert.deepEqual(client.getServerCapabilities().extensions[TASKS], {});
  // No taskSupport in this era's tool declarations: the server decides.
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map(t => [t.name, t.execution]),
    [['fit', undefined], ['must', undefined], ['plain', undefined], ['boom', undefined], ['greet', undefined]]);

  const session = taskSession(client, 'http', true);
  try {
    assert.equal(session.capabilities.execution, true);
    assert.equal(session.capabilities.cancellation, true);

    // The server decides: fit, must and boom run as tasks.
    const fit = await session.callTool('fit', { steps: 3, ms: 50 });
    assert.equal(fit.kind, 'task');
    const { outcome, lastTask, seen } = await settle(fit);
    assert.equal(outcome.status, 'completed');
    assert.deepEqual(texts(resultFromTaskOutcome(outcome)), ['fitted in 3 steps']);
    assert.equal(lastTask.taskId, fit.handle.taskId);
    assert.equal(lastTask.status, 'completed');
    assert.equal(lastTask.statusMessage, 'step 3 of 3');
    assert.deepEqual(lastTask.extensions, {});
    assert.equal(seen[0].status, 'working');
    assert.equal(seen[0].suggestedPollIntervalMs, 50);
    assert.ok(seen.every(t => t.taskId === fit.handle.taskId));

    const must = await session.callTool('must', { x: 21 });
    assert.equal(must.kind, 'task');
    assert.deepEqual(texts(resultFromTaskOutcome((await must.settle()).outcome)), ['42']);

    // In this era a tool error completes the task, with isError in its result.
    const boom = await session.callTool('boom', {});
    assert.equal(boom.kind, 'task');
    const done = (await boom.settle()).outcome;
    assert.equal(done.status, 'completed');
    assert.equal(done.result.isError, true);
    assert.deepEqual(texts(done.result), ['the model did not converge']);

    const plain = await session.callTool('plain', { x: 1 });
    assert.equal(plain.kind, 'immediate');
    assert.deepEqual(texts(resultFromTaskOutcome((await plain.settle()).outcome)), ['2']);

    // Cancelling a running task; in this era cancelling a finished one is
    // acknowledged too, and so is tasks/update (nothing is outstanding).
    await cancelChecks(session, {});
    await session.task(fit.handle.taskId).cancel();
    await session.task(fit.handle.taskId).update({});
    assert.equal((await session.task(fit.handle.taskId).snapshot()).status, 'completed');

    return fit.serializeReference();
  } finally {
    await session.close();
  }
}

// A task made on one connection, fetched from a new one.
async function fetchElsewhere(reference, modern) {
  const client = await connect('http', modern);
  const session = taskSession(client, 'http', modern);
  try {
    const view = await session.task(reference.taskId).snapshot();
    assert.equal(view.status, 'completed');
    assert.equal(view.taskId, reference.taskId);
    // 2026-07-28: tasks/get carries the result; 2025-11-25: tasks/result does.
    if (modern) assert.deepEqual(texts(view.raw.result), ['fitted in 3 steps']);
    else assert.equal(view.raw.result, undefined);
    const resumed = await session.resumeTask(reference);
    assert.equal(resumed.kind, 'task');
    const { outcome } = await resumed.settle();
    assert.deepEqual(texts(resultFromTaskOutcome(outcome)), ['fitted in 3 steps']);
  } finally {
    await session.close();
    await client.close();
  }
}

// ---- the tests -------------------------------------------------------------

test('stdio, 2025-11-25: tasks through the ext-tasks client', async () => {
  const client = await connect('stdio', false);
  try {
    await legacyChecks(client, 'stdio');
  } finally {
    await client.close();
  }
});

test('HTTP, 2025-11-25: tasks through the ext-tasks client, fetched from a new session', async () => {
  const client = await connect('http', false);
  let reference;
  try {
    reference = await legacyChecks(client, 'http');
  } finally {
    await client.close();
  }
  await fetchElsewhere(reference, false);
});

test('HTTP, 2026-07-28: tasks through the ext-tasks client, fetched from a new client', async () => {
  const client = await connect('http', true);
  let reference;
  try {
    reference = await modernChecks(client);
  } finally {
    await client.close();
  }
  await fetchElsewhere(reference, true);
});

test('HTTP, 2026-07-28: a task-only tool needs the tasks extension declared', async () => {
  const without = await modernRequest(http.url, 'tools/call', { name: 'must', arguments: { x: 1 } }, { extension: false, name: 'must' });
  assert.equal(without.kind, 'error');
  assert.equal(without.error.code, -32021);
  assert.deepEqual(without.error.data.requiredCapabilities, { extensions: { [TASKS]: {} } });

  // The SDK client declares no extension: the same error reaches it.
  const client = await connect('http', true);
  try {
    await assert.rejects(client.callTool({ name: 'must', arguments: { x: 1 } }), e => e.code === -32021);
  } finally {
    await client.close();
  }

  // Declared, the same call makes a task.
  const withIt = await modernRequest(http.url, 'tools/call', { name: 'must', arguments: { x: 1 } }, { name: 'must' });
  assert.equal(withIt.kind, 'result');
  assert.equal(withIt.result.resultType, 'task');
  assert.equal(withIt.result.status, 'working');
  assert.equal(typeof withIt.result.taskId, 'string');
  assert.equal(withIt.result.pollIntervalMs, 50);

  // The task methods need it too.
  const taskId = withIt.result.taskId;
  for (const [method, params] of [['tasks/get', { taskId }], ['tasks/cancel', { taskId }],
    ['tasks/update', { taskId, inputResponses: {} }]]) {
    const r = await modernRequest(http.url, method, params, { extension: false, name: taskId });
    assert.equal(r.kind, 'error', method);
    assert.equal(r.error.code, -32021, method);
  }
  const got = await until(() => modernRequest(http.url, 'tasks/get', { taskId }, { name: taskId }),
    r => r.result?.status !== 'working');
  assert.equal(got.result.resultType, 'complete');
  assert.equal(got.result.status, 'completed');
  assert.deepEqual(texts(got.result.result), ['2']);
});

test('HTTP, 2026-07-28: with task_options(after), a quick call is immediate and a long one a task (V2.5)', async () => {
  const later = await startHttpServer('tasks.R', { MCPLITE_TEST_WORKERS: '1', MCPLITE_TASK_AFTER: '0.5' });
  const client = new Client(INFO, { versionNegotiation: { mode: { pin: MODERN } } });
  let session;
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(later.url)));
    session = createTaskSessionFromClient(client, {
      endpointId: later.url,
      rawDispatch: rawDispatch(later.url),
      v2RequestFraming: { protocolVersion: MODERN, clientInfo: INFO, clientCapabilities: {} }
    });
    const quick = await session.callTool('fit', { steps: 1, ms: 10 });
    assert.equal(quick.kind, 'immediate');
    assert.deepEqual(texts(resultFromTaskOutcome((await quick.settle()).outcome)), ['fitted in 1 steps']);
    // 1.5 s of work: answered with a handle after 0.5 s, and followed.
    const long = await session.callTool('fit', { steps: 10, ms: 150 });
    assert.equal(long.kind, 'task');
    const { outcome, lastTask } = await settle(long);
    assert.equal(outcome.status, 'completed');
    assert.deepEqual(texts(resultFromTaskOutcome(outcome)), ['fitted in 10 steps']);
    assert.equal(lastTask.statusMessage, 'step 10 of 10');
  } finally {
    if (session) await session.close();
    await client.close();
    assert.equal(await stopHttpServer(later.server), 0);
  }
});
