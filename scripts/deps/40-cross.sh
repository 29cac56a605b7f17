#!/usr/bin/env bash
# Dependencies of the cross-platform suite (tests/suites/40-cross.sh),
# idempotent:
# - the Rust targets aarch64-apple-darwin (checked only)
#   and x86_64-pc-windows-gnu (built and run under Wine), through rustup;
# - Debian's mingw-w64 C toolchain (the linker for the Windows target) and
#   Wine (wine64, run as /usr/lib/wine/wine64);
# - bcryptprimitives.dll, a stand-in for the Windows DLL that Debian's
#   Wine 8.0 lacks and Rust's std imports (scripts/deps/cross/
#   bcryptprimitives.c), built into $MCPLITE_CROSS_DIR;
# - clang, the C compiler for the macOS targets' build scripts (ring, the
#   TLS crypto provider, compiles C and assembly even for `cargo check`;
#   the suite points it at the stand-in headers of scripts/deps/cross/
#   darwin-include, since the macOS SDK is not available here).
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="$PATH:${CARGO_HOME:-$HOME/.cargo}/bin"

cross_dir="${MCPLITE_CROSS_DIR:-$HOME/.cache/mcplite-cross}"
targets=(aarch64-apple-darwin x86_64-pc-windows-gnu)

installed=$(rustup target list --installed)
missing=()
for t in "${targets[@]}"; do
  grep -qx "$t" <<<"$installed" || missing+=("$t")
done
if [ "${#missing[@]}" -gt 0 ]; then
  rustup target add "${missing[@]}"
fi

apt_missing=()
command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1 || apt_missing+=(gcc-mingw-w64-x86-64)
[ -x /usr/lib/wine/wine64 ] || apt_missing+=(wine64)
command -v clang >/dev/null 2>&1 || apt_missing+=(clang)
if [ "${#apt_missing[@]}" -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${apt_missing[@]}"
fi

mkdir -p "$cross_dir"
src=scripts/deps/cross/bcryptprimitives.c
dll="$cross_dir/bcryptprimitives.dll"
if [ ! -f "$dll" ] || [ "$src" -nt "$dll" ]; then
  x86_64-w64-mingw32-gcc -shared -O2 -o "$dll.tmp" "$src" -ladvapi32
  mv "$dll.tmp" "$dll"
fi
echo "cross-platform dependencies ready ($dll)"
