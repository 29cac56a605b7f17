// Peer server for mcplite's client tests: TypeScript SDK 1.x
// (@modelcontextprotocol/sdk), McpServer, legacy protocol only.
//   node sdk1_server.mjs            stdio
//   node sdk1_server.mjs http PORT  Streamable HTTP (with sessions) on 127.0.0.1:PORT/mcp
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { registerPeerTools } from './tools.mjs';

function makeServer() {
  const server = new McpServer({ name: 'ts-sdk1-peer', version: '1.0.0' });
  registerPeerTools(server, (s) => s, (extra) => ({
    token: extra._meta?.progressToken,
    notify: (n) => extra.sendNotification(n),
    signal: extra.signal,
  }));
  return server;
}

if (process.argv[2] === 'http') {
  const sessions = {};
  http.createServer(async (req, res) => {
    if (!req.url.startsWith('/mcp')) { res.writeHead(404).end('not found'); return; }
    let body = '';
    for await (const chunk of req) body += chunk;
    const parsed = body ? JSON.parse(body) : undefined;
    const sid = req.headers['mcp-session-id'];
    let transport = sid ? sessions[sid] : undefined;
    if (!transport) {
      if (req.method === 'POST' && parsed?.method === 'initialize') {
        transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => { sessions[id] = transport; },
        });
        await makeServer().connect(transport);
      } else {
        res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({
          jsonrpc: '2.0', error: { code: -32000, message: 'Bad Request: No valid session ID provided' }, id: null,
        }));
        return;
      }
    }
    await transport.handleRequest(req, res, parsed);
  }).listen(Number(process.argv[3]), '127.0.0.1');
} else {
  await makeServer().connect(new StdioServerTransport());
}
