#!/usr/bin/env bash
# Runs the Python SDK's own MultiMasterOperations sample (from the azure-cosmos source
# distribution on PyPI, pinned below, downloaded here, never kept in this repository) against the
# cosmos-emulator binary with two write regions (--multi-write) and a replication lag, so its
# concurrent inserts, replaces and deletes conflict: judge.py copies the sample, points its
# Configurations.py at the emulator, runs it and checks what it printed. The last line is always
# "N passed, N failed". About a minute once the emulator is built.
#
# Environment: PYTHON (default python3), SUITE_WORK (default /tmp/cosmos-python-suite: the venv
# and sdist, shared with ../python-suite/run.sh), CARGO_TARGET_DIR (default <repo>/target),
# SAMPLE_TIMEOUT (seconds the sample may take, default 120).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
python=${PYTHON:-python3}
work=${SUITE_WORK:-/tmp/cosmos-python-suite}
sdk_version=4.17.1
# The emulator's flags: every region takes writes, and each sees the other's writes 300 ms later.
export EMULATOR_ARGS="--multi-write --replication-lag-ms 300"
# shellcheck source=../emulator.sh
source "$here/../emulator.sh"

conformance_begin
mkdir -p "$work"
if [ ! -x "$work/venv/bin/python" ]; then
    "$python" -m venv "$work/venv"
fi
pip=("$work/venv/bin/pip" --quiet --disable-pip-version-check)
if [ ! -f "$work/dl/azure_cosmos-$sdk_version.tar.gz" ]; then
    "${pip[@]}" download --no-binary :all: --no-deps "azure-cosmos==$sdk_version" -d "$work/dl"
fi
if ! "$work/venv/bin/python" -c "import azure.cosmos, sys; sys.exit(azure.cosmos.__version__ != '$sdk_version')" 2>/dev/null; then
    "${pip[@]}" install "$work/dl/azure_cosmos-$sdk_version.tar.gz"
fi
sample_src="$work/multimaster-src"
rm -rf "$sample_src"
mkdir -p "$sample_src"
tar -xzf "$work/dl/azure_cosmos-$sdk_version.tar.gz" -C "$sample_src" \
    "azure_cosmos-$sdk_version/samples/MultiMasterOperations"
conformance_run "$work/venv/bin/python" "$here/judge.py" \
    --sample "$sample_src/azure_cosmos-$sdk_version/samples/MultiMasterOperations" \
    --timeout "${SAMPLE_TIMEOUT:-120}"
