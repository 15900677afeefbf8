#!/usr/bin/env bash
# Packs built heartwave binaries with every shared library they load (glibc and its loader
# included) into .devrun/, for running on the device machine, whose image has none of
# Debian's libraries (libxml2, SUNDIALS, HDF5, ...) and nothing to install them from.
# The CUDA toolkit's own libraries (NVRTC) are left out: the device image has the same
# toolkit, and unpack.sh puts its lib64 on the search path (with the driver's folder).
#
# Usage: bash tools/device/pack.sh NAME=BINARY [NAME=BINARY ...]   (HW_PACK_NO_SHARED=1: without ../shared)
#   e.g. bash tools/device/pack.sh heartwave=build/apps/heartwave/heartwave
# On the device: bash tools/device/unpack.sh, then .devrun/bin/NAME runs the binary through
# the carried loader (see unpack.sh). .devrun/ is git-ignored; name it in the run's carry.
set -euo pipefail
cd "$(dirname "$0")/../.."
rm -rf .devrun && mkdir -p .devrun/stage/lib .devrun/stage/exe
for pair in "$@"; do
  name=${pair%%=*} bin=${pair#*=}
  cp "$bin" ".devrun/stage/exe/$name"
  strip ".devrun/stage/exe/$name" 2>/dev/null || true
  ldd "$bin" | awk '$3 ~ /^\//{print $3} $1 ~ /^\//{print $1}' | grep -v '/cuda' | while read -r lib; do
    cp -L "$lib" .devrun/stage/lib/ 2>/dev/null || true
  done
done
# The CellML models and heart geometries the GPU tests and benchmarks read (gpu-check.sh
# points HEARTWAVE_SHARED_DIR at them); HW_PACK_NO_SHARED=1 leaves them out (fuzz-farm.sh).
if [ -d ../shared ] && [ "${HW_PACK_NO_SHARED:-0}" != 1 ]; then
  mkdir -p .devrun/stage/shared/models
  cp -r ../shared/models/cellml .devrun/stage/shared/models/
  cp -r ../shared/geometry .devrun/stage/shared/
fi
tar -C .devrun/stage -cJf .devrun/pack.tar.xz .
echo "$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src apps tests 2>/dev/null || echo -dirty)" > .devrun/commit
rm -rf .devrun/stage
du -h .devrun/pack.tar.xz
