// The run's speed and wall-time estimate (run/step_rate.hpp): measured after the engine's
// start-up, not over it, and right within 30 % after a second of steady stepping (issue 29:
// `bench niederer --backend cuda` printed "about 30:18:07" for a run of 5 s, its first
// step carrying the kernels' compilation).
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>

#include "run/step_rate.hpp"
#include "test_tissue_util.hpp"
#include "tissue/simulation.hpp"

using hw::run::StepRate;

// A GPU-like run in synthetic time: the first step takes 20 s (compilation), the next 40
// run three times slower (the tuner's trials, warming), then 10,000 steps of 0.5 ms each.
TEST(StepRate, LeavesCompilationAndTuningOutOfTheEstimate) {
  const double dt = 0.01, step = 0.5e-3;
  const long steady = 10000;
  const double t_end = dt * double(1 + 40 + steady);
  StepRate r(0, t_end);
  double wall = 20.0, t = dt;
  r.observe(t, wall, true);
  for (int n = 0; n < 40; ++n) r.observe(t += dt, wall += 3 * step, true);
  EXPECT_FALSE(r.settled());
  double estimate = NAN;
  for (long n = 0; n < steady; ++n) {
    r.observe(t += dt, wall += step, false);
    if (std::isnan(estimate) && r.settled()) estimate = r.expected_total();
  }
  ASSERT_FALSE(std::isnan(estimate));
  EXPECT_NEAR(estimate, wall, 1e-6 * wall);  // steady stepping: exact
  EXPECT_NEAR(r.rate(), dt / step, 1e-6 * dt / step);
  // What the old rule (simulated time over all the wall time, after 2 s) said: 100x too long.
  const double old = t_end / ((dt * 2) / 20.0);
  EXPECT_GT(old / wall, 50.0);
}

TEST(StepRate, NoEstimateBeforeSteadyStepping) {
  StepRate r(0, 100);
  EXPECT_FALSE(r.settled());
  EXPECT_TRUE(std::isnan(r.seconds_left()));
  r.observe(0.01, 30.0, false);  // the first step: the reference, whatever its time
  EXPECT_EQ(r.rate(), 0.0);
  r.observe(0.02, 30.5, false);
  EXPECT_FALSE(r.settled());  // half a second
  r.observe(1.02, 31.5, false);
  EXPECT_TRUE(r.settled());
  EXPECT_NEAR(r.rate(), 1.01 / 1.5, 1e-12);
  EXPECT_NEAR(r.expected_total(), 31.5 + (100 - 1.02) / (1.01 / 1.5), 1e-9);
}

// A real run on the cpu (one thread: the governor's probes are its own business): the
// estimate after the first second of stepping against the wall time the run then took.
TEST(StepRate, RightWithinThirtyPercentOnARealCpuRun) {
  using namespace hw::tissue;
  TissueCase c = hw::tissue::testing::sheet(96, 96, 1, 0.25, "tentusscher_2006_epi");
  c.stimuli.push_back(hw::tissue::testing::box_stimulus({0, 0, 0}, {1.0, 24, 1}));
  c.time.dt = 0.02;
  SimulationOptions o;
  o.backend = Backend::cpu;
  o.threads = 1;
  const auto start = std::chrono::steady_clock::now();
  const auto wall = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  Simulation sim(c, o);
  // The run's length: about 3 s of stepping on this machine, from a first measured step.
  sim.step();
  const double t0 = wall();
  for (int n = 0; n < 20; ++n) sim.step();
  const double per_step = (wall() - t0) / 20;
  const double t_end = sim.time() + sim.dt() * std::max(100.0, std::floor(3.0 / per_step));
  StepRate r(0, t_end);
  r.observe(sim.time(), wall(), false);
  double estimate = NAN;
  while (sim.time() < t_end - 0.5 * sim.dt()) {
    sim.step();
    r.observe(sim.time(), wall(), sim.warming_up());
    if (std::isnan(estimate) && r.settled()) estimate = r.expected_total();
  }
  const double took = wall();
  std::printf("[measured] estimate after %.1f s of stepping: %.2f s; the run took %.2f s (%+.1f %%)\n",
              StepRate::kSettle, estimate, took, 100 * (estimate - took) / took);
  ASSERT_FALSE(std::isnan(estimate));
  EXPECT_LT(std::fabs(estimate - took), 0.3 * took);
}
