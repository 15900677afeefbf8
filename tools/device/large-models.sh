#!/usr/bin/env bash
# Large models on the GPU (issue 29, "large models without spills"): populations of the stiff
# set's largest models with GRL1, in float and double, one variant of the kernel after the
# other in the same call (VARIANTS: "name=ENV ..." pairs the kernel source reads), then the
# GPU tests named by GPU_TESTS. Logs to $OUT; a table last: cell-steps/s, the fraction of the
# compute roof measured in the same run, registers and local memory.
#
# Here:   HW_PACK_MPI=0 bash tools/device/pack.sh heartwave=build/apps/heartwave/heartwave \
#              heartwave_gpu_tests=build/tests/heartwave_gpu_tests
# Device: [MODELS="iyer_mazhari_winslow_2004:double ..." (the stiff set's files, or built-in names)] [CELLS=100000] [BCL=100]
#         [VARIANTS="default= ..."] [BINS="heartwave_old heartwave" (an A/B of two packed builds; each
#         variant runs with each)] [GPU_TESTS=gtest filter] bash tools/device/large-models.sh
#         (carry .devrun)
set -uo pipefail
cd "$(dirname "$0")/../.."
bash tools/device/unpack.sh >/dev/null
out=${OUT:-/tmp}
bin=.devrun/bin
export HEARTWAVE_SHARED_DIR="$PWD/.devrun/root/shared" HEARTWAVE_TEST_DATA_DIR="$PWD/tests"
export HEARTWAVE_CACHE=${HEARTWAVE_CACHE:-/tmp/hw-cache}
models=${MODELS:-iyer_mazhari_winslow_2004:double iyer_mazhari_winslow_2004:float grandi_pasqualini_bers_2010_epi:double}
variants=${VARIANTS:-default=}
bins=${BINS:-heartwave}
cells=${CELLS:-100000}
bcl=${BCL:-100}
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv,noheader | tee "$out/gpu.txt"
: > "$out/table.txt"
for mp in $models; do
  model=${mp%%:*} precision=${mp##*:}
  vary=gkr_max src=tests/data/stiff/$model.cellml
  case $model in iyer*) vary=GKr ;; ohara_rudy_2011*) vary=GKr_b ;; tentusscher*) vary=g_Kr ;; esac
  [ -f "$src" ] || src=$model  # a built-in model
  for v in $variants; do
   for b in $bins; do
    name=${v%%=*} envs=${v#*=}
    [ "$b" = heartwave ] || name="$name-${b#heartwave_}"
    log="$out/pop-${model%%_*}-$precision-$name.log"
    env ${envs//,/ } timeout 200 $bin/$b bench population "$src" --cells "$cells" \
      -i grl1 --precision "$precision" --bcl "$bcl" --vary "$vary=0.5:1.5" > "$log" 2>&1
    rc=$?
    awk -v m="${model%%_*}" -v p="$precision" -v n="$name" -v rc=$rc '
      /^kernel:/ {match($0, /last beat [^;]*/); regs=substr($0, RSTART + 10, RLENGTH - 10)}
      $1 ~ /^population-/ {printf "%-7s %-6s %-10s %10s cell-steps/s  roof %s  ach/roof %s  %s  rc %s\n", m, p, n, $4, $5, $6, regs, rc; done=1}
      END {if (!done) printf "%-7s %-6s %-10s failed rc %s\n", m, p, n, rc}' "$log" | tee -a "$out/table.txt"
   done
  done
done
if [ -n "${GPU_TESTS:-}" ]; then
  timeout "${TEST_SECONDS:-240}" $bin/heartwave_gpu_tests --gtest_filter="$GPU_TESTS" > "$out/gpu-tests.log" 2>&1
  echo "gpu tests rc=$? $(grep -c '^\[       OK' "$out/gpu-tests.log") ok, $(grep -c '^\[  FAILED' "$out/gpu-tests.log") failed" |
    tee -a "$out/table.txt"
  grep '^\[  FAILED' "$out/gpu-tests.log" | tee -a "$out/table.txt"
fi
echo "== table"
cat "$out/table.txt"
