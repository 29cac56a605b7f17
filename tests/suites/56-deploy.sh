#!/usr/bin/env bash
# The deployment recipes of inst/deploy work as shipped (the Dockerfile's
# steps are run by 55-offline-install.sh, which has the tarball):
#   1. nginx.conf: three replicas behind real nginx, started by the
#      ExecStart of mcplite-nginx.service, with its TLS block switched on; a
#      rolling restart of every replica under continuous load from the
#      official Python SDK loses no modern request
#      (tests/deploy/rolling_restart.py);
#   2. mcplite@.service and mcplite-nginx.service pass `systemd-analyze
#      verify`; mcplite@.service's ExecStart, run with its Environment (the
#      instance is the port: any port) and the shipped mcplite.env as an
#      unprivileged user, serves, and stops on KillSignal within
#      TimeoutStopSec, answering the call in flight, also when a tool
#      outlives the server's drain time;
#   3. a tokens file as the guide installs it under systemd (owned by root,
#      readable by the service's group): served as the service user,
#      refused for a group not the service's own, read again by the unit's
#      ExecReload (a bad line keeps that name's token), /health 503 while it
#      cannot be read;
#   4. the Dockerfile's runtime without Docker (no daemon here): its user
#      has the home ENV names, package_tools() works under options(warn = 2)
#      with that environment and without a home, and CMD with ENV and
#      workers, stopped with SIGTERM while tools outlive the drain, exits 0
#      within docker's 10-second grace, the calls answered as interrupted by
#      the stop; HEALTHCHECK fails while the tokens file cannot be read.
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
  cp "$unit" "$work/units/mcplite@8081.service"
  cp "$deploy/mcplite-nginx.service" "$work/units/"
  for u in mcplite@8081.service mcplite-nginx.service; do
    if systemd-analyze verify "$work/units/$u" >"$work/verify.log" 2>&1 && [ ! -s "$work/verify.log" ]; then
      ok "systemd-analyze verify accepts $u, without a warning"
    else
      bad "systemd-analyze verify accepts $u, without a warning" "$work/verify.log"
    fi
  done
else
  bad "systemd-analyze is installed (scripts/deps/56-deploy.sh)"
fi

# Run ExecStart as systemd would: the unit's Environment (the instance is
# the port: a free one, above 8089, where `808%i` broke), the shipped
# environment file with a token, as an unprivileged user; then stop it with
# KillSignal and wait at most TimeoutStopSec.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
port=$(free_port)
setting() { sed -n "s/^$1=//p" "$unit" | sed "s/%i/$port/g"; }
token="unit-test-token-0123456789abcdef"
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
    HOME="$work/cache" R_USER_CACHE_DIR="$work/cache" NAP_MARK="$work/cache/nap-started" \
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
  if curl -s "http://127.0.0.1:$port/health" | grep -q "\"replica\":\"r$port\""; then
    ok "instance $port serves on port $port as replica r$port (the instance is the port)"
  else
    bad "instance $port serves on port $port as replica r$port" "$work/unit.out"
  fi
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
  if [ "$status" = 0 ] && [ "$(cat "$work/call2.json.status")" = 200 ] && grep -q "the server was stopping" "$work/call2.json"; then
    ok "a tool running longer than the drain is interrupted, answered saying the server was stopping, and the server exits 0 within TimeoutStopSec=$timeout_stop"
  else
    cat "$work/call2.json" >>"$work/unit.out"
    bad "a tool outliving the drain: the server exits 0 within TimeoutStopSec=$timeout_stop (exit status: $status)" "$work/unit.out"
  fi
fi

