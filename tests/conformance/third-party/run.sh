#!/usr/bin/env bash
# Runs the driver's third-party conformance tests (crates/cosmos-driver/tests/third_party_conformance.rs,
# and the PATCH differential in crates/cosmos-driver/tests/patch_cases/peer.rs, and the emulator's
# query differential in crates/cosmos-emulator/tests/query_differential.rs)
# against @vercel/cosmosdb-server, a Cosmos DB server written outside this project: installs it with
# npm into a scratch directory, starts it on a free loopback port, runs the tests with
# COSMOS_PEER_ENDPOINT set, and stops it. Exits non-zero when a test fails or the server does not
# come up.
#
# Environment: PEER_SRC (the directory holding package.json and serve.js; default
# <repo>/../shared/third-party, then /work/shared/third-party for clones made elsewhere),
# PEER_DIR (default /tmp/cosmos-peer).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
src=${PEER_SRC:-$root/../shared/third-party}
if [ -z "${PEER_SRC:-}" ] && [ ! -f "$src/serve.js" ] && [ -f /work/shared/third-party/serve.js ]; then
    src=/work/shared/third-party
fi
dir=${PEER_DIR:-/tmp/cosmos-peer}

if [ ! -f "$src/serve.js" ] || [ ! -f "$src/package.json" ]; then
    echo "no third-party server at $src (set PEER_SRC to the directory holding package.json and serve.js)" >&2
    exit 1
fi

mkdir -p "$dir"
cp "$src/package.json" "$src/serve.js" "$dir/"
if [ ! -d "$dir/node_modules/@vercel/cosmosdb-server" ]; then
    echo "installing the third-party server (npm)"
    (cd "$dir" && npm install --no-audit --no-fund --silent)
fi

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
log=$(mktemp)
(cd "$dir" && exec node serve.js "$port" >"$log" 2>&1) &
pid=$!
stop() {
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}
trap stop EXIT

for _ in $(seq 1 100); do
    if python3 -c "import socket,sys; s=socket.socket(); s.settimeout(0.2); sys.exit(s.connect_ex(('127.0.0.1', $port)))" 2>/dev/null; then
        break
    fi
    if ! kill -0 "$pid" 2>/dev/null; then
        echo "the third-party server exited:" >&2
        cat "$log" >&2
        exit 1
    fi
    sleep 0.1
done
echo "third-party server: $(head -n 1 "$log")"

cd "$root"
COSMOS_PEER_ENDPOINT="http://127.0.0.1:$port/" cargo test -q -p cosmos-driver --test integration third_party_conformance::
COSMOS_PEER_ENDPOINT="http://127.0.0.1:$port/" cargo test -q -p cosmos-driver --test integration patch::peer -- --nocapture
COSMOS_PEER_ENDPOINT="http://127.0.0.1:$port/" cargo test -q -p cosmos-emulator --test integration query_differential:: -- --nocapture
