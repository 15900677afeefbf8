// Populations: designs, and biomarkers that move the way the physiology says.
#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "cell/population.hpp"
#include "cell_test_models.hpp"

using namespace hw::cell;

TEST(Population, ParsesRanges) {
  const auto r = parse_range("g_Kr=0.5:1.5:5", true);
  EXPECT_EQ(r.name, "g_Kr");
  EXPECT_EQ(r.lo, 0.5);
  EXPECT_EQ(r.hi, 1.5);
  EXPECT_EQ(r.n, 5);
  EXPECT_THROW(parse_range("g_Kr=0.5:x:5", true), hw::InputError);
  EXPECT_THROW(parse_range("g_Kr", false), hw::InputError);
  EXPECT_THROW(parse_range("g_Kr=1:2:0", true), hw::InputError);
}

TEST(Population, LatinHypercubeHitsEveryStratumOnce) {
  const auto d = random_design({{"a", 0.0, 1.0, 1}, {"b", 2.0, 4.0, 1}}, 10, 42, true);
  ASSERT_EQ(d.cells(), 10u);
  for (int j = 0; j < 2; ++j) {
    std::set<int> strata;
    for (std::size_t c = 0; c < 10; ++c) {
      const double x = (d.values[c * 2 + j] - (j ? 2.0 : 0.0)) / (j ? 2.0 : 1.0);
      strata.insert(static_cast<int>(x * 10));
    }
    EXPECT_EQ(strata.size(), 10u);
  }
}

TEST(Population, ApdGrowsWithTauCloseAndMatchesSingleCells) {
  const ConceptKernel<cell_models::MitchellSchaeffer> k(cell_models::MitchellSchaeffer{});
  const auto setup = cell_models::ms_setup();
  const auto design = grid_design({parse_range("tau_close=0.5:1.5:5", true)});
  const auto train = StimulusTrain::periodic(600, 2, 1.0);
  PopulationOptions opt;
  opt.solver.dt_ms = 0.01;
  opt.threads = 2;
  opt.chunk = 2;  // several chunks, one of them partial
  const auto r = run_population(k, setup, design, train, opt);
  ASSERT_EQ(r.last_beat.size(), 5u);
  for (std::size_t c = 1; c < 5; ++c) EXPECT_GT(r.last_beat[c].apd90, r.last_beat[c - 1].apd90 + 10);

  // The same cell alone gives the same last beat.
  auto one = setup;
  one.set_param("tau_close", setup.params[3] * design.values[3]);
  TraceOptions no_trace;
  no_trace.record = false;
  const auto s = run_single_cell(k, one, train, opt.solver, no_trace);
  EXPECT_NEAR(s.beats.back().apd90, r.last_beat[3].apd90, 1e-9);

  std::ostringstream csv;
  write_population_csv(setup, design, r, csv);
  EXPECT_EQ(csv.str().substr(0, csv.str().find('\n')), "cell,tau_close," + biomarker_csv_header());
}

// The runner has no NaN policy: a cell that blows up runs on with NaN biomarkers, and the
// result counts such cells (a sweep warns with the count, on the cpu as on the GPU).
TEST(Population, CountsTheCellsThatWentNonFinite) {
  const ConceptKernel<cell_models::MitchellSchaeffer> k(cell_models::MitchellSchaeffer{});
  const auto setup = cell_models::ms_setup();
  const auto design = grid_design({parse_range("tau_close=0.5:1.5:3", true)});
  const auto train = StimulusTrain::periodic(600, 1, 1.0);
  PopulationOptions opt;
  opt.threads = 2;
  opt.solver.dt_ms = 0.01;
  EXPECT_EQ(run_population(k, setup, design, train, opt).nonfinite, 0u);
  // Forward Euler at 5 ms: every cell (at 2 ms one of the three, at 1 ms none).
  opt.solver.method = Integrator::fe;
  opt.solver.dt_ms = 5;
  const auto r = run_population(k, setup, design, train, opt);
  std::printf("[measured] Mitchell-Schaeffer, forward steps of %g ms: %zu of 3 cells non-finite\n", opt.solver.dt_ms,
              r.nonfinite);
  EXPECT_EQ(r.nonfinite, 3u);
}

TEST(Population, UnknownParameterIsAnInputError) {
  const ConceptKernel<cell_models::MitchellSchaeffer> k(cell_models::MitchellSchaeffer{});
  const auto design = grid_design({parse_range("g_nope=0.5:1.5:2", true)});
  EXPECT_THROW(run_population(k, cell_models::ms_setup(), design,
                             StimulusTrain::periodic(600, 1, 1.0), {}),
               hw::InputError);
}
