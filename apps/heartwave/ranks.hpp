// `heartwave run --ranks N`: the run split over N MPI ranks on this machine, without the
// user calling mpirun (docs/parallel.md), and how a split run's ranks report.
#pragma once

#include <string>
#include <vector>

namespace hw::cli {

// Set by a command whose non-zero exit every rank of a split run reaches together (a run
// that failed or was stopped, agreed by all ranks): main then ends MPI normally instead of
// aborting the ranks.
extern bool g_agreed_exit;

// The command line this process was started with (main sets it).
extern std::vector<std::string> g_argv;

// Starts `mpirun -np N <this heartwave> <the same arguments but --ranks>` and returns its
// exit status; hw::Error with what to do when this build has no MPI or no mpirun is found.
int launch_ranks(int ranks);

}  // namespace hw::cli
