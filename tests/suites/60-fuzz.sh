#!/usr/bin/env bash
# Short libFuzzer runs of the engine fuzz targets (fuzz/fuzz_targets/*.rs):
# framing, parse_line, dispatch, projection, numfmt. Each runs for
# MCPLITE_FUZZ_SECONDS (default 15) from the committed seeds plus the corpus
# earlier runs of this checkout found (target/fuzz-corpus/<target>, kept as
# cargo keeps target/: each run goes on from where the last one stopped
# instead of finding the same inputs again; MCPLITE_FUZZ_CORPUS moves it); a crash, an oracle failure, a timeout or an out-of-memory counts as a
# failure and leaves its input under fuzz/artifacts/<target>/.
# Reproduce: RUSTC_BOOTSTRAP=1 cargo fuzz run <target> fuzz/artifacts/<target>/<file>
# The build is cargo fuzz's (release, ASan, coverage instrumentation, line
# tables only) with fuzz/Cargo.toml's opt-levels: 3 for the engine, libFuzzer
# and the crates on the fuzzed paths, 1 for the rest of the dependency graph.
# The run uses a fixed libFuzzer seed (MCPLITE_FUZZ_SEED, default 1), so a
# finding in CI is found again by the same command; exploration with random
# seeds (MCPLITE_FUZZ_SEED=0) and long runs are done by hand (fuzz/README.md).
set -uo pipefail
cd "$(dirname "$0")/../.."
export PATH="$PATH:$HOME/.cargo/bin"
# libFuzzer and the sanitizer flags are unstable; allow them on stable rustc.
export RUSTC_BOOTSTRAP=1
secs="${MCPLITE_FUZZ_SECONDS:-15}"
corpus="${MCPLITE_FUZZ_CORPUS:-$PWD/target/fuzz-corpus}"
seed="${MCPLITE_FUZZ_SEED:-1}"
targets="framing parse_line dispatch projection numfmt"
pass=0
fail=0

if ! command -v cargo-fuzz >/dev/null 2>&1; then
  echo "cargo-fuzz is not installed (scripts/deps/60-fuzz.sh)"
  echo "0 passed, 1 failed"
  exit 1
fi

# fuzz/ is a workspace of its own with its own committed lock file; it must
# name the same version of every crate the root workspace's Cargo.lock has
# (the fuzzed engine is the one the tests test) and be complete, so that the
# build resolves nothing anew (cargo fuzz build has no --locked).
if python3 - Cargo.lock fuzz/Cargo.lock <<'PY' && cargo metadata --locked --format-version 1 \
  --manifest-path fuzz/Cargo.toml >/dev/null 2>target-fuzz-lock.log; then
import sys, tomllib
ws, fz = ({(p["name"], p["version"]) for p in tomllib.load(open(f, "rb"))["package"]} for f in sys.argv[1:])
ws_names = {n for n, _ in ws}
differ = sorted(f"{n} {v}" for n, v in fz - ws if n in ws_names)
if differ:
    sys.exit("fuzz/Cargo.lock has versions Cargo.lock does not: " + ", ".join(differ))
PY
  pass=$((pass + 1))
  echo "ok   fuzz/Cargo.lock is complete and agrees with Cargo.lock"
else
  fail=$((fail + 1))
  echo "FAIL fuzz/Cargo.lock is complete and agrees with Cargo.lock (update it: cd fuzz && cargo update -p CRATE --precise VERSION)"
  cat target-fuzz-lock.log 2>/dev/null
fi
rm -f target-fuzz-lock.log

echo "building fuzz targets"
if ! cargo fuzz build >target-fuzz-build.log 2>&1; then
  tail -30 target-fuzz-build.log
  rm -f target-fuzz-build.log
  echo "0 passed, 1 failed"
  exit 1
fi
rm -f target-fuzz-build.log

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The targets run as many at a time as the machine has cores (each is one
# process on one core, for a fixed wall time): on 2 cores the five take
# three rounds of MCPLITE_FUZZ_SECONDS instead of five. Reported in order.
jobs_max=$(nproc 2>/dev/null || echo 1)
fuzz_one() { # target
  local t=$1 seeds=() log="$work/$1.log"
  mkdir -p "$corpus/$t"
  [ -d "fuzz/seeds/$t" ] && seeds=("fuzz/seeds/$t")
  cargo fuzz run "$t" "$corpus/$t" "${seeds[@]}" -- \
    -max_total_time="$secs" -seed="$seed" -timeout=20 -rss_limit_mb=3072 -max_len=65536 \
    -dict=fuzz/dict/jsonrpc.dict -print_final_stats=1 >"$log" 2>&1
  echo $? >"$work/$t.rc"
}
running=0
for t in $targets; do
  if [ "$running" -ge "$jobs_max" ]; then
    wait -n
    running=$((running - 1))
  fi
  fuzz_one "$t" &
  running=$((running + 1))
done
wait
for t in $targets; do
  log="$work/$t.log"
  rc=$(cat "$work/$t.rc" 2>/dev/null || echo 1)
  runs=$(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}')
  if [ "$rc" -eq 0 ] && grep -q '^Done' "$log"; then
    pass=$((pass + 1))
    echo "ok   $t: ${runs:-?} runs in ${secs}s"
  else
    fail=$((fail + 1))
    echo "FAIL $t (exit $rc)"
    grep -E 'panicked|SUMMARY|ERROR|Test unit written' -A3 "$log" | cut -c1-600 | head -40
  fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
