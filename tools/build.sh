#!/usr/bin/env bash
# Configures and builds Heartwave (Release) into ./build. Runs tools/setup.sh first so a
# fresh Debian 12 machine needs nothing else. Extra arguments go to cmake's configure.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
[ -f build/CMakeCache.txt ] && generator=()   # keep the generator the tree was made with
python_args=()
[ -x .venv/bin/python ] && python_args=(-DPython_EXECUTABLE="$PWD/.venv/bin/python")
cmake -S . -B build "${generator[@]}" -DCMAKE_BUILD_TYPE=Release "${python_args[@]}" "$@"
cmake --build build -j "$(nproc)"
# The Python package, installed into .venv from the same build tree (only links and copies):
# -C build-dir=build overrides pyproject.toml's own folder for a user's `pip install .`.
if grep -q '^HW_PYTHON:BOOL=ON' build/CMakeCache.txt; then
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --no-build-isolation --no-deps \
    -C build-dir=build .
  echo "build: Python package installed in .venv ($(.venv/bin/python -c 'import heartwave; print(heartwave.__file__)'))"
fi
