// The printers on a hand-built model: sanitising, strength reduction, refusal of
// unlowered nodes, and the golden files of generated code for built-in models.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "model/emit/cpp_printer.hpp"
#include "model/emit/cuda_printer.hpp"
#include "model/emit/identifiers.hpp"
#include "model/emit/interpreter.hpp"
#include "model/jit/jit.hpp"
#include "model/load.hpp"
#include "test_codegen_support.hpp"

using namespace hw::model;

TEST(Identifiers, SanitisedNamesAreSafeIdentifiers) {
  EXPECT_EQ(sanitise_identifier("int"), "int");  // callers prefix it (a3_int)
  EXPECT_EQ(sanitise_identifier("__x"), "x");
  EXPECT_EQ(sanitise_identifier("a*/b"), "a_b");
  EXPECT_EQ(sanitise_identifier("9lives"), "n9lives");
  EXPECT_EQ(sanitise_identifier("*/"), "x");
  EXPECT_EQ(sanitise_identifier("é"), "x");
  EXPECT_EQ(sanitise_identifier(std::string(100, 'a')).size(), 32u);
  for (const char* s : {"a__b", "_a_", "x__", "a\n\"b"}) {
    const std::string id = sanitise_identifier(s);
    EXPECT_EQ(id.find("__"), std::string::npos) << id;
    EXPECT_NE(id.front(), '_');
    EXPECT_NE(id.back(), '_');
  }
}

TEST(Identifiers, CommentsCannotEscape) {
  const std::string c = sanitise_comment("a*/ b /* c\nd \\ ??/ \"e\"");
  EXPECT_EQ(c.find("*/"), std::string::npos);
  EXPECT_EQ(c.find("/*"), std::string::npos);
  EXPECT_EQ(c.find('\n'), std::string::npos);
  EXPECT_EQ(c.find('\\'), std::string::npos);
  EXPECT_EQ(c.find('?'), std::string::npos);
}

TEST(Identifiers, StringLiteralEscapesEverything) {
  EXPECT_EQ(c_string_literal("a\"b\\?c"), "\"a\\042b\\134\\077c\"");
  EXPECT_EQ(c_string_literal("1\n2"), "\"1\\012\"\n    \"2\"");
}

TEST(CppPrinter, ModelNamesNeverReachTheSourceRaw) {
  const Model m = cgtest::awkward_model();
  for (const std::string& src : {print_cpp(m), print_cuda(m)}) {
    EXPECT_EQ(src.find("a*/b"), std::string::npos);
    EXPECT_EQ(src.find("*/ #define"), std::string::npos);
    EXPECT_EQ(src.find("??/"), std::string::npos);
    EXPECT_EQ(src.find("p\\"), std::string::npos);
    EXPECT_EQ(src.find("/*"), std::string::npos);  // the printers only write // comments
    std::istringstream lines(src);
    for (std::string line; std::getline(lines, line);)
      EXPECT_EQ(line.substr(0, line.find("//")).find("__x"), std::string::npos) << line;
    EXPECT_NE(src.find("a2_alpha"), std::string::npos);
  }
}

TEST(CppPrinter, SymbolPrefixIsSanitised) {
  CppOptions opt;
  opt.symbol_prefix = "my model; system(\"rm\")";
  const std::string src = print_cpp(cgtest::awkward_model(), opt);
  EXPECT_NE(src.find("my_model_system_rm_make_kernel()"), std::string::npos);
  EXPECT_EQ(cpp_factory_symbol(opt), "my_model_system_rm_make_kernel");
}

TEST(CppPrinter, StrengthReductionKeepsTheMaths) {
  const std::string src = print_cpp(cgtest::awkward_model());
  EXPECT_NE(src.find("powi<4>(y[1])"), std::string::npos);  // x^4 by squaring
  EXPECT_NE(src.find("powi<3>("), std::string::npos);
  EXPECT_NE(src.find("std::sqrt(p[3])"), std::string::npos);  // x^0.5
  EXPECT_NE(src.find("* Real(0.25)"), std::string::npos);     // V/4: exact reciprocal
  EXPECT_NE(src.find("* (Real(-0.125))"), std::string::npos); // /-8: exact reciprocal
  EXPECT_NE(src.find("c[0] / Real(3)"), std::string::npos);   // /3 stays a division
  // pow only in the fixed helper (pow_param's fallback), never in the model's own code
  const std::string model = src.substr(src.find("struct Model {"));
  EXPECT_EQ(model.find("std::pow"), std::string::npos);
  EXPECT_EQ(model.find("pow_param"), std::string::npos);  // no parameter exponent here
}

