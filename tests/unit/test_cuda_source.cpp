// The CUDA engine's kernel source compiles with NVRTC for sm_90, for a model in every
// family of the built-ins and for several model regions at once: what can be checked of the
// GPU path on a machine without a GPU (CI). Running it is tests/gpu's business.
#include <gtest/gtest.h>

#include "device/compile.hpp"
#include "test_tissue_util.hpp"
#include "tissue/cuda/kernel_source.hpp"
#include "tissue/engine.hpp"
#include "tissue/reaction.hpp"

using namespace hw::tissue;
using hw::tissue::testing::add_box_region;
using hw::tissue::testing::sheet;

namespace {

void compiles(const TissueCase& c, bool f32) {
  const SimSetup s = make_sim_setup(c, false);
  const hw::gpu::CudaSource src = cuda_kernel_source(s, f32);
  const hw::gpu::CompiledImage img = hw::gpu::compile_cuda(src, "sm_90");
  EXPECT_FALSE(img.image.empty());
  EXPECT_EQ(img.arch, "sm_90");
  for (std::size_t q = 0; q < s.parts.size(); ++q)
    EXPECT_NE(src.text.find("hw_part" + std::to_string(q) + "("), std::string::npos);
  EXPECT_NE(src.text.find("hw_ecg("), std::string::npos);
}

}  // namespace

