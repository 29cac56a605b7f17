#!/usr/bin/env bash
# Build the source package and run `R CMD check --as-cran` on it, without the
# checks that need the network. Cargo builds go to the repository's target
# directory, the one scripts/setup.sh builds into, so the crates.io
# dependencies compiled there are reused (in CI this saves a second release
# build of every dependency) and repeated checks are incremental.
#
#   bash scripts/check.sh            # release build of the Rust code, as users get it
#   MCPLITE_PROFILE=dev bash scripts/check.sh   # faster debug build while iterating
#
# With MCPLITE_CHECK_TARBALL set to a tarball that `R CMD build` made from
# this checkout, that tarball is checked instead of building a new one:
# scripts/run-tests.sh passes the one its set-up built minutes before from
# the same tree (the same R CMD build of the same scripts/stage.sh copy), so
# the Rust code is not compiled and the vignettes not rendered once more.
#
# scripts/run-tests.sh also sets MCPLITE_CHECK_LIB and
# MCPLITE_CHECK_INSTALL_LOG: the library its set-up installed that tarball
# into and the output of that R CMD INSTALL. The check then checks that
# installation (`--install=check:LOG --library=LIB`, as CRAN's check farm
# does: the install log is scanned for compiler warnings as if the check had
# installed the package itself) instead of compiling and installing the
# package once more. With MCPLITE_CHECK_RAN_ELSEWHERE=1 (also set by
# run-tests.sh) the check leaves out what that run does in steps of its own:
# the testthat suite (its testthat step), the examples of every help page
# (tests/suites/30-docs.sh and 31-examples.sh) and re-building the vignettes
# (the set-up's R CMD build rendered them; 30-docs.sh checks the result);
# every other check runs, the R code of the vignettes included.
#
# Exits non-zero when the check reports an ERROR or WARNING, or a NOTE other
# than the one about the top-level Cargo files the package layout requires and
# the installed-size one (the compiled engine is about 9 MB).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
export PATH="$PATH:$HOME/.cargo/bin"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
export _R_CHECK_CRAN_INCOMING_REMOTE_=false
export _R_CHECK_CRAN_INCOMING_=false
export _R_CHECK_FORCE_SUGGESTS_=false
export _R_CHECK_SYSTEM_CLOCK_=false
export NOT_CRAN="${NOT_CRAN:-true}"

out="${MCPLITE_CHECK_DIR:-$root/target/check-out}"
rm -rf "$out"
mkdir -p "$out"
cd "$out"

version=$(sed -n 's/^Version: *//p' "$root/DESCRIPTION")
tarball="mcplite_${version}.tar.gz"
if [ -n "${MCPLITE_CHECK_TARBALL:-}" ]; then
  if [ "$(basename "$MCPLITE_CHECK_TARBALL")" != "$tarball" ] || [ ! -f "$MCPLITE_CHECK_TARBALL" ]; then
    echo "MCPLITE_CHECK_TARBALL=$MCPLITE_CHECK_TARBALL is not a $tarball of this checkout"
    exit 1
  fi
  echo "== R CMD build done already: $MCPLITE_CHECK_TARBALL"
  cp "$MCPLITE_CHECK_TARBALL" "$tarball"
else
  echo "== R CMD build (CARGO_TARGET_DIR=$CARGO_TARGET_DIR, profile ${MCPLITE_PROFILE:-release})"
  R CMD build "$(bash "$root/scripts/stage.sh" "$out/src")"
fi

opts=(--as-cran --no-manual)
if [ -n "${MCPLITE_CHECK_LIB:-}" ] || [ -n "${MCPLITE_CHECK_INSTALL_LOG:-}" ]; then
  if [ -z "${MCPLITE_CHECK_TARBALL:-}" ] || [ ! -f "${MCPLITE_CHECK_INSTALL_LOG:-}" ] ||
    [ ! -f "${MCPLITE_CHECK_LIB:-}/mcplite/DESCRIPTION" ]; then
    echo "MCPLITE_CHECK_LIB and MCPLITE_CHECK_INSTALL_LOG name the installation of MCPLITE_CHECK_TARBALL:"
    echo "  a library with mcplite in it and the log of its R CMD INSTALL"
    exit 1
  fi
  if ! grep -q '^\* DONE (mcplite)' "$MCPLITE_CHECK_INSTALL_LOG"; then
    echo "$MCPLITE_CHECK_INSTALL_LOG is not the log of a finished install of mcplite"
    exit 1
  fi
  echo "== installed already: $MCPLITE_CHECK_LIB/mcplite (log $MCPLITE_CHECK_INSTALL_LOG)"
  opts+=("--install=check:$MCPLITE_CHECK_INSTALL_LOG" "--library=$MCPLITE_CHECK_LIB")
fi
if [ "${MCPLITE_CHECK_RAN_ELSEWHERE:-0}" = 1 ]; then
  opts+=(--no-tests --no-examples --no-build-vignettes)
fi
echo "== R CMD check ${opts[*]} $tarball"
set +e
R CMD check "${opts[@]}" "$tarball"
status=$?
set -e

log="mcplite.Rcheck/00check.log"
if [ ! -f "$log" ]; then
  echo "check did not produce $log"
  exit 1
fi

# Collect problems: every ERROR/WARNING, and every NOTE except the one that
# lists only the top-level Cargo files (Cargo.toml, Cargo.lock, rust/).
problems=$(Rscript --vanilla -e '
  lines <- readLines(commandArgs(TRUE)[[1]], encoding = "UTF-8", warn = FALSE)
  starts <- grep("^\\* ", lines)
  ends <- c(starts[-1] - 1L, length(lines))
  for (i in seq_along(starts)) {
    block <- lines[starts[i]:ends[i]]
    head <- block[[1]]
    if (grepl("\\.\\.\\. *(ERROR|WARNING)", head)) {
      writeLines(block)
    } else if (grepl("checking installed package size \\.\\.\\. *NOTE", head)) {
      # The compiled engine (HTTP server, OTLP export, MCP client) is about
      # 9 MB without debug information (2.5 MB of it TLS for the client);
      # a size NOTE is expected, anything else in it is not.
      libs <- grepl("^ +(libs|doc|help|R) +[0-9.]+Mb$", block[-(1:3)])
      if (!all(libs)) writeLines(block)
    } else if (grepl("\\.\\.\\. *NOTE", head)) {
      body <- block[-1]
      top <- grepl("Non-standard files/directories found at top level", body[1])
      words <- unlist(strsplit(gsub("[\u2018\u2019\u0027\u0060]", " ", body[-1]), "[[:space:]]+"))
      words <- words[nzchar(words)]
      if (!top || length(words) == 0 || !all(words %in% c("Cargo.toml", "Cargo.lock", "rust"))) writeLines(block)
    }
  }
' "$log")

echo
tail -5 "$log"
if [ "$status" -ne 0 ] || [ -n "$problems" ]; then
  echo
  echo "== check found problems:"
  [ -n "$problems" ] && echo "$problems"
  exit 1
fi
echo "== check passed (only the top-level Cargo files and installed-size NOTEs are allowed)"
