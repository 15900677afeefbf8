// The stimuli as one compact description (tissue/stimuli.hpp): no cap on their number, one
// added while a run goes on acts as if the case had it, a checkpoint carries it, and bad
// ones are refused by key. And the sinks the run attaches (tissue/sinks.hpp): probes read
// together give what value_at gives.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "core/error.hpp"
#include "test_tissue_util.hpp"
#include "tissue/sinks.hpp"

using namespace hw::tissue;
using namespace hw::tissue::testing;

namespace {

double max_v_diff(const Simulation& a, const Simulation& b) {
  Field<float> va, vb;
  a.voltage(va);
  b.voltage(vb);
  double d = 0;
  for (std::size_t n = 0; n < va.size(); ++n) d = std::max(d, double(std::fabs(va[n] - vb[n])));
  return d;
}

}  // namespace

// More stimuli than the old GPU mask's 32 bits: the cpu engine (a laid field per part) and
// the reference (its own cell-by-cell loop over the lists) agree.
TEST(TissueStimuli, ManyStimuliCpuAgreesWithReference) {
  TissueCase c = many_stimuli_sheet();
  c.time.precision = Precision::f64;
  Simulation ref(c, {Backend::reference}), cpu(c, {Backend::cpu, 1});
  ref.run_until(3);
  cpu.run_until(3);
  const double d = max_v_diff(ref, cpu);
  std::printf("[measured] 40 stimuli, 3 ms: |V_cpu - V_ref| max %.3g mV\n", d);
  EXPECT_LT(d, 1e-6);
  EXPECT_GT(ref.voltage_at(c.grid.n[0] * 20), 0.5) << "the stimuli did not excite the edge";
}

// A stimulus added before its start time, while running, acts exactly as one in the case.
TEST(TissueStimuli, AddedWhileRunningEqualsOneInTheCase) {
  for (Backend b : {Backend::cpu, Backend::reference}) {
    SCOPED_TRACE(backend_name(b));
    TissueCase c = sheet(20, 16, 1, 0.25, "bueno_orovio_2008_epi");
    c.time.dt = 0.05;
    c.stimuli.push_back(box_stimulus({0, 0, 0}, {0.5, 4, 0.25}));
    Stimulus later = box_stimulus({3, 2, 0}, {4, 3, 0.25}, 60, 1);
    later.start = 2;
    TissueCase with = c;
    with.stimuli.push_back(later);
    Simulation a(with, {b, 1}), live(c, {b, 1});
    a.run_until(1);
    live.run_until(1);
    EXPECT_EQ(live.stimuli(), 1u);
    live.add_stimulus(later);
    EXPECT_EQ(live.stimuli(), 2u);
    a.run_until(6);
    live.run_until(6);
    EXPECT_EQ(max_v_diff(a, live), 0.0);
  }
}

// A stimulus added while running travels in the checkpoint: a fresh simulation of the case
// loaded from it continues as the one that added it; one loaded from a state without it
// drops it.
TEST(TissueStimuli, CheckpointCarriesAddedStimuli) {
  TissueCase c = sheet(20, 16, 1, 0.25, "bueno_orovio_2008_epi");
  c.time.dt = 0.05;
  Simulation live(c, {Backend::cpu, 1});
  live.run_until(1);
  const std::vector<std::uint8_t> before = live.save_state();
  Stimulus click = box_stimulus({2, 2, 0}, {3, 3, 0.25}, 60, 1);
  click.start = 2;
  live.add_stimulus(click);
  const std::vector<std::uint8_t> with = live.save_state();
  Simulation resumed(c, {Backend::cpu, 1});
  resumed.load_state(with);
  EXPECT_EQ(resumed.stimuli(), 1u);
  live.run_until(5);
  resumed.run_until(5);
  EXPECT_EQ(max_v_diff(live, resumed), 0.0);
  EXPECT_GT(live.voltage_at(c.grid.index(10, 10, 0)), -60) << "the added stimulus did not fire";
  resumed.load_state(before);
  EXPECT_EQ(resumed.stimuli(), 0u);
  // Damaged: cut anywhere in the added stimulus, or naming a cell past its region, the
  // state is refused with a message, and the simulation keeps what it had.
  for (std::size_t cut = 1; cut <= 80; ++cut) {
    std::vector<std::uint8_t> bad(with.begin(), with.end() - std::ptrdiff_t(cut));
    EXPECT_THROW(resumed.load_state(bad), hw::Error) << "cut " << cut;
  }
  std::vector<std::uint8_t> bad = with;
  for (std::size_t k = 1; k <= 4; ++k) bad[bad.size() - k] = 0xff;
  try {
    resumed.load_state(bad);
    ADD_FAILURE() << "a cell index past the region was taken";
  } catch (const hw::Error& e) {
    EXPECT_NE(std::string(e.what()).find("is outside its model region"), std::string::npos) << e.what();
  }
}

// A bad stimulus is refused by key and number, and the run goes on without it.
TEST(TissueStimuli, BadAddedStimulusIsRefusedByKey) {
  TissueCase c = sheet(10, 10, 1, 0.25, "bueno_orovio_2008_epi");
  Simulation sim(c, {Backend::cpu, 1});
  Stimulus bad = box_stimulus({0, 0, 0}, {1, 1, 0.25});
  bad.amplitude = NAN;
  try {
    sim.add_stimulus(bad);
    ADD_FAILURE() << "a stimulus of NaN amplitude was taken";
  } catch (const hw::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("stimulus[0].amplitude must be finite"), std::string::npos) << e.what();
  }
  Stimulus outside = box_stimulus({50, 50, 0}, {60, 60, 1});
  try {
    sim.add_stimulus(outside);
    ADD_FAILURE() << "a stimulus outside the grid was taken";
  } catch (const hw::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("contains no tissue cell"), std::string::npos) << e.what();
  }
  EXPECT_EQ(sim.stimuli(), 0u);
  sim.run_until(0.5);
}

// Probes attached as one sink read what value_at reads, NaN where the cell's model has no
// such state; a variable no model has is an error.
TEST(TissueSinks, ProbesReadAsValueAt) {
  TissueCase c = sheet(12, 8, 1, 0.25, "bueno_orovio_2008_epi");
  add_box_region(c, "beeler_reuter_1977", {0, 0, 0}, {1, 1, 0.25});
  c.stimuli.push_back(box_stimulus({2, 0, 0}, {2.5, 2, 0.25}));
  for (Backend b : {Backend::cpu, Backend::reference}) {
    Simulation sim(c, {b, 1});
    sim.run_until(1);
    const std::vector<std::pair<std::string, std::size_t>> reads{
        {"V", 0}, {"V", 50}, {"w", 50}, {"w", 0}, {"V", c.grid.size() + 3}};
    const auto probes = sim.attach_probes(reads);
    std::vector<double> got;
    probes->read(got);
    ASSERT_EQ(got.size(), reads.size());
    for (std::size_t i = 0; i + 1 < reads.size(); ++i) {
      const double want = sim.value_at(reads[i].first, reads[i].second);
      if (std::isnan(want))
        EXPECT_TRUE(std::isnan(got[i])) << i;
      else
        EXPECT_EQ(got[i], want) << i;
    }
    EXPECT_TRUE(std::isnan(got[3])) << "cell 0 runs Beeler-Reuter, which has no state w";
    EXPECT_TRUE(std::isnan(got[4])) << "a cell past the grid";
    EXPECT_THROW(sim.attach_probes({{"no_such_state", 0}}), hw::Error);
  }
}
