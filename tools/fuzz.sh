#!/usr/bin/env bash
# Builds the libFuzzer targets (the model parsers, the mesh readers, the live view's
# controls) and runs each in turn.
#
#   tools/fuzz.sh [SECONDS] [TARGET...]      default: 600 seconds, fuzz_cellml fuzz_hwm fuzz_live_control
#                                            fuzz_sbml (where libSBML is installed)
#   (mesh readers: fuzz_mesh_tetgen fuzz_mesh_opencarp fuzz_mesh_vtu fuzz_mesh_vtk)
#
# Environment: HW_FUZZ_BUILD (build folder, default build-fuzz), HW_FUZZ_JOBS (ninja -j,
# default 2), HW_FUZZ_OUT (where crash inputs and logs go, default $HW_FUZZ_BUILD/fuzz-out).
# The targets run one after another (not in parallel) on a working copy of the seed corpus
# in tests/fuzz/corpus, so the committed corpus only changes when someone copies inputs
# back on purpose. Exit status: 0 when no target found a crash, 1 otherwise.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${1:-600}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(fuzz_cellml fuzz_hwm fuzz_live_control)
  pkg-config --exists libsbml 2>/dev/null && targets+=(fuzz_sbml)
fi
build="${HW_FUZZ_BUILD:-$root/build-fuzz}"
out="${HW_FUZZ_OUT:-$build/fuzz-out}"
jobs="${HW_FUZZ_JOBS:-2}"

CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DHW_BUILD_FUZZ=ON -DHW_BUILD_TESTS=OFF -DHW_BUILD_BENCH=OFF >/dev/null
ninja -C "$build" -j "$jobs" "${targets[@]}"

# Longest input each parser sees: the seed CellML model is ~21 kB; .hwm lines are short.
declare -A max_len=([fuzz_cellml]=32768 [fuzz_hwm]=4096 [fuzz_live_control]=4200 [fuzz_sbml]=16384
                   [fuzz_mesh_tetgen]=8192 [fuzz_mesh_opencarp]=8192 [fuzz_mesh_vtu]=16384 [fuzz_mesh_vtk]=8192)
declare -A corpus_name=([fuzz_cellml]=cellml [fuzz_hwm]=hwm [fuzz_live_control]=live [fuzz_sbml]=sbml
                        [fuzz_mesh_tetgen]=mesh_tetgen [fuzz_mesh_opencarp]=mesh_opencarp [fuzz_mesh_vtu]=mesh_vtu
                        [fuzz_mesh_vtk]=mesh_vtk)

status=0
summary=()
for t in "${targets[@]}"; do
  name="${corpus_name[$t]}"
  work="$out/$t/corpus"
  crashes="$out/$t/crashes"
  log="$out/$t/fuzz.log"
  mkdir -p "$work" "$crashes"
  cp -n "$root/tests/fuzz/corpus/$name/"* "$work/" 2>/dev/null || true
  echo "== $t: ${seconds}s, log $log"
  set +e
  # -close_fd_mask=3 hides the parser's own output; sanitizer reports still reach the log.
  "$build/tests/fuzz/$t" "$work" "$root/tests/fuzz/corpus/$name" \
    $( [ -f "$root/tests/fuzz/$name.dict" ] && echo "-dict=$root/tests/fuzz/$name.dict" ) -max_len="${max_len[$t]}" -timeout=10 \
    -rss_limit_mb=2048 -max_total_time="$seconds" -print_final_stats=1 \
    -artifact_prefix="$crashes/" >"$log" 2>&1
  rc=$?
  set -e
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  cov=$(grep -E '^#[0-9]+' "$log" | tail -1 | grep -o 'cov: [0-9]*' | grep -o '[0-9]*' || echo "?")
  ft=$(grep -E '^#[0-9]+' "$log" | tail -1 | grep -o 'ft: [0-9]*' | grep -o '[0-9]*' || echo "?")
  ncrash=$(find "$crashes" -type f | wc -l)
  summary+=("$t: ${seconds}s, executions ${execs}, coverage ${cov} edges / ${ft} features, corpus $(ls "$work" | wc -l) inputs, crash/leak/timeout inputs ${ncrash} (exit ${rc})")
  if [ "$rc" -ne 0 ] || [ "$ncrash" -ne 0 ]; then
    status=1
    grep -m1 -E 'ERROR: (AddressSanitizer|libFuzzer|LeakSanitizer)|runtime error|fuzz_hwm finding' "$log" || true
    echo "   crash inputs in $crashes"
  fi
done
echo "== summary"
printf '%s\n' "${summary[@]}"
exit $status
