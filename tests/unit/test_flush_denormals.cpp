// The cpu engine's flush-to-zero guard: subnormal floats read and produce zero inside it,
// and the thread's floating-point mode is as before once it ends.
#include <gtest/gtest.h>

#include <cfloat>

#include "kernels/cpu/flush_denormals.hpp"

using hw::kernels::cpu::FlushDenormals;

namespace {
float times_one(float x) {
  volatile float one = 1.0f;  // keeps the product at run time
  return x * one;
}
}  // namespace

TEST(FlushDenormals, SubnormalsAreZeroInsideAndKeptOutside) {
  const float tiny = FLT_MIN / 8;  // subnormal
  ASSERT_GT(times_one(tiny), 0.0f);
  {
    const FlushDenormals guard(true);
#if defined(__x86_64__) || defined(__SSE__)
    EXPECT_EQ(times_one(tiny), 0.0f);
    EXPECT_EQ(times_one(FLT_MIN), FLT_MIN);  // normal numbers are untouched
#endif
  }
  EXPECT_EQ(times_one(tiny), tiny);
  {
    const FlushDenormals off(false);
    EXPECT_EQ(times_one(tiny), tiny);
  }
}
