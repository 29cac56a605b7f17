"""Client benchmark, official Python SDK (mcp 2.3.0): N sequential
`tools/call add` round trips through ClientSession.call_tool() over stdio.

    python bench/peers/python/client_bench.py N WARMUP command [args...]

Prints one JSON line like bench/client/client_bench.R."""

import json
import os
import statistics
import sys
import time

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main() -> None:
    n, warmup, cmd, args = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4:]
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    env["BENCH_TOOLS"] = "1"
    params = StdioServerParameters(command=cmd, args=args, env=env)
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as session:
            init = await session.initialize()
            version = getattr(init, "protocol_version", None) or getattr(init, "protocolVersion", "?")
            for i in range(warmup):
                await session.call_tool("add", {"x": i, "y": 1})
            times = []
            cpu0 = time.process_time()
            t_start = time.perf_counter()
            for i in range(1, n + 1):
                t0 = time.perf_counter()
                res = await session.call_tool("add", {"x": i, "y": 0.5})
                times.append(time.perf_counter() - t0)
            wall = time.perf_counter() - t_start
            cpu = time.process_time() - cpu0
            assert res.content[0].text == f"{n}.5", res
    us = sorted(t * 1e6 for t in times)
    q = lambda p: us[min(len(us) - 1, int(p * len(us)))]
    print(json.dumps({"client": "python-sdk", "protocol": str(version), "n": n, "p50_us": round(statistics.median(us), 1),
                      "p90_us": round(q(0.9), 1), "p99_us": round(q(0.99), 1), "mean_us": round(sum(us) / n, 1),
                      "calls_per_s": round(n / wall), "client_cpu_us": round(cpu / n * 1e6, 1)}))


anyio.run(main)
