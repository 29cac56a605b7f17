#!/usr/bin/env bash
# Every rule a comment, test or document cites resolves in RULES.md, and
# nothing cites a document outside the repository (scripts/check-refs.sh,
# which counts each citation; this suite counts as one check).
# Prints "N passed, N failed" last.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=$(bash scripts/check-refs.sh 2>&1)
rc=$?
echo "$out" | grep -v '^[0-9]* passed, [0-9]* failed$' | tail -40
echo "citations: $(echo "$out" | tail -1)"
if [ "$rc" -eq 0 ]; then echo "1 passed, 0 failed"; else echo "0 passed, 1 failed"; exit 1; fi
