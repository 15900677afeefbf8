// SBML front end: rules, function definitions, initial assignments, units, reactions and
// roles on small documents and on real files (tests/data/sbml/SOURCES.md), and every
// unsupported construct giving a located error that names it. The dynamics are checked
// with a plain RK4 loop over evaluate_point, which shares nothing with the kernels.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "model/frontend/sbml/sbml.hpp"
#include "model/load.hpp"
#include "model/passes/eval.hpp"

using namespace hw::model;

namespace {

namespace fs = std::filesystem;

const std::string kData = std::string(HW_TEST_DATA_DIR) + "/data/sbml";

std::string l3v2(const std::string& body, const std::string& time_units = "second") {
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
         "<sbml xmlns=\"http://www.sbml.org/sbml/level3/version2/core\" level=\"3\" version=\"2\">\n"
         "<model id=\"snippet\" timeUnits=\"" + time_units + "\">\n" +
         body + "\n</model>\n</sbml>\n";
}

const char* kMath = "<math xmlns=\"http://www.w3.org/1998/Math/MathML\">";
const char* kTime = "<csymbol encoding=\"text\" definitionURL=\"http://www.sbml.org/sbml/symbols/time\">t</csymbol>";

// Parses and returns the first diagnostic (fails the test if parsing succeeds).
hw::Diagnostic parse_error(const std::string& xml) {
  try {
    parse_sbml(xml, "snippet.sbml");
  } catch (const hw::InputError& e) {
    EXPECT_FALSE(e.diagnostics().empty());
    return e.diagnostics().front();
  }
  ADD_FAILURE() << "expected an InputError";
  return {};
}

std::vector<double> derivatives(const Model& m, double t, const std::vector<double>& y) {
  std::vector<double> p, dy;
  for (const auto& q : m.parameters) p.push_back(q.value);
  for (ExprId d : m.derivatives) dy.push_back(evaluate_point(m, d, t, y.data(), p.data()));
  return dy;
}

// Classic RK4 from t0 to t1 in n steps (the oracle: no kernel, no pass).
std::vector<double> rk4(const Model& m, std::vector<double> y, double t0, double t1, int n) {
  const double h = (t1 - t0) / n;
  for (int k = 0; k < n; ++k) {
    const double t = t0 + k * h;
    auto add = [&](const std::vector<double>& a, double s) {
      std::vector<double> r = y;
      for (std::size_t i = 0; i < r.size(); ++i) r[i] += s * a[i];
      return r;
    };
    auto k1 = derivatives(m, t, y);
    auto k2 = derivatives(m, t + h / 2, add(k1, h / 2));
    auto k3 = derivatives(m, t + h / 2, add(k2, h / 2));
    auto k4 = derivatives(m, t + h, add(k3, h));
    for (std::size_t i = 0; i < y.size(); ++i) y[i] += h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
  }
  return y;
}

std::vector<double> initial(const Model& m) {
  std::vector<double> y;
  for (const auto& s : m.states) y.push_back(s.initial);
  return y;
}

}  // namespace

class Sbml : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!sbml_reader_available()) GTEST_SKIP() << "built without libSBML (libsbml5-dev)";
  }
};

