#!/usr/bin/env bash
# Client round trips over stdio (issue 18): mcplite's R client (mcp_call())
# side by side with the official Python SDK ClientSession and the TypeScript
# SDK Client (2.x and 1.x), each making the same sequential `tools/call add`
# calls against the same servers: the Rust floor (bench/floor, the cost of
# the protocol alone) and mcplite's own server (bench/servers/mcplite.R).
# mcplite's client runs against its own server in both 2026-07-28 (what it
# negotiates) and 2025-11-25 (what the SDK clients speak).
#
#   bench/client/run.sh [--rounds N] [--calls N]
#
# Uses the mcplite installed in $MCPLITE_BENCH_LIB (default target/bench-lib,
# made by bench/run.sh) or the default library; needs the Python venv
# ($MCPLITE_VENV) and `npm ci` in bench/peers/node (bench/run.sh does both).
# Writes bench/results/client.json (every sample) and client.md (medians).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
rounds=3
calls=2000
warmup=200
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --calls) calls=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
export PATH="$PATH:$HOME/.cargo/bin"
lib=${MCPLITE_BENCH_LIB:-$root/target/bench-lib}
if [ -d "$lib/mcplite" ]; then export R_LIBS="$lib${R_LIBS:+:$R_LIBS}"; fi
venv=${MCPLITE_VENV:-/root/.cache/mcplite-venv}
py="$venv/bin/python"
node=${NODE:-$(command -v node)}
rscript=$(command -v Rscript)

CARGO_TARGET_DIR=$root/bench/target cargo build --quiet --release --manifest-path bench/floor/Cargo.toml
floor=$root/bench/target/release/mcp-floor
[ -d bench/peers/node/node_modules/@modelcontextprotocol/client ] || (cd bench/peers/node && npm ci --no-audit --no-fund --silent)

out=bench/results
mkdir -p "$out"
samples=$(mktemp)
trap 'rm -f "$samples"' EXIT

run_client() { # client server-name command...
  local client=$1 server=$2
  shift 2
  local line
  case "$client" in
    mcplite-r) line=$("$rscript" --vanilla bench/client/client_bench.R "$calls" "$warmup" "$@") ;;
    mcplite-r-legacy) line=$(BENCH_PROTOCOL=2025-11-25 BENCH_CLIENT_LABEL=mcplite-r \
      "$rscript" --vanilla bench/client/client_bench.R "$calls" "$warmup" "$@") ;;
    python-sdk) line=$(env -u LD_LIBRARY_PATH "$py" bench/peers/python/client_bench.py "$calls" "$warmup" "$@") ;;
    ts-client2) line=$("$node" bench/peers/node/client_bench.mjs v2 "$calls" "$warmup" "$@") ;;
    ts-sdk1) line=$("$node" bench/peers/node/client_bench.mjs v1 "$calls" "$warmup" "$@") ;;
  esac
  echo "{\"server\":\"$server\",\"round\":$round,${line#\{}" | tee -a "$samples"
}

clients=(mcplite-r python-sdk ts-client2 ts-sdk1)
for round in $(seq 1 "$rounds"); do
  # rotate the client order every round, so machine drift hits all alike
  shift_by=$(( (round - 1) % ${#clients[@]} ))
  order=("${clients[@]:$shift_by}" "${clients[@]:0:$shift_by}")
  for c in "${order[@]}"; do
    run_client "$c" floor "$floor"
    run_client "$c" mcplite "$rscript" --vanilla "$root/bench/servers/mcplite.R"
  done
  # mcplite's client negotiates 2026-07-28 with mcplite's server; the other
  # clients speak 2025-11-25 to it: the same calls in that version too
  run_client mcplite-r-legacy mcplite "$rscript" --vanilla "$root/bench/servers/mcplite.R"
done

commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
load=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)
"$rscript" --vanilla - "$samples" "$out" "$commit" "$load" <<'REOF'
args <- commandArgs(TRUE)
rows <- lapply(readLines(args[[1]]), jsonlite::fromJSON)
df <- do.call(rbind, lapply(rows, as.data.frame))
writeLines(jsonlite::toJSON(df, pretty = TRUE, digits = NA), file.path(args[[2]], "client.json"))
agg <- aggregate(cbind(p50_us, p99_us, mean_us, calls_per_s, client_cpu_us) ~ client + server + protocol, df, median)
agg <- agg[order(agg$server, agg$mean_us), ]
fmt <- function(x, d = 0) formatC(x, format = "f", digits = d, big.mark = ",")
lines <- c(
  "| server | client | protocol | p50 µs | p99 µs | mean µs | calls/s | client CPU µs/call |",
  "|---|---|---|---:|---:|---:|---:|---:|",
  sprintf("| %s | %s | %s | %s | %s | %s | %s | %s |", agg$server, agg$client, agg$protocol,
          fmt(agg$p50_us, 1), fmt(agg$p99_us), fmt(agg$mean_us, 1), fmt(agg$calls_per_s), fmt(agg$client_cpu_us, 1))
)
writeLines(c(
  sprintf("Client round trips (%s, git %s, load average %s), medians over %d rounds of %d calls; %s.",
          format(Sys.time(), "%Y-%m-%d %H:%M %Z"), args[[3]], args[[4]],
          length(unique(df$round)), df$n[[1]], R.version.string), "", lines), file.path(args[[2]], "client.md"))
cat(lines, sep = "\n")
REOF
