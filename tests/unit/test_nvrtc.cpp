// NVRTC: the printed CUDA of a hand-built model compiles to PTX in float and double, and
// compilation errors come back with NVRTC's log. No GPU is needed to compile.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "core/error.hpp"
#include "model/emit/cuda_printer.hpp"
#include "device/compile.hpp"
#include "device/embedded.hpp"
#include "model/load.hpp"
#include "test_codegen_support.hpp"

using namespace hw::model;
using hw::gpu::compile_cuda_to_ptx;
using hw::gpu::nvrtc_available;

TEST(Nvrtc, AwkwardModelCompilesInFloatAndDouble) {
  if (!nvrtc_available()) GTEST_SKIP() << "built without NVRTC";
  const Model m = cgtest::awkward_model();
  for (bool use_float : {true, false}) {
    CudaOptions opt;
    opt.use_float = use_float;
    opt.function_prefix = "awk";
    const std::string ptx = compile_cuda_to_ptx(print_cuda(m, opt));
    EXPECT_NE(ptx.find(".entry awk_demo_step"), std::string::npos);
    EXPECT_NE(ptx.find(use_float ? ".f32" : ".f64"), std::string::npos);
  }
  CudaOptions fast;
  fast.fast_intrinsics = true;
  fast.force_inline = false;
  EXPECT_NE(compile_cuda_to_ptx(print_cuda(m, fast), "sm_80").find("hw_model_demo_step"),
            std::string::npos);
}

// A model with Markov chains: GRL1/GRL2 take the implicit block path, whose loops unroll
// over a compile-time block index (for_each_block); every function and lambda on it must be
// a device function for NVRTC.
TEST(Nvrtc, MarkovChainModelCompilesWithTheBlockPath) {
  if (!nvrtc_available()) GTEST_SKIP() << "built without NVRTC";
  const Model m = hw::model::load_model(std::string(HW_TEST_DATA_DIR) + "/data/hwm/markov_channel.hwm").analysed;
  ASSERT_FALSE(m.blocks.empty());
  CudaOptions opt;
  opt.force_inline = false;
  const std::string ptx = compile_cuda_to_ptx(print_cuda(m, opt));
  EXPECT_NE(ptx.find("hw_model_demo_step"), std::string::npos);
}

TEST(Nvrtc, ErrorsCarryTheLog) {
  if (!nvrtc_available()) {
    EXPECT_THROW(compile_cuda_to_ptx("__global__ void k() {}"), hw::Error);
    GTEST_SKIP() << "built without NVRTC";
  }
  try {
    compile_cuda_to_ptx("__global__ void k() { undeclared_thing = 1; }");
    FAIL() << "expected hw::Error";
  } catch (const hw::Error& e) {
    EXPECT_NE(std::string(e.what()).find("undeclared_thing"), std::string::npos) << e.what();
  }
}

// What `heartwave model compile --target cuda` writes compiles with nvcc on its own: the
// integrators are inlined, and they are host-and-device functions under nvcc.
TEST(Nvcc, PrintedFileCompilesStandalone) {
#ifndef HW_NVCC
  GTEST_SKIP() << "no nvcc found by CMake";
#else
  const auto dir = std::filesystem::temp_directory_path() / ("hw_nvcc_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string text = hw::gpu::inline_embedded_includes(print_cuda(cgtest::awkward_model()));
  EXPECT_EQ(text.find("#include \"cell/"), std::string::npos);
  std::ofstream(dir / "awk.cu") << text;
  const std::string cmd = std::string("\"") + HW_NVCC + "\" -arch=sm_90 -ptx -w \"" + (dir / "awk.cu").string() +
                          "\" -o \"" + (dir / "awk.ptx").string() + "\" > \"" + (dir / "log").string() + "\" 2>&1";
  const int rc = std::system(cmd.c_str());
  std::ifstream log(dir / "log");
  const std::string msg((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_EQ(rc, 0) << msg;
  std::ifstream ptx(dir / "awk.ptx");
  const std::string p((std::istreambuf_iterator<char>(ptx)), std::istreambuf_iterator<char>());
  EXPECT_NE(p.find(".entry hw_model_demo_step"), std::string::npos);
  std::filesystem::remove_all(dir);
#endif
}
