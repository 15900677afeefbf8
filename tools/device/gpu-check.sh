#!/usr/bin/env bash
# On the device machine: the GPU check of the CUDA backend in one call. Runs the gpu tests
# (tests/gpu, against the reference and cpu engines), compute-sanitizer's memcheck,
# racecheck and initcheck on small cases, and the GPU benchmarks against a device-to-device
# copy roof measured in the same run; prints one table last. Logs go to $OUT (when set).
#
# Here:   bash tools/device/pack.sh heartwave=build/apps/heartwave/heartwave \
#              heartwave_gpu_tests=build/tests/heartwave_gpu_tests \
#              heartwave_backend_tests=build/tests/heartwave_backend_tests
# Device: bash tools/device/gpu-check.sh [BENCH_SECONDS] [all|cell|rest|tests|sanitizers|bench|niederer]
#         (carry .devrun; several parts: "tests+sanitizers")
#
# A device call may last 600 s at most, and the printed-cell-step tests (CudaCell: every
# model, every integrator, both precisions, against the interpreter) take most of that on
# their own: `cell` runs only them, `tests` the other gpu tests and the backend tests,
# `sanitizers` compute-sanitizer on small cases, `bench` the benchmarks (tissue cases against the copy roof, quiet and beside
# busy host cores; the population against its compute roof), `niederer` the N-version
# table on the GPU down to dx 0.05 mm (tools/run_niederer.py --backend cuda, in double;
# the records come back as one tar, unpacked into docs/data/niederer-gpu/);
# `rest` = tests + sanitizers + bench; `all` (the default) everything but niederer. Parts
# join with '+' (`cell+sanitizers`).
set -uo pipefail
cd "$(dirname "$0")/../.."
secs=${1:-2}
part=${2:-all}
for p in ${part//+/ }; do
  case "$p" in all|cell|rest|tests|sanitizers|bench|niederer) ;;
    *) echo "gpu-check: part must be all, cell, rest, tests, sanitizers, bench or niederer (or several joined by +), not '$p'" >&2; exit 2 ;;
  esac
done
runs() {  # whether this call runs section $1 (cell, tests, sanitizers, bench or niederer)
  local p
  for p in ${part//+/ }; do
    case "$p" in
      all) [ "$1" != niederer ] && return 0 ;;
      rest) [ "$1" != cell ] && [ "$1" != niederer ] && return 0 ;;
      *) [ "$1" = "$p" ] && return 0 ;;
    esac
  done
  return 1
}
out=${OUT:-/tmp/gpu-check}
mkdir -p "$out"
export HEARTWAVE_CACHE=${HEARTWAVE_CACHE:-/tmp/heartwave-cache}
bash tools/device/unpack.sh >/dev/null || exit 1
[ -d .devrun/root/shared ] && export HEARTWAVE_SHARED_DIR=$PWD/.devrun/root/shared
export HEARTWAVE_TEST_DATA_DIR=$PWD/tests
hw=.devrun/bin/heartwave
tests=.devrun/bin/heartwave_gpu_tests
rows=()
row() { rows+=("$(printf '%-34s %s' "$1" "$2")"); }
# "P passed, F failed, S skipped" of a gtest log (the final summary lists names without a time).
tally() {
  printf '%d passed, %d failed, %d skipped' "$(grep -c '^\[       OK' "$1")" \
    "$(grep -c '^\[  FAILED  \] [A-Z].*(' "$1")" "$(grep -c '^\[  SKIPPED \] [A-Z].*(' "$1")"
}

commit=$(cat .devrun/commit 2>/dev/null || git rev-parse --short HEAD 2>/dev/null || echo unknown)
gpu=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1)
row "device" "$gpu"
row "commit" "$commit"
row "command" "bash tools/device/gpu-check.sh $secs $part (heartwave bench all --backend cuda --seconds $secs)"

# 1. The gpu tests. The printed-cell-step tests (one per model and precision, each an NVRTC
# compile of seconds) run in 8 gtest shards side by side; their logs are joined in order.
# With both parts asked for, the other gpu tests run beside the shards (the machine has 16
# cores; each part alone takes about 250 s of a call's 600).
run_tests() {
  local start
  start=$(date +%s)
  "$tests" --gtest_color=no --gtest_filter='-*CudaCell*' > "$out/gpu-tests.log" 2>&1
  echo "$(( $(date +%s) - start ))" > "$out/gpu-tests.seconds"
}
if runs tests && runs cell; then
  run_tests &
  tests_pid=$!
fi
start=$(date +%s)
if runs cell; then
  shards=8
  for i in $(seq 0 $((shards - 1))); do
    GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i "$tests" --gtest_color=no --gtest_filter='*CudaCell*' \
      > "$out/gpu-tests-cell.$i.log" 2>&1 &
  done
  wait
  cat "$out"/gpu-tests-cell.*.log > "$out/gpu-tests-cell.log" && rm -f "$out"/gpu-tests-cell.*.log
  grep -E '^\[  FAILED  \] [A-Z]' "$out/gpu-tests-cell.log"
  row "gpu tests (*CudaCell*)" "$(tally "$out/gpu-tests-cell.log") ($(( $(date +%s) - start )) s, $shards shards)"
