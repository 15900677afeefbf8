// CellML front end on small hand-written snippets: flattening, unit conversion across
// connections, MathML coverage, imports, and every error path giving a located message.
#include <gtest/gtest.h>

#include <string>

#include "model/frontend/cellml/cellml.hpp"
#include "test_cellml_eval.hpp"

using namespace hw::model;
using hw::model::testing::TinyEval;

namespace {

const std::string kData = std::string(HW_TEST_DATA_DIR) + "/data/cellml";

std::string wrap(const std::string& body, const std::string& version = "1.0") {
  return "<?xml version=\"1.0\"?>\n<model name=\"snippet\" xmlns=\"http://www.cellml.org/cellml/" +
         version + "#\" xmlns:cellml=\"http://www.cellml.org/cellml/" + version +
         "#\" xmlns:cmeta=\"http://www.cellml.org/metadata/1.0#\">\n"
         "<units name=\"ms\"><unit units=\"second\" prefix=\"milli\"/></units>\n"
         "<units name=\"mV\"><unit units=\"volt\" prefix=\"milli\"/></units>\n"
         "<units name=\"per_ms\"><unit units=\"ms\" exponent=\"-1\"/></units>\n" +
         body + "\n</model>\n";
}

const char* kMath = "<math xmlns=\"http://www.w3.org/1998/Math/MathML\">";

// A component with time and one ODE dy/dt = rhs (MathML), plus extra variables/equations.
std::string ode_component(const std::string& vars, const std::string& rhs,
                          const std::string& extra_eqs = "") {
  return "<component name=\"c\">\n<variable name=\"t\" units=\"ms\"/>\n"
         "<variable name=\"y\" units=\"dimensionless\" initial_value=\"2\"/>\n" +
         vars + std::string(kMath) +
         "<apply><eq/><apply><diff/><bvar><ci>t</ci></bvar><ci>y</ci></apply>" + rhs +
         "</apply>" + extra_eqs + "</math></component>";
}

// Parses and returns the first diagnostic (fails the test if parsing succeeds).
hw::Diagnostic parse_error(const std::string& xml, const std::string& base = "") {
  try {
    parse_cellml(xml, "snippet.cellml", base);
  } catch (const hw::InputError& e) {
    EXPECT_FALSE(e.diagnostics().empty());
    return e.diagnostics().front();
  }
  ADD_FAILURE() << "expected an InputError";
  return {};
}

double alg(const Model& m, const std::string& name) {
  auto i = m.find_algebraic(name);
  EXPECT_TRUE(i) << name;
  TinyEval ev(m, hw::model::testing::initial_state(m), 0.0);
  return i ? ev.algebraic(*i) : 0.0;
}

}  // namespace

TEST(CellmlParse, StateParameterAlgebraicAndTime) {
  Model m = parse_cellml(wrap(ode_component(
                "<variable name=\"k\" units=\"per_ms\" initial_value=\"0.5\"/>"
                "<variable name=\"r\" units=\"per_ms\"/>",
                "<apply><times/><apply><minus/><ci>r</ci></apply><ci>y</ci></apply>",
                "<apply><eq/><ci>r</ci><apply><times/><cn cellml:units=\"dimensionless\">2</cn>"
                "<ci>k</ci></apply></apply>")),
                         "snippet.cellml");
  EXPECT_EQ(m.name, "snippet");
  ASSERT_EQ(m.states.size(), 1u);
  EXPECT_EQ(m.states[0].name, "y");
  EXPECT_DOUBLE_EQ(m.states[0].initial, 2.0);
  EXPECT_EQ(m.states[0].component, "c");
  EXPECT_GT(m.states[0].loc.line, 0);
  ASSERT_EQ(m.parameters.size(), 1u);
  EXPECT_DOUBLE_EQ(m.parameters[0].value, 0.5);
  EXPECT_EQ(m.time.name, "t");
  EXPECT_NEAR(m.time.units->factor, 1e-3, 1e-15);
  TinyEval ev(m, {2.0}, 0.0);
  EXPECT_DOUBLE_EQ(ev.derivative(0), -2.0);  // -(2*0.5)*2
}

