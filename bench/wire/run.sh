#!/usr/bin/env bash
# The wire check: one corpus of request lines through two installed builds of
# mcplite, over stdio and over Streamable HTTP, and the answers compared
# (issue 42: "the wire corpus byte-identical before and after" a change that
# must not change behaviour). Results of past runs: bench/results/wire-identity.md.
#
#   bash bench/wire/run.sh BEFORE_LIB AFTER_LIB [OUT_DIR]
#
# BEFORE_LIB and AFTER_LIB are R libraries that hold mcplite, e.g. one per
# commit made in a worktree of it:
#   git worktree add --detach /tmp/wt-X COMMIT && cd /tmp/wt-X &&
#   MCPLITE_PROFILE=dev R CMD INSTALL --no-test-load --library=/tmp/lib-X .
#
# The corpus, the server and the HTTP client are those of the earlier checks:
#   - bench/results/engine-issue14/wire-corpus.py: 1,015 lines (every request
#     shape of both eras and every legacy version, odd ids, envelope and parse
#     errors, notifications, client responses, 500 seeded random tool calls);
#   - bench/results/engine-issue14/wire-server.R: tools whose results use every
#     projection-sensitive feature; it serves stdio, or HTTP with
#     MCPLITE_TRANSPORT=http;
#   - bench/results/http-split/http-wire.py: each line POSTed three ways
#     (legacy in one session, modern with and without the mirrored headers),
#     then transport-level cases; status, the headers that matter and the
#     body of every answer, one request at a time.
#
# Compared:
#   - stdio: the response lines as a multiset (the reader thread answers some
#     lines while a tool runs, RULES C5, so their order varies between runs of
#     one build; it is reported, not required), and standard error byte for
#     byte;
#   - HTTP: every answer, byte for byte (sequential, so deterministic), and
#     the server's standard error (start-up line and access log) with the
#     port, times and durations masked.
# With MCPLITE_WORKERS=N (N > 1) in the environment both servers run their
# tools in N worker processes: the HTTP comparison then covers the pool too,
# while the stdio one is shown but not counted (the corpus arrives as one
# burst that fills the pool's queue, and which calls are refused as busy,
# RULES N3.1, depends on timing).
# Everything is kept in OUT_DIR (default: a new temporary directory). Prints
# what differs and exits 1 if anything does, 0 if both builds answered alike.
set -uo pipefail
if [ "$#" -lt 2 ] || [ "$#" -gt 3 ]; then
  echo "usage: bash bench/wire/run.sh BEFORE_LIB AFTER_LIB [OUT_DIR]" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
results="$here/../results"
corpus="$results/engine-issue14/wire-corpus.py"
server="$results/engine-issue14/wire-server.R"
client="$results/http-split/http-wire.py"
out=${3:-$(mktemp -d /tmp/mcplite-wire.XXXXXX)}
mkdir -p "$out"
declare -A lib=([before]="$1" [after]="$2")
for side in before after; do
  if [ ! -f "${lib[$side]}/mcplite/DESCRIPTION" ]; then
    echo "no mcplite in ${lib[$side]} ($side)" >&2
    exit 2
  fi
done

pid=
stop_server() {
  if [ -n "$pid" ]; then
    kill -TERM "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    pid=
  fi
}
trap stop_server EXIT

fail=0
stdio_counts=1
if [ "${MCPLITE_WORKERS:-1}" -gt 1 ] 2>/dev/null; then
  stdio_counts=0
  echo "MCPLITE_WORKERS=$MCPLITE_WORKERS: tools run in worker processes; stdio differences are not counted"
fi
python3 "$corpus" >"$out/in.jsonl"
echo "corpus: $(wc -l <"$out/in.jsonl") lines; output in $out"

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

