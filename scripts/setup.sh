#!/usr/bin/env bash
# Install what mcplite needs on Debian 12 (as root), then build the package
# (with its vignettes) and install it. Idempotent: already-installed pieces
# are skipped.
set -euo pipefail
cd "$(dirname "$0")/.."

pkgs="r-base-dev r-cran-jsonlite r-cran-testthat r-cran-processx r-cran-withr
r-cran-roxygen2 r-cran-knitr r-cran-rmarkdown r-cran-pkgdown r-cran-tibble r-cran-png
r-cran-hms r-cran-data.table r-cran-blob r-cran-bit64 r-cran-lintr r-cran-lattice r-cran-yaml
pandoc qpdf make python3-venv nginx procps tmux"
missing=""
for p in $pkgs; do
  dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "== installing Debian packages:$missing"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
  export PATH="$PATH:$HOME/.cargo/bin"
fi
command -v cargo >/dev/null 2>&1 || { echo "cargo (Rust) is required: see https://rustup.rs" >&2; exit 1; }

# Build the source package (which builds the guides, the vignettes) and
# install the tarball, so that vignette(package = "mcplite") finds them: the
# README quick start's install block, run literally, line by line, in a copy
# of the clone without its build output (scripts/stage.sh), as a newcomer
# runs it in a fresh clone. 30-docs (tests/suites/30-docs.sh) checks this
# installation instead of running the block a second time, when the
# block it runs is the one run here (MCPLITE_QUICKSTART_RAN names the
# record). Both steps share one cargo target directory, so Rust is compiled
# once.
root=$(pwd)
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
lib="${MCPLITE_LIB:-}"
log=/tmp/mcplite-install.log
build_dir=$(mktemp -d)
trap 'rm -rf "$build_dir"' EXIT
block="$build_dir/quickstart-install.sh"
awk '/^<!-- quickstart: install -->$/ { f = 1; next } f && /^```sh$/ { b = 1; next } b && /^```$/ { exit } b { print }' \
  README.md >"$block"
grep -q "R CMD build" "$block" && grep -q "R CMD INSTALL" "$block" ||
  { echo "the README's quick start install block (<!-- quickstart: install -->) was not found" >&2; exit 1; }
# Each line is one command (run below one at a time, the install's output
# kept apart): a line continued with a backslash would be cut in two.
if grep -q '\\$' "$block"; then
  echo "the README's quick start install block continues a line with a backslash: write each command on one line" >&2
  exit 1
fi
echo "== building mcplite (with its vignettes) and installing it${lib:+ into $lib}: the README's install block"
src=$(bash scripts/stage.sh "$build_dir/src")
# The install's own output (what R CMD check scans for compiler warnings)
# goes to a log of its own; scripts/run-tests.sh asks for a copy next to
# the tarball, and R CMD check checks this installation instead of making
# another (scripts/check.sh, MCPLITE_CHECK_INSTALL_LOG).
# The symbol tables of the package's own object files (libs/symbols.rds,
# what R CMD check's own install writes) let the check of compiled code tell
# them from the Rust standard library's.
install_log="$build_dir/00install.out"
: >"$log"
export _R_SHLIB_BUILD_OBJECTS_SYMBOL_TABLES_=TRUE
if [ -n "$lib" ]; then
  mkdir -p "$lib"
  # R CMD INSTALL installs into the first library of R_LIBS.
  export R_LIBS="$lib${R_LIBS:+:$R_LIBS}"
fi
(
  cd "$src"
  while IFS= read -r line; do
    case "$line" in "" | "#"*) continue ;; esac
    echo "\$ $line" >>"$log"
    case "$line" in
      *"R CMD INSTALL"*) eval "$line" </dev/null >"$install_log" 2>&1 || { cat "$log" "$install_log"; exit 1; } ;;
      *) eval "$line" </dev/null >>"$log" 2>&1 || { cat "$log"; exit 1; } ;;
    esac
  done <"$block"
) || exit 1
tarball=$(ls "$src"/mcplite_*.tar.gz)
cat "$install_log" >>"$log"
# scripts/run-tests.sh has R CMD check (scripts/check.sh) check this tarball
# rather than build the same one again, and 30-docs check this installation:
# it asks for copies, and a record of the block that ran and where it
# installed.
if [ -n "${MCPLITE_KEEP_TARBALL:-}" ]; then
  mkdir -p "$MCPLITE_KEEP_TARBALL"
  cp "$tarball" "$install_log" "$MCPLITE_KEEP_TARBALL/"
  installed=$(Rscript --vanilla -e 'cat(dirname(find.package("mcplite")))')
  { echo "$installed"; cat "$block"; } >"$MCPLITE_KEEP_TARBALL/quickstart-install"
fi
echo "== mcplite installed"
