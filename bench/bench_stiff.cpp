// What robustness costs: ns per single-cell step of each fixed-step scheme on the stiff
// test set (tests/data/stiff) against rl2. A program that prints a table, never a test.
//
//   build/bench/bench_stiff [DIR]        # default: the checkout's tests/data/stiff
//
// Each model runs as a user's CellML does: compiled at run time (the JIT, double), paced
// from its initial state with its own stimulus for the first 2 ms, 20 ms per repetition,
// the state reset when a scheme leaves it non-finite (rl2 does, on most of the set). The
// table gives the median of 5 repetitions, with the number of states and linear blocks.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "cell/cell_setup.hpp"
#include "model/jit/jit.hpp"
#include "model/load.hpp"

namespace {

namespace fs = std::filesystem;
using hw::cell::Integrator;

double ns_per_step(const hw::cell::CellKernel& k, const hw::cell::CellSetup& s, Integrator method, double dt_ms) {
  const double dt = dt_ms / s.time_to_ms;
  std::vector<double> y = s.initial_states, p = s.params;
  hw::cell::Batch<double> b;
  b.n = 1;
  b.stride = 1;
  b.y = y.data();
  b.p = p.data();
  const long steps = std::lround(20.0 / dt_ms), stim = std::lround(2.0 / dt_ms);
  std::vector<double> reps;
  for (int r = 0; r < 5; ++r) {
    y = s.initial_states;
    if (s.stim_on >= 0) p[s.stim_on] = 1;
    const auto t0 = std::chrono::steady_clock::now();
    for (long n = 0; n < steps; ++n) {
      if (n == stim && s.stim_on >= 0) p[s.stim_on] = 0;
      k.step(method, n * dt, dt, 1, b);
      if (!std::isfinite(y[s.voltage])) y = s.initial_states;
    }
    reps.push_back(std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / steps);
  }
  std::sort(reps.begin(), reps.end());
  return reps[2];
}

}  // namespace

int main(int argc, char** argv) {
  const fs::path dir = argc > 1 ? fs::path(argv[1]) : fs::path(HW_SOURCE_DIR) / "tests" / "data" / "stiff";
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".cellml") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  const Integrator schemes[] = {Integrator::rl2, Integrator::rl1, Integrator::grl1, Integrator::grl2, Integrator::rk4};
  std::printf("model\tstates\tblocks\tblock_states");
  for (Integrator m : schemes) std::printf("\t%s_ns", hw::cell::integrator_name(m));
  std::printf("\n");
  for (const fs::path& f : files) {
    const auto lm = hw::model::load_model(f.string());
    const auto setup = hw::cell::make_cell_setup(lm.analysed, lm.stimulus);
    hw::model::KernelNeeds needs = hw::model::KernelNeeds::only(
        {Integrator::rl2, Integrator::rl1, Integrator::grl1, Integrator::grl2, Integrator::rk4}, false);
    const auto k = hw::model::make_kernel(lm.analysed, hw::model::KernelChoice::compiled, nullptr, needs);
    std::size_t in_blocks = 0;
    for (const auto& bl : lm.analysed.blocks) in_blocks += bl.states.size();
    std::printf("%s\t%zu\t%zu\t%zu", f.stem().c_str(), lm.analysed.states.size(), lm.analysed.blocks.size(), in_blocks);
    for (Integrator m : schemes) std::printf("\t%.0f", ns_per_step(*k, setup, m, 0.01));
    std::printf("\n");
    std::fflush(stdout);
  }
  return 0;
}
