// The single-stage steps printed state by state (model/emit/fused_step.hpp): printed only
// where asked (the GPU's populations; never the CPU's kernels by default), each state's
// derivative, diagonal and update next to each other, and the compiled steps against the
// interpreter (the reference, which runs step_once's loops over rhs_jac: it shares the model
// and integrators.hpp's update formulas, not the order of the statements). The GPU test Models/CudaCell runs the printed CUDA,
// whose steps are fused by default, against the interpreter.
#include <gtest/gtest.h>

#include <filesystem>
#include <algorithm>
#include <regex>
#include <set>
#include <sstream>

#include "model/emit/cpp_printer.hpp"
#include "model/emit/cuda_printer.hpp"
#include "model/emit/interpreter.hpp"
#include "model/jit/jit.hpp"
#include "model/load.hpp"
#include "test_codegen_support.hpp"

using hw::cell::Integrator;

namespace {

constexpr std::uint32_t kSingleStage =
    1u << int(Integrator::fe) | 1u << int(Integrator::rl1) | 1u << int(Integrator::grl1);

// A model by built-in name, or from the stiff set (tests/data/stiff) or ../shared; "" when
// its file is absent.
std::string model_source(const std::string& name) {
  namespace fs = std::filesystem;
  for (const auto& b : hw::model::builtin_model_names())
    if (b == name) return name;
  const fs::path stiff = fs::path(HW_TEST_DATA_DIR) / "data" / "stiff" / (name + ".cellml");
  if (fs::exists(stiff)) return stiff.string();
  const fs::path shared = fs::path(HW_SHARED_DIR) / "models" / "cellml" / (name + ".cellml");
  return fs::exists(shared) ? shared.string() : "";
}

std::unique_ptr<hw::cell::CellKernel> compile(const hw::model::Model& m, bool fused, bool f32, bool f64) {
  hw::model::CppOptions opt;
  opt.fused_steps = fused;
  opt.integrators = kSingleStage;
  opt.single_precision = f32;
  opt.double_precision = f64;
  return hw::model::compile_cpp_kernel(hw::model::print_cpp(m, opt), hw::model::cpp_factory_symbol(opt));
}

bool have_compiler() {
  std::string how;
  hw::model::cgtest::use_test_cache();
  hw::model::make_kernel(hw::model::load_model("mfhn").analysed, hw::model::KernelChoice::automatic, &how);
  return how.rfind("compiled C++", 0) == 0 || how.rfind("built-in", 0) == 0;
}

// The body of `function` in printed text: from its signature to the closing brace at its
// indentation.
std::string body_of(const std::string& text, const std::string& function) {
  const std::size_t at = text.find("void " + function + "(");
  if (at == std::string::npos) return "";
  const std::size_t end = text.find("\n  }\n", at);
  return text.substr(at, end - at);
}

}  // namespace

TEST(FusedSteps, PrintedWhereAsked) {
  const auto lm = hw::model::load_model("tentusscher_2006_epi");
  EXPECT_EQ(hw::model::print_cpp(lm.analysed).find("kFusedSteps"), std::string::npos)
      << "the CPU's kernels keep step_once's loops by default";
  hw::model::CppOptions co;
  co.fused_steps = true;
  EXPECT_NE(hw::model::print_cpp(lm.analysed, co).find("static constexpr bool kFusedSteps = true;"), std::string::npos);
  EXPECT_NE(hw::model::print_cuda(lm.analysed).find("__device__ __forceinline__ void grl1_fused("), std::string::npos);
  hw::model::CudaOptions off;
  off.fused_steps = false;
  EXPECT_EQ(hw::model::print_cuda(lm.analysed, off).find("kFusedSteps"), std::string::npos);
}

