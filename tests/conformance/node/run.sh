#!/usr/bin/env bash
# Runs the official Azure Cosmos DB SDK for JavaScript (@azure/cosmos from npm, unmodified, pinned
# by package-lock.json) against the cosmos-emulator binary with auth on across two regions. Builds
# the binary, installs the SDK with `npm ci`, starts the emulator on free loopback ports, runs
# conformance.mjs and stops the emulator. Exits non-zero when any check fails or the emulator does
# not come up; the last line is always "N passed, N failed".
#
# Environment: NODE (default node), CARGO_TARGET_DIR (default <repo>/target).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
node=${NODE:-node}
target=${CARGO_TARGET_DIR:-$root/target}
regions="East US,West US"
region_count=2

# Any early exit (build, install or start failure) still ends with a summary line.
summary_printed=0
on_exit() {
    if [ "$summary_printed" != 1 ]; then
        echo "0 passed, 1 failed"
    fi
}
trap on_exit EXIT

echo "building cosmos-emulator"
(cd "$root" && cargo build -q -p cosmos-emulator --bin cosmos-emulator)
binary="$target/debug/cosmos-emulator"

echo "installing @azure/cosmos"
(cd "$here" && npm ci --no-audit --no-fund --loglevel=error)

# A global port whose region ports (PORT+1 .. PORT+regions) are free too.
port=$("$node" - "$region_count" <<'JS'
const net = require("node:net");
const count = Number(process.argv[2]);
function free(port) {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}
(async () => {
  for (let attempt = 0; attempt < 200; attempt++) {
    const base = 20000 + Math.floor(Math.random() * (40000 - count - 1));
    let ok = true;
    for (let p = base; p <= base + count && ok; p++) {
      ok = await free(p);
    }
    if (ok) {
      console.log(base);
      return;
    }
  }
  console.error("no free port range found");
  process.exit(1);
})();
JS
)

log=$(mktemp)
"$binary" --port "$port" --regions "$regions" >"$log" 2>&1 &
emulator_pid=$!
stop_emulator() {
    if kill -0 "$emulator_pid" 2>/dev/null; then
        kill -INT "$emulator_pid" 2>/dev/null || true
        for _ in $(seq 1 50); do
            kill -0 "$emulator_pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "$emulator_pid" 2>/dev/null || true
    fi
    wait "$emulator_pid" 2>/dev/null || true
    rm -f "$log"
}
trap 'stop_emulator; on_exit' EXIT

endpoint="http://127.0.0.1:$port/"
ready=0
for _ in $(seq 1 100); do
    if ! kill -0 "$emulator_pid" 2>/dev/null; then
        break
    fi
    if "$node" -e 'fetch(process.argv[1]).then(() => process.exit(0), () => process.exit(1))' "$endpoint" 2>/dev/null; then
        ready=1
        break
    fi
    sleep 0.1
done
if [ "$ready" != 1 ]; then
    echo "the emulator did not come up on $endpoint; its output:"
    cat "$log"
    exit 1
fi

output=$(mktemp)
set +e
COSMOS_ENDPOINT="$endpoint" \
COSMOS_KEY="C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==" \
COSMOS_REGIONS="$regions" \
    "$node" "$here/conformance.mjs" 2>&1 | tee "$output"
status=${PIPESTATUS[0]}
set -e
summary=$(tail -n 1 "$output")
rm -f "$output"
if ! [[ "$summary" =~ ^[0-9]+\ passed,\ [0-9]+\ failed$ ]]; then
    summary="0 passed, 1 failed"
    status=1
fi
if [ "$status" != 0 ]; then
    echo "emulator output:"
    cat "$log"
    # The summary stays the last line.
    echo "$summary"
fi
summary_printed=1
exit "$status"
