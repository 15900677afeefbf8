#!/usr/bin/env bash
# Lookup tables on the GPU (issue 29, time.cell_maths = "tables"): the gpu tests that check
# them against the exact kernels, compute-sanitizer's memcheck on one, then the tissue
# benchmarks with exact maths and with tables, one after the other in the same call, against
# the copy roof measured there. Logs to $OUT; a table last.
#
# Here:   bash tools/device/pack.sh heartwave=build/apps/heartwave/heartwave \
#              heartwave_gpu_tests=build/tests/heartwave_gpu_tests
# Device: bash tools/device/tables.sh [SECONDS] [CASES]   (carry .devrun)
#         CASES: comma-separated tissue benchmarks (default rabbit-tt06,ord-heart,tt06-3d-256)
set -uo pipefail
cd "$(dirname "$0")/../.."
bash tools/device/unpack.sh >/dev/null
out=${OUT:-/tmp}
secs=${1:-3}
cases=${2:-rabbit-tt06,ord-heart,tt06-3d-256}
bin=.devrun/bin
export HEARTWAVE_SHARED_DIR="$PWD/.devrun/root/shared"
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv,noheader | tee "$out/gpu.txt"
: > "$out/table.txt"
if [ -x $bin/heartwave_gpu_tests ]; then
  timeout 240 $bin/heartwave_gpu_tests \
    --gtest_filter='CudaTissue.TablesWithin*:CudaTissue.OddBoxUniformSigma:CudaTissue.KernelVariantsGiveTheSameBits' \
    > "$out/gpu-tests.log" 2>&1
  echo "gpu tests rc=$? $(grep -c '^\[       OK' "$out/gpu-tests.log") ok, $(grep -c '^\[  FAILED' "$out/gpu-tests.log") failed" |
    tee -a "$out/table.txt"
  grep '\[measured\] lookup' "$out/gpu-tests.log" | tee -a "$out/table.txt"
  timeout 240 compute-sanitizer --tool memcheck $bin/heartwave_gpu_tests --gtest_filter='CudaTissue.TablesWithin*' \
    > "$out/memcheck.log" 2>&1
  echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' "$out/memcheck.log" | tail -1)" | tee -a "$out/table.txt"
fi
for c in ${cases//,/ }; do
  for maths in exact tables; do
    log="$out/bench-$c-$maths.log"
    timeout 150 $bin/heartwave bench "$c" --backend cuda --seconds "$secs" --cell-maths "$maths" > "$log" 2>&1
    rc=$?
    awk -v c="$c" -v m="$maths" -v rc=$rc '
      /^copy roof/ {roof=$3}
      $1 == c {printf "%-12s %-6s %10s cell-steps/s %9s steps/s  ach/roof %s  roof %s GB/s  rc %s\n", c, m, $5, $6, $11, roof, rc; done=1}
      END {if (!done) printf "%-12s %-6s failed rc %s\n", c, m, rc}' "$log" | tee -a "$out/table.txt"
    grep -o 'registers[^;]*' "$log" | head -2 | sed "s/^/    $c $maths: /" | tee -a "$out/table.txt"
  done
done
echo "== table"
cat "$out/table.txt"
