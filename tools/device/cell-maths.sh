#!/usr/bin/env bash
# Cheaper cell maths on the GPU (issue 29, time.cell_maths: tables, fast, tables+fast): the
# gpu tests that check them against the exact kernels, compute-sanitizer's memcheck on
# them, then the tissue benchmarks with each kind of maths, one after the other in the same
# call, against the copy roof measured there. Logs to $OUT; a table last.
#
# Here:   bash tools/device/pack.sh heartwave=build/apps/heartwave/heartwave \
#              heartwave_gpu_tests=build/tests/heartwave_gpu_tests
# Device: [MATHS="exact tables fast tables+fast"] [TESTS=0] [POP="MODEL CELLS"] \
#         bash tools/device/cell-maths.sh [SECONDS] [CASES]   (carry .devrun)
#         CASES: comma-separated tissue benchmarks (default rabbit-tt06,ord-heart,tt06-3d-256)
#         POP: also `bench population MODEL --cells CELLS` in float with each maths
set -uo pipefail
cd "$(dirname "$0")/../.."
bash tools/device/unpack.sh >/dev/null
out=${OUT:-/tmp}
secs=${1:-3}
cases=${2:-rabbit-tt06,ord-heart,tt06-3d-256}
maths_list=${MATHS:-exact tables fast tables+fast}
bin=.devrun/bin
export HEARTWAVE_SHARED_DIR="$PWD/.devrun/root/shared" HEARTWAVE_TEST_DATA_DIR="$PWD/tests"
export HEARTWAVE_CACHE=${HEARTWAVE_CACHE:-/tmp/hw-cache}
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv,noheader | tee "$out/gpu.txt"
: > "$out/table.txt"
if [ -x $bin/heartwave_gpu_tests ] && [ "${TESTS:-1}" = 1 ]; then
  timeout 200 $bin/heartwave_gpu_tests \
    --gtest_filter="${GPU_TESTS:-CudaTissue.TablesWithin*:CudaTissue.FastMaths*}" > "$out/gpu-tests.log" 2>&1
  echo "gpu tests rc=$? $(grep -c '^\[       OK' "$out/gpu-tests.log") ok, $(grep -c '^\[  FAILED' "$out/gpu-tests.log") failed" |
    tee -a "$out/table.txt"
  grep '^\[  FAILED' "$out/gpu-tests.log" | tee -a "$out/table.txt"
  grep '\[measured\] cell maths' "$out/gpu-tests.log" | tee -a "$out/table.txt"
  timeout 150 compute-sanitizer --tool memcheck $bin/heartwave_gpu_tests --gtest_filter='CudaTissue.FastMaths*' \
    > "$out/memcheck.log" 2>&1
  echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' "$out/memcheck.log" | tail -1)" | tee -a "$out/table.txt"
fi
for c in ${cases//,/ }; do
  for maths in $maths_list; do
    log="$out/bench-$c-$maths.log"
    timeout 150 $bin/heartwave bench "$c" --backend cuda --seconds "$secs" --cell-maths "$maths" > "$log" 2>&1
    rc=$?
    awk -v c="$c" -v m="$maths" -v rc=$rc '
      /^copy roof/ {roof=$3}
      $1 == c {printf "%-12s %-11s %10s cell-steps/s %9s steps/s  ach/roof %s  roof %s GB/s  rc %s\n", c, m, $5, $6, $11, roof, rc; done=1}
      END {if (!done) printf "%-12s %-11s failed rc %s\n", c, m, rc}' "$log" | tee -a "$out/table.txt"
    grep -o 'registers[^;]*' "$log" | head -1 | sed "s/^/    $c $maths: /" | tee -a "$out/table.txt"
  done
done
if [ -n "${POP:-}" ]; then
  read -r pop_model pop_cells <<< "$POP"
  for maths in $maths_list; do
    log="$out/population-$(basename "$pop_model" .cellml)-$maths.log"
    timeout 150 $bin/heartwave bench population "$pop_model" --cells "$pop_cells" --precision float \
      --cell-maths "$maths" > "$log" 2>&1
    echo "population $(basename "$pop_model" .cellml) $maths rc=$?: $(grep -iE 'cell-steps/s|roof' "$log" | tail -3 | tr '\n' ' ')" |
      tee -a "$out/table.txt"
  done
fi
echo "== table"
cat "$out/table.txt"
