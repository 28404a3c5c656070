#!/usr/bin/env bash
# Import and export speed of `cosmos item import|export` against the Node.js SDK's bulk API
# (node_moving.cjs) on the same cosmos-emulator binary, alternating which client goes first each
# round. Measures wall time and peak RSS of each client process with /usr/bin/time.
#
#   crates/cosmos-cli/bench/moving.sh [COUNT] [ROUNDS]     (default 1000000 documents, 2 rounds)
#
# Needs release binaries (cargo build --release -p cosmos-driver-cli -p cosmos-emulator --bins) and the
# @azure/cosmos package: NODE_PATH pointing at a node_modules holding it. Documents are about 300
# bytes, 1,000 partition key values, in a container with partition key /pk. Prints one line per run
# and a table at the end. Environment: BIN (the binaries' directory, default
# ${CARGO_TARGET_DIR:-<repo>/target}/release), NODE (default
# node), WORK (default a new directory under /tmp for the data files), PARTITIONS (partition key
# ranges per container, default 4: the emulator's --partitions; both clients use the same).
set -euo pipefail
count=${1:-1000000}
rounds=${2:-2}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
bin=${BIN:-${CARGO_TARGET_DIR:-$root/target}/release}
node=${NODE:-node}
work=${WORK:-$(mktemp -d /tmp/cosmos-moving.XXXXXX)}
partitions=${PARTITIONS:-4}
key="C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="
port=$(python3 -c 'import random; print(random.randint(30000, 50000))')
export COSMOS_ENDPOINT="http://127.0.0.1:$port/" COSMOS_KEY="$key" DB=moving
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time" >&2; exit 2; }
[ -x "$bin/cosmos" ] && [ -x "$bin/cosmos-emulator" ] || { echo "build the release binaries first" >&2; exit 2; }

emulator_pid=""
stop() {
    if [ -n "$emulator_pid" ]; then
        kill -INT "$emulator_pid" 2>/dev/null || true
        wait "$emulator_pid" 2>/dev/null || true
    fi
}
trap stop EXIT
"$bin/cosmos-emulator" --port "$port" --regions "East US" --key "$key" --partitions "$partitions" \
    >"$work/emulator.log" 2>&1 &
emulator_pid=$!
for _ in $(seq 1 100); do
    "$bin/cosmos" db list >/dev/null 2>&1 && break
    sleep 0.1
done

input="$work/docs.jsonl"
python3 - "$count" "$input" <<'PY'
import json, sys
count, path = int(sys.argv[1]), sys.argv[2]
filler = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor " * 3
with open(path, "w") as f:
    for i in range(count):
        doc = {"id": f"doc-{i:09d}", "pk": f"key-{i % 1000:04d}", "n": i, "price": i * 0.25,
               "tags": ["alpha", "beta", str(i % 7)], "active": i % 2 == 0}
        doc["text"] = filler[: max(0, 300 - len(json.dumps(doc)) - 10)]
        f.write(json.dumps(doc, separators=(",", ":")) + "\n")
PY
echo "$count documents, $(($(stat -c %s "$input") / count)) bytes each on average, in $input"
"$bin/cosmos" db create "$DB" >/dev/null

results="$work/results.txt"
: >"$results"
# measure WHAT CLIENT ROUND COMMAND...: runs COMMAND under /usr/bin/time, records seconds and RSS.
measure() {
    local what=$1 client=$2 round=$3
    shift 3
    /usr/bin/time -f "%e %M" -o "$work/time" "$@" >"$work/out" 2>"$work/err" || {
        echo "$what with $client failed:" >&2
        tail -5 "$work/err" >&2
        exit 1
    }
    read -r secs rss <"$work/time"
    echo "$what $client $round $secs $((rss / 1024))" | tee -a "$results"
}
import_with() {
    local client=$1 round=$2 c=$3
    "$bin/cosmos" container create --db "$DB" "$c" --partition-key /pk >/dev/null
    if [ "$client" = cosmos ]; then
        measure import cosmos "$round" "$bin/cosmos" item import --db "$DB" --container "$c" --quiet "$input"
    else
        measure import node "$round" "$node" "$here/node_moving.cjs" import "$input" "$c"
    fi
}
export_with() {
    local client=$1 round=$2 c=$3
    if [ "$client" = cosmos ]; then
        measure export cosmos "$round" "$bin/cosmos" item export --db "$DB" --container "$c" --quiet --out "$work/export.jsonl"
    else
        measure export node "$round" "$node" "$here/node_moving.cjs" export "$c" "$work/export.jsonl"
    fi
    local lines
    lines=$(wc -l <"$work/export.jsonl")
    [ "$lines" = "$count" ] || { echo "export with $client wrote $lines lines, not $count" >&2; exit 1; }
}

echo "what client round seconds peak_rss_mb"
for round in $(seq 1 "$rounds"); do
    if [ $((round % 2)) = 1 ]; then order="cosmos node"; else order="node cosmos"; fi
    for client in $order; do
        import_with "$client" "$round" "c-$client-$round"
    done
    for client in $order; do
        export_with "$client" "$round" "c-cosmos-$round"
    done
    for client in $order; do
        "$bin/cosmos" container delete --db "$DB" "c-$client-$round" >/dev/null
    done
done

echo
echo "| operation | client | runs | median seconds | median documents/s | peak RSS (MB, max) |"
echo "|---|---|---:|---:|---:|---:|"
python3 - "$results" "$count" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
count = int(sys.argv[2])
for what in ("import", "export"):
    for client in ("cosmos", "node"):
        runs = [r for r in rows if r[0] == what and r[1] == client]
        if not runs:
            continue
        secs = statistics.median(float(r[3]) for r in runs)
        rss = max(int(r[4]) for r in runs)
        name = "cosmos item " + what if client == "cosmos" else "Node.js SDK " + ("executeBulkOperations" if what == "import" else "query pages")
        print(f"| {what} | {name} | {len(runs)} | {secs:.1f} | {count / secs:,.0f} | {rss} |")
PY
rm -f "$input" "$work/export.jsonl"
