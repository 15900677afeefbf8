// Thread teams sized by the share of the machine a run actually gets (docs/benchmarks.md,
// "A busy machine").
//
// Why not omp_set_num_threads: that changes the whole process's default, so a library call
// would silently resize the teams of its caller's own OpenMP code. The team size here is
// per calling thread and scoped: an engine opens a TeamScope around its step, and every
// whole-field loop it calls (diffusion operators, CG, the phase-field rescale) asks team().
#pragma once

namespace hw::par {

// Cores this process may run on: the CPU affinity mask, capped by a cgroup CPU quota
// (cgroup v2 cpu.max, or v1 cfs_quota_us / cfs_period_us), rounded up; at least 1.
int usable_cores();

// The team size for the next parallel loop on the calling thread: the innermost TeamScope's
// size, else usable_cores().
int team();

class TeamScope {
 public:
  explicit TeamScope(int threads);
  ~TeamScope();
  TeamScope(const TeamScope&) = delete;
  TeamScope& operator=(const TeamScope&) = delete;

 private:
  int previous_;
};

}  // namespace hw::par