fi
if runs tests; then
  # The shards' `wait` above has already reaped the tests run beside them when both ran.
  if [ -n "${tests_pid:-}" ]; then wait "$tests_pid" 2>/dev/null; else run_tests; fi
  grep -E '^\[( +OK|  FAILED|  SKIPPED|  PASSED|==========)|measured' "$out/gpu-tests.log" | tail -40
  row "gpu tests (-*CudaCell*)" "$(tally "$out/gpu-tests.log") ($(cat "$out/gpu-tests.seconds") s$( [ -n "${tests_pid:-}" ] && echo ', beside the shards'))"
  rm -f "$out/gpu-tests.seconds"
fi
if [ "$part" = cell ]; then
  echo
  echo "==== gpu-check cell (device, commit, results) ===="
  printf '%s\n' "${rows[@]}" | tee "$out/summary-cell.txt"
  exit 0
fi

# 1b. The cross-backend tests (label backends: cpu and cuda against the reference), when packed.
if runs tests && [ -x .devrun/bin/heartwave_backend_tests ]; then
  start=$(date +%s)
  .devrun/bin/heartwave_backend_tests --gtest_color=no > "$out/backend-tests.log" 2>&1
  row "backend tests" "$(tally "$out/backend-tests.log") ($(( $(date +%s) - start )) s)"
fi

# 2. compute-sanitizer on the small cases (kernels come from the cache by now): the gpu
# tests of a box, compressed rows, a mask and the population, then `heartwave run` on
# tools/device/sanitizer_box.toml with the sliding window forced, the tower forced, with the fourth-order
# stencil, and with O'Hara-Rudy's register-capped kernel forced (the maps, the snapshot
# copies and the pseudo-ECG's sums on the way).
san=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
for tool in memcheck racecheck initcheck; do
  runs sanitizers || break
  if [ -z "$san" ]; then row "sanitizer $tool" "compute-sanitizer not found"; continue; fi
  log="$out/sanitizer-$tool.log"
  "$san" --tool $tool --error-exitcode 9 --target-processes all "$tests" --gtest_color=no \
    --gtest_filter='CudaTissue.OddBox*:CudaTissue.ShellInCompressedRows:CudaTissue.MaskedSlab*:CudaPopulation.BatchesChangeNothing' \
    > "$log" 2>&1
  rc=$?
  for run in window tower fourth capped; do
    args=(--overwrite --set "output.directory=\"/tmp/sanitizer-$run\"")  # each tool reruns the same cases into the same folders
    kernel=cell
    case $run in
      window) kernel=window ;;
      tower) kernel=tower ;;
      fourth) args+=(--set 'conductivity.stencil="fourth"' --set conductivity.sigma_t=0.1334) ;;
      capped) kernel=capped; args+=(--set 'model[0].name="ohara_rudy_2011_endo"' --set time.t_end=0.4) ;;
    esac
    echo "==== heartwave run tools/device/sanitizer_box.toml ($run)" >> "$log"
    HEARTWAVE_CUDA_KERNEL=$kernel \
      "$san" --tool $tool --error-exitcode 9 "$hw" run tools/device/sanitizer_box.toml --backend cuda -q "${args[@]}" >> "$log" 2>&1
    r=$?
    [ $r -ne 0 ] && rc=$r
  done
  summary=$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | sed -E 's/^=+ //' | paste -sd';' -)
  row "sanitizer $tool" "rc $rc; ${summary:-no summary (see log)}"
done

if runs bench; then
# 3. Benchmarks: every tissue case on the GPU, the roof measured in the same run.
"$hw" bench all --backend cuda --seconds "$secs" 2>&1 | tee "$out/bench.log"
while read -r name cells steps s cs sps wall bpc gbs roof ach; do
  if [ "$cells" = "skipped:" ]; then row "bench $name" "skipped"; continue; fi
  row "bench $name" "$(printf '%.3g cell-steps/s, %.4g steps/s, %.3g of roof' "$cs" "$sps" "$ach")"
done < <(grep -E '^(karma|tt06|niederer|rabbit|ord)[^:]* ' "$out/bench.log")
roof=$(grep -m1 'copy roof' "$out/bench.log")
row "roof" "${roof#copy roof: }"