TEST(CudaSource, TissueKernelsCompileForSm90) {
  if (!hw::gpu::nvrtc_available()) GTEST_SKIP() << "built without NVRTC";
  TissueCase c = sheet(8, 6, 4, 0.25, "karma1993");
  compiles(c, true);
  // The whole box with uniform σ: the sliding window, and with Godunov splitting and
  // explicit diffusion the window on the tower layout, when HEARTWAVE_CUDA_KERNEL asks for
  // them (they won nowhere on the H100: docs/benchmarks.md).
  EXPECT_EQ(cuda_kernel_source(make_sim_setup(c, false), true).text.find("_window("), std::string::npos);
  EXPECT_EQ(cuda_kernel_source(make_sim_setup(c, false), true).text.find("_tower("), std::string::npos);
  setenv("HEARTWAVE_CUDA_KERNEL", "window", 1);
  EXPECT_NE(cuda_kernel_source(make_sim_setup(c, false), true).text.find("hw_part0_window("), std::string::npos);
  compiles(c, true);
  setenv("HEARTWAVE_CUDA_KERNEL", "tower", 1);
  EXPECT_NE(cuda_kernel_source(make_sim_setup(c, false), true).text.find("hw_part0_tower("), std::string::npos);
  compiles(c, true);
  for (bool strang : {true, false}) {
    TissueCase other = c;
    if (strang)
      other.time.splitting = Splitting::strang;
    else
      other.time.diffusion = DiffusionScheme::crank_nicolson;
    EXPECT_EQ(cuda_kernel_source(make_sim_setup(other, false), true).text.find("_tower("), std::string::npos);
    if (!strang) {  // the CG kernels, whose loop runs on the device (kernels/cuda/diffusion_cg.cuh)
      EXPECT_NE(cuda_kernel_source(make_sim_setup(other, false), true).text.find("hw_cg_direction("), std::string::npos);
      EXPECT_NE(cuda_kernel_source(make_sim_setup(other, false), true).text.find("hw_cg_finish("), std::string::npos);
      compiles(other, true);
      compiles(other, false);
    }
  }
  c.grid.bc[0] = c.grid.bc[2] = Boundary::periodic;  // 64-bit offsets across the wall
  for (const char* k : {"window", "tower", ""}) {
    setenv("HEARTWAVE_CUDA_KERNEL", k, 1);
    compiles(c, false);
  }
  unsetenv("HEARTWAVE_CUDA_KERNEL");
  // The register-capped and fenced variants beside the kernel as compiled.
  const SimSetup cs = make_sim_setup(c, false);
  const hw::gpu::CudaSource capped = cuda_kernel_source(cs, true, 256, {128});
  EXPECT_NE(capped.text.find("__launch_bounds__(256, 2) hw_part0_capped("), std::string::npos);
  EXPECT_NE(capped.text.find("__launch_bounds__(256) hw_part0_fenced("), std::string::npos);
  EXPECT_NE(capped.text.find("__launch_bounds__(256, 2) hw_part0_fenced_capped("), std::string::npos);
  EXPECT_NE(cuda_kernel_source(cs, true, 256, {64}).text.find("__launch_bounds__(256, 4) hw_part0_capped("),
            std::string::npos);
  EXPECT_FALSE(hw::gpu::compile_cuda(capped, "sm_90").image.empty());
  // With several sub-steps the kernel as compiled already loops over them: no fenced copies.
  TissueCase sub = c;
  sub.time.ode_substeps = 2;
  const hw::gpu::CudaSource looped = cuda_kernel_source(make_sim_setup(sub, false), true, 256, {128});
  EXPECT_NE(looped.text.find("hw_part0_capped("), std::string::npos);
  EXPECT_EQ(looped.text.find("hw_part0_fenced"), std::string::npos);
  // The fourth-order stencil: no sliding window (its tile holds one cell of halo).
  TissueCase f4 = sheet(8, 6, 4, 0.25, "karma1993");
  f4.conductivity.order = StencilOrder::fourth;
  f4.conductivity.sigma_t = f4.conductivity.sigma_l;
  compiles(f4, true);
  setenv("HEARTWAVE_CUDA_KERNEL", "window", 1);
  EXPECT_EQ(cuda_kernel_source(make_sim_setup(f4, false), true).text.find("_window("), std::string::npos);
  unsetenv("HEARTWAVE_CUDA_KERNEL");
  TissueCase two = sheet(8, 6, 4, 0.25, "bueno_orovio_2008_epi");
  add_box_region(two, "tentusscher_2006_epi", {0, 0, 0}, {1, 1, 1});
  two.time.integrator = "rl2";
  compiles(two, false);
  // Lookup tables (time.cell_maths = "tables"): the TT06 part reads its rates from a table.
  two.time.cell_maths.tables = true;
  const std::string tabled = cuda_kernel_source(make_sim_setup(two, false), true).text;
  EXPECT_NE(tabled.find("__device__ const float hw_p1_lut0["), std::string::npos);
  EXPECT_EQ(tabled.find("__expf("), std::string::npos);
  // Karma's V is dimensionless: no table, so no hw_p0_lut, which the engine's description
  // reads to say so.
  TissueCase karma = f4;
  karma.time.cell_maths.tables = true;
  EXPECT_EQ(cuda_kernel_source(make_sim_setup(karma, false), true).text.find("hw_p0_lut"), std::string::npos);
  compiles(two, true);
  compiles(two, false);
  // Fast intrinsics (time.cell_maths = "tables+fast"): the float kernel divides with
  // __fdividef and takes exponentials with __expf; the double kernel keeps its maths.
  two.time.cell_maths.fast = true;
  const std::string fast = cuda_kernel_source(make_sim_setup(two, false), true).text;
  EXPECT_NE(fast.find("__fdividef("), std::string::npos);
  EXPECT_NE(fast.find("__expf("), std::string::npos);
  EXPECT_NE(fast.find("__device__ const float hw_p1_lut0["), std::string::npos);
  const std::string wide = cuda_kernel_source(make_sim_setup(two, false), false).text;
  EXPECT_EQ(wide.find("__fdividef("), std::string::npos);
  EXPECT_EQ(wide.find("__expf("), std::string::npos);
  compiles(two, true);
  // Implicit diffusion adds the CG kernels; a mask puts them on a cell list.
  TissueCase cn = sheet(10, 8, 6, 0.25, "bueno_orovio_2008_epi");
  cn.geometry.kind = GeometrySpec::Kind::ellipsoid_shell;
  cn.geometry.centre = {1.25, 1, 0.75};
  cn.geometry.radii_outer = {1.2, 0.9, 0.7};
  cn.geometry.radii_inner = {0.6, 0.4, 0.3};
  cn.time.diffusion = DiffusionScheme::crank_nicolson;
  const SimSetup s = make_sim_setup(cn, false);
  const hw::gpu::CudaSource src = cuda_kernel_source(s, true);
  EXPECT_NE(src.text.find("hw_cg_apply"), std::string::npos);
  EXPECT_FALSE(hw::gpu::compile_cuda(src, "sm_90").image.empty());
  // A box all tissue with σ along x: the CG's stencil kernels walk columns (Columns<V>::on),
  // in float and double.
  TissueCase slab = sheet(20, 7, 5, 0.25, "tentusscher_2006_epi");
  slab.fibres.kind = FibreSpec::Kind::uniform;
  slab.fibres.direction = {1, 0, 0};
  slab.time.diffusion = DiffusionScheme::crank_nicolson;
  for (bool f32 : {true, false})
    EXPECT_FALSE(hw::gpu::compile_cuda(cuda_kernel_source(make_sim_setup(slab, false), f32), "sm_90").image.empty());
}

