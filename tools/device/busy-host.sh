#!/usr/bin/env bash
# The GPU benchmarks as users run them (issue 29): each tissue case with each cell maths, on
# a quiet host and then beside a process spinning on every one of the host's cores (another
# user's job, a build), one after the other in the same call. Logs to $OUT; a table last.
#
# Here:   HW_PACK_MPI=0 bash tools/device/pack.sh heartwave=build/apps/heartwave/heartwave
# Device: [MATHS="exact fast"] bash tools/device/busy-host.sh [SECONDS] [CASES]   (carry .devrun)
#         CASES: comma-separated tissue benchmarks (default rabbit-tt06,tt06-3d-256)
set -uo pipefail
cd "$(dirname "$0")/../.."
bash tools/device/unpack.sh >/dev/null
out=${OUT:-/tmp}
secs=${1:-2}
cases=${2:-rabbit-tt06,tt06-3d-256}
bin=.devrun/bin
export HEARTWAVE_SHARED_DIR="$PWD/.devrun/root/shared" HEARTWAVE_CACHE=${HEARTWAVE_CACHE:-/tmp/hw-cache}
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv,noheader | tee "$out/gpu.txt"
: > "$out/table.txt"
row() {  # case maths host log rc
  awk -v c="$1" -v m="$2" -v h="$3" -v rc="$5" '
    /^copy roof/ {roof=$3}
    $1 == c {printf "%-12s %-6s %-6s %9s steps/s  ach/roof %s  roof %s GB/s  rc %s\n", c, m, h, $6, $11, roof, rc; done=1}
    END {if (!done) printf "%-12s %-6s %-6s failed rc %s\n", c, m, h, rc}' "$4" | tee -a "$out/table.txt"
}
for c in ${cases//,/ }; do
  for maths in ${MATHS:-exact fast}; do
    log="$out/$c-$maths-quiet.log"
    timeout 150 $bin/heartwave bench "$c" --backend cuda --seconds "$secs" --cell-maths "$maths" > "$log" 2>&1
    row "$c" "$maths" quiet "$log" $?
    pids=()
    for _ in $(seq "$(nproc)"); do sh -c 'while :; do :; done' & pids+=($!); done
    log="$out/$c-$maths-busy.log"
    timeout 150 $bin/heartwave bench "$c" --backend cuda --seconds "$secs" --cell-maths "$maths" > "$log" 2>&1
    rc=$?
    kill "${pids[@]}"; wait "${pids[@]}" 2>/dev/null
    row "$c" "$maths" busy "$log" $rc
  done
done
echo "== table"
cat "$out/table.txt"
