// Tools shared by the TypeScript SDK peer servers of mcplite's client tests.
// `shape(obj)` adapts a zod shape to what registerTool expects (a raw shape
// for sdk 1.x, z.object for server 2.x); `req(extra)` gives the request's
// progress token, a notification sender and its abort signal in either SDK.
import * as z from 'zod';

const text = (s, more = {}) => ({ content: [{ type: 'text', text: s }], ...more });

export function registerPeerTools(server, shape, req) {
  server.registerTool('echo', {
    description: 'Echo the text.',
    inputSchema: shape({ text: z.string() }),
    annotations: { title: 'Echo', readOnlyHint: true },
  }, async ({ text: t }) => text(t));
  server.registerTool('add', {
    description: 'Add two numbers.',
    inputSchema: shape({ x: z.number(), y: z.number() }),
    outputSchema: shape({ sum: z.number() }),
  }, async ({ x, y }) => text(JSON.stringify({ sum: x + y }), { structuredContent: { sum: x + y } }));
  server.registerTool('fail', {
    description: 'Report a tool error.',
    inputSchema: shape({ message: z.string() }),
  }, async ({ message }) => text(message, { isError: true }));
  server.registerTool('slow', {
    description: 'Take a while, reporting progress.',
    inputSchema: shape({ steps: z.number().int().optional(), delay: z.number().optional() }),
  }, async ({ steps = 3, delay = 0.2 }, extra) => {
    const { token, notify, signal } = req(extra);
    for (let i = 1; i <= steps; i++) {
      await new Promise((resolve) => setTimeout(resolve, delay * 1000));
      if (signal?.aborted) {
        process.stderr.write('peer: slow was cancelled\n');
        throw new Error('cancelled');
      }
      if (token !== undefined) {
        await notify({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: steps, message: `step ${i}` } });
      }
    }
    return text('done');
  });
  server.registerTool('crash', { description: 'Exit in the middle of the call.' }, async () => {
    process.stderr.write('peer: crashing on purpose\n');
    process.exit(3);
  });
}
