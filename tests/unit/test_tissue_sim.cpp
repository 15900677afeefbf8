// Tests of the monodomain stepper (tissue/simulation): backends against each other,
// convergence, isotropy, splitting, sub-steps, stimuli, spirals, NaN, restart, memory.
// Grids are small and runs short (each test well under a few seconds); measured numbers
// are printed as "[measured]" lines for docs/tissue.md.
#include <gtest/gtest.h>

#include <malloc.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>

#include "run/case_file.hpp"
#include "outputs/maps.hpp"
#include "test_tissue_util.hpp"
#include "tissue/niederer.hpp"
#include "tissue/engine.hpp"
#include "tissue/simulation.hpp"
#include "tissue/stimuli.hpp"

using namespace hw::tissue;

namespace {

using hw::tissue::testing::add_box_region;
using hw::tissue::testing::box_initial;
using hw::tissue::testing::box_region;
using hw::tissue::testing::box_stimulus;
using hw::tissue::testing::ellipsoid_shell;
using hw::tissue::testing::ActivationRun;
using hw::tissue::testing::max_diff;
using hw::tissue::testing::run_with_activation;
using hw::tissue::testing::sheet;

// Bytes of heap in use (glibc: small blocks plus mmap'ed large ones).
std::size_t heap_in_use() {
  const struct mallinfo2 mi = mallinfo2();
  return mi.uordblks + mi.hblkhd;
}

}  // namespace

// The engines against the reference on sheets, boxes, masks and compressed rows:
// tests/backends/test_backends.cpp (ctest label backends).

// Planar wave along a 1D cable: CV between x = 3 and 7 mm on three resolutions.
TEST(TissueSim, ConductionVelocityConverges) {
  double cv[3];
  const double hs[3] = {0.4, 0.2, 0.1};
  for (int q = 0; q < 3; ++q) {
    const int n = int(std::lround(10 / hs[q]));
    TissueCase c = sheet(n, 1, 1, hs[q], "bueno_orovio_2008_epi");
    c.time.dt = 0.01;
    c.time.precision = Precision::f64;
    c.stimuli.push_back(box_stimulus({0, 0, 0}, {1.0, 1, 1}));
    const ActivationRun r = run_with_activation(c, Backend::cpu, 20);
    const Grid& g = c.grid;
    auto at = [&](double x) {
      // linear interpolation between cell centres
      const double s = x / hs[q] - 0.5;
      const int i = int(std::floor(s));
      const double w = s - i;
      return (1 - w) * r.act[g.index(i, 0, 0)] + w * r.act[g.index(i + 1, 0, 0)];
    };
    cv[q] = 4.0 / (at(7) - at(3));
  }
  const double order = std::log2(std::fabs(cv[0] - cv[1]) / std::fabs(cv[1] - cv[2]));
  std::printf("[measured] BO epi cable CV (mm/ms) at dx 0.4/0.2/0.1 mm, dt 0.01 ms: %.4f %.4f "
              "%.4f; observed order %.2f\n",
              cv[0], cv[1], cv[2], order);
  EXPECT_GT(cv[2], 0.3);
  EXPECT_LT(cv[2], 1.0);
  EXPECT_LT(std::fabs(cv[1] - cv[2]), std::fabs(cv[0] - cv[1]));
  EXPECT_GT(order, 0.8);
}