TEST(CellmlParse, MathmlCoverage) {
  auto eq = [](const char* name, const std::string& expr) {
    return std::string("<apply><eq/><ci>") + name + "</ci>" + expr + "</apply>";
  };
  std::string vars;
  for (const char* n : {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "n", "o"})
    vars += std::string("<variable name=\"") + n + "\" units=\"dimensionless\"/>";
  std::string eqs =
      eq("a", "<apply><root/><degree><cn cellml:units=\"dimensionless\">3</cn></degree>"
              "<cn cellml:units=\"dimensionless\">27</cn></apply>") +
      eq("b", "<apply><log/><logbase><cn cellml:units=\"dimensionless\">2</cn></logbase>"
              "<cn cellml:units=\"dimensionless\">8</cn></apply>") +
      eq("c", "<piecewise><piece><cn cellml:units=\"dimensionless\">1</cn><apply><lt/><ci>y</ci>"
              "<cn cellml:units=\"dimensionless\">0</cn></apply></piece><otherwise>"
              "<cn cellml:units=\"dimensionless\">7</cn></otherwise></piecewise>") +
      eq("d", "<cn cellml:units=\"dimensionless\" type=\"e-notation\">1.5<sep/>-3</cn>") +
      eq("e", "<apply><plus/><cn cellml:units=\"dimensionless\">1</cn><cn cellml:units="
              "\"dimensionless\">2</cn><cn cellml:units=\"dimensionless\">3</cn></apply>") +
      eq("f", "<apply><sec/><cn cellml:units=\"dimensionless\">0</cn></apply>") +
      eq("g", "<apply><arccot/><cn cellml:units=\"dimensionless\">1</cn></apply>") +
      eq("h", "<apply><rem/><cn cellml:units=\"dimensionless\">7</cn><cn cellml:units="
              "\"dimensionless\">4</cn></apply>") +
      eq("i", "<apply><max/><cn cellml:units=\"dimensionless\">1</cn><cn cellml:units="
              "\"dimensionless\">5</cn><cn cellml:units=\"dimensionless\">3</cn></apply>") +
      eq("j", "<apply><root/><cn cellml:units=\"dimensionless\">16</cn></apply>") +
      eq("k", "<apply><ln/><exponentiale/></apply>") +
      eq("l", "<apply><and/><true/><apply><leq/><pi/><cn cellml:units=\"dimensionless\">4</cn>"
              "</apply><apply><not/><false/></apply></apply>") +
      eq("n", "<apply><log/><cn cellml:units=\"dimensionless\">1000</cn></apply>") +
      eq("o", "<apply><ceiling/><apply><arcsinh/><cn cellml:units=\"dimensionless\">0.5</cn>"
              "</apply></apply>");
  Model m = parse_cellml(wrap(ode_component(vars, "<cn cellml:units=\"per_ms\">0</cn>", eqs)),
                         "snippet.cellml");
  EXPECT_NEAR(alg(m, "a"), 3.0, 1e-12);
  EXPECT_NEAR(alg(m, "b"), 3.0, 1e-12);
  EXPECT_DOUBLE_EQ(alg(m, "c"), 7.0);
  EXPECT_DOUBLE_EQ(alg(m, "d"), 1.5e-3);
  EXPECT_DOUBLE_EQ(alg(m, "e"), 6.0);
  EXPECT_DOUBLE_EQ(alg(m, "f"), 1.0);
  EXPECT_NEAR(alg(m, "g"), std::atan(1.0), 1e-15);
  EXPECT_DOUBLE_EQ(alg(m, "h"), 3.0);
  EXPECT_DOUBLE_EQ(alg(m, "i"), 5.0);
  EXPECT_DOUBLE_EQ(alg(m, "j"), 4.0);
  EXPECT_DOUBLE_EQ(alg(m, "k"), 1.0);
  EXPECT_DOUBLE_EQ(alg(m, "l"), 1.0);
  EXPECT_NEAR(alg(m, "n"), 3.0, 1e-12);
  EXPECT_DOUBLE_EQ(alg(m, "o"), 1.0);
  // n-ary plus folds to binary adds.
  const Node& e = m.pool.node(m.algebraics[*m.find_algebraic("e")].expr);
  EXPECT_EQ(e.op, Op::add);
  EXPECT_EQ(e.args.size(), 2u);
}

