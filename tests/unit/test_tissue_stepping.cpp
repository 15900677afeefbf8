// Pure-diffusion time stepping: charge conservation, temporal orders of FE/BE/CN against the
// exact semi-discrete solution, explicit vs implicit agreement, anisotropic spreading.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "test_tissue_util.hpp"
#include "tissue/diffusion_stepper.hpp"

namespace hw::tissue {
namespace {

using testing::make_grid;
using testing::max_abs;
using testing::random_field;
using testing::random_mask;
using testing::random_tensor;
constexpr Boundary NF = Boundary::no_flux;
constexpr Boundary PER = Boundary::periodic;
const double kPi = std::acos(-1.0);
const char* scheme_name(DiffusionScheme s) {
  return s == DiffusionScheme::forward_euler    ? "forward Euler"
         : s == DiffusionScheme::backward_euler ? "backward Euler"
                                                : "Crank-Nicolson";
}

TEST(TissueStepping, NoFluxDiffusionConservesChargeToRounding) {
  DiffusionSetup s;
  s.grid = make_grid(15, 11, 7, 0.1, 0.12, 0.15, NF, NF, NF);
  s.mask = random_mask(s.grid, 51, 0.8);
  s.sigma = random_tensor(s.grid, 52, &s.mask);
  const double chi = 140.0, cm = 0.01;
  for (Backend b : {Backend::reference, Backend::cpu}) {
    auto op = make_diffusion_operator(s, b);
    const double lim = explicit_dt_limit(*op, chi, cm);
    for (DiffusionScheme sc : {DiffusionScheme::forward_euler, DiffusionScheme::backward_euler,
                               DiffusionScheme::crank_nicolson}) {
      const bool expl = sc == DiffusionScheme::forward_euler;
      const double dt = expl ? 0.95 * lim : 20.0 * lim;
      const int steps = expl ? 400 : 40;
      DiffusionStepper<double> st(*op, chi, cm, dt, sc, CgOptions{1e-13, 2000});
      Field<double> v = random_field(s.grid, 53, 0.0, 1.0);
      for (std::size_t n = 0; n < v.size(); ++n)
        if (!s.mask[n]) v[n] = 0.0;
      const double q0 = testing::sum(v) * s.grid.cell_volume();
      const Field<double> v0 = v;
      int iters = 0;
      for (int n = 0; n < steps; ++n) {
        st.step(v);
        iters += st.last_solve().iterations;
      }
      const double q = testing::sum(v) * s.grid.cell_volume();
      double change = 0.0;
      for (std::size_t n = 0; n < v.size(); ++n) change = std::max(change, std::fabs(v[n] - v0[n]));
      std::printf("[measured] charge %s %s, %d steps of %.3g ms (%s): |dQ|/Q = %.2e, max |dV| "
                  "= %.3f, CG iterations/step %.1f\n",
                  backend_name(b), scheme_name(sc), steps, dt, expl ? "0.95 dt_max" : "20 dt_max",
                  std::fabs(q - q0) / q0, change, double(iters) / steps);
      EXPECT_LE(std::fabs(q - q0), 1e-12 * q0) << scheme_name(sc);
      EXPECT_GT(change, 0.1) << "the field must actually diffuse";
    }
  }
}

// Float fields step like double ones to float accuracy, explicit and implicit.
TEST(TissueStepping, FloatFieldsTrackDouble) {
  DiffusionSetup s;
  s.grid = make_grid(15, 11, 7, 0.1, 0.12, 0.15, NF, PER, NF);
  s.mask = random_mask(s.grid, 71, 0.85);
  s.sigma = random_tensor(s.grid, 72, &s.mask);
  auto op = make_diffusion_operator(s, Backend::cpu);
  const double chi = 140.0, cm = 0.01, lim = explicit_dt_limit(*op, chi, cm);
  for (DiffusionScheme sc : {DiffusionScheme::forward_euler, DiffusionScheme::backward_euler,
                             DiffusionScheme::crank_nicolson}) {
    const double dt = sc == DiffusionScheme::forward_euler ? 0.9 * lim : 10 * lim;
    DiffusionStepper<double> sd(*op, chi, cm, dt, sc, CgOptions{1e-12, 1000});
    DiffusionStepper<float> sf(*op, chi, cm, dt, sc, CgOptions{1e-6, 1000});
    Field<double> vd = random_field(s.grid, 73, 0.0, 1.0);
    Field<float> vf(vd.size());
    for (std::size_t n = 0; n < vd.size(); ++n) vf[n] = float(vd[n]);
    for (int n = 0; n < 20; ++n) {
      sd.step(vd);
      sf.step(vf);
    }
    double err = 0.0;
    for (std::size_t n = 0; n < vd.size(); ++n) err = std::max(err, std::fabs(vd[n] - vf[n]));
    std::printf("[measured] float vs double, %s, 20 steps: max |dV| = %.2e\n", scheme_name(sc), err);
    EXPECT_LE(err, 1e-5) << scheme_name(sc);
  }
  EXPECT_THROW(DiffusionStepper<float>(*op, chi, cm, lim, DiffusionScheme::backward_euler,
                                       CgOptions{1e-10, 100}),
               Error);
}

// One Fourier mode on a uniform periodic grid is an eigenvector of L, so the semi-discrete
// solution is known exactly and the time error of each scheme can be measured alone.
TEST(TissueStepping, TimeErrorsShowOrdersOneOneTwo) {
  DiffusionSetup s;
  s.grid = make_grid(24, 18, 1, 0.1, 0.1, 1.0, PER, PER, NF);
  s.sigma = Conductivity::isotropic(0.2);
  auto op = make_diffusion_operator(s, Backend::cpu);
  const double chi = 140.0, cm = 0.01, T = 0.5;
  const Grid& g = s.grid;
  const double Lx = 2.4, Ly = 1.8, h = 0.1;
  Field<double> v0(g);
  for (int j = 0; j < g.ny(); ++j)
    for (int i = 0; i < g.nx(); ++i)
      v0[g.index(i, j, 0)] =
          std::cos(2 * kPi * g.centre(0, i) / Lx) * std::cos(2 * kPi * g.centre(1, j) / Ly);
  const double lam = 0.2 * 4 / (h * h) *
                     (std::pow(std::sin(kPi * h / Lx), 2) + std::pow(std::sin(kPi * h / Ly), 2));
  const double decay = std::exp(-lam * T / (chi * cm));
  std::printf("[measured] mode decay factor over %.1f ms: %.4f\n", T, decay);
  const double lim = explicit_dt_limit(*op, chi, cm);
  for (DiffusionScheme sc : {DiffusionScheme::forward_euler, DiffusionScheme::backward_euler,
                             DiffusionScheme::crank_nicolson}) {
    std::vector<double> errs;
    std::printf("[measured] time error %s:", scheme_name(sc));
    for (int steps : {40, 80, 160, 320}) {
      const double dt = T / steps;
      ASSERT_TRUE(sc != DiffusionScheme::forward_euler || dt <= lim);
      DiffusionStepper<double> st(*op, chi, cm, dt, sc, CgOptions{1e-14, 1000});
      Field<double> v = v0;
      for (int n = 0; n < steps; ++n) st.step(v);
      double err = 0.0;
      for (std::size_t n = 0; n < v.size(); ++n) err = std::max(err, std::fabs(v[n] - decay * v0[n]));
      errs.push_back(err);
      std::printf(" dt=%.4g err=%.3e", dt, err);
    }
    std::printf(" | orders");
    for (std::size_t k = 1; k < errs.size(); ++k) {
      const double p = std::log2(errs[k - 1] / errs[k]);
      std::printf(" %.3f", p);
      EXPECT_NEAR(p, sc == DiffusionScheme::crank_nicolson ? 2.0 : 1.0, 0.12) << scheme_name(sc);
    }
    std::printf("\n");
  }
}

// On an awkward anisotropic masked 3D setup, explicit and implicit results converge to each
// other as dt → 0 (FE−CN differences halve with dt).
TEST(TissueStepping, ExplicitAndImplicitAgreeAsDtShrinks) {
  DiffusionSetup s;
  s.grid = make_grid(13, 11, 7, 0.1, 0.1, 0.1, NF, PER, NF);
  s.mask = random_mask(s.grid, 61, 0.85);
  s.sigma = random_tensor(s.grid, 62, &s.mask);
  auto op = make_diffusion_operator(s, Backend::cpu);
  const double chi = 140.0, cm = 0.01;
  const double lim = explicit_dt_limit(*op, chi, cm);
  const double T = 8 * lim;
  // A smooth start so that the difference measures time error, not stiff transients.
  Field<double> v0(s.grid);
  for (int k = 0; k < 7; ++k)
    for (int j = 0; j < 11; ++j)
      for (int i = 0; i < 13; ++i)
        v0[s.grid.index(i, j, k)] = std::exp(-((i - 6) * (i - 6) + (j - 5) * (j - 5) + (k - 3) * (k - 3)) / 8.0);
  std::vector<double> d;
  std::printf("[measured] max|FE - CN| at T = 8 dt_max:");
  for (int steps : {8, 16, 32, 64}) {
    const double dt = T / steps;
    DiffusionStepper<double> fe(*op, chi, cm, dt, DiffusionScheme::forward_euler);
    DiffusionStepper<double> cn(*op, chi, cm, dt, DiffusionScheme::crank_nicolson,
                                CgOptions{1e-13, 1000});
    Field<double> a = v0, b = v0;
    for (int n = 0; n < steps; ++n) {
      fe.step(a);
      cn.step(b);
    }
    double e = 0.0;
    for (std::size_t n = 0; n < a.size(); ++n) e = std::max(e, std::fabs(a[n] - b[n]));
    d.push_back(e);
    std::printf(" dt=%.3g: %.3e", dt, e);
  }
  std::printf("\n");
  for (std::size_t k = 1; k < d.size(); ++k) EXPECT_NEAR(std::log2(d[k - 1] / d[k]), 1.0, 0.2);
}

// A Gaussian blob in a uniform rotated-fibre tensor spreads into an ellipse whose principal
// axes follow the fibre, with variances growing by 2σ_l t/(χCm) and 2σ_t t/(χCm). The link
// operator maps x², xy, y² exactly to 2σ_xx, 2σ_xy, 2σ_yy, so the moments follow the
// continuous law exactly while the blob stays away from the walls.
TEST(TissueStepping, GaussianBlobSpreadsAlongTheFibres) {
  DiffusionSetup s;
  s.grid = make_grid(121, 121, 1, 0.1, 0.1, 1.0, NF, NF, NF);
  const double sl = 0.2, st = 0.04, deg = 30.0, ang = deg * kPi / 180.0;
  s.sigma = Conductivity::from_fibres(
      s.grid, FibreField::uniform(s.grid, {std::cos(ang), std::sin(ang), 0.0}), {sl, st, {}});
  auto op = make_diffusion_operator(s, Backend::cpu);
  const double chi = 1.0, cm = 1.0;
  const Grid& g = s.grid;
  const double c = 6.05, s0 = 0.3;
  Field<double> v(g);
  for (int j = 0; j < g.ny(); ++j)
    for (int i = 0; i < g.nx(); ++i) {
      const double x = g.centre(0, i) - c, y = g.centre(1, j) - c;
      v[g.index(i, j, 0)] = std::exp(-(x * x + y * y) / (2 * s0 * s0));
    }
  auto moments = [&](const Field<double>& f) {
    double m0 = 0, mx = 0, my = 0, mxx = 0, mxy = 0, myy = 0;
    for (int j = 0; j < g.ny(); ++j)
      for (int i = 0; i < g.nx(); ++i) {
        const double w = f[g.index(i, j, 0)], x = g.centre(0, i) - c, y = g.centre(1, j) - c;
        m0 += w; mx += w * x; my += w * y; mxx += w * x * x; mxy += w * x * y; myy += w * y * y;
      }
    mx /= m0; my /= m0;
    return std::array<double, 3>{mxx / m0 - mx * mx, mxy / m0 - mx * my, myy / m0 - my * my};
  };
  const auto before = moments(v);
  const double t_end = 2.0;
  const double dt = 0.5 * explicit_dt_limit(*op, chi, cm);
  const int steps = int(std::ceil(t_end / dt));
  DiffusionStepper<double> fe(*op, chi, cm, t_end / steps, DiffusionScheme::forward_euler);
  for (int n = 0; n < steps; ++n) fe.step(v);
  const auto m = moments(v);
  // Principal axes of the covariance.
  const double tr = m[0] + m[2], det = m[0] * m[2] - m[1] * m[1];
  const double l1 = tr / 2 + std::sqrt(tr * tr / 4 - det), l2 = tr / 2 - std::sqrt(tr * tr / 4 - det);
  const double axis_deg = 0.5 * std::atan2(2 * m[1], m[0] - m[2]) * 180.0 / kPi;
  const double grow_l = 2 * sl * t_end / (chi * cm), grow_t = 2 * st * t_end / (chi * cm);
  const double iso0 = 0.5 * (before[0] + before[2]);
  std::printf("[measured] blob: major axis %.4f deg (fibre %.1f), variance growth along %.5f "
              "(expect %.5f), across %.5f (expect %.5f), aspect sqrt %.3f\n",
              axis_deg, deg, l1 - iso0, grow_l, l2 - iso0, grow_t, std::sqrt(l1 / l2));
  EXPECT_NEAR(axis_deg, deg, 0.05);
  EXPECT_NEAR(l1 - iso0, grow_l, 1e-3 * grow_l);
  EXPECT_NEAR(l2 - iso0, grow_t, 1e-3 * grow_t);
}

}  // namespace
}  // namespace hw::tissue
