#include "parallel/team.hpp"

#include <sched.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>

namespace hw::par {

namespace {

// CPUs in this process's affinity mask (taskset, numactl, a batch system's binding).
int affinity_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

// The cgroup CPU quota in cores (a container's --cpus, a systemd CPUQuota); 0 when none.
double quota_cores() {
  // cgroup v2: "max 100000" or "150000 100000"
  if (std::ifstream f("/sys/fs/cgroup/cpu.max"); f) {
    std::string quota;
    double period = 0;
    if (f >> quota >> period && quota != "max" && period > 0) return std::stod(quota) / period;
    return 0;
  }
  // cgroup v1
  std::ifstream q("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"), p("/sys/fs/cgroup/cpu/cpu.cfs_period_us");
  double quota = -1, period = 0;
  if (q >> quota && p >> period && quota > 0 && period > 0) return quota / period;
  return 0;
}

thread_local int t_team = 0;  // 0: no TeamScope open on this thread

}  // namespace

int usable_cores() {
  static const int cores = [] {
    int n = affinity_cores();
    try {
      if (const double q = quota_cores(); q > 0) n = std::min(n, std::max(1, int(std::ceil(q))));
    } catch (...) {
      // An unreadable quota file: the affinity mask stands.
    }
    return n;
  }();
  return cores;
}

int team() { return t_team > 0 ? t_team : usable_cores(); }

TeamScope::TeamScope(int threads) : previous_(t_team) { t_team = std::max(1, threads); }
TeamScope::~TeamScope() { t_team = previous_; }

}  // namespace hw::par