// Several steps per pass (kernels/cuda/steps_per_pass.cuh), when asked for by name
// (HEARTWAVE_CUDA_KERNEL: they won nowhere on the H200 yet), for a small model on the whole
// box with Godunov splitting and explicit diffusion: three steps in float and double, five in
// float only (their tiles would take 80 KiB of shared memory in double). Never for a model
// with many states, Strang splitting, implicit diffusion or a masked grid.
TEST(CudaSource, SeveralStepsPerPassForSmallModelsOnTheBox) {
  if (!hw::gpu::nvrtc_available()) GTEST_SKIP() << "built without NVRTC";
  TissueCase c = sheet(12, 9, 7, 0.25, "bueno_orovio_2008_epi");
  const auto text = [](const TissueCase& k, bool f32) { return cuda_kernel_source(make_sim_setup(k, false), f32).text; };
  EXPECT_EQ(text(c, true).find("_steps"), std::string::npos);
  setenv("HEARTWAVE_CUDA_KERNEL", "steps3", 1);
  EXPECT_NE(text(c, true).find("__launch_bounds__(1024) hw_part0_steps3("), std::string::npos);
  EXPECT_NE(text(c, false).find("hw_part0_steps3("), std::string::npos);
  compiles(c, true);
  compiles(c, false);
  setenv("HEARTWAVE_CUDA_KERNEL", "steps5", 1);
  EXPECT_NE(text(c, true).find("__launch_bounds__(1024) hw_part0_steps5("), std::string::npos);
  EXPECT_EQ(text(c, false).find("hw_part0_steps5("), std::string::npos);
  compiles(c, true);
  c.grid.bc[0] = c.grid.bc[1] = c.grid.bc[2] = Boundary::periodic;
  compiles(c, true);
  setenv("HEARTWAVE_CUDA_KERNEL", "steps3", 1);
  TissueCase karma = sheet(12, 9, 7, 0.25, "karma1993");
  karma.time.ode_substeps = 2;
  compiles(karma, false);
  compiles(sheet(40, 30, 1, 0.25, "karma1993"), true);  // a sheet: marched along y
  TissueCase tt06 = sheet(12, 9, 7, 0.25, "tentusscher_2006_epi");
  EXPECT_EQ(text(tt06, true).find("_steps"), std::string::npos);
  TissueCase strang = c;
  strang.time.splitting = Splitting::strang;
  EXPECT_EQ(text(strang, true).find("_steps"), std::string::npos);
  TissueCase cn = c;
  cn.time.diffusion = DiffusionScheme::crank_nicolson;
  EXPECT_EQ(text(cn, true).find("_steps"), std::string::npos);
  TissueCase shell = c;
  shell.geometry.kind = GeometrySpec::Kind::ellipsoid_shell;
  shell.geometry.centre = {1.5, 1.1, 0.9};
  shell.geometry.radii_outer = {1.4, 1.0, 0.8};
  shell.geometry.radii_inner = {0.6, 0.4, 0.3};
  EXPECT_EQ(text(shell, true).find("_steps"), std::string::npos);
  unsetenv("HEARTWAVE_CUDA_KERNEL");
}

// The GPU engine prints its kernels again when the first stimulus is added to a run that had
// none (a click in the live view), after the simulation has freed the per-cell parameters:
// the source must come out the same from what the set-up keeps (Part::uniform).
TEST(CudaSource, ThePrintedSourceNeedsNoPerCellParametersAfterSetUp) {
  TissueCase c = sheet(8, 6, 4, 0.25, "tentusscher_2006_epi");
  ParameterGradient gr;
  gr.param = "g_Ks";
  gr.axis = 0;
  gr.from = 0.8;
  gr.to = 1.2;
  c.gradients.push_back(gr);
  SimSetup s = make_sim_setup(c, false);
  ASSERT_TRUE(s.parts[0].per_cell);
  const std::string before = cuda_kernel_source(s, true).text;
  for (Part& p : s.parts) {
    p.pcell.clear();
    p.pcell.shrink_to_fit();
  }
  EXPECT_EQ(cuda_kernel_source(s, true).text, before);
}
