#!/usr/bin/env bash
# Unpacks .devrun/pack.tar.xz (tools/device/pack.sh) on the device machine and writes one
# wrapper per binary in .devrun/bin that starts it with the carried loader and libraries,
# so the binary never meets the image's own (possibly older) glibc.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p .devrun/root .devrun/bin
tar -C .devrun/root -xJf .devrun/pack.tar.xz
root=$(pwd)/.devrun/root
for exe in "$root"/exe/*; do
  name=$(basename "$exe")
  cat > ".devrun/bin/$name" <<WRAP
#!/usr/bin/env bash
exec "$root/lib/ld-linux-x86-64.so.2" --library-path "$root/lib" "$exe" "\$@"
WRAP
  chmod +x ".devrun/bin/$name"
done
ls .devrun/bin
