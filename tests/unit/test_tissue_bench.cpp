// The tissue benchmark cases run and report consistent numbers (correctness only: tiny
// grids; times are never asserted).
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.hpp"
#include "tissue/benchmarks.hpp"
#include "tissue/simulation.hpp"

using namespace hw::tissue;

TEST(TissueBench, CasesAreStableAndStartWithAWave) {
  for (const std::string& name : tissue_benchmark_names()) {
    SCOPED_TRACE(name);
    const TissueCase c = tissue_benchmark_case(name, 12);
    EXPECT_LE(c.time.dt, stable_dt_limit(c));
    EXPECT_EQ(c.time.precision, Precision::f32);
    EXPECT_EQ(c.time.diffusion, DiffusionScheme::forward_euler);
    EXPECT_FALSE(c.initial.empty() && c.stimuli.empty()) << "cells must be active";
  }
  // Full-size grids as documented.
  EXPECT_EQ(tissue_benchmark_case("karma2d").grid.size(), 1024u * 1024u);
  EXPECT_EQ(tissue_benchmark_case("karma3d").grid.size(), 128u * 128u * 128u);
  EXPECT_EQ(tissue_benchmark_case("tt06-3d").grid.size(), 64u * 64u * 64u);
  EXPECT_EQ(tissue_benchmark_case("niederer-0.2").grid.size(), 100u * 35u * 15u);
  EXPECT_THROW(tissue_benchmark_case("karma4d"), hw::InputError);
}

TEST(TissueBench, RunReportsConsistentNumbers) {
  for (const std::string& name : {std::string("karma2d"), std::string("tt06-3d")}) {
    SCOPED_TRACE(name);
    const BenchResult r = run_tissue_benchmark(name, {.threads = 1, .seconds = 0.0, .n = 8, .roof_gbs = 0.0});
    EXPECT_EQ(r.name, name);
    EXPECT_EQ(r.cells, name == "karma2d" ? 64 : 512);
    EXPECT_GE(r.steps, 2);
    EXPECT_GT(r.seconds, 0);
    EXPECT_NEAR(r.cell_steps_per_s, double(r.cells) * r.steps / r.seconds, 1e-6 * r.cell_steps_per_s);
    // 2 · 4 B · states: Karma 2 states, TT06 19.
    EXPECT_EQ(r.bytes_per_cell_step, name == "karma2d" ? 16 : 152);
    EXPECT_NEAR(r.achieved_gbs, r.cell_steps_per_s * r.bytes_per_cell_step / 1e9, 1e-9 * r.achieved_gbs);
    EXPECT_EQ(r.roof_gbs, 0.0);
    EXPECT_NE(r.notes.find("fused"), std::string::npos) << r.notes;
  }
}

TEST(TissueBench, PlanarWaveTravels) {
  // Karma on a 32 x 32 grid: the excited strip at x < 1.6 excites its neighbours.
  const TissueCase c = tissue_benchmark_case("karma2d", 32);
  Simulation sim(c, SimulationOptions{Backend::cpu, 1});
  const Grid& g = sim.grid();
  EXPECT_GT(sim.voltage_at(g.index(0, 16, 0)), 2.0);
  EXPECT_LT(sim.voltage_at(g.index(10, 16, 0)), 0.5);
  sim.run_until(10.0);
  EXPECT_GT(sim.voltage_at(g.index(8, 16, 0)), 1.0) << "the front has not moved";
}

TEST(TissueBench, CopyRoofIsPositive) {
  const double gbs = measure_copy_bandwidth_gbs(1, 8);
  EXPECT_GT(gbs, 0.0);
  EXPECT_TRUE(std::isfinite(gbs));
}
