// The library's run loop (run/run.hpp): the plan refuses what cannot run before anything is
// allocated, a run stopped and restarted ends where an uninterrupted one does, a stop
// signal and a blow-up each leave a checkpoint and say where the run stands.
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>

#include "core/error.hpp"
#include "run/run.hpp"
#include "test_io_support.hpp"
#include "test_tissue_util.hpp"

using namespace hw::tissue;
using hw::io::testing::ScratchDir;
using hw::run::Result;
using hw::tissue::testing::box_stimulus;
using hw::tissue::testing::sheet;

namespace {

TissueCase small_case(const std::string& dir) {
  TissueCase c = sheet(24, 12, 1, 0.25, "beeler_reuter_1977");
  c.stimuli.push_back(box_stimulus({0, 0, 0}, {0.75, 3, 1}));
  c.time.t_end = 20;
  c.output.directory = dir;
  c.output.activation_map = true;
  return c;
}

}  // namespace

TEST(Run, PlanRefusesAnUnstableDtAtItsKey) {
  TissueCase c = small_case("unused");
  const hw::run::Plan p = hw::run::plan(c, "cpu");
  EXPECT_EQ(p.backend, Backend::cpu);
  EXPECT_GT(p.stable_dt, c.time.dt);
  EXPECT_GT(p.memory.run, 0u);
  c.time.dt = 10 * p.stable_dt;
  c.time.loc = {"case.toml", 12, 1};
  try {
    hw::run::plan(c, "cpu");
    FAIL() << "no error";
  } catch (const hw::InputError& e) {
    ASSERT_FALSE(e.diagnostics().empty());
    EXPECT_EQ(e.diagnostics()[0].loc.line, 12);
    EXPECT_NE(e.diagnostics()[0].message.find("stability limit"), std::string::npos);
  }
}

TEST(Run, RestartEndsWhereAnUninterruptedRunEnds) {
  ScratchDir d("run_restart");
  const TissueCase c = small_case(d / "out");
  hw::run::Options o;
  o.sim = {Backend::cpu, 1};
  o.identity = hw::run::case_identity("case text", {});
  Field<float> whole, resumed;
  {
    hw::run::Run r(c, o);
    const Result res = r.advance();
    EXPECT_EQ(res.outcome, Result::Outcome::finished);
    EXPECT_NEAR(res.t_ms, 20, 1e-9);
    EXPECT_FALSE(res.summary.empty());
    r.simulation().voltage(whole);
  }
  {
    hw::run::Run first(c, o);
    const Result half = first.advance(8.0, {}, false);
    EXPECT_NEAR(half.t_ms, 8.0, 1e-9);
    ASSERT_TRUE(std::filesystem::exists(half.checkpoint));
    o.restart = half.checkpoint;
  }
  hw::run::Run second(c, o);
  EXPECT_NEAR(second.simulation().time(), 8.0, 1e-9);
  EXPECT_EQ(second.advance().outcome, Result::Outcome::finished);
  second.simulation().voltage(resumed);
  ASSERT_EQ(whole.size(), resumed.size());
  for (std::size_t n = 0; n < whole.size(); ++n) ASSERT_EQ(whole[n], resumed[n]) << n;
  // A checkpoint of another case is refused with its file named.
  o.identity ^= 1;
  EXPECT_THROW(hw::run::Run(c, o), hw::InputError);
}

TEST(Run, AStopSignalLeavesACheckpoint) {
  ScratchDir d("run_stop");
  const TissueCase c = small_case(d / "out");
  hw::run::Run r(c, {{Backend::cpu, 1}, "", 0});
  const Result res = r.advance(-1, [](double t) {
    if (t >= 5.0) std::raise(SIGINT);
  });
  EXPECT_EQ(res.outcome, Result::Outcome::stopped);
  EXPECT_EQ(res.signal, SIGINT);
  EXPECT_LT(res.t_ms, 20);
  EXPECT_TRUE(std::filesystem::exists(res.checkpoint));
}

TEST(Run, ABlowUpNamesTheCellAndKeepsTheLastGoodState) {
  ScratchDir d("run_nan");
  TissueCase c = small_case(d / "out");
  c.stimuli[0].amplitude = 1e30;  // far beyond any cardiac stimulus: V overflows
  hw::run::Run r(c, {{Backend::cpu, 1}, "", 0});
  const Result res = r.advance();
  ASSERT_EQ(res.outcome, Result::Outcome::failed);
  EXPECT_FALSE(res.variable.empty());
  EXPECT_GE(res.failed_at_ms, res.t_ms);
  EXPECT_TRUE(std::filesystem::exists(res.last_good)) << res.last_good;
  EXPECT_TRUE(std::filesystem::exists(res.checkpoint));
}
