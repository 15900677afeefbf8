// The MPI implementation of the communicator (compiled where the build found MPI).
#pragma once

#include <memory>

#include "comm/communicator.hpp"

namespace hw::comm {

bool mpi_available();
// Initialises MPI (MPI_THREAD_FUNNELED: only the thread that steps calls it) and returns
// MPI_COMM_WORLD as a communicator; its destructor finalises MPI. hw::Error without MPI.
std::unique_ptr<Communicator> make_mpi_communicator(int& argc, char**& argv);

}  // namespace hw::comm
