// Tests of the .hwm parser and writer: the language's constructs, exact round trips
// through write_hwm, located errors, and robustness on hostile input.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "core/error.hpp"
#include "model/frontend/hwm/hwm.hpp"
#include "model/ir/print.hpp"
#include "test_hwm_support.hpp"

using namespace hw::model;
using hw::InputError;

namespace {

Model parse(const std::string& text) { return parse_hwm(text, "test.hwm"); }

// The message of the InputError that parsing `text` throws ("" if none is thrown).
std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(HwmParse, SmallModel) {
  Model m = parse(R"(# a comment
model demo
citation "Someone 2024"
time t [ms]
param Cm = 1 [uF/cm^2]  @membrane_capacitance   # capacitance
param g = 23
state V = -84.5 [mV]  @membrane_voltage
state m = 0.5
alpha = 0.32*(V + 47.13)/(1 - exp(-0.1*(V + 47.13)))
d/dt m = alpha*(1 - m) - beta*m
beta = 0.08*exp(-V/11)          # defined after its use
d/dt V = -(g*m^3*(V - 50))/Cm
)");
  EXPECT_EQ(m.name, "demo");
  EXPECT_EQ(m.citation, "Someone 2024");
  EXPECT_EQ(m.time.name, "t");
  EXPECT_EQ(m.time.units_name, "ms");
  ASSERT_EQ(m.states.size(), 2u);
  EXPECT_EQ(m.states[0].name, "V");
  EXPECT_EQ(m.states[0].initial, -84.5);
  EXPECT_EQ(m.states[0].ontology, "membrane_voltage");
  EXPECT_EQ(m.states[0].units_name, "mV");
  ASSERT_TRUE(m.states[0].units.has_value());
  ASSERT_EQ(m.parameters.size(), 2u);
  EXPECT_EQ(m.parameters[0].description, "capacitance");
  EXPECT_EQ(m.parameters[0].ontology, "membrane_capacitance");
  ASSERT_EQ(m.algebraics.size(), 2u);
  EXPECT_EQ(m.algebraics[1].name, "beta");
  EXPECT_EQ(m.algebraics[1].description, "defined after its use");
  ASSERT_EQ(m.derivatives.size(), 2u);
  EXPECT_EQ(to_infix(m, m.derivatives[1]), "((alpha * (1 - m)) - (beta * m))");
  EXPECT_EQ(to_infix(m, m.derivatives[0]), "((-((g * pow(m, 3)) * (V - 50))) / Cm)");
}

TEST(HwmParse, PrecedenceAndAssociativity) {
  Model m = parse(R"(
state x = 1
a1 = 1 - 2 - 3
a2 = 2^3^2
a3 = -2^2
a4 = -3*x
a5 = 2^-x
a6 = not x < 1 and x > 0 or x == 2 xor x != 3
a7 = if x > 0 then 1 else if x < -1 then 2 else 3
a8 = piecewise(x < 0, -1, x > 0, 1)
a9 = piecewise(x < 0, -1, 0)
a10 = pi + e
a11 = a/b/c
a = 1
b = 2
c = 3
d/dt x = -(3) + -x
)");
  auto infix = [&](const char* name) { return to_infix(m, m.algebraics[*m.find_algebraic(name)].expr); };
  EXPECT_EQ(infix("a1"), "((1 - 2) - 3)");
  EXPECT_EQ(infix("a2"), "pow(2, pow(3, 2))");
  EXPECT_EQ(infix("a3"), "(-pow(2, 2))");
  EXPECT_EQ(infix("a4"), "(-3 * x)");  // the constant -3, not a negation
  EXPECT_EQ(infix("a5"), "pow(2, (-x))");
  EXPECT_EQ(infix("a6"),
            "(((!(x < 1)) && (x > 0)) || ((x == 2) xor (x != 3)))");
  EXPECT_EQ(infix("a7"), "select((x > 0), 1, select((x < -1), 2, 3))");
  EXPECT_EQ(infix("a8"), "piecewise((x < 0), -1, (x > 0), 1, nan)");
  EXPECT_EQ(infix("a9"), "piecewise((x < 0), -1, 0)");
  EXPECT_EQ(infix("a10"), "(3.1415926535897931 + 2.7182818284590451)");
  EXPECT_EQ(infix("a11"), "((a / b) / c)");
  EXPECT_EQ(to_infix(m, m.derivatives[0]), "((-3) + (-x))");
}

TEST(HwmParse, ConstantsAreShadowedByDeclarations) {
  Model m = parse("param e = 5\nstate x = 0\nd/dt x = e*pi\n");
  EXPECT_EQ(to_infix(m, m.derivatives[0]), "(e * 3.1415926535897931)");
}

TEST(HwmParse, KeywordsAreContextual) {
  // CellML models name variables "time", "state", ...: they must stay usable.
  Model m = parse("time time [ms]\nparam state = 2\nparam = 3\nstate model = 1\n"
                  "d/dt model = -state*model*param + time\n");
  EXPECT_EQ(m.time.name, "time");
  EXPECT_EQ(m.parameters[0].name, "state");
  EXPECT_EQ(m.algebraics[0].name, "param");
  EXPECT_EQ(m.states[0].name, "model");
  EXPECT_EQ(to_infix(m, m.derivatives[0]), "((((-state) * model) * param) + time)");
}

TEST(HwmParse, ContinuationLines) {
  Model m = parse("state x = 1\nd/dt x = 1 +\n    2*(x\n  - 3)\n");
  EXPECT_EQ(to_infix(m, m.derivatives[0]), "(1 + (2 * (x - 3)))");
}

TEST(HwmParse, DefaultsWithoutHeader) {
  Model m = parse_hwm("state x = 1\nd/dt x = -x + t\n", "/some/dir/my-model.hwm");
  EXPECT_EQ(m.name, "my_model");
  EXPECT_EQ(m.time.name, "t");
}

// ---- round trips -------------------------------------------------------------------------

TEST(HwmRoundTrip, TextRoundTripsExactly) {
  const char* text = R"(model rt
citation "A \"quoted\" citation"
description "multi\nline"
time t [ms]
param p = 0.1 [mV]  @membrane_stimulus_current_amplitude  # a description
param q = -1e-300
param big = 1.7976931348623157e308
state x = -0  @membrane_voltage
state y = 0.33333333333333331
a1 = x - (y - p)
a2 = (x - y) - p
a3 = x/(y*p)
a4 = (x^y)^p + x^y^p + (-2)^x + 2^-3 + -(3) + -(-3) + -x^2
a5 = not (x < y) and (x > y or y == p) xor not not (x != 1)
a6 = if x > 0 then (if y > 0 then 1 else 2) else if y < 0 then 3 else 4
a7 = piecewise(x < 0, 1, y < 0, 2) + piecewise(x < 1, 2, 3)*max(x, min(y, rem(x, 2)))
a8 = (x < y) * (if x > 0 then 1 else 0) + 3*(x + y)
a9 = exp(log(log10(sqrt(abs(floor(ceil(sin(cos(tan(asin(acos(atan(x)))))))))))))
a10 = sinh(cosh(tanh(asinh(acosh(atanh(x)))))) + pow(x, y) + ln(y)
d/dt x = a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10
d/dt y = -y
)";
  Model m1 = parse(text);
  std::string written = write_hwm(m1);
  Model m2 = parse_hwm(written, "written.hwm");
  hwm_test::expect_same_model(m1, m2);
  EXPECT_EQ(m2.parameters[0].description, "a description");
  EXPECT_EQ(m2.citation, "A \"quoted\" citation");
  EXPECT_EQ(m2.documentation, "multi\nline");
  EXPECT_TRUE(std::signbit(m2.states[0].initial));
  // Writing again gives the same text: the writer is a fixed point.
  EXPECT_EQ(write_hwm(m2), written);
}

