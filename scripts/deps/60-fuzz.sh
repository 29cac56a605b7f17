#!/usr/bin/env bash
# cargo-fuzz for the engine fuzz targets in fuzz/ (suite tests/suites/60-fuzz.sh).
# libFuzzer needs unstable rustc flags; the suite sets RUSTC_BOOTSTRAP=1 so the
# stable toolchain works and no nightly download is needed. Idempotent.
set -euo pipefail
export PATH="$PATH:$HOME/.cargo/bin"
if command -v cargo-fuzz >/dev/null 2>&1; then
  echo "cargo-fuzz present: $(cargo fuzz --version)"
  exit 0
fi
cargo install cargo-fuzz --version 0.13.2 --locked
cargo fuzz --version
