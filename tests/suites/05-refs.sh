#!/usr/bin/env bash
# Every rule a comment, test or document cites resolves in RULES.md, and
# nothing cites a document outside the repository (scripts/check-refs.sh).
# Prints "N passed, N failed" last.
set -uo pipefail
cd "$(dirname "$0")/../.."
exec bash scripts/check-refs.sh
