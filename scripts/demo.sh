#!/usr/bin/env bash
# Set everything up, then run the example server through a real MCP session
# (legacy handshake, tool listing and calls, then the modern protocol) and
# print the transcript.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
if [ -n "${MCPLITE_LIB:-}" ]; then export R_LIBS="$MCPLITE_LIB"; fi
Rscript --vanilla inst/examples/demo-client.R "$(pwd)/inst/examples/server.R"
