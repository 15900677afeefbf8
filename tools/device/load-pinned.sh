#!/usr/bin/env bash
# A 2-core laptop with one busy program pinned to a core, reproduced on the device host:
# heartwave is confined to CPUs 0-1 (taskset) and a spinning process is pinned to CPU 1, as
# a user's other program is. Rows: `bench load --competing 0` (1 thread, 2 fixed, 2
# adaptive, with the mean team) beside the pinned process, then quiet. Logs to $OUT.
# Usage (on the device): bash tools/device/load-pinned.sh [SECONDS] [CASES] [BINARY ...]
# (binaries: names in .devrun/bin, default heartwave; each runs the same rows, in turn).
set -uo pipefail
cd "$(dirname "$0")/../.."
bash tools/device/unpack.sh >/dev/null
s=${1:-10}
cases=${2:-karma2d,tt06-3d}
shift 2 2>/dev/null || shift $#
bins=("${@:-heartwave}")
out=${OUT:-/tmp}
lscpu | grep -E 'Model name|^CPU\(s\)' | tee "$out/cpu.txt"
for name in "${bins[@]}"; do
  hw=.devrun/bin/$name
  taskset -c 1 sh -c 'while :; do :; done' &
  busy=$!
  echo "== $name beside one process pinned to CPU 1 (heartwave on CPUs 0-1)" | tee -a "$out/load-pinned.txt"
  taskset -c 0,1 $hw bench load --cases "$cases" --competing 0 --seconds "$s" 2>&1 | tee -a "$out/load-pinned.txt"
  kill $busy; wait $busy 2>/dev/null
  echo "== $name quiet (heartwave on CPUs 0-1)" | tee -a "$out/load-pinned.txt"
  taskset -c 0,1 $hw bench load --cases "$cases" --competing 0 --seconds "$s" 2>&1 | tee -a "$out/load-pinned.txt"
done
