#!/usr/bin/env bash
# Configures and builds Heartwave (Release) into ./build. Runs tools/setup.sh first so a
# fresh Debian 12 machine needs nothing else. Extra arguments go to cmake's configure.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
[ -f build/CMakeCache.txt ] && generator=()   # keep the generator the tree was made with
cmake -S . -B build "${generator[@]}" -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build build -j "$(nproc)"
