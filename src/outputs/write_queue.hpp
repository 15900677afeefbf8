// Writes files on a thread of its own, in the order they were queued, so that a run goes on
// stepping while a field snapshot is converted and written (HDF5 or VTK of a large grid
// takes longer than many steps).
//
// At most `depth` jobs wait: a run whose outputs come faster than the disk takes them waits
// at the next one rather than filling memory with snapshots. A job that throws (disk full,
// no permission) stops nothing on its own: its error is rethrown to the run at the next
// submit() or flush(), which is where the run can still say what failed and stop.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace hw::io {

class WriteQueue {
 public:
  explicit WriteQueue(std::size_t depth = 2);
  // Finishes the queued jobs; their errors are dropped (flush() first to see them).
  ~WriteQueue();
  WriteQueue(const WriteQueue&) = delete;
  WriteQueue& operator=(const WriteQueue&) = delete;

  // Queues job; blocks while `depth` jobs wait. Rethrows the error of an earlier job.
  void submit(std::function<void()> job);
  // Returns when every queued job has run. Rethrows the first error of one.
  void flush();

 private:
  void work();
  void rethrow();  // with m_ held

  std::size_t depth_;
  std::mutex m_;
  std::condition_variable changed_;
  std::deque<std::function<void()>> jobs_;
  bool running_ = false;  // a job taken off jobs_ is under way
  bool stop_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace hw::io
