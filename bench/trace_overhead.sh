#!/usr/bin/env bash
# Telemetry overhead benchmarks (RULES section 8 speed goal): per-message cost
# with telemetry off vs spans, spans + metrics, and MCPLITE_LOG on.
#   1. engine only (Rust, release): rust/engine/examples/trace_overhead.rs
#   2. end to end through a real Rscript stdio server: bench/trace_overhead.py
# Usage: bench/trace_overhead.sh [messages] [rounds]
# Needs mcplite installed where R finds it (R_LIBS / MCPLITE_LIB) and the
# Python venv (${MCPLITE_VENV:-/root/.cache/mcplite-venv}) or any python3.
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-20000}"
rounds="${2:-5}"
if [ -n "${MCPLITE_LIB:-}" ]; then export R_LIBS="$MCPLITE_LIB${R_LIBS:+:$R_LIBS}"; fi
echo "== load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
echo "== engine only (release build)"
cargo run --quiet --release -p mcplite-engine --example trace_overhead -- "$n" "$rounds" 2>/dev/null
echo "== end to end (Rscript)"
py="${MCPLITE_VENV:-/root/.cache/mcplite-venv}/bin/python"
[ -x "$py" ] || py=python3
"$py" bench/trace_overhead.py "$n" "$rounds"