// A point stimulus in isotropic tissue: activation at radius 2.5 mm along x and along the
// diagonal.
TEST(TissueSim, PointStimulusGivesCircularFront) {
  TissueCase c = sheet(41, 41, 1, 0.2, "bueno_orovio_2008_epi");
  c.conductivity.sigma_l = 0.1334;  // fibres none: isotropic σ_l
  c.time.dt = 0.02;
  Region spot;
  spot.kind = Region::Kind::sphere;
  spot.centre = {4.1, 4.1, 0.1};
  spot.radius = 0.5;
  c.stimuli.push_back(hw::tissue::testing::stimulus(spot, 80, 1));
  const ActivationRun r = run_with_activation(c, Backend::cpu, 8);
  const Grid& g = c.grid;
  const double R = 2.5;
  auto t_at = [&](double x, double y) {
    return r.act[g.index(int(x / 0.2), int(y / 0.2), 0)];
  };
  const double d = R / std::sqrt(2.0);
  const double t_axis = 0.25 * (t_at(4.1 + R, 4.1) + t_at(4.1 - R, 4.1) + t_at(4.1, 4.1 + R) +
                                t_at(4.1, 4.1 - R));
  const double t_diag = 0.25 * (t_at(4.1 + d, 4.1 + d) + t_at(4.1 - d, 4.1 - d) +
                                t_at(4.1 + d, 4.1 - d) + t_at(4.1 - d, 4.1 + d));
  const double err = std::fabs(t_axis - t_diag) / t_axis;
  std::printf("[measured] point stimulus, isotropic 2D dx 0.2 mm: activation at r = 2.5 mm "
              "along axes %.3f ms, diagonals %.3f ms, anisotropy error %.2f%%\n",
              t_axis, t_diag, 100 * err);
  EXPECT_FALSE(std::isnan(t_axis));
  EXPECT_LT(err, 0.05);
}

TEST(TissueSim, GodunovAndStrangAgreeAsDtShrinks) {
  double diff[3];
  const double dts[3] = {0.04, 0.02, 0.01};
  for (int q = 0; q < 3; ++q) {
    TissueCase c = sheet(40, 1, 1, 0.2, "bueno_orovio_2008_epi");
    c.time.dt = dts[q];
    c.time.precision = Precision::f64;
    c.stimuli.push_back(box_stimulus({0, 0, 0}, {0.6, 1, 1}));
    const ActivationRun g = run_with_activation(c, Backend::cpu, 14);
    c.time.splitting = Splitting::strang;
    const ActivationRun s = run_with_activation(c, Backend::cpu, 14);
    bool nan;
    diff[q] = max_diff(g.act, s.act, &nan);
    EXPECT_TRUE(nan);
  }
  std::printf("[measured] Godunov vs Strang max activation difference at dt 0.04/0.02/0.01 ms: "
              "%.4f %.4f %.4f ms\n",
              diff[0], diff[1], diff[2]);
  EXPECT_LT(diff[1], diff[0]);
  EXPECT_LT(diff[2], diff[1]);
}

// One cell, no diffusion: 4 sub-steps of dt/4 are 4 steps of dt/4.
TEST(TissueSim, OdeSubstepsEqualFinerSteps) {
  TissueCase c = sheet(1, 1, 1, 0.1, "tentusscher_2006_epi");
  c.time.precision = Precision::f64;
  InitialCondition ic;
  ic.variable = "V";
  ic.value = -30;  // above threshold: an action potential
  c.initial.push_back(ic);
  c.time.dt = 0.04;
  c.time.ode_substeps = 4;
  Simulation a(c);
  a.run_until(20);
  c.time.dt = 0.01;
  c.time.ode_substeps = 1;
  Simulation b(c);
  b.run_until(20);
  std::printf("[measured] TT06 one cell, 4 sub-steps of 0.01 vs 4 steps of 0.01: V %.17g vs %.17g\n",
              a.voltage_at(0), b.voltage_at(0));
  EXPECT_GT(a.voltage_at(0), 0);  // in the plateau
  EXPECT_NEAR(a.voltage_at(0), b.voltage_at(0), 1e-9);
}

TEST(TissueSim, StimulusScheduleOnStepGrid) {
  Stimulus s;
  s.start = 1.0;
  s.duration = 0.5;
  s.period = 2.0;
  s.count = 3;
  StimulusSchedule sch(s, 0.1);
  std::vector<long> on;
  for (long n = 0; n < 100; ++n)
    if (sch.on(n)) on.push_back(n);
  const std::vector<long> expect{10, 11, 12, 13, 14, 30, 31, 32, 33, 34, 50, 51, 52, 53, 54};
  EXPECT_EQ(on, expect);
}

