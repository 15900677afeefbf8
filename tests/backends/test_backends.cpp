// One cross-backend test source, instantiated for every engine this build has: each case
// runs on the engine under test in double and in float and is compared with the reference
// engine (plain double loops over the box, its own naive CG for implicit diffusion, the
// interpreter per cell), which shares none of the fast path (what it does share, the set-up
// and the link walker, and why that is safe: tissue/reference_engine.cpp, docs/tissue.md).
// ctest label `backends`; the cuda instantiation skips, with the reason, where no GPU is
// usable (CI).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "device/driver.hpp"
#include "test_tissue_util.hpp"
#include "tissue/simulation.hpp"

using namespace hw::tissue;
using hw::tissue::testing::add_box_region;
using hw::tissue::testing::box_stimulus;
using hw::tissue::testing::ellipsoid_shell;
using hw::tissue::testing::ActivationRun;
using hw::tissue::testing::max_diff;
using hw::tissue::testing::run_with_activation;
using hw::tissue::testing::rotating_fibres;
using hw::tissue::testing::sheet;

namespace {

double max_vdiff(const Field<float>& a, const Field<float>& b) {
  double d = 0;
  for (std::size_t n = 0; n < a.size(); ++n)
    if (!std::isnan(a[n])) d = std::max(d, double(std::fabs(a[n] - b[n])));
  return d;
}

// What float runs must meet: V within v mV; with front_slack, a cell activated by one engine
// only passes when it crosses within two dt of t_end (a front cell whose last-step rounding
// decides).
// v64: what double runs must meet in V (mV, compared as float).
struct FloatBars {
  double v = 0.5;
  bool front_slack = false;
  double v64 = 1e-6;
};

class Backends : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (GetParam() == Backend::cuda && !hw::gpu::gpu_status().usable)
      GTEST_SKIP() << "no usable GPU: " << hw::gpu::gpu_status().why;
  }

  // The engine under test against the reference: double to rounding, float within one dt
  // of activation and a fraction of a mV (rounding amplified on the upstroke only).
  void compare(TissueCase c, double t_end, const char* what, FloatBars fb = {}) {
    const Backend b = GetParam();
    c.time.precision = Precision::f64;
    const ActivationRun ref = run_with_activation(c, Backend::reference, t_end);
    const ActivationRun e64 = run_with_activation(c, b, t_end);
    c.time.precision = Precision::f32;
    const ActivationRun e32 = run_with_activation(c, b, t_end);
    bool nan64 = false, nan32 = false;
    const double a64 = max_diff(ref.act, e64.act, &nan64), a32 = max_diff(ref.act, e32.act, &nan32);
    const double v64 = max_vdiff(ref.v, e64.v), v32 = max_vdiff(ref.v, e32.v);
    std::size_t activated = 0, tissue = 0;
    for (double t : ref.act) activated += !std::isnan(t);
    for (std::size_t n = 0; n < ref.v.size(); ++n) tissue += !std::isnan(ref.v[n]);
    std::printf("[measured] %s on %s: %zu cells activated; double vs reference: activation %.3g ms, "
                "V %.3g mV; float: activation %.3g ms, V %.3g mV\n",
                what, backend_name(b), activated, a64, v64, a32, v32);
    EXPECT_GT(activated, tissue / 2);
    EXPECT_TRUE(nan64) << "activated cells differ (double)";
    EXPECT_LT(a64, 1e-6);
    EXPECT_LT(v64, fb.v64);
    std::size_t at_front = 0, elsewhere = 0;
    for (std::size_t n = 0; n < ref.act.size(); ++n)
      if (std::isnan(ref.act[n]) != std::isnan(e32.act[n]))
        ++((std::isnan(ref.act[n]) ? e32.act[n] : ref.act[n]) >= t_end - 2 * c.time.dt ? at_front : elsewhere);
    if (at_front + elsewhere > 0)
      std::printf("[measured] %s, float: %zu cells activated by one engine only within 2 dt of "
                  "t_end, %zu elsewhere\n", what, at_front, elsewhere);
    if (fb.front_slack)
      EXPECT_EQ(elsewhere, 0u) << "activated cells differ away from the front (float)";
    else
      EXPECT_TRUE(nan32) << "activated cells differ (float)";
    EXPECT_LE(a32, c.time.dt);
    EXPECT_LT(v32, fb.v);
  }
};

}  // namespace

TEST_P(Backends, Sheet2DObliqueFibresTwoModels) {
  TissueCase c = sheet(30, 20, 1, 0.2, "bueno_orovio_2008_epi");
  c.fibres.kind = FibreSpec::Kind::uniform;
  c.fibres.direction = {1, 0.6, 0};  // oblique: 9-point stencil with edge links
  add_box_region(c, "tentusscher_2006_epi", {3, 0, 0}, {6, 2, 1});
  c.stimuli.push_back(box_stimulus({0, 0, 0}, {0.6, 4, 1}));
  compare(c, 12, "2D 30x20 oblique fibres, BO epi + TT06 epi");
}

// One model over the whole grid: the cpu engine steps the states and V in place, without
// the scratch batch of several regions; Strang splitting and ODE sub-steps on top.
TEST_P(Backends, WholeGridOneModelGodunovAndStrang) {
  TissueCase c = sheet(24, 16, 1, 0.2, "tentusscher_2006_epi");
  c.fibres.kind = FibreSpec::Kind::uniform;
  c.fibres.direction = {1, 0.4, 0};
  c.stimuli.push_back(box_stimulus({0, 0, 0}, {0.6, 3.2, 1}));
  compare(c, 12, "2D 24x16 oblique fibres, TT06 epi on the whole grid");
  c.time.splitting = Splitting::strang;
  c.time.ode_substeps = 2;
  compare(c, 12, "the same with Strang splitting and 2 ODE sub-steps");
}

