// The converted built-in models (models/*.hwm, written by `heartwave model convert` through
// tools/make_builtin_models.sh) must compute what their CellML sources compute: the same
// states, initial values and derivatives at the initial state and along a paced beat.
// Derived cell-type variants are checked to differ from their parent only where the
// documented edits say.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "runtime/integrators.hpp"
#include "model/emit/interpreter.hpp"
#include "model/load.hpp"

namespace {

namespace fs = std::filesystem;
using hw::cell::Batch;
using hw::cell::Integrator;

struct Pair {
  const char* builtin;
  const char* cellml;
};

const Pair kPairs[] = {
    {"tentusscher_2006_epi", "tentusscher_panfilov_2006_epi.cellml"},
    {"ohara_rudy_2011_endo", "ohara_rudy_2011_endo.cellml"},
    {"luo_rudy_1991", "luo_rudy_1991.cellml"},
    {"beeler_reuter_1977", "beeler_reuter_1977.cellml"},
    {"courtemanche_1998", "courtemanche_ramirez_nattel_1998.cellml"},
};

std::vector<double> initial(const hw::model::Model& m) {
  std::vector<double> y;
  for (const auto& s : m.states) y.push_back(s.initial);
  return y;
}
std::vector<double> params(const hw::model::Model& m) {
  std::vector<double> p;
  for (const auto& q : m.parameters) p.push_back(q.value);
  return p;
}

// V after `steps` RL2 steps of dt (model time units) with the pacing stimulus on for the
// first `on_steps`.
std::vector<double> run(const hw::model::LoadedModel& lm, double dt, int steps, int on_steps) {
  const auto& m = lm.analysed;
  auto k = hw::model::make_interpreter(m);
  std::vector<double> y = initial(m), p = params(m);
  const auto on = m.find_parameter("_hw_stim_on");
  std::vector<double> v;
  Batch<double> b;
  b.n = 1;
  b.stride = 1;
  b.y = y.data();
  b.p = p.data();
  for (int s = 0; s < steps; ++s) {
    if (on) p[*on] = s < on_steps ? 1.0 : 0.0;
    k->step(Integrator::rl2, s * dt, dt, 1, b);
    if (s % 100 == 0) v.push_back(y[*m.roles.voltage_state] * m.roles.voltage_to_mV);
  }
  return v;
}

class BuiltinVsCellml : public ::testing::TestWithParam<Pair> {};

TEST_P(BuiltinVsCellml, SameModel) {
  const fs::path cellml = fs::path(HW_SHARED_DIR) / "models/cellml" / GetParam().cellml;
  if (!fs::exists(cellml)) GTEST_SKIP() << cellml << " not found (../shared absent)";
  const auto native = hw::model::load_model(GetParam().builtin);
  const auto source = hw::model::load_model(cellml.string());

  // Arrange: the same states in the same order with the same initial values.
  ASSERT_EQ(native.source.states.size(), source.source.states.size());
  for (std::size_t i = 0; i < native.source.states.size(); ++i) {
    EXPECT_EQ(native.source.states[i].name, source.source.states[i].name);
    EXPECT_EQ(native.source.states[i].initial, source.source.states[i].initial);
  }
  // Act: 300 ms of a paced beat (RL2, dt 0.01 ms; the model's own stimulus) on both.
  const double dt = 0.01 / native.analysed.roles.time_to_ms;
  const int on = static_cast<int>(std::lround(native.stimulus.default_duration_ms.value_or(1) / 0.01));
  const auto a = run(native, dt, 30000, on);
  const auto b = run(source, dt, 30000, on);
  // Assert: identical V traces to rounding (the converter prints %.17g).
  ASSERT_EQ(a.size(), b.size());
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(a[i] - b[i]));
  EXPECT_LT(worst, 1e-9) << GetParam().builtin << ": max |ΔV| " << worst << " mV";
  EXPECT_GT(*std::max_element(a.begin(), a.end()), 0.0) << "no action potential was paced";
}

INSTANTIATE_TEST_SUITE_P(Converted, BuiltinVsCellml, ::testing::ValuesIn(kPairs),
                         [](const auto& info) { return std::string(info.param.builtin); });

// The variants differ from the parent by exactly the documented edits.
TEST(BuiltinVariants, DifferOnlyWhereDocumented) {
  const auto epi = hw::model::load_model("tentusscher_2006_epi");
  const auto m = hw::model::load_model("tentusscher_2006_m");
  const auto endo = hw::model::load_model("tentusscher_2006_endo");
  auto value = [](const hw::model::LoadedModel& lm, const char* name) {
    return lm.source.parameters[*lm.source.find_parameter(name)].value;
  };
  EXPECT_EQ(value(m, "g_Ks"), 0.098);
  EXPECT_EQ(value(epi, "g_Ks"), 0.392);
  EXPECT_EQ(value(endo, "g_to"), 0.073);
  EXPECT_EQ(value(epi, "g_to"), 0.294);
  for (const char* v : {"ohara_rudy_2011_endo", "ohara_rudy_2011_epi", "ohara_rudy_2011_m"}) {
    const auto ord = hw::model::load_model(v);
    const double expected = std::string(v).ends_with("endo") ? 0 : std::string(v).ends_with("epi") ? 1 : 2;
    EXPECT_EQ(value(ord, "celltype"), expected) << v;
  }
}

}  // namespace
