// Shared helpers for the tissue tests: random fields, random anisotropic setups, norms.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "tissue/case.hpp"
#include "mesh/conductivity.hpp"
#include "tissue/diffusion.hpp"
#include "mesh/grid.hpp"
#include "tissue/simulation.hpp"

namespace hw::tissue::testing {

// The cells whose centres lie in the box [lo, hi) (mm).
inline Region box_region(std::array<double, 3> lo, std::array<double, 3> hi) {
  Region r;
  r.kind = Region::Kind::box;
  r.lo = lo;
  r.hi = hi;
  return r;
}

// A stimulus of amplitude (µA/mm³) for duration (ms) from t = 0 on `where`.
inline Stimulus stimulus(const Region& where, double amplitude, double duration) {
  Stimulus s;
  s.where = where;
  s.amplitude = amplitude;
  s.duration = duration;
  return s;
}

inline Stimulus box_stimulus(std::array<double, 3> lo, std::array<double, 3> hi,
                             double amplitude = 50, double duration = 1) {
  return stimulus(box_region(lo, hi), amplitude, duration);
}

// An initial condition: `variable` = value on box_region(lo, hi).
inline InitialCondition box_initial(std::array<double, 3> lo, std::array<double, 3> hi,
                                    const std::string& variable, double value) {
  InitialCondition ic;
  ic.where = box_region(lo, hi);
  ic.variable = variable;
  ic.value = value;
  return ic;
}

// An nx × ny × nz sheet of cells of h mm running `model` everywhere, dt 0.02 ms, RL1.
inline TissueCase sheet(int nx, int ny, int nz, double h, const std::string& model) {
  TissueCase c;
  c.grid.n = {nx, ny, nz};
  c.grid.h = {h, h, h};
  ModelRegion m;
  m.model = model;
  c.models.push_back(m);
  c.conductivity.sigma_l = 0.1334;
  c.conductivity.sigma_t = 0.0176;
  c.time.dt = 0.02;
  c.time.integrator = "rl1";
  return c;
}

// A second model on the cells whose centres lie in the box [lo, hi) (mm).
inline void add_box_region(TissueCase& c, const std::string& model, std::array<double, 3> lo,
                           std::array<double, 3> hi) {
  ModelRegion r;
  r.model = model;
  r.where = box_region(lo, hi);
  c.models.push_back(r);
}

// A 24 × 40 sheet of Bueno-Orovio (epi, an endo block) with 40 point-like stimuli along its
// left edge, staggered in time and overlapping: more than a 32-bit mask could hold.
inline TissueCase many_stimuli_sheet() {
  TissueCase c = sheet(24, 40, 1, 0.25, "bueno_orovio_2008_epi");
  add_box_region(c, "bueno_orovio_2008_endo", {3, 0, 0}, {6, 10, 0.25});
  c.time.dt = 0.05;
  for (int q = 0; q < 40; ++q) {
    Stimulus s = box_stimulus({0, 0.25 * q, 0}, {0.5 + 0.01 * q, 0.25 * q + 0.5, 0.25}, 40, 0.5);
    s.start = 0.05 * (q % 7);
    c.stimuli.push_back(s);
  }
  return c;
}

// The ellipsoidal shell of the compressed-row tests in a 24×20×16 grid of 0.25 mm (a third of
// the box is tissue).
inline void ellipsoid_shell(TissueCase& c) {
  c.geometry.kind = GeometrySpec::Kind::ellipsoid_shell;
  c.geometry.centre = {3, 2.5, 2};
  c.geometry.radii_outer = {2.9, 2.4, 1.9};
  c.geometry.radii_inner = {1.9, 1.4, 0.9};
}

// Rotating fibres, +60° to −60° through z.
inline void rotating_fibres(TissueCase& c) {
  c.fibres.kind = FibreSpec::Kind::rotating;
  c.fibres.angle_from = 60;
  c.fibres.angle_to = -60;
}

inline Grid make_grid(int nx, int ny, int nz, double hx, double hy, double hz, Boundary bx,
                      Boundary by, Boundary bz) {
  Grid g;
  g.n = {nx, ny, nz};
  g.h = {hx, hy, hz};
  g.bc = {bx, by, bz};
  return g;
}

inline Field<double> random_field(const Grid& g, unsigned seed, double lo = -1.0,
                                  double hi = 1.0) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  Field<double> f(g);
  for (std::size_t n = 0; n < f.size(); ++n) f[n] = u(rng);
  return f;
}

// ~fill_fraction of cells are tissue, at random.
inline Mask random_mask(const Grid& g, unsigned seed, double fill_fraction) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  Mask m(g);
  for (std::size_t n = 0; n < m.size(); ++n) m[n] = u(rng) < fill_fraction ? 1 : 0;
  return m;
}

// Random fibre and sheet directions per voxel, random σ_l, σ_t, σ_n: the awkward case.
inline Conductivity random_tensor(const Grid& g, unsigned seed, const Mask* mask = nullptr) {
  FibreField fib;
  std::array<Field<double>, 3> s;
  std::mt19937 rng(seed);
  std::normal_distribution<double> nd(0.0, 1.0);
  for (int a = 0; a < 3; ++a) {
    fib.f[a] = Field<double>(g);
    s[a] = Field<double>(g);
  }
  for (std::size_t n = 0; n < g.size(); ++n)
    for (int a = 0; a < 3; ++a) {
      fib.f[a][n] = nd(rng) + (a == 0 ? 0.1 : 0.0);
      s[a][n] = nd(rng);
    }
  fib.s = s;
  return Conductivity::from_fibres(g, fib, {0.25, 0.06, 0.02}, mask);
}

