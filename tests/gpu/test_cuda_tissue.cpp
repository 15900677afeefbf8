// The CUDA engine against the reference engine (plain double loops on the box, which share
// none of its structure) and against the cpu engine, on small cases that each exercise one
// thing the GPU path does differently: odd sizes, compressed rows, masks, phase fields,
// fibres with edge links, several model regions, gradients, S1-S2, Strang, sub-steps,
// restarts across engines, the NaN policy. Every test skips with the reason where there is
// no usable GPU (CI), and prints "[measured]" lines for docs/verification.md.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <tuple>

#include "device/device.hpp"
#include "gpu_test_util.hpp"
#include "outputs/maps.hpp"
#include "test_tissue_util.hpp"
#include "tissue/engine.hpp"
#include "tissue/simulation.hpp"

using namespace hw::tissue;
using hw::tissue::testing::add_box_region;
using hw::tissue::testing::box_initial;
using hw::tissue::testing::box_stimulus;
using hw::tissue::testing::ellipsoid_shell;
using hw::tissue::testing::rotating_fibres;
using hw::tissue::testing::ActivationRun;
using hw::tissue::testing::max_diff;
using hw::tissue::testing::run_with_activation;
using hw::tissue::testing::sheet;

namespace {

// The runs sample V after every step, two threads on the cpu; V in double after 100 steps.
ActivationRun run(const TissueCase& c, Backend b, double t_end) { return run_with_activation(c, b, t_end, 2, 100); }

double max_abs(const std::vector<double>& a) {
  double m = 0;
  for (double x : a)
    if (!std::isnan(x)) m = std::max(m, std::fabs(x));
  return m;
}

// Double: V after 100 steps within v_tol (default 1e-10) relative of the reference,
// activation times within 1e-6 ms; float: activation within one dt.
void compare_with_reference(TissueCase c, double t_end, const char* what, double v_tol = 1e-10) {
  c.time.precision = Precision::f64;
  const ActivationRun ref = run(c, Backend::reference, t_end);
  const ActivationRun gpu64 = run(c, Backend::cuda, t_end);
  c.time.precision = Precision::f32;
  const ActivationRun gpu32 = run(c, Backend::cuda, t_end);
  bool nan64 = false, nan32 = false, nanv = false;
  const double a64 = max_diff(ref.act, gpu64.act, &nan64);
  const double a32 = max_diff(ref.act, gpu32.act, &nan32);
  const double v100 = max_diff(ref.v_early, gpu64.v_early, &nanv) / std::max(1e-300, max_abs(ref.v_early));
  std::size_t activated = 0, tissue = 0;
  for (double t : ref.act) activated += !std::isnan(t);
  for (std::size_t n = 0; n < ref.v.size(); ++n) tissue += !std::isnan(ref.v[n]);
  std::printf("[measured] cuda vs reference, %s: %zu of %zu cells activated; f64: V after 100 steps "
              "%.3g relative, activation %.3g ms; f32: activation %.3g ms (dt %g)\n",
              what, activated, tissue, v100, a64, a32, c.time.dt);
  ASSERT_FALSE(ref.v_early.empty()) << "the run is shorter than 100 steps";
  EXPECT_GT(activated, tissue / 2);
  EXPECT_TRUE(nanv);
  EXPECT_LE(v100, v_tol);
  EXPECT_TRUE(nan64);
  EXPECT_LT(a64, 1e-6);
  EXPECT_TRUE(nan32);
  EXPECT_LE(a32, c.time.dt);
}

// A run to t_end with CUDA graphs (the default) or without (HEARTWAVE_CUDA_GRAPHS=0), the
// activation and APD90 maps kept on the device: what GraphsChangeNothing and
// ImplicitStepsInGraphsChangeNothing compare.
struct GraphRun {
  std::vector<unsigned char> state;
  Field<float> act, apd;
  std::string info;
  double cg_iterations = 0;
};
GraphRun run_with_graphs_or_not(const TissueCase& c, bool graphs, double t_end) {
  if (graphs)
    unsetenv("HEARTWAVE_CUDA_GRAPHS");
  else
    setenv("HEARTWAVE_CUDA_GRAPHS", "0", 1);
  SimulationOptions o;
  o.backend = Backend::cuda;
  Simulation sim(c, o);
  hw::io::ActivationTracker maps(c.grid, nullptr, -20, true);
  Field<float> v;
  sim.voltage(v);
  maps.update(0, v);
  EXPECT_TRUE(maps.attach(sim));
  sim.run_until(t_end);
  unsetenv("HEARTWAVE_CUDA_GRAPHS");
  return {sim.save_state(), maps.activation(), maps.apd90(), sim.describe(), sim.cg_iterations()};
}

bool same_bits(const Field<float>& a, const Field<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(a[0])) == 0;
}

}  // namespace

TEST(CudaTissue, OddBoxUniformSigma) {
  HW_REQUIRE_GPU();
  TissueCase c = sheet(23, 17, 11, 0.25, "bueno_orovio_2008_epi");
  c.conductivity.sigma_t = c.conductivity.sigma_l;  // isotropic: the uniform stencil
  c.stimuli.push_back(box_stimulus({0, 0, 0}, {0.75, 5, 3}));
  compare_with_reference(c, 8, "23x17x11 box, uniform sigma, BO epi");
}

// The box's neighbours come from storage offsets (kernels/cuda/monodomain.cuh): across a
// periodic wall the far side, in x and z here, and the cell itself at y's no-flux walls; a
// sheet one cell thick with a periodic z wraps onto itself.
TEST(CudaTissue, OddBoxPeriodicWalls) {
  HW_REQUIRE_GPU();
  TissueCase c = sheet(13, 9, 7, 0.25, "bueno_orovio_2008_epi");
  c.conductivity.sigma_t = c.conductivity.sigma_l;  // isotropic: the uniform stencil
  c.grid.bc[0] = Boundary::periodic;
  c.grid.bc[2] = Boundary::periodic;
  c.stimuli.push_back(box_stimulus({0, 0, 0}, {1, 2.25, 1}, 100, 2));
  compare_with_reference(c, 10, "13x9x7 box, uniform sigma, periodic x and z, BO epi");
  TissueCase flat = sheet(21, 11, 1, 0.25, "bueno_orovio_2008_epi");
  flat.conductivity.sigma_t = flat.conductivity.sigma_l;
  flat.grid.bc[0] = Boundary::periodic;
  flat.grid.bc[1] = Boundary::periodic;
  flat.grid.bc[2] = Boundary::periodic;
  flat.stimuli.push_back(box_stimulus({0, 0, 0}, {1, 2, 0.25}, 100, 2));
  compare_with_reference(flat, 10, "21x11 sheet, periodic x, y and z, BO epi");
}

