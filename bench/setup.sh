# Sourced by bench/run.sh and bench/http/run.sh (from the repository root, with
# `root` and `say` set): installs mcplite (release build) unless
# MCPLITE_BENCH_LIB names a library that has it, the Python venv with
# mcp==2.3.0 and uvicorn, and the TypeScript SDKs of bench/peers/node; exports
# R_LIBS, RSCRIPT, PYTHON and NODE.

# --- mcplite (release build) ---------------------------------------------------------
if [ -n "${MCPLITE_BENCH_LIB:-}" ]; then
  lib=$MCPLITE_BENCH_LIB
  [ -d "$lib/mcplite" ] || { say "mcplite is not installed in $lib"; exit 1; }
else
  lib=$root/target/bench-lib
  mkdir -p "$lib"
  say "installing mcplite (release build) into $lib"
  MCPLITE_PROFILE=release R CMD INSTALL --no-test-load --library="$lib" . >"$root/target/bench-install.log" 2>&1 \
    || { tail -30 "$root/target/bench-install.log"; exit 1; }
fi
export R_LIBS="$lib"
export RSCRIPT=${RSCRIPT:-$(command -v Rscript)}

# --- Python peers -------------------------------------------------------------------------
venv=${MCPLITE_VENV:-/root/.cache/mcplite-venv}
if ! "$venv/bin/python" -c 'import uvicorn, importlib.metadata as m; assert m.version("mcp") == "2.3.0"' 2>/dev/null; then
  say "creating $venv with mcp==2.3.0"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet 'mcp==2.3.0' uvicorn
fi
export PYTHON=$venv/bin/python

# --- TypeScript peers ---------------------------------------------------------------------
export NODE=${NODE:-$(command -v node)}
if [ ! -d bench/peers/node/node_modules/@modelcontextprotocol/server ] || \
   [ bench/peers/node/package-lock.json -nt bench/peers/node/node_modules/.package-lock.json ]; then
  say "installing the TypeScript SDKs (npm ci)"
  (cd bench/peers/node && npm ci --no-audit --no-fund --silent)
fi