// A stimulus starting at 1 ms leaves V bit-identical to an unstimulated run until then,
// and adds exactly dt·A/(χCm) per step to an isolated cell's V while on.
TEST(TissueSim, StimulusTiming) {
  TissueCase c = sheet(6, 1, 1, 0.2, "bueno_orovio_2008_epi");
  c.time.precision = Precision::f64;
  c.time.dt = 0.05;
  Simulation quiet(c);
  Stimulus s = box_stimulus({0, 0, 0}, {0.2, 1, 1}, 5, 0.5);
  s.start = 1.0;
  c.stimuli.push_back(s);
  Simulation stim(c);
  for (int n = 0; n < 20; ++n) {
    quiet.step();
    stim.step();
    EXPECT_EQ(quiet.voltage_at(0), stim.voltage_at(0)) << "step " << n;
  }
  quiet.step();
  stim.step();
  const double jump = stim.voltage_at(0) - quiet.voltage_at(0);
  // one step of 0.05 ms at 5 µA/mm³ / (140·0.01) = 0.1786 mV, minus a little reaction
  EXPECT_NEAR(jump, 0.05 * 5 / 1.4, 0.02);
}

// Cross-field S1-S2 by initial conditions: u excited along the left edge, the lower half
// refractory. The broken front curls into a spiral, so the centre is excited again after
// the S1 wave has left.
TEST(TissueSim, CrossFieldInitialConditionMakesSpiral) {
  TissueCase c = sheet(80, 80, 1, 0.5, "aliev_panfilov_1996");
  c.conductivity.sigma_l = 1.0;  // D = σ/(χCm) = 1 space unit²/time unit
  c.conductivity.chi = 1;
  c.conductivity.cm = 1;
  c.time.dt = 0.05;
  c.time.integrator = "fe";
  InitialCondition s1;
  s1.variable = "u";
  s1.value = 1;
  s1.where.kind = Region::Kind::box;
  s1.where.lo = {0, 0, 0};
  s1.where.hi = {2, 40, 1};
  c.initial.push_back(s1);
  InitialCondition s2;
  s2.variable = "v";
  s2.value = 2;
  s2.where.kind = Region::Kind::box;
  s2.where.lo = {0, 0, 0};
  s2.where.hi = {40, 20, 1};
  c.initial.push_back(s2);
  SimulationOptions o;
  o.threads = 1;
  Simulation sim(c, o);
  const std::size_t centre = sim.grid().index(40, 40, 0);
  int upstrokes = 0;
  double prev = sim.voltage_at(centre), last = 0;
  sim.run_until(200, [&](const Simulation& s) {
    const double v = s.voltage_at(centre);
    if (prev < 0.5 && v >= 0.5) {
      ++upstrokes;
      last = s.time();
    }
    prev = v;
  });
  std::printf("[measured] Aliev-Panfilov cross-field 80x80: %d upstrokes at the centre in 200 "
              "t.u., last at %.1f\n",
              upstrokes, last);
  EXPECT_GE(upstrokes, 2);
}

