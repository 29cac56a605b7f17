#!/usr/bin/env bash
# One command for the whole benchmark suite (see bench/README.md):
#
#   bench/run.sh            full run (~10 min on 2 cores), writes bench/results/results.{json,csv,md}
#   bench/run.sh --quick    smoke run (~1-2 min), writes bench/results/quick/
#
# Other arguments go to the driver: --rounds N, --servers mcplite,floor,...,
# --workloads W1,W2,..., --out DIR.
# Environment: MCPLITE_BENCH_LIB=<R library> uses an mcplite already installed
# there (no reinstall); otherwise the checkout is installed (release build) into
# target/bench-lib first. MCPLITE_VENV is the Python venv (created with
# mcp==2.3.0 when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
export PATH="$PATH:$HOME/.cargo/bin"

say() { echo "[bench] $*" >&2; }

# mcplite, the Python and TypeScript peers (bench/setup.sh).
. bench/setup.sh

# --- Rust floor and driver (standalone crates, own target dir) ------------------------------
export CARGO_TARGET_DIR=$root/bench/target
say "building the Rust floor and the driver"
cargo build --quiet --release --manifest-path bench/floor/Cargo.toml
cargo build --quiet --release --manifest-path bench/driver/Cargo.toml
export BENCH_BIN=$CARGO_TARGET_DIR/release

# --- versions and machine ---------------------------------------------------------------
npmver() { sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "bench/peers/node/node_modules/$1/package.json" | head -1; }
meta=$(mktemp)
trap 'rm -f "$meta"' EXIT
"$PYTHON" - "$meta" <<PY
import json, sys, platform, importlib.metadata as m, subprocess, os
def run(*a):
    try: return subprocess.run(a, capture_output=True, text=True, check=True).stdout.strip()
    except Exception: return "?"
rv = run("$RSCRIPT", "--vanilla", "-e",
         'cat(R.version\$major, ".", R.version\$minor, " ", format(packageVersion("mcplite")), " ", format(packageVersion("jsonlite")), sep = "")').split(" ")
cpu = "?"
try:
    cpu = next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name"))
except Exception: pass
git = run("git", "-C", "$root", "rev-parse", "--short", "HEAD")
dirty = run("git", "-C", "$root", "status", "--porcelain", "--untracked-files=no")
json.dump({
  "date": run("date", "-u", "+%Y-%m-%d %H:%M UTC"),
  "machine": f"{os.cpu_count()} cores, {cpu}, Linux {platform.release()}",
  "versions": {
    "mcplite": (rv[1] if len(rv) > 1 else "?") + f" (git {git}{'+dirty' if dirty not in ('', '?') else ''}, release build)",
    "R": rv[0], "jsonlite": rv[2] if len(rv) > 2 else "?",
    "Python": platform.python_version(), "mcp (Python SDK)": m.version("mcp"),
    "Node.js": run("$NODE", "--version").lstrip("v"),
    "@modelcontextprotocol/sdk": "$(npmver @modelcontextprotocol/sdk)",
    "@modelcontextprotocol/server": "$(npmver @modelcontextprotocol/server)",
    "zod": "$(npmver zod)",
    "rustc": run("rustc", "--version").split(" ")[1] if run("rustc", "--version") != "?" else "?",
  },
}, open(sys.argv[1], "w"), indent=1)
PY

say "running the workloads"
"$BENCH_BIN/mcp-bench-driver" --config bench/servers.json --meta "$meta" "$@"
