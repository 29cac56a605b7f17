#!/usr/bin/env bash
# Install the test dependencies and run every test: cargo tests, testthat
# (including end-to-end tests over stdio), and the extra suites in
# tests/suites/. Ends with one line "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
export PATH="$PATH:$HOME/.cargo/bin"

total_pass=0
total_fail=0
failed_suites=""
log_dir="${MCPLITE_TEST_LOGS:-$root/target/test-logs}"
mkdir -p "$log_dir"

record() { # name passed failed
  total_pass=$((total_pass + $2))
  total_fail=$((total_fail + $3))
  if [ "$3" -gt 0 ]; then failed_suites="$failed_suites $1"; fi
  echo "== $1: $2 passed, $3 failed"
}

echo "== setting up (Debian packages, package build)"
if ! bash scripts/setup.sh; then
  echo "setup failed"
  echo "0 passed, 1 failed"
  exit 1
fi
for dep in scripts/deps/*.sh; do
  [ -e "$dep" ] || continue
  echo "== dependencies: $dep"
  if ! bash "$dep" >"$log_dir/deps-$(basename "$dep").log" 2>&1; then
    tail -20 "$log_dir/deps-$(basename "$dep").log"
    record "deps:$(basename "$dep")" 0 1
  fi
done

if [ -z "${MCPLITE_LIB:-}" ]; then
  MCPLITE_LIB=$(Rscript -e 'cat(dirname(find.package("mcplite")))')
fi
export MCPLITE_LIB
export R_LIBS="$MCPLITE_LIB${R_LIBS:+:$R_LIBS}"
export MCPLITE_VENV="${MCPLITE_VENV:-/root/.cache/mcplite-venv}"

# 1. Rust (engine and bridge crates)
echo "== cargo test"
cargo test --workspace 2>&1 | tee "$log_dir/cargo.log" | grep -E "^test result|FAILED|panicked" || true
p=$(grep -E "^test result" "$log_dir/cargo.log" | sed -E 's/.* ([0-9]+) passed; ([0-9]+) failed.*/\1/' | awk '{s+=$1} END {print s+0}')
f=$(grep -E "^test result" "$log_dir/cargo.log" | sed -E 's/.* ([0-9]+) passed; ([0-9]+) failed.*/\2/' | awk '{s+=$1} END {print s+0}')
if ! grep -q "^test result" "$log_dir/cargo.log" || grep -q "^error" "$log_dir/cargo.log"; then f=$((${f:-0} + 1)); fi
record cargo "${p:-0}" "${f:-0}"

# 2. testthat
echo "== testthat"
Rscript --vanilla scripts/testthat-summary.R "$log_dir/testthat-counts.txt" 2>&1 | tee "$log_dir/testthat.log" | tail -40
if [ -s "$log_dir/testthat-counts.txt" ]; then
  read -r p f <"$log_dir/testthat-counts.txt"
else
  p=0; f=1
fi
record testthat "$p" "$f"

# 3. other suites
for suite in tests/suites/*.sh; do
  [ -e "$suite" ] || continue
  name=$(basename "$suite" .sh)
  echo "== suite $name"
  bash "$suite" >"$log_dir/suite-$name.log" 2>&1
  rc=$?
  tail -15 "$log_dir/suite-$name.log"
  last=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log_dir/suite-$name.log" | tail -1)
  if [ -n "$last" ]; then
    p=$(echo "$last" | sed -E 's/^([0-9]+) passed, ([0-9]+) failed.*/\1/')
    f=$(echo "$last" | sed -E 's/^([0-9]+) passed, ([0-9]+) failed.*/\2/')
  else
    p=0; f=0
  fi
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
  record "$name" "$p" "$f"
done

echo
if [ -n "$failed_suites" ]; then echo "failing:$failed_suites"; fi
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
