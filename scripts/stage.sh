#!/usr/bin/env bash
# Copy the package sources to DIR/mcplite for `R CMD build`, without the
# build output beside them.
#
#   src=$(bash scripts/stage.sh "$tmp")   # then: R CMD build "$src"
#
# `R CMD build` copies the whole directory it is given and only then drops
# what .Rbuildignore names. After the test suite the cargo target directory
# alone is several GB (fuzz/target about 1 GB more), so building from the
# checkout costs that much disk and time; this copy leaves out the
# directories .Rbuildignore drops whole: target/, .git/, bench/, fuzz/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dest="${1:?usage: scripts/stage.sh DIR}/mcplite"
rm -rf "$dest"
mkdir -p "$dest"
tar -C "$root" --exclude=./target --exclude=./.git --exclude=./bench --exclude=./fuzz -cf - . | tar -C "$dest" -xf -
echo "$dest"
