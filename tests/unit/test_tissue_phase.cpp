// Tests of the phase-field no-flux boundary in the monodomain stepper (Fenton et al. 2005;
// docs/tissue.md "Phase-field boundaries"): charge conservation of Σφ·V under pure
// diffusion, reference against cpu on a disc, and a wave in a slab tilted to the grid
// that must travel as in a grid-aligned one. φ is written as a float NRRD so the tests
// set it exactly (geometry.kind = phase_field_file). Small grids, short runs.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "formats/nrrd.hpp"
#include "test_tissue_util.hpp"
#include "tissue/diffusion_stepper.hpp"
#include "mesh/geometry.hpp"
#include "mesh/phase_field.hpp"
#include "tissue/simulation.hpp"

using namespace hw::tissue;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path dir;
  TempDir() {
    dir = fs::temp_directory_path() /
          ("hw_tissue_phase_" + std::to_string(::getpid()) + "_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

// A 2D sheet (nx × ny × 1, spacing h) whose phase field is phi(x, y) at cell centres (mm),
// written to dir/phase.nrrd as floats; tissue where φ > threshold.
TissueCase phase_sheet(const fs::path& dir, int nx, int ny, double h,
                       const std::function<double(double, double)>& phi, const std::string& model,
                       std::vector<float>* values = nullptr, double threshold = 0.01) {
  std::vector<double> v(std::size_t(nx) * ny);
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i) v[std::size_t(j) * nx + i] = phi((i + 0.5) * h, (j + 0.5) * h);
  hw::io::ImageVolume img;
  img.sizes = {nx, ny, 1};
  img.spacing = {h, h, h};
  img.set_values(hw::io::ScalarType::f32, v);
  hw::io::write_nrrd((dir / "phase.nrrd").string(), img);
  if (values) values->assign(v.begin(), v.end());
  TissueCase c;
  c.source_file = (dir / "case.toml").string();
  c.grid.n = {nx, ny, 1};
  c.grid.h = {h, h, h};
  c.geometry.kind = GeometrySpec::Kind::phase_field_file;
  c.geometry.path = "phase.nrrd";
  c.geometry.threshold = threshold;
  c.geometry.phase_field = true;
  ModelRegion m;
  m.model = model;
  c.models.push_back(m);
  c.conductivity.sigma_l = 0.1334;
  c.conductivity.sigma_t = 0.1334;
  c.time.dt = 0.02;
  c.time.integrator = "rl1";
  return c;
}

// The stationary profile with interface width ξ = 0.1 mm, d > 0 inside.
double prof(double d) { return phase_profile(d, 0.1); }

std::vector<double> activation(const TissueCase& c, Backend b, double t_end, double thr = -20) {
  SimulationOptions o;
  o.backend = b;
  o.threads = 1;
  Simulation sim(c, o);
  const std::size_t N = sim.grid().size();
  std::vector<double> act(N, std::numeric_limits<double>::quiet_NaN()), prev(N);
  for (std::size_t n = 0; n < N; ++n) prev[n] = sim.voltage_at(n);
  sim.run_until(t_end, [&](const Simulation& s) {
    for (std::size_t n = 0; n < N; ++n) {
      const double v = s.voltage_at(n);
      if (std::isnan(act[n]) && prev[n] < thr && v >= thr)
        act[n] = s.time() - s.dt() + s.dt() * (thr - prev[n]) / (v - prev[n]);
      prev[n] = v;
    }
  });
  return act;
}

// The disc φ of radius R = 3.2 mm in a 36 × 36 sheet, h = 0.2 mm.
TissueCase disc_case(const fs::path& dir, const std::string& model, std::vector<float>* phi = nullptr) {
  return phase_sheet(
      dir, 36, 36, 0.2, [](double x, double y) { return prof(3.2 - std::hypot(x - 3.6, y - 3.6)); },
      model, phi);
}

// Pure diffusion in the disc (Aliev–Panfilov with k = 0 and v = 0: the reaction is the
// identity) from V = 60 mV in a sphere off the centre that crosses the boundary, in double.
TissueCase disc_diffusion_case(const fs::path& dir, std::vector<float>* phi = nullptr) {
  TissueCase c = disc_case(dir, "aliev_panfilov_1996", phi);
  c.models[0].params["k"] = 0;
  InitialCondition ic;
  ic.where.kind = Region::Kind::sphere;
  ic.where.centre = {2.2, 3.0, 0.1};
  ic.where.radius = 1.6;
  ic.variable = "V";
  ic.value = 60;
  c.initial.push_back(ic);
  c.time.precision = Precision::f64;
  return c;
}

std::vector<double> voltages(const Simulation& sim) {
  std::vector<double> v(sim.grid().size());
  for (std::size_t n = 0; n < v.size(); ++n) v[n] = sim.voltage_at(n);
  return v;
}

// V after t_end of pure diffusion (NaN off tissue).
std::vector<double> diffuse_to(TissueCase c, DiffusionScheme sch, double dt, double t_end,
                               Backend b = Backend::reference) {
  c.time.diffusion = sch;
  c.time.dt = dt;
  Simulation sim(c, SimulationOptions{b, 1});
  sim.run_until(t_end);
  return voltages(sim);
}

// 50 µA/mm³ for 1 ms in the box x < 1.2 mm, y < 7.2 mm: a wave from the left edge.
Stimulus left_edge_stimulus() {
  return hw::tissue::testing::box_stimulus({0, 0, 0}, {1.2, 7.2, 1}, 50, 1);
}

// Σ φ·V over the tissue cells: what a no-flux phase-field boundary conserves.
template <class Phi>
double phi_charge(const Simulation& sim, const Phi& phi) {
  double q = 0;
  for (std::size_t n = 0; n < phi.size(); ++n)
    if (!std::isnan(sim.voltage_at(n))) q += double(phi[n]) * sim.voltage_at(n);
  return q;
}

double max_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double d = 0;
  for (std::size_t n = 0; n < a.size(); ++n)
    if (!std::isnan(a[n])) d = std::max(d, std::fabs(a[n] - b[n]));
  return d;
}

