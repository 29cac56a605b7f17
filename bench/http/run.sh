#!/usr/bin/env bash
# The HTTP workloads (issue 16): mcplite over Streamable HTTP against the
# official Python SDK (low-level Server on uvicorn) and TypeScript SDK 1.x
# (McpServer on node:http), same tools as the stdio benchmark plus `nap`.
#
#   bench/http/run.sh            full run, writes bench/results/http/results.{json,md}
#   bench/http/run.sh --quick    smoke run, writes bench/results/http/quick/
#   bench/http/run.sh --servers mcplite,ts-sdk1
#
# Environment as bench/run.sh: MCPLITE_BENCH_LIB=<R library> uses an
# installed mcplite; MCPLITE_VENV is the Python venv with mcp==2.3.0.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
export PATH="$PATH:$HOME/.cargo/bin"
say() { echo "[bench-http] $*" >&2; }

# mcplite, the Python and TypeScript peers (bench/setup.sh).
. bench/setup.sh

export CARGO_TARGET_DIR=$root/bench/target
cargo build --quiet --release --manifest-path bench/driver/Cargo.toml --bin mcp-bench-http

out=bench/results/http
for a in "$@"; do [ "$a" = "--quick" ] && out=bench/results/http/quick; done
mkdir -p "$out"
{
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "git: $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- rust R src || echo ' (modified)')"
  echo "cpu: $(nproc) x $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)"
  echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "R: $("$RSCRIPT" --version 2>&1 | head -1)"
  echo "python: $("$PYTHON" --version 2>&1), mcp $("$PYTHON" -c 'import importlib.metadata as m; print(m.version("mcp"), "uvicorn", m.version("uvicorn"))')"
  echo "node: $("$NODE" --version), @modelcontextprotocol/sdk $(sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' bench/peers/node/node_modules/@modelcontextprotocol/sdk/package.json | head -1)"
} >"$out/machine.txt"
cat "$out/machine.txt" >&2
"$CARGO_TARGET_DIR/release/mcp-bench-http" --config bench/http/servers.json --out "$out" "$@"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/machine.txt"
"$PYTHON" bench/http/report.py "$out"