TEST(HwmRoundTrip, UndeclaredTimeYieldsItsNameToAParameterCalledT) {
  // Found by fuzz_hwm: a model that declares no time but a parameter t was written with
  // "time t" and the parameter, which then no longer parsed. Time takes the first free name.
  Model m1 = parse("state x = 1\nparam t = 2\nparam t_1 = 3\nd/dt x = -t * t_1 * x\n");
  EXPECT_EQ(m1.time.name, "t_2");
  const std::string written = write_hwm(m1);
  EXPECT_NE(written.find("time t_2"), std::string::npos) << written;
  Model m2 = parse_hwm(written, "written.hwm");
  hwm_test::expect_same_model(m1, m2);
  EXPECT_EQ(m2.time.name, "t_2");
}

TEST(HwmRoundTrip, BuiltTreesRoundTrip) {
  // Trees the parser never builds from natural text, as passes and the CellML importer
  // may: negated literals, negative literals as bases, NaN and infinite constants.
  Model m;
  m.name = "built";
  m.time.name = "t";
  m.states.push_back({});
  m.states[0].name = "x";
  m.states[0].initial = 2;
  ExprPool& p = m.pool;
  ExprId x = p.state(0);
  auto alg = [&](const std::string& name, ExprId e) {
    Algebraic a;
    a.name = name;
    a.expr = e;
    a.synthetic = true;
    m.algebraics.push_back(a);
  };
  alg("n1", p.neg(p.constant(3)));
  alg("n2", p.neg(p.constant(-3)));
  alg("n3", p.pow(p.constant(-2), x));
  alg("n4", p.mul(x, p.constant(-0.5)));
  alg("n5", p.sub(x, p.constant(-1)));
  alg("n6", p.add(p.neg(x), p.neg(p.neg(x))));
  alg("n7", p.make(Op::piecewise, {p.make(Op::lt, {x, p.constant(0)}), p.constant(1),
                                   p.constant(std::numeric_limits<double>::quiet_NaN())}));
  alg("n8", p.make(Op::logical_not, {p.make(Op::logical_not, {x})}));
  alg("n9", p.pow(x, p.pow(x, x)));
  alg("n10", p.pow(p.pow(x, x), x));
  alg("n11", p.pow(x, p.neg(x)));
  alg("n12", p.select(p.select(x, x, x), p.select(x, x, x), p.select(x, x, x)));
  alg("n13", p.make(Op::lt, {p.make(Op::lt, {x, x}), x}));
  alg("n14", p.neg(p.pow(p.constant(2), x)));
  alg("n15", p.pow(p.neg(x), p.constant(2)));
  m.derivatives.push_back(p.algebraic(0));
  Model back = parse_hwm(write_hwm(m), "built.hwm");
  hwm_test::expect_same_model(m, back);
}

