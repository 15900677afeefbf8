#!/usr/bin/env bash
# Builds the Python extension for the device image's Python (3.12, which has numpy, pandas
# and pytest) from this build's objects, and puts it with the package's Python files into
# .devrun/py/ (run after tools/device/pack.sh, which empties .devrun). Only the extension's own sources and nanobind are compiled again, with
# the 3.12 headers; the library and the built-in models are this build's.
#
# Usage: bash tools/device/pack_python.sh [PYTHON312]   (default: pyenv's 3.12)
# On the device: bash tools/device/python-check.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
py=${1:-$(ls -d /root/.pyenv/versions/3.12*/bin/python3 2>/dev/null | tail -1)}
[ -x "$py" ] || { echo "pack_python: no Python 3.12 (give its path)"; exit 1; }
venv=build/py312-venv
[ -x $venv/bin/python ] || "$py" -m venv $venv
$venv/bin/python -m pip install --quiet --disable-pip-version-check "$(grep '^nanobind==' tools/requirements-python.txt)"
inc=$($venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
nb=$($venv/bin/python -c 'import nanobind, os; print(os.path.dirname(nanobind.__file__))')
suffix=$($venv/bin/python -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
inc311=$(grep -o '^Python_INCLUDE_DIR:PATH=.*' build/CMakeCache.txt | cut -d= -f2)
nb311=$(.venv/bin/python -c 'import nanobind, os; print(os.path.dirname(nanobind.__file__))')
out=build/py312 && rm -rf $out && mkdir -p $out/obj
# The compile commands of the extension and of nanobind, retargeted at 3.12.
while read -r cmd; do
  src=${cmd##* -c }
  case $src in */python/src/*) kind=ext ;; *) kind=nb ;; esac
  obj=$out/obj/${kind}_$(basename "$src").o
  cmd=${cmd//$inc311/$inc}
  cmd=${cmd//$nb311/$nb}
  src=${src//$nb311/$nb}
  cmd=$(sed -E 's/ -MD -MT [^ ]+ -MF [^ ]+//; s/ -o [^ ]+ -c [^ ]+$//' <<<"$cmd")
  (cd build && eval "$cmd -o ../$obj -c $src") &
done < <(ninja -C build -t commands heartwave_python | grep -E ' -c .*(python/src/|nanobind/src/)')
wait
link=$(ninja -C build -t commands heartwave_python | grep -- '-shared' | tail -1)
objs=$(ls $out/obj/ext_*.o | sed 's|^|../|' | tr '\n' ' ')
ar qc $out/libnb312.a $out/obj/nb_*.o
link=${link//python\/libnanobind-static.a/$objs ..\/$out\/libnb312.a}
link=$(sed -E "s| -o python/heartwave/_core[^ ]+| -o ../$out/_core$suffix|; s| python/CMakeFiles/heartwave_python.dir/src/[^ ]+||g" <<<"$link")
(cd build && eval "${link#: && }")
# The package: the Python files and the extension. Its libraries are the ones pack.sh
# carries for the heartwave binary (the same link line); python-check.sh points the device's
# Python at them, leaving out the C and C++ runtimes (the image's are newer).
mkdir -p .devrun/py/heartwave
cp python/heartwave/*.py python/heartwave/py.typed .devrun/py/heartwave/
cp $out/_core$suffix .devrun/py/heartwave/
tar -C .devrun -cJf .devrun/py.tar.xz py && rm -rf .devrun/py
du -h .devrun/py.tar.xz
