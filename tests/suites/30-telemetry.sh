#!/usr/bin/env bash
# Telemetry end to end (RULES section 8): a real stdio server exporting spans
# and metrics over OTLP/HTTP to a loopback receiver that decodes them with the
# official opentelemetry-proto package, directly and through the Rotel
# collector; the stderr exporters; stdout/console redirection; unknown
# exporters; a dead collector; bounded attributes; TRACEPARENT/BAGGAGE in a
# tool's child process and the ambient link. See tests/telemetry/.
# Needs the package installed in $MCPLITE_LIB and scripts/deps/30-telemetry.sh.
# Last line: "N passed, N failed"; exit status non-zero on any failure.
set -uo pipefail
cd "$(dirname "$0")/../.."

venv="${MCPLITE_VENV:-$HOME/.cache/mcplite-venv}"
export PYTHONDONTWRITEBYTECODE=1
if [ ! -x "$venv/bin/python" ]; then
  echo "no Python venv at $venv (run scripts/deps/30-telemetry.sh)"
  echo "0 passed, 1 failed"
  exit 1
fi
out=$(cd tests/telemetry && "$venv/bin/python" -m pytest -q -rfEs -p no:cacheprovider 2>&1)
rc=$?
printf '%s\n' "$out" | tail -40
summary=$(printf '%s\n' "$out" | grep -E ' in [0-9.]+s' | tail -1)
num() { printf '%s\n' "$summary" | grep -Eo "[0-9]+ $1" | grep -Eo '[0-9]+' || echo 0; }
p=$(num passed)
f=$(( $(num failed) + $(num 'errors?') ))
if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
echo "$p passed, $f failed"
[ "$f" -eq 0 ]
