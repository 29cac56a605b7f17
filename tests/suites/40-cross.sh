#!/usr/bin/env bash
# Portability (macOS and Windows), as far as a Linux machine can check it:
# - `cargo clippy --all-targets -D warnings` of the whole workspace for
#   aarch64-apple-darwin (clippy runs the compiler's full check first, so
#   this is `cargo check` plus the lints; the bridge's build script reads
#   this machine's R headers, which is all a check needs); Intel macOS
#   (x86_64-apple-darwin) is left out, to save two minutes of CI: its macOS
#   code is the Apple silicon check's and its x86_64 code the Windows one's;
# - the same lints for x86_64-pc-windows-gnu, run while the Windows builds
#   below compile the workspace's crates (clippy-driver as cargo's
#   RUSTC_WORKSPACE_WRAPPER, as `cargo clippy` itself runs it): every target
#   of `--all-targets` (the engine's library, unit tests, integration tests
#   and examples; the bridge's library and, with `cargo rustc --profile
#   test`, its unit tests, compiled but not linked). Any warning (rustc's or
#   clippy's) of a workspace crate fails this check, as -D warnings would,
#   with the diagnostics listed; the tests still run. A separate `cargo
#   clippy` for Windows would compile the ~190 dependencies once more in
#   check mode, which cargo cannot share with the build;
# - the engine's unit and integration tests, including the transport tests
#   that serve over real anonymous pipes, cross-compiled for
#   x86_64-pc-windows-gnu with mingw-w64 and run under Wine, each binary
#   with the bcryptprimitives.dll stand-in beside it
#   (scripts/deps/40-cross.sh builds it): the unit tests' binary and three
#   integration test binaries (the files of rust/engine/tests/ are modules
#   of one, `integration`, reported here file by file);
# - the package's Windows DLL links: the bridge's static library built for
#   x86_64-pc-windows-gnu as src/Makevars.win builds it (debug profile),
#   src/*.c compiled with mingw-w64, linked with the PKG_LIBS of
#   src/Makevars.win; every symbol left undefined must be one R exports
#   (checked against this machine's libR.so), and with a stub import
#   library for those the link must succeed. (R's own Windows build and
#   Rtools' UCRT C runtime are not available here: see ?mcplite.)
# One target directory (the repository's target/), debug profile (opt-level 0
# and no debug information for Windows, see win_lint below), no
# release builds. Prints "N passed, N failed" last.
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
export PATH="$PATH:${CARGO_HOME:-$HOME/.cargo}/bin"
export R_HOME="${R_HOME:-$(R RHOME)}"
cross_dir="${MCPLITE_CROSS_DIR:-$HOME/.cache/mcplite-cross}"
wine=/usr/lib/wine/wine64
work=$(mktemp -d)
export WINEPREFIX="$work/wineprefix" WINEDEBUG=-all
cleanup() {
  if [ -d "$WINEPREFIX" ] && command -v wineserver >/dev/null 2>&1; then wineserver -k 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

. tests/suites/lib.sh

# The macOS targets' C code (ring's, for TLS) is compiled by clang,
# freestanding, with stand-ins for the few SDK headers it includes: a check
# needs the build scripts to run, not objects that link.
darwin_inc="$root/scripts/deps/cross/darwin-include"
for t in aarch64_apple_darwin; do
  export "CC_$t=clang" "CFLAGS_$t=-ffreestanding -nostdlibinc -isystem $darwin_inc"
done

for t in aarch64-apple-darwin; do
  log="$work/clippy-$t.log"
  if nice cargo clippy --quiet --target "$t" --workspace --all-targets -- -D warnings >"$log" 2>&1; then
    ok "cargo check + clippy -D warnings, workspace, $t"
  else
    bad "cargo check + clippy -D warnings, workspace, $t" "$log"
  fi
done

wt=x86_64-pc-windows-gnu
# clippy-driver compiles the workspace's crates (not their dependencies) and
# lints them as it does; cargo replays a fresh crate's diagnostics, so a
# second run reports them too. Lints as warnings here, collected from the
# JSON messages below, so that a lint never stops the tests from running.
clippy_driver="$(rustc --print sysroot)/bin/clippy-driver"
[ -x "$clippy_driver" ] || clippy_driver=clippy-driver
# The Windows builds are at opt-level 0 and without debug information (the
# dev profile's opt-level 1 is for the speed of the host's R tests; under
# Wine the tests wait on pipes and sockets far more than they compute, and a
# failing test's panic still names its file and line), which compiles the
# graph with less CPU and disk.
win_lint() {
  CARGO_PROFILE_DEV_OPT_LEVEL=0 CARGO_PROFILE_DEV_DEBUG=0 RUSTC_WORKSPACE_WRAPPER="$clippy_driver" CLIPPY_ARGS= \
    nice cargo "$@"
}
clippy_win="cargo check + clippy -D warnings, workspace, $wt (linted while building)"
log="$work/build-win.log"
if ! win_lint test --target "$wt" -p mcplite-engine --no-run --message-format=json >"$work/build-win.json" 2>"$log"; then
  bad "$clippy_win (the build failed)" "$log"
  bad "engine tests build for $wt" "$log"
  finish
fi
# Test harnesses only (examples are built too, but are not tests).
mapfile -t exes < <(jq -r 'select(.reason == "compiler-artifact" and .profile.test and .executable != null)
  | .executable' "$work/build-win.json" | sort -u)
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
  # The harness's results on stdout, apart from what the servers under test
  # write on stderr (access log lines, written by a thread of their own, once
  # landed inside the "test result:" line and hid a passing run).
  # (A hang guard: the integration binary holds most of the tests.)
  limit=600
  [ "$name" = integration ] && limit=1500
  timeout "$limit" "$wine" "$exe" >"$out" 2>"$out.err"
  rc=$?
  summary=$(grep -E '^test result:' "$out" | tail -1)
  passed=0
  if [ "$rc" -eq 0 ] && grep -q '^test result: ok\.' <<<"$summary"; then passed=1; fi
  if [ "$name" = integration ]; then
    # One binary, one module per test file (rust/engine/tests/main.rs):
    # reported file by file, as when each file was a binary of its own.
    modules=$(sed -n 's/^mod \([a-z_0-9]*\);$/\1/p' rust/engine/tests/main.rs | grep -vxE 'common|pipes')
    blamed=0
    for m in $modules; do
      n=$(grep -cE "^test $m::[^ ]* \.\.\. ok$" "$out")
      nf=$(grep -cE "^test $m::[^ ]* \.\.\. FAILED$" "$out")
      if [ "$passed" = 1 ]; then
        ok "under Wine: $m ($n tests)"
      elif [ "$nf" -gt 0 ]; then
        blamed=1
        bad "under Wine: $m ($nf of its tests failed)" "$out"
      else
        ok "under Wine: $m ($n tests)"
      fi
    done
    if [ "$passed" = 0 ] && [ "$blamed" = 0 ]; then
      cat "$out.err" >>"$out"
      bad "under Wine: $name (exit $rc${summary:+; $summary})" "$out"
    fi
  elif [ "$passed" = 1 ]; then
    n=$(sed -n 's/^test result: ok\. \([0-9]*\) passed.*/\1/p' <<<"$summary")
    ok "under Wine: $name ($n tests)"
  else
    cat "$out.err" >>"$out"
    bad "under Wine: $name (exit $rc${summary:+; $summary})" "$out"
  fi
done

# The bridge for Windows: its static library (below, the DLL links with it)
# and, for the lints, its unit tests, compiled but not linked (linking them
# needs R.dll; `true` stands in for the linker of that one unit).
log="$work/bridge-win.log"
win_lint build --lib -p mcplite-r --target "$wt" --message-format=json >"$work/bridge-lib-win.json" 2>"$log"
bridge_rc=$?
win_lint rustc --lib -p mcplite-r --target "$wt" --profile test --message-format=json -- -C linker=true \
  >"$work/bridge-test-win.json" 2>"$work/bridge-test-win.log"
bridge_test_rc=$?
# The diagnostics of the workspace's crates in every Windows build, each once
# (cargo replays a fresh crate's diagnostics in each build that uses it).
jq -rs '[.[] | select(.reason == "compiler-message" and (.message.level == "warning" or .message.level == "error"))
  | .message.rendered] | unique | .[]' "$work/build-win.json" "$work/bridge-lib-win.json" "$work/bridge-test-win.json" \
  >"$work/clippy-win.txt" 2>>"$work/bridge-test-win.log"
if [ "$bridge_test_rc" -ne 0 ]; then
  cat "$work/bridge-test-win.log" >>"$work/clippy-win.txt"
  bad "$clippy_win (the bridge's unit tests did not compile)" "$work/clippy-win.txt"
elif [ -s "$work/clippy-win.txt" ]; then
  bad_text "$clippy_win: $(grep -c '^\(warning\|error\)' "$work/clippy-win.txt") diagnostics" "$(cat "$work/clippy-win.txt")"
else
  ok "$clippy_win"
fi

# The Windows DLL links with src/Makevars.win's libraries.
if [ "$bridge_rc" -eq 0 ]; then
  ok "bridge static library builds for $wt"
  libs=$(sed -n 's/^PKG_LIBS *= *//p' src/Makevars.win | sed 's/-Lrustlib//; s/-lmcplite//')
  rinc=$(R RHOME)/include
  [ -f "$rinc/Rinternals.h" ] || rinc=/usr/share/R/include
  objs=()
  cc_ok=1
  for c in src/*.c; do
    o="$work/$(basename "$c" .c).o"
    x86_64-w64-mingw32-gcc -O2 -I"$rinc" -c "$c" -o "$o" >>"$log" 2>&1 || cc_ok=0
    objs+=("$o")
  done
  # As R's share/make/winshlib.mk links a package's DLL: the symbols the
  # package's own object files define are its exports (tmp.def), not
  # everything in the static libraries it links (an unoptimized Rust library
  # has more symbols than a DLL can export).
  {
    echo EXPORTS
    x86_64-w64-mingw32-nm "${objs[@]}" | sed -n 's/^.* [BCDRT] / /p' | grep -v '\.refptr\.'
  } >"$work/tmp.def"
  # shellcheck disable=SC2086
  x86_64-w64-mingw32-gcc -shared -o "$work/mcplite.dll" "$work/tmp.def" "${objs[@]}" -L"target/$wt/debug" -lmcplite $libs \
    >"$work/link1.log" 2>&1
  grep -o "undefined reference to \`[^']*'" "$work/link1.log" | sed "s/undefined reference to \`//; s/'\$//" |
    sort -u >"$work/undef.txt"
  nm -D --defined-only "$(R RHOME)/lib/libR.so" | awk '{print $NF}' | sort -u >"$work/rsyms.txt"
  sed 's/^__imp_//' "$work/undef.txt" | sort -u | comm -23 - "$work/rsyms.txt" >"$work/missing.txt"
  if [ "$cc_ok" = 1 ] && [ -s "$work/undef.txt" ] && [ ! -s "$work/missing.txt" ]; then
    ok "only R's own symbols are left undefined ($(wc -l <"$work/undef.txt") symbols)"
  else
    { echo "not R symbols:"; cat "$work/missing.txt"; } >>"$log"
    bad "only R's own symbols are left undefined by src/Makevars.win's PKG_LIBS" "$log"
  fi
  {
    echo "LIBRARY R.dll"
    echo "EXPORTS"
    grep '^__imp_' "$work/undef.txt" | sed 's/^__imp_//' | sort -u | comm -12 - "$work/rsyms.txt" | sed 's/$/ DATA/'
    grep -v '^__imp_' "$work/undef.txt" | comm -12 - "$work/rsyms.txt"
  } | awk '!seen[$1]++' >"$work/R.def"
  # The stub import library holds R's symbols only.
  # shellcheck disable=SC2086
  if x86_64-w64-mingw32-dlltool -d "$work/R.def" -l "$work/libR.a" -D R.dll >>"$log" 2>&1 &&
    x86_64-w64-mingw32-gcc -shared -o "$work/mcplite.dll" "$work/tmp.def" "${objs[@]}" -L"target/$wt/debug" -L"$work" \
      -lmcplite $libs -lR >>"$log" 2>&1 &&
    x86_64-w64-mingw32-objdump -p "$work/mcplite.dll" >"$work/dll.txt" && grep -q 'R_init_mcplite$' "$work/dll.txt"; then
    ok "mcplite.dll links for $wt and exports R_init_mcplite"
  else
    bad "mcplite.dll links for $wt and exports R_init_mcplite" "$log"
  fi
else
  bad "bridge static library builds for $wt" "$log"
fi
finish
