// The GPU population's kernel source compiles with NVRTC for sm_90 for built-in models of
// different sizes, integrators and precisions, with and without the pacing switch and a
// calcium state; and the choices and errors that need no GPU. Running the kernel is
// tests/gpu/test_cuda_population.cpp's business.
#include <gtest/gtest.h>

#include "cell/population_gpu.hpp"
#include "gpu/compile.hpp"
#include "gpu/driver.hpp"
#include "gpu/compile.hpp"
#include "model/load.hpp"

using namespace hw::cell;

namespace {

void compiles(const std::string& model, Integrator method, bool f32, bool model_stimulus = false) {
  SCOPED_TRACE(model + " " + integrator_name(method) + (f32 ? " float" : " double"));
  hw::model::LoadOptions lo;
  lo.keep_model_stimulus = model_stimulus;
  const auto lm = hw::model::load_model(model, lo);
  const CellSetup setup = make_cell_setup(lm.analysed, lm.stimulus);
  const hw::gpu::CudaSource src = population_kernel_source(lm.analysed, setup, method, f32);
  EXPECT_NE(src.text.find(std::string("hw_pop_step_") + integrator_name(method) + "(t, dt"),
            std::string::npos);
  EXPECT_NE(src.text.find("kon = " + std::to_string(setup.stim_on)), std::string::npos);
  EXPECT_NE(src.text.find("hw_population("), std::string::npos);
  EXPECT_NE(src.text.find("hw_population_track("), std::string::npos);
  const hw::gpu::CompiledImage img = hw::gpu::compile_cuda(src, "sm_90");
  EXPECT_FALSE(img.image.empty());
  EXPECT_EQ(img.arch, "sm_90");
}

}  // namespace

TEST(PopulationGpuSource, CompilesForSm90) {
  if (!hw::gpu::nvrtc_available()) GTEST_SKIP() << "built without NVRTC";
  compiles("tentusscher_2006_epi", Integrator::rl2, false);  // calcium, pacing switch
  compiles("tentusscher_2006_epi", Integrator::rk4, true);
  compiles("ohara_rudy_2011_endo", Integrator::rl1, false);  // 41 states
  compiles("mfhn", Integrator::fe, true);                      // no calcium
  compiles("tentusscher_2006_epi", Integrator::sbe, false, true);  // the model's own stimulus
}

TEST(PopulationGpuSource, CvodeIsRefusedNamingTheOption) {
  SolverOptions s;
  s.cvode = true;
  try {
    check_gpu_population(s);
    FAIL() << "expected InputError";
  } catch (const hw::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--integrator cvode"), std::string::npos) << e.what();
  }
  std::string note;
  if (hw::gpu::gpu_status().usable) {
    EXPECT_FALSE(choose_population_gpu("auto", s, &note));
    EXPECT_NE(note.find("backend auto: cpu"), std::string::npos) << note;
  }
}

TEST(PopulationGpuSource, BackendChoiceWithoutAGpu) {
  if (hw::gpu::gpu_status().usable) GTEST_SKIP() << "a GPU is usable here";
  SolverOptions s;
  std::string note;
  EXPECT_FALSE(choose_population_gpu("cpu", s, &note));
  EXPECT_EQ(note, "backend cpu");
  EXPECT_FALSE(choose_population_gpu("auto", s, &note));
  EXPECT_EQ(note, "backend auto: cpu (" + hw::gpu::gpu_status().why + ")");
  try {
    choose_population_gpu("cuda", s, &note);
    FAIL() << "expected hw::Error";
  } catch (const hw::Error& e) {
    EXPECT_EQ(std::string(e.what()), "--backend cuda: " + hw::gpu::gpu_status().why);
  }
  const auto lm = hw::model::load_model("mfhn");
  const auto design = grid_design({parse_range("b=0.8:1.2:2", true)});
  EXPECT_THROW(run_population_gpu(lm.analysed, make_cell_setup(lm.analysed, lm.stimulus), design,
                                  StimulusTrain::periodic(100, 1, 1.0), {}),
               hw::Error);
}
