#!/usr/bin/env bash
# Tools for the deployment recipes suite (tests/suites/56-deploy.sh):
# systemd-analyze (Debian's systemd package; installing it boots nothing),
# openssl (a certificate for the TLS block of nginx.conf) and setpriv
# (util-linux: run the recipes as an unprivileged user). nginx comes from
# scripts/setup.sh. Idempotent.
set -euo pipefail
missing=""
for p in systemd openssl util-linux curl; do
  dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
echo "deploy suite tools present: $(systemd-analyze --version | head -1)"
