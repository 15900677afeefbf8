#!/usr/bin/env bash
# Where a Crank-Nicolson step's time goes on the GPU (issue 29): Nsight Systems' kernel
# summary of `bench niederer --dx 0.05` (3.36 M cells), Nsight Compute's memory view of
# each CG kernel once, and each CG kernel's DRAM bytes and time (the host queuing the
# iterations: Nsight Compute profiles no kernel of a graph with conditional nodes) beside
# the device-to-device copy roof measured in the same call, then a table of achieved GB/s
# against it. Usage (on the device): bash tools/device/cg-profile.sh DT PRECISION
set -uo pipefail
cd "$(dirname "$0")/../.."
[ -d .devrun/bin ] || bash tools/device/unpack.sh >/dev/null
out=${OUT:-/tmp}
hw=.devrun/bin/heartwave
args=(bench niederer --dx 0.05 --dt "$1" --diffusion crank-nicolson --precision "$2" --backend cuda -q)
nsys=$(command -v nsys || ls /opt/nvidia/nsight-systems/*/bin/nsys /usr/local/cuda/bin/nsys 2>/dev/null | head -1)
if [ -n "$nsys" ] && [ "${SECTIONS:-1}" != 0 ]; then
  "$nsys" profile -o /tmp/cg --force-overwrite true "$hw" "${args[@]}" > "$out/nsys-run.log" 2>&1
  "$nsys" stats --report cuda_gpu_kern_sum,cuda_api_sum,cuda_gpu_mem_time_sum /tmp/cg.nsys-rep > "$out/nsys-stats.txt" 2>&1
  head -60 "$out/nsys-stats.txt"
else
  echo "nsys not found"
fi
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
# SECTIONS=0 skips the memory view (the bytes table below is the shorter call).
if [ -n "$ncu" ] && [ "${SECTIONS:-1}" != 0 ]; then
  "$ncu" --kernel-name regex:hw_cg --launch-skip 40 --launch-count 8 --section SpeedOfLight --section MemoryWorkloadAnalysis \
    "$hw" "${args[@]}" > "$out/ncu-cg.log" 2>&1
  grep -E "hw_cg|Duration|DRAM Throughput|Memory Throughput" "$out/ncu-cg.log" | head -60
fi
if [ -n "$ncu" ]; then
  HEARTWAVE_CUDA_GRAPHS=0 "$ncu" --kernel-name regex:hw_cg --launch-skip 60 --launch-count 24 --csv \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum \
    "$hw" "${args[@]}" > "$out/ncu-cg-bytes.csv" 2>&1
  roof=$("$hw" bench karma3d --backend cuda --seconds 0.2 2>&1 | grep -o 'copy roof: [0-9.]*' | grep -o '[0-9.]*$')
  echo "copy roof (same call, boost clocks): $roof GB/s"
  python3 - "$out/ncu-cg-bytes.csv" "$roof" <<'PY'
import collections, csv, sys
# Launches that moved under 1 MB did no work: with the host queuing, the iterations queued
# after convergence return at once. They are counted apart.
scale = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "ns": 1e-9, "nsecond": 1e-9, "us": 1e-6,
         "usecond": 1e-6, "ms": 1e-3, "msecond": 1e-3}
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
head, rows = rows[0], rows[1:]
k, m, v, u, i = (head.index(x) for x in ("Kernel Name", "Metric Name", "Metric Value", "Metric Unit", "ID"))
vals = collections.defaultdict(dict)
for r in rows:
    vals[(r[i], r[k].split("(")[0])][r[m]] = float(r[v].replace(",", "")) * scale[r[u]]
roof = float(sys.argv[2]) * 1e9
work, idle = collections.defaultdict(list), collections.Counter()
for (_, name), d in vals.items():
    b = d["dram__bytes_read.sum"] + d["dram__bytes_write.sum"]
    if b < 1e6 and name != "hw_cg_sum":
        idle[name] += 1
    else:
        work[name].append((d["gpu__time_duration.sum"], b))
print(f"{'kernel':<16} {'launches':>8} {'us':>7} {'MB':>7} {'GB/s':>6} {'of roof':>7}")
for name, xs in sorted(work.items()):
    t, b = sum(a for a, _ in xs) / len(xs), sum(c for _, c in xs) / len(xs)
    print(f"{name:<16} {len(xs):>8} {t * 1e6:>7.1f} {b / 1e6:>7.1f} {b / t / 1e9:>6.0f} {b / t / roof:>7.2f}")
if idle:
    print("launches that did no work (queued after convergence):", dict(idle))
PY
fi
