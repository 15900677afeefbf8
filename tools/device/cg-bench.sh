#!/usr/bin/env bash
# Implicit diffusion on the GPU (issue 29): the GPU tests of the CG, compute-sanitizer on
# one of them, then `bench niederer` at dx 0.05 mm (3.36 M cells) with explicit diffusion and
# Crank-Nicolson, each in float and double, for each binary given (the first is the one to
# judge; a second, e.g. the commit before, is the baseline in the same run). Logs to $OUT,
# a table last: binary, diffusion, precision, wall s, steps, ms/step, CG iterations/step.
# CG_GUESSES (default "extrapolate"): the CG's first guesses to run Crank-Nicolson with
# (HEARTWAVE_CG_GUESS: none or extrapolate), each a row. NO_GRAPHS=1: Crank-Nicolson of the
# first binary once more with HEARTWAVE_CUDA_GRAPHS=0 (the host queues each solve's
# iterations and waits for it), rows marked "host".
# Usage (on the device): bash tools/device/cg-bench.sh DT BINARY [BASELINE]
set -uo pipefail
cd "$(dirname "$0")/../.."
bash tools/device/unpack.sh >/dev/null
out=${OUT:-/tmp}
dt=$1
shift
bin=.devrun/bin
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee "$out/gpu.txt"
if [ -x $bin/heartwave_gpu_tests ]; then
  $bin/heartwave_gpu_tests --gtest_filter='CudaTissue.ImplicitDiffusion:CudaTissue.FourthOrderStencil:CudaTissue.ImplicitRestart*:CudaTissue.ImplicitSteps*:CudaTissue.ImplicitSolve*:CudaTissue.GraphsChangeNothing' \
    > "$out/gpu-tests.log" 2>&1
  echo "gpu tests rc=$? $(grep -c '^\[       OK' "$out/gpu-tests.log") ok" | tee -a "$out/table.txt"
  compute-sanitizer --tool memcheck $bin/heartwave_gpu_tests --gtest_filter='CudaTissue.ImplicitDiffusion:CudaTissue.ImplicitRestart*:CudaTissue.ImplicitSolve*' \
    > "$out/memcheck.log" 2>&1
  echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' "$out/memcheck.log" | tail -1)" | tee -a "$out/table.txt"
fi
cells=3360000
bins=("$@")
for b in "${bins[@]}"; do
  runs=("explicit f32 -" "explicit f64 -")
  for g in ${CG_GUESSES:-extrapolate}; do runs+=("crank-nicolson f32 $g" "crank-nicolson f64 $g"); done
  [ "${NO_GRAPHS:-0}" = 1 ] && [ "$b" = "${bins[0]}" ] && runs+=("crank-nicolson f32 host" "crank-nicolson f64 host")
  for run in "${runs[@]}"; do
    set -- $run
    log="$out/niederer-$b-$1-$2-$3.log"
    HEARTWAVE_CUDA_GRAPHS=$([ "$3" = host ] && echo 0 || echo 1) \
    HEARTWAVE_CG_GUESS=$([ "$3" = - ] || [ "$3" = host ] && echo extrapolate || echo "$3") \
      timeout 150 $bin/$b bench niederer --dx 0.05 --dt "$dt" --diffusion "$1" --precision "$2" --backend cuda -q \
      > "$log" 2>&1
    rc=$?
    awk -v b="$b" -v d="$1" -v p="$2" -v g="$3" -v rc=$rc -v cells=$cells '
      /^wall time/ {w=$3; cs=$5; it="-"; if (match($0, /[0-9.]+ CG iterations/)) it=substr($0, RSTART, RLENGTH-14);
                    steps=cs*w/cells; printf "%-14s %-15s %-4s %-11s %8.2f s %7.0f steps %8.3f ms/step  CG it/step %s  rc %s\n", b, d, p, g, w, steps, 1000*w/steps, it, rc}
      END {if (w == "") printf "%-14s %-15s %-4s %-11s failed rc %s\n", b, d, p, g, rc}' "$log" | tee -a "$out/table.txt"
  done
  # The activation times at the nine points, for each run (they must agree within the CG's tolerance).
  for f in "$out"/niederer-$b-*.log; do
    echo "$(basename "$f" .log): $(awk 'NF == 4 && $4 ~ /^[0-9.]+$/ {printf "%s ", $4}' "$f")"
  done | tee "$out/activation-$b.txt"
done
# The run's wall-time estimate on the GPU with a cold kernel cache (compilation and tuning
# in its first steps): the printed "expected wall time" against the process's wall time.
for b in "${bins[@]}"; do
  cache=$(mktemp -d)
  start=$(date +%s.%N)
  HEARTWAVE_CACHE=$cache $bin/$b bench niederer --dx 0.05 --dt "$dt" --diffusion crank-nicolson --backend cuda \
    > "$out/estimate-$b.log" 2>&1
  end=$(date +%s.%N)
  echo "estimate check ($b, cold cache): $(grep -o 'expected wall time: [^(]*' "$out/estimate-$b.log" | tr -d '\r');" \
    "process wall $(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.1f", b - a}') s; $(grep '^wall time' "$out/estimate-$b.log")" |
    tee -a "$out/table.txt"
done
echo "== table"
cat "$out/table.txt"
