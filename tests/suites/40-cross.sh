#!/usr/bin/env bash
# Portability (macOS and Windows), as far as a Linux machine can check it:
# - `cargo clippy --all-targets -D warnings` of the whole workspace for
#   x86_64-apple-darwin, aarch64-apple-darwin and x86_64-pc-windows-gnu
#   (clippy runs the compiler's full check first, so this is `cargo check`
#   plus the lints; the bridge's build script reads this machine's R
#   headers, which is all a check needs);
# - the engine's unit and integration tests, including the transport tests
#   that serve over real anonymous pipes, cross-compiled for
#   x86_64-pc-windows-gnu with mingw-w64 and run under Wine, each binary
#   with the bcryptprimitives.dll stand-in beside it
#   (scripts/deps/40-cross.sh builds it).
# One target directory (the repository's target/), debug profile, no
# release builds. Prints "N passed, N failed" last.
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
export PATH="$PATH:${CARGO_HOME:-$HOME/.cargo}/bin"
export R_HOME="${R_HOME:-$(R RHOME)}"
cross_dir="${MCPLITE_CROSS_DIR:-/root/.cache/mcplite-cross}"
wine=/usr/lib/wine/wine64
work=$(mktemp -d)
export WINEPREFIX="$work/wineprefix" WINEDEBUG=-all
cleanup() {
  if [ -d "$WINEPREFIX" ] && command -v wineserver >/dev/null 2>&1; then wineserver -k 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   - $1"; }
bad() { fail=$((fail + 1)); echo "FAIL - $1"; [ -n "${2:-}" ] && [ -f "$2" ] && tail -30 "$2" | sed 's/^/       /'; }
finish() { echo "$pass passed, $fail failed"; [ "$fail" -eq 0 ]; exit $?; }

for t in x86_64-apple-darwin aarch64-apple-darwin x86_64-pc-windows-gnu; do
  log="$work/clippy-$t.log"
  if nice cargo clippy --quiet --target "$t" --workspace --all-targets -- -D warnings >"$log" 2>&1; then
    ok "cargo check + clippy -D warnings, workspace, $t"
  else
    bad "cargo check + clippy -D warnings, workspace, $t" "$log"
  fi
done

wt=x86_64-pc-windows-gnu
log="$work/build-win.log"
if ! nice cargo test --target "$wt" -p mcplite-engine --no-run --message-format=json >"$work/build-win.json" 2>"$log"; then
  bad "engine tests build for $wt" "$log"
  finish
fi
mapfile -t exes < <(sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' "$work/build-win.json" | sort -u)
if [ "${#exes[@]}" -eq 0 ]; then
  bad "engine tests build for $wt (no test executables)" "$log"
  finish
fi
ok "engine tests build for $wt (${#exes[@]} test binaries)"

if [ ! -x "$wine" ] || [ ! -f "$cross_dir/bcryptprimitives.dll" ]; then
  bad "Wine and the bcryptprimitives.dll stand-in are installed (scripts/deps/40-cross.sh)"
  finish
fi
"$wine" cmd /c exit >"$work/wineboot.log" 2>&1 || true

for exe in "${exes[@]}"; do
  name=$(basename "$exe" .exe)
  name=${name%-*}
  cp "$cross_dir/bcryptprimitives.dll" "$(dirname "$exe")/"
  out="$work/wine-$name.log"
  timeout 600 "$wine" "$exe" >"$out" 2>&1
  rc=$?
  summary=$(grep -E '^test result:' "$out" | tail -1)
  if [ "$rc" -eq 0 ] && grep -q '^test result: ok\.' <<<"$summary"; then
    n=$(sed -n 's/^test result: ok\. \([0-9]*\) passed.*/\1/p' <<<"$summary")
    ok "under Wine: $name ($n tests)"
  else
    bad "under Wine: $name (exit $rc${summary:+; $summary})" "$out"
  fi
done
finish
