// The compute roof's arithmetic (device/arith_rates), with rates given by hand: the GPU part,
// measuring the rates, runs in `heartwave bench population` on the device.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "device/arith_rates.hpp"

TEST(ComputeRoof, OverlappedAndSerialFromTheRates) {
  hw::gpu::ArithmeticRates r;
  r.precision = "float";
  r.per_second = {{"fma", 1e12}, {"div", 1e11}, {"div_literal", 1e12}, {"exp", 2e11}};
  hw::model::OpCount ops;
  ops.flops = 2000;             // 1 ns at 2e12 flops/s
  ops.divisions = 1000;         // float: 1000 multiplications (0.5 ns) ...
  ops.distinct_divisors = 100;  // ... and 100 reciprocals (1 ns)
  ops.selects = 500;            // 0.5 ns
  ops.specials["exp"] = 200;    // 1 ns
  const auto roof = hw::gpu::compute_roof(ops, r);
  // arithmetic 1 + 0.5 + 0.5 = 2 ns, special functions and reciprocals 1 + 1 = 2 ns
  EXPECT_NEAR(roof.roof, 1 / 2e-9, 1);
  EXPECT_NEAR(roof.serial, 1 / 4e-9, 1);
  EXPECT_NEAR(roof.seconds.at("div"), 1e-9, 1e-15);
  // Double divides every time, at the division's rate.
  r.precision = "double";
  const auto d = hw::gpu::compute_roof(ops, r);
  EXPECT_NEAR(d.seconds.at("div"), 10e-9, 1e-15);
  EXPECT_NEAR(d.roof, 1 / 11e-9, 1);
  ops.specials["tanh"] = 1;  // no rate measured for it
  EXPECT_THROW(hw::gpu::compute_roof(ops, r), hw::Error);
}
