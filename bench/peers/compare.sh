#!/usr/bin/env bash
# Our driver against Microsoft's Rust driver (azure_data_cosmos) on one emulator process.
#
# Starts `cosmos emulator` once, seeds the benchmark items, then runs the same read workload with
# each client in turn, A B A B ... (PAIRS pairs), at the same rate, duration and hedging threshold,
# and prints the median figures and the ratios ours/theirs of p50, p99, p99.9, throughput and the CPU
# seconds each client process used (user + system, from /usr/bin/time).
#
# Settings (environment): PAIRS=3 RATE=500 DURATION=20s WARMUP=2s THRESHOLD=50ms PROFILE=slow-primary
# CONCURRENCY=64 ITEMS=1000 PORT=18181 OUT=<directory for the JSON and timing files>
# PEER_FLAGS="--http1 --text-json" runs the SDK without its defaults (HTTP/2, binary JSON).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
PAIRS=${PAIRS:-3}
RATE=${RATE:-500}
DURATION=${DURATION:-20s}
WARMUP=${WARMUP:-2s}
THRESHOLD=${THRESHOLD:-50ms}
PROFILE=${PROFILE:-slow-primary}
CONCURRENCY=${CONCURRENCY:-64}
ITEMS=${ITEMS:-1000}
PORT=${PORT:-18181}
OUT=${OUT:-$(mktemp -d -t cosmos-compare-XXXXXX)}
REGIONS="East US,West US,North Europe"
# The key the official emulator publishes; our emulator uses it by default.
KEY='C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=='
ENDPOINT="http://127.0.0.1:$PORT/"
mkdir -p "$OUT"

echo "== building (release)"
ours_target=${CARGO_TARGET_DIR:-$root/target}
(cd "$root" && cargo build --release -q -p cosmos-driver-cli)
theirs_target=${PEERS_TARGET_DIR:-$here/target}
(cd "$here" && CARGO_TARGET_DIR="$theirs_target" cargo build --release -q)
cosmos="$ours_target/release/cosmos"
peer="$theirs_target/release/peer-azure-sdk"

echo "== starting the emulator on port $PORT (profile $PROFILE)"
"$cosmos" emulator --port "$PORT" --profile "$PROFILE" --regions "$REGIONS" --partitions 4 >"$OUT/emulator.log" 2>&1 &
emulator_pid=$!
trap 'kill "$emulator_pid" 2>/dev/null || true; wait "$emulator_pid" 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
  # Any HTTP answer (401 without a signature) means the emulator is up.
  if curl -s -o /dev/null "$ENDPOINT"; then break; fi
  sleep 0.1
done

common=(--endpoint "$ENDPOINT" --key "$KEY" --preferred-regions "$REGIONS" --rate "$RATE"
  --concurrency "$CONCURRENCY" --duration "$DURATION" --warmup "$WARMUP" --items "$ITEMS"
  --hedging "$THRESHOLD")

echo "== seeding $ITEMS items"
"$cosmos" bench --endpoint "$ENDPOINT" --key "$KEY" --preferred-regions "$REGIONS" --items "$ITEMS" \
  --hedging off --ops 1 --warmup 0s >/dev/null

for i in $(seq 1 "$PAIRS"); do
  echo "== pair $i/$PAIRS: ours"
  /usr/bin/time -f "%U %S" -o "$OUT/ours-$i.time" \
    "$cosmos" bench "${common[@]}" --skip-setup --json "$OUT/ours-$i.json" >/dev/null
  echo "== pair $i/$PAIRS: azure_data_cosmos"
  /usr/bin/time -f "%U %S" -o "$OUT/theirs-$i.time" \
    "$peer" "${common[@]}" --profile "$PROFILE" ${PEER_FLAGS:-} --json "$OUT/theirs-$i.json" >/dev/null
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

def load(who, i):
    run = json.load(open(f"{out}/{who}-{i}.json"))["runs"][0]
    user, system = map(float, open(f"{out}/{who}-{i}.time").read().split()[-2:])
    cpu = user + system
    # The process's CPU time paid for every read it made: the measured ones and the warm-up's.
    reads = run["ops"] + run["rate"] * seconds(warmup)
    return {
        "p50": run["latency_ms"]["p50"], "p99": run["latency_ms"]["p99"],
        "p999": run["latency_ms"]["p999"], "max": run["latency_ms"]["max"],
        "tput": run["throughput_ops_s"], "cpu": cpu, "ops": run["ops"],
        "hedged": run["hedge"]["hedged_ops"] / max(run["ops"], 1),
        "extra": run["hedge"]["extra_requests_fraction"],
        "over": run["hedge"]["primary_over_threshold_fraction"],
        "errors": run["errors"], "reads": reads,
    }

rows = {w: [load(w, i) for i in range(1, pairs + 1)] for w in ("ours", "theirs")}
cols = [("p50", "p50 ms"), ("p99", "p99 ms"), ("p999", "p99.9 ms"), ("max", "max ms"),
        ("tput", "ops/s"), ("cpu", "CPU s"), ("hedged", "hedged"), ("extra", "extra req"),
        ("over", "primary>thr"), ("errors", "errors")]
fmt = lambda k, v: f"{v*100:.2f}%" if k in ("hedged", "extra", "over") else f"{v:.2f}"
print("run        " + "".join(f"{h:>12}" for _, h in cols))
for i in range(pairs):
    for w in ("ours", "theirs"):
        r = rows[w][i]
        print(f"{w+'-'+str(i+1):<11}" + "".join(f"{fmt(k, r[k]):>12}" for k, _ in cols))
med = {w: {k: statistics.median(r[k] for r in rows[w]) for k, _ in cols} for w in rows}
print()
print("median     " + "".join(f"{h:>12}" for _, h in cols))
for w in ("ours", "theirs"):
    print(f"{w:<11}" + "".join(f"{fmt(k, med[w][k]):>12}" for k, _ in cols))
print()
print("ratio ours/theirs (median of each): " + ", ".join(
    f"{h} {med['ours'][k] / med['theirs'][k]:.3f}" if med['theirs'][k] else f"{h} n/a"
    for k, h in [("p50", "p50"), ("p99", "p99"), ("p999", "p99.9"), ("tput", "throughput"), ("cpu", "CPU s")]))
per_k = {w: statistics.median(1000 * r["cpu"] / max(r["reads"], 1) for r in rows[w]) for w in rows}
for w in ("ours", "theirs"):
    print(f"CPU seconds per 1,000 reads ({w}): {per_k[w]:.4f}  (whole process, start-up and warm-up included)")
if per_k["theirs"]:
    print(f"ratio ours/theirs CPU per 1,000 reads: {per_k['ours'] / per_k['theirs']:.3f}")
PY