const char* scheme_name(DiffusionScheme s) {
  return s == DiffusionScheme::backward_euler ? "BE" : s == DiffusionScheme::crank_nicolson ? "CN" : "FE";
}

Region sphere(double x, double y, double r) {
  Region g;
  g.kind = Region::Kind::sphere;
  g.centre = {x, y, 0.1};
  g.radius = r;
  return g;
}

}  // namespace

// Pure diffusion (Aliev–Panfilov with k = 0: du/dt = −u·v with v ≡ 0, so the reaction is
// the identity) on a box-shaped φ: Σ φ_n V_n is what V += α(L_{φσ}V)/φ conserves, on both
// engines; and the set-up rejects what it cannot do.
TEST(TissuePhase, BoxConservesPhaseWeightedCharge) {
  TempDir td;
  const int nx = 24, ny = 20;
  const double h = 0.2;
  std::vector<float> phi;
  TissueCase c = phase_sheet(
      td.dir, nx, ny, h,
      [](double x, double y) { return prof(std::min(x - 0.8, 4.0 - x)) * prof(std::min(y - 0.6, 3.4 - y)); },
      "aliev_panfilov_1996", &phi);
  c.models[0].params["k"] = 0;
  c.initial.push_back(hw::tissue::testing::box_initial({0.6, 0.4, 0}, {2.0, 2.0, 1}, "V", 60));
  c.time.precision = Precision::f64;  // 1e-10 needs double on the cpu engine too
  for (Backend b : {Backend::reference, Backend::cpu}) {
    {
      Simulation sim(c, SimulationOptions{b, 1});
      auto charge = [&] { return phi_charge(sim, phi); };
      const double q0 = charge(), v0 = sim.voltage_at(std::size_t(5) * nx + 6);
      sim.run_until(4.0);
      const double q1 = charge(), v1 = sim.voltage_at(std::size_t(5) * nx + 6);
      std::printf("[measured] phase box %s: charge %.12g -> %.12g (rel %.2e), V(6,5) %.3f -> %.3f\n",
                  backend_name(b), q0, q1, std::fabs(q1 - q0) / q0, v0, v1);
      EXPECT_GT(q0, 0);
      EXPECT_LT(std::fabs(q1 - q0), 1e-10 * std::fabs(q0));
      EXPECT_LT(v1, v0 - 1.0);  // it did diffuse
      EXPECT_NE(sim.describe().find("phase-field"), std::string::npos);
    }
  }
  // Stability includes φ: a dt above stable_dt_limit is an InputError at time.
  const double lim = stable_dt_limit(c);
  TissueCase bulk = c;
  bulk.geometry.phase_field = false;
  std::printf("[measured] phase box: explicit dt limit %.5f ms with phi, %.5f ms without\n", lim,
              stable_dt_limit(bulk));
  // The limit is the one of Φ⁻¹L_{φσ} (phase_field_rate_bound), at most 2× below the bulk.
  const Geometry geo = build_geometry(c);
  const PhaseFieldDiffusion d =
      phase_field_diffusion(geo.grid, geo.phase, Conductivity::isotropic(0.1334), 0.0);
  EXPECT_NEAR(lim, 2 * c.conductivity.chi * c.conductivity.cm / phase_field_rate_bound(geo.grid, d),
              1e-12 * lim);
  EXPECT_GT(lim, 0.5 * stable_dt_limit(bulk) * 0.999);
  c.time.loc = {"case.toml", 9, 1};
  c.time.dt = lim * 1.01;
  EXPECT_THROW(Simulation s(c), hw::InputError);
  c.time.dt = 0.02;
  c.conductivity.order = StencilOrder::fourth;
  for (DiffusionScheme sch : {DiffusionScheme::forward_euler, DiffusionScheme::backward_euler}) {
    c.time.diffusion = sch;
    try {
      Simulation s(c);
      ADD_FAILURE() << "the fourth-order stencil with a phase field was accepted";
    } catch (const hw::InputError& e) {
      EXPECT_NE(std::string(e.what()).find("phase_field"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("constant isotropic sigma on a box"), std::string::npos)
          << e.what();
    }
  }
}

// A planar wave entering a disc-shaped φ from the left: the cpu engine (fused rows, float)
// and the reference (whole-field operator, double) activate every tissue cell within dt.
TEST(TissuePhase, DiscReferenceVsCpu) {
  TempDir td;
  const int n = 36;
  const double h = 0.2, R = 3.2, cx = 3.6, cy = 3.6;
  TissueCase c = phase_sheet(
      td.dir, n, n, h, [&](double x, double y) { return prof(R - std::hypot(x - cx, y - cy)); },
      "bueno_orovio_2008_epi");
  c.stimuli.push_back(left_edge_stimulus());
  const auto ref = activation(c, Backend::reference, 16);
  const auto cpu = activation(c, Backend::cpu, 16);
  double dmax = 0;
  int both = 0, tissue = 0;
  for (std::size_t k = 0; k < ref.size(); ++k) {
    ASSERT_EQ(std::isnan(ref[k]), std::isnan(cpu[k])) << "cell " << k;
    if (std::isnan(ref[k])) continue;
    ++both;
    dmax = std::max(dmax, std::fabs(ref[k] - cpu[k]));
  }
  Simulation probe(c);
  for (std::size_t k = 0; k < ref.size(); ++k) tissue += !std::isnan(probe.voltage_at(k));
  std::printf("[measured] phase disc: %d of %d tissue cells activated, max |ref - cpu| %.4f ms\n",
              both, tissue, dmax);
  EXPECT_EQ(both, tissue);
  EXPECT_LT(dmax, c.time.dt);
}

// A slab 2 mm wide tilted 30° to the grid: activation along its axis rises monotonically and
// the speed matches the grid-aligned slab to 10% (the staircase neither blocks nor slows).
TEST(TissuePhase, TiltedSlabConductsLikeAlignedSlab) {
  TempDir td;
  const int nx = 64, ny = 44;
  const double h = 0.2, half = 1.0;
  struct Result {
    double speed;
    bool monotone;
    int cells, activated;
  };
  auto run_slab = [&](double angle_deg) {
    const double a = angle_deg * M_PI / 180, ca = std::cos(a), sa = std::sin(a);
    const double x0 = 1.2, y0 = 1.3;  // a point on the axis
    auto axis = [&](double x, double y) { return (x - x0) * ca + (y - y0) * sa; };
    auto perp = [&](double x, double y) { return -(x - x0) * sa + (y - y0) * ca; };
    TissueCase c = phase_sheet(td.dir, nx, ny, h,
                               [&](double x, double y) { return prof(half - std::fabs(perp(x, y))); },
                               "bueno_orovio_2008_epi");
    c.stimuli.push_back(hw::tissue::testing::stimulus(sphere(x0 + 0.6 * ca, y0 + 0.6 * sa, 1.3), 50, 1));
    const auto act = activation(c, Backend::cpu, 22);
    // Samples on the axis at s = 3..10 mm: the cell nearest the axis point.
    std::vector<double> s, t;
    for (double q = 3; q <= 10.0 + 1e-9; q += 0.5) {
      const int i = int((x0 + q * ca) / h), j = int((y0 + q * sa) / h);
      s.push_back(q);
      t.push_back(act[std::size_t(j) * nx + i]);
    }
    Result r{0, true, 0, 0};
    for (std::size_t k = 1; k < t.size(); ++k) r.monotone &= t[k] > t[k - 1];
    // Least-squares slope of t(s): 1/speed.
    double ms = 0, mt = 0;
    for (std::size_t k = 0; k < s.size(); ++k) ms += s[k] / s.size(), mt += t[k] / t.size();
    double sst = 0, sss = 0;
    for (std::size_t k = 0; k < s.size(); ++k) sst += (s[k] - ms) * (t[k] - mt), sss += (s[k] - ms) * (s[k] - ms);
    r.speed = sss / sst;
    // Every cell of the slab's core (|perp| < half − h, axis 0..10 mm) activates.
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i) {
        const double x = (i + 0.5) * h, y = (j + 0.5) * h;
        if (std::fabs(perp(x, y)) < half - h && axis(x, y) > 0 && axis(x, y) < 10) {
          ++r.cells;
          r.activated += !std::isnan(act[std::size_t(j) * nx + i]);
        }
      }
    std::printf("[measured] phase slab at %.0f deg: speed %.4f mm/ms, monotone %d, core %d/%d activated\n",
                angle_deg, r.speed, int(r.monotone), r.activated, r.cells);
    return r;
  };
  const Result aligned = run_slab(0), tilted = run_slab(30);
  EXPECT_TRUE(aligned.monotone);
  EXPECT_TRUE(tilted.monotone);
  EXPECT_EQ(tilted.activated, tilted.cells);
  EXPECT_EQ(aligned.activated, aligned.cells);
  EXPECT_GT(aligned.speed, 0.2);
  EXPECT_NEAR(tilted.speed / aligned.speed, 1.0, 0.10);
}