TEST(CudaTissue, ObliqueFibresTwoModels) {
  HW_REQUIRE_GPU();
  TissueCase c = sheet(30, 20, 1, 0.2, "bueno_orovio_2008_epi");
  c.fibres.kind = FibreSpec::Kind::uniform;
  c.fibres.direction = {1, 0.6, 0};
  add_box_region(c, "tentusscher_2006_epi", {3, 0, 0}, {6, 2, 1});
  c.stimuli.push_back(box_stimulus({0, 0, 0}, {0.6, 4, 1}));
  compare_with_reference(c, 12, "2D 30x20 oblique fibres, BO epi + TT06 epi");
}

TEST(CudaTissue, RotatingFibresPeriodicStrangSubsteps) {
  HW_REQUIRE_GPU();
  TissueCase c = sheet(14, 9, 7, 0.25, "bueno_orovio_2008_epi");
  c.grid.bc[1] = Boundary::periodic;
  rotating_fibres(c);
  ModelRegion m2;
  m2.model = "bueno_orovio_2008_endo";
  m2.where.kind = Region::Kind::face;
  m2.where.face = "z-";
  m2.where.depth = 0.5;
  c.models.push_back(m2);
  c.stimuli.push_back(box_stimulus({0, 0, 0}, {0.5, 2.25, 1.75}));
  compare_with_reference(c, 10, "3D 14x9x7 rotating fibres (19-point), periodic y, BO epi + endo");
  c.time.splitting = Splitting::strang;
  c.time.ode_substeps = 2;
  c.time.integrator = "rl2";
  compare_with_reference(c, 10, "the same with Strang, 2 ODE sub-steps, RL2");
}

TEST(CudaTissue, ShellInCompressedRows) {
  HW_REQUIRE_GPU();
  TissueCase c = sheet(24, 20, 16, 0.25, "bueno_orovio_2008_epi");
  ellipsoid_shell(c);
  rotating_fibres(c);
  add_box_region(c, "bueno_orovio_2008_endo", {0, 0, 0}, {6, 2.5, 2});
  c.stimuli.push_back(box_stimulus({0, 0, 0}, {1.5, 5, 4}));
  {
    SimulationOptions o;
    o.backend = Backend::cuda;
    Simulation probe(c, o);
    EXPECT_NE(probe.describe().find("compressed rows"), std::string::npos) << probe.describe();
  }
  compare_with_reference(c, 16, "3D ellipsoidal shell in compressed rows, rotating fibres");
}

TEST(CudaTissue, PhaseFieldShell) {
  HW_REQUIRE_GPU();
  TissueCase c = sheet(24, 20, 16, 0.25, "bueno_orovio_2008_epi");
  ellipsoid_shell(c);
  c.geometry.phase_field = true;
  c.stimuli.push_back(box_stimulus({0, 0, 0}, {1.5, 5, 4}));
  compare_with_reference(c, 16, "3D shell with a phase-field boundary");
}

TEST(CudaTissue, MaskedSlabGradientS1S2) {
  HW_REQUIRE_GPU();
  TissueCase c = sheet(40, 24, 1, 0.25, "tentusscher_2006_epi");
  c.geometry.kind = GeometrySpec::Kind::slab_with_hole;
  c.geometry.centre = {5, 3, 0.125};
  c.geometry.hole_radius = 1.2;
  c.fibres.kind = FibreSpec::Kind::uniform;
  c.fibres.direction = {1, 0.3, 0};
  ParameterGradient gr;
  gr.param = "g_Ks";
  gr.axis = 0;
  gr.from = 0.5;
  gr.to = 1.5;
  c.gradients.push_back(gr);
  c.stimuli.push_back(box_stimulus({0, 0, 0}, {0.75, 6, 1}));           // S1 along the left edge
  auto s2 = box_stimulus({0, 0, 0}, {10, 3, 1}, 80, 1);                   // S2 on the lower half
  s2.start = 6;
  c.stimuli.push_back(s2);
  c.initial.push_back(box_initial({8, 0, 0}, {10, 6, 1}, "V", -20));     // a patch already up
  compare_with_reference(c, 12, "2D slab with a hole, g_Ks gradient, S1-S2, initial patch, TT06");
}

// cuda → cpu, cpu → cuda continue where the other left off; cuda → cuda bit-identically.
TEST(CudaTissue, RestartsAcrossEngines) {
  HW_REQUIRE_GPU();
  TissueCase c = sheet(20, 14, 6, 0.25, "tentusscher_2006_epi");
  c.fibres.kind = FibreSpec::Kind::rotating;
  c.stimuli.push_back(box_stimulus({0, 0, 0}, {0.75, 4, 2}));
  for (Precision prec : {Precision::f64, Precision::f32}) {
    c.time.precision = prec;
    SimulationOptions gpu, cpu;
    gpu.backend = Backend::cuda;
    cpu.backend = Backend::cpu;
    cpu.threads = 2;
    Simulation a(c, gpu);
    for (int n = 0; n < 80; ++n) a.step();
    const auto at80 = a.save_state();
    for (int n = 0; n < 120; ++n) a.step();
    // cuda → cuda: bit-identical.
    Simulation b(c, gpu);
    b.load_state(at80);
    b.run_until(a.time());
    EXPECT_EQ(a.save_state(), b.save_state());
    // cuda → cpu and cpu → cuda: the same run to rounding.
    Simulation on_cpu(c, cpu);
    on_cpu.load_state(at80);
    on_cpu.run_until(a.time());
    Simulation back(c, gpu);
    back.load_state(on_cpu.save_state());
    EXPECT_EQ(back.save_state(), on_cpu.save_state());  // load/save through the device is exact
    Field<float> fa, fc;
    a.voltage(fa);
    on_cpu.voltage(fc);
    double d = 0;
    for (std::size_t n = 0; n < fa.size(); ++n) d = std::max(d, double(std::fabs(fa[n] - fc[n])));
    std::printf("[measured] restart cuda -> cpu (%s): max |V_cuda - V_cpu| after 120 more steps %.3g mV\n",
                prec == Precision::f64 ? "double" : "float", d);
    EXPECT_LT(d, prec == Precision::f64 ? 1e-6 : 0.5);
  }
}

