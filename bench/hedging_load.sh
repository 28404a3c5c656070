#!/usr/bin/env bash
# What a throttled account costs through the `cosmos` command, with and without hedging.
#
# Starts the emulator binary (three regions), creates an item, then makes every data read answer
# 429 with a 200 ms retry-after and runs `cosmos item get` and `cosmos item query` twice each:
# with one preferred region (no hedging: it needs two) and with two (hedging on by default). For
# each run it prints the requests the emulator counted, the time taken and how the command ended.
#
#     bash bench/hedging_load.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p cosmos-driver-cli -p cosmos-emulator
target=${CARGO_TARGET_DIR:-target}
bin="$target/release"
port=${PORT:-48181}
key='C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=='
endpoint="http://127.0.0.1:$port/"
"$bin/cosmos-emulator" --port "$port" --regions "East US,West US,North Europe" --profile local --partitions 4 \
    >/tmp/hedging_load_emulator.log 2>&1 &
emu=$!
trap 'kill $emu 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
    curl -s -o /dev/null "$endpoint" && break
    sleep 0.1
done
export COSMOS_ENDPOINT="$endpoint" COSMOS_KEY="$key"
admin() { curl -s -X "$1" -H "authorization: Bearer $key" -H 'content-type: application/json' \
    ${3:+--data "$3"} "${endpoint}_emulator/$2"; }
"$bin/cosmos" db create shop >/dev/null
"$bin/cosmos" container create --db shop orders --partition-key /pk >/dev/null
"$bin/cosmos" item create --db shop --container orders --body '{"id":"o-1","pk":"p","n":1}' >/dev/null
admin POST faults '{"rules":[{"ops":["read","query","read-feed"],"reaction":{"respond":{"status":429,"retry_after_ms":200}}}]}' >/dev/null

printf '%-12s %-30s %9s %9s  %s\n' call regions requests seconds outcome
for call in get query; do
    for regions in "East US" "East US,West US"; do
        admin DELETE counters >/dev/null
        start=$(date +%s.%N)
        if [ "$call" = get ]; then
            set +e; out=$("$bin/cosmos" item get --db shop --container orders --pk p o-1 \
                --preferred-regions "$regions" 2>&1); code=$?; set -e
        else
            set +e; out=$("$bin/cosmos" item query --db shop --container orders --pk p \
                "SELECT * FROM c" --preferred-regions "$regions" 2>&1); code=$?; set -e
        fi
        end=$(date +%s.%N)
        requests=$(admin GET counters | python3 -c '
import json, sys
data = json.load(sys.stdin)
regions = data.get("regions", data)
total = 0
for region in (regions.values() if isinstance(regions, dict) else regions):
    counts = region.get("counts", region) if isinstance(region, dict) else {}
    total += sum(v for k, v in counts.items() if k in ("read", "query", "read-feed"))
print(total)')
        outcome=$(printf '%s' "$out" | tr '\n' ' ' | grep -o '429[^ ]*\|"id"' | head -1)
        printf '%-12s %-30s %9s %9.2f  exit %s %s\n' "item $call" "$regions" "$requests" \
            "$(echo "$end - $start" | bc)" "$code" "$outcome"
    done
done
