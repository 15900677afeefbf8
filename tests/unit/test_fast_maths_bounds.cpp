// The accuracy bounds of the fast intrinsics (time.cell_maths = "fast", --cell-maths fast) on
// every shared CellML model and the stiff set: one paced beat at BCL 1000 ms with GRL2 at
// dt 0.01 ms in float, the run-time compiled kernel with the fast intrinsics against the same
// model's float kernel printed exactly. Bounds (issue 29): last-beat APD90 within 0.1 ms, RRMS
// of V ≤ 0.1 % (against the exact double model, beyond float's own distance from it, for a
// model whose float rounding alone is half of that: see below).
//
// What the two share: the model's analysed IR, the integrator (runtime/integrators.hpp), the
// compiler and float. The fast kernel's exp, log, log10, pow and division are the C++
// printer's emulation of __expf, __logf, __log10f, __powf and __fdividef (cpp_printer.cpp,
// kFastMath): it rounds their arguments as the GPU does, which is nearly all of their
// error, and takes the hardware's ex2/lg2/rcp as correctly rounded (they are within 2 ulp).
// The GPU's own kernels are held to the tissue bounds on the device
// (CudaTissue.FastMathsWithinOneDtAndHalfAPercentOfCv). Each model prints a `HW_FAST` line
// that the verification doc reads.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "model/emit/op_count.hpp"
#include "model/jit/jit.hpp"
#include "model/load.hpp"
#include "cell_maths_support.hpp"

namespace {

using namespace hw::verify;
using hw::cell::Integrator;

class FastMathsBounds : public ::testing::TestWithParam<std::string> {};

TEST_P(FastMathsBounds, OneBeatInFloatWithinTheBoundsOfTheExactModel) {
  const fs::path file = GetParam();
  const std::string model = file.stem().string();
  if (!fs::exists(file)) GTEST_SKIP() << file << " not found (../shared absent?)";
  const auto [lm, setup, train] = load_for_one_beat(file);
  // The exact kernel as test_stiff_set.cpp and test_tables_bounds.cpp build it (one run-time
  // compile, in both precisions, serves all three).
  auto needs = hw::model::KernelNeeds::only({Integrator::rl2, Integrator::grl2}, false);
  needs.single_precision = true;
  const auto exact = hw::model::make_kernel(lm.analysed, hw::model::KernelChoice::automatic, nullptr, needs);
  auto fast_needs = hw::model::KernelNeeds::only({Integrator::grl2}, true);
  fast_needs.cell_maths.fast = true;
  std::string how;
  const auto fast = hw::model::make_kernel(lm.analysed, hw::model::KernelChoice::compiled, &how, fast_needs);
  ASSERT_NE(how.find("fast intrinsics emulated in float"), std::string::npos) << how;

  const hw::model::FastIntrinsicCount ops = hw::model::count_fast_intrinsics(lm.analysed);
  const Beat ref = one_beat(*exact, setup, train, true), got = one_beat(*fast, setup, train, true);
  const Beat wide = one_beat(*exact, setup, train, false);
  if (!ref.finite) {
    std::printf("HW_FAST model=%s replaced=%d skipped=\"the exact float kernel does not stay finite\"\n", model.c_str(),
                ops.total());
    GTEST_SKIP() << model << ": the exact model in float is not finite at dt 0.01 ms with GRL2; nothing to compare";
  }
  const double e = rrms(got.trace, ref.trace);
  // For scale: float itself against double, the same exact maths.
  const double e_float = rrms(ref.trace, wide.trace);
  const double d_float = std::fabs(ref.apd90 - wide.apd90);
  // The bound is 0.1 % against the exact float model. Where float's own rounding already moves
  // V by half of that or more against double (Mahajan 2008, whose Ca_JSR thresholds amplify a
  // last-bit difference: 4.0e-4 and then 1.3e-3 when the blocks' LU changed order), two float
  // kernels differ by that rounding, amplified, whatever the intrinsics do; the comparison
  // cannot resolve 0.1 %. There the fast kernel is held to the exact double model instead: at
  // most 0.1 % beyond float's own distance from it.
  const double e_wide = rrms(got.trace, wide.trace);
  const bool float_noise = e_float >= 0.5e-3;
  if (!float_noise)
    EXPECT_LE(e, 1e-3) << model << ": RRMS(V) of the fast intrinsics against the exact float model";
  else
    EXPECT_LE(e_wide, e_float + 1e-3) << model << ": RRMS(V) of the fast intrinsics against the exact double model, "
                                      << "where the exact float model is " << e_float << " from it";
  if (ops.total() > 0)
    EXPECT_GT(e, 0) << model << ": the fast kernel gave the exact kernel's bits (were the intrinsics printed?)";
  else
    EXPECT_EQ(e, 0) << model << ": nothing to replace, yet the fast kernel moved V";
  const double d = std::fabs(got.apd90 - ref.apd90);
  if (!unpaced(model) && std::isfinite(ref.apd90))
    EXPECT_LE(d, 0.1) << model << ": APD90 " << got.apd90 << " ms with the fast intrinsics, " << ref.apd90 << " exact";
  std::printf("HW_FAST model=%s replaced=%d exp=%d log=%d pow=%d div=%d apd90_diff_ms=%.4f rrms=%.3e apd90=%.3f "
              "float_vs_double_apd90_ms=%.4f float_vs_double_rrms=%.3e fast_vs_double_rrms=%.3e bound=%s\n",
              model.c_str(), ops.total(), ops.exp, ops.log, ops.pow, ops.div, d, e, ref.apd90, d_float,
              e_float, e_wide, float_noise ? "double" : "float");
}

INSTANTIATE_TEST_SUITE_P(Models, FastMathsBounds, ::testing::ValuesIn(stiff_set_files()),
                         [](const auto& info) { return model_test_name(info.param); });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(FastMathsBounds);

}  // namespace
