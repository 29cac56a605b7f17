#!/usr/bin/env bash
# R CMD build + R CMD check --as-cran (network checks off): no ERROR, no
# WARNING, and no NOTE other than the top-level Cargo files one.
set -uo pipefail
cd "$(dirname "$0")/../.."
if bash scripts/check.sh; then
  echo "1 passed, 0 failed"
else
  echo "0 passed, 1 failed"
  exit 1
fi
