#!/usr/bin/env bash
# The issue's command on a 2-core machine with one busy program pinned to a core, reproduced
# on the device host: `heartwave bench karma2d --threads T --seconds S` confined to CPUs 0-1
# by taskset, a spinning process pinned to CPU 1; each binary and team in turn, REPS times,
# then once each on the quiet pair. Prints "binary threads load cell-steps/s" rows.
# Usage (on the device): bash tools/device/karma2d-pinned.sh SECONDS REPS BINARY ...
set -uo pipefail
cd "$(dirname "$0")/../.."
bash tools/device/unpack.sh >/dev/null
s=$1 reps=$2
shift 2
row() {  # binary threads load
  local v
  v=$(taskset -c 0,1 ".devrun/bin/$1" bench karma2d --backend cpu --threads "$2" --seconds "$s" 2>/dev/null |
      awk '$1 == "karma2d" {print $5}')
  echo "$1 $2 $3 $v"
}
taskset -c 1 sh -c 'while :; do :; done' &
busy=$!
for r in $(seq "$reps"); do
  for b in "$@"; do for t in 1 2; do row "$b" "$t" pinned-busy; done; done
done
kill $busy; wait $busy 2>/dev/null
for b in "$@"; do for t in 1 2; do row "$b" "$t" quiet; done; done