# 3. A tokens file under systemd -------------------------------------------------
# Owned by root, readable by the service's group: the user `daemon` (group
# `daemon`, named as the user) stands for the unit's `mcplite`.
alice="alice-0c4f9e2b7a1d8e3f5a6b"
bob="bob-7e1a3c5f9b2d4e6a8c0f1b3d"
carol="carol-5a6b7c8d9e0f1a2b3c4d"
tokens="$work/tokens"
printf 'alice %s\nbob %s\n' "$alice" "$bob" >"$tokens"
mkdir -p "$work/home-daemon"
chown daemon:daemon "$work/home-daemon"
grep -v '^MCPLITE_TOKEN=' "$work/unit.env" >"$work/unit-tokens.env"
echo "MCPLITE_TOKENS_FILE=$tokens" >>"$work/unit-tokens.env"
mapfile -t tokens_envs <"$work/unit-tokens.env"
run_as() { # user group: ExecStart with the tokens file, in the background; sets unit_pid
  env -i PATH=/usr/bin:/bin LANG=C.UTF-8 R_LIBS="$R_LIBS" "${tokens_envs[@]}" "${envs[@]}" \
    HOME="$work/home-daemon" R_USER_CACHE_DIR="$work/home-daemon" NAP_MARK="$work/home-daemon/nap-started" \
    setpriv --reuid="$1" --regid="$2" --clear-groups $exec_start >"$work/tokens.out" 2>&1 &
  unit_pid=$!
  pids+=("$unit_pid")
}
up_or_gone() { # waits until /health answers (0) or the server ended (1)
  for _ in $(seq 1 600); do
    curl -s -o /dev/null "http://127.0.0.1:$port/health" && return 0
    kill -0 "$unit_pid" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}
rpc() { # token: the status of a tools/call of nap (0 s)
  curl -s -o "$work/rpc.json" -w '%{http_code}' -H "Authorization: Bearer $1" -H 'Content-Type: application/json' \
    -H 'Accept: application/json' -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' -H 'Mcp-Name: nap' \
    --data-binary '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nap","arguments":{"s":0},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}' \
    "http://127.0.0.1:$port/mcp"
}
said() { # pattern: waits (at most 20 s) until the server's stderr has it
  for _ in $(seq 1 200); do
    grep -q "$1" "$work/tokens.out" && return 0
    sleep 0.1
  done
  return 1
}
reload=$(setting ExecReload)
if [ "$reload" = '/bin/kill -HUP $MAINPID' ]; then
  ok "mcplite@.service reloads with ExecReload=/bin/kill -HUP \$MAINPID (the server reads its tokens file again on SIGHUP)"
else
  bad "mcplite@.service reloads with ExecReload=/bin/kill -HUP \$MAINPID (it has: $reload)"
fi
if ! getent passwd daemon >/dev/null || [ "$(id -gn daemon)" != daemon ]; then
  bad "the user daemon with its group daemon exists (it stands for the unit's mcplite)"
elif [ -n "$exec_start" ]; then
  # A group that is not the service's own: refused at start, saying why.
  chown root:nogroup "$tokens"; chmod 0640 "$tokens"
  run_as daemon nogroup
  if up_or_gone; then st=running; stop_unit; else wait "$unit_pid"; st=$?; fi
  if [ "$st" != running ] && [ "$st" != 0 ] && grep -q "readable by its group (mode 640, group id $(getent group nogroup | cut -d: -f3)), which is not the server's own group" "$work/tokens.out"; then
    ok "a tokens file readable by a group that is not the service's own stops the server at start, saying why"
  else
    bad "a tokens file readable by a group that is not the service's own stops the server at start" "$work/tokens.out"
  fi
  chown root:daemon "$tokens"
  run_as daemon daemon
  if up_or_gone && [ "$(rpc "$alice")" = 200 ] && grep -q "(replica r$port; no worker processes; 2 tokens;" "$work/tokens.out"; then
    ok "a tokens file owned by root, mode 0640, group of the service's user: served as that user; the start-up line counts 2 tokens"
  else
    bad "a tokens file owned by root, mode 0640, group of the service's user, is served" "$work/tokens.out"
  fi
  # Edited in place: bob's line broken, carol added; then ExecReload.
  printf 'alice %s\nbob too-short\ncarol %s\n' "$alice" "$carol" >"$tokens"
  eval "${reload//\$MAINPID/$unit_pid}"
  if said 'keeps its token from the last good read' && [ "$(rpc "$carol")" = 200 ] && [ "$(rpc "$bob")" = 200 ] \
     && [ "$(rpc "$alice")" = 200 ] && ! grep -q too-short "$work/tokens.out"; then
    ok "ExecReload: a bad line keeps that name's last token (said on stderr, never the token), the other lines apply"
  else
    bad "ExecReload: a bad line keeps that name's last token, the other lines apply" "$work/tokens.out"
  fi
  # Unreadable by the service: every request refused, and /health says so.
  chmod 0600 "$tokens"
  eval "${reload//\$MAINPID/$unit_pid}"
  hs=$(curl -s -o "$work/health.json" -w '%{http_code}' "http://127.0.0.1:$port/health")
  if [ "$hs" = 503 ] && grep -q '"status":"unavailable"' "$work/health.json" && [ "$(rpc "$alice")" = 503 ]; then
    ok "a tokens file the service cannot read: every request 503, and /health 503 \"unavailable\""
  else
    bad "a tokens file the service cannot read: /health 503 (got $hs: $(cat "$work/health.json"))" "$work/tokens.out"
  fi
  chmod 0640 "$tokens"
  eval "${reload//\$MAINPID/$unit_pid}"
  if [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/health")" = 200 ] && [ "$(rpc "$alice")" = 200 ]; then
    ok "fixed and reloaded: served again, /health ok"
  else
    bad "fixed and reloaded: served again" "$work/tokens.out"
  fi
  stop_unit
  if [ "$status" = 0 ] && grep -q "HTTP server stopped (SIGTERM): [0-9]* calls\? drained" "$work/tokens.out"; then
    ok "the stop line counts the calls drained"
  else
    bad "the stop line counts the calls drained (exit status $status)" "$work/tokens.out"
  fi
