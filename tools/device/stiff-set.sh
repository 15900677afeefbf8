#!/usr/bin/env bash
# On the device machine: the whole stiff set (tests/data/stiff and the shared CellML models)
# on the host's cores, one test process per model side by side,
# recorded as one file for docs/data/stiff/ (docs/verification.md tables it). Each model is
# a run-time compile, a CVODE reference and `auto`'s probes: up to 5 minutes on one core;
# here the whole set takes 5 minutes, on CI's two cores most of its test time.
#
# Here:   bash tools/device/pack.sh heartwave_tests=build/tests/heartwave_tests
# Device: bash tools/device/stiff-set.sh COMMIT [MODEL ...]   (carry .devrun; all models
#         without names; writes $OUT/stiff-set-COMMIT.txt)
set -uo pipefail
cd "$(dirname "$0")/../.."
commit=${1:-$(cat .devrun/commit 2>/dev/null || echo unknown)}
shift || true
out=${OUT:-/tmp/stiff-set}
mkdir -p "$out" /tmp/stiff-logs
bash tools/device/unpack.sh >/dev/null || exit 1
# The test binary has this checkout's paths compiled in (/work/main, /work/shared).
mkdir -p /work
[ -e /work/main ] || ln -s "$PWD" /work/main
[ -e /work/shared ] || ln -s "$PWD/.devrun/root/shared" /work/shared
export OMP_NUM_THREADS=1 HEARTWAVE_CACHE=/tmp/hwc-stiff
tests=.devrun/bin/heartwave_tests
models="$*"
[ -n "$models" ] || models=$("$tests" --gtest_list_tests --gtest_filter='Models/StiffSet.*' | awk '/^  /{print $1}' | sed 's|.*/||')
for m in $models; do
  "$tests" --gtest_color=no --gtest_filter="Models/StiffSet.*/$m" > "/tmp/stiff-logs/$m.log" 2>&1 &
done
wait
file="$out/stiff-set-$commit.txt"
{
  echo "# the GPU host's CPU ($(nproc --all) $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //') cores, beside the GPU) (one test process per model, OMP_NUM_THREADS=1); commit $commit"
  echo "# command: heartwave_tests --gtest_filter='Models/StiffSet.*/MODEL' for each model below, in parallel (tools/device/stiff-set.sh)"
  for m in $models; do
    echo "=== $m.log"
    grep -E '^HW_STIFF|Failure|Expected|last-beat|^\[( +OK|  FAILED|  SKIPPED) \]|exception' "/tmp/stiff-logs/$m.log"
  done
} > "$file"
grep -cE '^\[       OK' "$file" | sed 's/^/passed: /'
grep -E '^\[  FAILED  \] Models' "$file" | sort -u
