// The reference engine's own implicit-diffusion solver (tissue/reference_implicit.hpp) on
// its own, against answers that owe nothing to any CG: a dense SPD system solved by
// Gaussian elimination, the exact amplification factor of a Fourier mode on a periodic
// line, and a masked 3D anisotropic phase-field step solved densely. The oracle of the
// cpu and CUDA engines' implicit diffusion is itself checked here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "core/error.hpp"
#include "mesh/conductivity.hpp"
#include "tissue/diffusion.hpp"
#include "tissue/reference_implicit.hpp"

namespace hw::tissue {
namespace {

const double kPi = std::acos(-1.0);

using Dense = std::vector<std::vector<double>>;

// Solves A x = b by Gaussian elimination with partial pivoting (A, b copied).
std::vector<double> dense_solve(Dense a, std::vector<double> b) {
  const std::size_t n = b.size();
  for (std::size_t c = 0; c < n; ++c) {
    std::size_t piv = c;
    for (std::size_t r = c + 1; r < n; ++r)
      if (std::fabs(a[r][c]) > std::fabs(a[piv][c])) piv = r;
    std::swap(a[c], a[piv]);
    std::swap(b[c], b[piv]);
    for (std::size_t r = c + 1; r < n; ++r) {
      const double f = a[r][c] / a[c][c];
      for (std::size_t k = c; k < n; ++k) a[r][k] -= f * a[c][k];
      b[r] -= f * b[c];
    }
  }
  std::vector<double> x(n);
  for (std::size_t r = n; r-- > 0;) {
    double s = b[r];
    for (std::size_t k = r + 1; k < n; ++k) s -= a[r][k] * x[k];
    x[r] = s / a[r][r];
  }
  return x;
}

double max_abs(const Field<double>& x) {
  double m = 0;
  for (std::size_t n = 0; n < x.size(); ++n) m = std::max(m, std::fabs(x[n]));
  return m;
}

// A = Bᵀ B + I on 40 unknowns (SPD, condition ~ 10²), against the dense solve; with plain
// CG (ones) and with Jacobi; and a zero right-hand side gives x = 0.
TEST(TissueReferenceImplicit, NaiveCgSolvesADenseSpdSystem) {
  const std::size_t n = 40;
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  Dense bm(n, std::vector<double>(n)), a(n, std::vector<double>(n, 0.0));
  for (auto& row : bm)
    for (double& x : row) x = u(rng);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      for (std::size_t k = 0; k < n; ++k) a[i][j] += bm[k][i] * bm[k][j];
      a[i][j] += i == j ? 1.0 : 0.0;
    }
  Field<double> b(n), ones(n, 1.0), jacobi(n);
  for (std::size_t i = 0; i < n; ++i) {
    b[i] = u(rng);
    jacobi[i] = 1.0 / a[i][i];
  }
  const std::vector<double> want = dense_solve(a, b.vec());
  const reference::MatVec mv = [&](const Field<double>& x, Field<double>& y) {
    for (std::size_t i = 0; i < n; ++i) {
      y[i] = 0;
      for (std::size_t j = 0; j < n; ++j) y[i] += a[i][j] * x[j];
    }
  };
  for (const Field<double>* m : {&ones, &jacobi}) {
    Field<double> x(n, 0.0);
    const reference::NaiveCgStats st = reference::naive_cg(mv, *m, b, x, 1e-13, 1000);
    double err = 0;
    for (std::size_t i = 0; i < n; ++i) err = std::max(err, std::fabs(x[i] - want[i]));
    std::printf("[measured] naive CG (%s) on a dense 40x40 SPD system: %d iterations, %d restarts, "
                "true residual %.2e, max |x - x_dense| %.2e\n",
                m == &ones ? "plain" : "Jacobi", st.iterations, st.restarts, st.rel_residual, err);
    EXPECT_LE(st.rel_residual, 1e-13);
    double wmax = 0;
    for (double w : want) wmax = std::max(wmax, std::fabs(w));
    EXPECT_LT(err, 1e-10 * wmax);
  }
  Field<double> zero(n, 0.0), x(n, 3.0);
  reference::naive_cg(mv, ones, zero, x, 1e-12, 10);
  EXPECT_EQ(max_abs(x), 0.0);
  // A matrix that is not positive definite is refused, not half-solved.
  const reference::MatVec neg = [&](const Field<double>& v, Field<double>& y) {
    for (std::size_t i = 0; i < n; ++i) y[i] = -v[i];
  };
  Field<double> x2(n, 0.0);
  EXPECT_THROW(reference::naive_cg(neg, ones, b, x2, 1e-12, 100), hw::Error);
}

// On a periodic line with uniform σ, v_i = cos(2πk(i+½)/N) is an eigenvector of L with
// eigenvalue −μ, μ = (4σ/h²)·sin²(πk/N). One step multiplies it by 1/(1 + a·μ) (backward
// Euler) or (1 − a·μ/2)/(1 + a·μ/2) (Crank-Nicolson), a = dt/(χ·Cm): exactly, in exact
// arithmetic. Here a·μ ≈ 7 for k = 5, far beyond forward Euler's limit of 2.
TEST(TissueReferenceImplicit, PeriodicFourierModeHasTheExactFactor) {
  DiffusionSetup ds;
  ds.grid.n = {32, 1, 1};
  ds.grid.h = {0.1, 1, 1};
  ds.grid.bc[0] = Boundary::periodic;
  const double sigma = 0.1334, chi = 140, cm = 0.01, dt = 0.5;
  ds.sigma = Conductivity::isotropic(sigma);
  const auto op = make_diffusion_operator(ds, Backend::reference);
  const int N = 32;
  const double a = dt / (chi * cm);
  // Three modes at once (an eigenvector alone is solved in one CG iteration).
  const int ks[3] = {1, 5, 11};
  const double amp[3] = {50, 20, 7};
  for (DiffusionScheme sch : {DiffusionScheme::backward_euler, DiffusionScheme::crank_nicolson}) {
    reference::ImplicitDiffusion st(*op, ds, chi, cm, dt, sch, {}, 1e-14);
    Field<double> v{std::size_t(N)}, want{std::size_t(N)};
    for (int q = 0; q < 3; ++q) {
      const double mu = 4 * sigma / (0.1 * 0.1) * std::pow(std::sin(kPi * ks[q] / N), 2);
      const double g = sch == DiffusionScheme::backward_euler ? 1 / (1 + a * mu)
                                                              : (1 - 0.5 * a * mu) / (1 + 0.5 * a * mu);
      for (int i = 0; i < N; ++i) {
        const double m = amp[q] * std::cos(2 * kPi * ks[q] * (i + 0.5) / N);
        v[std::size_t(i)] += m;
        want[std::size_t(i)] += g * m;
      }
      std::printf("[measured] mode k=%d: a*mu = %.2f, factor %.6f\n", ks[q], a * mu, g);
    }
    st.step(v);
    double err = 0;
    for (std::size_t i = 0; i < v.size(); ++i) err = std::max(err, std::fabs(v[i] - want[i]));
    std::printf("[measured] reference %s, modes k = 1, 5, 11 on a periodic line of 32: max error "
                "%.2e mV, %d CG iterations, true residual %.2e\n",
                sch == DiffusionScheme::backward_euler ? "BE" : "CN", err, st.last_solve().iterations,
                st.last_solve().rel_residual);
    EXPECT_LT(err, 1e-11 * 50);
    EXPECT_LE(st.last_solve().rel_residual, 1e-14);
  }
}

// A 3D masked box with rotating fibres (off-diagonal σ: edge links) and a phase field φ:
// the step against (Φ − θ·a·L) x = (Φ + (1−θ)·a·L) V solved densely, L assembled column by
// column from the reference operator. Off-tissue cells keep their value; the fourth-order
// stencil (box, constant σ) is checked the same way.
TEST(TissueReferenceImplicit, MaskedAnisotropicPhaseFieldStepMatchesDenseSolve) {
  DiffusionSetup ds;
  ds.grid.n = {6, 5, 4};
  ds.grid.h = {0.2, 0.25, 0.3};
  ds.grid.bc[1] = Boundary::periodic;
  const Grid& g = ds.grid;
  const std::size_t n = g.size();
  ds.mask = Mask(n, 1);
  Field<double> phi(n, 0.0);
  for (int k = 0; k < g.nz(); ++k)
    for (int j = 0; j < g.ny(); ++j)
      for (int i = 0; i < g.nx(); ++i) {
        const std::size_t c = g.index(i, j, k);
        const bool hole = (i == 2 || i == 3) && j == 2;  // a tunnel through z
        ds.mask[c] = hole || (i == 0 && k == 0) ? 0 : 1;
        if (ds.mask[c]) phi[c] = 0.05 + 0.95 * (i + 1) / 6.0;  // small φ at the x− wall
      }
  const FibreField fib = FibreField::rotating_through_z(g, -60, 60);
  const Conductivity base = Conductivity::from_fibres(g, fib, {0.1334, 0.0176, std::nullopt}, &ds.mask);
  ds.sigma = base.scaled(g, phi);
  ASSERT_TRUE(ds.sigma.has_off_diagonal());
  const double chi = 140, cm = 0.01, dt = 0.3, a = dt / (chi * cm);

  auto check = [&](const DiffusionSetup& setup, const Field<double>& w_phi, const char* what) {
    const auto op = make_diffusion_operator(setup, Backend::reference);
    Dense lm(n, std::vector<double>(n));
    Field<double> e(n, 0.0), col(n);
    for (std::size_t c = 0; c < n; ++c) {
      e[c] = 1;
      op->apply(e, col);
      for (std::size_t r = 0; r < n; ++r) lm[r][c] = col[r];
      e[c] = 0;
    }
    Field<double> v0(n);
    for (std::size_t c = 0; c < n; ++c) v0[c] = 40 * std::sin(0.7 * double(c)) + 10 * std::cos(0.3 * double(c * c));
    for (DiffusionScheme sch : {DiffusionScheme::backward_euler, DiffusionScheme::crank_nicolson}) {
      const double th = sch == DiffusionScheme::backward_euler ? 1.0 : 0.5;
      Dense am(n, std::vector<double>(n));
      std::vector<double> rhs(n, 0.0);
      for (std::size_t r = 0; r < n; ++r) {
        const double w = w_phi.empty() || !is_tissue(&setup.mask, r) ? 1.0 : w_phi[r];
        for (std::size_t c = 0; c < n; ++c) {
          am[r][c] = (r == c ? w : 0.0) - th * a * lm[r][c];
          rhs[r] += ((r == c ? w : 0.0) + (1 - th) * a * lm[r][c]) * v0[c];
        }
      }
      const std::vector<double> want = dense_solve(am, rhs);
      reference::ImplicitDiffusion st(*op, setup, chi, cm, dt, sch, w_phi, 1e-12);
      Field<double> v = v0;
      st.step(v);
      double err = 0, kept = 0;
      for (std::size_t c = 0; c < n; ++c) {
        err = std::max(err, std::fabs(v[c] - want[c]));
        if (!is_tissue(&setup.mask, c)) kept = std::max(kept, std::fabs(v[c] - v0[c]));
      }
      std::printf("[measured] reference %s, %s: max |V - V_dense| %.2e mV, %d CG iterations, "
                  "%d restarts, true residual %.2e\n",
                  sch == DiffusionScheme::backward_euler ? "BE" : "CN", what, err,
                  st.last_solve().iterations, st.last_solve().restarts, st.last_solve().rel_residual);
      EXPECT_LT(err, 1e-9);
      EXPECT_EQ(kept, 0.0);
      EXPECT_LE(st.last_solve().rel_residual, 1e-12);
    }
  };
  check(ds, phi, "6x5x4 mask, rotating fibres, phase field");
  DiffusionSetup d4;
  d4.grid = g;
  d4.sigma = Conductivity::isotropic(0.1334);
  d4.order = StencilOrder::fourth;
  check(d4, {}, "6x5x4 box, fourth-order stencil");
  // A φ that is not positive on a tissue cell is refused.
  const auto op = make_diffusion_operator(ds, Backend::reference);
  Field<double> bad = phi;
  bad[g.index(3, 0, 1)] = 0;
  EXPECT_THROW(reference::ImplicitDiffusion(*op, ds, chi, cm, dt, DiffusionScheme::backward_euler, bad, 1e-12),
               hw::Error);
}

}  // namespace
}  // namespace hw::tissue
