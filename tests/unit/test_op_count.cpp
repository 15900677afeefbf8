// The operation count (model/emit/op_count) of a small model counted by hand, and its
// integrators' shares: what `model inspect` prints and the GPU compute roof divides by.
#include <gtest/gtest.h>

#include <filesystem>

#include "model/emit/op_count.hpp"
#include "model/load.hpp"
#include "model_text.hpp"

using hw::cell::Integrator;

namespace {

hw::model::LoadedModel load_text(const std::string& text) { return hw::test_models::load_model_text(text, "op_count"); }

}  // namespace

TEST(OpCount, SmallModelCountedByHandAfterTheStrengthReductions) {
  const auto lm = load_text(
      "model ops\ntime t [ms]\nparam k = 2\nstate y = 1 @membrane_voltage\nstate g = 0.5\n"
      // neg, add, powi<3> (2 multiplications), /4 as a multiplication, 4 adds: 9 flops;
      // 1 division, 1 division by a literal (/3), exp, sqrt (x^0.5)
      "d/dt y = exp(-y)/(k + y) + y^3 + y/4 + y^0.5 + y/3\n"
      // a gate: 4 flops
      "d/dt g = (1 - g)*0.5 - g*k\n");
  const auto& m = lm.analysed;
  ASSERT_EQ(m.states.size(), 2u);
  ASSERT_TRUE(m.analysis[1].is_gate);
  const auto fe = hw::model::count_operations(m, Integrator::fe);
  // + the pacing switch load_model adds to dV/dt (amplitude × on, added: 2) + the update
  // y += dt·f (2 per state)
  EXPECT_EQ(fe.flops, 9 + 4 + 2 + 2 * 2) << fe.str();
  EXPECT_EQ(fe.divisions, 1) << fe.str();
  EXPECT_EQ(fe.constant_divisions, 1) << fe.str();
  EXPECT_EQ(fe.distinct_divisors, 1) << fe.str();
  EXPECT_EQ(fe.selects, 0) << fe.str();
  EXPECT_EQ(fe.specials.at("exp"), 1) << fe.str();
  EXPECT_EQ(fe.specials.at("sqrt"), 1) << fe.str();
  EXPECT_EQ(fe.specials.count("pow"), 0u) << fe.str();
  // RK4: four right-hand sides; RL1: one, with the Jacobian, and one expm1 per gate; RL2 two.
  const auto rk4 = hw::model::count_operations(m, Integrator::rk4);
  EXPECT_EQ(rk4.specials.at("exp"), 4);
  EXPECT_EQ(rk4.divisions, 4);
  const auto rl1 = hw::model::count_operations(m, Integrator::rl1);
  const auto rl2 = hw::model::count_operations(m, Integrator::rl2);
  EXPECT_EQ(rl1.specials.at("expm1"), 1) << rl1.str();
  EXPECT_EQ(rl2.specials.at("expm1"), 2) << rl2.str();
  EXPECT_GE(rl1.specials.at("exp"), 1) << rl1.str();  // the Jacobian shares exp(-y) with f
  EXPECT_EQ(rl2.specials.at("exp"), 2 * rl1.specials.at("exp")) << rl2.str();
  EXPECT_GT(rl1.flops, fe.flops);
  EXPECT_NE(fe.str().find("19 flops, 1 div (by 1 distinct divisors), 1 div by literal, 0 select; exp 1, sqrt 1"), std::string::npos) << fe.str();
}

// A model with a linear block (a Markov chain): GRL1's LU of the block is counted.
TEST(OpCount, LinearBlocksAddTheirFactorisation) {
  const auto lm = load_text(
      "model chain\ntime t [ms]\nparam a = 2\nparam b = 3\nparam d = 0.5\nparam e = 0.2\n"
      "state V = -80 @membrane_voltage\nstate c = 1\nstate o = 0\nstate i = 0\n"
      "d/dt V = -0.1*(V + 80)\n"
      "d/dt c = b*o - a*exp(V/20)*c\nd/dt o = a*exp(V/20)*c - b*o - d*o + e*i\nd/dt i = d*o - e*i\n");
  const auto& m = lm.analysed;
  const auto grl1 = hw::model::count_operations(m, Integrator::grl1);
  const auto rl1 = hw::model::count_operations(m, Integrator::rl1);
  ASSERT_EQ(m.blocks.size(), 1u);
  EXPECT_GT(grl1.divisions, rl1.divisions) << grl1.str() << " vs " << rl1.str();
  EXPECT_EQ(grl1.specials.at("expm1"), 1) << grl1.str();  // V; the chain's states are in the block
}