// The Φ-weighted implicit steppers on their own (diffusion_stepper.hpp): off-tissue cells keep
// their value bit for bit and feed nothing into the tissue, Σφ·V is conserved to the CG
// residual, and a φ that is not positive on a tissue cell is refused.
TEST(TissuePhase, WeightedStepperKeepsOffTissueAndConserves) {
  TempDir td;
  std::vector<float> phi_f;
  const TissueCase c = disc_case(td.dir, "aliev_panfilov_1996", &phi_f);
  const Geometry geo = build_geometry(c);
  const PhaseFieldDiffusion d =
      phase_field_diffusion(geo.grid, geo.phase, Conductivity::isotropic(0.1334), 0.0);
  DiffusionSetup ds;
  ds.grid = geo.grid;
  ds.sigma = d.sigma;
  ds.mask = d.mask;
  const Grid& g = geo.grid;
  for (DiffusionScheme sch : {DiffusionScheme::backward_euler, DiffusionScheme::crank_nicolson}) {
    for (Backend b : {Backend::reference, Backend::cpu}) {
      const auto op = make_diffusion_operator(ds, b);
      CgOptions cg;
      cg.rel_tol = 1e-14;
      DiffusionStepper<double> st(*op, 140, 0.01, 0.1, sch, cg, d.phi);
      Field<double> v(g), v_far(g);
      int off = 0;
      for (std::size_t n = 0; n < g.size(); ++n) {
        const double x = (double(n % std::size_t(g.nx())) + 0.5) * 0.2,
                     y = (double(n / std::size_t(g.nx())) + 0.5) * 0.2;
        v[n] = d.mask[n] ? 40 + 30 * std::cos(0.9 * x) * std::sin(0.7 * y + 0.3) : 123.0;
        // The same tissue values with other off-tissue values: must not change the tissue.
        v_far[n] = d.mask[n] ? v[n] : 0.0;
        off += !d.mask[n];
      }
      auto charge = [&](const Field<double>& u) {
        double q = 0;
        for (std::size_t n = 0; n < g.size(); ++n) q += d.phi[n] * u[n];
        return q;
      };
      const double q0 = charge(v);
      int iters = 0;
      for (int k = 0; k < 20; ++k) {
        st.step(v);
        iters += st.last_solve().iterations;
        st.step(v_far);
      }
      const double q1 = charge(v);
      double kept = 0, coupled = 0;
      for (std::size_t n = 0; n < g.size(); ++n) {
        if (!d.mask[n]) kept = std::max(kept, std::fabs(v[n] - 123.0));
        else coupled = std::max(coupled, std::fabs(v[n] - v_far[n]));
      }
      std::printf("[measured] phase stepper %s %s: %d off-tissue cells, max change %.1e; "
                  "tissue vs other off-tissue values %.2e mV; sum(phi V) rel change %.2e; "
                  "CG %.1f iterations/step\n",
                  scheme_name(sch), backend_name(b), off, kept, coupled, std::fabs(q1 - q0) / std::fabs(q0),
                  iters / 20.0);
      EXPECT_GT(off, 100);
      EXPECT_EQ(kept, 0.0);
      EXPECT_LT(coupled, 1e-9);
      EXPECT_LT(std::fabs(q1 - q0), 1e-12 * std::fabs(q0));
    }
  }
  const auto op = make_diffusion_operator(ds, Backend::reference);
  Field<double> bad = d.phi;
  for (std::size_t n = 0; n < g.size(); ++n)
    if (d.mask[n]) {
      bad[n] = 0;
      break;
    }
  EXPECT_THROW(DiffusionStepper<double>(*op, 140, 0.01, 0.1, DiffusionScheme::crank_nicolson, {}, bad),
               hw::Error);
  EXPECT_THROW(DiffusionStepper<double>(*op, 140, 0.01, 0.1, DiffusionScheme::crank_nicolson, {},
                                        Field<double>(7, 1.0)),
               hw::Error);
}

