#!/usr/bin/env bash
# An example package that serves and tests MCP tools as the guides say
# (tests/example-package/meanserver: in memory, over stdio from its installed
# inst/server.R, and with mcp_load_tools()), built and checked with R CMD
# check against the mcplite under test: no ERROR, WARNING or NOTE, and its
# testthat tests pass there (RULES K9; issue 44, items 5-7).
# Uses the library in $MCPLITE_LIB when set.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/suites/lib.sh
if [ -n "${MCPLITE_LIB:-}" ]; then export R_LIBS="$MCPLITE_LIB${R_LIBS:+:$R_LIBS}"; fi
unset MCPLITE_TRANSPORT MCPLITE_PORT MCPLITE_TOKEN MCPLITE_WORKERS MCPLITE_PROGRESS_INTERVAL
export LANG="${LANG:-C.UTF-8}" _R_CHECK_FORCE_SUGGESTS_=true
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r tests/example-package/meanserver "$work/"
if (cd "$work" && R CMD build --no-build-vignettes meanserver) > "$work/build.log" 2>&1; then
  ok "R CMD build of the example package"
else
  bad "R CMD build of the example package" "$work/build.log"
  finish
fi
(cd "$work" && R CMD check --no-manual meanserver_*.tar.gz) > "$work/check.log" 2>&1
status=$?
if [ "$status" -eq 0 ] && grep -q "^Status: OK" "$work/check.log"; then
  ok "R CMD check of the example package: Status OK"
else
  bad "R CMD check of the example package: Status OK" "$work/check.log"
  [ -f "$work/meanserver.Rcheck/tests/testthat.Rout.fail" ] && tail -40 "$work/meanserver.Rcheck/tests/testthat.Rout.fail"
fi
# The example package's tests ran under the check, and all passed.
out="$work/meanserver.Rcheck/tests/testthat.Rout"
if [ -f "$out" ] && grep -Eq "\[ FAIL 0 \| WARN 0 \| SKIP 0 \| PASS [1-9][0-9]* \]" "$out"; then
  ok "its testthat tests ran under R CMD check: $(grep -Eo 'PASS [0-9]+' "$out" | tail -1)"
else
  bad "its testthat tests ran under R CMD check" "${out}"
fi
finish
