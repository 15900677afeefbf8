#!/usr/bin/env bash
# On the device machine: the whole N-version table (tools/run_niederer.py, double precision,
# every core), then the N-version slab at dx 0.2 mm on 2 threads with explicit and with
# Crank-Nicolson diffusion for the comparison with MonoAlg3D (docs/benchmarks.md).
# Usage (device run): bash tools/device/niederer-table.sh COMMIT   (writes $OUT/niederer.tar)
set -euo pipefail
cd "$(dirname "$0")/../.."
bash tools/device/unpack.sh >/dev/null
hw=$(ls .devrun/bin/* | head -1)
mkdir -p /tmp/niederer
python3 tools/run_niederer.py --heartwave "$hw" --threads "$(nproc)" --commit "$1" --out /tmp/niederer
tar -C /tmp -cf "${OUT:-/tmp}/niederer.tar" niederer
for d in explicit crank-nicolson; do
  echo "== N-version dx 0.2 dt 0.01, $d, float, 2 threads"
  "$hw" bench niederer --dx 0.2 --dt 0.01 --diffusion "$d" --threads 2 -q
done
