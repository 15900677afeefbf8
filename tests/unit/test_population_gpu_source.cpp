// The GPU population's kernel source compiles with NVRTC for sm_90 for built-in models of
// different sizes, integrators and precisions, with and without the pacing switch and a
// calcium state; and the choices and errors that need no GPU. Running the kernel is
// tests/gpu/test_cuda_population.cpp's business.
#include <gtest/gtest.h>

#include "cell/population_gpu.hpp"
#include "device/compile.hpp"
#include "device/driver.hpp"
#include "device/compile.hpp"
#include "model/load.hpp"

using namespace hw::cell;

namespace {

void compiles(const std::string& model, Integrator method, bool f32, bool model_stimulus = false,
              hw::model::CellMaths maths = {}) {
  SCOPED_TRACE(model + " " + integrator_name(method) + (f32 ? " float" : " double") + " " + to_string(maths));
  hw::model::LoadOptions lo;
  lo.keep_model_stimulus = model_stimulus;
  const auto lm = hw::model::load_model(model, lo);
  const CellSetup setup = make_cell_setup(lm.analysed, lm.stimulus);
  // Every parameter but the pacing switch compiled in, as for a population that varies none.
  const PopulationDesign none;
  const hw::gpu::CudaSource src =
      population_kernel_source(lm.analysed, setup, method, f32, population_fixed_parameters(setup, none), maths);
  EXPECT_EQ(src.text.find("hw_pop_lut0[") != std::string::npos, maths.tables);
  EXPECT_EQ(src.text.find("__fdividef(") != std::string::npos, maths.fast && f32);
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
  compiles("ohara_rudy_2011_endo", Integrator::rl1, true, false, {.tables = true});  // lookup tables of V
  compiles("ohara_rudy_2011_endo", Integrator::rl1, true, false, {.fast = true});    // fast intrinsics
  compiles("ohara_rudy_2011_endo", Integrator::rl1, false, false, {.fast = true});   // double: none
}

// Which parameters the kernel gets as constants: all but the design's varying columns and the
// pacing switch; a column with one value throughout is a constant too, scaled as the cpu does.
TEST(PopulationGpuSource, ParametersNoCellVariesAreCompiledIn) {
  const auto lm = hw::model::load_model("tentusscher_2006_epi");
  const CellSetup setup = make_cell_setup(lm.analysed, lm.stimulus);
  ASSERT_GE(setup.stim_on, 0);
  PopulationDesign d;
  d.names = {"g_Kr", "g_Ks"};
  d.values = {0.8, 1.5, 1.2, 1.5, 1.0, 1.5};  // g_Kr varies, g_Ks is 1.5 x its default in every cell
  const auto fixed = population_fixed_parameters(setup, d);
  ASSERT_EQ(fixed.size(), setup.params.size());
  const int kr = setup.param_index("g_Kr"), ks = setup.param_index("g_Ks");
  EXPECT_FALSE(fixed[std::size_t(kr)]);
  EXPECT_FALSE(fixed[std::size_t(setup.stim_on)]);
  ASSERT_TRUE(fixed[std::size_t(ks)]);
  EXPECT_DOUBLE_EQ(*fixed[std::size_t(ks)], 1.5 * setup.params[std::size_t(ks)]);
  for (std::size_t q = 0; q < fixed.size(); ++q)
    if (int(q) != kr && int(q) != ks && int(q) != setup.stim_on) {
      ASSERT_TRUE(fixed[q]) << q;
      EXPECT_EQ(*fixed[q], setup.params[q]) << q;
    }
  // The kernel reads one parameter row (g_Kr): row 0 for it, −1 for every other.
  const auto src = population_kernel_source(lm.analysed, setup, Integrator::rl1, true, fixed);
  std::string rows;
  for (std::size_t q = 0; q < fixed.size(); ++q) rows += (q ? ", " : "") + std::to_string(int(q) == kr ? 0 : -1);
  EXPECT_NE(src.text.find("rows[] = {" + rows + "}"), std::string::npos);
  d.scaling = false;  // absolute values
  EXPECT_DOUBLE_EQ(*population_fixed_parameters(setup, d)[std::size_t(ks)], 1.5);
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
