# Helpers shared by the suites of tests/suites, sourced after `cd` to the
# repository root:  . tests/suites/lib.sh
# Each check prints one line ("ok   - ..." or "FAIL - ..."); a suite ends
# with finish (or prints summary itself), whose line "N passed, N failed"
# scripts/run-tests.sh reads.

pass=0
fail=0

# ok NAME: a check passed.
ok() {
  pass=$((pass + 1))
  echo "ok   - $1"
}

# bad NAME [LOG]: a check failed; the end of the file LOG, when given, is shown
# indented under it.
bad() {
  fail=$((fail + 1))
  echo "FAIL - $1"
  if [ -n "${2:-}" ] && [ -f "$2" ]; then tail -30 "$2" | sed 's/^/       /'; fi
}

# bad_text NAME TEXT: a check failed; the first lines of TEXT are shown under it.
bad_text() {
  fail=$((fail + 1))
  echo "FAIL - $1"
  if [ -n "${2:-}" ]; then printf '%s\n' "$2" | head -40; fi
}

# add_counts LOG: add the counts of the last "N passed, N failed" line of the
# file LOG (a sub-suite's output); returns 1 when there is none.
add_counts() {
  local last
  last=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$1" | tail -1)
  [ -n "$last" ] || return 1
  pass=$((pass + $(echo "$last" | cut -d' ' -f1)))
  fail=$((fail + $(echo "$last" | cut -d' ' -f3)))
}

# summary: the suite's last line.
summary() {
  echo "$pass passed, $fail failed"
}

# finish: the last line, then exit (non-zero when a check failed).
finish() {
  summary
  [ "$fail" -eq 0 ]
  exit $?
}
