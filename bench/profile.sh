#!/usr/bin/env bash
# Profile the mcplite server while the driver runs one workload.
#
#   bench/profile.sh perf  W2      # perf record (call graphs) of the server process, startup skipped
#   bench/profile.sh rprof W5      # Rprof of the R side (tool code, R-level encoders)
#
# Needs a previous bench/run.sh (the driver binary) and MCPLITE_BENCH_LIB (or target/bench-lib).
# Output: target/bench-profile/<tool>-<workload>.{data,out,txt}.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
tool=${1:?usage: bench/profile.sh perf|rprof W1..W7}
workload=${2:?usage: bench/profile.sh perf|rprof W1..W7}
export R_LIBS=${MCPLITE_BENCH_LIB:-$root/target/bench-lib}
export RSCRIPT=${RSCRIPT:-$(command -v Rscript)}
out=$root/target/bench-profile
mkdir -p "$out"
cfg=$out/servers.json
case "$tool" in
  perf)
    # Skip the first 1.5 s (R startup, tool construction) unless profiling W1.
    case "$workload" in W1|W5*|W6) delay="" ;; *) delay="\"--delay\", \"1500\", " ;; esac
    cmd="\"perf\", \"record\", \"-q\", \"-F\", \"2000\", \"-g\", $delay\"-o\", \"$out/perf-$workload.data\", \"--\", \"$RSCRIPT\", \"--vanilla\", \"bench/servers/mcplite.R\""
    ;;
  rprof)
    sed "s|^library(mcplite)|Rprof(\"$out/rprof-$workload.out\", interval = 0.001, append = TRUE); library(mcplite)|; s|^mcp_server(tools)|mcp_server(tools); Rprof(NULL)|" \
      bench/servers/mcplite.R >"$out/mcplite-rprof.R"
    rm -f "$out/rprof-$workload.out"
    cmd="\"$RSCRIPT\", \"--vanilla\", \"$out/mcplite-rprof.R\""
    ;;
  *) echo "unknown profiler $tool" >&2; exit 1 ;;
esac
printf '{"servers": [{"id": "mcplite", "label": "mcplite", "role": "mcplite", "cmd": [%s]}]}\n' "$cmd" >"$cfg"
bench/target/release/mcp-bench-driver --config "$cfg" --workloads "$workload" --rounds 1 --big-calls "${BIG_CALLS:-20}" --out "$out/run" >&2
case "$tool" in
  perf)
    perf report -i "$out/perf-$workload.data" --no-children --sort dso,sym --stdio -g none 2>/dev/null \
      | grep '%' | head -40 | tee "$out/perf-$workload.txt"
    ;;
  rprof)
    Rscript --vanilla -e "x <- summaryRprof('$out/rprof-$workload.out'); print(head(x\$by.total, 30)); print(head(x\$by.self, 15))" \
      | tee "$out/rprof-$workload.txt"
    ;;
esac