TEST_P(Backends, Box3DRotatingFibresPeriodic) {
  TissueCase c = sheet(14, 8, 6, 0.25, "bueno_orovio_2008_epi");
  c.grid.bc[1] = Boundary::periodic;
  rotating_fibres(c);
  ModelRegion m2;
  m2.model = "bueno_orovio_2008_endo";
  m2.where.kind = Region::Kind::face;
  m2.where.face = "z-";
  m2.where.depth = 0.5;
  c.models.push_back(m2);
  c.stimuli.push_back(box_stimulus({0, 0, 0}, {0.5, 2, 1.5}));
  compare(c, 10, "3D 14x8x6 rotating fibres, periodic y, BO epi + endo");
}

TEST_P(Backends, MaskedSlabWithHole) {
  TissueCase c = sheet(30, 20, 1, 0.2, "bueno_orovio_2008_epi");
  c.geometry.kind = GeometrySpec::Kind::slab_with_hole;
  c.geometry.centre = {3, 2, 0.1};
  c.geometry.hole_radius = 1.0;
  c.fibres.kind = FibreSpec::Kind::uniform;
  c.fibres.direction = {1, 0, 0};
  c.stimuli.push_back(box_stimulus({0, 0, 0}, {0.6, 4, 1}));
  compare(c, 12, "2D 30x20 slab with a hole (mask), fibres along x");
}

// An ellipsoidal shell fills a third of its box: the fast engines keep V and the link
// coefficients in compressed rows around it, the reference the whole box.
TEST_P(Backends, ShellInCompressedRows) {
  TissueCase c = sheet(24, 20, 16, 0.25, "bueno_orovio_2008_epi");
  ellipsoid_shell(c);
  rotating_fibres(c);
  add_box_region(c, "bueno_orovio_2008_endo", {0, 0, 0}, {6, 2.5, 2});
  c.stimuli.push_back(box_stimulus({0, 0, 0}, {1.5, 5, 4}));
  compare(c, 16, "3D ellipsoidal shell in compressed rows, rotating fibres, BO epi + endo");
  c.time.splitting = Splitting::strang;
  compare(c, 16, "the shell with Strang splitting");
}

// Implicit diffusion: the engine's CG (cpu: tissue/cg.hpp through DiffusionStepper; cuda:
// the device CG) against the reference engine's own naive CG (tissue/reference_implicit.*),
// on a slab with a hole and oblique fibres (mask, edge links), backward Euler with Godunov
// and Crank-Nicolson with Strang. time.cg_tolerance 1e-12 so that the double comparison sees
// the solvers, not their stopping tests. Float runs raise it to 1e-6 themselves, which moves
// the upstroke by up to 0.005 ms: measured on the cpu, float vs reference V 1.11 mV (backward
// Euler) and 0.22 mV (Crank-Nicolson) at the front, and a front cell or two crossing the
// threshold in one engine only in the last step; hence V within 2 mV and slack at the front.
// Double: the cpu meets the usual 1e-6 mV with 0 difference in V as float. The GPU's CG
// starts each solve from the last increments extrapolated (tissue/cuda/implicit.hpp), the
// reference's from V; both stop within 1e-12 of ‖b‖, so their solutions differ within the
// tolerance, and V as float then differs by an ulp or two: 3.8e-6 and 7.6e-6 mV on an H100
// (2^-18 and 2^-17, one ulp at 32–64 and 64–128 mV; activation 1.3e-8 ms; e129e78's parent).
// It was 0 at the last run of this test on a GPU, before the first guess and before the
// CG's sums changed order (3f0ba29, ca2caa8, f612223; which of them moved it was not
// measured). The bar for double is 5e-5 mV, a few ulps.
TEST_P(Backends, ImplicitDiffusionMaskedObliqueFibres) {
  TissueCase c = sheet(30, 20, 1, 0.2, "bueno_orovio_2008_epi");
  c.geometry.kind = GeometrySpec::Kind::slab_with_hole;
  c.geometry.centre = {3, 2, 0.1};
  c.geometry.hole_radius = 1.0;
  c.fibres.kind = FibreSpec::Kind::uniform;
  c.fibres.direction = {1, 0.6, 0};
  c.stimuli.push_back(box_stimulus({0, 0, 0}, {0.6, 4, 1}));
  c.time.diffusion = DiffusionScheme::backward_euler;
  c.time.cg_tolerance = 1e-12;
  const FloatBars fb{2.0, true, 5e-5};
  compare(c, 12, "2D 30x20 slab with a hole, oblique fibres, backward Euler (CG)", fb);
  c.time.diffusion = DiffusionScheme::crank_nicolson;
  c.time.splitting = Splitting::strang;
  compare(c, 12, "the same with Crank-Nicolson and Strang splitting", fb);
}

// Every engine this build has (the reference is what they are compared with).
INSTANTIATE_TEST_SUITE_P(Engines, Backends,
                         ::testing::Values(Backend::cpu
#ifdef HW_HAVE_CUDA
                                           ,
                                           Backend::cuda
#endif
                                           ),
                         [](const ::testing::TestParamInfo<Backend>& i) { return std::string(backend_name(i.param)); });