// The NaN policy: the same failing cell, variable and time as the cpu engine, and the last
// good state kept, also when the failure happens inside a batch (run_until).
TEST(CudaTissue, NumericalErrorNamesCellAndKeepsState) {
  HW_REQUIRE_GPU();
  TissueCase c = sheet(16, 12, 1, 0.25, "tentusscher_2006_epi");
  c.time.integrator = "fe";
  c.time.dt = 0.05;
  c.stimuli.push_back(box_stimulus({1, 1, 0}, {1.5, 1.5, 1}, 1e9, 1));
  c.stimuli.back().start = 0.5;
  auto fail = [&](Backend b, bool batch, std::vector<std::uint8_t>* state) {
    SimulationOptions o;
    o.backend = b;
    Simulation s(c, o);
    try {
      if (batch)
        s.run_until(5);
      else
        for (int n = 0; n < 100; ++n) s.step();
    } catch (const NumericalError& e) {
      *state = s.save_state();
      return std::make_tuple(e.time, e.cell, e.variable, s.steps_done());
    }
    ADD_FAILURE() << "no numerical error";
    return std::make_tuple(0.0, std::array<int, 3>{}, std::string(), 0L);
  };
  std::vector<std::uint8_t> s_cpu, s_step, s_batch;
  const auto cpu = fail(Backend::cpu, false, &s_cpu);
  const auto one = fail(Backend::cuda, false, &s_step);
  const auto batch = fail(Backend::cuda, true, &s_batch);
  std::printf("[measured] NaN: cpu t=%g cell (%d,%d,%d) %s step %ld; cuda t=%g (%d,%d,%d) %s step %ld\n",
              std::get<0>(cpu), std::get<1>(cpu)[0], std::get<1>(cpu)[1], std::get<1>(cpu)[2],
              std::get<2>(cpu).c_str(), std::get<3>(cpu), std::get<0>(one), std::get<1>(one)[0],
              std::get<1>(one)[1], std::get<1>(one)[2], std::get<2>(one).c_str(), std::get<3>(one));
  EXPECT_EQ(one, cpu);
  EXPECT_EQ(batch, cpu);
  EXPECT_EQ(s_step, s_batch);
}

TEST(CudaTissue, RefusesWhatItCannotDoByKey) {
  HW_REQUIRE_GPU();
  SimulationOptions o;
  o.backend = Backend::cuda;
  // The fourth-order stencil's conditions, as on the cpu: σ isotropic, no mask.
  TissueCase masked = sheet(24, 20, 16, 0.25, "bueno_orovio_2008_epi");
  ellipsoid_shell(masked);
  masked.conductivity.order = StencilOrder::fourth;
  try {
    Simulation s(masked, o);
    ADD_FAILURE() << "a fourth-order case with a mask was accepted on the GPU";
  } catch (const hw::Error& e) {
    EXPECT_NE(std::string(e.what()).find("box domains only"), std::string::npos) << e.what();
  }
}

// The fourth-order stencil (seed 001 §2.3) on the device: mirrored neighbours two cells away
// at no-flux walls, wrapped ones across a periodic wall, explicit and inside the CG.
TEST(CudaTissue, FourthOrderStencil) {
  HW_REQUIRE_GPU();
  TissueCase box = sheet(23, 17, 11, 0.25, "bueno_orovio_2008_epi");
  box.conductivity.order = StencilOrder::fourth;
  box.conductivity.sigma_t = box.conductivity.sigma_l;
  box.grid.bc[0] = Boundary::periodic;
  box.stimuli.push_back(box_stimulus({2, 0, 0}, {3, 5, 3}));
  compare_with_reference(box, 12, "23x17x11 box, fourth-order stencil, periodic x");
  TissueCase cn = sheet(31, 9, 1, 0.25, "bueno_orovio_2008_epi");
  cn.conductivity.order = StencilOrder::fourth;
  cn.conductivity.sigma_t = cn.conductivity.sigma_l;
  cn.time.diffusion = DiffusionScheme::crank_nicolson;
  cn.time.cg_tolerance = 1e-12;
  cn.stimuli.push_back(box_stimulus({0, 0, 0}, {0.75, 3, 1}));
  // The reference solves with a CG of its own (unpreconditioned for the fourth-order
  // stencil, stopped on the true residual), the GPU with Jacobi-PCG stopped on the
  // recurrence residual, both to 1e-12: their solutions differ within that tolerance, and
  // 100 steps through an upstroke left 4.0e-10 of V (H200, 7cf11d0). The bar is 1e-8.
  compare_with_reference(cn, 12, "31x9 sheet, fourth-order stencil, Crank-Nicolson", 1e-8);
}

// Implicit diffusion by CG on the device: backward Euler and Crank-Nicolson, on a box, on a
// shell in compressed rows with fibres, and with a phase field (the Φ-weighted system). The
// CG tolerance is tight so that the comparison sees the engines, not the stopping test. The
// GPU starts each solve from an increment predicted from the last two (implicit.hpp), the
// reference from V, and both stop within 1e-12: 100 steps through an upstroke left up to
// 8.2e-10 of V between them (H100, 3f0ba29; 1.1e-10 with a zero guess). The bar is 1e-8, as
// for the fourth-order stencil's CG below.
TEST(CudaTissue, ImplicitDiffusion) {
  HW_REQUIRE_GPU();
  TissueCase box = sheet(21, 13, 7, 0.25, "bueno_orovio_2008_epi");
  box.time.diffusion = DiffusionScheme::backward_euler;
  box.time.cg_tolerance = 1e-12;
  box.stimuli.push_back(box_stimulus({0, 0, 0}, {0.75, 4, 2}));
  compare_with_reference(box, 8, "21x13x7 box, backward Euler by CG", 1e-8);
  TissueCase shell = sheet(24, 20, 16, 0.25, "bueno_orovio_2008_epi");
  ellipsoid_shell(shell);
  shell.fibres.kind = FibreSpec::Kind::rotating;
  shell.time.diffusion = DiffusionScheme::crank_nicolson;
  shell.time.cg_tolerance = 1e-12;
  shell.time.splitting = Splitting::strang;
  shell.stimuli.push_back(box_stimulus({0, 0, 0}, {1.5, 5, 4}));
  compare_with_reference(shell, 12, "shell in compressed rows, rotating fibres, Crank-Nicolson, Strang", 1e-8);
  shell.geometry.phase_field = true;
  shell.fibres.kind = FibreSpec::Kind::none;
  compare_with_reference(shell, 12, "shell with a phase field, Crank-Nicolson (Phi-weighted CG)", 1e-8);
}

