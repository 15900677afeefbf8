// The built-in model library (models/*.hwm): every model parses, has its roles annotated,
// has finite derivatives at its initial state, round-trips through write_hwm, and fires
// an action potential and recovers under its own stimulus protocol.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <cmath>
#include <string>

#include "model/frontend/hwm/hwm.hpp"
#include "test_hwm_support.hpp"

using namespace hw::model;

namespace {

struct BuiltIn {
  const char* file;
  std::size_t states;
  bool has_capacitance;
  double peak_above;  // the voltage state must pass this after the first stimulus
  double rest_within; // ... and be back within this of its initial value one period later
};

void PrintTo(const BuiltIn& b, std::ostream* os) { *os << b.file; }

std::string path_of(const char* file) { return std::string(HW_MODELS_DIR) + "/" + file; }

std::uint32_t find_role(const std::vector<Parameter>& list, const std::string& term) {
  for (std::size_t i = 0; i < list.size(); ++i)
    if (list[i].ontology == term) return static_cast<std::uint32_t>(i);
  ADD_FAILURE() << "no parameter annotated @" << term;
  return 0;
}

}  // namespace

class BuiltInModels : public ::testing::TestWithParam<BuiltIn> {};

TEST_P(BuiltInModels, ParsesWithRolesAnnotated) {
  const BuiltIn& b = GetParam();
  Model m = load_hwm(path_of(b.file));
  EXPECT_EQ(m.states.size(), b.states);
  EXPECT_FALSE(m.citation.empty());
  int voltages = 0;
  for (const auto& s : m.states) voltages += s.ontology == "membrane_voltage";
  EXPECT_EQ(voltages, 1);
  int stimuli = 0;
  for (const auto& a : m.algebraics) stimuli += a.ontology == "membrane_stimulus_current";
  EXPECT_EQ(stimuli, 1);
  for (const char* term : {"membrane_stimulus_current_amplitude", "membrane_stimulus_current_duration",
                           "membrane_stimulus_current_period", "membrane_stimulus_current_offset"})
    find_role(m.parameters, term);
  if (b.has_capacitance) find_role(m.parameters, "membrane_capacitance");
}

TEST_P(BuiltInModels, DerivativesFiniteAtInitialState) {
  Model m = load_hwm(path_of(GetParam().file));
  std::vector<double> y;
  for (const auto& s : m.states) y.push_back(s.initial);
  for (double t : {0.0, 10.0, 10.5}) {  // before and during the first stimulus
    std::vector<double> dy = hwm_test::derivatives(m, t, y);
    for (std::size_t i = 0; i < dy.size(); ++i)
      EXPECT_TRUE(std::isfinite(dy[i])) << "d/dt " << m.states[i].name << " at t = " << t;
  }
  // At rest and outside the stimulus the membrane potential stays put (the published
  // initial values of other states, e.g. s = 0 in Bueno-Orovio, need not be at rest).
  std::vector<double> dy = hwm_test::derivatives(m, 0.0, y);
  for (std::size_t i = 0; i < dy.size(); ++i)
    if (m.states[i].ontology == "membrane_voltage") {
      EXPECT_NEAR(dy[i], 0.0, 1e-4);
    }
}

TEST_P(BuiltInModels, RoundTripsThroughTheWriter) {
  Model m = load_hwm(path_of(GetParam().file));
  std::string text = write_hwm(m);
  Model back = parse_hwm(text, "written.hwm");
  hwm_test::expect_same_model(m, back);
}

TEST_P(BuiltInModels, PacedBeatFiresAndRecovers) {
  // Forward Euler with a small step is enough to see the action potential's shape.
  const BuiltIn& b = GetParam();
  Model m = load_hwm(path_of(b.file));
  std::uint32_t v = 0;
  for (std::uint32_t i = 0; i < m.states.size(); ++i)
    if (m.states[i].ontology == "membrane_voltage") v = i;
  double start = m.parameters[find_role(m.parameters, "membrane_stimulus_current_offset")].value;
  double period = m.parameters[find_role(m.parameters, "membrane_stimulus_current_period")].value;
  std::vector<double> y;
  for (const auto& s : m.states) y.push_back(s.initial);
  const double dt = 0.005;
  const long steps = std::lround((start + period - 1e-9) / dt);
  double peak = y[v];
  for (long k = 0; k < steps; ++k) {
    std::vector<double> dy = hwm_test::derivatives(m, k * dt, y);
    for (std::size_t i = 0; i < y.size(); ++i) y[i] += dt * dy[i];
    peak = std::max(peak, y[v]);
  }
  EXPECT_GT(peak, b.peak_above) << b.file;
  EXPECT_NEAR(y[v], m.states[v].initial, b.rest_within) << b.file;
}

INSTANTIATE_TEST_SUITE_P(
    Library, BuiltInModels,
    ::testing::Values(BuiltIn{"mfhn.hwm", 2, true, 0.8, 0.05},
                      BuiltIn{"karma1993.hwm", 2, false, 2.0, 0.05},
                      BuiltIn{"aliev_panfilov_1996.hwm", 2, false, 0.8, 0.05},
                      BuiltIn{"fenton_karma_3v.hwm", 3, true, 0.0, 2.0},
                      BuiltIn{"bueno_orovio_2008_epi.hwm", 4, true, 0.0, 2.0},
                      BuiltIn{"bueno_orovio_2008_endo.hwm", 4, true, 0.0, 2.0},
                      BuiltIn{"bueno_orovio_2008_m.hwm", 4, true, 0.0, 2.0}),
    [](const ::testing::TestParamInfo<BuiltIn>& info) {
      std::string n = info.param.file;
      n = n.substr(0, n.find('.'));
      return n;
    });

TEST(HwmDocs, WorkedExampleParsesAndFires) {
  // The complete example in docs/model-language.md must stay a working model.
  std::ifstream in(std::string(HW_TEST_DATA_DIR) + "/../docs/model-language.md");
  if (!in) GTEST_SKIP() << "docs/model-language.md not found";
  std::stringstream buf;
  buf << in.rdbuf();
  std::string doc = buf.str();
  std::size_t begin = doc.find("```\n");
  ASSERT_NE(begin, std::string::npos);
  begin += 4;
  std::size_t end = doc.find("```", begin);
  ASSERT_NE(end, std::string::npos);
  Model m = parse_hwm(doc.substr(begin, end - begin), "model-language.md");
  EXPECT_EQ(m.states.size(), 3u);
  std::vector<double> y;
  for (const auto& s : m.states) y.push_back(s.initial);
  for (double d : hwm_test::derivatives(m, 10.5, y)) EXPECT_TRUE(std::isfinite(d));
}
