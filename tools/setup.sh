#!/usr/bin/env bash
# Installs every build and test dependency of Heartwave from Debian packages.
# Idempotent: a second run only checks. Needs root (or sudo) on Debian 12.
#   bash tools/setup.sh            build and test dependencies
#   bash tools/setup.sh --python   also the pinned Python tooling (Myokit, numpy) used by
#                                  tools/myokit_golden.py; never needed by the build or tests
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config git
  libxml2-dev libsundials-dev libcli11-dev libfmt-dev libtomlplusplus-dev
  libhdf5-dev libpng-dev zlib1g-dev libgtest-dev libgmock-dev libbenchmark-dev
  clang libclang-rt-14-dev libomp-14-dev python3 python3-pip
  ffmpeg  # optional at run time: the movie of PNG frames (output.movie) and its test
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: all Debian packages present"
fi

if [ "${1:-}" = "--python" ]; then
  python3 -m pip install --quiet -r "$(dirname "$0")/requirements.txt"
  echo "setup: Python tooling installed ($(python3 -c 'import myokit; print("myokit", myokit.__version__)'))"
fi
