#!/usr/bin/env bash
# On the device machine: the pig-ventricle scroll wave (examples/pig_scroll.toml) for 100 ms
# on 2 and 16 threads with every packed binary, its geometry carried in .devrun/ (the
# device has no ../shared). Prints the storage, memory and throughput lines of each run.
# Before: bash tools/device/pack.sh heartwave=build/apps/heartwave/heartwave &&
#   cp ../shared/geometry/pig_ventricles_kaboudian128/pig_ventricles_128.nrrd .devrun/
set -euo pipefail
cd "$(dirname "$0")/../.."
bash tools/device/unpack.sh >/dev/null
nrrd=$PWD/.devrun/pig_ventricles_128.nrrd
for exe in .devrun/bin/*; do
  for t in 2 16; do
    echo "== $(basename "$exe"): pig_scroll, 100 ms, --threads $t"
    "$exe" run examples/pig_scroll.toml --set "geometry.file=$nrrd" \
      --set time.t_end=100 --set "output.directory=/tmp/pig$t" --set output.field_interval=1000 \
      --set output.png_interval=0 --set output.checkpoint_interval=0 --threads "$t" 2>&1 |
      grep -E "tissue cells|storage|memory|done" || true
  done
done