TEST(CellmlParse, ConnectionWithScaleConversion) {
  // V in mV (membrane) is seen in volts by the channel; i = V there.
  std::string body = R"(
<component name="membrane">
  <variable name="t" units="ms" public_interface="out"/>
  <variable name="V" units="mV" initial_value="-80" public_interface="out"/>
  <variable name="i" units="volt" public_interface="in"/>
  <math xmlns="http://www.w3.org/1998/Math/MathML"><apply><eq/>
    <apply><diff/><bvar><ci>t</ci></bvar><ci>V</ci></apply>
    <apply><minus/><ci>i</ci></apply></apply></math>
</component>
<component name="channel">
  <variable name="V" units="volt" public_interface="in"/>
  <variable name="i" units="volt" public_interface="out"/>
  <math xmlns="http://www.w3.org/1998/Math/MathML"><apply><eq/><ci>i</ci><ci>V</ci></apply></math>
</component>
<connection><map_components component_1="membrane" component_2="channel"/>
  <map_variables variable_1="V" variable_2="V"/><map_variables variable_1="i" variable_2="i"/>
</connection>)";
  Model m = parse_cellml(wrap(body), "snippet.cellml");
  ASSERT_EQ(m.states.size(), 1u);
  EXPECT_EQ(m.states[0].name, "V");
  // The channel's V (volts) became an algebraic named channel__V.
  EXPECT_NEAR(alg(m, "channel__V"), -0.08, 1e-15);
  EXPECT_NEAR(alg(m, "i"), -0.08, 1e-15);
}

TEST(CellmlParse, ConnectionWithOffsetConversion) {
  std::string body = R"(
<component name="a">
  <variable name="T" units="celsius" initial_value="37" public_interface="out"/>
</component>
<component name="b">
  <variable name="T" units="kelvin" public_interface="in"/>
  <variable name="x" units="kelvin"/>
  <math xmlns="http://www.w3.org/1998/Math/MathML"><apply><eq/><ci>x</ci><ci>T</ci></apply></math>
</component>
<connection><map_components component_1="a" component_2="b"/>
  <map_variables variable_1="T" variable_2="T"/></connection>)";
  Model m = parse_cellml(wrap(body), "snippet.cellml");
  EXPECT_NEAR(alg(m, "x"), 310.15, 1e-9);
}

TEST(CellmlParse, TimeInDifferentUnitsScalesTheDerivative) {
  // The ODE is written per second; the model's time is in ms: dy/dt_ms = dy/dt_s / 1000.
  std::string body = R"(
<component name="env"><variable name="time" units="ms" public_interface="out"/></component>
<component name="c">
  <variable name="t" units="second" public_interface="in"/>
  <variable name="y" units="dimensionless" initial_value="1"/>
  <math xmlns="http://www.w3.org/1998/Math/MathML"><apply><eq/>
    <apply><diff/><bvar><ci>t</ci></bvar><ci>y</ci></apply>
    <cn cellml:units="dimensionless">3</cn></apply></math>
</component>
<connection><map_components component_1="env" component_2="c"/>
  <map_variables variable_1="time" variable_2="t"/></connection>)";
  Model m = parse_cellml(wrap(body), "snippet.cellml");
  EXPECT_EQ(m.time.name, "time");
  TinyEval ev(m, {1.0}, 0.0);
  EXPECT_NEAR(ev.derivative(0), 3e-3, 1e-15);
}

TEST(CellmlParse, InitialValueNamingAVariable) {
  Model m = parse_cellml(
      wrap(ode_component("<variable name=\"y0\" units=\"dimensionless\" initial_value=\"4\"/>"
                         "<variable name=\"z\" units=\"dimensionless\" initial_value=\"y0\"/>",
                         "<ci>z</ci>"),
           "1.1"),
      "snippet.cellml");
  EXPECT_DOUBLE_EQ(m.parameters[*m.find_parameter("z")].value, 4.0);
}

TEST(CellmlParse, DerivativeOnRightHandSideIsInlined) {
  Model m = parse_cellml(
      wrap(ode_component("<variable name=\"w\" units=\"dimensionless\"/>",
                         "<cn cellml:units=\"per_ms\">5</cn>",
                         "<apply><eq/><ci>w</ci><apply><times/><cn cellml:units=\"ms\">2</cn>"
                         "<apply><diff/><bvar><ci>t</ci></bvar><ci>y</ci></apply></apply>"
                         "</apply>")),
      "snippet.cellml");
  EXPECT_DOUBLE_EQ(alg(m, "w"), 10.0);
}

TEST(CellmlParse, DuplicateNamesGetComponentPrefix) {
  std::string body = R"(
<component name="p"><variable name="g" units="dimensionless" initial_value="1"/></component>
<component name="q"><variable name="g" units="dimensionless" initial_value="2"/></component>)";
  Model m = parse_cellml(wrap(body), "snippet.cellml");
  EXPECT_TRUE(m.find_parameter("p__g"));
  EXPECT_TRUE(m.find_parameter("q__g"));
}

