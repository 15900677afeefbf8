// Every published model in ../shared/models/cellml loads, with the state counts of
// SOURCES.md, roles found through oxmeta, finite derivatives at the initial state (checked
// with an evaluator independent of the project's interpreter) and a unit check that warns
// at most.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>

#include "model/analysis/roles.hpp"
#include "model/frontend/cellml/cellml.hpp"
#include "model/passes/check_units.hpp"
#include "test_cellml_eval.hpp"

using namespace hw::model;

namespace {

struct Expected {
  std::size_t states;
  bool oxmeta;
  bool stimulus;  // has an oxmeta-annotated stimulus current
};

const std::map<std::string, Expected>& expected() {
  static const std::map<std::string, Expected> e = {
      {"tentusscher_panfilov_2006_epi", {19, true, true}},
      {"ohara_rudy_2011_endo", {41, true, true}},
      {"luo_rudy_1991", {8, true, true}},
      {"beeler_reuter_1977", {8, true, true}},
      {"hodgkin_huxley_1952", {4, true, true}},
      {"noble_1962", {4, true, true}},
      {"courtemanche_ramirez_nattel_1998", {21, true, true}},
      {"bueno_orovio_cherry_fenton_2008_epi", {4, true, true}},
      {"fenton_karma_1998", {3, false, false}},
      {"fitzhugh_nagumo_1961", {2, false, false}},
      {"mitchell_schaeffer_2003", {2, false, false}},
  };
  return e;
}

std::string models_dir() { return std::string(HW_SHARED_DIR) + "/models/cellml"; }

}  // namespace

class SharedCellmlModel : public ::testing::TestWithParam<std::string> {};

TEST_P(SharedCellmlModel, LoadsWithExpectedStatesRolesAndFiniteDerivatives) {
  std::string path = models_dir() + "/" + GetParam() + ".cellml";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "shared model not found: " << path;
  const Expected& want = expected().at(GetParam());

  Model m = load_cellml(path);

  EXPECT_EQ(m.states.size(), want.states);
  EXPECT_EQ(m.derivatives.size(), m.states.size());
  EXPECT_FALSE(m.name.empty());
  EXPECT_EQ(m.source_file, path);
  for (const auto& a : m.algebraics) EXPECT_NE(a.expr, kNoExpr) << a.name;
  ASSERT_TRUE(m.roles.voltage_state) << "no voltage found";
  if (want.oxmeta)
    EXPECT_EQ(m.states[*m.roles.voltage_state].ontology, "membrane_voltage");
  if (want.stimulus) {
    ASSERT_TRUE(m.roles.stimulus_current);
    EXPECT_EQ(m.algebraics[*m.roles.stimulus_current].ontology, "membrane_stimulus_current");
    EXPECT_TRUE(m.roles.stimulus_amplitude);
    EXPECT_TRUE(m.roles.stimulus_duration);
  }
  EXPECT_DOUBLE_EQ(m.roles.time_to_ms, 1.0);  // all of these are in ms (or dimensionless)
  EXPECT_DOUBLE_EQ(m.roles.voltage_to_mV, 1.0);

  hw::model::testing::TinyEval ev(m, hw::model::testing::initial_state(m), 0.0);
  for (std::size_t i = 0; i < m.states.size(); ++i)
    EXPECT_TRUE(std::isfinite(ev.derivative(i))) << "d" << m.states[i].name << "/dt";

  hw::DiagnosticSink sink;
  EXPECT_NO_THROW(check_units(m, sink));
  EXPECT_FALSE(sink.has_errors());
}

INSTANTIATE_TEST_SUITE_P(
    AllShared, SharedCellmlModel,
    ::testing::Values("tentusscher_panfilov_2006_epi", "ohara_rudy_2011_endo", "luo_rudy_1991",
                      "beeler_reuter_1977", "hodgkin_huxley_1952", "noble_1962",
                      "courtemanche_ramirez_nattel_1998", "bueno_orovio_cherry_fenton_2008_epi",
                      "fenton_karma_1998", "fitzhugh_nagumo_1961", "mitchell_schaeffer_2003"));

TEST(SharedCellmlModels, HodgkinHuxleyVoltageDerivativeMatchesHandComputation) {
  std::string path = models_dir() + "/hodgkin_huxley_1952.cellml";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "shared model not found";
  Model m = load_cellml(path);
  // A variable named in several components keeps its plain name (single definer).
  EXPECT_TRUE(m.find_state("V"));
  EXPECT_TRUE(m.find_state("m"));
  EXPECT_TRUE(m.find_parameter("Cm"));
  EXPECT_DOUBLE_EQ(m.states[*m.find_state("V")].initial, -75.0);
}
