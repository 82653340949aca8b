#!/bin/sh
# The hot-spares trade-off (issue 38): examples/simulate/llama3-tiered.yaml with 0, 1 and 2 nodes
# and 1, 2 and 4% of the job's 2,048 nodes held as spares, the rest unchanged, and what each buys:
# ETTR, and useful GPU-hours per GPU-hour paid (the job's runs plus the spares, idle all along).
# One table row per spare count, from the JSON report of `orchestrate simulate`. Spares are held
# by the site, so every policy sees the same trade-off; restart-in-place runs a seed in a second.
#
#   bench/spares_sweep.sh [ORCHESTRATE] [SEEDS] [POLICY]
#   bench/spares_sweep.sh build-release/bin/orchestrate 20 restart-in-place
set -eu
bin=${1:-build-release/bin/orchestrate}
seeds=${2:-20}
policy=${3:-restart-in-place}
scenario=$(dirname "$0")/../examples/simulate/llama3-tiered.yaml
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '%-8s %-6s %-8s %-14s %-16s %-14s\n' spares share ETTR "useful GPU-h" "GPU-h paid" "useful/paid"
for spares in 0 1 2 20 41 82; do
  sed "s/^    spares: .*/    spares: $spares/" "$scenario" > "$work/s.yaml"
  "$bin" simulate "$work/s.yaml" --seeds "$seeds" --policy "$policy" --json "$work/r.json" >/dev/null 2>&1
  python3 - "$work/r.json" "$spares" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
runs = report["policies"][0]["runs"]
mean = lambda key: sum(r[key] for r in runs) / len(runs)
spares = int(sys.argv[2])
paid = mean("gpu_hours_held") + mean("spare_gpu_hours")
print(f"{spares:<8} {spares / 2048:<6.1%} {mean('ettr'):<8.4f} {mean('useful_gpu_hours'):<14,.0f} "
      f"{paid:<16,.0f} {mean('useful_per_paid'):<14.4f}")
PY
done
