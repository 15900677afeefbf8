// The accuracy bounds of lookup tables (time.cell_maths = "tables", --cell-maths tables) on
// every shared CellML model and the stiff set: one paced beat at BCL 1000 ms with GRL2 at
// dt 0.01 ms in double, the run-time compiled kernel with tables against the same kernel
// printed exactly. Bounds (issue 29): last-beat APD90 within 0.1 ms, RRMS of V ≤ 0.1 %.
//
// What the two share: the model's analysed IR, the integrator (runtime/integrators.hpp) and
// the compiler; the tables' values come from the pass's own evaluation of the IR (the tape
// of passes/eval.hpp), the exact kernel's from the printed maths. Each model prints a
// `HW_TABLES` line (functions tabulated, entries, errors) that the verification doc reads.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "model/jit/jit.hpp"
#include "model/load.hpp"
#include "model/passes/tabulate.hpp"
#include "cell_maths_support.hpp"

namespace {

using namespace hw::verify;
using hw::cell::Integrator;

class TablesBounds : public ::testing::TestWithParam<std::string> {};

TEST_P(TablesBounds, OneBeatWithinTheBoundsOfTheExactModel) {
  const fs::path file = GetParam();
  const std::string model = file.stem().string();
  if (!fs::exists(file)) GTEST_SKIP() << file << " not found (../shared absent?)";
  const auto [lm, setup, train] = load_for_one_beat(file);
  const hw::model::Tabulation t = hw::model::tabulate_voltage_functions(lm.analysed);
  if (t.empty()) {
    const std::string why = t.not_tabulated.empty() ? "no function of V alone worth a table" : t.not_tabulated;
    std::printf("HW_TABLES model=%s functions=0 why=\"%s\"\n", model.c_str(), why.c_str());
    GTEST_SKIP() << model << ": no tables (" << why << ")";
  }
  // The exact kernel as test_stiff_set.cpp builds it (one run-time compile serves both).
  auto needs = hw::model::KernelNeeds::only({Integrator::rl2, Integrator::grl2}, false);
  needs.single_precision = true;
  const auto exact = hw::model::make_kernel(lm.analysed, hw::model::KernelChoice::automatic, nullptr, needs);
  auto tabled_needs = hw::model::KernelNeeds::only({Integrator::grl2}, false);
  tabled_needs.cell_maths.tables = true;
  std::string how;
  const auto tabled = hw::model::make_kernel(lm.analysed, hw::model::KernelChoice::compiled, &how, tabled_needs);
  ASSERT_NE(how.find("lookup tables"), std::string::npos) << how;

  const Beat ref = one_beat(*exact, setup, train, false), got = one_beat(*tabled, setup, train, false);
  const double e = rrms(got.trace, ref.trace);
  EXPECT_LE(e, 1e-3) << model << ": RRMS(V) of the tables against the exact model\n" << t.report();
  const double d = std::fabs(got.apd90 - ref.apd90);
  if (!unpaced(model) && std::isfinite(ref.apd90))
    EXPECT_LE(d, 0.1) << model << ": APD90 " << got.apd90 << " ms with tables, " << ref.apd90 << " exact\n" << t.report();
  double worst = 0;
  for (const auto& f : t.functions) worst = std::max(worst, f.max_error);
  std::printf("HW_TABLES model=%s functions=%zu groups=%zu entries=%zu worst_table_error=%.2e "
              "apd90_diff_ms=%.4f rrms=%.3e apd90=%.3f\n",
              model.c_str(), t.functions.size(), t.groups.size(), t.entries(), worst, d, e, ref.apd90);
}

INSTANTIATE_TEST_SUITE_P(Models, TablesBounds, ::testing::ValuesIn(stiff_set_files()),
                         [](const auto& info) { return model_test_name(info.param); });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(TablesBounds);

}  // namespace
