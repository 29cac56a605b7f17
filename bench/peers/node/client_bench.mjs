// Client benchmark, official TypeScript SDK: N sequential `tools/call add`
// round trips through Client.callTool() over stdio.
//   node bench/peers/node/client_bench.mjs v2|v1 N WARMUP command [args...]
// v2: @modelcontextprotocol/client 2.4.0; v1: @modelcontextprotocol/sdk 1.32.2.
// Prints one JSON line like bench/client/client_bench.R.
const [which, nArg, warmArg, cmd, ...args] = process.argv.slice(2);
const n = Number(nArg);
const warmup = Number(warmArg);
const mod = which === 'v1'
  ? { client: '@modelcontextprotocol/sdk/client/index.js', stdio: '@modelcontextprotocol/sdk/client/stdio.js' }
  : { client: '@modelcontextprotocol/client', stdio: '@modelcontextprotocol/client/stdio' };
const { Client } = await import(mod.client);
const { StdioClientTransport, getDefaultEnvironment } = await import(mod.stdio);

const env = { ...getDefaultEnvironment(), BENCH_TOOLS: '1' };
if (process.env.R_LIBS) env.R_LIBS = process.env.R_LIBS;
const client = new Client({ name: 'bench', version: '1.0.0' });
await client.connect(new StdioClientTransport({ command: cmd, args, env, stderr: 'ignore' }));
// v1 has no accessor; the servers benchmarked accept the version it asks for.
const version = client.getNegotiatedProtocolVersion?.()
  ?? (await import('@modelcontextprotocol/sdk/types.js')).LATEST_PROTOCOL_VERSION;
for (let i = 0; i < warmup; i++) await client.callTool({ name: 'add', arguments: { x: i, y: 1 } });
const times = new Float64Array(n);
const cpu0 = process.cpuUsage();
const tStart = process.hrtime.bigint();
let res;
for (let i = 1; i <= n; i++) {
  const t0 = process.hrtime.bigint();
  res = await client.callTool({ name: 'add', arguments: { x: i, y: 0.5 } });
  times[i - 1] = Number(process.hrtime.bigint() - t0) / 1000;
}
const wall = Number(process.hrtime.bigint() - tStart) / 1e9;
const cpu = process.cpuUsage(cpu0);
if (res.content[0].text !== `${n}.5`) throw new Error(`unexpected result ${JSON.stringify(res)}`);
await client.close();
const us = Array.from(times).sort((a, b) => a - b);
const q = (p) => us[Math.min(us.length - 1, Math.floor(p * us.length))];
console.log(JSON.stringify({
  client: which === 'v1' ? 'ts-sdk1' : 'ts-client2', protocol: String(version), n,
  p50_us: +q(0.5).toFixed(1), p90_us: +q(0.9).toFixed(1), p99_us: +q(0.99).toFixed(1),
  mean_us: +(us.reduce((a, b) => a + b, 0) / n).toFixed(1), calls_per_s: Math.round(n / wall),
  client_cpu_us: +((cpu.user + cpu.system) / n).toFixed(1),
}));
process.exit(0);