TEST(HwmRoundTrip, LongLinesAreWrapped) {
  std::string text = "state x = 1\nd/dt x = ";
  for (int i = 0; i < 60; ++i) text += (i ? " + " : "") + std::string("0.123456789*x^") + std::to_string(i);
  text += "\nlong = piecewise(";
  for (int i = 0; i < 30; ++i) text += "x < " + std::to_string(i) + ", " + std::to_string(i * 1.5) + ", ";
  text += "0)\n";
  Model m1 = parse(text);
  std::string written = write_hwm(m1);
  std::size_t start = 0, longest = 0;
  while (start < written.size()) {
    std::size_t end = written.find('\n', start);
    if (end == std::string::npos) end = written.size();
    longest = std::max(longest, end - start);
    start = end + 1;
  }
  EXPECT_LE(longest, 100u) << written;
  hwm_test::expect_same_model(m1, parse_hwm(written, "w.hwm"));
}

TEST(HwmWrite, RefusesNamesTheLanguageCannotHold) {
  Model m = parse("state x = 1\nd/dt x = -x\n");
  m.states[0].name = "and";
  EXPECT_THROW(write_hwm(m), hw::Error);
  m.states[0].name = "x y";
  EXPECT_THROW(write_hwm(m), hw::Error);
}

// ---- errors ------------------------------------------------------------------------------

struct ErrorCase {
  const char* text;
  const char* where;  // "test.hwm:line:col"
  const char* what;   // a piece of the message
};

