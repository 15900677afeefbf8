// The ranks of this process's run: MPI's world when a launcher (mpirun, mpiexec, srun)
// started it and the build has MPI, else the one rank of an ordinary run.
//
// Why a process-wide world: MPI itself is one per process (MPI_COMM_WORLD), and the run loop,
// the engine and the outputs must all agree on it; main() starts it once, before any
// other work, and ends it last.
#pragma once

#include "comm/communicator.hpp"

namespace hw::comm {

// Whether this build can split a run over ranks (it found MPI when it was configured).
bool built_with_mpi();
// The ranks a launcher says this process is one of (its environment: Open MPI's, PMIx's,
// PMI's, Slurm's), 0 when no launcher started it.
int launcher_ranks();

// Starts MPI when launcher_ranks() > 0 (hw::Error when the build has no MPI and the launcher
// asks for more than one rank); otherwise the world stays the one local rank.
void start_world(int& argc, char**& argv);
// Ends MPI normally (every rank must call it).
void finish_world();
Communicator& world();

}  // namespace hw::comm
