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
# install the tarball, so that vignette(package = "mcplite") finds them. Both
# steps share one cargo target directory, so Rust is compiled once.
root=$(pwd)
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
lib="${MCPLITE_LIB:-}"
log=/tmp/mcplite-install.log
build_dir=$(mktemp -d)
trap 'rm -rf "$build_dir"' EXIT
echo "== building mcplite (with its vignettes)"
src=$(bash scripts/stage.sh "$build_dir/src")
(cd "$build_dir" && R CMD build "$src") >"$log" 2>&1 || { cat "$log"; exit 1; }
tarball=$(ls "$build_dir"/mcplite_*.tar.gz)
# scripts/run-tests.sh has R CMD check (scripts/check.sh) check this tarball
# rather than build the same one again: it asks for a copy.
if [ -n "${MCPLITE_KEEP_TARBALL:-}" ]; then
  mkdir -p "$MCPLITE_KEEP_TARBALL"
  cp "$tarball" "$MCPLITE_KEEP_TARBALL/"
fi
echo "== installing mcplite${lib:+ into $lib}"
# The install's own output (what R CMD check scans for compiler warnings)
# goes to a log of its own; scripts/run-tests.sh asks for a copy next to
# the tarball, and R CMD check checks this installation instead of making
# another (scripts/check.sh, MCPLITE_CHECK_INSTALL_LOG).
# The symbol tables of the package's own object files (libs/symbols.rds,
# what R CMD check's own install writes) let the check of compiled code tell
# them from the Rust standard library's.
install_log="$build_dir/00install.out"
export _R_SHLIB_BUILD_OBJECTS_SYMBOL_TABLES_=TRUE
if [ -n "$lib" ]; then
  mkdir -p "$lib"
  R CMD INSTALL --no-test-load --library="$lib" "$tarball" >"$install_log" 2>&1 || { cat "$log" "$install_log"; exit 1; }
else
  R CMD INSTALL --no-test-load "$tarball" >"$install_log" 2>&1 || { cat "$log" "$install_log"; exit 1; }
fi
cat "$install_log" >>"$log"
if [ -n "${MCPLITE_KEEP_TARBALL:-}" ]; then cp "$install_log" "$MCPLITE_KEEP_TARBALL/"; fi
echo "== mcplite installed"
