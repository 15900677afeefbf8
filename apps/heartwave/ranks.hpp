// `heartwave run --ranks N`: the run split over N MPI ranks on this machine, without the
// user calling mpirun (docs/parallel.md), and how a split run's ranks report.
#pragma once

#include <string>
#include <vector>

namespace hw::cli {

// The command line this process was started with (main sets it).
extern std::vector<std::string> g_argv;

// Starts `mpirun -np N <this heartwave> <the same arguments but --ranks>` and returns its
// exit status; hw::Error with what to do when this build has no MPI or no mpirun is found.
int launch_ranks(int ranks);

}  // namespace hw::cli
