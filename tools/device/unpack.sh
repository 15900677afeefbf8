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
nccl=""
# PyTorch's wheel first: built for old glibc (manylinux), it loads under the carried loader;
# the image's own may want a newer glibc than Debian 12's.
for f in /opt/torch/.venv/lib/python3*/site-packages/nvidia/nccl/lib/libnccl.so.2 /usr/lib/x86_64-linux-gnu/libnccl.so.2; do
  [ -e "$f" ] && { nccl=$f; break; }
done
for exe in "$root"/exe/*; do
  name=$(basename "$exe")
  # HEARTWAVE_EXE: the command --ranks/--gpus starts under mpirun (this wrapper, not the
  # loader /proc/self/exe names); HEARTWAVE_NCCL: the device's NCCL (Debian's folder or
  # PyTorch's wheel), which the carried loader does not search.
  cat > ".devrun/bin/$name" <<WRAP
#!/usr/bin/env bash
export HEARTWAVE_EXE="\${HEARTWAVE_EXE:-$(pwd)/.devrun/bin/$name}"
export HEARTWAVE_NCCL="\${HEARTWAVE_NCCL:-$nccl}"
export NCCL_NVLS_ENABLE=0
exec "$root/lib/ld-linux-x86-64.so.2" --library-path "$root/lib$extra" "$exe" "\$@"
WRAP
  chmod +x ".devrun/bin/$name"
done
# Open MPI's mpirun, when pack.sh carried it (stage/mpi): orterun through the carried loader.
# Debian's Open MPI and PMIx look for their plugins, help texts and settings at the paths
# they were built for (/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3, /usr/share/openmpi,
# /etc/openmpi, .../pmix2), absent on the device; the OPAL_* and PMIX_* variables point them
# at the carried copies, in mpirun and (they pass their environment on) in the ranks, whose
# libmpi and libpmix read the same variables. OPAL_PREFIX alone is not enough (Debian's
# libdir is $prefix/lib/x86_64-linux-gnu/openmpi/lib, its sysconfdir /etc/openmpi), nor is
# PMIX_PREFIX (its libdir is absolute): each folder is named. LD_LIBRARY_PATH stays unset:
# the ranks are the wrappers above, bash scripts the device's own bash runs, which must not
# meet the carried glibc. One host: ranks are started by mpirun itself (plm isolated: no ssh, no
# orted) and talk through shared memory (btl self,vader; pml ob1: no UCX or fabrics were
# carried). Each OMPI_MCA_ setting here is a default the caller's environment overrides.
if [ -x "$root/mpi/bin/orterun" ]; then
  m=$root/mpi
  cat > .devrun/bin/mpirun <<WRAP
#!/usr/bin/env bash
export OPAL_PREFIX="$m" OPAL_EXEC_PREFIX="$m" OPAL_BINDIR="$m/bin" OPAL_LIBDIR="$m/lib" \\
  OPAL_PKGLIBDIR="$m/lib/openmpi3" OPAL_DATAROOTDIR="$m/share" OPAL_DATADIR="$m/share" \\
  OPAL_PKGDATADIR="$m/share/openmpi" OPAL_SYSCONFDIR="$m/etc"
export PMIX_PREFIX="$m/pmix" PMIX_EXEC_PREFIX="$m/pmix" \\
  PMIX_LIBDIR="$m/pmix/lib" PMIX_PKGLIBDIR="$m/pmix/lib/pmix" PMIX_DATAROOTDIR="$m/pmix/share" \\
  PMIX_DATADIR="$m/pmix/share" PMIX_PKGDATADIR="$m/pmix/share/pmix" PMIX_SYSCONFDIR="$m/pmix/share"
export OMPI_MCA_plm=\${OMPI_MCA_plm:-isolated} OMPI_MCA_btl=\${OMPI_MCA_btl:-self,vader} \\
  OMPI_MCA_pml=\${OMPI_MCA_pml:-ob1}
# The device runs commands as root, which Open MPI refuses unless told.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# A device rule: NVLink multicast stays off (KINDS.md), also for ranks that use NCCL.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
# hwloc (which Open MPI reads the machine's layout with) looks for its plugins at Debian's
# path too: pointed at none, it reads the same layout here as on the device.
export HWLOC_PLUGINS_PATH="$m/hwloc-plugins"
# argv[0] "mpirun", not the path to orterun: an absolute path there means --prefix to Open
# MPI, which then puts that prefix's bin and lib on the ranks' PATH and LD_LIBRARY_PATH.
exec "$root/lib/ld-linux-x86-64.so.2" --library-path "$root/lib$extra" --argv0 mpirun "$m/bin/orterun" "\$@"
WRAP
  chmod +x .devrun/bin/mpirun
fi
ls .devrun/bin
