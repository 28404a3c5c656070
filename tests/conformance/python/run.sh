#!/usr/bin/env bash
# Runs the official Python SDK (azure-cosmos, from PyPI, unmodified) against the cosmos-emulator
# binary with auth on. Builds the binary, starts it on free loopback ports, runs conformance.py and
# stops the emulator. Exits non-zero when any check fails or the emulator does not come up.
#
# Environment: PYTHON (default python3), VENV (default /tmp/cosmos-conformance-venv),
# CARGO_TARGET_DIR (default <repo>/target).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
python=${PYTHON:-python3}
venv=${VENV:-/tmp/cosmos-conformance-venv}
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

if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check -r "$here/requirements.txt"

# A global port whose region ports (PORT+1 .. PORT+regions) are free too.
port=$("$venv/bin/python" - "$region_count" <<'PY'
import random, socket, sys
count = int(sys.argv[1])
for _ in range(200):
    base = random.randint(20000, 60000 - count - 1)
    sockets = []
    try:
        for p in range(base, base + count + 1):
            s = socket.socket()
            sockets.append(s)
            s.bind(("127.0.0.1", p))
    except OSError:
        continue
    finally:
        for s in sockets:
            s.close()
    print(base)
    break
else:
    sys.exit("no free port range found")
PY
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
    if "$venv/bin/python" -c "import socket,sys,urllib.parse; u = urllib.parse.urlparse(sys.argv[1]); socket.create_connection((u.hostname, u.port), timeout=2).close()" "$endpoint" 2>/dev/null; then
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
    "$venv/bin/python" "$here/conformance.py" 2>&1 | tee "$output"
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
