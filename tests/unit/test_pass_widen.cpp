// widen_for_float: values a float kernel computes in double, checked through the pass, the
// interpreter and the printed C++ in float.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "model/analysis/roles.hpp"
#include "model/emit/cpp_printer.hpp"
#include "model/emit/interpreter.hpp"
#include "model/frontend/hwm/hwm.hpp"
#include "model/jit/jit.hpp"
#include "model/load.hpp"
#include "model/passes/pipeline.hpp"
#include "test_codegen_support.hpp"

using namespace hw::model;

namespace {

// Decker 2009's L-type calcium chain in miniature: IV_inf rounds to 1 in float at rest, so
// y is 0 there, and the detailed-balance rate delta = k·y*/y is 0/0.
constexpr const char* kCancelling = R"(model cancelling
time t
state V = -87.5  @membrane_voltage
state C = 0.9
state I = 0.1
s = 1/(1 + exp((V + 17.5)/3))
IV_inf = (s + 0.25)/1.25
IV_inf_star = (s + 0.0001)/1.0001
y = (1 - IV_inf)/30
y_star = (1 - IV_inf_star)/30
delta = 0.002*y_star/y
d/dt V = -0.01*(V + 87.5)
d/dt C = 0.001*I - delta*C
d/dt I = delta*C - 0.001*I
)";

Model analysed(const char* text, hw::DiagnosticSink& sink) {
  Model m = parse_hwm(text, "cancelling.hwm");
  detect_roles(m);
  run_pipeline(m, {}, sink);
  return m;
}

bool is_wide(const Model& m, const std::string& name) {
  const auto k = m.find_algebraic(name);
  return k && m.algebraics[*k].wide;
}

template <class Real>
std::vector<Real> rhs_at_rest(const hw::cell::CellKernel& k, const Model& m) {
  std::vector<Real> y, p, f(m.states.size());
  for (const State& s : m.states) y.push_back(Real(s.initial));
  for (const Parameter& q : m.parameters) p.push_back(Real(q.value));
  p.push_back(Real(0));  // a model without parameters still gets a valid pointer
  // One forward-Euler step of dt 1 gives y + f: f in the kernel's own precision.
  std::vector<Real> y1 = y;
  hw::cell::Batch<Real> b;
  b.n = 1;
  b.stride = 1;
  b.y = y1.data();
  b.p = p.data();
  k.step(hw::cell::Integrator::fe, Real(0), Real(1), 1, b);
  for (std::size_t i = 0; i < f.size(); ++i) f[i] = y1[i] - y[i];
  return f;
}

}  // namespace

TEST(WidenForFloat, TheCancellingValuesAndTheirOperandsAreWide) {
  hw::DiagnosticSink sink;
  const Model m = analysed(kCancelling, sink);
  EXPECT_TRUE(is_wide(m, "y"));
  EXPECT_TRUE(is_wide(m, "y_star"));
  EXPECT_TRUE(is_wide(m, "IV_inf"));  // an operand of y: y is only as good as it
  EXPECT_FALSE(is_wide(m, "delta"));   // finite in float once y and y_star are right
  bool noted = false;
  for (const auto& d : sink.all())
    if (d.code == "float.widened") {
      noted = true;
      EXPECT_NE(d.message.find("d/dt"), std::string::npos) << d.message;
    }
  EXPECT_TRUE(noted);
}

TEST(WidenForFloat, AModelFloatHandlesIsLeftAlone) {
  hw::DiagnosticSink sink;
  Model m = parse_hwm("model plain\ntime t\nstate V = -80 @membrane_voltage\nstate x = 0.5\n"
                      "a = 1/(1 + exp(-(V + 40)/5))\nd/dt V = -0.1*(V + 80)\nd/dt x = (a - x)/2\n",
                      "plain.hwm");
  detect_roles(m);
  run_pipeline(m, {}, sink);
  for (const Algebraic& a : m.algebraics) EXPECT_FALSE(a.wide) << a.name;
  for (const auto& d : sink.all()) EXPECT_NE(d.code.rfind("float.", 0), 0u) << d.message;
}

// The interpreter in float computes the wide values in double: the chain's derivatives are
// finite, and match double to float accuracy.
TEST(WidenForFloat, TheInterpreterInFloatStaysFinite) {
  hw::DiagnosticSink sink;
  const Model m = analysed(kCancelling, sink);
  const auto k = make_interpreter(m);
  const auto fd = rhs_at_rest<double>(*k, m);
  const auto ff = rhs_at_rest<float>(*k, m);
  for (std::size_t i = 0; i < fd.size(); ++i) {
    ASSERT_TRUE(std::isfinite(ff[i])) << m.states[i].name;
    EXPECT_NEAR(ff[i], fd[i], 1e-4 * std::fabs(fd[i]) + 1e-7) << m.states[i].name;
  }
}

// The printed C++ declares the wide values double and computes them in double, so the
// compiled float kernel agrees with the interpreter (and stays finite).
TEST(WidenForFloat, PrintedCppComputesTheWideValuesInDouble) {
  hw::DiagnosticSink sink;
  const Model m = analysed(kCancelling, sink);
  const std::string cpp = print_cpp(m);
  EXPECT_NE(cpp.find("const double a"), std::string::npos);
  cgtest::use_test_cache();
  const auto compiled = make_kernel(m, KernelChoice::compiled);
  const auto oracle = make_interpreter(m);
  const auto fc = rhs_at_rest<float>(*compiled, m);
  const auto fo = rhs_at_rest<float>(*oracle, m);
  for (std::size_t i = 0; i < fc.size(); ++i) {
    ASSERT_TRUE(std::isfinite(fc[i])) << m.states[i].name;
    EXPECT_NEAR(fc[i], fo[i], 1e-5 * std::fabs(fo[i]) + 1e-9) << m.states[i].name;
  }
  cgtest::expect_steps_match<float>(m, *compiled, 0.01, 1e-4, oracle.get());
}

// Decker 2009 itself: every float step of it was NaN from the first (10 of 46 states).
TEST(WidenForFloat, Decker2009StepsInFloat) {
  const std::string file = std::string(HW_SOURCE_DIR) + "/tests/data/stiff/decker_2009.cellml";
  const LoadedModel lm = load_model(file);
  const Model& m = lm.analysed;
  int wide = 0;
  for (const Algebraic& a : m.algebraics) wide += a.wide;
  EXPECT_GT(wide, 0);
  const auto k = make_interpreter(m);
  const auto ff = rhs_at_rest<float>(*k, m);
  for (std::size_t i = 0; i < ff.size(); ++i) EXPECT_TRUE(std::isfinite(ff[i])) << m.states[i].name;
}
