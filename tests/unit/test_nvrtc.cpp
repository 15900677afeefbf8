// NVRTC: the printed CUDA of a hand-built model compiles to PTX in float and double, and
// compilation errors come back with NVRTC's log. No GPU is needed to compile.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "model/emit/cuda_printer.hpp"
#include "gpu/compile.hpp"
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