// Implicit diffusion's warm start (tissue/cuda/implicit.hpp): each solve starts from an
// increment predicted from the last ones, so a run restarted from a saved state (which
// starts from a zero guess) agrees with the run it was saved from within the CG tolerance,
// and two restarts from the same state agree bit for bit. The guess must also save
// iterations on a travelling wave.
TEST(CudaTissue, ImplicitRestartRepeatsItselfAndAgreesWithinTheTolerance) {
  HW_REQUIRE_GPU();
  TissueCase c = sheet(40, 14, 6, 0.25, "bueno_orovio_2008_epi");
  c.time.diffusion = DiffusionScheme::crank_nicolson;
  c.stimuli.push_back(box_stimulus({0, 0, 0}, {0.75, 4, 2}));
  SimulationOptions o;
  o.backend = Backend::cuda;
  for (Precision prec : {Precision::f64, Precision::f32}) {
    c.time.precision = prec;
    Simulation a(c, o);
    for (int n = 0; n < 150; ++n) a.step();
    const auto saved = a.save_state();
    for (int n = 0; n < 150; ++n) a.step();
    Simulation b(c, o), again(c, o);
    b.load_state(saved);
    b.run_until(a.time());
    again.load_state(saved);
    again.run_until(a.time());
    EXPECT_EQ(b.save_state(), again.save_state());
    Field<float> fa, fb;
    a.voltage(fa);
    b.voltage(fb);
    double d = 0;
    for (std::size_t n = 0; n < fa.size(); ++n) d = std::max(d, double(std::fabs(fa[n] - fb[n])));
    // The same run with a zero guess (HEARTWAVE_CG_GUESS=none): more iterations, the same V
    // within the tolerance.
    setenv("HEARTWAVE_CG_GUESS", "none", 1);
    Simulation cold(c, o);
    unsetenv("HEARTWAVE_CG_GUESS");
    cold.run_until(a.time());
    Field<float> fc;
    cold.voltage(fc);
    double dc = 0;
    for (std::size_t n = 0; n < fa.size(); ++n) dc = std::max(dc, double(std::fabs(fa[n] - fc[n])));
    std::printf("[measured] CN %s: restarted against uninterrupted, max |dV| %.3g mV; warm against a zero guess "
                "%.3g mV; CG iterations per solve %.2f warm, %.2f from zero\n",
                prec == Precision::f64 ? "double" : "float", d, dc, a.cg_iterations(), cold.cg_iterations());
    // CG stops at ‖r‖ ≤ 1e-8·‖b‖ in double (the default), 1e-6 in float; 300 steps through
    // an upstroke left 5.3e-4 and 8.8e-3 mV between the guesses (H100, 3f0ba29).
    EXPECT_LT(d, prec == Precision::f64 ? 5e-3 : 0.05);
    EXPECT_LT(dc, prec == Precision::f64 ? 5e-3 : 0.05);
    EXPECT_LT(a.cg_iterations(), cold.cg_iterations());
  }
}

// Several cells' V in one read (Simulation::voltages_at: copies on the device, one wait) equal
// the same cells read one by one, on compressed rows with cells off the tissue among them.
TEST(CudaTissue, VoltagesAtInOneReadEqualOneByOne) {
  HW_REQUIRE_GPU();
  TissueCase c = sheet(24, 20, 16, 0.25, "bueno_orovio_2008_epi");
  ellipsoid_shell(c);
  c.stimuli.push_back(box_stimulus({0, 0, 0}, {1.5, 5, 4}));
  SimulationOptions o;
  o.backend = Backend::cuda;
  Simulation sim(c, o);
  for (int n = 0; n < 200; ++n) sim.step();
  std::vector<std::size_t> cells;
  for (std::size_t n = 0; n < c.grid.size(); n += 97) cells.push_back(n);
  std::vector<double> v;
  sim.voltages_at(cells, v);
  ASSERT_EQ(v.size(), cells.size());
  std::size_t tissue = 0;
  for (std::size_t q = 0; q < cells.size(); ++q) {
    const double one = sim.voltage_at(cells[q]);
    ASSERT_EQ(std::isnan(one), std::isnan(v[q])) << cells[q];
    if (std::isnan(one)) continue;
    EXPECT_EQ(one, v[q]) << cells[q];
    ++tissue;
  }
  EXPECT_GT(tissue, 0u);
  EXPECT_LT(tissue, cells.size());  // some were off the tissue
}

// The activation and APD90 maps kept on the device (ActivationTracker::attach) against the
// same tracker fed with V copied to the host after every step: the same samples through
// the same update (kernels/activation_k.hpp).
// Lookup tables (time.cell_maths = "tables") in the GPU's kernels: the bounds of issue 29
// against the same kernels printed exactly (test_tissue_util.hpp, expect_tables_within_bounds_in_tissue).
TEST(CudaTissue, TablesWithinOneDtAndHalfAPercentOfCv) {
  HW_REQUIRE_GPU();
  hw::tissue::testing::expect_cell_maths_within_bounds_in_tissue(Backend::cuda, "cuda", {.tables = true});
}

// The GPU's fast intrinsics (time.cell_maths = "fast", "tables+fast"), float only: the same
// bounds against the float kernels printed exactly.
TEST(CudaTissue, FastMathsWithinOneDtAndHalfAPercentOfCv) {
  HW_REQUIRE_GPU();
  hw::tissue::testing::expect_cell_maths_within_bounds_in_tissue(Backend::cuda, "cuda", {.fast = true});
  hw::tissue::testing::expect_cell_maths_within_bounds_in_tissue(Backend::cuda, "cuda", {.tables = true, .fast = true});
}

TEST(CudaTissue, ActivationMapsOnTheDevice) {
  HW_REQUIRE_GPU();
  TissueCase c = sheet(48, 20, 1, 0.25, "tentusscher_2006_epi");
  c.time.dt = 0.05;
  c.stimuli.push_back(box_stimulus({0, 0, 0}, {0.75, 5, 1}));
  SimulationOptions o;
  o.backend = Backend::cuda;
  Simulation on_host(c, o), on_device(c, o);
  hw::io::ActivationTracker host(c.grid, nullptr, -20, true), device(c.grid, nullptr, -20, true);
  Field<float> v;
  on_host.voltage(v);
  host.update(0, v);
  device.update(0, v);
  ASSERT_TRUE(device.attach(on_device));
  for (int n = 0; n < 8000; ++n) {  // 400 ms: the whole sheet activates and repolarises
    on_host.step();
    on_host.voltage(v);
    host.update(on_host.time(), v);
  }
  on_device.run_until(400);
  double dact = 0, dapd = 0;
  std::size_t apds = 0;
  for (std::size_t n = 0; n < v.size(); ++n) {
    ASSERT_EQ(std::isnan(host.activation()[n]), std::isnan(device.activation()[n])) << n;
    ASSERT_EQ(std::isnan(host.apd90()[n]), std::isnan(device.apd90()[n])) << n;
    if (!std::isnan(host.activation()[n]))
      dact = std::max(dact, double(std::fabs(host.activation()[n] - device.activation()[n])));
    if (!std::isnan(host.apd90()[n])) {
      ++apds;
      dapd = std::max(dapd, double(std::fabs(host.apd90()[n] - device.apd90()[n])));
    }
  }
  std::printf("[measured] activation maps on the device vs on the host: %zu activated, %zu APD90s; "
              "max difference %.3g ms (activation), %.3g ms (APD90)\n",
              device.activated_cells(), apds, dact, dapd);
  EXPECT_EQ(device.activated_cells(), c.grid.size());
  EXPECT_EQ(apds, c.grid.size());
  EXPECT_LT(dact, 1e-4);
  EXPECT_LT(dapd, 1e-3);
}

