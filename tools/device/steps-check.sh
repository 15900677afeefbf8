#!/usr/bin/env bash
# On the device machine: several steps per pass over memory (kernels/cuda/steps_per_pass.cuh)
# checked and timed in one call: the CUDA tissue tests, memcheck and racecheck on the
# failure test, then the Karma benchmarks with the thread-per-cell kernel forced
# (HEARTWAVE_CUDA_KERNEL=cell) against the tuner's free choice, each run twice, the copy
# roof measured by each bench run. Logs to $OUT; a table last.
# Usage (after pack.sh, carry .devrun): bash tools/device/steps-check.sh [SECONDS] [CASE ...]
set -uo pipefail
cd "$(dirname "$0")/../.."
secs=${1:-2}
shift || true
cases=${*:-karma2d karma3d-256 karma3d-512}
bash tools/device/unpack.sh >/dev/null || exit 1
export HEARTWAVE_SHARED_DIR=$PWD/.devrun/root/shared HEARTWAVE_TEST_DATA_DIR=$PWD/tests HEARTWAVE_CACHE=/tmp/hwc
B=.devrun/bin
out=${OUT:-/tmp/steps-check}
mkdir -p "$out"
timeout 300 $B/heartwave_gpu_tests --gtest_filter='CudaTissue.*' > "$out/tests.log" 2>&1
echo "CudaTissue rc=$?: $(grep -c '^\[       OK' "$out/tests.log") passed, $(grep -c '^\[  FAILED  \] CudaTissue' "$out/tests.log") failed"
grep -E "measured.*(steps|cpu engine)|^\[  FAILED" "$out/tests.log" | head -20
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool $B/heartwave_gpu_tests --gtest_filter='CudaTissue.SeveralSteps*' > "$out/$tool.log" 2>&1
  echo "$tool rc=$?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/$tool.log")"
done
log="$out/bench.log"
: > "$log"
for c in $cases; do
  for k in cell free; do
    kernel=$k; [ $k = free ] && kernel=
    HEARTWAVE_CUDA_KERNEL=$kernel timeout 120 $B/heartwave bench "$c" --backend cuda --seconds 0.3 > /dev/null 2>&1
    for round in 1 2; do
      HEARTWAVE_CUDA_KERNEL=$kernel timeout 120 $B/heartwave bench "$c" --backend cuda --seconds "$secs" > "$out/bench-$c-$k-$round.log" 2>&1
      grep -E "^$c " "$out/bench-$c-$k-$round.log" | sed "s/^/$k $round /" >> "$log"
    done
    grep -E "^$c:" "$out/bench-$c-$k-2.log" | grep -o "blocks .*" | cut -c1-700
  done
done
echo "==== steps-check ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), commit $(cat .devrun/commit 2>/dev/null))"
printf '%-14s %14s %14s %8s %9s %9s\n' case cell_steps/s tuned_steps/s change cell_roof tuned_roof
for c in $cases; do
  best() { awk -v k="$1" -v c="$c" '$1 == k && $3 == c { if ($8 > m) { m = $8; r = $13 } } END { printf "%s %s", m, r }' "$log"; }
  read -r o oroof < <(best cell)
  read -r n nroof < <(best free)
  awk -v c="$c" -v o="$o" -v n="$n" -v a="$oroof" -v b="$nroof" \
    'BEGIN { if (o > 0) printf "%-14s %14.0f %14.0f %+7.1f%% %9s %9s\n", c, o, n, 100 * (n - o) / o, a, b; else printf "%-14s failed\n", c }'
done
