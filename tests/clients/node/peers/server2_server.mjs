// Peer server for mcplite's client tests: TypeScript SDK 2.x
// (@modelcontextprotocol/server), McpServer, both protocol eras.
//   node server2_server.mjs            stdio (serveStdio)
//   node server2_server.mjs http PORT  Streamable HTTP (createMcpHandler) on 127.0.0.1:PORT/mcp
import http from 'node:http';
import * as z from 'zod';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { registerPeerTools } from './tools.mjs';

function makeServer() {
  const server = new McpServer({ name: 'ts-server2-peer', version: '2.0.0' }, { capabilities: { tools: {} } });
  registerPeerTools(server, (shape) => z.object(shape), (ctx) => ({
    token: ctx.mcpReq._meta?.progressToken,
    notify: (n) => ctx.mcpReq.notify(n),
    signal: ctx.mcpReq.signal,
  }));
  return server;
}

if (process.argv[2] === 'http') {
  const handler = createMcpHandler(makeServer);
  http.createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = Buffer.concat(chunks);
    const controller = new AbortController();
    res.on('close', () => controller.abort());
    const request = new Request(`http://127.0.0.1${req.url}`, {
      method: req.method,
      headers: req.headers,
      body: ['GET', 'HEAD'].includes(req.method) ? undefined : body,
      signal: controller.signal,
    });
    const response = await handler.fetch(request);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (response.body) {
      try {
        for await (const chunk of response.body) res.write(chunk);
      } catch { /* client went away */ }
    }
    res.end();
  }).listen(Number(process.argv[3]), '127.0.0.1');
} else {
  serveStdio(makeServer);
}
