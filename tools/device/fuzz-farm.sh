#!/usr/bin/env bash
# On the device machine: the fuzz targets packed by tools/device/pack.sh (built here with
# tools/fuzz.sh's build), all side by side, WORKERS processes each, for SECONDS, through
# tools/fuzz.sh. The many cores of a multi-GPU host give each reader its CPU-hour in one call.
# Corpora, crash inputs and logs come back as $OUT/fuzz.tar.gz; the summary as $OUT/summary.txt.
# Usage: bash tools/device/fuzz-farm.sh SECONDS WORKERS TARGET[:WORKERS]...
set -uo pipefail
cd "$(dirname "$0")/../.."
seconds=$1 workers=$2
shift 2
bash tools/device/unpack.sh
echo "cores: $(nproc); targets: $#; workers each: $workers"
# Each packed target must start (the carried loader and libraries) before the long run.
for spec in "$@"; do
  t=${spec%%:*}
  .devrun/bin/$t -runs=1 > "$OUT/start-$t.log" 2>&1 || { echo "$t does not start:"; tail -5 "$OUT/start-$t.log"; exit 1; }
  rm -f "$OUT/start-$t.log"
done
HW_FUZZ_BIN=.devrun/bin HW_FUZZ_OUT="$OUT/fuzz" HW_FUZZ_WORKERS="$workers" HW_FUZZ_TOGETHER=1 \
  bash tools/fuzz.sh "$seconds" "$@" > "$OUT/summary.txt" 2>&1
echo "fuzz.sh exit $?" >> "$OUT/summary.txt"
tar -C "$OUT" -czf "$OUT/fuzz.tar.gz" fuzz && rm -rf "$OUT/fuzz"
cat "$OUT/summary.txt"
