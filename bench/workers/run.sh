#!/usr/bin/env bash
# Every worker-process row of bench/README.md ("Worker processes", issue 32) in
# one command: installs what bench/setup.sh installs (mcplite release build
# unless MCPLITE_BENCH_LIB names a library that has it, the Python venv with
# mcp==2.3.0, the TypeScript SDKs), then runs bench/workers/run.py, which
# writes bench/results/workers/results.json. Extra arguments go to run.py
# (--quick, --rounds N, --transports stdio,http, --only w2,naps,busy,spin,memory).
#   bash bench/workers/run.sh                  # about 4 minutes on a quiet 2-core machine
#   MCPLITE_BENCH_LIB=/path/to/lib bash bench/workers/run.sh --rounds 5
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
say() { echo "[bench/workers] $*" >&2; }
# shellcheck source=bench/setup.sh
. bench/setup.sh
say "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
"$PYTHON" bench/workers/run.py "$@"