class HwmErrors : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(HwmErrors, LocatedMessage) {
  const ErrorCase& c = GetParam();
  std::string msg = error_of(c.text);
  ASSERT_FALSE(msg.empty()) << "no error for:\n" << c.text;
  EXPECT_NE(msg.find(std::string(c.where) + ":"), std::string::npos) << msg;
  EXPECT_NE(msg.find(c.what), std::string::npos) << msg;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, HwmErrors,
    ::testing::Values(
        ErrorCase{"state x = 1\nd/dt x = y\n", "test.hwm:2:10", "undefined name 'y'"},
        ErrorCase{"state volt = 1\nd/dt volt = -vlot\n", "test.hwm:2:14", "did you mean 'volt'"},
        ErrorCase{"state x\nd/dt x = 1\n", "test.hwm:1:8", "has no initial value"},
        ErrorCase{"state x = 1\n", "test.hwm:1:7", "has no equation"},
        ErrorCase{"param p = 1\nd/dt p = 1\n", "test.hwm:2:1", "which is a param"},
        ErrorCase{"state x = 1\nd/dt z = 1\nd/dt x = 1\n", "test.hwm:2:1", "not defined"},
        ErrorCase{"state x = 1\nd/dt x = 1\nd/dt x = 2\n", "test.hwm:3:1", "second equation"},
        ErrorCase{"state x = 1\nparam x = 2\nd/dt x = 1\n", "test.hwm:2:7", "already defined"},
        ErrorCase{"state x = 1\nx = 2\nd/dt x = 1\n", "test.hwm:2:1", "already defined"},
        ErrorCase{"state x = 1e999\nd/dt x = 1\n", "test.hwm:1:11", "too large"},
        ErrorCase{"state x = 1\nd/dt x = 2e400*x\n", "test.hwm:2:10", "too large"},
        ErrorCase{"state x = nan\nd/dt x = 1\n", "test.hwm:1:11", "not a number"},
        ErrorCase{"state x = 1\nd/dt x = NaN\n", "test.hwm:2:10", "not a number literal"},
        ErrorCase{"state x = 1\nd/dt x = (1 + 2\n", "test.hwm:3:1", "expected ')'"},
        ErrorCase{"state x = 1\nd/dt x = 1 +* 2\n", "test.hwm:2:13", "expected an expression"},
        ErrorCase{"state x = 1\nd/dt x = foo(x)\n", "test.hwm:2:10", "unknown function 'foo'"},
        ErrorCase{"state x = 1\nd/dt x = expp(x)\n", "test.hwm:2:10", "did you mean 'exp'"},
        ErrorCase{"state x = 1\nd/dt x = exp(x, 1)\n", "test.hwm:2:10", "exp takes 1 argument"},
        ErrorCase{"state x = 1\nd/dt x = exp\n", "test.hwm:2:10", "is a function"},
        ErrorCase{"state x = 1\nd/dt x = piecewise(x)\n", "test.hwm:2:10", "piecewise needs"},
        ErrorCase{"state x = 1\nd/dt x = 1 < x < 2\n", "test.hwm:2:16", "chained comparison"},
        ErrorCase{"state x = 1\nd/dt x = x $ 1\n", "test.hwm:2:12", "unexpected character"},
        ErrorCase{"state x = 1\nd/dt x = x && x\n", "test.hwm:2:12", "use 'and'"},
        ErrorCase{"state x = 1\nd/dt x = x ** 2\n", "test.hwm:2:12", "a^b"},
        ErrorCase{"state x = 1 [furlong]\nd/dt x = 1\n", "test.hwm:1:13", "unknown units"},
        ErrorCase{"state x = 1 [mV\nd/dt x = 1\n", "test.hwm:1:13", "unclosed '['"},
        ErrorCase{"citation \"abc\nstate x = 1\nd/dt x = 1\n", "test.hwm:1:10", "unterminated string"},
        ErrorCase{"model a\nmodel b\n", "test.hwm:2:1", "given twice"},
        ErrorCase{"state x = 1 junk\nd/dt x = 1\n", "test.hwm:1:13", "expected end of line"},
        ErrorCase{"state x = 1\nd/dt x = 1.2.3\n", "test.hwm:2:10", "malformed number"},
        ErrorCase{"state and = 1\n", "test.hwm:1:7", "reserved word"},
        ErrorCase{"state x = 1\nd/dt x = 2*if x then 1 else 2\n", "test.hwm:2:12", "parentheses"},
        ErrorCase{"state x = 1\nd/dt x = if x then 1\n", "test.hwm:2:21", "expected 'else'"},
        ErrorCase{"param p = 2*3\nstate x = 1\nd/dt x = 1\n", "test.hwm:1:12", "expected end of line"},
        ErrorCase{"param p = q\nstate x = 1\nd/dt x = 1\n", "test.hwm:1:11", "must be a number"},
        ErrorCase{"x y = 1\n", "test.hwm:1:3", "expected '='"},
        ErrorCase{"42\n", "test.hwm:1:1", "expected a statement"},
        ErrorCase{"state x = 1 @\nd/dt x = 1\n", "test.hwm:1:13", "metadata term"},
        ErrorCase{"state x = 1 @a @b\nd/dt x = 1\n", "test.hwm:1:16", "one @annotation"}));

