#!/usr/bin/env bash
# Unpacks .devrun/pack.tar.xz (tools/device/pack.sh) on the device machine and writes one
# wrapper per binary in .devrun/bin that starts it with the carried loader and libraries,
# so the binary never meets the image's own (possibly older) glibc.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p .devrun/root .devrun/bin
# Once per pack: scripts that run side by side must not rewrite binaries the other runs.
if [ ! .devrun/root/.unpacked -nt .devrun/pack.tar.xz ]; then
  tar -C .devrun/root -xJf .devrun/pack.tar.xz
  touch .devrun/root/.unpacked
fi
root=$(pwd)/.devrun/root
# The device's CUDA toolkit (NVRTC) and driver (libcuda, dlopened by heartwave) come after
# the carried libraries.
extra=""
for d in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$d" ] && extra="$extra:$d"
done
cuda_lib=$(ldconfig -p 2>/dev/null | awk '/libcuda\.so\.1 /{print $NF; exit}' || true)
[ -z "$cuda_lib" ] && cuda_lib=$(find /usr/local/nvidia /usr/lib /usr/lib64 -name 'libcuda.so.1' 2>/dev/null | head -1 || true)
[ -n "$cuda_lib" ] && extra="$extra:$(dirname "$cuda_lib")"
for exe in "$root"/exe/*; do
  name=$(basename "$exe")
  cat > ".devrun/bin/$name" <<WRAP
#!/usr/bin/env bash
exec "$root/lib/ld-linux-x86-64.so.2" --library-path "$root/lib$extra" "$exe" "\$@"
WRAP
  chmod +x ".devrun/bin/$name"
done
ls .devrun/bin