// The stimuli as laid fields (tissue/cuda/stimuli.hpp): 40 of them, staggered and
// overlapping, more than the old 32-bit mask held, against the reference; then one added
// while the run goes on (between batches that run as CUDA graphs) acts exactly as one in
// the case, graphs or not.
TEST(CudaTissue, ManyStimuliAndOneAddedWhileRunning) {
  HW_REQUIRE_GPU();
  TissueCase c = hw::tissue::testing::many_stimuli_sheet();
  compare_with_reference(c, 8, "24x40 sheet, 40 stimuli, two models");
  Stimulus later = box_stimulus({4, 8, 0}, {5, 9, 0.25}, 60, 1);
  later.start = 12;
  // A case with stimuli, and one with none (its kernels compiled without the stimulus
  // field, compiled again when the first is added).
  TissueCase bare = c;
  bare.stimuli.clear();
  for (const char* graphs : {"1", "0"})
    for (const TissueCase* base : {&c, &bare}) {
      SCOPED_TRACE(base == &c ? "a case with 40 stimuli" : "a case with none");
      setenv("HEARTWAVE_CUDA_GRAPHS", graphs, 1);
      TissueCase with = *base;
      with.stimuli.push_back(later);
      SimulationOptions o;
      o.backend = Backend::cuda;
      Simulation a(with, o), live(*base, o);
      a.run_until(10);
      live.run_until(10);
      live.add_stimulus(later);
      const std::vector<std::uint8_t> saved = live.save_state();
      a.run_until(30);
      live.run_until(30);
      Field<float> va, vl, vr;
      a.voltage(va);
      live.voltage(vl);
      EXPECT_EQ(va.vec(), vl.vec()) << "graphs " << graphs;
      EXPECT_GT(live.voltage_at(base->grid.index(18, 34, 0)), -60) << "the added stimulus did not fire";
      // Through a checkpoint: a simulation of the case alone continues with it.
      Simulation resumed(*base, o);
      resumed.load_state(saved);
      resumed.run_until(30);
      resumed.voltage(vr);
      EXPECT_EQ(va.vec(), vr.vec()) << "graphs " << graphs;
    }
  unsetenv("HEARTWAVE_CUDA_GRAPHS");
}

// The maps are a sink the run holds: dropped, the kernel stops updating them (and the
// graphs built with them go); attached again, a fresh sink follows from then on.
TEST(CudaTissue, ActivationSinkDroppedAndAttachedAgain) {
  HW_REQUIRE_GPU();
  TissueCase c = sheet(40, 12, 1, 0.25, "bueno_orovio_2008_epi");
  c.time.dt = 0.05;
  c.stimuli.push_back(box_stimulus({0, 0, 0}, {0.75, 3, 0.25}));
  SimulationOptions o;
  o.backend = Backend::cuda;
  Simulation sim(c, o);
  ActivationMaps m;
  m.act.assign(c.grid.size(), std::numeric_limits<float>::quiet_NaN());
  auto first = sim.attach_activation(m);
  ASSERT_TRUE(first);
  EXPECT_FALSE(sim.attach_activation(m)) << "the kernel has one slot for maps";
  sim.run_until(2);  // graphs carry the maps
  first.reset();
  sim.run_until(6);  // the front crosses the sheet with no maps held
  auto second = sim.attach_activation(m);
  ASSERT_TRUE(second);
  sim.run_until(8);
  ActivationMaps got;
  second->read(got);
  std::size_t activated = 0;
  float earliest = 1e30f;
  for (float t : got.act)
    if (!std::isnan(t)) {
      ++activated;
      earliest = std::min(earliest, t);
    }
  std::printf("[measured] a sink attached at 6 ms: %zu cells activated from %.3f ms\n", activated, earliest);
  EXPECT_GT(activated, 0u);
  EXPECT_GE(earliest, 6.0f) << "the second sink saw activations from before it was attached";
}

// Batches of steps without a stimulus run as CUDA graphs; with HEARTWAVE_CUDA_GRAPHS=0 every
// kernel is launched on its own. Both must give the same bits: Strang with sub-steps (two
// passes a step), a periodic stimulus (batches with and without it), activation and APD90
// maps on the device, and a run length that is no multiple of the batch.
TEST(CudaTissue, GraphsChangeNothing) {
  HW_REQUIRE_GPU();
  TissueCase c = sheet(37, 23, 3, 0.25, "tentusscher_2006_epi");
  c.time.dt = 0.02;
  c.time.splitting = Splitting::strang;
  c.time.ode_substeps = 2;
  Stimulus s = box_stimulus({0, 0, 0}, {0.75, 5, 1});
  s.period = 150;
  s.count = 3;
  c.stimuli.push_back(s);
  for (Precision prec : {Precision::f64, Precision::f32}) {
    c.time.precision = prec;
    const GraphRun with = run_with_graphs_or_not(c, true, 331.3);
    const GraphRun without = run_with_graphs_or_not(c, false, 331.3);
    EXPECT_EQ(with.state, without.state);
    EXPECT_TRUE(same_bits(with.act, without.act));
    EXPECT_TRUE(same_bits(with.apd, without.apd));
    std::printf("[measured] CUDA graphs against single launches (%s): state and maps bit-identical: %s\n",
                prec == Precision::f64 ? "double" : "float", with.state == without.state ? "yes" : "no");
    EXPECT_NE(with.info.find("ran as CUDA graphs"), std::string::npos) << with.info;
  }
}

// Implicit diffusion in CUDA graphs: each solve's iterations are a loop on the device that
// its kernels end (tissue/cuda/implicit.hpp). The same run with HEARTWAVE_CUDA_GRAPHS=0
// queues them from the host in chunks and reads the scalars after each: the kernels are the
// same, so state, maps and iterations must be the same bits. A box with backward Euler and
// Godunov; the shell in compressed rows (the CG over a cell list) with fibres,
// Crank-Nicolson, Strang and a periodic stimulus (batches with and without it).
TEST(CudaTissue, ImplicitStepsInGraphsChangeNothing) {
  HW_REQUIRE_GPU();
  TissueCase box = sheet(33, 17, 9, 0.25, "bueno_orovio_2008_epi");
  box.time.diffusion = DiffusionScheme::backward_euler;
  box.stimuli.push_back(box_stimulus({0, 0, 0}, {0.75, 4, 2}));
  TissueCase shell = sheet(24, 20, 16, 0.25, "bueno_orovio_2008_epi");
  ellipsoid_shell(shell);
  shell.fibres.kind = FibreSpec::Kind::rotating;
  shell.time.diffusion = DiffusionScheme::crank_nicolson;
  shell.time.splitting = Splitting::strang;
  Stimulus s = box_stimulus({0, 0, 0}, {1.5, 5, 4});
  s.period = 12;
  s.count = 2;
  shell.stimuli.push_back(s);
  for (TissueCase* c : {&box, &shell})
    for (Precision prec : {Precision::f64, Precision::f32}) {
      c->time.precision = prec;
      const GraphRun with = run_with_graphs_or_not(*c, true, 20.3);
      const GraphRun without = run_with_graphs_or_not(*c, false, 20.3);
      const char* what = c == &box ? "box, backward Euler" : "shell, Crank-Nicolson, Strang";
      EXPECT_EQ(with.state, without.state) << what;
      EXPECT_TRUE(same_bits(with.act, without.act)) << what;
      EXPECT_TRUE(same_bits(with.apd, without.apd)) << what;
      EXPECT_EQ(with.cg_iterations, without.cg_iterations) << what;
      EXPECT_GT(with.cg_iterations, 0.5) << what;
      std::printf("[measured] implicit steps in CUDA graphs against host-driven solves (%s, %s): state and maps "
                  "bit-identical: %s; CG iterations per solve %.3f and %.3f\n",
                  what, prec == Precision::f64 ? "double" : "float", with.state == without.state ? "yes" : "no",
                  with.cg_iterations, without.cg_iterations);
      EXPECT_NE(with.info.find("ran as CUDA graphs (the CG's iterations a loop on the device)"), std::string::npos)
          << with.info;
      EXPECT_EQ(without.info.find("ran as CUDA graphs"), std::string::npos) << without.info;
    }
}

