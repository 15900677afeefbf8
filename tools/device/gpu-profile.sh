#!/usr/bin/env bash
# On the device machine: Nsight Compute's view of the fused step kernel for a few benchmark
# cases (speed of light, occupancy, launch statistics), one kernel launch each after a
# warm-up. Usage (after pack.sh, carry .devrun): bash tools/device/gpu-profile.sh [CASE ...]
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/gpu-profile}
mkdir -p "$out"
export HEARTWAVE_CACHE=${HEARTWAVE_CACHE:-/tmp/heartwave-cache}
[ -d .devrun/bin ] || bash tools/device/unpack.sh >/dev/null
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
[ -z "$ncu" ] && { echo "ncu not found"; exit 0; }
for c in "${@:-karma3d-256 tt06-3d-256}"; do
  for name in $c; do
    echo "==== ncu: $name"
    "$ncu" --target-processes all --kernel-name regex:hw_part --launch-skip 20 --launch-count 1 \
      --section SpeedOfLight --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis \
      .devrun/bin/heartwave bench "$name" --backend cuda --seconds 0.3 > "$out/ncu-$name.log" 2>&1
    grep -E "Duration|DRAM Throughput|Memory Throughput|Compute \(SM\)|Registers Per|Achieved Occupancy|Theoretical Occupancy|Local Memory|Block Limit Registers|L1/TEX Hit|L2 Hit" "$out/ncu-$name.log" | head -20
  done
done