TEST(CellmlParse, Cellml20Namespace) {
  std::string body = R"(
<component name="c">
  <variable name="t" units="ms" interface="public_and_private"/>
  <variable name="y" units="dimensionless" initial_value="1"/>
  <math xmlns="http://www.w3.org/1998/Math/MathML" xmlns:cellml="http://www.cellml.org/cellml/2.0#">
  <apply><eq/><apply><diff/><bvar><ci>t</ci></bvar><ci>y</ci></apply>
  <cn cellml:units="per_ms">1</cn></apply></math>
</component>)";
  Model m = parse_cellml(wrap(body, "2.0"), "snippet.cellml");
  EXPECT_EQ(m.states.size(), 1u);
}

TEST(CellmlParse, OxmetaAnnotationFillsOntology) {
  std::string body = R"(
<component name="c">
  <variable name="t" units="ms"/>
  <variable name="Vx" cmeta:id="vid" units="mV" initial_value="-80"/>
  <math xmlns="http://www.w3.org/1998/Math/MathML"><apply><eq/>
    <apply><diff/><bvar><ci>t</ci></bvar><ci>Vx</ci></apply><cn cellml:units="mV">0</cn></apply></math>
</component>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
  <rdf:Description rdf:about="#vid"><bqbiol:is xmlns:bqbiol="http://biomodels.net/biology-qualifiers/"
    rdf:resource="https://chaste.comlab.ox.ac.uk/cellml/ns/oxford-metadata#membrane_voltage"/>
  </rdf:Description></rdf:RDF>)";
  Model m = parse_cellml(wrap(body), "snippet.cellml");
  EXPECT_EQ(m.states[0].ontology, "membrane_voltage");
  ASSERT_TRUE(m.roles.voltage_state);
  EXPECT_EQ(*m.roles.voltage_state, 0u);
}

// --- imports ---------------------------------------------------------------------------

TEST(CellmlImport, LocalImportOfComponentAndUnits) {
  Model m = load_cellml(kData + "/import_main.cellml");
  ASSERT_EQ(m.states.size(), 1u);
  EXPECT_EQ(m.states[0].name, "y");
  EXPECT_EQ(m.states[0].component, "gate");
  EXPECT_EQ(m.time.name, "time");
  TinyEval ev(m, {1.0}, 0.0);
  EXPECT_DOUBLE_EQ(ev.derivative(0), -0.5);
}

TEST(CellmlImport, CycleIsRejected) {
  try {
    load_cellml(kData + "/cycle_a.cellml");
    FAIL() << "expected an InputError";
  } catch (const hw::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("import cycle"), std::string::npos) << e.what();
    EXPECT_GT(e.diagnostics().front().loc.line, 0);
  }
}

TEST(CellmlImport, UrlAndEscapingAndUnbasedImportsAreRejected) {
  for (const char* f : {"/url_import.cellml", "/escape_import.cellml"}) {
    try {
      load_cellml(kData + f);
      FAIL() << f;
    } catch (const hw::InputError& e) {
      EXPECT_NE(std::string(e.what()).find("rejected"), std::string::npos) << e.what();
      EXPECT_GT(e.diagnostics().front().loc.line, 0);
    }
  }
  std::string xml = R"(<model name="m" xmlns="http://www.cellml.org/cellml/1.1#"
     xmlns:xlink="http://www.w3.org/1999/xlink"><import xlink:href="lib.cellml">
     <component name="x" component_ref="x"/></import></model>)";
  auto d = parse_error(xml);
  EXPECT_NE(d.message.find("imports are not allowed"), std::string::npos);
}

// --- error paths: each located -----------------------------------------------------------

struct ErrorCase {
  const char* label;
  std::string xml;
  const char* expect;  // substring of the message
};

