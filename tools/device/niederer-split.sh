#!/usr/bin/env bash
# The N-version slab at 0.05 mm (3.36 M cells, explicit, double, dt 0.01 ms, 50 ms) on 1, 2 and 4 GPUs
# of one host (`heartwave run examples/niederer.toml --gpus N`): the activation map, probes and map
# summary of 2 and 4 GPUs against 1, byte for byte (docs/parallel.md). On the device, after
# tools/device/pack.sh heartwave=build/apps/heartwave/heartwave; carry .devrun.
OUT=${OUT:-/tmp/niederer-split}; mkdir -p "$OUT"
bash tools/device/unpack.sh >/dev/null
export PATH=$PWD/.devrun/bin:$PATH NCCL_NVLS_ENABLE=0 HEARTWAVE_PROGRESS=0
hw=.devrun/bin/heartwave
nvidia-smi -L | head -4
counts="1 2"; [ "$(nvidia-smi -L | wc -l)" -ge 4 ] && counts="1 2 4"
for g in $counts; do
  timeout 150 $hw run examples/niederer.toml --backend cuda --gpus $g --set grid.spacing=0.05 --set time.dt=0.01 --set time.t_end=50 --set output.directory=$OUT/n$g --overwrite > $OUT/n$g.log 2>&1
  echo "$g GPU(s): rc=$? $(grep -E 'done:' $OUT/n$g.log | tail -1)"; tail -1 $OUT/n$g.log
done
for g in ${counts#1 }; do for f in maps.vti probes.csv maps_summary.csv; do cmp -s $OUT/n1/$f $OUT/n$g/$f && echo "$g GPUs: $f identical to 1 GPU" || echo "$g GPUs: $f DIFFERS"; done; done
grep -E "activated|max|P8" $OUT/n1/maps_summary.csv | head -5
rm -f $OUT/n*/checkpoint.hwck $OUT/n*/fields*