fi

# 4. The Dockerfile's runtime, without Docker --------------------------------------
dockerfile="$deploy/Dockerfile"
# The Dockerfile's instructions as tests/deploy/run_dockerfile.py reads them.
dockerfile_part() { # ENV | CMD | HEALTHCHECK | USERADD
  python3 - "$dockerfile" "$1" <<'PEOF'
import json, shlex, sys
sys.path.insert(0, "tests/deploy")
from run_dockerfile import instructions
for word, rest in instructions(__import__("pathlib").Path(sys.argv[1])):
    if sys.argv[2] == "ENV" and word == "ENV":
        print("\n".join(shlex.split(rest)))
    elif sys.argv[2] == "CMD" and word == "CMD":
        print(" ".join(json.loads(rest)))
    elif sys.argv[2] == "HEALTHCHECK" and word == "HEALTHCHECK":
        print(rest.split("CMD", 1)[1].strip())
    elif sys.argv[2] == "USERADD" and word == "RUN" and "useradd" in rest:
        print("useradd" + rest.split("useradd", 1)[1].split("&&")[0])
PEOF
}
docker_env=$(dockerfile_part ENV)
docker_home=$(printf '%s\n' "$docker_env" | sed -n 's/^HOME=//p')
useradd=$(dockerfile_part USERADD)
useradd_home=$(printf '%s\n' "$useradd" | grep -o -- '--home-dir [^ ]*' | cut -d' ' -f2)
if [ -n "$docker_home" ] && [ "$docker_home" = "$useradd_home" ] && [ "$docker_home" != /nonexistent ] \
   && printf '%s\n' "$useradd" | grep -q -- '--create-home'; then
  ok "the image's user has a home of its own, and ENV HOME names it ($docker_home)"
else
  bad "the image's user has a home of its own, and ENV HOME names it (ENV: ${docker_home:-none}; useradd: ${useradd_home:-none})"
fi
# The image's ENV, with its paths under $work/image (as the image's user
# would find them) and the port, host (loopback here) and library of this
# machine; `daemon` stands for the image's user.
image="$work/image"
mkdir -p "$image"
mapfile -t image_envs < <(printf '%s\n' "$docker_env" | sed "s|=/var/|=$image/var/|; s|=/tmp/|=$image/tmp/|" \
  | grep -v -e '^R_LIBS=' -e '^MCPLITE_PORT=' -e '^MCPLITE_HOST=')
mkdir -p "$image$docker_home"
chown daemon:daemon "$image$docker_home"
pt='options(warn = 2); t <- mcplite::package_tools("tools", include = "file_ext", quiet = TRUE); cat(length(t))'
run_image() { env -i PATH=/usr/bin:/bin LANG=C.UTF-8 R_LIBS="$R_LIBS" "${image_envs[@]}" "$@"; }
if out=$(run_image setpriv --reuid=daemon --regid=daemon --clear-groups Rscript --vanilla -e "$pt" 2>&1) && [ "$out" = 1 ]; then
  ok "package_tools() works under options(warn = 2) with the image's ENV, as its user"
else
  bad_text "package_tools() works under options(warn = 2) with the image's ENV" "$out"
fi
if out=$(run_image HOME=/nonexistent setpriv --reuid=daemon --regid=daemon --clear-groups Rscript --vanilla -e "$pt" 2>&1) \
   && [ "$out" = 1 ]; then
  ok "package_tools() works under options(warn = 2) with HOME=/nonexistent when R_USER_CACHE_DIR names the cache"
else
  bad_text "package_tools() works under options(warn = 2) with HOME=/nonexistent" "$out"
