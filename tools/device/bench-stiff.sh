#!/usr/bin/env bash
# On the device machine: the stiff-scheme cost table (bench/bench_stiff: ns per single-cell
# step of each scheme on each model of tests/data/stiff) on the GPU host's CPU, twice: on a
# quiet host, then with one busy loop beside it. The models' run-time compiles are done
# first, side by side on the host's cores, so that the timed runs find them cached.
#
# Here:   bash tools/device/pack.sh bench_stiff=build/bench/bench_stiff
# Device: bash tools/device/bench-stiff.sh   (carry .devrun; writes $OUT/bench-stiff-run{1,2}.tsv)
# Then:   python3 tools/bench_stiff_doc.py --input docs/data/stiff/bench-stiff-run1.tsv \
#           --input docs/data/stiff/bench-stiff-run2.tsv --commit COMMIT --machine "..."
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/bench-stiff}
mkdir -p "$out"
bash tools/device/unpack.sh >/dev/null || exit 1
# The binary has this checkout's paths compiled in (/work/main: the JIT's headers).
mkdir -p /work
[ -e /work/main ] || ln -s "$PWD" /work/main
export HEARTWAVE_CACHE=/tmp/hwc-bench-stiff OMP_NUM_THREADS=1
bench=.devrun/bin/bench_stiff
data=$PWD/tests/data/stiff
# Warm the JIT cache: one process per model, side by side.
for f in "$data"/*.cellml; do
  d=/tmp/bench-stiff-warm/$(basename "$f" .cellml)
  mkdir -p "$d" && ln -sf "$f" "$d/"
  "$bench" "$d" > "$d.log" 2>&1 &
done
wait
{
  echo "# first run, load average $(cut -d' ' -f1 /proc/loadavg) (the models compiled and cached beforehand; no other work)"
  "$bench" "$data"
} > "$out/bench-stiff-run1.tsv"
yes > /dev/null &
busy=$!
{
  echo "# second run, load average $(cut -d' ' -f1 /proc/loadavg), one busy loop beside it on another core"
  "$bench" "$data"
} > "$out/bench-stiff-run2.tsv"
kill "$busy"
cat "$out"/bench-stiff-run1.tsv
