#!/usr/bin/env bash
# On the device machine: the CPU tissue benchmarks (heartwave bench all) of every packed
# binary on 2 threads, with the copy roof measured in the same process, plus the host's
# description. Usage (device run): bash tools/device/cpu-bench.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
secs=${1:-3}
bash tools/device/unpack.sh >/dev/null
echo "host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2) | nproc $(nproc) | load $(cut -d' ' -f1-3 /proc/loadavg)"
for exe in .devrun/bin/*; do
  echo "== $(basename "$exe"): heartwave bench all --threads 2 --seconds $secs"
  "$exe" bench all --threads 2 --seconds "$secs"
done
