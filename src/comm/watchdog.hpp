// A deadline on waits that no call of ours can time out: a split GPU run's host blocks on
// its stream while NCCL's kernels wait for the other ranks' GPUs, and a rank that hangs (a
// stopped process, a lost node) would hold every other rank there for ever. MPI's waits have
// their own deadline (comm/mpi.cpp); this one covers the waits on the GPUs.
//
// How: the waits that may depend on another rank run armed (Watchdog::Armed, a scope); a
// thread of its own looks every quarter second, and once one armed scope has lasted longer
// than the deadline it says where, on which rank and since when, and ends the process with
// exit code 1, which makes mpirun end every rank. Why a thread and not polling the stream:
// polling each batch's wait made the split box run 4.7 s instead of 1.4 (docs/parallel.md);
// arming costs two atomic stores.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace hw::comm {

// HEARTWAVE_RANK_TIMEOUT in seconds (default 600; 0 or less: no deadline).
double rank_timeout_seconds();

class Watchdog {
 public:
  // `who`: how the message names this process ("rank 1 of 4"). No thread when timeout_s ≤ 0.
  Watchdog(double timeout_s, std::string who);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // While it lives, the watchdog ends the process if it lasts past the deadline. Scopes may
  // nest (the outermost one's start counts); `what` names the wait ("the steps' batch").
  // Armed from one thread (the one that waits on the GPU).
  class Armed {
   public:
    Armed(Watchdog* w, const char* what);
    ~Armed();
    Armed(const Armed&) = delete;
    Armed& operator=(const Armed&) = delete;

   private:
    Watchdog* w_;
  };

  double timeout_seconds() const { return timeout_s_; }

 private:
  void watch();

  double timeout_s_;
  std::string who_;
  std::atomic<int> depth_{0};
  std::atomic<long long> since_ns_{0};  // steady clock, the outermost scope's start
  std::atomic<const char*> what_{nullptr};
  std::mutex m_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace hw::comm