TEST(CellmlErrors, EveryErrorIsLocated) {
  std::vector<ErrorCase> cases = {
      {"malformed XML", "<model name=\"x\" xmlns=\"http://www.cellml.org/cellml/1.0#\">\n<component>",
       "malformed XML"},
      {"not CellML", "<?xml version=\"1.0\"?>\n<foo/>", "not a CellML model"},
      {"entity DOCTYPE",
       "<?xml version=\"1.0\"?>\n<!DOCTYPE model [<!ENTITY a \"aaaa\">]>\n"
       "<model xmlns=\"http://www.cellml.org/cellml/1.0#\"/>",
       "entity"},
      {"unknown MathML", wrap(ode_component("", "<apply><foo/><ci>y</ci></apply>")), "<foo>"},
      {"unknown MathML element", wrap(ode_component("", "<bar/>")), "<bar>"},
      {"no value no equation",
       wrap(ode_component("<variable name=\"q\" units=\"dimensionless\"/>", "<ci>q</ci>")),
       "variable q in component c has no initial value or defining equation"},
      {"two definitions",
       wrap(ode_component("<variable name=\"q\" units=\"dimensionless\" initial_value=\"1\"/>",
                          "<ci>q</ci>",
                          "<apply><eq/><ci>q</ci><cn cellml:units=\"dimensionless\">2</cn></apply>")),
       "both an initial_value and a defining equation"},
      {"two equations",
       wrap(ode_component("<variable name=\"q\" units=\"dimensionless\"/>", "<ci>q</ci>",
                          "<apply><eq/><ci>q</ci><cn cellml:units=\"dimensionless\">2</cn></apply>"
                          "<apply><eq/><ci>q</ci><cn cellml:units=\"dimensionless\">3</cn></apply>")),
       "two defining equations"},
      {"state without initial value",
       wrap("<component name=\"c\"><variable name=\"t\" units=\"ms\"/><variable name=\"y\" "
            "units=\"dimensionless\"/>" + std::string(kMath) +
            "<apply><eq/><apply><diff/><bvar><ci>t</ci></bvar><ci>y</ci></apply>"
            "<cn cellml:units=\"per_ms\">1</cn></apply></math></component>"),
       "has no initial_value"},
      {"unknown variable", wrap(ode_component("", "<ci>nope</ci>")), "unknown variable 'nope'"},
      {"expression on lhs",
       wrap(ode_component("", "<ci>y</ci>",
                          "<apply><eq/><apply><plus/><ci>y</ci><ci>y</ci></apply><ci>y</ci></apply>")),
       "left-hand side"},
      {"unknown units",
       wrap("<component name=\"c\"><variable name=\"x\" units=\"furlong\" initial_value=\"1\"/>"
            "</component>"),
       "unknown units 'furlong'"},
      {"bad number", wrap(ode_component("", "<cn cellml:units=\"per_ms\">1.2.3</cn>")),
       "invalid number"},
      {"huge number", wrap(ode_component("", "<cn cellml:units=\"per_ms\">1e999</cn>")),
       "invalid number"},
      {"bad arity", wrap(ode_component("", "<apply><divide/><ci>y</ci></apply>")),
       "two operands"},
      {"incompatible connection",
       wrap("<component name=\"a\"><variable name=\"x\" units=\"mV\" initial_value=\"1\" "
            "public_interface=\"out\"/></component>\n<component name=\"b\"><variable name=\"y\" "
            "units=\"ms\" public_interface=\"in\"/></component>\n<connection>"
            "<map_components component_1=\"a\" component_2=\"b\"/>"
            "<map_variables variable_1=\"x\" variable_2=\"y\"/></connection>"),
       "variable 'x' in component 'a'"},
      {"unknown component in connection",
       wrap("<component name=\"a\"/><connection><map_components component_1=\"a\" "
            "component_2=\"zz\"/></connection>"),
       "unknown component 'zz'"},
      {"connected definitions",
       wrap("<component name=\"a\"><variable name=\"x\" units=\"mV\" initial_value=\"1\" "
            "public_interface=\"out\"/></component>\n<component name=\"b\"><variable name=\"x\" "
            "units=\"mV\" initial_value=\"2\" public_interface=\"in\"/></component>\n<connection>"
            "<map_components component_1=\"a\" component_2=\"b\"/>"
            "<map_variables variable_1=\"x\" variable_2=\"x\"/></connection>"),
       "defined twice"},
      {"duplicate component", wrap("<component name=\"a\"/>\n<component name=\"a\"/>"),
       "defined twice"},
      {"self-referencing units",
       wrap("<units name=\"u\"><unit units=\"u\"/></units><component name=\"c\">"
            "<variable name=\"x\" units=\"u\" initial_value=\"1\"/></component>"),
       "in terms of themselves"},
      {"bad initial value",
       wrap("<component name=\"c\"><variable name=\"x\" units=\"mV\" initial_value=\"abc\"/>"
            "</component>"),
       "neither a number nor a variable"},
      {"piecewise without pieces", wrap(ode_component("", "<piecewise/>")), "empty <piecewise>"},
      {"unknown CellML element", wrap("<reset/>"), "unsupported CellML element"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.label);
    auto d = parse_error(c.xml);
    EXPECT_EQ(d.loc.file, "snippet.cellml");
    EXPECT_GT(d.loc.line, 0) << d.str();
    EXPECT_NE(d.message.find(c.expect), std::string::npos) << d.str();
  }
}

TEST(CellmlErrors, MissingFile) {
  EXPECT_THROW(load_cellml(kData + "/does_not_exist.cellml"), hw::InputError);
}
