// Heartwave against Myokit, an independent implementation (tools/myokit_golden.py).
//
// Why: RL2-vs-CVODE agreement (test_vs_cvode.cpp) only shows our two integrators agree on
// our own compiled model; a wrong unit conversion, a mis-parsed MathML operator or a
// different pacing rule would pass it. The committed goldens come from Myokit's own CellML
// import and CVODES (rtol 1e-8, atol 1e-10), paced exactly as `heartwave cell --bcl 1000
// --beats 3` paces (stimuli at t = 0, 1000, 2000 ms, the model's own amplitude and
// duration; see the script's header). Bar: RRMS(V) <= 1% and APD90 within 1 ms per beat,
// for our CVODE and our RL2 at dt 0.01 ms. The golden APD90 uses the same definition as
// cell/biomarkers.hpp (beat window, V_rest at the window start, activation at the max
// upstroke slope, interpolated 90% crossing after the peak), computed on a 0.01 ms log.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "verify_support.hpp"

namespace {

using namespace hw::verify;

// Models with a committed golden trace.
std::vector<std::string> golden_model_names() {
  std::vector<std::string> names;
  std::error_code ec;
  if (!fs::is_directory(golden_dir(), ec)) return names;
  for (const auto& e : fs::directory_iterator(golden_dir(), ec))
    if (e.path().extension() == ".csv") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

struct VsMyokitCase {
  std::string model, integrator;
};

void PrintTo(const VsMyokitCase& c, std::ostream* os) { *os << c.model << "/" << c.integrator; }

class VsMyokit : public ::testing::TestWithParam<VsMyokitCase> {};

TEST_P(VsMyokit, TraceAndApd90MatchGolden) {
  const auto& [model, integrator] = GetParam();
  if (!fs::exists(shared_models_dir() / (model + ".cellml")))
    GTEST_SKIP() << "shared model not found: " << model;
  std::string why;
  const auto golden = read_trace(golden_dir() / (model + ".csv"), &why);
  ASSERT_TRUE(golden) << why;
  const std::vector<double> golden_apd = json_numbers(golden_json(model), "apd90_ms");
  ASSERT_EQ(golden_apd.size(), static_cast<size_t>(kBeats));

  const CliRun& ours = run_cell(model, integrator);
  ASSERT_EQ(ours.exit_code, 0) << ours.command << "\n" << ours.stdout_text;
  ASSERT_FALSE(ours.trace.t.empty()) << ours.stdout_text;

  const double e = rrms(ours.trace, *golden);
  EXPECT_LE(e, 0.01) << model << ": RRMS(V) of " << integrator << " vs Myokit";

  ASSERT_EQ(ours.apd90.size(), static_cast<size_t>(kBeats)) << ours.stdout_text;
  double worst = 0;
  for (int b = 0; b < kBeats && !unpaced(model); ++b) {
    EXPECT_FALSE(std::isnan(golden_apd[b])) << model << " beat " << b + 1;
    const double d = std::fabs(ours.apd90[b] - golden_apd[b]);
    worst = std::max(worst, d);
    EXPECT_LE(d, 1.0) << model << " beat " << b + 1 << ": APD90 " << ours.apd90[b] << " ("
                      << integrator << ") vs " << golden_apd[b] << " (Myokit) ms";
  }
  if (unpaced(model)) worst = std::nan("");  // APD90 not compared
  std::printf("HW_VERIFY model=%s pair=%s_vs_myokit rrms=%.3e apd90_max_diff_ms=%.4f "
              "apd90=%s ref_apd90=%s\n",
              model.c_str(), integrator.c_str(), e, worst, join_ms(ours.apd90).c_str(),
              join_ms(golden_apd).c_str());
}

std::vector<VsMyokitCase> cases() {
  std::vector<VsMyokitCase> c;
  for (const auto& m : golden_model_names())
    for (const char* i : {"cvode", "rl2"}) c.push_back({m, i});
  return c;
}

INSTANTIATE_TEST_SUITE_P(Goldens, VsMyokit, ::testing::ValuesIn(cases()),
                         [](const auto& info) {
                           return info.param.model + "_" + info.param.integrator;
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(VsMyokit);

}  // namespace