// Backward Euler and Crank-Nicolson with a phase field in the monodomain stepper: pure
// diffusion in the disc at dt twice the explicit limit conserves Σφ·V on both engines, and
// the two engines agree.
TEST(TissuePhase, ImplicitConservesPhaseWeightedCharge) {
  TempDir td;
  std::vector<float> phi;
  TissueCase c = disc_diffusion_case(td.dir, &phi);
  c.time.cg_tolerance = 1e-14;
  const double lim = stable_dt_limit(c);
  const double dt = 2 * lim;
  for (DiffusionScheme sch : {DiffusionScheme::backward_euler, DiffusionScheme::crank_nicolson}) {
    c.time.diffusion = sch;
    c.time.dt = dt;
    std::vector<double> v_end[2];
    for (Backend b : {Backend::reference, Backend::cpu}) {
      Simulation sim(c, SimulationOptions{b, 1});
      auto charge = [&] { return phi_charge(sim, phi); };
      const double q0 = charge(), v0 = sim.voltage_at(std::size_t(15) * 36 + 11);
      sim.run_until(50 * dt);
      const double q1 = charge(), v1 = sim.voltage_at(std::size_t(15) * 36 + 11);
      std::printf("[measured] phase disc %s %s, dt %.4f ms (2x explicit limit): sum(phi V) "
                  "%.12g -> %.12g (rel %.2e), V(11,15) %.3f -> %.3f\n",
                  scheme_name(sch), backend_name(b), dt, q0, q1, std::fabs(q1 - q0) / q0, v0, v1);
      EXPECT_GT(q0, 0);
      EXPECT_LT(std::fabs(q1 - q0), 1e-12 * std::fabs(q0));
      EXPECT_LT(v1, v0 - 1.0);  // it did diffuse
      EXPECT_NE(sim.describe().find("phase-field"), std::string::npos);
      EXPECT_NE(sim.describe().find("CG"), std::string::npos);
      v_end[b == Backend::cpu] = voltages(sim);
    }
    const double d = max_diff(v_end[0], v_end[1]);
    std::printf("[measured] phase disc %s: max |reference - cpu| (f64) %.2e mV\n", scheme_name(sch), d);
    EXPECT_LT(d, 1e-9);
  }
}

