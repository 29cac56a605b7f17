#!/usr/bin/env bash
# The deployment recipes of inst/deploy work as shipped (the Dockerfile's
# steps are run by 55-offline-install.sh, which has the tarball):
#   1. nginx.conf: three replicas behind real nginx, started by the
#      ExecStart of mcplite-nginx.service, with its TLS block switched on; a
#      rolling restart of every replica under continuous load from the
#      official Python SDK loses no modern request
#      (tests/deploy/rolling_restart.py);
#   2. mcplite@.service and mcplite-nginx.service pass `systemd-analyze
#      verify`; mcplite@.service's ExecStart, run with its Environment and the
#      shipped mcplite.env as an unprivileged user, serves, and stops on
#      KillSignal within TimeoutStopSec, answering the call in flight, also
#      when a tool outlives the server's drain time.
# Needs root (setpriv), nginx, openssl, curl and systemd-analyze
# (scripts/deps/56-deploy.sh), and the Python venv of scripts/deps/20-clients.sh.
# Prints "N passed, N failed" last.
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
if [ -n "${MCPLITE_LIB:-}" ]; then export R_LIBS="$MCPLITE_LIB${R_LIBS:+:$R_LIBS}"; fi
unset MCPLITE_TRANSPORT MCPLITE_PORT MCPLITE_TOKEN MCPLITE_REPLICA MCPLITE_HOST
venv="${MCPLITE_VENV:-/root/.cache/mcplite-venv}"
work=$(mktemp -d)
chmod 755 "$work"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT

. tests/suites/lib.sh

deploy=$(Rscript --vanilla -e 'cat(system.file("deploy", package = "mcplite"))' 2>/dev/null)
if [ -z "$deploy" ]; then
  bad "mcplite is installed with its deploy directory (R_LIBS=${R_LIBS:-})"
  finish
fi
for f in inst/deploy/*; do
  if [ -f "$deploy/$(basename "$f")" ]; then ok "installed: deploy/$(basename "$f")"; else bad "installed: deploy/$(basename "$f")"; fi
done

# 1. nginx: a rolling restart under load ----------------------------------------
if [ -x "$venv/bin/python" ]; then
  "$venv/bin/python" tests/deploy/rolling_restart.py >"$work/rolling.log" 2>&1
  grep -E '^(ok|FAIL) |^       ' "$work/rolling.log"
  add_counts "$work/rolling.log" || bad "the rolling-restart test ran to the end" "$work/rolling.log"
else
  bad "the Python venv with the MCP SDK exists at $venv (scripts/deps/20-clients.sh)"
fi

# 2. systemd units ----------------------------------------------------------------
unit="$deploy/mcplite@.service"
if command -v systemd-analyze >/dev/null 2>&1; then
  # Verify an instance of the template, as systemctl would load it, and the
  # nginx unit.
  mkdir -p "$work/units"
  cp "$unit" "$work/units/mcplite@1.service"
  cp "$deploy/mcplite-nginx.service" "$work/units/"
  for u in mcplite@1.service mcplite-nginx.service; do
    if systemd-analyze verify "$work/units/$u" >"$work/verify.log" 2>&1 && [ ! -s "$work/verify.log" ]; then
      ok "systemd-analyze verify accepts $u, without a warning"
    else
      bad "systemd-analyze verify accepts $u, without a warning" "$work/verify.log"
    fi
  done
else
  bad "systemd-analyze is installed (scripts/deps/56-deploy.sh)"
fi

# Run ExecStart as systemd would: the unit's Environment (instance 1), the
# shipped environment file with a token, as an unprivileged user; then stop
# it with KillSignal and wait at most TimeoutStopSec.
setting() { sed -n "s/^$1=//p" "$unit" | sed 's/%i/1/g'; }
token="unit-test-token-0123456789abcdef"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkdir -p "$work/srv" "$work/cache"
cat >"$work/srv/server.R" <<'REOF'
library(mcplite)
nap <- tool(function(s) { file.create(Sys.getenv("NAP_MARK")); Sys.sleep(s); "rested" }, "Sleep a while.", name = "nap",
  arguments = list(s = type_number()))
mcp_server(nap)
REOF
chmod -R a+rX "$work/srv"
chown nobody "$work/cache"
sed "s/^MCPLITE_TOKEN=.*/MCPLITE_TOKEN=$token/" "$deploy/mcplite.env" | grep -v '^#' >"$work/unit.env"
exec_start=$(setting ExecStart | sed "s|/srv/mcplite/server.R|$work/srv/server.R|")
kill_signal=$(setting KillSignal)
timeout_stop=$(setting TimeoutStopSec)
read -r -a envs <<<"$(setting Environment | tr '\n' ' ')"
mapfile -t file_envs <"$work/unit.env"
run_unit() { # runs ExecStart in the background; sets unit_pid
  env -i PATH=/usr/bin:/bin LANG=C.UTF-8 R_LIBS="$R_LIBS" "${file_envs[@]}" "${envs[@]}" \
    HOME="$work/cache" R_USER_CACHE_DIR="$work/cache" MCPLITE_PORT="$port" NAP_MARK="$work/cache/nap-started" \
    setpriv --reuid=nobody --regid=nogroup --clear-groups $exec_start >"$work/unit.out" 2>&1 &
  unit_pid=$!
  pids+=("$unit_pid")
  for _ in $(seq 1 600); do
    curl -fs "http://127.0.0.1:$port/health" >/dev/null 2>&1 && return 0
    kill -0 "$unit_pid" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}
