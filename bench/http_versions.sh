#!/usr/bin/env bash
# HTTP/1.1 against HTTP/2 for the driver: one release `cosmos emulator` process, and `cosmos bench`
# reads against it alternately over each protocol (A B A B ...), open loop at a fixed rate. Prints
# every run and the medians of p50, p99, p99.9, throughput, client CPU per 1,000 reads (user +
# system of the bench process from /usr/bin/time, warm-up included) and the TCP connections the
# bench process held open (sampled every second during the measured part, the maximum kept).
#
#   bash bench/http_versions.sh
#
# Settings (environment): PAIRS (3), RATE (5000), DURATION (20s), WARMUP (2s), PROFILE (local),
# CONCURRENCY (256), ITEMS (1000), PORT (8931), OUT (target/http-versions), CARGO_TARGET_DIR.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
PAIRS=${PAIRS:-3}
RATE=${RATE:-5000}
DURATION=${DURATION:-20s}
WARMUP=${WARMUP:-2s}
PROFILE=${PROFILE:-local}
CONCURRENCY=${CONCURRENCY:-256}
ITEMS=${ITEMS:-1000}
PORT=${PORT:-8931}
OUT=${OUT:-$root/target/http-versions}
REGIONS=${REGIONS:-"East US,West US"}
KEY="C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="
ENDPOINT="http://127.0.0.1:$PORT/"
mkdir -p "$OUT"

target=${CARGO_TARGET_DIR:-$root/target}
if [ -z "${COSMOS_BIN:-}" ]; then
  echo "== building (release)"
  (cd "$root" && cargo build --release -q -p cosmos-driver-cli)
fi
cosmos=${COSMOS_BIN:-$target/release/cosmos}

echo "== starting the emulator on port $PORT (profile $PROFILE)"
"$cosmos" emulator --port "$PORT" --profile "$PROFILE" --regions "$REGIONS" --partitions 4 >"$OUT/emulator.log" 2>&1 &
emulator_pid=$!
trap 'kill "$emulator_pid" 2>/dev/null || true; wait "$emulator_pid" 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
  if curl -s -o /dev/null "$ENDPOINT"; then break; fi
  sleep 0.1
done

common=(--endpoint "$ENDPOINT" --key "$KEY" --preferred-regions "$REGIONS" --rate "$RATE"
  --concurrency "$CONCURRENCY" --duration "$DURATION" --warmup "$WARMUP" --items "$ITEMS"
  --hedging off --skip-setup --allow-errors)

echo "== seeding $ITEMS items"
"$cosmos" bench --endpoint "$ENDPOINT" --key "$KEY" --preferred-regions "$REGIONS" --items "$ITEMS" \
  --hedging off --ops 1 --warmup 0s >/dev/null

# Runs one bench process and samples its established TCP connections once a second.
run() {
  local name=$1; shift
  /usr/bin/time -f "%U %S" -o "$OUT/$name.time" "$cosmos" bench "${common[@]}" "$@" \
    --json "$OUT/$name.json" >/dev/null &
  local time_pid=$! max=0 n pid
  sleep 0.5
  pid=$(pgrep -P "$time_pid" -n || true)
  while kill -0 "$time_pid" 2>/dev/null; do
    if [ -n "$pid" ]; then
      n=$(ss -Htnp state established 2>/dev/null | grep -c "pid=$pid," || true)
      [ "$n" -gt "$max" ] && max=$n
    fi
    sleep 1
  done
  wait "$time_pid"
  echo "$max" >"$OUT/$name.conns"
}

for i in $(seq 1 "$PAIRS"); do
  echo "== pair $i/$PAIRS: HTTP/1.1"
  run "h1-$i"
  echo "== pair $i/$PAIRS: HTTP/2"
  run "h2-$i" --http2
done

echo "== results in $OUT"
python3 - "$OUT" "$PAIRS" "$WARMUP" <<'PY'
import json, statistics, sys
out, pairs, warmup = sys.argv[1], int(sys.argv[2]), sys.argv[3]

def seconds(text):
    for unit, scale in (("ms", 1e-3), ("us", 1e-6), ("s", 1.0), ("m", 60.0)):
        if text.endswith(unit):
            return float(text[: -len(unit)]) * scale
    return float(text)

def load(name):
    run = json.load(open(f"{out}/{name}.json"))["runs"][0]
    user, system = map(float, open(f"{out}/{name}.time").read().split()[-2:])
    reads = run["ops"] + run["rate"] * seconds(warmup)
    return {"p50": run["latency_ms"]["p50"], "p99": run["latency_ms"]["p99"],
            "p999": run["latency_ms"]["p999"], "tput": run["throughput_ops_s"],
            "cpu_k": 1000 * (user + system) / max(reads, 1),
            "conns": int(open(f"{out}/{name}.conns").read()), "errors": run["errors"]}

rows = {v: [load(f"{v}-{i}") for i in range(1, pairs + 1)] for v in ("h1", "h2")}
cols = [("p50", "p50 ms"), ("p99", "p99 ms"), ("p999", "p99.9 ms"), ("tput", "ops/s"),
        ("cpu_k", "CPU s/1k"), ("conns", "conns"), ("errors", "errors")]
print("run      " + "".join(f"{h:>11}" for _, h in cols))
for i in range(pairs):
    for v in ("h1", "h2"):
        r = rows[v][i]
        print(f"{v+'-'+str(i+1):<9}" + "".join(f"{r[k]:>11.3f}" if isinstance(r[k], float) else f"{r[k]:>11}" for k, _ in cols))
print()
print("median   " + "".join(f"{h:>11}" for _, h in cols))
for v in ("h1", "h2"):
    print(f"{v:<9}" + "".join(f"{statistics.median(r[k] for r in rows[v]):>11.3f}" for k, _ in cols))
PY