// As dt → 0 the implicit schemes converge to what the explicit phase-field scheme converges
// to. The target is the explicit run at dt_e and dt_e/2, Richardson-extrapolated (2·V(dt_e/2) −
// V(dt_e), error O(dt_e²)); errors are the max over tissue at t = 2 ms.
TEST(TissuePhase, ImplicitConvergesToExplicitAsDtShrinks) {
  TempDir td;
  TissueCase c = disc_diffusion_case(td.dir);
  c.time.cg_tolerance = 1e-13;
  const double T = 2.0, dte = 0.002;
  const auto e1 = diffuse_to(c, DiffusionScheme::forward_euler, dte, T);
  const auto e2 = diffuse_to(c, DiffusionScheme::forward_euler, dte / 2, T);
  std::vector<double> target(e1.size());
  for (std::size_t n = 0; n < e1.size(); ++n) target[n] = 2 * e2[n] - e1[n];
  std::printf("[measured] phase explicit: |V(dt %.3f) - V(dt %.3f)| = %.2e mV at t = %.0f ms\n", dte,
              dte / 2, max_diff(e1, e2), T);
  const double dts[3] = {0.1, 0.05, 0.025};
  for (DiffusionScheme sch : {DiffusionScheme::backward_euler, DiffusionScheme::crank_nicolson}) {
    double err[3];
    for (int k = 0; k < 3; ++k) err[k] = max_diff(diffuse_to(c, sch, dts[k], T), target);
    const double p1 = std::log2(err[0] / err[1]), p2 = std::log2(err[1] / err[2]);
    std::printf("[measured] phase %s vs explicit: max error %.3e, %.3e, %.3e mV at dt %.3f, "
                "%.3f, %.3f ms; observed order %.3f, %.3f\n",
                scheme_name(sch), err[0], err[1], err[2], dts[0], dts[1], dts[2], p1, p2);
    const double p = sch == DiffusionScheme::backward_euler ? 1.0 : 2.0;
    EXPECT_NEAR(p2, p, 0.15);
    EXPECT_LT(err[2], err[0]);
  }
}

