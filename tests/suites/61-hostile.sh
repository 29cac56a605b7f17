#!/usr/bin/env bash
# Hostile stdio suite (issue 8): tests/hostile/hostile.py spawns
# `Rscript --vanilla tests/hostile/server.R` over pipes and checks every
# hostile input, misbehaving tool and process-level fault, then 100,000
# pipelined mixed requests with RSS sampled. Python standard library only.
set -uo pipefail
cd "$(dirname "$0")/../.."
py=python3
if [ -x "${MCPLITE_VENV:-/root/.cache/mcplite-venv}/bin/python" ]; then
  py="${MCPLITE_VENV:-/root/.cache/mcplite-venv}/bin/python"
fi
RSCRIPT="$(command -v Rscript)" timeout 900 "$py" tests/hostile/hostile.py
