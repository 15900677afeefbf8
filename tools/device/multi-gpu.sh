#!/usr/bin/env bash
# One run over several GPUs of a device host (docs/parallel.md): the split checks against one
# GPU (tests/parallel/split_runs.py with --backend cuda), compute-sanitizer's memcheck on two
# ranks, and the strong-scaling benchmarks on 1, 2 and (with 4 GPUs) 4 GPUs, each beside
# the device-to-device copy roof measured in the same process. Logs go to $OUT as they are
# written; the last lines are the table.
#
# Usage (on the device, after tools/device/pack.sh here, carry .devrun):
#   bash tools/device/multi-gpu.sh [CHECKS] [BENCH_CASES] [SECONDS]
#   CHECKS: split_runs.py's checks, comma-separated, or "none" (default all of them);
#   BENCH_CASES: comma-separated `heartwave bench` cases (CASE@1+4: on those GPU counts only), or "none"
#   (default karma3d-256,karma3d-512,karma3d-weak,rabbit-tt06,ord-heart); CPU_RANKS=N adds
#   niederer-0.05 on the cpu as N ranks against N threads.
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/multi-gpu}
mkdir -p "$OUT"
checks=${1:-box,heart,implicit,restart,faults,ranks-flag,sweep}
cases=${2:-karma3d-256,karma3d-512,karma3d-weak,rabbit-tt06,ord-heart}
seconds=${3:-2}
bash tools/device/unpack.sh > /dev/null
export PATH="$PWD/.devrun/bin:$PATH" NCCL_NVLS_ENABLE=0 HEARTWAVE_PROGRESS=0
export HEARTWAVE_SHARED_DIR="$PWD/.devrun/root/shared"
hw=.devrun/bin/heartwave
gpus=$(nvidia-smi -L | wc -l)
counts="1 2"
[ "$gpus" -ge 4 ] && counts="1 2 4"
ranks=2
[ "$gpus" -ge 4 ] && ranks=2,4
{
  echo "commit $(cat .devrun/commit), $gpus GPU(s): $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
  nvidia-smi topo -m
  echo "NCCL: ${HEARTWAVE_NCCL:-$(grep -o 'HEARTWAVE_NCCL:-[^}]*' .devrun/bin/heartwave | cut -d- -f2)}"
} > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt" | head -3

status=""
if [ "$checks" != none ]; then
  for c in ${checks//,/ }; do
    if timeout 200 python3 tests/parallel/split_runs.py --heartwave "$hw" --backend cuda --ranks "$ranks" "$c" \
        > "$OUT/split-$c.log" 2>&1; then
      status="$status$c: pass\n"
    else
      status="$status$c: FAIL (rc $?; split-$c.log)\n"
    fi
    tail -4 "$OUT/split-$c.log"
  done
  # memcheck on two ranks: the halo exchange's and the gathers' device copies in bounds.
  # API errors are not reported: NCCL's set-up probes kernels built for other GPUs
  # (cudaFuncGetAttributes: no kernel image), which it expects and passes over.
fi
if [ "$checks" != none ] && [ "${MEMCHECK:-1}" != 0 ]; then
  mkdir -p "$OUT/memcheck"
  python3 -c "import sys; sys.path.insert(0, 'tests/parallel'); import split_runs; print(split_runs.BOX.replace('t_end = 10', 't_end = 2'))" \
    > "$OUT/memcheck/case.toml"
  root=$PWD
  cd "$OUT/memcheck"
  if timeout 300 mpirun -np 2 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 "$root/$hw" run case.toml \
      --backend cuda --quiet --overwrite > memcheck.log 2>&1; then
    status="${status}memcheck 2 ranks: clean\n"
  else
    status="${status}memcheck 2 ranks: FAIL (rc $?; memcheck/memcheck.log)\n"
  fi
  grep -E "ERROR SUMMARY" memcheck.log | sort | uniq -c
  cd "$root"
fi

table="$OUT/bench-table.txt"
: > "$table"
if [ "$cases" != none ]; then
  for spec in ${cases//,/ }; do
    # CASE@2+4 runs CASE on those GPU counts only (karma3d-1024@4: its set-up of 10⁹ cells
    # takes a minute or two on the host, so it is not run on every count).
    c=${spec%@*} these=$counts limit=100
    [ "$spec" != "$c" ] && these=${spec#*@} && these=${these//+/ } && limit=400
    for g in $these; do
      log="$OUT/bench-$c-$g.log"
      timeout $limit "$hw" bench "$c" --gpus "$g" --seconds "$seconds" > "$log" 2>&1 || echo "rc $? ($log)" >> "$log"
      roof=$(awk '/copy roof/{print $3}' "$log")
      row=$(awk -v c="$c" '$1 == c' "$log")
      echo "$c gpus=$g roof_GBs=$roof | $row" >> "$table"
      tail -1 "$table"
    done
  done
fi
# CPU ranks against threads on the host's cores (CPU_RANKS=16: niederer-0.05 as 16 MPI ranks
# of one thread, then one process of 16 threads).
if [ "${CPU_RANKS:-0}" -gt 0 ]; then
  for how in "--threads $CPU_RANKS" "--threads 1 --ranks $CPU_RANKS"; do
    log="$OUT/bench-cpu-${how// /_}.log"
    timeout 100 "$hw" bench niederer-0.05 --backend cpu $how --seconds "$seconds" > "$log" 2>&1 || echo "rc $?" >> "$log"
    echo "niederer-0.05 cpu $how | $(awk '$1 == "niederer-0.05"' "$log")" >> "$table"
    tail -1 "$table"
  done
fi
echo "== multi-GPU checks ($gpus GPUs, commit $(cat .devrun/commit))"
printf "%b" "$status"
echo "== benchmarks: name, cells, steps, s, cell-steps/s, steps/s, ... (bench table columns)"
cat "$table"
