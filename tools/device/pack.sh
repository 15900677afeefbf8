#!/usr/bin/env bash
# Packs built heartwave binaries with every shared library they load (glibc and its loader
# included) into .devrun/, for running on the device machine, whose image has none of
# Debian's libraries (libxml2, SUNDIALS, HDF5, ...) and nothing to install them from.
# The CUDA toolkit's own libraries (NVRTC) are left out: the device image has the same
# toolkit, and unpack.sh puts its lib64 on the search path (with the driver's folder).
#
# Open MPI's launcher comes along whenever a binary links libmpi (see below); unpack.sh then
# writes .devrun/bin/mpirun.
#
# Usage: bash tools/device/pack.sh NAME=BINARY [NAME=BINARY ...]   (HW_PACK_NO_SHARED=1: without ../shared; HW_PACK_NO_STRIP=1: symbols kept;
#   HW_PACK_MPI=0: without mpirun, =1: with it even when no binary links libmpi)
#   e.g. bash tools/device/pack.sh heartwave=build/apps/heartwave/heartwave
# On the device: bash tools/device/unpack.sh, then .devrun/bin/NAME runs the binary through
# the carried loader (see unpack.sh). .devrun/ is git-ignored; name it in the run's carry.
set -euo pipefail
cd "$(dirname "$0")/../.."
rm -rf .devrun && mkdir -p .devrun/stage/lib .devrun/stage/exe
# Copies into stage/lib every library FILE loads (ldd), the loader included.
carry_libs() {
  { ldd "$1" || true; } | awk '$3 ~ /^\//{print $3} $1 ~ /^\//{print $1}' | { grep -v '/cuda' || true; } |
    while read -r lib; do
      cp -L "$lib" .devrun/stage/lib/ 2>/dev/null || true
    done
}
for pair in "$@"; do
  name=${pair%%=*} bin=${pair#*=}
  cp "$bin" ".devrun/stage/exe/$name"
  # HW_PACK_NO_STRIP=1 keeps the symbols (a backtrace under cuda-gdb on the device).
  [ "${HW_PACK_NO_STRIP:-0}" = 1 ] || strip ".devrun/stage/exe/$name" 2>/dev/null || true
  carry_libs "$bin"
done
# Open MPI's mpirun (Debian's openmpi-bin 4.1, PMIx 4 from libpmix2). libmpi loads its
# components (and PMIx its own) as plugins at run time, which ldd does not see, and mpirun
# is a program of its own; without them a binary that links libmpi starts only as a
# singleton. So they come along whenever libmpi does: 1.6 MB more in the pack (of 31), and
# a carried libmpi with no launcher and no plugins is of no use. Layout under stage/mpi, the
# prefix that unpack.sh's mpirun wrapper points OPAL_*/PMIX_* at:
#   bin/{orterun,orted}  lib/openmpi3/mca_*.so  share/openmpi/  etc/  pmix/{lib/pmix,share}/
# Left out: the components for fabrics the device has not (UCX, libfabric/OFI, verbs, PSM)
# and OpenSHMEM's; one host needs only shared memory (btl self,vader and pml ob1).
mpi=${HW_PACK_MPI:-auto}
if [ "$mpi" = auto ]; then
  mpi=0
  compgen -G '.devrun/stage/lib/libmpi.so.*' >/dev/null && mpi=1
fi
if [ "$mpi" = 1 ]; then
  ompi_plugins=/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3
  pmix_home=/usr/lib/x86_64-linux-gnu/pmix2
  if [ ! -x /usr/bin/orterun ] || [ ! -d "$ompi_plugins" ] || [ ! -d "$pmix_home/lib/pmix" ]; then
    echo "pack.sh: Open MPI to carry, but no /usr/bin/orterun, $ompi_plugins or $pmix_home here" \
      "(apt-get install openmpi-bin libpmix2; HW_PACK_MPI=0 leaves mpirun out)" >&2
    exit 1
  fi
  m=.devrun/stage/mpi
  mkdir -p "$m/bin" "$m/lib/openmpi3" "$m/share" "$m/etc" "$m/pmix/lib/pmix" "$m/pmix/share"
  for exe in orterun orted; do
    cp /usr/bin/$exe "$m/bin/"
    carry_libs /usr/bin/$exe
  done
  skip='/(libuc[mpst]|libmca_common_(ucx|ofi|verbs)|libfabric|libpsm|libinfinipath|libibverbs|librdmacm|libefa|liboshmem|libcuda)'
  left_out=""
  for so in "$ompi_plugins"/*.so "$pmix_home"/lib/pmix/*.so; do
    deps=$(ldd "$so" 2>&1 || true)
    if grep -q 'not found' <<<"$deps" || grep -Eq "$skip" <<<"$deps"; then
      left_out="$left_out $(basename "$so" .so)"
      continue
    fi
    case $so in "$pmix_home"/*) cp "$so" "$m/pmix/lib/pmix/" ;; *) cp "$so" "$m/lib/openmpi3/" ;; esac
    carry_libs "$so"
  done
  echo "pack.sh: Open MPI components left out:$left_out" >&2
  cp -r /usr/share/openmpi "$m/share/"
  rm -f "$m"/share/openmpi/*wrapper-data.txt  # the compiler wrappers' data: no compilers go along
  cp /etc/openmpi/openmpi-mca-params.conf /etc/openmpi/openmpi-default-hostfile "$m/etc/"
  cp -r "$pmix_home/share/." "$m/pmix/share/"
fi
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
