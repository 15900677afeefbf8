#!/usr/bin/env bash
# Builds the libFuzzer targets (every reader of a user's file, and the live view's controls)
# and runs them (docs/fuzzing.md).
#
#   tools/fuzz.sh [SECONDS] [TARGET[:WORKERS]...]   default: 600 seconds, every target below
#
# Targets: fuzz_cellml fuzz_hwm fuzz_sbml (where libSBML is installed) fuzz_live_control
#   fuzz_mesh_tetgen fuzz_mesh_opencarp fuzz_mesh_vtu fuzz_mesh_vtk
#   fuzz_nrrd fuzz_vti fuzz_vtk_image fuzz_case fuzz_checkpoint
#
# Environment:
#   HW_FUZZ_BUILD   build folder (default build-fuzz); HW_FUZZ_JOBS: ninja -j (default 2)
#   HW_FUZZ_BIN     a folder holding the targets already built (e.g. the device machine's
#                   .devrun/bin, tools/device/fuzz-farm.sh): nothing is built
#   HW_FUZZ_OUT     where corpora, crash inputs and logs go (default $HW_FUZZ_BUILD/fuzz-out)
#   HW_FUZZ_WORKERS fuzzing processes per target (default 1; TARGET:N sets one target's);
#                   they share the target's working corpus, each picking up what the others found
#   HW_FUZZ_TOGETHER=1  all targets at the same time (default: one after another)
# Each target works on a copy of its seed corpus (tests/fuzz/corpus/NAME), so the committed
# corpus changes only when someone copies inputs back on purpose. The summary gives, per
# target, the wall and CPU time (user + system of all its processes), executions, coverage,
# corpus size and crash inputs. Exit status: 0 when no target found a crash, 1 otherwise.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${1:-600}"
shift || true
specs=("$@")
targets=()
declare -A workers_of=()
for spec in "${specs[@]}"; do
  targets+=("${spec%%:*}")
  if [[ "$spec" == *:* ]]; then workers_of[${spec%%:*}]=${spec#*:}; fi
done
if [ ${#targets[@]} -eq 0 ]; then
  targets=(fuzz_cellml fuzz_hwm fuzz_live_control fuzz_mesh_tetgen fuzz_mesh_opencarp fuzz_mesh_vtu fuzz_mesh_vtk
           fuzz_nrrd fuzz_vti fuzz_vtk_image fuzz_case fuzz_checkpoint)
  pkg-config --exists libsbml 2>/dev/null && targets+=(fuzz_sbml)
fi
build="${HW_FUZZ_BUILD:-$root/build-fuzz}"
out="${HW_FUZZ_OUT:-$build/fuzz-out}"
jobs="${HW_FUZZ_JOBS:-2}"
workers="${HW_FUZZ_WORKERS:-1}"
bin="${HW_FUZZ_BIN:-}"

if [ -z "$bin" ]; then
  # No CUDA or Python: the fuzzers read files on the host and need neither.
  CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DHW_BUILD_FUZZ=ON -DHW_BUILD_TESTS=OFF -DHW_BUILD_BENCH=OFF -DHW_CUDA=OFF -DHW_PYTHON=OFF >/dev/null
  ninja -C "$build" -j "$jobs" "${targets[@]}"
  bin="$build/tests/fuzz"
fi

# Longest input each reader sees: the seed CellML model is ~21 kB; .hwm lines are short.
declare -A max_len=([fuzz_cellml]=32768 [fuzz_hwm]=4096 [fuzz_live_control]=4200 [fuzz_sbml]=16384
                   [fuzz_mesh_tetgen]=8192 [fuzz_mesh_opencarp]=8192 [fuzz_mesh_vtu]=16384 [fuzz_mesh_vtk]=8192
                   [fuzz_nrrd]=4096 [fuzz_vti]=8192 [fuzz_vtk_image]=4096 [fuzz_case]=8192
                   [fuzz_checkpoint]=16384)
declare -A corpus_name=([fuzz_cellml]=cellml [fuzz_hwm]=hwm [fuzz_live_control]=live [fuzz_sbml]=sbml
                        [fuzz_mesh_tetgen]=mesh_tetgen [fuzz_mesh_opencarp]=mesh_opencarp [fuzz_mesh_vtu]=mesh_vtu
                        [fuzz_mesh_vtk]=mesh_vtk [fuzz_nrrd]=nrrd [fuzz_vti]=vti [fuzz_vtk_image]=vtk_image
                        [fuzz_case]=case [fuzz_checkpoint]=checkpoint)
declare -A dict_name=([fuzz_vti]=vtk_image)

# One target: its workers side by side on one working corpus; then `times` gives the CPU
# seconds of all of them (the subshell's children).
fuzz_one() {
  local t=$1 name="${corpus_name[$1]}"
  local dir="$out/$t" work="$out/$t/corpus" crashes="$out/$t/crashes"
  local dict="$root/tests/fuzz/${dict_name[$t]:-$name}.dict"
  mkdir -p "$work" "$crashes"
  cp -n "$root/tests/fuzz/corpus/$name/"* "$work/" 2>/dev/null || true
  local start=$SECONDS rc=0
  (
    for w in $(seq 1 "${workers_of[$t]:-$workers}"); do
      "$bin/$t" "$work" "$root/tests/fuzz/corpus/$name" $( [ -f "$dict" ] && echo "-dict=$dict" ) \
        -max_len="${max_len[$t]}" -timeout=10 -rss_limit_mb=2048 -max_total_time="$seconds" \
        -print_final_stats=1 -artifact_prefix="$crashes/" >"$dir/fuzz.$w.log" 2>&1 &
    done
    rc=0
    for job in $(jobs -p); do wait "$job" || rc=1; done
    times >"$dir/times"  # not in a pipe: that would be a new subshell without these children
    exit $rc
  ) || rc=$?
  echo $rc >"$dir/rc"
  echo $((SECONDS - start)) >"$dir/wall"
}

# "1m2.5s" → seconds
to_seconds() { awk -v t="$1" 'BEGIN { split(t, a, "m"); sub("s", "", a[2]); print a[1] * 60 + a[2] }'; }

status=0
for t in "${targets[@]}"; do
  [ -x "$bin/$t" ] || { echo "no fuzz target $bin/$t"; exit 2; }
  rm -f "$out/$t"/fuzz.*.log
  echo "== $t: ${seconds}s × ${workers_of[$t]:-$workers} worker(s), logs $out/$t/fuzz.*.log"
  if [ "${HW_FUZZ_TOGETHER:-0}" = 1 ]; then fuzz_one "$t" & else fuzz_one "$t"; fi
done
wait

echo "== summary"
printf '%-20s %6s %8s %12s %8s %14s %7s %7s\n' target wall_s cpu_s executions per_cpu_s "edges/features" corpus crashes
for t in "${targets[@]}"; do
  dir="$out/$t"
  read -r user sys < <(tail -1 "$dir/times")
  cpu=$(awk -v u="$(to_seconds "$user")" -v s="$(to_seconds "$sys")" 'BEGIN { printf "%.0f", u + s }')
  execs=$(cat "$dir"/fuzz.*.log | { grep -o 'stat::number_of_executed_units: *[0-9]*' || true; } |
          awk '{ s += $NF } END { print s + 0 }')
  cov=$(cat "$dir"/fuzz.*.log | { grep -E '^#[0-9]+' || true; } | { grep -o 'cov: [0-9]*' || true; } |
        awk '$2 > m { m = $2 } END { print m + 0 }')
  ft=$(cat "$dir"/fuzz.*.log | { grep -E '^#[0-9]+' || true; } | { grep -o 'ft: [0-9]*' || true; } |
       awk '$2 > m { m = $2 } END { print m + 0 }')
  ncrash=$(find "$dir/crashes" -type f | wc -l)
  rate=$(awk -v e="$execs" -v c="$cpu" 'BEGIN { printf "%.0f", (c > 0 ? e / c : 0) }')
  printf '%-20s %6s %8s %12s %8s %14s %7s %7s\n' "$t" "$(cat "$dir/wall")" "$cpu" "$execs" "$rate" \
    "${cov:-?}/${ft:-?}" "$(ls "$dir/corpus" | wc -l)" "$ncrash"
  if [ "$(cat "$dir/rc")" -ne 0 ] || [ "$ncrash" -ne 0 ]; then
    status=1
    grep -h -m1 -E 'ERROR: (AddressSanitizer|libFuzzer|LeakSanitizer|UndefinedBehaviorSanitizer)|runtime error|finding' \
      "$dir"/fuzz.*.log || true
    echo "   crash inputs in $dir/crashes"
  fi
done
exit $status
