#!/usr/bin/env bash
# On the device: the checks a change to the GPU CG and the mesh examples needs, in one call
# (logs to $OUT, table last): tools/device/cg-bench.sh (the CG tests, memcheck, bench
# niederer at dx 0.05 in both precisions), every CudaTissue test, racecheck and initcheck
# on tools/device/sanitizer_box.toml with Crank-Nicolson in float and double, and
# examples/rabbit_mesh.toml run whole on the GPU.
# Usage (on the device, .devrun carried): bash tools/device/session-checks.sh
#   (RABBIT=0: without the rabbit example; CG_GUESSES: as cg-bench.sh)
set -uo pipefail
cd "$(dirname "$0")/../.."
bash tools/device/unpack.sh >/dev/null
out=${OUT:-/tmp}
bin=.devrun/bin
timeout 240 bash tools/device/cg-bench.sh 0.01 heartwave > "$out/cg-bench.log" 2>&1
echo "cg-bench rc=$?" >> "$out/table.txt"
export HEARTWAVE_SHARED_DIR=$PWD/.devrun/root/shared
timeout 180 $bin/heartwave_gpu_tests --gtest_filter='CudaTissue.*' > "$out/cuda-tissue.log" 2>&1
echo "CudaTissue.* rc=$? $(grep -E '^\[  (PASSED|FAILED)' "$out/cuda-tissue.log" | paste -sd' ')" >> "$out/table.txt"
for tool in racecheck initcheck; do
  for prec in float double; do
    timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 $bin/heartwave run tools/device/sanitizer_box.toml \
      --backend cuda -q --overwrite --set 'time.diffusion="crank-nicolson"' --set "time.precision=\"$prec\"" \
      --set "output.directory=\"/tmp/san-$tool-$prec\"" > "$out/sanitizer-$tool-$prec.log" 2>&1
    echo "$tool CN $prec rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitizer-$tool-$prec.log" | tail -1)" >> "$out/table.txt"
  done
done
[ "${RABBIT:-1}" = 0 ] && { nvidia-smi --query-gpu=name --format=csv,noheader >> "$out/table.txt"; tail -12 "$out/cg-bench.log"; cat "$out/table.txt"; exit 0; }
start=$(date +%s%N)
timeout 120 $bin/heartwave run examples/rabbit_mesh.toml --backend cuda --overwrite \
  --set "geometry.file=\"$HEARTWAVE_SHARED_DIR/geometry/rabbit_ventricles_ucsd_chaste/UCSD_heart.face\"" \
  --set 'output.directory="/tmp/rabbit_mesh"' > "$out/rabbit-mesh.log" 2>&1
rc=$?
echo "rabbit_mesh.toml (400 ms) rc=$rc wall $(( ($(date +%s%N) - start) / 1000000 )) ms; $(ls /tmp/rabbit_mesh | paste -sd' ')" >> "$out/table.txt"
cp /tmp/rabbit_mesh/activation.dat "$out/" 2>/dev/null
nvidia-smi --query-gpu=name --format=csv,noheader >> "$out/table.txt"
cat "$out/cg-bench.log" | tail -12
cat "$out/table.txt"
