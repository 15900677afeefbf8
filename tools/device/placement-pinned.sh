#!/usr/bin/env bash
# Issue 32's laptop, reproduced on the device host: heartwave confined to CPUs 0-1
# (taskset), one spinning process pinned to CPU 1, and the issue's command
# `heartwave bench karma2d --threads T --seconds S`, with the stepping thread's placement
# (parallel/placement.hpp) on and off (HEARTWAVE_PLACEMENT=off), REPS times each, then the
# quiet pair; then `bench load` (1, 2 fixed, 2 adaptive, with moves) beside the pinned
# process. Rows "placement threads load cell-steps/s". Logs to $OUT.
# Usage (on the device): bash tools/device/placement-pinned.sh SECONDS REPS
set -uo pipefail
cd "$(dirname "$0")/../.."
bash tools/device/unpack.sh >/dev/null
s=$1 reps=$2
out=${OUT:-/tmp}
hw=.devrun/bin/heartwave
lscpu | grep -E 'Model name|^CPU\(s\)' | tee "$out/placement-cpu.txt"
row() {  # placement threads load
  local v
  v=$(HEARTWAVE_PLACEMENT=$1 taskset -c 0,1 $hw bench karma2d --backend cpu --threads "$2" --seconds "$s" 2>/dev/null |
      awk '$1 == "karma2d" {print $5}')
  echo "$1 $2 $3 $v" | tee -a "$out/placement-pinned.txt"
}
taskset -c 1 sh -c 'while :; do :; done' &
busy=$!
for r in $(seq "$reps"); do
  for p in off on; do for t in 1 2; do row "$p" "$t" pinned-busy; done; done
done
echo "== bench load beside the pinned process, placement on" | tee -a "$out/placement-load.txt"
taskset -c 0,1 $hw bench load --cases karma2d,tt06-3d --competing 0 --seconds "$s" 2>&1 | tee -a "$out/placement-load.txt"
kill $busy; wait $busy 2>/dev/null
for p in off on; do for t in 1 2; do row "$p" "$t" quiet; done; done