for side in before after; do
  l=${lib[$side]}
  echo "$side: $l/mcplite ($(R_LIBS="$l" Rscript --vanilla -e 'cat(find.package("mcplite"))' 2>/dev/null))"
  # stdio: the server reads the corpus to its end, then exits.
  R_LIBS="$l" timeout 600 Rscript --vanilla "$server" <"$out/in.jsonl" >"$out/$side.stdio.out" 2>"$out/$side.stdio.err"
  rc=$?
  echo "  stdio: exit $rc, $(wc -l <"$out/$side.stdio.out") response lines"
  [ "$rc" = 0 ] || fail=1
  sort "$out/$side.stdio.out" >"$out/$side.stdio.sorted"
  # HTTP: a server on a free loopback port, asked once it answers /health.
  port=$(free_port)
  MCPLITE_TRANSPORT=http MCPLITE_PORT=$port R_LIBS="$l" Rscript --vanilla "$server" \
    </dev/null >"$out/$side.http-server.out" 2>"$out/$side.http-server.err" &
  pid=$!
  ready=0
  for _ in $(seq 1 600); do
    if curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1; then
      ready=1
      break
    fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if [ "$ready" = 0 ]; then
    echo "  HTTP: the server never answered /health (see $out/$side.http-server.err)" >&2
    exit 1
  fi
  python3 "$client" "$port" <"$out/in.jsonl" >"$out/$side.http.txt" 2>"$out/$side.http-client.err"
  rc=$?
  echo "  HTTP: client exit $rc, $(wc -l <"$out/$side.http.txt") answers"
  [ "$rc" = 0 ] || fail=1
  stop_server
  sed -E 's/127\.0\.0\.1:[0-9]+/127.0.0.1:PORT/g; s/time=[^ ]+/time=T/; s/duration_ms=[^ ]+/duration_ms=D/' \
    "$out/$side.http-server.err" >"$out/$side.http-server.masked"
done

md5() { md5sum <"$1" | cut -c1-32; }
if cmp -s "$out/before.stdio.sorted" "$out/after.stdio.sorted"; then
  echo "stdio responses: identical multiset ($(wc -l <"$out/after.stdio.out") lines, sorted md5 $(md5 "$out/after.stdio.sorted"))"
else
  [ "$stdio_counts" = 0 ] || fail=1
  echo "stdio responses: DIFFER (sorted md5 $(md5 "$out/before.stdio.sorted") before, $(md5 "$out/after.stdio.sorted") after):"
  diff "$out/before.stdio.sorted" "$out/after.stdio.sorted" | head -40
fi
if cmp -s "$out/before.stdio.out" "$out/after.stdio.out"; then
  echo "stdio order: the same"
else
  echo "stdio order: differs (allowed: RULES C5)"
fi
if cmp -s "$out/before.stdio.err" "$out/after.stdio.err"; then
  echo "stdio stderr: identical ($(wc -l <"$out/after.stdio.err") lines)"
else
  [ "$stdio_counts" = 0 ] || fail=1
  echo "stdio stderr: DIFFERS:"
  diff "$out/before.stdio.err" "$out/after.stdio.err" | head -40
fi
if cmp -s "$out/before.http.txt" "$out/after.http.txt"; then
  echo "HTTP answers: identical ($(wc -l <"$out/after.http.txt") answers, md5 $(md5 "$out/after.http.txt"))"
else
  fail=1
  echo "HTTP answers: DIFFER (md5 $(md5 "$out/before.http.txt") before, $(md5 "$out/after.http.txt") after):"
  diff "$out/before.http.txt" "$out/after.http.txt" | head -40
fi
if cmp -s "$out/before.http-server.masked" "$out/after.http-server.masked"; then
  echo "HTTP server stderr: identical but for port, times and durations ($(wc -l <"$out/after.http-server.masked") lines)"
else
  fail=1
  echo "HTTP server stderr: DIFFERS (port, times and durations masked):"
  diff "$out/before.http-server.masked" "$out/after.http-server.masked" | head -40
fi
if [ "$fail" = 0 ]; then echo "wire: identical"; else echo "wire: DIFFERENT"; fi
exit "$fail"
