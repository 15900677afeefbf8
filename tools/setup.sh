#!/usr/bin/env bash
# Installs every build and test dependency of Heartwave from Debian packages.
# Idempotent: a second run only checks. Needs root (or sudo) on Debian 12.
#   bash tools/setup.sh            build and test dependencies
#   bash tools/setup.sh --python   also the pinned Python tooling (Myokit, numpy) used by
#                                  tools/myokit_golden.py; never needed by the build or tests
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config git
  ccache  # a second build of the same sources (the wheel's, `pip install .`) compiles from its cache
  libxml2-dev libsundials-dev libcli11-dev libfmt-dev libtomlplusplus-dev
  libhdf5-dev libpng-dev zlib1g-dev libgtest-dev libgmock-dev libbenchmark-dev
  libopenmpi-dev openmpi-bin  # one run split over ranks (docs/parallel.md); the build works without
  libsbml5-dev  # the SBML reader (model/frontend/sbml); the build goes on without it
  clang libclang-rt-14-dev libomp-14-dev python3 python3-pip python3-dev python3-venv
  libboost-dev  # the live view's HTTP/WebSocket server (Boost.Beast, headers only; docs/live.md)
  chromium chromium-driver python3-selenium  # the live view's browser tests (tests/browser)
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

# The Python package builds and tests in its own environment, .venv (Debian's Python is
# externally managed): nanobind and scikit-build-core to build, numpy, pytest and the
# examples' pandas, matplotlib and scipy, pinned in tools/requirements-python.txt.
root="$(cd "$(dirname "$0")/.." && pwd)"
if [ ! -x "$root/.venv/bin/python" ]; then
  echo "setup: creating $root/.venv for the Python package"
  python3 -m venv "$root/.venv"
fi
if ! "$root/.venv/bin/python" -m pip install --quiet --disable-pip-version-check \
       -r "$root/tools/requirements-python.txt"; then
  echo "setup: could not install the Python package's dependencies from PyPI; the build goes on without the Python package" >&2
fi

if [ "${1:-}" = "--python" ]; then
  python3 -m pip install --quiet -r "$(dirname "$0")/requirements.txt"
  echo "setup: Python tooling installed ($(python3 -c 'import myokit; print("myokit", myokit.__version__)'))"
fi
