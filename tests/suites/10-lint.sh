#!/usr/bin/env bash
# Lint gate, run by scripts/run-tests.sh (and alone: bash tests/suites/10-lint.sh):
#   1. rustfmt: the workspace and the fuzz/bench crates are formatted (rustfmt.toml);
#   2. clippy: every crate of the workspace, all targets, no warnings (linted
#      while the cargo step builds them, below); and the engine without its
#      `net` feature (the fuzz targets' build), its library and unit tests;
#   3. roxygen: man/ and NAMESPACE are what roxygen2 makes from R/ today;
#   4. the minimum Rust version is the same in Cargo.toml, DESCRIPTION, src/Makevars and src/Makevars.win.
#   5. lintr: the package's R code (R/) has no lints under the configuration in .lintr
#      (tests and examples are not linted: long JSON literals and test doubles);
#   6. the hand-written R wrappers (R/bridge-wrappers.R) match the functions the
#      bridge's extendr_module! blocks export (scripts/check-wrappers.py);
#   7. no import cycle between the engine's files (scripts/check-cycles.py).
# clippy's undocumented_unsafe_blocks (every unsafe block has a SAFETY comment)
# is on for every crate through [workspace.lints] in Cargo.toml.
# Prints "N passed, N failed" last and exits non-zero on any failure.
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
export PATH="$PATH:$HOME/.cargo/bin"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

. tests/suites/lib.sh
check() { # name log command...
  local name=$1 log=$2
  shift 2
  if "$@" >"$log" 2>&1; then ok "$name"; else bad "$name" "$log"; fi
}

fmt_all() {
  cargo fmt --all --check || return 1
  local d
  for d in fuzz bench/floor bench/driver; do
    (cd "$d" && cargo fmt --check) || return 1
  done
}
check "cargo fmt --check (workspace, fuzz, bench)" "$work/fmt.log" fmt_all

# The workspace's lints ride on the cargo step's build (scripts/run-tests.sh
# runs `cargo test` with clippy-driver as cargo's RUSTC_WORKSPACE_WRAPPER,
# as `cargo clippy` itself runs it): clippy-driver compiles the workspace's
# crates and lints them as it does, so the graph is not compiled a second
# time in check mode. Here the same build again, fresh after that step
# (compiled now when run alone), replays each crate's diagnostics: any
# warning (rustc's or clippy's) of a workspace crate fails, as -D warnings
# would. `cargo test` builds every target `--all-targets` names here (the
# libraries, their unit tests, the integration tests and the examples; the
# workspace has no benches).
clippy_driver="$(rustc --print sysroot)/bin/clippy-driver"
[ -x "$clippy_driver" ] || clippy_driver=clippy-driver
# (--cap-lints=warn: a lint that denies, clippy's correctness group for one,
# is reported here as a warning and fails this check, but it does not stop
# the cargo step from compiling and running the tests.)
workspace_lints() {
  local rc=0
  RUSTC_WORKSPACE_WRAPPER="$clippy_driver" CLIPPY_ARGS=--cap-lints=warn \
    cargo test --workspace --no-run --locked --message-format=json >"$work/lints.json" || rc=1
  python3 - "$work/lints.json" <<'PY' || rc=1
import json, sys
seen = []
for line in open(sys.argv[1]):
    if not line.startswith("{"):
        continue
    m = json.loads(line)
    if m.get("reason") == "compiler-message" and m["message"]["level"] in ("warning", "error"):
        text = m["message"]["rendered"]
        if text not in seen:
            seen.append(text)
print("".join(seen), end="")
sys.exit(1 if seen else 0)
PY
  return $rc
}
check "cargo clippy --workspace --all-targets -D warnings (linted while the cargo step built)" "$work/clippy.log" \
  workspace_lints
check "cargo clippy -p mcplite-engine --no-default-features --lib --tests -D warnings" "$work/clippy-nonet.log" \
  cargo clippy -p mcplite-engine --no-default-features --lib --tests --locked -- -D warnings

roxygen_in_sync() {
  local copy="$work/pkg"
  mkdir -p "$copy"
  cp -R DESCRIPTION NAMESPACE R man "$copy/"
  # the R code is loaded from the installed package (the copy has no src/)
  (cd "$copy" && Rscript --vanilla -e 'suppressMessages(roxygen2::roxygenise(roclets = c("rd", "namespace"), load_code = roxygen2::load_installed))') || return 1
  diff -r "$root/man" "$copy/man" && diff "$root/NAMESPACE" "$copy/NAMESPACE"
}
check "man/ and NAMESPACE match roxygen2 (run roxygen2::roxygenise())" "$work/roxygen.log" roxygen_in_sync

msrv_consistent() {
  local cargo desc make makewin
  cargo=$(sed -n 's/^rust-version *= *"\([0-9.]*\)".*/\1/p' Cargo.toml)
  desc=$(tr '\n' ' ' <DESCRIPTION | sed -n 's/.*rustc >= \([0-9.]*\).*/\1/p')
  make=$(sed -n 's/^MIN_RUSTC *= *\([0-9.]*\).*/\1/p' src/Makevars)
  makewin=$(sed -n 's/^MIN_RUSTC *= *\([0-9.]*\).*/\1/p' src/Makevars.win)
  echo "Cargo.toml: $cargo, DESCRIPTION: $desc, src/Makevars: $make, src/Makevars.win: $makewin"
  [ -n "$cargo" ] && [ "$cargo" = "$desc" ] && [ "$cargo" = "$make" ] && [ "$cargo" = "$makewin" ]
}
check "minimum Rust version agrees (Cargo.toml, DESCRIPTION, src/Makevars, src/Makevars.win)" "$work/msrv.log" msrv_consistent

# lintr's cache (in target/, kept from run to run as cargo keeps target/)
# holds each expression's lints keyed by the expression and the linter (its
# code and settings): an unchanged file is not linted again.
lintr_clean() {
  mkdir -p target/lintr-cache
  Rscript --vanilla -e 'l <- lintr::lint_dir("R", cache = "target/lintr-cache"); print(l); quit(status = if (length(l) > 0L) 1L else 0L)'
}
check "lintr: R/ has no lints (.lintr)" "$work/lintr.log" lintr_clean

check "the R wrappers match the bridge's exported functions (scripts/check-wrappers.py)" "$work/wrappers.log" \
  python3 scripts/check-wrappers.py

check "no import cycle between the engine's files (scripts/check-cycles.py)" "$work/cycles.log" \
  python3 scripts/check-cycles.py

finish
