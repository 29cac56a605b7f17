#!/usr/bin/env bash
# Write src/rust-vendor.tar.xz: the sources of every crate in Cargo.lock, as
# `cargo vendor` lays them out (each with its .cargo-checksum.json, which
# cargo verifies when it builds from them). R CMD build then ships it inside
# the source tarball, and src/Makevars builds from it with `cargo --offline`,
# so the tarball installs with no network (as CRAN and R-universe build).
# The git repository never holds vendored code: the file is in .gitignore.
#
#   bash scripts/vendor.sh          # then: R CMD build .
#   bash scripts/vendor.sh OUT      # writes OUT instead (e.g. into a staged
#                                   # copy made by scripts/stage.sh)
set -euo pipefail
out="${1:-}"
if [ -n "$out" ]; then out="$(cd "$(dirname "$out")" && pwd)/$(basename "$out")"; fi
cd "$(dirname "$0")/.."
out="${out:-src/rust-vendor.tar.xz}"
export PATH="$PATH:$HOME/.cargo/bin"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cargo vendor --locked --quiet "$tmp/vendor" >/dev/null
tar -C "$tmp" -cJf "$tmp/rust-vendor.tar.xz" vendor
mv "$tmp/rust-vendor.tar.xz" "$out"
echo "$out: $(ls "$tmp/vendor" | wc -l) crates, $(du -k "$out" | cut -f1) KiB"
