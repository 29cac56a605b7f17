#!/usr/bin/env bash
# The source tarball installs with no network at all, as CRAN and R-universe
# build packages: scripts/vendor.sh + R CMD build, then the install steps of
# the shipped container recipe (inst/deploy/Dockerfile, run without Docker by
# tests/deploy/run_dockerfile.py): inst/deploy/install-mcplite.sh installs
# the tarball into a new directory inside a new network namespace (`unshare
# -n`: only a loopback device, which is down) with an empty CARGO_HOME, so
# neither crates.io nor a local registry cache can be used; then the
# Dockerfile's CMD serves over HTTP as an unprivileged user, its HEALTHCHECK
# passes and SIGTERM stops it (installed size and start-up time are printed).
# The installed package also serves the example server through an MCP
# session (stdio, inside the same namespace).
# Needs root (unshare, setpriv). Prints "N passed, N failed" last.
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
export PATH="$PATH:$HOME/.cargo/bin"
# The guard builds what users get, a release build: scripts/run-tests.sh
# installs the run's own packages in the dev profile (MCPLITE_PROFILE=dev).
unset MCPLITE_PROFILE
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

. tests/suites/lib.sh

if ! unshare -n true 2>/dev/null; then
  bad "unshare -n works here (needs root)"
  finish
fi

version=$(sed -n 's/^Version: *//p' DESCRIPTION)
# Vendored into a staged copy of the checkout, not into the checkout itself:
# other steps of the run (the README quick start of 30-docs, in the other
# lane) build packages from the checkout meanwhile. Compressed with xz's
# fastest preset (XZ_OPT=-0: 6 CPU s against 63 for the default, the archive
# 28 MB against 21): the guard is about what the archive holds, and
# scripts/vendor.sh alone still makes the smaller one that is shipped.
if src=$(bash scripts/stage.sh "$work/src") &&
  XZ_OPT=-0 bash scripts/vendor.sh "$src/src/rust-vendor.tar.xz" >"$work/vendor.log" 2>&1 &&
  (cd "$work" && R CMD build --no-build-vignettes --no-manual "$src") >"$work/build.log" 2>&1 &&
  tar -tzf "$work/mcplite_$version.tar.gz" >"$work/contents.txt" &&
  grep -qx "mcplite/src/rust-vendor.tar.xz" "$work/contents.txt"; then
  ok "R CMD build ships the vendored crates ($(tail -1 "$work/vendor.log"))"
else
  bad "R CMD build ships the vendored crates" "$work/build.log"
  finish
fi

if git -C "$root" ls-files --error-unmatch src/rust-vendor.tar.xz >/dev/null 2>&1 || [ -n "$(git -C "$root" ls-files | grep -E '(^|/)vendor/' || true)" ]; then
  bad "the git repository holds no vendored code"
else
  ok "the git repository holds no vendored code"
fi

# The Dockerfile's steps: its build context is the tarball, the install
# script and a server script.
mkdir -p "$work/context" "$work/image"
chmod 755 "$work"
cp "$work/mcplite_$version.tar.gz" inst/deploy/install-mcplite.sh "$work/context/"
cp inst/examples/server.R "$work/context/server.R"
# The release build is kept in target/offline-install between runs
# (MCPLITE_BUILD_CACHE, as a Docker build cache mount would keep it): a
# first run builds every crate from the vendored sources, offline; a later
# run of the same Cargo.lock compiles mcplite's own crates again (and any
# crate whose vendored version changed). `rm -rf target` makes it cold.
build_cache="$root/target/offline-install"
if [ -d "$build_cache/target/release" ]; then cache_state="kept from an earlier run"; else cache_state="empty: a cold build"; fi
MCPLITE_BUILD_CACHE="$build_cache" python3 tests/deploy/run_dockerfile.py inst/deploy/Dockerfile \
  "$work/context" "$work/image" >"$work/docker.log" 2>&1
grep -E '^(ok|FAIL|measure) |^       ' "$work/docker.log"
compiled=$(grep -cE '^ *Compiling ' "$work/image/install.log" 2>/dev/null)
echo "measure - crates compiled by the install: ${compiled:-?} (target/offline-install was $cache_state)"
add_counts "$work/docker.log" || bad "the Dockerfile's steps ran to the end" "$work/docker.log"
lib="$work/image/opt/mcplite/library"
if [ ! -f "$lib/mcplite/DESCRIPTION" ]; then
  bad "the Dockerfile's install step installed mcplite into /opt/mcplite/library"
  finish
fi

# An MCP session with the example server from the offline-installed library.
{
  printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"offline","version":"1"}}}'
  printf '%s\n' '{"jsonrpc":"2.0","method":"notifications/initialized"}'
  printf '%s\n' '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
  printf '%s\n' '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add_numbers","arguments":{"x":2,"y":40}}}'
} >"$work/session.in"
if unshare -n env R_LIBS="$lib" Rscript --vanilla "$lib/mcplite/examples/server.R" \
  <"$work/session.in" >"$work/session.out" 2>"$work/session.err" &&
  python3 - "$work/session.out" <<'PY'; then
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
by_id = {m["id"]: m for m in lines}
assert [m["id"] for m in lines] == [1, 2, 3], lines
assert by_id[1]["result"]["protocolVersion"] == "2025-11-25"
assert "add_numbers" in [t["name"] for t in by_id[2]["result"]["tools"]]
assert by_id[3]["result"]["content"][0]["text"] == "42", by_id[3]
PY
  ok "the offline-installed package serves the example server (initialize, tools/list, tools/call)"
else
  cat "$work/session.err" >>"$work/session.out"
  bad "the offline-installed package serves the example server" "$work/session.out"
fi

finish
