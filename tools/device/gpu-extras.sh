#!/usr/bin/env bash
# Two GPU paths of issue 32 that CI cannot run: the wall-time estimate of `run --check` on
# the cuda backend against the run's own time, and Ctrl-C (SIGINT) on a GPU `sweep`, which
# must write the cells finished and say how to continue. Logs to $OUT.
# Usage (on the device): bash tools/device/gpu-extras.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
bash tools/device/unpack.sh >/dev/null
out=${OUT:-/tmp}
hw=.devrun/bin/heartwave
export HEARTWAVE_SHARED_DIR=$PWD/.devrun/root/shared
tmp=$(mktemp -d)
# The rabbit case reads ../../shared relative to itself: run a copy beside the carried data.
mkdir -p "$tmp/ex" && sed "s#\.\./\.\./shared#$HEARTWAVE_SHARED_DIR#" examples/rabbit_layers.toml > "$tmp/ex/rabbit.toml"
$hw run "$tmp/ex/rabbit.toml" --check --backend cuda > "$out/extras-check.txt" 2>&1
echo "check rc $?" >> "$out/extras-check.txt"
start=$(date +%s.%N)
$hw run "$tmp/ex/rabbit.toml" --backend cuda --set output.directory="$tmp/rabbit" > "$out/extras-run.txt" 2>&1
echo "run rc $? wall $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}') s" >> "$out/extras-run.txt"
# Ctrl-C on a GPU population: 200,000 O'Hara-Rudy cells, 10 beats in double, interrupted
# after 45 s (the integrator check and the compilation are done by then; the whole run takes minutes). Job control on, so the
# background job does not start with SIGINT ignored, as a terminal's foreground job would not.
set -m
start=$(date +%s.%N)
$hw sweep ohara_rudy_2011_endo --lhs GKr_b=0.5:1.5 --cells 200000 --beats 10 --backend cuda \
  -o "$tmp/pop.csv" > "$out/extras-sweep.txt" 2>&1 &
pid=$!
sleep 45; kill -INT $pid; t_int=$(date +%s.%N)
( sleep 90; kill -KILL $pid 2>/dev/null && echo "sweep: still running 90 s after SIGINT, killed" >> "$out/extras-sweep.txt" ) &
wait $pid
echo "sweep rc $? ($(awk -v a="$t_int" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}') s after SIGINT)" >> "$out/extras-sweep.txt"
ls -la "$tmp" >> "$out/extras-sweep.txt"; head -3 "$tmp/pop.csv" >> "$out/extras-sweep.txt" 2>&1
wc -l "$tmp"/pop*.csv >> "$out/extras-sweep.txt" 2>&1
echo "== extras"
grep -iE "wall time|check rc" "$out/extras-check.txt"
grep -E "done:|run rc|expected" "$out/extras-run.txt"
tail -12 "$out/extras-sweep.txt"
