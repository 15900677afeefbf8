#!/usr/bin/env bash
# Packs built heartwave binaries with every shared library they load (glibc and its loader
# included) into .devrun/, for running on the device machine, whose image has none of
# Debian's libraries (libxml2, SUNDIALS, HDF5, ...) and nothing to install them from.
#
# Usage: bash tools/device/pack.sh NAME=BINARY [NAME=BINARY ...]
#   e.g. bash tools/device/pack.sh heartwave=build/apps/heartwave/heartwave
# On the device: bash tools/device/unpack.sh, then .devrun/bin/NAME runs the binary through
# the carried loader (see unpack.sh). .devrun/ is git-ignored; name it in the run's carry.
set -euo pipefail
cd "$(dirname "$0")/../.."
rm -rf .devrun && mkdir -p .devrun/stage/lib .devrun/stage/exe
for pair in "$@"; do
  name=${pair%%=*} bin=${pair#*=}
  cp "$bin" ".devrun/stage/exe/$name"
  ldd "$bin" | awk '$3 ~ /^\//{print $3} $1 ~ /^\//{print $1}' | while read -r lib; do
    cp -L "$lib" .devrun/stage/lib/ 2>/dev/null || true
  done
done
tar -C .devrun/stage -cJf .devrun/pack.tar.xz .
rm -rf .devrun/stage
du -h .devrun/pack.tar.xz
