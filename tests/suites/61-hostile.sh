#!/usr/bin/env bash
# Hostile stdio suite (issue 8): tests/hostile/hostile.py spawns
# `Rscript --vanilla tests/hostile/server.R` over pipes and checks every
# hostile input, misbehaving tool and process-level fault, then 100,000
# pipelined mixed requests with RSS sampled. A second, shorter pass repeats
# the in-session cases and 20,000 requests with tracing on (spans exported as
# OTLP/JSON on stderr). Python standard library only.
set -uo pipefail
cd "$(dirname "$0")/../.."
py=python3
if [ -x "${MCPLITE_VENV:-$HOME/.cache/mcplite-venv}/bin/python" ]; then
  py="${MCPLITE_VENV:-$HOME/.cache/mcplite-venv}/bin/python"
fi
export RSCRIPT="$(command -v Rscript)"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
. tests/suites/lib.sh
run() {
  "$@" 2>&1 | tee "$log"
  add_counts "$log" || fail=$((fail + 1))
}
echo "== tracing off"
run timeout 900 "$py" tests/hostile/hostile.py
echo "== tracing on (stderr exporter)"
run env OTEL_TRACES_EXPORTER=stderr HOSTILE_LOAD=20000 timeout 600 "$py" tests/hostile/hostile.py session load
finish