call_nap() { # seconds outfile: a tools/call in the background, returns once the tool runs; sets call_pid
  rm -f "$work/cache/nap-started"
  curl -s -o "$2" -w '%{http_code}' -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2026-07-28' \
    -H 'Mcp-Method: tools/call' -H 'Mcp-Name: nap' \
    --data-binary "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"nap\",\"arguments\":{\"s\":$1},\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}}}}" \
    "http://127.0.0.1:$port/mcp" >"$2.status" &
  call_pid=$!
  for _ in $(seq 1 300); do
    [ -e "$work/cache/nap-started" ] && return 0
    sleep 0.05
  done
}
stop_unit() { # KillSignal, then at most TimeoutStopSec; sets status (exit status or "timeout")
  kill -s "${kill_signal#SIG}" "$unit_pid"
  local t=$(( ${timeout_stop%s} * 10 ))
  status=timeout
  for _ in $(seq 1 "$t"); do
    if ! kill -0 "$unit_pid" 2>/dev/null; then
      wait "$unit_pid"
      status=$?
      return
    fi
    sleep 0.1
  done
}

if [ -z "$kill_signal" ] || [ -z "$timeout_stop" ] || [ -z "$exec_start" ]; then
  bad "mcplite@.service sets ExecStart, KillSignal and TimeoutStopSec"
elif run_unit; then
  ok "ExecStart serves with the unit's environment and mcplite.env, as an unprivileged user"
  status=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/mcp" -H 'Content-Type: application/json' \
    -H 'Accept: application/json' --data-binary '{}')
  if [ "$status" = 401 ]; then ok "the token from mcplite.env is required (401 without it)"; else bad "the token from mcplite.env is required (got $status)"; fi
  # A call in flight when the stop comes is answered, and the stop is clean.
  call_nap 2 "$work/call1.json"
  stop_unit
  wait "$call_pid"
  if [ "$status" = 0 ] && grep -q rested "$work/call1.json" && [ "$(cat "$work/call1.json.status")" = 200 ]; then
    ok "$kill_signal drains: the call in flight is answered and the server exits 0 within TimeoutStopSec=$timeout_stop (no restart under Restart=on-failure)"
  else
    cat "$work/call1.json" >>"$work/unit.out"
    bad "$kill_signal drains (exit status: $status, call: $(cat "$work/call1.json.status"))" "$work/unit.out"
  fi
else
  bad "ExecStart serves with the unit's environment and mcplite.env, as an unprivileged user" "$work/unit.out"
fi
# A tool that outlives the drain time is interrupted, and the server still
# exits before systemd's SIGKILL.
if [ -n "$exec_start" ] && run_unit; then
  call_nap 600 "$work/call2.json"
  stop_unit
  wait "$call_pid"
  if [ "$status" = 0 ] && [ "$(cat "$work/call2.json.status")" = 200 ]; then
    ok "a tool running longer than the drain is interrupted, answered, and the server exits 0 within TimeoutStopSec=$timeout_stop"
  else
    cat "$work/call2.json" >>"$work/unit.out"
    bad "a tool outliving the drain: the server exits 0 within TimeoutStopSec=$timeout_stop (exit status: $status)" "$work/unit.out"
  fi
fi

finish
