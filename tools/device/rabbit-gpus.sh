#!/usr/bin/env bash
# The rabbit in real time on the GPUs of one host (issue 26's aim, docs/parallel.md):
# `heartwave bench rabbit-tt06` on 1 and N GPUs with each cell-maths setting, then
# `heartwave run examples/rabbit_layers.toml --gpus N` with its outputs, whose last line gives
# the real-time factor. Logs go to $OUT; the last lines are the table.
#
# Usage (on the device, after tools/device/pack.sh here, carry .devrun):
#   bash tools/device/rabbit-gpus.sh [MATHS] [SECONDS]   (MATHS default exact,fast,tables+fast)
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/rabbit-gpus}
mkdir -p "$OUT"
maths=${1:-exact,fast,tables+fast}
seconds=${2:-2}
bash tools/device/unpack.sh > /dev/null
export PATH="$PWD/.devrun/bin:$PATH" HEARTWAVE_PROGRESS=0
export HEARTWAVE_SHARED_DIR="$PWD/.devrun/root/shared" HEARTWAVE_CACHE=/tmp/hw-cache
hw=.devrun/bin/heartwave
n=$(nvidia-smi -L | wc -l)
[ "$n" -gt 4 ] && n=4
table="$OUT/table.txt"
: > "$table"
for m in ${maths//,/ }; do
  for g in 1 "$n"; do
    log="$OUT/bench-$m-$g.log"
    timeout 100 "$hw" bench rabbit-tt06 --gpus "$g" --cell-maths "$m" --seconds "$seconds" > "$log" 2>&1 || echo "rc $?" >> "$log"
    echo "bench $m gpus=$g roof_GBs=$(awk '/copy roof/{print $3}' "$log") | $(awk '$1 == "rabbit-tt06"' "$log")" >> "$table"
    tail -1 "$table"
  done
done
mkdir -p "$OUT/ex"
sed "s#\.\./\.\./shared#$HEARTWAVE_SHARED_DIR#" examples/rabbit_layers.toml > "$OUT/ex/rabbit.toml"
for m in ${maths//,/ }; do
  log="$OUT/run-$m-$n.log"
  timeout 120 "$hw" run "$OUT/ex/rabbit.toml" --backend cuda --gpus "$n" --set time.cell_maths="$m" \
    --set output.directory="$OUT/ex/out-$m" --overwrite > "$log" 2>&1 || echo "rc $?" >> "$log"
  echo "run rabbit_layers $m gpus=$n | $(grep -E '^done:' "$log" | tail -1)" >> "$table"
  tail -1 "$table"
done
rm -rf "$OUT/ex"
echo "== the rabbit on 1 and $n GPUs (commit $(cat .devrun/commit))"
cat "$table"
