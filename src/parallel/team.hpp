// Thread teams sized by the share of the machine a run actually gets (docs/benchmarks.md,
// "A busy machine").
//
// Why not omp_set_num_threads: that changes the whole process's default, so a library call
// would silently resize the teams of its caller's own OpenMP code. The team size here is
// per calling thread and scoped: an engine opens a TeamScope around its step, and every
// whole-field loop it calls (diffusion operators, CG, the phase-field rescale) asks team().
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

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

// Σ body(b, e) over [0, n) cut into ranges of `chunk`, each range summed by one thread and
// the ranges' sums added in order: the same bits whatever the team size. A plain OpenMP
// reduction's bits depend on the team, and the governor may change the team mid-run while a
// restart must continue bit-identically (CG's dot products, the pseudo-ECG).
template <class Body>
double ordered_sum(std::ptrdiff_t n, std::ptrdiff_t chunk, bool parallel, Body&& body) {
  const std::ptrdiff_t chunks = (n + chunk - 1) / chunk;
  thread_local std::vector<double> part;
  part.assign(std::size_t(std::max<std::ptrdiff_t>(chunks, 0)), 0.0);
  double* sums = part.data();
#pragma omp parallel for schedule(static) num_threads(team()) if (parallel && chunks > 1)
  for (std::ptrdiff_t c = 0; c < chunks; ++c) sums[c] = body(c * chunk, std::min(n, (c + 1) * chunk));
  double s = 0.0;
  for (std::ptrdiff_t c = 0; c < chunks; ++c) s += sums[c];
  return s;
}

}  // namespace hw::par