TEST_F(Sbml, RulesFunctionsInitialAssignmentsAndUnits) {
  // dV/dt = -(V - E)/tau + twice(k) with E an assignment rule, tau from an initial
  // assignment, twice() a function definition, and y0 = 2*k by initial assignment.
  const std::string xml = l3v2(std::string(R"(
<listOfFunctionDefinitions><functionDefinition id="twice">)") + kMath + R"(<lambda><bvar><ci>x</ci></bvar>
  <apply><times/><cn>2</cn><ci>x</ci></apply></lambda></math></functionDefinition></listOfFunctionDefinitions>
<listOfUnitDefinitions>
  <unitDefinition id="ms"><listOfUnits><unit kind="second" exponent="1" scale="-3" multiplier="1"/></listOfUnits></unitDefinition>
  <unitDefinition id="mV"><listOfUnits><unit kind="volt" exponent="1" scale="-3" multiplier="1"/></listOfUnits></unitDefinition>
</listOfUnitDefinitions>
<listOfParameters>
  <parameter id="V" value="-80" units="mV" constant="false"/>
  <parameter id="y" constant="false"/>
  <parameter id="k" value="1.5" constant="true"/>
  <parameter id="E" units="mV" constant="false"/>
  <parameter id="tau" constant="true"/>
</listOfParameters>
<listOfInitialAssignments>
  <initialAssignment symbol="tau">)" + kMath + R"(<apply><times/><cn>4</cn><ci>k</ci></apply></math></initialAssignment>
  <initialAssignment symbol="y">)" + kMath + R"(<apply><ci>twice</ci><ci>k</ci></apply></math></initialAssignment>
</listOfInitialAssignments>
<listOfRules>
  <assignmentRule variable="E">)" + kMath + R"(<apply><minus/><cn>10</cn><apply><times/><cn>0.5</cn>)" + kTime + R"(</apply></apply></math></assignmentRule>
  <rateRule variable="V">)" + kMath + R"(<apply><plus/><apply><minus/><apply><divide/><apply><minus/><ci>V</ci><ci>E</ci></apply><ci>tau</ci></apply></apply><apply><ci>twice</ci><ci>k</ci></apply></apply></math></rateRule>
  <rateRule variable="y">)" + kMath + R"(<apply><minus/><ci>y</ci></apply></math></rateRule>
</listOfRules>)", "ms");
  const Model m = parse_sbml(xml, "snippet.sbml");
  ASSERT_EQ(m.states.size(), 2u);
  EXPECT_EQ(m.states[0].name, "V");
  EXPECT_EQ(m.states[1].name, "y");
  EXPECT_EQ(m.states[1].initial, 3.0);  // twice(k) at t = 0
  EXPECT_EQ(m.time.name, "t");
  EXPECT_DOUBLE_EQ(m.roles.time_to_ms, 1.0);
  EXPECT_DOUBLE_EQ(m.roles.voltage_to_mV, 1.0);
  ASSERT_TRUE(m.roles.voltage_state);
  EXPECT_EQ(*m.roles.voltage_state, 0u);
  ASSERT_TRUE(m.find_parameter("k"));
  ASSERT_TRUE(m.find_algebraic("tau"));  // constant, from its initial assignment
  const auto dy = derivatives(m, 2.0, {-80.0, 3.0});
  EXPECT_DOUBLE_EQ(dy[0], -(-80.0 - (10 - 0.5 * 2.0)) / 6.0 + 3.0);
  EXPECT_DOUBLE_EQ(dy[1], -3.0);
}

TEST_F(Sbml, ReactionsMatchTheSbmlTestSuite) {
  // Case 00001: S1 -> S2 at rate compartment*k1*S1; reference results every 0.1 s.
  const Model m = load_sbml(kData + "/sbml_test_suite_00001_l3v2.xml");
  ASSERT_EQ(m.states.size(), 2u);
  std::ifstream csv(kData + "/sbml_test_suite_00001_results.csv");
  std::string line;
  std::getline(csv, line);  // time,S1,S2
  std::vector<double> y = initial(m);
  double t = 0;
  int rows = 0;
  while (std::getline(csv, line)) {
    std::istringstream row(line);
    double tr, s1, s2;
    char comma;
    row >> tr >> comma >> s1 >> comma >> s2;
    y = rk4(m, y, t, tr, 20);
    t = tr;
    EXPECT_NEAR(y[0], s1, 1e-9 * 1.5e-4) << "S1 at t = " << t;
    EXPECT_NEAR(y[1], s2, 1e-9 * 1.5e-4) << "S2 at t = " << t;
    ++rows;
  }
  EXPECT_GT(rows, 10);
}

TEST_F(Sbml, BioModelsHodgkinHuxleyFires) {
  // BIOMD0000000020 keeps the 1952 sign: depolarisation is negative. Start at V = -15 mV
  // (15 mV depolarised): an action potential swings V beyond -80 mV and it recovers.
  const LoadedModel lm = load_model(kData + "/BIOMD0000000020_hodgkin_huxley_1952.xml");
  const Model& m = lm.source;
  ASSERT_TRUE(m.roles.voltage_state);
  EXPECT_EQ(m.states[*m.roles.voltage_state].name, "V");
  EXPECT_DOUBLE_EQ(m.roles.time_to_ms, 1.0);
  std::vector<double> y = initial(m);
  const std::uint32_t v = *m.roles.voltage_state;
  y[v] = -15;
  double lowest = 0;
  for (int ms = 0; ms < 20; ++ms) {
    y = rk4(m, y, ms, ms + 1, 100);
    lowest = std::min(lowest, y[v]);
  }
  EXPECT_LT(lowest, -80.0);
  EXPECT_GT(y[v], -20.0);
}

TEST_F(Sbml, BioModelsHodgkinHuxleyEqualsLibcellmlCellml2) {
  // Two encodings of the 1952 model by different groups in two formats (BioModels SBML
  // Level 2, libCellML's CellML 2.0): the same derivatives at rest and at depolarised and
  // hyperpolarised states (the 1952 convention in both: rest is V = 0).
  const Model sbml = load_sbml(kData + "/BIOMD0000000020_hodgkin_huxley_1952.xml");
  const Model cellml = read_model_file(std::string(HW_TEST_DATA_DIR) +
                                       "/data/cellml2/hodgkin_huxley_squid_axon_model_1952.cellml");
  ASSERT_EQ(sbml.states.size(), cellml.states.size());
  for (double v : {0.0, -15.0, -60.0, 12.0}) {
    std::vector<double> ys = initial(sbml);
    ys[*sbml.roles.voltage_state] = v;
    std::vector<double> yc;
    for (const auto& s : cellml.states)
      yc.push_back(ys[*sbml.find_state(s.name)]);
    const auto ds = derivatives(sbml, 0.0, ys), dc = derivatives(cellml, 0.0, yc);
    for (std::size_t i = 0; i < cellml.states.size(); ++i)
      EXPECT_NEAR(dc[i], ds[*sbml.find_state(cellml.states[i].name)], 1e-12 * (1 + std::fabs(dc[i])))
          << "d/dt " << cellml.states[i].name << " at V = " << v;
  }
}

TEST_F(Sbml, MembranePotentialByOverride) {
  const std::string xml = l3v2(std::string(R"(<listOfParameters>
  <parameter id="u" value="0" constant="false"/><parameter id="w" value="0.5" constant="false"/>
</listOfParameters><listOfRules>
  <rateRule variable="u">)") + kMath + R"(<apply><minus/><ci>w</ci><ci>u</ci></apply></math></rateRule>
  <rateRule variable="w">)" + kMath + R"(<apply><minus/><ci>w</ci></apply></math></rateRule>
</listOfRules>)");
  const fs::path file = fs::temp_directory_path() / "hw_sbml_override.xml";
  std::ofstream(file) << xml;
  LoadOptions opt;
  opt.roles.voltage = "w";
  const LoadedModel lm = load_model(file.string(), opt);
  ASSERT_TRUE(lm.source.roles.voltage_state);
  EXPECT_EQ(lm.source.states[*lm.source.roles.voltage_state].name, "w");
  opt.roles.voltage = "nope";
  EXPECT_THROW(load_model(file.string(), opt), hw::InputError);
  fs::remove(file);
}

TEST_F(Sbml, RootElementDecidesTheReader) {
  const fs::path dir = fs::temp_directory_path() / "hw_sbml_root";
  fs::create_directories(dir);
  const std::string sbml = l3v2(std::string("<listOfParameters><parameter id=\"V\" value=\"1\" constant=\"false\"/>"
                                            "</listOfParameters><listOfRules><rateRule variable=\"V\">") +
                                kMath + "<cn>0</cn></math></rateRule></listOfRules>");
  for (const char* name : {"a.xml", "b.sbml", "c.cellml"}) {
    const std::size_t eol = sbml.find('\n') + 1;  // a comment between declaration and root
    std::ofstream(dir / name) << sbml.substr(0, eol) << "<!-- <model> in a comment -->\n" << sbml.substr(eol);
    EXPECT_EQ(model_format_of((dir / name).string()), ModelFormat::sbml) << name;
    EXPECT_EQ(read_model_file((dir / name).string()).states.size(), 1u) << name;
  }
  std::ofstream(dir / "d.xml") << "<?xml version=\"1.0\"?><model xmlns=\"http://www.cellml.org/cellml/2.0#\" name=\"x\"/>";
  EXPECT_EQ(model_format_of((dir / "d.xml").string()), ModelFormat::cellml);
  EXPECT_EQ(xml_root_name("<?xml version='1.0'?>\n<!DOCTYPE x>\n<sbml:sbml a='1'>"), "sbml");
  EXPECT_EQ(xml_root_name("no markup"), "");
  fs::remove_all(dir);
}

struct Refused {
  const char* name;
  std::string body;
  const char* must_say;
  int line;  // of the offending element in l3v2(body), 0: any
};

void PrintTo(const Refused& r, std::ostream* os) { *os << r.name; }

class SbmlRefuses : public ::testing::TestWithParam<Refused> {};

const std::string kState = "<listOfParameters><parameter id=\"V\" value=\"1\" constant=\"false\"/>"
                           "<parameter id=\"k\" value=\"1\" constant=\"true\"/></listOfParameters>\n";

std::string rate(const std::string& rhs) {
  return "<listOfRules><rateRule variable=\"V\">" + std::string(kMath) + rhs + "</math></rateRule></listOfRules>";
}

TEST_P(SbmlRefuses, WithALocatedMessageNamingTheConstruct) {
  if (!sbml_reader_available()) GTEST_SKIP() << "built without libSBML";
  const auto d = parse_error(l3v2(GetParam().body));
  EXPECT_NE(d.message.find(GetParam().must_say), std::string::npos) << d.message;
  EXPECT_EQ(d.loc.file, "snippet.sbml");
  if (GetParam().line) EXPECT_EQ(d.loc.line, GetParam().line) << d.message;
  else EXPECT_GT(d.loc.line, 0) << d.message;
}

INSTANTIATE_TEST_SUITE_P(
    Constructs, SbmlRefuses,
    ::testing::Values(
        Refused{"event", kState + "<listOfEvents>\n<event id=\"kick\" useValuesFromTriggerTime=\"true\"><trigger initialValue=\"true\" persistent=\"true\">" +
                             std::string(kMath) + "<true/></math></trigger></event></listOfEvents>",
                "<event id='kick'>", 6},
        Refused{"delay", kState + rate("<apply><csymbol encoding=\"text\" definitionURL=\"http://www.sbml.org/sbml/symbols/delay\">delay</csymbol><ci>V</ci><cn>1</cn></apply>"),
                "delay", 5},
        Refused{"algebraic_rule", kState + "<listOfRules><algebraicRule>" + std::string(kMath) + "<ci>V</ci></math></algebraicRule></listOfRules>",
                "algebraicRule", 5},
        Refused{"rate_of", kState + rate("<apply><csymbol encoding=\"text\" definitionURL=\"http://www.sbml.org/sbml/symbols/rateOf\">rateOf</csymbol><ci>V</ci></apply>"),
                "rateOf", 5},
        Refused{"factorial", kState + rate("<apply><factorial/><ci>k</ci></apply>"), "factorial", 5},
        Refused{"unknown_name", kState + rate("<ci>nowhere</ci>"), "unknown name 'nowhere'", 5},
        Refused{"no_value", "<listOfParameters><parameter id=\"V\" value=\"1\" constant=\"false\"/>"
                            "<parameter id=\"k\" constant=\"true\"/></listOfParameters>\n" + rate("<ci>k</ci>"),
                "'k'", 5},
        Refused{"state_without_value", "<listOfParameters>\n<parameter id=\"V\" constant=\"false\"/></listOfParameters>" + rate("<cn>1</cn>"),
                "no initial value", 5},
        Refused{"recursive_function", "<listOfFunctionDefinitions><functionDefinition id=\"f\">" + std::string(kMath) +
                                          "<lambda><bvar><ci>x</ci></bvar><apply><ci>f</ci><ci>x</ci></apply></lambda></math></functionDefinition></listOfFunctionDefinitions>\n" +
                                          kState + rate("<apply><ci>f</ci><ci>k</ci></apply>"),
                "function", 0},
        Refused{"constraint", kState + "<listOfConstraints>\n<constraint>" + std::string(kMath) + "<true/></math></constraint></listOfConstraints>",
                "constraint", 6},
        Refused{"doctype", "<!DOCTYPE x [<!ENTITY e \"boom\">]>", "DOCTYPE", 0}),
    [](const auto& info) { return std::string(info.param.name); });

TEST_F(Sbml, MalformedDocumentsAreLocatedErrors) {
  EXPECT_GT(parse_error("<sbml xmlns=\"http://www.sbml.org/sbml/level3/version2/core\" level=\"3\" version=\"2\"><model").loc.line, 0);
  EXPECT_NE(parse_error("").message.find("SBML"), std::string::npos);
  EXPECT_NE(parse_error("<sbml xmlns=\"http://www.sbml.org/sbml/level3/version2/core\" level=\"3\" version=\"2\"/>").message.find("model"),
            std::string::npos);
}
