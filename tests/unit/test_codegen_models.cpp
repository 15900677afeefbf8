// Generated code against the interpreter (the oracle) on every real model: the CellML
// models of /work/shared/models/cellml and the built-in library models/*.hwm. For each
// model: the printed C++ is compiled once through the JIT (cached between runs), then one
// step of each integrator from the initial and from perturbed states agrees with the
// interpreter to 1e-12 (double) and 1e-5 (float) relative; the printed CUDA compiles with
// NVRTC in float and double.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "model/emit/cuda_printer.hpp"
#include "model/emit/interpreter.hpp"
#include "device/compile.hpp"
#include "model/frontend/cellml/cellml.hpp"
#include "model/frontend/hwm/hwm.hpp"
#include "model/jit/builtin_registry.hpp"
#include "model/jit/jit.hpp"
#include "model/load.hpp"
#include "model/passes/pipeline.hpp"
#include "test_codegen_support.hpp"

using namespace hw::model;
using hw::gpu::compile_cuda_to_ptx;
using hw::gpu::nvrtc_available;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> model_files() {
  std::vector<std::string> out;
  for (const fs::path dir : {fs::path(HW_SHARED_DIR) / "models" / "cellml", fs::path(HW_MODELS_DIR)}) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.path().extension() == ".cellml" || e.path().extension() == ".hwm")
        out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  if (out.empty()) out.push_back("");  // one test that skips with a message
  return out;
}

Model load_analysed(const std::string& path) {
  Model m = fs::path(path).extension() == ".hwm" ? load_hwm(path) : load_cellml(path);
  hw::DiagnosticSink sink;
  run_pipeline(m, PipelineOptions{}, sink);
  sink.throw_if_errors();
  return m;
}

class GeneratedModel : public ::testing::TestWithParam<std::string> {};

TEST_P(GeneratedModel, CompiledCppAgreesWithTheInterpreter) {
  if (GetParam().empty()) GTEST_SKIP() << "no models found under " << HW_SHARED_DIR << " or " << HW_MODELS_DIR;
  cgtest::use_test_cache();
  const Model m = load_analysed(GetParam());
  std::string how;
  const auto compiled = make_kernel(m, KernelChoice::compiled, &how);
  const auto interp = make_interpreter(m);
  ASSERT_EQ(how.rfind("compiled C++", 0), 0u) << how;
  const double dt = 0.01 / m.roles.time_to_ms;  // 0.01 ms in the model's time unit
  cgtest::expect_functions_match(m, *compiled, 1e-12);
  cgtest::expect_steps_match<double>(m, *compiled, dt, 1e-12, interp.get());
  cgtest::expect_steps_match<float>(m, *compiled, dt, 1e-5, interp.get());
}

TEST_P(GeneratedModel, PrintedCudaCompilesWithNvrtc) {
  if (GetParam().empty()) GTEST_SKIP() << "no models found";
  if (!nvrtc_available()) GTEST_SKIP() << "built without NVRTC";
  const Model m = load_analysed(GetParam());
  for (bool use_float : {true, false}) {
    CudaOptions opt;
    opt.use_float = use_float;
    opt.force_inline = false;  // compile check only: inlining every step costs minutes
    const std::string ptx = compile_cuda_to_ptx(print_cuda(m, opt));
    EXPECT_NE(ptx.find("hw_model_demo_step"), std::string::npos);
  }
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  if (info.param.empty()) return "none";
  std::string s = fs::path(info.param).filename().string();
  for (char& ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
}

INSTANTIATE_TEST_SUITE_P(Models, GeneratedModel, ::testing::ValuesIn(model_files()), test_name);

}  // namespace

// Every models/*.hwm is compiled into the program at build time, registered under its file
// stem with its text, and make_kernel picks that build instead of compiling again.
TEST(BuiltinLibrary, EveryModelIsRegisteredAndMatched) {
  std::size_t n = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::path(HW_MODELS_DIR), ec)) {
    if (e.path().extension() != ".hwm") continue;
    ++n;
    const std::string stem = e.path().stem().string();
    const BuiltinModel* b = find_builtin(stem);
    if (b == nullptr) {
      ADD_FAILURE() << stem << " is not in the built-in library (re-run cmake?)";
      continue;
    }
    std::ifstream in(e.path(), std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(b->hwm_source, text) << stem;
    std::string how;
    // As the CLI loads it (roles, pacing control, passes): what the build compiled.
    const auto k = make_kernel(hw::model::load_model(e.path().string()).analysed,
                               KernelChoice::automatic, &how);
    EXPECT_EQ(how, "compiled C++ (built-in " + stem + ")");
  }
  if (n == 0) GTEST_SKIP() << "no models in " << HW_MODELS_DIR;
}
