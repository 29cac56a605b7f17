#!/bin/sh
# Install mcplite from its source tarball, offline, into a library directory.
#
#   sh install-mcplite.sh mcplite_0.1.0.tar.gz /opt/mcplite/library
#
# The tarball is the one made from a clone with
#   bash scripts/vendor.sh && R CMD build .
# which carries the sources of every Rust crate mcplite needs, so nothing is
# downloaded. Needs R with its headers and a C toolchain (Debian: r-base-dev),
# jsonlite (r-cran-jsonlite), xz, and Rust >= 1.85 (cargo, rustc) on PATH.
# The Dockerfile next to this file runs this script to build its image, and
# mcplite's own tests run it as is, in a new directory with the network cut
# off, so the recipe stays tested.
#
# MCPLITE_BUILD_CACHE=DIR keeps the Rust build (and the unpacked crates,
# whose paths are part of cargo's record of what it built) in DIR between
# installs, so that an install of the same crates compiles only mcplite's
# own two: for a Docker build cache mount,
#   RUN --mount=type=cache,target=/cache MCPLITE_BUILD_CACHE=/cache sh ...
# Unset (the default), each install builds everything in R's temporary
# directory and keeps nothing. What is in DIR goes into the installed
# package: use a directory only the installing user can write.
set -eu
if [ "$#" -ne 2 ]; then
  echo "usage: $0 TARBALL LIBRARY" >&2
  exit 2
fi
tarball=$1
lib=$2
if [ ! -f "$tarball" ]; then
  echo "install-mcplite.sh: no tarball at $tarball" >&2
  exit 1
fi
if ! tar -tzf "$tarball" | grep -qx "mcplite/src/rust-vendor.tar.xz"; then
  echo "install-mcplite.sh: $tarball carries no Rust crates; build it with" >&2
  echo "  bash scripts/vendor.sh && R CMD build ." >&2
  exit 1
fi
mkdir -p "$lib"
# The crates come from the tarball; never ask a registry.
export MCPLITE_OFFLINE=1 CARGO_NET_OFFLINE=true
unset CARGO_TARGET_DIR
if [ -n "${MCPLITE_BUILD_CACHE:-}" ]; then
  mkdir -p "$MCPLITE_BUILD_CACHE"
  MCPLITE_BUILD_CACHE=$(cd "$MCPLITE_BUILD_CACHE" && pwd)
  export MCPLITE_BUILD_CACHE
fi
R CMD INSTALL --library="$lib" "$tarball"
R_LIBS="$lib" Rscript --vanilla -e 'library(mcplite); cat("mcplite", format(packageVersion("mcplite")), "installed in", dirname(find.package("mcplite")), "\n")'
