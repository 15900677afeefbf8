// CellML 2.0 front end on real files (tests/data/cellml2/SOURCES.md, from libCellML) and on
// small documents: 2.0 models import and run, give the same equations as the CellML 1.0
// encoding of the same model in ../shared, and 2.0's own import children
// (<import_component>, <import_units>) work. (test_sbml.cpp checks libCellML's 2.0
// Hodgkin-Huxley against the BioModels SBML one.) The comparisons evaluate derivatives at one state with evaluate_point and pace
// with the IR interpreter (model_trace_support.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "model/frontend/cellml/cellml.hpp"
#include "model/passes/eval.hpp"
#include "model_trace_support.hpp"

using namespace hw::model;

namespace {

namespace fs = std::filesystem;

const fs::path kData = fs::path(HW_TEST_DATA_DIR) / "data/cellml2";
const fs::path kShared = fs::path(HW_SHARED_DIR) / "models/cellml";

// dy/dt of every state of `m` at `y` (its own order), at time t.
std::vector<double> derivatives(const Model& m, double t, const std::vector<double>& y) {
  std::vector<double> p, dy;
  for (const auto& q : m.parameters) p.push_back(q.value);
  for (ExprId d : m.derivatives) dy.push_back(evaluate_point(m, d, t, y.data(), p.data()));
  return dy;
}

// Puts a's state values into b's order by name; states b has and a lacks keep b's values.
std::vector<double> by_name(const Model& a, const std::vector<double>& ya, const Model& b) {
  std::vector<double> yb;
  for (const auto& s : b.states) {
    double v = s.initial;
    for (std::size_t i = 0; i < a.states.size(); ++i)
      if (a.states[i].name == s.name) v = ya[i];
    yb.push_back(v);
  }
  return yb;
}

std::vector<double> initial(const Model& m) {
  std::vector<double> y;
  for (const auto& s : m.states) y.push_back(s.initial);
  return y;
}

// Both models' derivatives at `a`'s initial state (mapped by state name), at time t.
void expect_same_derivatives(const Model& a, const Model& b, double t, double rel) {
  ASSERT_EQ(a.states.size(), b.states.size());
  const auto ya = initial(a);
  const auto da = derivatives(a, t, ya);
  const auto db = derivatives(b, t, by_name(a, ya, b));
  for (std::size_t i = 0; i < a.states.size(); ++i)
    for (std::size_t j = 0; j < b.states.size(); ++j)
      if (a.states[i].name == b.states[j].name)
        EXPECT_NEAR(da[i], db[j], rel * (1e-12 + std::fabs(da[i]))) << "d/dt " << a.states[i].name << " at t = " << t;
}

}  // namespace

TEST(Cellml2, NobleMatchesItsCellml10Encoding) {
  if (!fs::exists(kShared / "noble_1962.cellml")) GTEST_SKIP() << "../shared absent";
  const Model v2 = load_cellml((kData / "noble_model_1962.cellml").string());
  const Model v1 = load_cellml((kShared / "noble_1962.cellml").string());
  ASSERT_TRUE(v2.roles.voltage_state);
  EXPECT_EQ(v2.states[*v2.roles.voltage_state].name, "V");
  expect_same_derivatives(v2, v1, 0.0, 1e-12);
}

TEST(Cellml2, NobleRunsAndFires) {
  // libCellML's encoding has no stimulus: the Purkinje fibre fires on its own.
  const auto lm = load_model((kData / "noble_model_1962.cellml").string());
  const auto v = hw::test::paced_v_trace(lm, 0.01, 100000, 1000);  // 1 s, V every 10 ms
  for (double x : v) ASSERT_TRUE(std::isfinite(x));
  EXPECT_GT(*std::max_element(v.begin(), v.end()), 0.0) << "no action potential in 1 s";
}

TEST(Cellml2, ImportComponentAndImportUnits) {
  const fs::path dir = fs::temp_directory_path() / "hw_cellml2_imports";
  fs::create_directories(dir);
  std::ofstream(dir / "library.cellml") << R"(<?xml version="1.0"?>
<model xmlns="http://www.cellml.org/cellml/2.0#" xmlns:cellml="http://www.cellml.org/cellml/2.0#" name="library">
  <units name="per_ms"><unit prefix="milli" units="second" exponent="-1"/></units>
  <component name="decay">
    <variable name="t" units="second" interface="public"/>
    <variable name="k" units="per_ms" initial_value="2"/>
    <variable name="x" units="dimensionless" initial_value="1" interface="public"/>
    <math xmlns="http://www.w3.org/1998/Math/MathML">
      <apply><eq/><apply><diff/><bvar><ci>t</ci></bvar><ci>x</ci></apply>
        <apply><times/><apply><minus/><ci>k</ci></apply><ci>x</ci></apply></apply>
    </math>
  </component>
</model>)";
  std::ofstream(dir / "top.cellml") << R"(<?xml version="1.0"?>
<model xmlns="http://www.cellml.org/cellml/2.0#" xmlns:xlink="http://www.w3.org/1999/xlink" name="top">
  <import xlink:href="library.cellml">
    <import_component name="d" component_ref="decay"/>
    <import_units name="rate" units_ref="per_ms"/>
  </import>
  <component name="main">
    <variable name="t" units="second" interface="public"/>
    <variable name="r" units="rate" initial_value="3"/>
  </component>
  <connection component_1="main" component_2="d"><map_variables variable_1="t" variable_2="t"/></connection>
</model>)";
  const Model m = load_cellml((dir / "top.cellml").string());
  ASSERT_EQ(m.states.size(), 1u);
  EXPECT_EQ(m.states[0].name, "x");
  ASSERT_TRUE(m.find_parameter("r"));
  EXPECT_DOUBLE_EQ(m.parameters[*m.find_parameter("r")].units->factor, 1000.0);  // 1/ms in SI
  // dx/dt = -k x as written (CellML converts units across connections, not inside an
  // equation of one component).
  EXPECT_DOUBLE_EQ(derivatives(m, 0, {1.0})[0], -2.0);
  EXPECT_EQ(m.time.name, "t");
  fs::remove_all(dir);
}

TEST(Cellml2, ResetIsALocatedError) {
  const std::string xml = R"(<?xml version="1.0"?>
<model xmlns="http://www.cellml.org/cellml/2.0#" name="r"><component name="c">
<variable name="t" units="second"/><variable name="x" units="dimensionless" initial_value="0"/>
<reset variable="x" test_variable="x" order="1"/>
</component></model>)";
  try {
    parse_cellml(xml, "reset.cellml");
    ADD_FAILURE() << "expected an InputError";
  } catch (const hw::InputError& e) {
    const auto& d = e.diagnostics().front();
    EXPECT_EQ(d.loc.line, 4);
    EXPECT_NE(d.message.find("<reset>"), std::string::npos) << d.message;
    EXPECT_NE(d.message.find("'x'"), std::string::npos) << d.message;
  }
}
