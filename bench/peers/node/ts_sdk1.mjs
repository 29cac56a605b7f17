// Benchmark peer: official TypeScript SDK 1.x (@modelcontextprotocol/sdk), McpServer over stdio.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { registerBenchTools } from './tools.mjs';

const server = new McpServer({ name: 'bench-ts-sdk1', version: '0.0.0' });
registerBenchTools(server, (shape) => shape, process.env.BENCH_TOOLS !== '1');
await server.connect(new StdioServerTransport());
