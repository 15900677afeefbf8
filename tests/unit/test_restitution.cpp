// S1-S2 restitution rows a user can plot (cell/restitution.hpp): APD90(S1) measured once
// over the whole S1 beat, DI negative for an S2 inside the S1 action potential, and an S2
// that makes no full action potential marked as not captured with no APD.
#include <gtest/gtest.h>

#include <cmath>

#include "cell/restitution.hpp"
#include "run/cell_run.hpp"

namespace {

hw::run::PreparedCell prepared(const std::string& model) {
  hw::run::CellRunOptions o;
  o.model = model;
  o.bcl_ms = 1000;
  return hw::run::prepare_cell(o);
}

std::vector<hw::cell::RestitutionPoint> restitution(const std::string& model, std::vector<double> ci) {
  hw::run::PreparedCell p = prepared(model);
  hw::cell::RestitutionOptions r;
  r.s1_bcl_ms = 1000;
  r.n_s1 = 3;
  r.duration_ms = p.stim_duration_ms;
  r.coupling_ms = std::move(ci);
  return hw::cell::run_s1s2(*p.kernel, p.setup, r, p.solver);
}

}  // namespace

// Luo-Rudy 1991 (APD90 near 350 ms at 1 Hz): S2 inside the action potential, just after it,
// and late. Before the fix the early rows had NaN DI and APD90(S1) and an S2 "APD" of
// 26-78 ms.
TEST(Restitution, S1MeasuredOnceAndUncapturedS2Marked) {
  const auto rows = restitution("luo_rudy_1991", {100, 200, 300, 360, 368, 380, 450, 600, 900});
  ASSERT_EQ(rows.size(), 9u);
  const double apd_s1 = rows[0].apd90_s1;
  std::printf("[measured] LR91 S1-S2 at BCL 1000 ms: APD90(S1) %.2f ms\n", apd_s1);
  for (const auto& r : rows)
    std::printf("[measured]   CI %.0f  DI %.2f  captured %d  APD90(S2) %.2f\n", r.coupling_ms, r.di_ms,
                int(r.captured), r.apd90_s2);
  EXPECT_GT(apd_s1, 250);
  EXPECT_LT(apd_s1, 450);
  for (const auto& r : rows) {
    EXPECT_EQ(r.apd90_s1, apd_s1) << "CI " << r.coupling_ms;
    EXPECT_DOUBLE_EQ(r.di_ms, r.coupling_ms - apd_s1) << "CI " << r.coupling_ms;
    EXPECT_EQ(std::isnan(r.apd90_s2), !r.captured) << "CI " << r.coupling_ms;
  }
  // Inside the S1 action potential: DI < 0, no capture.
  EXPECT_LT(rows[0].di_ms, 0);
  EXPECT_FALSE(rows[0].captured);
  EXPECT_FALSE(rows[1].captured);
  // Just after repolarisation (DI 7 ms): a graded response of half an upstroke, not captured
  // (it had an "APD" of 50 ms before).
  EXPECT_GT(rows[4].di_ms, 0);
  EXPECT_FALSE(rows[4].captured);
  // Late S2: captured, APD shorter than S1's but a full one, growing with the interval.
  EXPECT_TRUE(rows[7].captured);
  EXPECT_TRUE(rows[8].captured);
  EXPECT_GT(rows[7].apd90_s2, 0.5 * apd_s1);
  EXPECT_LT(rows[7].apd90_s2, rows[8].apd90_s2);
  EXPECT_LE(rows[8].apd90_s2, apd_s1 * 1.05);
  // Every captured S2 is a full action potential: none as short as the graded responses.
  for (const auto& r : rows)
    if (r.captured) EXPECT_GT(r.apd90_s2, 100) << "CI " << r.coupling_ms;
}

// The dynamic protocol: 20 beats at each cycle length, longest first, continuing. APD90
// shortens with the cycle length, DI = BCL - APD90, and at 300 ms LR91 no longer follows
// 1:1 (its APD90 at 400 ms is near 290 ms): not captured, APD90 NaN.
TEST(Restitution, DynamicProtocol) {
  hw::run::PreparedCell p = prepared("luo_rudy_1991");
  hw::cell::DynamicOptions o;
  o.bcl_ms = {1000, 700, 500, 400, 300};
  o.beats = 20;
  o.duration_ms = p.stim_duration_ms;
  const auto rows = hw::cell::run_dynamic(*p.kernel, p.setup, o, p.solver);
  ASSERT_EQ(rows.size(), 5u);
  for (const auto& r : rows)
    std::printf("[measured] LR91 dynamic: BCL %.0f  APD90 %.2f  DI %.2f  captured %d\n", r.bcl_ms, r.apd90, r.di_ms,
                int(r.captured));
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_TRUE(rows[i].captured) << rows[i].bcl_ms;
    EXPECT_DOUBLE_EQ(rows[i].di_ms, rows[i].bcl_ms - rows[i].apd90);
    if (i > 0) EXPECT_LT(rows[i].apd90, rows[i - 1].apd90) << rows[i].bcl_ms;
  }
  EXPECT_NEAR(rows[0].apd90, restitution("luo_rudy_1991", {900})[0].apd90_s1, 1.0)
      << "at 1000 ms the dynamic APD90 is the S1-S2 protocol's S1 APD90";
  EXPECT_FALSE(rows[4].captured);
  EXPECT_TRUE(std::isnan(rows[4].apd90));
  o.beats = 1;
  EXPECT_THROW(hw::cell::run_dynamic(*p.kernel, p.setup, o, p.solver), hw::InputError);
}
