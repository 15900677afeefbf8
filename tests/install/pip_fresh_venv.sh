#!/usr/bin/env bash
# The Python package as docs/python.md tells a user to install it (issue 30): in a fresh
# virtual environment, `python -m pip install .` from the repository, with pip's build
# isolation (the build requirements come from PyPI, as on a user's machine), and
# `pip wheel .` giving a wheel that a second fresh environment installs and runs from
# another folder: a user's CellML model compiled at run time against the headers the wheel
# carries, not the source tree's.
# The build goes into the repository's build-pip-<tag>/ (pyproject.toml): with ccache the
# library's objects come from the cache the main build filled; a second run only links.
# Usage: pip_fresh_venv.sh SOURCE_DIR
set -euo pipefail
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -m venv "$tmp/venv"
pip=("$tmp/venv/bin/python" -m pip --disable-pip-version-check)
cd "$src"
echo "== pip wheel . (fresh venv, build isolation)"
"${pip[@]}" wheel --no-deps -w "$tmp/wheels" . > "$tmp/wheel.log" 2>&1 || { tail -40 "$tmp/wheel.log"; exit 1; }
wheel=$(ls "$tmp"/wheels/heartwave_ep-*.whl)
echo "built $(basename "$wheel")"
echo "== python -m pip install . (the command docs/python.md gives)"
"${pip[@]}" install --quiet . > "$tmp/install.log" 2>&1 || { tail -40 "$tmp/install.log"; exit 1; }
"${pip[@]}" show heartwave-ep | grep -E '^(Name|Version|Location):'

echo "== the wheel in a second fresh venv, run from another folder"
python3 -m venv "$tmp/user"
"$tmp/user/bin/python" -m pip --disable-pip-version-check install --quiet "$wheel"
mkdir "$tmp/work"
cp "$src/tests/data/cellml2/noble_model_1962.cellml" "$tmp/work/model.cellml"
cd "$tmp/work"
for py in "$tmp/venv/bin/python" "$tmp/user/bin/python"; do
  env -u HEARTWAVE_RUNTIME_INCLUDE HEARTWAVE_CACHE="$tmp/cache-$(basename "$(dirname "$(dirname "$py")")")" \
    "$py" - "$src" <<'PY'
import os, sys
import heartwave as hw
src = os.path.realpath(sys.argv[1])
pkg = os.path.dirname(os.path.realpath(hw.__file__))
assert not pkg.startswith(src + os.sep), f"imported the source tree's package: {pkg}"
inc = os.environ["HEARTWAVE_RUNTIME_INCLUDE"]
assert os.path.realpath(inc).startswith(pkg + os.sep), f"run-time headers not the wheel's: {inc}"
r = hw.pace("model.cellml", bcl=1000, beats=1, dt=0.01, kernel="compiled",
            stim_amplitude=200, stim_duration=2)
peak = float(max(r.V))
assert peak > 0, f"no action potential (peak {peak} mV)"
print(f"{sys.executable}: heartwave from {pkg}, headers {inc}; Noble 1962 paced, compiled, peak {peak:.1f} mV")
PY
done
echo "pip install . and the wheel work from fresh environments"
