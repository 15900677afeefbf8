#include "comm/world.hpp"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "comm/mpi.hpp"
#include "core/error.hpp"

namespace hw::comm {

namespace {

std::unique_ptr<Communicator>& current() {
  static std::unique_ptr<Communicator> w = std::make_unique<LocalCommunicator>();
  return w;
}

int env_int(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : 0;
}

}  // namespace

bool built_with_mpi() { return mpi_available(); }

int launcher_ranks() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE", "MPI_LOCALNRANKS"})
    if (const int n = env_int(name); n > 0) return n;
  // srun without an MPI launcher's variables: Slurm's own count of tasks.
  if (std::getenv("PMIX_RANK") || std::getenv("PMI_RANK")) return std::max(1, env_int("SLURM_NTASKS"));
  return 0;
}

void start_world(int& argc, char**& argv) {
  const int ranks = launcher_ranks();
  if (ranks == 0) return;
  if (!mpi_available()) {
    if (ranks > 1)
      throw Error(fmt::format(
          "started by an MPI launcher as one of {} ranks, but this heartwave was built without MPI "
          "(install libopenmpi-dev and openmpi-bin, tools/setup.sh, and build again); run it without mpirun",
          ranks));
    return;
  }
  current() = make_mpi_communicator(argc, argv);
}

void finish_world() {
  current()->barrier();
  current() = std::make_unique<LocalCommunicator>();  // the MPI communicator's destructor finalises
}

Communicator& world() { return *current(); }

}  // namespace hw::comm