TEST(HwmErrors, ReportsSeveralProblemsAtOnce) {
  std::string msg = error_of("state x = 1\nd/dt x = 1 +* 2\nq = )\n");
  EXPECT_NE(msg.find("test.hwm:2:13"), std::string::npos) << msg;
  EXPECT_NE(msg.find("test.hwm:3:5"), std::string::npos) << msg;
}

TEST(HwmErrors, UnreadableFile) {
  EXPECT_THROW(load_hwm("/nonexistent/dir/model.hwm"), InputError);
}

// ---- robustness --------------------------------------------------------------------------

TEST(HwmRobustness, DeepNestingIsAnErrorNotACrash) {
  for (const char* open : {"(", "-", "exp(", "not ", "2^"}) {
    std::string text = "state x = 1\nd/dt x = ";
    for (int i = 0; i < 100000; ++i) text += open;
    text += "x\n";
    std::string msg = error_of(text);
    EXPECT_NE(msg.find("nested too deeply"), std::string::npos) << open << ": " << msg.substr(0, 200);
  }
  // 200 levels are fine.
  std::string text = "state x = 1\nd/dt x = ";
  for (int i = 0; i < 200; ++i) text += "(";
  text += "x";
  for (int i = 0; i < 200; ++i) text += ")";
  EXPECT_NO_THROW(parse(text + "\n"));
}

TEST(HwmRobustness, LongChainsParse) {
  std::string text = "state x = 1\nd/dt x = x";
  for (int i = 0; i < 20000; ++i) text += "+x";
  EXPECT_NO_THROW(parse(text + "\n"));
}

TEST(HwmRobustness, RandomInputNeverCrashes) {
  // Mutations of a valid model: every outcome is a Model or an InputError.
  const std::string base = "model m\ntime t [ms]\nparam a = 1.5 [mV] @x\nstate V = -80 [mV]\n"
                           "i = piecewise(t < 1 and V > a, -2, 0)\nd/dt V = -(V - a)*exp(-V/10) + i\n";
  const std::string alphabet = "()[]@#\"=+-*/^<>!,.eE019 \n\tabdtVxpiecwsf";
  std::mt19937 rng(12345);
  for (int iter = 0; iter < 3000; ++iter) {
    std::string s = base;
    int edits = 1 + static_cast<int>(rng() % 8);
    for (int k = 0; k < edits; ++k) {
      std::size_t pos = rng() % (s.size() + 1);
      switch (rng() % 3) {
        case 0: s.insert(pos, 1, alphabet[rng() % alphabet.size()]); break;
        case 1: if (pos < s.size()) s.erase(pos, 1); break;
        default: if (pos < s.size()) s[pos] = static_cast<char>(rng() % 256); break;
      }
    }
    try {
      Model m = parse(s);
      Model again = parse_hwm(write_hwm(m), "again.hwm");
      hwm_test::expect_same_model(m, again);
    } catch (const InputError&) {
    }
  }
}