// A wave entering the disc: Crank-Nicolson activates every tissue cell, close to the explicit
// run and closer as dt halves (both share the O(dt) splitting error; the explicit scheme adds
// its own O(dt) diffusion error); the cpu engine (float, CG tolerance 1e-6) agrees with the
// reference (double) within dt.
TEST(TissuePhase, CrankNicolsonWaveMatchesExplicitAndCpu) {
  TempDir td;
  TissueCase c = disc_case(td.dir, "bueno_orovio_2008_epi");
  c.stimuli.push_back(left_edge_stimulus());
  auto compare = [](const std::vector<double>& a, const std::vector<double>& b, int& both) {
    double d = 0;
    both = 0;
    for (std::size_t k = 0; k < a.size(); ++k) {
      EXPECT_EQ(std::isnan(a[k]), std::isnan(b[k])) << "cell " << k;
      if (std::isnan(a[k]) || std::isnan(b[k])) continue;
      ++both;
      d = std::max(d, std::fabs(a[k] - b[k]));
    }
    return d;
  };
  int tissue = 0;
  {
    Simulation probe(c);
    for (std::size_t k = 0; k < probe.grid().size(); ++k) tissue += !std::isnan(probe.voltage_at(k));
  }
  double d_cn[2] = {0, 0};
  const double dts[2] = {0.02, 0.01};
  for (int r = 0; r < 2; ++r) {
    c.time.dt = dts[r];
    c.time.diffusion = DiffusionScheme::forward_euler;
    const auto expl = activation(c, Backend::reference, 16);
    c.time.diffusion = DiffusionScheme::crank_nicolson;
    const auto cn_ref = activation(c, Backend::reference, 16);
    int n1 = 0, n2 = 0;
    d_cn[r] = compare(expl, cn_ref, n1);
    EXPECT_EQ(n1, tissue);
    std::printf("[measured] phase disc wave, dt %.3f ms: %d/%d cells activated; max |CN - "
                "explicit| %.4f ms\n", dts[r], n1, tissue, d_cn[r]);
    if (r > 0) continue;
    const auto cn_cpu = activation(c, Backend::cpu, 16);
    c.time.diffusion = DiffusionScheme::backward_euler;
    const auto be_ref = activation(c, Backend::reference, 16);
    const double d_cpu = compare(cn_ref, cn_cpu, n2), d_be = compare(expl, be_ref, n1);
    std::printf("[measured] phase disc wave, dt %.3f ms: max |BE - explicit| %.4f ms, CN max "
                "|reference - cpu f32| %.4f ms\n", dts[r], d_be, d_cpu);
    EXPECT_EQ(n1, tissue);
    EXPECT_EQ(n2, tissue);
    EXPECT_LT(d_be, 0.5);
    EXPECT_LT(d_cpu, c.time.dt);
  }
  std::printf("[measured] phase disc wave: |CN - explicit| ratio dt 0.02 / 0.01 = %.3f\n",
              d_cn[0] / d_cn[1]);
  EXPECT_LT(d_cn[0], 0.25);
  EXPECT_LT(d_cn[1], 0.6 * d_cn[0]);
}
