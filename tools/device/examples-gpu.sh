#!/usr/bin/env bash
# On the device machine: the worked examples of docs/worked-examples.md run to their end on
# the GPU (tt06_spiral2d.toml, rabbit_layers.toml), each timed, plus the TT06 spiral's first
# 100 ms on 2 host cores (the cpu rate for the time estimate in the example's header). The
# pictures and CSVs come back in $OUT/<example>/ (field .vti files are left behind: too big).
# Here:   bash tools/device/pack.sh heartwave=build/apps/heartwave/heartwave
# Device: bash tools/device/examples-gpu.sh   (carry .devrun)
set -uo pipefail
cd "$(dirname "$0")/../.."
bash tools/device/unpack.sh >/dev/null
hw=$PWD/.devrun/bin/heartwave
out=${OUT:-/tmp/hw-examples}
mkdir -p "$out"
# The rabbit case names ../../shared relative to examples/: the carried copy stands in.
[ -e ../shared ] || ln -s "$PWD/.devrun/root/shared" ../shared
nvidia-smi --query-gpu=name --format=csv,noheader | tee "$out/gpu.txt"
git rev-parse --short HEAD 2>/dev/null | tee "$out/commit.txt"
row() {  # name case extra...
  local name=$1 case=$2
  shift 2
  local t0=$(date +%s.%N)
  "$hw" run "$case" --set "output.directory=\"$out/$name\"" "$@" > "$out/$name.log" 2>&1
  local rc=$? t1=$(date +%s.%N)
  printf '%-22s rc %d  %7.1f s\n' "$name" "$rc" "$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')" | tee -a "$out/summary.txt"
}
row tt06_spiral2d examples/tt06_spiral2d.toml --backend cuda
row rabbit_layers examples/rabbit_layers.toml --backend cuda
row tt06_spiral2d_cpu2 examples/tt06_spiral2d.toml --backend cpu --threads 2 --set time.t_end=100
# What comes back: pictures, CSVs and logs (the device returns at most a few dozen files).
find "$out" \( -name '*.vti' -o -name '*.hwck' -o -name '*.pvd' \) -delete
find "$out" -name 'V_*.png' ! -name 'V_000[0-6][05].png' -delete

# One file back (the device returns a handful of files per call): unpack here with tar -xzf.
tar -C "$out" -czf /tmp/examples.tgz . && find "$out" -mindepth 1 -delete && mv /tmp/examples.tgz "$out/"
