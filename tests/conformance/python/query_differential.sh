#!/usr/bin/env bash
# The driver-vs-Python-SDK query differential: installs the official SDK (azure-cosmos, pinned in
# requirements.txt) in a virtual environment and runs the Rust test that sends the query corpus
# through the driver and through the SDK against one embedded emulator and compares the answers.
#
# Environment: PYTHON (default python3), VENV (default /tmp/cosmos-conformance-venv),
# CARGO_TARGET_DIR (default <repo>/target).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
python=${PYTHON:-python3}
venv=${VENV:-/tmp/cosmos-conformance-venv}
if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check -r "$here/requirements.txt"
cd "$root"
COSMOS_PYTHON="$venv/bin/python" COSMOS_PYTHON_DIFFERENTIAL_REQUIRED=1 \
    cargo test -p cosmos-driver --test integration query_python_differential:: -- --nocapture