TEST(TissueSim, NanStopsWithTimeCellAndKeepsLastState) {
  TissueCase c = sheet(8, 4, 1, 0.2, "bueno_orovio_2008_epi");
  c.time.dt = 0.02;
  Stimulus s = box_stimulus({0.4, 0.4, 0}, {0.6, 0.6, 1}, 1e300, 1);
  s.start = 0.1;
  c.stimuli.push_back(s);
  for (Backend b : {Backend::reference, Backend::cpu}) {
    SimulationOptions o;
    o.backend = b;
    Simulation sim(c, o);
    Field<float> before, after;
    bool thrown = false;
    try {
      sim.run_until(1, [&](const Simulation& x) { x.voltage(before); });
    } catch (const NumericalError& e) {
      thrown = true;
      EXPECT_NEAR(e.time, 0.12, 1e-9);
      EXPECT_EQ(e.cell, (std::array<int, 3>{2, 2, 0}));
      EXPECT_FALSE(e.variable.empty());  // the first non-finite state (V or what made it so)
      EXPECT_NE(std::string(e.what()).find("(2, 2, 0)"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(thrown);
    EXPECT_NEAR(sim.time(), 0.1, 1e-12);
    sim.voltage(after);
    EXPECT_EQ(0, std::memcmp(before.data(), after.data(), before.size() * sizeof(float)));
  }
}

TEST(TissueSim, SaveLoadContinuesBitIdentically) {
  for (bool annulus : {false, true})
  for (Precision p : {Precision::f32, Precision::f64}) {
    TissueCase c = sheet(20, 12, 1, 0.25, "tentusscher_2006_epi");
    c.time.precision = p;
    c.time.splitting = Splitting::strang;
    c.stimuli.push_back(box_stimulus({0, 0, 0}, {1, 3, 1}));
    if (annulus) {  // a mask: V stored in compressed rows
      c.geometry.kind = GeometrySpec::Kind::ellipsoid_shell;
      c.geometry.centre = {2.5, 1.5, 0.125};
      c.geometry.radii_outer = {2.4, 1.4, 1};
      c.geometry.radii_inner = {1.2, 0.6, 0.5};
    }
    Simulation a(c);
    if (annulus) ASSERT_NE(a.describe().find("compressed rows"), std::string::npos);
    for (int n = 0; n < 100; ++n) a.step();
    const auto bytes = a.save_state();
    for (int n = 0; n < 150; ++n) a.step();
    Simulation b(c);
    b.load_state(bytes);
    EXPECT_EQ(b.steps_done(), 100);
    for (int n = 0; n < 150; ++n) b.step();
    Field<float> fa, fb;
    a.voltage(fa);
    b.voltage(fb);
    EXPECT_EQ(0, std::memcmp(fa.data(), fb.data(), fa.size() * sizeof(float)));
    ASSERT_TRUE(a.field("Ca_i", fa));
    ASSERT_TRUE(b.field("Ca_i", fb));
    EXPECT_EQ(0, std::memcmp(fa.data(), fb.data(), fa.size() * sizeof(float)));
    EXPECT_EQ(a.save_state(), b.save_state());
    // A state of the box-storage format (magic "HWTISS01") is refused by name.
    auto old = bytes;
    old[7] = '1';
    try {
      b.load_state(old);
      ADD_FAILURE() << "an old state was loaded";
    } catch (const hw::Error& e) {
      EXPECT_NE(std::string(e.what()).find("older heartwave"), std::string::npos) << e.what();
    }
  }
}

TEST(TissueSim, MemoryEstimates) {
  TissueCase k = sheet(256, 256, 256, 0.1, "karma1993");
  k.time.precision = Precision::f32;
  k.time.dt = 0.001;
  const MemoryEstimate bare = estimate_memory(k);
  const std::size_t karma = bare.peak();
  std::printf("[measured] estimate_memory Karma 256^3 float: %zu bytes = %.1f MiB\n", karma,
              karma / 1048576.0);
  // Running: V twice and one state, 4 bytes each. The canonical state (V and the state in
  // double, 16 B a cell) three times while the initial state is made and while a checkpoint
  // is written: about 640 MB measured at their peaks for this case (`heartwave run`, VmRSS).
  EXPECT_EQ(bare.run, k.grid.size() * 12 + std::size_t(k.grid.ny()) * k.grid.nz() * 24);  // + the row table
  EXPECT_EQ(bare.setup, 3 * k.grid.size() * 16);
  EXPECT_EQ(bare.checkpoint, 3 * k.grid.size() * 16);
  EXPECT_EQ(bare.snapshots, 0u);
  EXPECT_LE(karma, 1100u * 1000 * 1000);
  // Two variables written every 5 ms and PNG frames: up to four jobs in flight on the one
  // write queue (outputs/write_queue.hpp), at worst four field frames of two variables each,
  // counted on the host and on the GPU.
  k.output.field_interval = 5;
  k.output.variables = {"V", "n"};
  k.output.png_interval = 5;
  const MemoryEstimate with = estimate_memory(k);
  EXPECT_EQ(with.snapshots, 4u * 2u * k.grid.size() * 4u);
  EXPECT_EQ(with.peak(), bare.run + std::max(with.snapshots, bare.checkpoint));
  k.output.field_interval = 0;  // pictures alone: four copies of their variable
  EXPECT_EQ(estimate_memory(k).snapshots, 4u * k.grid.size() * 4u);
  TissueCase t = niederer_case(0.1, 0.005);
  const std::size_t tt = estimate_memory(t).peak();
  std::printf("[measured] estimate_memory N-version slab dx 0.1 mm (TT06, float): %zu bytes = "
              "%.1f MiB for %zu cells\n",
              tt, tt / 1048576.0, t.grid.size());
  // Running: 18 states but V and two V fields, 4 bytes each: 80 B per cell; the layout's row
  // table (one size_t and four uint32 per row). At its peak, three times the canonical
  // state (19 values in double: 152 B per cell).
  const std::size_t rows = std::size_t(t.grid.ny()) * t.grid.nz();
  EXPECT_EQ(estimate_memory(t).run, t.grid.size() * 80 + rows * 24);
  EXPECT_EQ(tt, t.grid.size() * (80 + 3 * 152) + rows * 24);
}

// The pig ventricles (examples/pig_scroll.toml, ../shared): fields, link coefficients and
// 1/φ live in compressed rows, so memory follows the 27 % of the box that is tissue. The
// heap the Simulation holds (glibc's count) is what estimate_memory says, and the cpu run
// agrees with the reference (box layout) after 40 steps.
TEST(TissueSim, PigHeartMemoryFollowsTheTissue) {
  const std::string file = std::string(HW_TEST_DATA_DIR) + "/../examples/pig_scroll.toml";
  if (!std::filesystem::exists(std::string(HW_SHARED_DIR) + "/geometry/pig_ventricles_kaboudian128"))
    GTEST_SKIP() << "shared geometry not found under " << HW_SHARED_DIR << "/geometry";
  TissueCase c = hw::io::read_case_file(file, {"output.directory=" + std::string(::testing::TempDir()) + "/pig"});
  c.time.precision = Precision::f32;
  const MemoryEstimate est = estimate_memory(c);
  const std::size_t heap0 = heap_in_use();
  SimulationOptions o;
  o.threads = 2;
  auto cpu = std::make_unique<Simulation>(c, o);
  const std::size_t held = heap_in_use() - heap0;
  const std::size_t tissue = cpu->tissue_cells(), box = cpu->grid().size();
  std::printf("[measured] pig heart, Aliev-Panfilov, float: %zu tissue cells of %zu (%.1f%%); "
              "estimate_memory %.1f MB while running (%.1f B per tissue cell) + %.1f MB set-up; the "
              "Simulation holds %.1f MB of heap\n",
              tissue, box, 100.0 * tissue / box, est.run / 1e6, double(est.run) / tissue,
              est.setup / 1e6, held / 1e6);
  EXPECT_NE(cpu->describe().find("compressed rows"), std::string::npos);
  EXPECT_LT(est.run, 64 * tissue);  // was 175 B per tissue cell with box-sized fields
  EXPECT_LT(double(held), 1.15 * est.run + 2e6);
  EXPECT_GT(double(held), 0.8 * est.run);
  SimulationOptions r;
  r.backend = Backend::reference;
  Simulation ref(c, r);
  for (int n = 0; n < 40; ++n) {
    cpu->step();
    ref.step();
  }
  Field<float> a, b;
  cpu->voltage(a);
  ref.voltage(b);
  double d = 0, vmax = 0;
  for (std::size_t n = 0; n < a.size(); ++n)
    if (!std::isnan(b[n])) {
      d = std::max(d, double(std::fabs(a[n] - b[n])));
      vmax = std::max(vmax, double(std::fabs(b[n])));
    }
  std::printf("[measured] pig heart after 40 steps: max |V_cpu(f32, rows) - V_reference(f64, box)| = %.2e "
              "(max |V| %.2f)\n", d, vmax);
  EXPECT_GT(vmax, 0.5);
  EXPECT_LT(d, 1e-4);
}

// The UCSD rabbit ventricles (../shared, voxel labels) with rule-based fibres: the 19-point
// stencil with edge links on compressed rows of a real heart, against the reference
// backend on the box, after 20 steps of a wave started by an initial condition.
TEST(TissueSim, UcsdRabbitRuleBasedFibresInCompressedRows) {
  const std::string nrrd =
      std::string(HW_SHARED_DIR) + "/geometry/rabbit_ventricles_ucsd_chaste/ucsd_rabbit_ventricles_0.25mm.nrrd";
  if (!std::filesystem::exists(nrrd)) GTEST_SKIP() << "shared geometry not found: " << nrrd;
  TissueCase c;
  c.geometry.kind = GeometrySpec::Kind::mask_file;
  c.geometry.path = nrrd;
  c.fibres.kind = FibreSpec::Kind::rule_based;
  c.fibres.long_axis = std::array<double, 3>{1, 0, 0};  // the long axis of this heart runs along x
  ModelRegion m;
  m.model = "aliev_panfilov_1996";
  c.models.push_back(m);
  c.conductivity.sigma_l = 0.1334;
  c.conductivity.sigma_t = 0.0176;
  c.time.dt = 0.05;
  c.initial.push_back(box_initial({0, 0, 0}, {12, 40, 40}, "V", 1.0));
  SimulationOptions o;
  o.threads = 2;
  c.time.precision = Precision::f64;
  Simulation cpu64(c, o);
  EXPECT_NE(cpu64.describe().find("compressed rows"), std::string::npos);
  c.time.precision = Precision::f32;
  Simulation cpu32(c, o);
  SimulationOptions r;
  r.backend = Backend::reference;
  Simulation ref(c, r);
  for (int n = 0; n < 20; ++n) {
    cpu64.step();
    cpu32.step();
    ref.step();
  }
  Field<float> a, b, v;
  cpu64.voltage(a);
  cpu32.voltage(b);
  ref.voltage(v);
  double d64 = 0, d32 = 0;
  std::size_t moved = 0;
  for (std::size_t n = 0; n < v.size(); ++n) {
    if (std::isnan(v[n])) continue;
    d64 = std::max(d64, double(std::fabs(a[n] - v[n])));
    d32 = std::max(d32, double(std::fabs(b[n] - v[n])));
    moved += v[n] > 0.01f && v[n] < 0.99f;  // cells that the front is passing
  }
  std::printf("[measured] UCSD rabbit, rule-based fibres, 20 steps: %zu tissue cells, %zu in the front; "
              "max |V_cpu - V_reference| = %.2e (f64), %.2e (f32)\n",
              cpu64.tissue_cells(), moved, d64, d32);
  EXPECT_GT(moved, 1000u);
  EXPECT_LT(d64, 1e-5);  // V is float in the comparison
  EXPECT_LT(d32, 1e-4);
}

TEST(TissueSim, BadInputNamesTheKey) {
  TissueCase c = sheet(10, 10, 1, 0.1, "bueno_orovio_2008_epi");
  c.time.loc = {"case.toml", 12, 1};
  c.time.dt = 1.0;  // far above the explicit limit
  try {
    Simulation s(c);
    FAIL() << "no error";
  } catch (const hw::InputError& e) {
    EXPECT_EQ(e.diagnostics().front().loc.line, 12);
    EXPECT_NE(std::string(e.what()).find("stability limit"), std::string::npos) << e.what();
  }
  const double lim = stable_dt_limit(c);
  EXPECT_NEAR(lim, 2 * 140 * 0.01 / (8 * 0.1334 / 0.01), 1e-12);
  c.time.dt = 0.01;
  Stimulus s = box_stimulus({50, 50, 0}, {60, 60, 1});
  s.loc = {"case.toml", 30, 1};
  c.stimuli.push_back(s);
  EXPECT_THROW(Simulation x(c), hw::InputError);
  c.stimuli.clear();
  c.models[0].params["no_such_parameter"] = 1;
  EXPECT_THROW(Simulation x(c), hw::InputError);
}

TEST(TissueSim, NiedererCase) {
  const TissueCase c = niederer_case(0.5, 0.05);
  EXPECT_EQ(c.grid.n, (std::array<int, 3>{40, 14, 6}));
  Simulation sim(c);
  EXPECT_EQ(sim.tissue_cells(), 40u * 14 * 6);
  EXPECT_NE(sim.describe().find("uniform diagonal sigma"), std::string::npos) << sim.describe();
  EXPECT_EQ(niederer_points().size(), 9u);
  // dt 0.05 is stable at dx 0.5 mm; at dx 0.1 mm the explicit limit is ~0.04 ms.
  EXPECT_EQ(niederer_auto_scheme(c), DiffusionScheme::forward_euler);
  EXPECT_EQ(niederer_auto_scheme(niederer_case(0.1, 0.05)), DiffusionScheme::crank_nicolson);
  EXPECT_EQ(niederer_auto_scheme(niederer_case(0.1, 0.01)), DiffusionScheme::forward_euler);
}

// The full coarse run (3 360 cells, ~2 700 steps; about a second on 2 cores).
TEST(TissueSim, NiedererCoarse) {
  SimulationOptions o;
  const TissueCase c = niederer_case(0.5, 0.05);
  const NiedererResult r = run_niederer(c, o);
  for (const auto& [p, t] : r.activation)
    std::printf("[measured] N-version dx 0.5 dt 0.05: (%g, %g, %g) mm -> %.2f ms\n", p[0], p[1],
                p[2], t);
  EXPECT_LT(r.activation[0].second, 3);
  EXPECT_GT(r.activation[1].second, 30);   // 20 mm along the fibres
  EXPECT_LT(r.activation[1].second, 60);
  EXPECT_GT(r.activation[7].second, r.activation[1].second);
  // The cpu engine keeps an activation map, so the steps ran in batches and the times came
  // from it; read after every step instead, V gives the same times within the map's float.
  const NiedererResult every = run_niederer(c, o, {}, NiedererReads::every_step);
  double most = 0;
  for (std::size_t q = 0; q < r.activation.size(); ++q)
    most = std::max(most, std::fabs(r.activation[q].second - every.activation[q].second));
  std::printf("[measured] N-version dx 0.5 dt 0.05: activation map after batches against V read after every "
              "step: %.3g ms\n", most);
  EXPECT_LT(most, 1e-4);
}

// time.cg_max_iterations: a solve that needs more stops the run with the solver's numbers
// (the GPU's form of it, with its step, is CudaTissue.ImplicitSolveThatCannotConvergeStopsAtItsStep).
TEST(TissueSim, CgIterationCapStopsTheRun) {
  TissueCase c = sheet(12, 8, 4, 0.25, "bueno_orovio_2008_epi");
  c.time.diffusion = DiffusionScheme::crank_nicolson;
  c.time.precision = Precision::f64;
  c.time.cg_tolerance = 1e-12;
  c.time.cg_max_iterations = 1;
  c.stimuli.push_back(box_stimulus({0, 0, 0}, {0.75, 2, 1}));
  Simulation sim(c, {Backend::cpu, 1});
  try {
    sim.run_until(1);
    FAIL() << "one CG iteration met a tolerance of 1e-12";
  } catch (const hw::Error& e) {
    EXPECT_NE(std::string(e.what()).find("CG did not converge in 1 iteration "), std::string::npos) << e.what();
  }
}

// The cpu engine keeps the activation and APD90 maps itself once attached (no copy of V per
// step): against the same tracker fed with V after every step, on a sheet large enough for
// the parallel loops and on the ellipsoidal shell's compressed rows (tissue and holes).
TEST(TissueSim, CpuEngineKeepsTheActivationMaps) {
  TissueCase big = sheet(200, 200, 1, 0.3, "aliev_panfilov_1996");
  big.conductivity.sigma_l = big.conductivity.sigma_t = 1.4;
  big.initial.push_back(box_initial({0, 0, 0}, {3, 60, 1}, "V", 1.0));
  TissueCase shell = sheet(24, 20, 16, 0.25, "aliev_panfilov_1996");
  ellipsoid_shell(shell);
  shell.conductivity.sigma_l = shell.conductivity.sigma_t = 0.5;
  shell.initial.push_back(box_initial({0, 0, 0}, {2, 5, 4}, "V", 1.0));
  for (TissueCase* c : {&big, &shell}) {
    SCOPED_TRACE(c->grid.n[2] == 1 ? "sheet" : "shell");
    c->time.dt = 0.02;
    Simulation fed(*c, {Backend::cpu, 2}), kept(*c, {Backend::cpu, 2});
    const Mask* mask = fed.mask().empty() ? nullptr : &fed.mask();
    hw::io::ActivationTracker host(c->grid, mask, 0.5, true), engine(c->grid, mask, 0.5, true);
    Field<float> v;
    fed.voltage(v);
    host.update(0, v);
    engine.update(0, v);
    ASSERT_TRUE(engine.attach(kept));
    const long steps = 2500;  // 50 time units: the fronts cross and the cells recover
    for (long n = 0; n < steps; ++n) {
      fed.step();
      fed.voltage(v);
      host.update(fed.time(), v);
    }
    kept.run_until(steps * c->time.dt);
    // Copies: each read of an attached tracker's map fetches it from the engine.
    const Field<float> ha = host.activation(), hp = host.apd90();
    const Field<float> ea = engine.activation(), ep = engine.apd90();
    std::size_t acts = 0, apds = 0;
    double dact = 0, dapd = 0;
    for (std::size_t n = 0; n < v.size(); ++n) {
      ASSERT_EQ(std::isnan(ha[n]), std::isnan(ea[n])) << n;
      ASSERT_EQ(std::isnan(hp[n]), std::isnan(ep[n])) << n;
      if (!std::isnan(ha[n])) {
        ++acts;
        dact = std::max(dact, double(std::fabs(ha[n] - ea[n])));
      }
      if (!std::isnan(hp[n])) {
        ++apds;
        dapd = std::max(dapd, double(std::fabs(hp[n] - ep[n])));
      }
    }
    EXPECT_GT(acts, fed.tissue_cells() / 2);
    EXPECT_GT(apds, 0u);
    EXPECT_LE(dact, 1e-4);
    EXPECT_LE(dapd, 1e-4);
  }
}

// An engine without a device copy of its own (the cpu) gives a snapshot copied at once:
// the fields as field() gives them at that step, whatever runs after.
TEST(TissueSim, SnapshotOnTheCpuHoldsItsStep) {
  TissueCase c = sheet(20, 12, 1, 0.25, "bueno_orovio_2008_epi");
  add_box_region(c, "bueno_orovio_2008_endo", {0, 0, 0}, {2, 3, 0.25});
  c.stimuli.push_back(box_stimulus({0, 0, 0}, {1, 3, 0.25}));
  SimulationOptions o;
  o.threads = 1;
  Simulation sim(c, o);
  sim.run_until(2);
  Field<float> v, w;
  sim.field("V", v);
  sim.field("w", w);
  auto snap = sim.snapshot({"V", "w"});
  sim.run_until(3);
  std::vector<Field<float>> got;
  snap->read(got);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].vec(), v.vec());
  for (std::size_t n = 0; n < w.size(); ++n) EXPECT_EQ(got[1][n], w[n]) << n;
  EXPECT_THROW(sim.snapshot({"V", "no_such_state"}), hw::Error);
}
