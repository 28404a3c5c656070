# Sourced by the SDK conformance runners (python/run.sh, node/run.sh): builds the cosmos-emulator
# binary, starts it with auth on across two regions on free loopback ports, runs a client against
# it and stops it. The last line printed is always "N passed, N failed", even on an early exit.
#
#   conformance_begin             build the emulator; from here on any exit prints a summary line
#   conformance_run CMD [ARG...]  start the emulator, run CMD with COSMOS_ENDPOINT, COSMOS_KEY and
#                                 COSMOS_REGIONS set, stop the emulator, exit with CMD's status
#
# Environment: CARGO_TARGET_DIR (default <repo>/target); EMULATOR_ARGS, further flags for the
# emulator (e.g. "--query-page-work 60" to run the SDKs against pages that end early).

conformance_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
conformance_regions="East US,West US"
conformance_region_count=2
conformance_key="C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="
summary_printed=0
emulator_pid=""
emulator_log=""

conformance_on_exit() {
    if [ -n "$emulator_pid" ] && kill -0 "$emulator_pid" 2>/dev/null; then
        kill -INT "$emulator_pid" 2>/dev/null || true
        for _ in $(seq 1 50); do
            kill -0 "$emulator_pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "$emulator_pid" 2>/dev/null || true
        wait "$emulator_pid" 2>/dev/null || true
    fi
    [ -n "$emulator_log" ] && rm -f "$emulator_log"
    if [ "$summary_printed" != 1 ]; then
        echo "0 passed, 1 failed"
    fi
}

conformance_begin() {
    trap conformance_on_exit EXIT
    echo "building cosmos-emulator"
    (cd "$conformance_root" && cargo build -q -p cosmos-emulator --bin cosmos-emulator)
}

# A global port whose region ports (PORT+1 .. PORT+regions) are free too.
free_port_range() {
    python3 - "$conformance_region_count" <<'PY'
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
}

conformance_run() {
    local target=${CARGO_TARGET_DIR:-$conformance_root/target}
    local port endpoint ready output status summary
    port=$(free_port_range)
    emulator_log=$(mktemp)
    # Four ranges per container whatever its throughput (the binary sizes them from throughput
    # otherwise, one range for 400 RU/s): the checks are about queries and feeds across ranges.
    # shellcheck disable=SC2086 # EMULATOR_ARGS is a list of flags.
    "$target/debug/cosmos-emulator" --port "$port" --regions "$conformance_regions" --partitions 4 \
        ${EMULATOR_ARGS:-} >"$emulator_log" 2>&1 &
    emulator_pid=$!
    endpoint="http://127.0.0.1:$port/"
    ready=0
    for _ in $(seq 1 100); do
        kill -0 "$emulator_pid" 2>/dev/null || break
        if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            ready=1
            break
        fi
        sleep 0.1
    done
    if [ "$ready" != 1 ]; then
        echo "the emulator did not come up on $endpoint; its output:"
        cat "$emulator_log"
        exit 1
    fi

    output=$(mktemp)
    set +e
    COSMOS_ENDPOINT="$endpoint" COSMOS_KEY="$conformance_key" COSMOS_REGIONS="$conformance_regions" \
        "$@" 2>&1 | tee "$output"
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
        cat "$emulator_log"
        # The summary stays the last line.
        echo "$summary"
    fi
    summary_printed=1
    exit "$status"
}
