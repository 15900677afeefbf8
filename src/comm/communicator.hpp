// The ranks of one split simulation and what they say to each other: halo exchange,
// reductions, gathers. One interface, so the engine code is the same with one rank
// (LocalCommunicator: every call a copy or nothing) as with many (MPI, comm/mpi.cpp), and a
// later NCCL implementation can move device buffers through the same calls.
//
// Why so few operations: a slab decomposition (mesh/decomposition.hpp) needs only the V rows
// next to each slab's faces (exchange), agreement on a failure or a stop (allreduce),
// whole fields for the outputs and checkpoints (allgather), and one rank's value at a probe
// or a failing cell (broadcast). Every call is collective unless it says otherwise: all
// ranks make it, in the same order.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace hw::comm {

enum class Reduce { sum, min, max };

// One message of a halo exchange: `bytes` bytes at `data`, to or from rank `peer`; a send
// and its receive carry the same tag.
struct Transfer {
  int peer = 0;
  int tag = 0;
  void* data = nullptr;
  std::size_t bytes = 0;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // What carries the messages: "one rank", "Open MPI v4.1.4"
  virtual std::string describe() const = 0;
  // This rank among those on its host (shared memory), and their number: a rank picks its
  // GPU by it, whatever launcher placed the ranks.
  virtual int local_rank() const { return 0; }
  virtual int local_size() const { return 1; }

  // Posts the receives and the sends and returns at once; the buffers must stay untouched
  // until finish_exchange(), which waits for all of them. Only the ranks named take part.
  virtual void start_exchange(const std::vector<Transfer>& sends, const std::vector<Transfer>& receives) = 0;
  virtual void finish_exchange() = 0;

  // values[i] = op over the ranks of values[i], the same on every rank. A min/max is exact;
  // a sum of floating-point values depends on the order only where more than one rank adds
  // a non-zero value (the owner-only reads that use it add zeros elsewhere: exact).
  virtual void allreduce(double* values, std::size_t n, Reduce op) = 0;
  // Rank r's bytes [offset[r], offset[r] + count[r]) of `data` reach every rank at the same
  // place: afterwards every rank holds all the ranges.
  virtual void allgather(void* data, const std::vector<std::size_t>& offset,
                         const std::vector<std::size_t>& count) = 0;
  // root's `bytes` at data reach every rank.
  virtual void broadcast(void* data, std::size_t bytes, int root) = 0;
  virtual void barrier() = 0;
  // Ends every rank of the run with exit status `code` (a rank that failed alone must not
  // leave the others waiting in a collective).
  [[noreturn]] virtual void abort(int code) = 0;
};

// The one rank of an ordinary run.
class LocalCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string describe() const override { return "one rank"; }
  void start_exchange(const std::vector<Transfer>& sends, const std::vector<Transfer>& receives) override;
  void finish_exchange() override {}
  void allreduce(double*, std::size_t, Reduce) override {}
  void allgather(void*, const std::vector<std::size_t>&, const std::vector<std::size_t>&) override {}
  void broadcast(void*, std::size_t, int) override {}
  void barrier() override {}
  [[noreturn]] void abort(int code) override;
};

}  // namespace hw::comm