fi
# CMD with ENV and two workers; two tools outlive the drain; docker stop.
cport=$(free_port)
chmod 0640 "$tokens"; chown root:daemon "$tokens"
printf 'alice %s\n' "$alice" >"$tokens"
cmd_line=$(dockerfile_part CMD)
health_cmd=$(dockerfile_part HEALTHCHECK)
cmd_line=${cmd_line//\/srv\/server.R/$work/srv/server.R}
# (A simple command, not a function, so that $! is the server's pid.)
env -i PATH=/usr/bin:/bin LANG=C.UTF-8 R_LIBS="$R_LIBS" "${image_envs[@]}" \
  MCPLITE_PORT="$cport" MCPLITE_HOST=127.0.0.1 MCPLITE_WORKERS=2 MCPLITE_TOKENS_FILE="$tokens" \
  NAP_MARK="$image$docker_home/nap-started" setpriv --reuid=daemon --regid=daemon --clear-groups $cmd_line \
  >"$work/image.out" 2>&1 &
cpid=$!
pids+=("$cpid")
healthcheck() { run_image MCPLITE_PORT="$cport" setpriv --reuid=daemon --regid=daemon --clear-groups \
  python3 -c 'import json,subprocess,sys; sys.exit(subprocess.run(json.loads(sys.argv[1])).returncode)' "$health_cmd" >/dev/null 2>&1; }
up=
for _ in $(seq 1 900); do
  if curl -fs "http://127.0.0.1:$cport/health" >/dev/null 2>&1; then up=1; break; fi
  kill -0 "$cpid" 2>/dev/null || break
  sleep 0.1
done
if [ -n "$up" ] && grep -q "(no replica name; 2 worker processes; 1 token;" "$work/image.out" && ! grep -qi "warning" "$work/image.out"; then
  ok "CMD serves with the image's ENV and two workers, without a warning; the start-up line counts them"
else
  bad "CMD serves with the image's ENV and two workers, without a warning" "$work/image.out"
fi
if [ -n "$up" ]; then
  if healthcheck; then ok "HEALTHCHECK passes"; else bad "HEALTHCHECK passes"; fi
  chmod 0600 "$tokens"
  kill -HUP "$cpid"
  if ! healthcheck; then ok "HEALTHCHECK fails while the tokens file cannot be read (docker kill -s HUP read it again)"; else bad "HEALTHCHECK fails while the tokens file cannot be read"; fi
  chmod 0640 "$tokens"
  kill -HUP "$cpid"
  naps=()
  for i in 1 2; do
    rm -f "$image$docker_home/nap-started"
    curl -s -o "$work/nap$i.json" -H "Authorization: Bearer $alice" -H 'Content-Type: application/json' \
      -H 'Accept: application/json' -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' -H 'Mcp-Name: nap' \
      --data-binary "{\"jsonrpc\":\"2.0\",\"id\":$i,\"method\":\"tools/call\",\"params\":{\"name\":\"nap\",\"arguments\":{\"s\":600},\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}}}}" \
      "http://127.0.0.1:$cport/mcp" &
    naps+=("$!")
    for _ in $(seq 1 300); do [ -e "$image$docker_home/nap-started" ] && break; sleep 0.05; done
  done
  t0=$(date +%s.%N)
  kill -TERM "$cpid"
  cstatus=timeout
  # docker stop: SIGKILL 10 s after SIGTERM.
  for _ in $(seq 1 100); do
    if ! kill -0 "$cpid" 2>/dev/null; then wait "$cpid"; cstatus=$?; break; fi
    sleep 0.1
  done
  took=$(python3 -c "import time; print(f'{time.time() - $t0:.2f}')")
  echo "measure - SIGTERM to exit, two workers, two tools outliving the drain: $took s"
  for p in "${naps[@]}"; do wait "$p"; done
  if [ "$cstatus" = 0 ] && grep -q "the server was stopping" "$work/nap1.json" && grep -q "the server was stopping" "$work/nap2.json" \
     && grep -q "HTTP server stopped (SIGTERM): 2 calls drained (2 interrupted), 0 queued calls not run" "$work/image.out"; then
    ok "docker stop: with two workers and two tools outliving the drain, exit 0 within docker's 10 s grace; both calls say the server was stopping; the stop line counts them"
  else
    bad "docker stop: exit 0 within 10 s (status $cstatus after $took s)" "$work/image.out"
  fi
fi

finish