// What makes the fused step cheaper in registers: a state's derivative, its diagonal and its
// update are consecutive (only the temporaries their expressions need come between; a
// linear block's states are updated together after its solve), and y is written only after
// every state has its new value.
TEST(FusedSteps, EachStatesUpdateFollowsItsDerivative) {
  const auto lm = hw::model::load_model("tentusscher_2006_epi");
  hw::model::CppOptions co;
  co.fused_steps = true;
  const std::string text = hw::model::print_cpp(lm.analysed, co);
  const std::size_t ns = lm.analysed.states.size();
  ASSERT_FALSE(lm.analysed.blocks.empty()) << "TT06's calcium buffers form a block: the test wants one";
  const auto in_block = [&](std::size_t i) {
    for (const auto& b : lm.analysed.blocks)
      if (std::find(b.states.begin(), b.states.end(), i) != b.states.end()) return true;
    return false;
  };
  for (const char* step : {"fe_fused", "rl1_fused", "grl1_fused"}) {
    SCOPED_TRACE(step);
    const std::string body = body_of(text, step);
    ASSERT_FALSE(body.empty());
    std::istringstream lines(body);
    std::string line;
    std::set<std::string> open;  // states whose derivative is printed and not yet updated
    std::size_t updates = 0, writes = 0;
    const std::regex f(R"(const Real f(\d+) = )"), n(R"(const Real n(\d+) = )"), w(R"(^\s*y\[(\d+)\] = n(\d+);)");
    std::smatch s;
    while (std::getline(lines, line)) {
      if (std::regex_search(line, s, f)) {
        // Only a linear block's states (GRL1 solves them together) are open together.
        EXPECT_TRUE(open.empty() || (in_block(std::stoul(s[1])) && in_block(std::stoul(*open.begin()))))
            << "f" << s[1] << " printed before n" << *open.begin();
        open.insert(s[1]);
      } else if (std::regex_search(line, s, n)) {
        EXPECT_EQ(open.erase(s[1].str()), 1u) << line;
        ++updates;
      } else if (std::regex_search(line, s, w)) {
        EXPECT_EQ(s[1].str(), s[2].str());
        EXPECT_EQ(updates, ns) << "y is written only after every update";
        ++writes;
      } else if (open.size() == 1 && !in_block(std::stoul(*open.begin()))) {
        // Between a derivative and its update: its diagonal, or a temporary.
        EXPECT_TRUE(line.find("const Real j" + *open.begin() + " = ") != std::string::npos ||
                    line.find("const Real s") != std::string::npos || line.find("const bool s") != std::string::npos)
            << line;
      }
    }
    EXPECT_EQ(updates, ns);
    EXPECT_EQ(writes, ns);
  }
}

class FusedStepsCompiled : public ::testing::TestWithParam<const char*> {};

// fe, rl1 and grl1 compiled with the fused steps against the interpreter, from the initial
// state and from perturbed ones, uniform and per-cell parameters; with GRL1 also at a step
// far beyond the explicit limit (the blocks' implicit solve, Courtemanche's infinite
// diagonal made 0).
TEST_P(FusedStepsCompiled, AgreeWithTheInterpreter) {
  const std::string src = model_source(GetParam());
  if (src.empty()) GTEST_SKIP() << GetParam() << ": its file is absent here (../shared or tests/data/stiff)";
  if (!have_compiler()) GTEST_SKIP() << "no C++ compiler here";
  const auto lm = hw::model::load_model(src);
  const bool large = lm.analysed.states.size() > 30;  // one precision: each compile takes seconds
  const auto fused = compile(lm.analysed, true, !large, true);
  const auto interp = hw::model::make_interpreter(lm.analysed);
  const double dt = 0.01 / lm.analysed.roles.time_to_ms;
  hw::model::cgtest::expect_steps_match<double>(lm.analysed, *fused, dt, 1e-12, interp.get(), 1, kSingleStage);
  hw::model::cgtest::expect_steps_match<double>(lm.analysed, *fused, 50 * dt, 1e-12, interp.get(), 2,
                                                1u << int(Integrator::grl1));
  if (!large) hw::model::cgtest::expect_steps_match<float>(lm.analysed, *fused, dt, 1e-5, interp.get(), 3, kSingleStage);
}

INSTANTIATE_TEST_SUITE_P(Models, FusedStepsCompiled,
                         ::testing::Values("luo_rudy_1991", "tentusscher_2006_epi", "courtemanche_ramirez_nattel_1998",
                                           "ohara_rudy_2011_endo", "grandi_pasqualini_bers_2010_epi",
                                           "iyer_mazhari_winslow_2004"),
                         [](const auto& info) { return std::string(info.param); });
