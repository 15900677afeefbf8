#!/usr/bin/env bash
# On the device machine: Nsight Compute's view of the fused step kernel for a few benchmark
# cases (speed of light, compute and memory workload, instruction mix, warp stalls,
# occupancy), one kernel launch each after the tuner's trials, and the SASS of every kernel the
# cases compiled, with its instruction count. Usage (after pack.sh, carry .devrun):
#   [BENCH_ARGS="--cell-maths fast"] [NO_SASS=1] bash tools/device/gpu-profile.sh [CASE ...]
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/gpu-profile}
mkdir -p "$out"
export HEARTWAVE_CACHE=${HEARTWAVE_CACHE:-/tmp/heartwave-cache}
[ -d .devrun/bin ] || bash tools/device/unpack.sh >/dev/null
export HEARTWAVE_SHARED_DIR=${HEARTWAVE_SHARED_DIR:-$(pwd)/.devrun/root/shared}
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
[ -z "$ncu" ] && { echo "ncu not found"; exit 0; }
for c in "${@:-karma3d-256 tt06-3d-256}"; do
  for name in $c; do
    tag=$name${BENCH_ARGS:+-$(echo "$BENCH_ARGS" | tr -c 'A-Za-z0-9\n' '_' | tr -s _ | sed 's/^_//')}
    echo "==== ncu: $name ${BENCH_ARGS:-}"
    "$ncu" --target-processes all --kernel-name regex:hw_part --launch-skip 60 --launch-count 1 \
      --section SpeedOfLight --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis \
      --section ComputeWorkloadAnalysis --section InstructionStats --section WarpStateStats \
      --section SchedulerStats \
      .devrun/bin/heartwave bench "$name" --backend cuda --seconds 0.3 ${BENCH_ARGS:-} > "$out/ncu-$tag.log" 2>&1
    grep -E "Duration|DRAM Throughput|Compute \(SM\)|Registers Per|Achieved Occupancy|Executed Ipc A|Issue Slots Busy|Executed Instructions  |No Eligible|Warp Cycles Per Issued|Waves Per SM|stalled" "$out/ncu-$tag.log" | head -24
  done
done
# The SASS of the step kernels: what each cell-step costs in instructions, by kind.
objdump=$(command -v cuobjdump || ls /usr/local/cuda/bin/cuobjdump 2>/dev/null | head -1)
if [ -n "$objdump" ] && [ "${NO_SASS:-0}" != 1 ]; then
  for cubin in "$HEARTWAVE_CACHE"/model_cuda_*.cubin; do
    [ -e "$cubin" ] || continue
    src=${cubin%.cubin}.cu
    model=$(grep -m1 -o '^// Model: .*' "$src" 2>/dev/null | cut -c11-)
    tag=$(basename "$cubin" .cubin | cut -c12-19)
    "$objdump" -sass "$cubin" > "$out/sass-$model-$tag.txt" 2>&1
    cp "$src" "$out/sass-$model-$tag.cu" 2>/dev/null
    n=$(grep -cE '^\s+/\*[0-9a-f]{4}\*/' "$out/sass-$model-$tag.txt")
    echo "sass: $model ($tag): $n instructions"
  done
fi
