#!/usr/bin/env bash
# On the device machine: an A/B of two heartwave builds on the GPU benchmarks, in one call
# so that both meet the same card and clocks. heartwave is the build under test,
# heartwave_old the one before it (pack.sh heartwave=... heartwave_old=...). Each case runs
# old, new, old, new (the first run of each also compiles and tunes its kernels, cached),
# and the table gives the better of each build's two timed runs. Logs go to $OUT.
# Usage (after pack.sh, carry .devrun): [BENCH_ARGS="--cell-maths fast"] bash tools/device/bench-ab.sh SECONDS CASE [CASE ...]
set -uo pipefail
cd "$(dirname "$0")/../.."
secs=${1:?seconds per run}
shift
export HEARTWAVE_CACHE=${HEARTWAVE_CACHE:-/tmp/heartwave-cache}
bash tools/device/unpack.sh >/dev/null || exit 1
[ -d .devrun/root/shared ] && export HEARTWAVE_SHARED_DIR=$PWD/.devrun/root/shared
out=${OUT:-/tmp/bench-ab}
mkdir -p "$out"
log="$out/bench-ab.log"
: > "$log"
for c in "$@"; do
  for bin in heartwave_old heartwave; do  # compile, tune, cache
    .devrun/bin/$bin bench "$c" --backend cuda --seconds 0.2 ${BENCH_ARGS:-} > /dev/null 2>&1
  done
  for round in 1 2; do
    for bin in heartwave_old heartwave; do
      .devrun/bin/$bin bench "$c" --backend cuda --seconds "$secs" ${BENCH_ARGS:-} 2>&1 | grep -E "^($c |$c:|copy roof)" | sed "s/^/$bin $round /" >> "$log"
    done
  done
done
{
echo "==== bench-ab (device: $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), commit $(cat .devrun/commit 2>/dev/null)) ${BENCH_ARGS:-}"
printf '%-16s %12s %12s %8s %10s %10s\n' case old_steps/s new_steps/s change old_roof new_roof
for c in "$@"; do
  best() { awk -v b="$1" -v c="$c" '$1 == b && $3 == c { if ($8 > m) { m = $8; r = $13 } } END { printf "%s %s", m, r }' "$log"; }
  read -r o oroof < <(best heartwave_old)
  read -r n nroof < <(best heartwave)
  awk -v c="$c" -v o="$o" -v n="$n" -v a="$oroof" -v b="$nroof" \
    'BEGIN { if (o > 0) printf "%-16s %12.0f %12.0f %+7.1f%% %10s %10s\n", c, o, n, 100 * (n - o) / o, a, b; else printf "%-16s failed (see bench-ab.log)\n", c }'
done
} | tee "$out/bench-ab.txt"