// max |a − b| over the cells where both are defined (not NaN); *same_nan: whether the NaN
// patterns (and sizes) agree.
inline double max_diff(const std::vector<double>& a, const std::vector<double>& b, bool* same_nan) {
  double d = 0;
  *same_nan = a.size() == b.size();
  for (std::size_t n = 0; n < a.size() && n < b.size(); ++n) {
    if (std::isnan(a[n]) != std::isnan(b[n])) *same_nan = false;
    if (!std::isnan(a[n]) && !std::isnan(b[n])) d = std::max(d, std::fabs(a[n] - b[n]));
  }
  return d;
}

// A run of case c on backend b to t_end with V sampled after every step: activation times
// (first upward crossing of thr, linear in time; NaN where none) from the same float
// samples on every engine, V at the end, and V in double after `early` steps (if > 0).
struct ActivationRun {
  std::vector<double> act;
  Field<float> v;
  std::vector<double> v_early;
};

inline ActivationRun run_with_activation(const TissueCase& c, Backend b, double t_end, int threads = 1,
                                         long early = 0, double thr = -20) {
  SimulationOptions o;
  o.backend = b;
  o.threads = threads;
  Simulation sim(c, o);
  const std::size_t N = sim.grid().size();
  ActivationRun r;
  r.act.assign(N, std::numeric_limits<double>::quiet_NaN());
  Field<float> prev, v;
  sim.voltage(prev);
  sim.run_until(t_end, [&](const Simulation& s) {
    s.voltage(v);
    for (std::size_t n = 0; n < N; ++n)
      if (std::isnan(r.act[n]) && prev[n] < thr && v[n] >= thr)
        r.act[n] = s.time() - s.dt() + s.dt() * (thr - prev[n]) / double(v[n] - prev[n]);
    std::swap(prev, v);
    if (early > 0 && s.steps_done() == early) {
      r.v_early.resize(N);
      for (std::size_t n = 0; n < N; ++n) r.v_early[n] = s.voltage_at(n);
    }
  });
  r.v = prev;
  return r;
}

// Lookup tables (time.cell_maths = "tables") against the exact maths in tissue, issue 29's
// bounds: a ten Tusscher strip 20 mm long, paced at its left end; every activation time
// within one dt of the exact run's, and the conduction velocity between x = 5 and 15 mm
// within 0.5 %. The same check of the cpu engine (a CI test) and the GPU's (tests/gpu), in
// both precisions; prints "[measured]" lines for docs/verification.md.
// The tissue bounds of issue 29 for cell maths other than exact (model/emit/cell_maths.hpp):
// a ten Tusscher strip activated from one end, each cell's activation time within one dt of
// the exact kernels' and the conduction velocity within 0.5 %. Tables are checked in double
// and float, fast intrinsics in float only (they are float only).
inline void expect_cell_maths_within_bounds_in_tissue(Backend b, const char* engine, hw::model::CellMaths maths) {
  for (Precision p : {Precision::f64, Precision::f32}) {
    if (maths.fast && p == Precision::f64) continue;
    TissueCase c = sheet(80, 3, 1, 0.25, "tentusscher_2006_epi");
    c.time.precision = p;
    c.stimuli.push_back(box_stimulus({0, 0, 0}, {0.75, 0.75, 0.25}));
    const ActivationRun exact = run_with_activation(c, b, 45, 2);
    c.time.cell_maths = maths;
    const ActivationRun approx = run_with_activation(c, b, 45, 2);
    double max_dact = 0;
    std::size_t activated = 0, moved = 0;
    for (std::size_t n = 0; n < exact.act.size(); ++n) {
      if (std::isnan(exact.act[n]) != std::isnan(approx.act[n])) max_dact = INFINITY;
      if (std::isnan(exact.act[n])) continue;
      ++activated;
      moved += exact.act[n] != approx.act[n];
      max_dact = std::max(max_dact, std::fabs(exact.act[n] - approx.act[n]));
    }
    // Cells (20, 1) and (60, 1): centres 10 mm apart on the middle row.
    const auto cv = [&](const std::vector<double>& act) { return 10.0 / (act[80 + 60] - act[80 + 20]); };
    const double cv_exact = cv(exact.act), cv_approx = cv(approx.act);
    const double dcv = std::fabs(cv_approx - cv_exact) / cv_exact;
    std::printf("[measured] cell maths %s in tissue, %s, %s: %zu of %zu cells activated, activation within "
                "%.3g ms (dt %g), CV %.4f vs %.4f m/s (%.3g %%)\n",
                to_string(maths).c_str(), engine, p == Precision::f64 ? "double" : "float", activated,
                exact.act.size(), max_dact, c.time.dt, cv_approx, cv_exact, 100 * dcv);
    EXPECT_EQ(activated, exact.act.size());
    EXPECT_GT(moved, 0u) << "the approximate kernel gave the exact kernel's activation times bit for bit";
    EXPECT_LE(max_dact, c.time.dt);
    EXPECT_LE(dcv, 0.005);
  }
}

inline double max_abs(const Field<double>& f) {
  double m = 0.0;
  for (std::size_t n = 0; n < f.size(); ++n) m = std::max(m, std::fabs(f[n]));
  return m;
}

inline double dot(const Field<double>& a, const Field<double>& b) {
  double s = 0.0;
  for (std::size_t n = 0; n < a.size(); ++n) s += a[n] * b[n];
  return s;
}

inline double sum(const Field<double>& a) {
  double s = 0.0;
  for (std::size_t n = 0; n < a.size(); ++n) s += a[n];
  return s;
}

}  // namespace hw::tissue::testing
