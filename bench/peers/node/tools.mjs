// Shared tool definitions for the TypeScript SDK peers (same tools as every
// benchmarked server, see bench/README.md). `shape(obj)` adapts a raw zod
// shape to what the SDK's registerTool expects (raw shape for sdk 1.x,
// z.object for server 2.x).
import * as z from 'zod';

const cache = {};
const text = (s) => ({ content: [{ type: 'text', text: s }] });

export function registerBenchTools(server, shape, all) {
  server.registerTool('add', {
    description: 'Add two numbers.',
    inputSchema: shape({ x: z.number().describe('First number.'), y: z.number().describe('Second number.') }),
  }, async ({ x, y }) => text(String(x + y)));
  // The worker benchmark (bench/workers/) adds a busy loop of `ms` milliseconds: it
  // never awaits, so it holds the event loop as a CPU-bound tool does.
  if (process.env.BENCH_SPIN === '1') {
    server.registerTool('spin', {
      description: 'A busy loop of ms milliseconds.',
      inputSchema: shape({ ms: z.number().describe('Milliseconds.') }),
    }, async ({ ms }) => {
      const until = performance.now() + ms;
      let n = 0;
      while (performance.now() < until) n += 1;
      return text('spun');
    });
  }
  if (!all) return;
  server.registerTool('text_length', {
    description: 'Return the number of characters in a text.',
    inputSchema: shape({ text: z.string().describe('Any text.') }),
  }, async ({ text: t }) => text(String(t.length)));
  server.registerTool('big_text', {
    description: 'Return a 10 MB text.',
  }, async () => text(cache.text ??= 'abcdefghij'.repeat(1_000_000)));
  server.registerTool('frame', {
    description: 'Return a 100,000 x 5 data frame as structured content.',
  }, async () => {
    if (!cache.rows) {
      const groups = ['a', 'b', 'c', 'd', 'e'];
      cache.rows = Array.from({ length: 100_000 }, (_, k) => {
        const i = k + 1;
        return { id: i, value: i + 0.5, label: `r${i}`, flag: i % 2 === 0, group: groups[(i - 1) % 5] };
      });
    }
    const structured = { rows: cache.rows };
    return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
  });
  for (let i = 1; i <= 50; i++) {
    const nn = String(i).padStart(2, '0');
    server.registerTool(`tool_${nn}`, {
      description: `Extra tool ${nn} with five typed arguments.`,
      inputSchema: shape({
        a: z.string().describe('A string.'),
        b: z.number().int().describe('An integer.'),
        c: z.number().describe('A number.'),
        d: z.boolean().describe('A flag.'),
        e: z.enum(['red', 'green', 'blue']).describe('A colour.'),
      }),
    }, async () => text('ok'));
  }
  // The HTTP workloads (bench/http/) add a tool that sleeps for `s` seconds.
  if (process.env.BENCH_NAP === '1') {
    server.registerTool('nap', {
      description: 'Sleep for s seconds.',
      inputSchema: shape({ s: z.number().describe('Seconds.') }),
    }, async ({ s }) => { await new Promise((r) => setTimeout(r, s * 1000)); return text('rested'); });
  }
}
