#!/usr/bin/env bash
# On the device machine: what the outputs of a large GPU run cost. Runs the karma3d example
# (256³ cells, float) for T ms with (a) no outputs, (b) its own outputs (HDF5 fields every
# 5 ms, two probes every 0.5 ms, no PNG) and prints the wall time of each; with
# heartwave_old packed too (pack.sh heartwave_old=...), the same for it.
# Usage (after pack.sh, carry .devrun): bash tools/device/bench-outputs.sh [T_MS]
set -uo pipefail
cd "$(dirname "$0")/../.."
t=${1:-100}
export HEARTWAVE_CACHE=${HEARTWAVE_CACHE:-/tmp/heartwave-cache}
bash tools/device/unpack.sh >/dev/null || exit 1
work=$(mktemp -d)
for bin in heartwave heartwave_old; do
  [ -x .devrun/bin/$bin ] || continue
  for mode in none fields; do
    extra=(--set output.png_interval=0 --set output.movie=false)
    if [ "$mode" = none ]; then
      extra+=(--set output.field_interval=0 --set 'output.probes=[]')
    else
      extra+=(--set output.field_interval=5)
    fi
    # Once to compile and tune (cached), once timed.
    .devrun/bin/$bin run examples/karma3d.toml --backend cuda -q --set time.t_end=1 \
      --set output.directory="$work/warm" "${extra[@]}" > /dev/null 2>&1
    start=$(date +%s%N)
    .devrun/bin/$bin run examples/karma3d.toml --backend cuda -q --set time.t_end="$t" \
      --set output.directory="$work/$bin-$mode" "${extra[@]}" > "$work/$bin-$mode.log" 2>&1
    rc=$?
    end=$(date +%s%N)
    size=$(du -sm "$work/$bin-$mode" 2>/dev/null | cut -f1)
    ms=$(( (end - start) / 1000000 ))
    printf '%-14s %-7s rc %d  %d.%03d s wall for %s ms  (%s MB written)\n' "$bin" "$mode" "$rc" \
      $((ms / 1000)) $((ms % 1000)) "$t" "${size:-0}"
  done
done
rm -rf "$work"
