#!/usr/bin/env bash
# Every R and shell example of the README, the vignettes and the help pages
# runs (tests/doc-examples/run-examples.R says how: servers run in the background and
# a real client drives them; what needs something absent here is listed with
# the reason in tests/doc-examples/examples.dcf). Arguments, if any, name documents
# (README.md, vignettes/serve-http.Rmd, man/mcp_server.Rd) to run alone.
# Runs from the repository root; uses the library in $MCPLITE_LIB when set.
# Prints "N passed, N failed" last and exits non-zero on any failure.
set -uo pipefail
cd "$(dirname "$0")/../.."
if [ -n "${MCPLITE_LIB:-}" ]; then export R_LIBS="$MCPLITE_LIB${R_LIBS:+:$R_LIBS}"; fi
unset MCPLITE_CAN_BLOCK_PROCESS MCPLITE_TRANSPORT MCPLITE_PORT MCPLITE_TOKEN
export LANG="${LANG:-C.UTF-8}"
if ! Rscript --vanilla -e 'library(mcplite)' >/dev/null 2>&1; then
  echo "FAIL - mcplite can be loaded (R_LIBS=${R_LIBS:-})"
  echo "0 passed, 1 failed"
  exit 1
fi
Rscript --vanilla tests/doc-examples/run-examples.R "$@"
