#!/usr/bin/env bash
# Adversarial suite (issue 40): tests/adversarial/adversarial.py acts as a
# prompt-injected model that can only list and call tools. It serves base,
# utils, stats, methods, tools, graphics, grDevices, jsonlite and data.table,
# each with package_tools()'s defaults in a server process of its own, calls
# every served tool with hostile values made from its input schema, and
# checks the canaries (a secret in the environment, a canary file, marker
# files, a local listener, command wrappers first on PATH, the process
# state, the server staying up). The packages are served two at a time
# (ADVERSARIAL_JOBS), each with its own server, sandbox and listener. Gaps
# not closed yet are listed in the driver's KNOWN and reported as "known".
# Python standard library only.
set -uo pipefail
cd "$(dirname "$0")/../.."
# The driver bounds itself (ADVERSARIAL_BUDGET, 320 s by default, for what it
# may cut; tier 1 always runs); the timeout is the backstop for a driver that
# does not. Standard library only: any python3 will do.
# A call is a hang only when the server has not answered a ping 15 s after
# the call was cancelled (a loaded CI machine is slower than a quiet one).
export ADVERSARIAL_RECOVER_TIMEOUT="${ADVERSARIAL_RECOVER_TIMEOUT:-15}"
timeout 900 python3 tests/adversarial/adversarial.py
rc=$?
if [ "$rc" -eq 124 ]; then
  echo "the adversarial driver timed out"
  echo "0 passed, 1 failed"
  exit 1
fi
exit "$rc"
