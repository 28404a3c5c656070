#!/usr/bin/env bash
# Runs the official Python SDK (azure-cosmos, from PyPI, unmodified) against the cosmos-emulator
# binary with auth on (see ../emulator.sh): installs the SDK in a virtual environment, then runs
# conformance.py. Exits non-zero when any check fails or the emulator does not come up; the last
# line is always "N passed, N failed".
#
# Environment: PYTHON (default python3), VENV (default /tmp/cosmos-conformance-venv),
# CARGO_TARGET_DIR (default <repo>/target).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
python=${PYTHON:-python3}
venv=${VENV:-/tmp/cosmos-conformance-venv}
# shellcheck source=../emulator.sh
source "$here/../emulator.sh"

conformance_begin
if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check -r "$here/requirements.txt"
conformance_run "$venv/bin/python" "$here/conformance.py"
