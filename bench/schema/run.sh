#!/usr/bin/env bash
# W5.frame (a 100,000 x 5 data frame as structured content) with output-schema
# validation off and on (RULES J4.6) for two builds, servers interleaved round
# by round:
#   MCPLITE_BEFORE_LIB=<library> MCPLITE_AFTER_LIB=<library> \
#     bench/schema/run.sh [--rounds N] [--big-calls N]
# Both libraries hold release builds (R CMD INSTALL without MCPLITE_PROFILE).
# Results in $OUT (default bench/results/schema-fast/: results.md, results.json).
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="$PATH:$HOME/.cargo/bin"
: "${MCPLITE_BEFORE_LIB:?set MCPLITE_BEFORE_LIB}" "${MCPLITE_AFTER_LIB:?set MCPLITE_AFTER_LIB}"
export RSCRIPT=${RSCRIPT:-$(command -v Rscript)}
export CARGO_TARGET_DIR=$PWD/bench/target
cargo build --quiet --release --manifest-path bench/driver/Cargo.toml
"$CARGO_TARGET_DIR/release/mcp-bench-driver" --config bench/schema/servers.json \
  --workloads W5.frame --out "${OUT:-bench/results/schema-fast}" "$@"
