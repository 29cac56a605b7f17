#!/bin/sh
# Builds the Rust bridge crate (rust/mcplite-r) with cargo and copies its
# static library to rustlib/libmcplite.a. Run by src/Makevars and
# src/Makevars.win, from src/:
#
#   sh ../tools/build-engine.sh MIN_RUSTC [TARGET]
#
# MIN_RUSTC is the minimum rustc (Makevars' MIN_RUSTC, the same as
# rust-version in Cargo.toml and DESCRIPTION's SystemRequirements); TARGET a
# Rust target to build for (Windows: x86_64-pc-windows-gnu), empty for the
# host's. MCPLITE_PROFILE=dev gives a fast debug build; CARGO_TARGET_DIR is
# honoured; MCPLITE_OFFLINE=1 adds --offline. A source tarball made after
# scripts/vendor.sh carries rust-vendor.tar.xz: then every crate is built
# from those checksummed sources, offline, with CARGO_HOME inside the build
# directory (nothing is fetched and nothing is written to the user's home).
set -e
min_rustc="$1"
target="${2:-}"

# cargo where rustup puts it; on Windows also under the user's profile.
up=""
if [ -n "${USERPROFILE:-}" ] && command -v cygpath >/dev/null 2>&1; then
  up="$(cygpath -u "$USERPROFILE")/.cargo/bin"
fi
export PATH="$PATH:${CARGO_HOME:-$HOME/.cargo}/bin:$HOME/.cargo/bin${up:+:$up}"

if ! command -v cargo >/dev/null 2>&1; then
  echo "------------------------------------------------------------"
  echo "mcplite needs Rust: cargo was not found on PATH."
  if [ -n "$target" ]; then
    echo "Install Rust (rustc >= $min_rustc) from https://rustup.rs, add the"
    echo "target with: rustup target add $target"
    echo "then install mcplite again."
  else
    echo "Install Rust (rustc >= $min_rustc) from https://rustup.rs or your"
    echo "system's package manager, then install mcplite again."
  fi
  echo "------------------------------------------------------------"
  exit 1
fi

rv=$(rustc --version 2>/dev/null | sed -n 's/^rustc \([0-9]*\)\.\([0-9]*\).*/\1 \2/p')
set -- $rv
min_minor=$(echo "$min_rustc" | cut -d. -f2)
if [ -z "${1:-}" ] || [ "$1" -lt 1 ] || { [ "$1" -eq 1 ] && [ "$2" -lt "$min_minor" ]; }; then
  echo "------------------------------------------------------------"
  echo "mcplite needs rustc >= $min_rustc; found: $(rustc --version 2>/dev/null)"
  echo "Update Rust (for example: rustup update stable)."
  echo "------------------------------------------------------------"
  exit 1
fi

prof="${MCPLITE_PROFILE:-release}"
tdir="${CARGO_TARGET_DIR:-$(pwd)/../target}"
off=""
if [ "${MCPLITE_OFFLINE:-0}" = 1 ]; then off="--offline"; fi
# MCPLITE_BUILD_CACHE (an absolute directory, inst/deploy/install-mcplite.sh):
# the build and the unpacked crates are kept there between installs. cargo
# records a crate's build with the crate's path, so the crates are unpacked
# at the same place each time.
vroot=$(pwd)
if [ -n "${MCPLITE_BUILD_CACHE:-}" ]; then
  tdir="$MCPLITE_BUILD_CACHE/target"
  vroot="$MCPLITE_BUILD_CACHE"
fi
if [ -f rust-vendor.tar.xz ]; then
  rm -rf "$vroot/vendor" .cargo
  mkdir -p "$vroot"
  tar -xJf rust-vendor.tar.xz -C "$vroot"
  mkdir .cargo
  export CARGO_HOME="$(pwd)/.cargo"
  printf '[source.crates-io]\nreplace-with = "vendored-sources"\n[source.vendored-sources]\ndirectory = "%s"\n' \
    "$vroot/vendor" >.cargo/config.toml
  off="--offline"
fi
cargo build --lib --locked $off --profile "$prof" -p mcplite-r ${target:+--target "$target"} \
  --manifest-path=../Cargo.toml --target-dir="$tdir"
case "$prof" in dev) sub=debug ;; *) sub="$prof" ;; esac
mkdir -p rustlib
cp "$tdir/${target:+$target/}$sub/libmcplite.a" rustlib/libmcplite.a
rm -rf .cargo
if [ "$vroot" = "$(pwd)" ]; then rm -rf vendor; fi
