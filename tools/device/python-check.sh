#!/usr/bin/env bash
# The Python package on the device machine: its tests (the GPU ones included) under the
# image's Python 3.12, and bench/python_overhead.py on the GPU. Needs .devrun from
# tools/device/pack.sh and tools/device/pack_python.sh. Logs in $OUT (or out-python/).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-out-python}
mkdir -p "$out"
[ -d .devrun/bin ] || bash tools/device/unpack.sh > /dev/null
[ -d .devrun/py ] || tar -C .devrun -xJf .devrun/py.tar.xz
# The carried libraries but the C and C++ runtimes, which the image's Python brings (newer).
mkdir -p .devrun/pylib
for f in .devrun/root/lib/*; do
  case $(basename "$f") in
    libc.so*|libm.so*|libmvec.so*|libstdc++.so*|libgcc_s.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*) ;;
    *) ln -sf "$(pwd)/$f" .devrun/pylib/ ;;
  esac
done
export PYTHONPATH=$(pwd)/.devrun/py LD_LIBRARY_PATH=$(pwd)/.devrun/pylib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export HEARTWAVE_CLI=$(pwd)/.devrun/bin/heartwave HEARTWAVE_SHARED_DIR=$(pwd)/.devrun/root/shared
export MPLBACKEND=Agg HEARTWAVE_PROGRESS=0 PYTHONUNBUFFERED=1
commit=$(cat .devrun/commit 2>/dev/null || echo unknown)
t0=$(date +%s)
python3 -m pytest -q -p no:cacheprovider python/tests -k "not test_tour_runs and not test_api_reference" \
  > "$out/python-tests.log" 2>&1
rc=$?
t1=$(date +%s)
python3 bench/python_overhead.py --backend cuda --cells 100000 --repeat 5 --markdown > "$out/python-overhead.md" 2>&1
brc=$?
{
  echo "==== python-check (device, commit, results) ===="
  printf '%-28s %s\n' device "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"
  printf '%-28s %s\n' python "$(python3 --version 2>&1), numpy $(python3 -c 'import numpy; print(numpy.__version__)')"
  printf '%-28s %s\n' commit "$commit"
  printf '%-28s %s\n' "python tests" "rc $rc: $(tail -1 "$out/python-tests.log") ($((t1 - t0)) s)"
  printf '%-28s %s\n' "python_overhead (cuda)" "rc $brc"
  cat "$out/python-overhead.md"
} | tee "$out/summary-python.txt"
