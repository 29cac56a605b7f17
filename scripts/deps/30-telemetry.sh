#!/usr/bin/env bash
# Dependencies of the telemetry end-to-end suite (tests/suites/30-telemetry.sh),
# idempotent: a Python venv with the official OTLP protobuf bindings
# (opentelemetry-proto), the Rotel collector (PyPI rotel, which ships the
# rotel-agent binary) and pytest.
set -euo pipefail

venv="${MCPLITE_VENV:-$HOME/.cache/mcplite-venv}"

if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq python3-venv
fi
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
if ! "$venv/bin/python" - <<'PY' >/dev/null 2>&1
import pathlib
import pytest  # noqa: F401
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2  # noqa: F401
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2  # noqa: F401
import rotel
assert (pathlib.Path(rotel.__file__).parent / "rotel-agent").exists()
PY
then
  "$venv/bin/pip" install --quiet --disable-pip-version-check opentelemetry-proto rotel pytest
fi
echo "telemetry test dependencies ready"