# 3b. As users run: the same cases quiet and beside one busy loop on every host core (the
# host thread queues the kernels; the small, launch-bound niederer-0.2 feels a busy CPU most).
: > "$out/busy.txt"
for mode in quiet busy; do
  pids=()
  if [ "$mode" = busy ]; then
    for _ in $(seq "$(nproc)"); do (while :; do :; done) & pids+=($!); done
    sleep 1
    echo "load: $(cut -d' ' -f1 /proc/loadavg), $(nproc) busy loops" >> "$out/busy.txt"
  fi
  for c in niederer-0.2 karma3d-256 tt06-3d-256; do
    "$hw" bench "$c" --backend cuda --seconds "$secs" 2>/dev/null | grep -E "^$c " | sed "s/^/$mode /" >> "$out/busy.txt"
  done
  [ ${#pids[@]} -gt 0 ] && kill "${pids[@]}" 2>/dev/null
  wait 2>/dev/null
done
cat "$out/busy.txt"
while read -r c; do
  q=$(awk -v c="$c" '$1 == "quiet" && $2 == c { print $7 }' "$out/busy.txt")
  b=$(awk -v c="$c" '$1 == "busy" && $2 == c { print $7 }' "$out/busy.txt")
  [ -n "$q" ] && [ -n "$b" ] && row "busy host $c" "$(awk -v q="$q" -v b="$b" 'BEGIN { printf "%.0f steps/s quiet, %.0f busy (%+.1f %%)", q, b, 100 * (b - q) / q }')"
done < <(printf '%s\n' niederer-0.2 karma3d-256 tt06-3d-256)

# 3c. The box kernels forced one at a time (HEARTWAVE_CUDA_KERNEL; each still tunes its
# block shapes and depths): a thread per cell, the sliding window, and the window on the
# tower layout, so that docs/benchmarks.md can say where each wins.
: > "$out/variants.txt"
for c in karma2d karma3d-256 tt06-3d-256 niederer-0.05; do
  line="$c:"
  for k in cell window tower; do
    HEARTWAVE_CUDA_KERNEL=$k "$hw" bench "$c" --backend cuda --seconds 0.2 > /dev/null 2>&1  # compile, tune
    r=$(HEARTWAVE_CUDA_KERNEL=$k "$hw" bench "$c" --backend cuda --seconds "$secs" 2>&1 | tee -a "$out/variants.txt" |
        awk -v c="$c" '$1 == c { printf "%.0f (%.3f)", $6, $11 }')
    line="$line $k ${r:-failed}"
  done
  row "kernels $c" "${line#*: } steps/s (of roof)"
done
grep -E '^(karma|tt06|niederer)[^ ]*:' "$out/variants.txt" | cut -c1-2000 > "$out/variants-describe.txt"

# 4. A population of 10^6 O'Hara-Rudy cells (float, RL1, dt 0.01 ms, one 400 ms beat):
# 4·10^10 cell-steps, timed from the command's start to its end (compilation included) ...
start=$(date +%s.%N)
"$hw" sweep ohara_rudy_2011_endo --lhs GKr_b=0.5:1.5 --cells 1000000 --bcl 400 --beats 1 --precision float \
  --integrator rl1 --backend cuda -o /tmp/gpu-check-population.csv > "$out/population.log" 2>&1
rc=$?
row "population ord-1m" "$(awk -v a="$start" -v b="$(date +%s.%N)" -v rc="$rc" \
  'BEGIN { printf "rc %d; 4e10 cell-steps in %.2f s wall: %.3g cell-steps/s", rc, b - a, 4e10 / (b - a) }')"
# ... and on the device against the compute roof (the kernel's operations at the rates
# measured in the same run).
"$hw" bench population ohara_rudy_2011_endo --cells 1000000 --vary GKr_b=0.5:1.5 --bcl 400 --beats 1 \
  --precision float --integrator rl1 > "$out/population-roof.log" 2>&1
read -r _ _ dev cs croof ach < <(grep -E '^population-' "$out/population-roof.log")
row "population ord-1m roof" "$(printf '%.3g cell-steps/s on the device (%.2f s), compute roof %.3g, %.3g of it' "$cs" "$dev" "$croof" "$ach")"
fi

# 5. The N-version table on the GPU (12 runs, 0.5 to 0.05 mm, 150 ms each, double).
if runs niederer; then
  if ! command -v python3 >/dev/null; then
    row "niederer" "python3 not found on this machine"
  else
    start=$(date +%s)
    python3 tools/run_niederer.py --backend cuda --precision f64 --heartwave "$hw" --force \
      --commit "$commit" --out "$out/niederer-gpu" > "$out/niederer.log" 2>&1
    rc=$?
    tar -C "$out" -cf "$out/niederer-gpu.tar" niederer-gpu && rm -rf "$out/niederer-gpu"
    row "niederer (gpu, f64)" "rc $rc; $(grep -c 'bench niederer' "$out/niederer.log") runs ($(( $(date +%s) - start )) s)"
    for f in 0.5 0.2 0.1 0.05; do
      p8=$(tar -xOf "$out/niederer-gpu.tar" "niederer-gpu/dx${f}_dt0.005.csv" 2>/dev/null | awk -F, '$1 == 20 && $2 == 7 && $3 == 3 { print $4 }')
      [ -n "$p8" ] && row "niederer P8 dx $f dt 0.005" "$p8 ms"
    done
  fi
fi

echo
echo "==== gpu-check (device, commit, results) ===="
summary=summary.txt
[ "$part" = niederer ] && summary=summary-niederer.txt
printf '%s\n' "${rows[@]}" | tee "$out/$summary"
# A device call returns at most 8 files from $OUT: the logs travel as one tar as well.
tar -C "$out" --exclude='gpu-check-logs.tgz' -czf "$out/gpu-check-logs.tgz" . 2>/dev/null