TEST(CppPrinter, OncePerCellWorkIsSeparated) {
  const std::string src = print_cpp(cgtest::awkward_model());
  const auto constants = src.find("void constants(");
  const auto rhs = src.find("void rhs(");
  ASSERT_NE(constants, std::string::npos);
  ASSERT_NE(rhs, std::string::npos);
  const std::string constants_body = src.substr(constants, rhs - constants);
  EXPECT_NE(constants_body.find("c[1] = c[0] / Real(3);"), std::string::npos);
  EXPECT_EQ(src.substr(rhs).find("std::sqrt(p[3])"), std::string::npos);
}

TEST(CppPrinter, SharedSubexpressionsBecomeTemporaries) {
  const std::string src = print_cpp(cgtest::awkward_model());
  // exp((V + 40)/-8) appears twice in alpha: printed once, as a temporary.
  const auto rhs = src.find("void rhs(");
  const std::string body = src.substr(rhs, src.find("void rhs_jac(") - rhs);
  EXPECT_NE(body.find("const Real s0 = std::exp("), std::string::npos);
  EXPECT_EQ(body.find("std::exp(", body.find("std::exp(") + 1), std::string::npos);
}

TEST(CppPrinter, RefusesUnanalysedOrUnloweredModels) {
  Model m = cgtest::awkward_model();
  m.analysis.clear();
  EXPECT_THROW(print_cpp(m), hw::Error);
  Model pw = cgtest::awkward_model();
  const ExprId V = pw.pool.state(0);
  pw.derivatives[0] = pw.pool.make(Op::piecewise, {pw.pool.make(Op::gt, {V, pw.pool.constant(0)}),
                                                   V, pw.pool.constant(1)});
  EXPECT_THROW(print_cpp(pw), hw::Error);
  EXPECT_THROW(print_cuda(pw), hw::Error);
}

TEST(CudaPrinter, PrecisionAwareNames) {
  const Model m = cgtest::awkward_model();
  const std::string f = print_cuda(m);
  EXPECT_NE(f.find("expf("), std::string::npos);
  EXPECT_NE(f.find("0.25f"), std::string::npos);
  EXPECT_EQ(f.find("__expf"), std::string::npos);
  CudaOptions d;
  d.use_float = false;
  const std::string dbl = print_cuda(m, d);
  EXPECT_EQ(dbl.find("expf("), std::string::npos);
  EXPECT_NE(dbl.find(" exp("), std::string::npos);
  EXPECT_EQ(dbl.find("0.25f"), std::string::npos);
  CudaOptions fast;
  fast.fast_intrinsics = true;
  EXPECT_NE(print_cuda(m, fast).find("__expf("), std::string::npos);
}

// The CUDA steps are runtime/integrators.hpp's step_cell over a printed model struct whose
// gate test is a constexpr switch (it folds once the per-state loops are unrolled).
TEST(CudaPrinter, StepsRunTheSharedIntegratorsOverTheModelStruct) {
  const std::string src = print_cuda(cgtest::awkward_model());
  EXPECT_NE(src.find("#include \"runtime/integrators.hpp\""), std::string::npos);
  EXPECT_NE(src.find("case 1: return true;"), std::string::npos);  // y[1] is a gate
  EXPECT_EQ(src.find("case 0: return true;"), std::string::npos);  // y[0] is not
  EXPECT_NE(src.find("hw::cell::step_cell<float>(hw_model_Model{}, hw::cell::Integrator::rl2, t, dt, y, p, c);"),
            std::string::npos);
  EXPECT_NE(src.find("hw::cell::step_cell<float>(hw_model_Model{}, hw::cell::Integrator::grl2, t, dt, y, p, c);"),
            std::string::npos);
  EXPECT_NE(src.find("extern \"C\" __global__ void hw_model_demo_step("), std::string::npos);
}

