#!/usr/bin/env bash
# What watching costs the stepping (docs/benchmarks.md, "The live view"), on the device: the
# GPU's live frame (CudaLiveFrame, the slices and the volume) first, then bench_live on the
# GPU for the 2D spiral and the rabbit, and on the host's CPU (a quiet machine) for the
# spiral (4 threads) and the rabbit (8 threads). Each bench_live row alternates the run without the view, the live run
# unwatched and watched by one WebSocket client reading every frame.
#
# Usage (on the device; pack heartwave, bench_live and heartwave_gpu_tests here, carry .devrun):
#   bash tools/device/live-cost.sh [SECONDS] [ROUNDS]
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/live-cost}
mkdir -p "$OUT"
secs=${1:-3}
rounds=${2:-2}
bash tools/device/unpack.sh > /dev/null
export HEARTWAVE_SHARED_DIR=$PWD/.devrun/root/shared HEARTWAVE_PROGRESS=0
# The rabbit case names ../../shared relative to examples/: the carried copy stands in.
[ -e ../shared ] || ln -s "$PWD/.devrun/root/shared" ../shared
echo "commit $(cat .devrun/commit), $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), $(nproc) CPUs"
.devrun/bin/heartwave_gpu_tests --gtest_filter='CudaLiveFrame.*' > "$OUT/gpu-live-frame.log" 2>&1
tail -2 "$OUT/gpu-live-frame.log"
run() {  # name, then bench_live's arguments
  local name=$1
  shift
  timeout 200 .devrun/bin/bench_live "$@" --seconds "$secs" --rounds "$rounds" > "$OUT/live-$name.log" 2>&1 ||
    echo "rc $?" >> "$OUT/live-$name.log"
  echo "== $name: $*"
  tail -3 "$OUT/live-$name.log"
}
run spiral2d-cuda examples/spiral2d.toml --backend cuda
run rabbit-cuda examples/rabbit_layers.toml --backend cuda
run spiral2d-cpu4 examples/spiral2d.toml --backend cpu --threads 4
run rabbit-cpu8 examples/rabbit_layers.toml --backend cpu --threads 8
