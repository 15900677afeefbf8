// MPI_COMM_WORLD behind comm::Communicator. Point-to-point for the halos (non-blocking, so
// the engine computes the slab's interior while the faces travel), MPI collectives for the
// rest. Byte counts above what one MPI call takes (int) go in pieces.
//
// Every wait has a deadline (HEARTWAVE_RANK_TIMEOUT seconds, default 600; 0: none): the
// collectives are the non-blocking ones, tested until done. Why: a rank that dies ends the
// run through mpirun, but one that hangs (a stopped process, a lost node, a deadlocked
// driver) would leave the others waiting for ever; past the deadline a rank says where it
// waited and ends every rank (MPI_Abort).
#include "comm/mpi.hpp"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "comm/watchdog.hpp"
#include "core/error.hpp"

#if HW_HAVE_MPI
// The C interface only: mpi.h would also pull in the removed C++ bindings (libmpi_cxx).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

namespace hw::comm {

#if HW_HAVE_MPI

namespace {

constexpr std::size_t kPiece = std::size_t(1) << 30;  // bytes per MPI call, well under INT_MAX

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator(int& argc, char**& argv) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    MPI_Comm host;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &host);
    MPI_Comm_rank(host, &local_rank_);
    MPI_Comm_size(host, &local_size_);
    MPI_Comm_free(&host);
    char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
    int len = 0;
    MPI_Get_library_version(version, &len);
    library_ = std::string(version, std::size_t(std::max(0, len)));
    if (const auto comma = library_.find(','); comma != std::string::npos) library_.resize(comma);
    timeout_s_ = rank_timeout_seconds();
  }
  ~MpiCommunicator() override { MPI_Finalize(); }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string describe() const override { return library_; }
  int local_rank() const override { return local_rank_; }
  int local_size() const override { return local_size_; }

  void start_exchange(const std::vector<Transfer>& sends, const std::vector<Transfer>& receives) override {
    requests_.clear();
    for (const Transfer& r : receives) post(r, false);
    for (const Transfer& s : sends) post(s, true);
  }
  void finish_exchange() override {
    wait(requests_, "a halo exchange");
    requests_.clear();
  }

  void allreduce(double* values, std::size_t n, Reduce op) override {
    const MPI_Op o = op == Reduce::sum ? MPI_SUM : op == Reduce::min ? MPI_MIN : MPI_MAX;
    for (std::size_t i = 0; i < n; i += kPiece / sizeof(double)) {
      std::vector<MPI_Request> r(1);
      MPI_Iallreduce(MPI_IN_PLACE, values + i, int(std::min(n - i, kPiece / sizeof(double))), MPI_DOUBLE, o,
                     MPI_COMM_WORLD, r.data());
      wait(r, "an all-reduce");
    }
  }

  void allgather(void* data, const std::vector<std::size_t>& offset, const std::vector<std::size_t>& count) override {
    if (offset.size() != std::size_t(size_) || count.size() != std::size_t(size_))
      throw Error("allgather: one range per rank expected");
    const bool fits = std::all_of(count.begin(), count.end(), [](std::size_t c) { return c <= INT_MAX; }) &&
                      std::all_of(offset.begin(), offset.end(), [](std::size_t o) { return o <= INT_MAX; });
    if (fits) {
      std::vector<int> c(count.begin(), count.end()), o(offset.begin(), offset.end());
      std::vector<MPI_Request> r(1);
      MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, data, c.data(), o.data(), MPI_BYTE, MPI_COMM_WORLD,
                      r.data());
      wait(r, "a gather of the slabs");
      return;
    }
    // Too large for one call's int counts: each rank's range from its rank, in pieces.
    for (int r = 0; r < size_; ++r)
      broadcast(static_cast<char*>(data) + offset[std::size_t(r)], count[std::size_t(r)], r);
  }

  void broadcast(void* data, std::size_t bytes, int root) override {
    for (std::size_t i = 0; i < bytes; i += kPiece) {
      std::vector<MPI_Request> r(1);
      MPI_Ibcast(static_cast<char*>(data) + i, int(std::min(bytes - i, kPiece)), MPI_BYTE, root, MPI_COMM_WORLD,
                 r.data());
      wait(r, "a broadcast");
    }
  }

  void barrier() override {
    std::vector<MPI_Request> r(1);
    MPI_Ibarrier(MPI_COMM_WORLD, r.data());
    wait(r, "a barrier");
  }
  [[noreturn]] void abort(int code) override {
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);
  }

 private:
  // Waits for the requests, testing them (busy at first: a step's exchange takes
  // microseconds; then yielding the core, which an oversubscribed rank's neighbour needs).
  // Past the deadline: one line, then every rank ends.
  void wait(std::vector<MPI_Request>& r, const char* what) {
    if (r.empty()) return;
    if (timeout_s_ <= 0) {
      MPI_Waitall(int(r.size()), r.data(), MPI_STATUSES_IGNORE);
      return;
    }
    const auto start = std::chrono::steady_clock::now();
    for (long spin = 0;; ++spin) {
      int done = 0;
      MPI_Testall(int(r.size()), r.data(), &done, MPI_STATUSES_IGNORE);
      if (done) return;
      if (spin < 2000) continue;
      std::this_thread::yield();
      if (spin % 256 == 0 &&
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > timeout_s_) {
        std::fprintf(stderr,
                     "heartwave (rank %d of %d): waited %.0f s for the other ranks in %s; one of them hangs "
                     "or stopped. Ending every rank (HEARTWAVE_RANK_TIMEOUT sets the wait, 0 waits for ever)\n",
                     rank_, size_, timeout_s_, what);
        std::fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 1);
        std::_Exit(1);
      }
    }
  }

  void post(const Transfer& t, bool send) {
    char* p = static_cast<char*>(t.data);
    for (std::size_t i = 0; i < t.bytes || i == 0; i += kPiece) {
      const int n = int(std::min(t.bytes - i, kPiece));
      requests_.emplace_back();
      if (send)
        MPI_Isend(p + i, n, MPI_BYTE, t.peer, t.tag, MPI_COMM_WORLD, &requests_.back());
      else
        MPI_Irecv(p + i, n, MPI_BYTE, t.peer, t.tag, MPI_COMM_WORLD, &requests_.back());
      if (t.bytes == 0) break;
    }
  }

  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  std::string library_;
  std::vector<MPI_Request> requests_;
  double timeout_s_ = 600;
};

}  // namespace

bool mpi_available() { return true; }
std::unique_ptr<Communicator> make_mpi_communicator(int& argc, char**& argv) {
  return std::make_unique<MpiCommunicator>(argc, argv);
}

#else

bool mpi_available() { return false; }
std::unique_ptr<Communicator> make_mpi_communicator(int&, char**&) {
  throw Error("this heartwave was built without MPI (install libopenmpi-dev and openmpi-bin, tools/setup.sh, and build again)");
}

#endif

}  // namespace hw::comm
