#!/usr/bin/env bash
# An installed heartwave, moved away from where it was installed and run from another folder,
# compiles a user's CellML model at run time (issue 30: a copied binary once fell back to the
# interpreter, "cell/cell_kernel.hpp: No such file or directory"). It must find its run-time
# headers beside itself (P/share/heartwave/include), not in the source tree.
# Usage: relocated_cli.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/installed" > "$tmp/install.log"
for f in bin/heartwave share/heartwave/include/runtime/cell_kernel.hpp share/heartwave/models/karma1993.hwm \
         share/heartwave/examples/spiral2d.toml share/doc/heartwave/README.md; do
  [ -e "$tmp/installed/$f" ] || { echo "not installed: $f"; exit 1; }
done
# Nothing of the wheel's component in a plain install.
[ ! -e "$tmp/installed/heartwave" ] || { echo "the Python component was installed too"; exit 1; }
mv "$tmp/installed" "$tmp/moved"
hw="$tmp/moved/bin/heartwave"
mkdir "$tmp/work"
cd "$tmp/work"
version=$("$hw" --version)
echo "$version"
expected="run-time headers: $tmp/moved/share/heartwave/include (installed beside the binary)"
grep -qF "$expected" <<< "$version" || { echo "expected: $expected"; exit 1; }
cp "$src/tests/data/cellml2/noble_model_1962.cellml" model.cellml
out=$(HEARTWAVE_CACHE="$tmp/cache" "$hw" cell model.cellml --beats 1 --stim-amplitude 200 --stim-duration 2 \
      -o trace.csv 2>&1)
echo "$out"
grep -q "compiled C++" <<< "$out" || { echo "the model did not compile at run time"; exit 1; }
[ -s trace.csv ]
echo "installed, moved and run: the user model compiled against $tmp/moved/share/heartwave/include"
