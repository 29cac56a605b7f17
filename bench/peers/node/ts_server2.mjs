// Benchmark peer: official TypeScript SDK 2.x (@modelcontextprotocol/server), McpServer via serveStdio
// (which serves both the legacy handshake era and the 2026-07-28 per-request era).
import * as z from 'zod';
import { McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { registerBenchTools } from './tools.mjs';

const all = process.env.BENCH_TOOLS !== '1';
serveStdio(() => {
  const server = new McpServer({ name: 'bench-ts-server2', version: '0.0.0' }, { capabilities: { tools: {} } });
  registerBenchTools(server, (shape) => z.object(shape), all);
  return server;
});