// A CG solve that does not converge stops the run at its step with the solver's numbers,
// whether its iterations ran as a loop in a CUDA graph (run_until: batches) or were queued
// by the host (step() one at a time); the steps before it stand. One iteration allowed, at
// a tolerance one iteration cannot meet: V at rest is uniform, so the solves converge at
// once (the residual is exactly zero) until a one-step stimulus at step 63; the solve of
// step 64, the first of a graph, is the first to fail.
TEST(CudaTissue, ImplicitSolveThatCannotConvergeStopsAtItsStep) {
  HW_REQUIRE_GPU();
  TissueCase c = sheet(21, 13, 7, 0.25, "bueno_orovio_2008_epi");
  c.time.diffusion = DiffusionScheme::crank_nicolson;
  c.time.precision = Precision::f64;
  c.time.cg_tolerance = 1e-12;
  c.time.cg_max_iterations = 1;
  Stimulus s = box_stimulus({0, 0, 0}, {0.75, 4, 2});
  s.start = 63 * c.time.dt;
  s.duration = c.time.dt;
  c.stimuli.push_back(s);
  SimulationOptions o;
  o.backend = Backend::cuda;
  std::string in_graph, by_host, info;
  long steps_graph = -1, steps_host = -1;
  {
    Simulation sim(c, o);
    try {
      sim.run_until(3);
    } catch (const hw::Error& e) {
      in_graph = e.what();
    }
    steps_graph = sim.steps_done();
    info = sim.describe();
  }
  {
    Simulation sim(c, o);
    try {
      while (sim.time() < 3) sim.step();
    } catch (const hw::Error& e) {
      by_host = e.what();
    }
    steps_host = sim.steps_done();
  }
  std::printf("[measured] a CG that cannot converge: in a graph \"%s\" after %ld steps; queued by the host \"%s\" "
              "after %ld steps\n", in_graph.c_str(), steps_graph, by_host.c_str(), steps_host);
  EXPECT_NE(in_graph.find("CG did not converge in 1 iteration "), std::string::npos) << in_graph;
  EXPECT_NE(in_graph.find("(step 64)"), std::string::npos) << in_graph;
  EXPECT_EQ(in_graph, by_host);
  EXPECT_EQ(steps_graph, 64);
  EXPECT_EQ(steps_host, 64);
  EXPECT_NE(info.find("ran as CUDA graphs"), std::string::npos) << info;
}

// A field snapshot is copied on the device and reaches the host on a stream of its own
// while the steps queued after it run (gpu::HostCopy): read after 200 more steps, it holds
// the step it was taken at, bit for bit as field() gave it then, for V and for a state that
// two model regions share (in compressed rows: the ellipsoid shell).
TEST(CudaTissue, SnapshotsHoldTheirStepWhileStepsGoOn) {
  HW_REQUIRE_GPU();
  TissueCase c = sheet(24, 20, 16, 0.25, "bueno_orovio_2008_epi");
  ellipsoid_shell(c);
  add_box_region(c, "bueno_orovio_2008_endo", {0, 0, 0}, {6, 2.5, 2});
  c.stimuli.push_back(box_stimulus({0, 0, 0}, {1.5, 5, 4}));
  for (Precision prec : {Precision::f64, Precision::f32}) {
    c.time.precision = prec;
    SimulationOptions o;
    o.backend = Backend::cuda;
    Simulation sim(c, o);
    sim.run_until(2);
    Field<float> v_then, w_then;
    ASSERT_TRUE(sim.field("V", v_then));
    ASSERT_TRUE(sim.field("w", w_then));
    std::unique_ptr<Snapshot> snap = sim.snapshot({"V", "w"});
    sim.run_until(4);  // queued behind the copies
    Field<float> v_now;
    sim.field("V", v_now);
    std::vector<Field<float>> got;
    snap->read(got);
    ASSERT_EQ(got.size(), 2u);
    ASSERT_EQ(got[0].size(), v_then.size());
    EXPECT_EQ(std::memcmp(got[0].data(), v_then.data(), v_then.size() * sizeof(float)), 0);
    EXPECT_EQ(std::memcmp(got[1].data(), w_then.data(), w_then.size() * sizeof(float)), 0);
    EXPECT_NE(std::memcmp(v_now.data(), v_then.data(), v_then.size() * sizeof(float)), 0);
    // The pooled copies serve the next snapshot, also after one dropped unread.
    sim.snapshot({"V", "w"}).reset();
    std::vector<Field<float>> again;
    sim.snapshot({"V"})->read(again);
    EXPECT_EQ(std::memcmp(again[0].data(), v_now.data(), v_now.size() * sizeof(float)), 0);
  }
  EXPECT_THROW(Simulation(c, SimulationOptions{Backend::cuda}).snapshot({"no_such_state"}), hw::Error);
}

