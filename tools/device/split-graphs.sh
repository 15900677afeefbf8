#!/usr/bin/env bash
# What carries a split run's halos on several GPUs (docs/parallel.md), A/B in one go:
#   peer   peer stores between the GPUs, the steps in CUDA graphs (the default);
#   nccl   NCCL, every step queued by the host (HEARTWAVE_HALOS=nccl).
# First a probe of each (does a split run end at all: a short timeout), then the split checks
# against one GPU with each that ended, then the benchmarks on 1 and N GPUs. Logs go to $OUT
# as they are written; the last lines are the table.
#
# Usage (on the device, after tools/device/pack.sh here, carry .devrun):
#   bash tools/device/split-graphs.sh [CHECKS] [BENCH_CASES] [SECONDS] [HOWS]
#   CHECKS: split_runs.py's checks (default box,heart) or none; BENCH_CASES: default
#   rabbit-tt06,karma3d-weak,karma3d-256 or none; HOWS: default peer,nccl. COUNTS: the GPU
#   counts of the split runs (default: all the host's GPUs, at most 4).
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/split-graphs}
mkdir -p "$OUT"
checks=${1:-box,heart}
cases=${2:-rabbit-tt06,karma3d-weak,karma3d-256}
seconds=${3:-2}
hows=${4:-peer,nccl}
bash tools/device/unpack.sh > /dev/null
export PATH="$PWD/.devrun/bin:$PATH" HEARTWAVE_PROGRESS=0
export HEARTWAVE_SHARED_DIR="$PWD/.devrun/root/shared" HEARTWAVE_CACHE=/tmp/hw-cache
hw=.devrun/bin/heartwave
gpus=$(nvidia-smi -L | wc -l)
n=$gpus
[ "$n" -gt 4 ] && n=4
echo "commit $(cat .devrun/commit), $gpus GPU(s): $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" \
  | tee "$OUT/machine.txt"
nvidia-smi topo -m >> "$OUT/machine.txt" 2>&1

env_of() {
  case $1 in
    peer) echo "HEARTWAVE_HALOS=peer" ;;
    nccl) echo "HEARTWAVE_HALOS=nccl" ;;
  esac
}

# The probes: a short rabbit on N GPUs under 60 s, NCCL's warnings kept.
ok=""
summary=""
for how in ${hows//,/ }; do
  log="$OUT/probe-$how.log"
  start=$(date +%s.%N)
  # shellcheck disable=SC2046
  env $(env_of "$how") NCCL_DEBUG=WARN timeout 60 "$hw" bench rabbit-tt06 --gpus "$n" --seconds 1 > "$log" 2>&1
  rc=$?
  took=$(python3 -c "import time; print(f'{time.time() - $start:.1f}')")
  summary="${summary}probe $how: rc $rc after $took s; $(grep -o 'backend: .*' "$log" | head -1 | cut -c1-160)\n"
  printf "%b" "$summary" | tail -1
  [ $rc = 0 ] && ok="$ok $how"
done

if [ "$checks" != none ]; then
  for how in $ok; do
    for c in ${checks//,/ }; do
      # shellcheck disable=SC2046
      if env $(env_of "$how") timeout 150 python3 tests/parallel/split_runs.py --heartwave "$hw" --backend cuda \
          --ranks "$n" "$c" > "$OUT/split-$how-$c.log" 2>&1; then
        summary="${summary}check $c ($how): pass\n"
      else
        summary="${summary}check $c ($how): FAIL (rc $?; split-$how-$c.log)\n"
      fi
      printf "%b" "$summary" | tail -1
    done
  done
fi

table="$OUT/bench-table.txt"
: > "$table"
if [ "$cases" != none ]; then
  for c in ${cases//,/ }; do
    log="$OUT/bench-$c-1.log"
    timeout 100 "$hw" bench "$c" --seconds "$seconds" > "$log" 2>&1 || echo "rc $? ($log)" >> "$log"
    echo "$c gpus=1 roof_GBs=$(awk '/copy roof/{print $3}' "$log") | $(awk -v c="$c" '$1 == c' "$log")" >> "$table"
    tail -1 "$table"
    for g in ${COUNTS:-$n}; do
      for how in $ok; do
        log="$OUT/bench-$c-$g-$how.log"
        # shellcheck disable=SC2046
        env $(env_of "$how") timeout 100 "$hw" bench "$c" --gpus "$g" --seconds "$seconds" > "$log" 2>&1 \
          || echo "rc $? ($log)" >> "$log"
        echo "$c gpus=$g $how roof_GBs=$(awk '/copy roof/{print $3}' "$log") | $(awk -v c="$c" '$1 == c' "$log")" >> "$table"
        tail -1 "$table"
      done
    done
  done
fi
echo "== split runs: peer stores against NCCL ($gpus GPUs, commit $(cat .devrun/commit))"
printf "%b" "$summary"
echo "== benchmarks: name, cells, steps, s, cell-steps/s, steps/s, ... (bench table columns)"
cat "$table"
