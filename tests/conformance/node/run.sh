#!/usr/bin/env bash
# Runs the official Azure Cosmos DB SDK for JavaScript (@azure/cosmos from npm, unmodified, pinned
# by package-lock.json) against the cosmos-emulator binary with auth on across two regions (see
# ../emulator.sh): installs the SDK with `npm ci`, then runs conformance.mjs. Exits non-zero when
# any check fails or the emulator does not come up; the last line is always "N passed, N failed".
#
# Environment: NODE (default node), CARGO_TARGET_DIR (default <repo>/target).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
node=${NODE:-node}
# shellcheck source=../emulator.sh
source "$here/../emulator.sh"

conformance_begin
echo "installing @azure/cosmos"
(cd "$here" && npm ci --no-audit --no-fund --loglevel=error)
conformance_run "$node" "$here/conformance.mjs"