// The pseudo-ECG summed on the device (a few doubles reach the host per sample) against the
// host's sum over a copy of V through the cpu operator: a box with uniform σ, and a shell
// in compressed rows with rotating fibres (edge links) and a phase field, in double and
// float, with electrodes outside, on and inside the tissue, and more electrodes than one
// launch takes.
TEST(CudaTissue, PseudoEcgOnTheDevice) {
  HW_REQUIRE_GPU();
  TissueCase box = sheet(21, 13, 9, 0.25, "bueno_orovio_2008_epi");
  box.stimuli.push_back(box_stimulus({0, 0, 0}, {0.75, 5, 4}));
  TissueCase shell = sheet(24, 20, 16, 0.25, "bueno_orovio_2008_epi");
  ellipsoid_shell(shell);
  rotating_fibres(shell);
  shell.geometry.phase_field = true;
  shell.stimuli.push_back(box_stimulus({0, 0, 0}, {1.5, 5, 4}));
  std::vector<hw::io::ElectrodePoint> el;
  for (int q = 0; q < 11; ++q)
    el.push_back({"e" + std::to_string(q), {-3.0 + 1.3 * q, 2.5 - 0.4 * q, q % 3 == 0 ? 8.0 : 1.0}});
  el.push_back({"inside", {1.0, 1.0, 1.0}});
  for (const auto& [c0, what] : {std::pair{box, "box"}, std::pair{shell, "shell, fibres, phase field"}})
    for (Precision prec : {Precision::f64, Precision::f32}) {
      TissueCase c = c0;
      c.time.precision = prec;
      SimulationOptions o;
      o.backend = Backend::cuda;
      Simulation sim(c, o);
      hw::io::PseudoEcg device(c.grid, el), host(c.grid, el);
      const auto op = make_diffusion_operator(sim.diffusion(), Backend::cpu);
      Field<float> v;
      double worst = 0, scale = 0;
      for (double t : {2.0, 4.0, 6.0}) {
        sim.run_until(t);
        sim.voltage(v);
        const auto d = device.compute(sim), h = host.compute(*op, v);
        ASSERT_EQ(d.size(), el.size());
        for (std::size_t e = 0; e < el.size(); ++e) {
          ASSERT_TRUE(std::isfinite(d[e])) << e;
          worst = std::max(worst, std::fabs(d[e] - h[e]));
          scale = std::max(scale, std::fabs(h[e]));
        }
      }
      std::printf("[measured] pseudo-ECG on the device vs on the host, %s, %s: max |φ| %.4g mV, "
                  "max difference %.3g of it\n", what, prec == Precision::f64 ? "double" : "float", scale,
                  worst / scale);
      EXPECT_GT(scale, 0);
      // The host sums over V rounded to float; the device over V in the run's precision.
      EXPECT_LE(worst, 1e-4 * scale);
    }
}

// The kernel variants the tuner chooses between (a thread per cell, its register-capped and
// fenced copies, the sliding window, the window on the tower layout) compute the same sums
// in the same order: V, the states and the activation maps equal the thread-per-cell
// kernel's bit for bit, in double and float. The window and the tower run on every block
// shape and depth the tuner tries (its trials go round-robin over them, so the tower's halo
// slots are refilled at each change of shape), across periodic and no-flux walls, on grids
// that fill no block and a depth that does not divide nz, with Strang's reaction-only pass
// (the window), and through a restart halfway (the tower's slots then are the old V's).
TEST(CudaTissue, KernelVariantsGiveTheSameBits) {
  HW_REQUIRE_GPU();
  TissueCase periodic = sheet(37, 23, 19, 0.25, "tentusscher_2006_epi");
  periodic.grid.bc[0] = periodic.grid.bc[2] = Boundary::periodic;
  periodic.time.splitting = Splitting::strang;
  periodic.stimuli.push_back(box_stimulus({0, 0, 0}, {1, 6, 5}));
  TissueCase thin = sheet(45, 7, 5, 0.25, "bueno_orovio_2008_epi");
  thin.stimuli.push_back(box_stimulus({0, 0, 0}, {1, 2, 2}));
  // Godunov, periodic in x and y: the tower's slots wrap around the box.
  TissueCase ring = sheet(71, 13, 9, 0.25, "bueno_orovio_2008_epi");
  ring.grid.bc[0] = ring.grid.bc[1] = Boundary::periodic;
  ring.stimuli.push_back(box_stimulus({0, 0, 0}, {1, 3, 2}));
  struct Out {
    Field<float> v, state;
    std::vector<float> act;
    std::vector<std::uint8_t> state_bytes;  // every state and V in the run's precision
    std::string info;
  };
  auto run_kernel = [](const TissueCase& c, const char* kernel, const char* state) {
    setenv("HEARTWAVE_CUDA_KERNEL", kernel, 1);
    SimulationOptions o;
    o.backend = Backend::cuda;
    Simulation sim(c, o);
    ActivationMaps maps;
    maps.act.assign(c.grid.size(), std::numeric_limits<float>::quiet_NaN());
    const auto sink = sim.attach_activation(maps);
    EXPECT_TRUE(sink);
    sim.run_until(4);
    sim.load_state(sim.save_state());
    sim.run_until(8);  // 400 steps: the tuner's trials, then its choice
    Out out;
    sim.voltage(out.v);
    EXPECT_TRUE(sim.field(state, out.state));
    sink->read(maps);
    out.act = maps.act;
    out.state_bytes = sim.save_state();
    out.info = sim.describe();
    unsetenv("HEARTWAVE_CUDA_KERNEL");
    return out;
  };
  // A sheet: the several-steps kernels march it along y in rows of x.
  TissueCase flat = sheet(61, 29, 1, 0.25, "bueno_orovio_2008_epi");
  flat.grid.bc[1] = Boundary::periodic;
  flat.stimuli.push_back(box_stimulus({0, 0, 0}, {1, 7.25, 0.25}));
  for (const auto& [c0, state] :
       {std::pair{periodic, "Ca_i"}, std::pair{thin, "v"}, std::pair{ring, "v"}, std::pair{flat, "v"}})
    for (Precision prec : {Precision::f64, Precision::f32}) {
      TissueCase c = c0;
      c.time.precision = prec;
      const Out cell = run_kernel(c, "cell", state);
      const std::pair<const char*, const char*> variants[] = {
          {"window", "sliding window"}, {"tower", "tower"},          {"capped", "capped at"},
          {"fenced", "fenced"},         {"fenced-capped", "fenced, capped"}, {"steps3", "3 steps per pass"},
          {"steps5", "5 steps per pass"}};
      for (const auto& [variant, described] : variants) {
        const Out other = run_kernel(c, variant, state);
        const bool has = other.info.find(described) != std::string::npos;
        if (std::string(variant) == "window") EXPECT_TRUE(has) << other.info;
        // The tower on every Godunov case, none where Strang's reaction-only pass would leave
        // its slots stale.
        if (std::string(variant) == "tower") EXPECT_EQ(has, c.time.splitting == Splitting::godunov) << other.info;
        // Several steps per pass: Godunov and a small model (Bueno-Orovio's 4 states); five in float only.
        if (std::string(variant) == "steps3") EXPECT_EQ(has, c.time.splitting == Splitting::godunov) << other.info;
        if (std::string(variant) == "steps5")
          EXPECT_EQ(has, c.time.splitting == Splitting::godunov && prec == Precision::f32) << other.info;
        std::size_t differ = 0, activated = 0;
        for (std::size_t n = 0; n < c.grid.size(); ++n) {
          differ += std::memcmp(&cell.v[n], &other.v[n], sizeof(float)) != 0;
          differ += std::memcmp(&cell.state[n], &other.state[n], sizeof(float)) != 0;
          differ += std::memcmp(&cell.act[n], &other.act[n], sizeof(float)) != 0;
          activated += !std::isnan(cell.act[n]);
        }
        std::printf("[measured] %s vs a thread per cell, %dx%dx%d %s: %zu of %zu values differ, "
                    "%zu cells activated\n", has ? variant : "(no such variant) kernels", c.grid.n[0], c.grid.n[1],
                    c.grid.n[2], prec == Precision::f64 ? "double" : "float", differ, 3 * c.grid.size(), activated);
        EXPECT_EQ(differ, 0u);
        EXPECT_TRUE(cell.state_bytes == other.state_bytes);
        EXPECT_GT(activated, c.grid.size() / 4);
      }
    }
}

