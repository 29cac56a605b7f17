// Benchmark peer over Streamable HTTP (bench/http/): official TypeScript SDK
// 1.x (@modelcontextprotocol/sdk), McpServer + StreamableHTTPServerTransport
// on node:http, as the SDK documents it: one server and transport per
// session (minted by initialize), JSON answers (no event streams).
// Port from BENCH_HTTP_PORT.
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { registerBenchTools } from './tools.mjs';

const all = process.env.BENCH_TOOLS !== '1';
const sessions = new Map();

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

const http = createServer(async (req, res) => {
  if (req.url !== '/mcp') { res.writeHead(404).end(); return; }
  const sid = req.headers['mcp-session-id'];
  let body;
  if (req.method === 'POST') body = JSON.parse(await readBody(req));
  let transport = sid ? sessions.get(sid) : undefined;
  if (!transport) {
    if (sid || body?.method !== 'initialize') {
      res.writeHead(sid ? 404 : 400, { 'content-type': 'application/json' })
        .end('{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad session"}}');
      return;
    }
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: true,
      onsessioninitialized: (id) => sessions.set(id, transport),
    });
    transport.onclose = () => { if (transport.sessionId) sessions.delete(transport.sessionId); };
    const server = new McpServer({ name: 'bench-ts-sdk1-http', version: '0.0.0' });
    registerBenchTools(server, (shape) => shape, all);
    await server.connect(transport);
  }
  await transport.handleRequest(req, res, body);
});
http.keepAliveTimeout = 60_000;
http.listen(Number(process.env.BENCH_HTTP_PORT), '127.0.0.1');
