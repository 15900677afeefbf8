// Busy processes beside a benchmark, so `heartwave bench load` measures the speed a user
// gets on a machine that is doing something else too (a compiler, a browser, another run).
#pragma once

#include <sys/types.h>

#include <vector>

namespace hw::par {

// Starts `processes` child processes that each spin on one core, for at most max_seconds
// (they stop by themselves then, and also when this process dies); the destructor stops
// them at once. pinned: each is bound to one of the CPUs this process may use, the last
// first, as a user's program is that was started with taskset or pins itself; unpinned
// ones move between cores as the OS balances them, which hurts a team less.
class CompetingLoad {
 public:
  CompetingLoad(int processes, double max_seconds, bool pinned = false);
  ~CompetingLoad();
  CompetingLoad(const CompetingLoad&) = delete;
  CompetingLoad& operator=(const CompetingLoad&) = delete;
  int processes() const { return int(children_.size()); }
  const std::vector<pid_t>& pids() const { return children_; }

 private:
  void stop();
  std::vector<pid_t> children_;
};

}  // namespace hw::par