// Several steps per pass and the NaN policy: a pass that fails at any of its K steps goes
// back to the state it started from (in V's field and the states' buffer it read, which is
// the second buffer for the second pass of a pair) and steps on one step at a time to the
// failure, so the run stops as single steps stop it. One cell's V is set so high that
// Aliev-Panfilov's cubic term overflows a few steps later (calibrated on the cpu engine,
// which fails at step F); the GPU run takes j single steps and runs on in pairs of 3-step
// passes from step j, with F − j = 1 (the first pass fails) and F − j = 4 (the second). It
// must stop at F with the cpu's cell and variable, and keep, bit for bit, the state that the
// thread-per-cell kernel keeps when it fails there.
TEST(CudaTissue, SeveralStepsPassKeepsTheStateBeforeAFailure) {
  HW_REQUIRE_GPU();
  TissueCase c = sheet(14, 11, 9, 0.25, "aliev_panfilov_1996");
  c.time.integrator = "fe";
  c.time.dt = 0.01;
  const std::size_t hot = 5 + 14 * (4 + 11 * 3);
  auto set_hot = [&](Simulation& s, double u) {
    std::vector<double> v(c.grid.size(), std::numeric_limits<double>::quiet_NaN());  // NaN: kept
    v[hot] = u;
    ASSERT_TRUE(s.set_field("V", v));
  };
  struct Failed {
    long steps = -1;
    std::array<int, 3> cell{};
    std::string variable;
    std::vector<std::uint8_t> state;
  };
  auto run = [&](Backend b, const char* kernel, double u, long singles) {
    if (kernel) setenv("HEARTWAVE_CUDA_KERNEL", kernel, 1);
    SimulationOptions o;
    o.backend = b;
    Simulation s(c, o);
    set_hot(s, u);
    Failed f;
    try {
      for (long n = 0; n < singles; ++n) s.step();
      s.run_until(2);
      ADD_FAILURE() << "no numerical error";
    } catch (const NumericalError& e) {
      f = {s.steps_done(), e.cell, e.variable, s.save_state()};
    }
    unsetenv("HEARTWAVE_CUDA_KERNEL");
    return f;
  };
  // The first value whose overflow comes 4 to 60 steps in (on the cpu at 11-28: 6.5 mV, step
  // 5; below 6.1 mV the cell recovers).
  double u = 0;
  Failed cpu;
  for (double x : {6.5, 6.2, 7.2}) {
    cpu = run(Backend::cpu, nullptr, x, 0);
    if (cpu.steps >= 4 && cpu.steps <= 60) {
      u = x;
      break;
    }
  }
  std::printf("[measured] u = %g at one cell: the cpu engine fails at step %ld, cell (%d,%d,%d) %s\n", u, cpu.steps,
              cpu.cell[0], cpu.cell[1], cpu.cell[2], cpu.variable.c_str());
  ASSERT_GT(u, 0) << "no value of u overflowed 4 to 60 steps in; the test needs another";
  for (const long before : {1L, 4L}) {
    const long singles = cpu.steps - before;
    const Failed steps = run(Backend::cuda, "steps3", u, singles);
    const long kept = cpu.steps;
    std::printf("[measured] 3 steps per pass from step %ld: stopped after %ld steps (expected %ld), cell (%d,%d,%d) "
                "%s\n", singles, steps.steps, kept, steps.cell[0], steps.cell[1], steps.cell[2], steps.variable.c_str());
    EXPECT_EQ(steps.steps, kept);
    EXPECT_EQ(steps.cell, cpu.cell);
    EXPECT_EQ(steps.variable, cpu.variable);
    // The thread-per-cell kernel's run into the same failure (its failing step has stepped
    // the other cells' states: the single-step policy, which the pair's rerun follows).
    const Failed one = run(Backend::cuda, "cell", u, singles);
    EXPECT_EQ(one.steps, kept);
    EXPECT_TRUE(one.state == steps.state) << "the state kept differs from the single steps' at step " << kept;
  }
}

// Engines on Devices of their own (device/device.hpp): two Devices opened on the same card
// (and on two cards where the host has them), each with its own context reference, streams
// and memory pool, step two engines in turn; each ends bit for bit where one engine alone
// on the default Device ends. Nothing may be shared by accident: a launch on the wrong
// stream or a buffer from the other pool would show as a difference or a driver error.
TEST(CudaTissue, TwoDevicesOnOneCard) {
  HW_REQUIRE_GPU();
  TissueCase c = sheet(21, 13, 9, 0.25, "bueno_orovio_2008_epi");
  c.stimuli.push_back(box_stimulus({0, 0, 0}, {0.75, 5, 4}));
  c.time.precision = Precision::f64;
  const SimSetup s = make_sim_setup(c, false);
  auto run = [&](const std::vector<std::shared_ptr<hw::gpu::Device>>& devices) {
    std::vector<std::unique_ptr<Engine>> engines;
    for (const auto& d : devices) {
      EngineOptions o;
      o.backend = Backend::cuda;
      o.on = d;
      engines.push_back(make_engine(s, o));
    }
    for (long n = 0; n < 200; ++n)
      for (auto& e : engines) e->step(n);
    std::vector<Field<float>> v(engines.size());
    for (std::size_t k = 0; k < engines.size(); ++k) engines[k]->voltage(v[k]);
    return v;
  };
  const auto alone = run({hw::gpu::Device::open(0)});
  std::vector<std::shared_ptr<hw::gpu::Device>> two{hw::gpu::Device::open(0), hw::gpu::Device::open(0)};
  if (hw::gpu::device_count() > 1) two.push_back(hw::gpu::Device::open(1));
  const auto side_by_side = run(two);
  for (std::size_t k = 0; k < side_by_side.size(); ++k) {
    ASSERT_EQ(side_by_side[k].size(), alone[0].size());
    EXPECT_EQ(std::memcmp(side_by_side[k].data(), alone[0].data(), alone[0].size() * sizeof(float)), 0)
        << "engine " << k << " on GPU " << two[k]->ordinal();
  }
  std::printf("[measured] %zu engines on %zu Devices (GPUs %s) side by side: V bit-identical to one engine alone\n",
              two.size(), two.size(), hw::gpu::device_count() > 1 ? "0, 0, 1" : "0, 0");
  EXPECT_NE(two[0]->compute().handle(), two[1]->compute().handle());
}
