#!/usr/bin/env bash
# Soak runs, by hand (too long for CI): mixed traffic against one mcplite
# server for M minutes, every answer checked, the server's RSS, threads and
# open descriptors sampled. Record each run in bench/soak/RUNS.md.
#
#   bench/soak/run.sh http 30        # transport, minutes (default: http 10)
#   bench/soak/run.sh stdio 30
#
# MCPLITE_BENCH_LIB=<R library> uses an installed mcplite; otherwise a
# release build is installed into target/bench-lib. SOAK_SEED picks the mix.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
export PATH="$PATH:$HOME/.cargo/bin"
transport=${1:-http}
minutes=${2:-10}
lib=${MCPLITE_BENCH_LIB:-$root/target/bench-lib}
if [ ! -d "$lib/mcplite" ]; then
  mkdir -p "$lib"
  echo "[soak] installing mcplite (release build) into $lib" >&2
  MCPLITE_PROFILE=release R CMD INSTALL --no-test-load --library="$lib" . >"$root/target/soak-install.log" 2>&1
fi
export R_LIBS=$lib
export CARGO_TARGET_DIR=$root/bench/target
cargo build --quiet --release --manifest-path bench/driver/Cargo.toml --bin mcp-soak
out=target/soak
mkdir -p "$out"
echo "[soak] $transport for $minutes min (git $(git rev-parse --short HEAD), load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
"$CARGO_TARGET_DIR/release/mcp-soak" --transport "$transport" --minutes "$minutes" --seed "${SOAK_SEED:-1}" \
  --log "$out/server-$transport.log" | tee "$out/report-$transport.md"