// Karma 1993's (n/n_B)^M with M a parameter: the compiled built-in multiplies when M is a
// small integer (pow_param) and calls pow otherwise; both must match the interpreter.
TEST(CppPrinter, ParameterExponentMatchesTheInterpreter) {
  const auto karma = load_model("karma1993");
  std::string how;
  const auto compiled = make_kernel(karma.analysed, KernelChoice::compiled, &how);
  const auto oracle = make_interpreter(karma.analysed);
  int m_index = -1;
  for (std::size_t k = 0; k < karma.analysed.parameters.size(); ++k)
    if (karma.analysed.parameters[k].name == "M") m_index = int(k);
  ASSERT_GE(m_index, 0);
  for (double M : {4.0, 3.0, -2.0, 4.5, 16.0}) {
    const std::size_t n = 8;
    std::vector<double> p;
    for (const auto& q : karma.analysed.parameters) p.push_back(q.value);
    p[m_index] = M;
    std::vector<double> got(2 * n), want;
    for (std::size_t i = 0; i < n; ++i) {
      got[i] = 0.5 + 0.4 * double(i);  // E
      got[n + i] = 0.1 + 0.1 * double(i);  // n
    }
    want = got;
    hw::cell::Batch<double> b{n, n, got.data(), p.data(), false};
    compiled->step(hw::cell::Integrator::rl1, 0.0, 0.05, 3, b);
    b.y = want.data();
    oracle->step(hw::cell::Integrator::rl1, 0.0, 0.05, 3, b);
    for (std::size_t j = 0; j < got.size(); ++j)
      EXPECT_NEAR(got[j], want[j], 1e-12 * std::max(1.0, std::fabs(want[j]))) << "M = " << M << ", " << j;
  }
}

// Batch::v (the voltage outside y, the tissue engine's in-place layout) gives bit for bit
// what the ordinary layout gives, for every integrator, in float and double.
template <class Real>
void expect_external_voltage_matches(const char* model) {
  const auto loaded = load_model(model);
  const auto k = make_kernel(loaded.analysed, KernelChoice::compiled);
  const int kv = int(*loaded.analysed.roles.voltage_state);
  ASSERT_TRUE(k->external_voltage(kv)) << model;
  EXPECT_FALSE(k->external_voltage(kv + 1));
  EXPECT_FALSE(make_interpreter(loaded.analysed)->external_voltage(kv));
  const int ns = k->n_states();
  const std::size_t n = 37;
  std::vector<Real> p;
  for (const auto& q : loaded.analysed.parameters) p.push_back(Real(q.value));
  for (int method = 0; method < hw::cell::kIntegratorCount; ++method) {
    const auto integ = static_cast<hw::cell::Integrator>(method);
    std::vector<Real> y(std::size_t(ns) * n);
    for (int s = 0; s < ns; ++s)
      for (std::size_t i = 0; i < n; ++i)
        y[s * n + i] = Real(loaded.analysed.states[s].initial + (s == kv ? 0.02 * double(i) : 0.0));
    // the same cells with V taken out: the other states in slot order, V apart
    std::vector<Real> rest, v(y.begin() + kv * n, y.begin() + (kv + 1) * n);
    for (int s = 0; s < ns; ++s)
      if (s != kv) rest.insert(rest.end(), y.begin() + s * n, y.begin() + (s + 1) * n);
    hw::cell::Batch<Real> whole{n, n, y.data(), p.data(), false};
    hw::cell::Batch<Real> apart{n, n, rest.data(), p.data(), false, v.data(), kv};
    // dt 0.001: fe, rk2 and rk4 are unstable for TT06 at 0.01 ms (its stiff gates)
    k->step(integ, Real(1), Real(0.001), 3, whole);
    k->step(integ, Real(1), Real(0.001), 3, apart);
    // bit for bit
    for (Real x : y) ASSERT_TRUE(std::isfinite(x)) << model << " " << method;
    const auto same = [](Real a, Real b) { return std::memcmp(&a, &b, sizeof(Real)) == 0; };
    for (std::size_t i = 0; i < n; ++i) ASSERT_TRUE(same(v[i], y[kv * n + i])) << model << " " << method;
    std::size_t r = 0;
    for (int s = 0; s < ns; ++s)
      if (s != kv)
        for (std::size_t i = 0; i < n; ++i, ++r) ASSERT_TRUE(same(rest[r], y[s * n + i])) << model << " " << s;
  }
}

TEST(CppPrinter, ExternalVoltageLayoutMatchesTheOrdinaryOne) {
  for (const char* m : {"tentusscher_2006_epi", "karma1993", "aliev_panfilov_1996"}) {
    expect_external_voltage_matches<double>(m);
    expect_external_voltage_matches<float>(m);
  }
}
