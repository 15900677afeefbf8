#!/usr/bin/env bash
# Where a Crank-Nicolson step's time goes on the GPU (issue 29): Nsight Systems' kernel
# summary of `bench niederer --dx 0.05` (3.36 M cells), and Nsight Compute's memory view of
# each CG kernel once. Usage (on the device): bash tools/device/cg-profile.sh DT PRECISION
set -uo pipefail
cd "$(dirname "$0")/../.."
[ -d .devrun/bin ] || bash tools/device/unpack.sh >/dev/null
out=${OUT:-/tmp}
hw=.devrun/bin/heartwave
args=(bench niederer --dx 0.05 --dt "$1" --diffusion crank-nicolson --precision "$2" --backend cuda -q)
nsys=$(command -v nsys || ls /opt/nvidia/nsight-systems/*/bin/nsys /usr/local/cuda/bin/nsys 2>/dev/null | head -1)
if [ -n "$nsys" ]; then
  "$nsys" profile -o /tmp/cg --force-overwrite true "$hw" "${args[@]}" > "$out/nsys-run.log" 2>&1
  "$nsys" stats --report cuda_gpu_kern_sum,cuda_api_sum,cuda_gpu_mem_time_sum /tmp/cg.nsys-rep > "$out/nsys-stats.txt" 2>&1
  head -60 "$out/nsys-stats.txt"
else
  echo "nsys not found"
fi
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
if [ -n "$ncu" ]; then
  "$ncu" --kernel-name regex:hw_cg --launch-skip 40 --launch-count 8 --section SpeedOfLight --section MemoryWorkloadAnalysis \
    "$hw" "${args[@]}" > "$out/ncu-cg.log" 2>&1
  grep -E "hw_cg|Duration|DRAM Throughput|Memory Throughput" "$out/ncu-cg.log" | head -60
fi
