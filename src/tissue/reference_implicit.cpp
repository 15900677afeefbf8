// The reference engine's naive implicit diffusion; see reference_implicit.hpp for why it
// exists and for the systems it solves.
#include "tissue/reference_implicit.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/error.hpp"
#include "kernels/diffusion_links.hpp"

namespace hw::tissue::reference {

namespace {

// Σ x_n·y_n, one serial loop left to right.
double dot(const Field<double>& x, const Field<double>& y) {
  double s = 0.0;
  for (std::size_t n = 0; n < x.size(); ++n) s += x[n] * y[n];
  return s;
}

// r = b − A x
void true_residual(const MatVec& a, const Field<double>& b, const Field<double>& x,
                   Field<double>& r) {
  a(x, r);
  for (std::size_t n = 0; n < b.size(); ++n) r[n] = b[n] - r[n];
}

}  // namespace

NaiveCgStats naive_cg(const MatVec& a, const Field<double>& inv_diag, const Field<double>& b,
                      Field<double>& x, double rel_tol, int max_iter) {
  const std::size_t n = b.size();
  if (x.size() != n || inv_diag.size() != n)
    throw Error(fmt::format("reference CG: b has {} values, x {}, the preconditioner {}", n,
                            x.size(), inv_diag.size()));
  NaiveCgStats st;
  const double bnorm = std::sqrt(dot(b, b));
  if (bnorm == 0.0) {  // A x = 0 has x = 0 only (A is SPD)
    x.fill(0.0);
    return st;
  }
  Field<double> r(n), z(n), p(n), q(n);
  true_residual(a, b, x, r);
  st.rel_residual = std::sqrt(dot(r, r)) / bnorm;
  // A true residual that stays above rel_tol after many restarts sits on rounding: each
  // restart would only add an iteration or two, so stop well before max_iter.
  constexpr int kMaxRestarts = 50;
  while (st.rel_residual > rel_tol) {
    if (st.iterations >= max_iter || st.restarts > kMaxRestarts)
      throw Error(fmt::format("reference CG: no convergence in {} iterations ({} restarts): true "
                              "relative residual {:.3g} > {:.3g}",
                              st.iterations, st.restarts, st.rel_residual, rel_tol));
    // z = M⁻¹ r, p = z
    for (std::size_t i = 0; i < n; ++i) p[i] = z[i] = inv_diag[i] * r[i];
    double rz = dot(r, z);
    while (st.iterations < max_iter) {
      // α = rᵀz / pᵀA p;  x += α p;  r −= α A p
      a(p, q);
      const double pq = dot(p, q);
      if (!(pq > 0.0))
        throw Error(fmt::format("reference CG: p'Ap = {:.3g} <= 0 at iteration {}: the matrix "
                                "is not positive definite", pq, st.iterations));
      const double alpha = rz / pq;
      for (std::size_t i = 0; i < n; ++i) x[i] += alpha * p[i];
      for (std::size_t i = 0; i < n; ++i) r[i] -= alpha * q[i];
      ++st.iterations;
      if (std::sqrt(dot(r, r)) <= rel_tol * bnorm) break;
      // z = M⁻¹ r;  β = rᵀz_new / rᵀz_old;  p = z + β p
      for (std::size_t i = 0; i < n; ++i) z[i] = inv_diag[i] * r[i];
      const double rz_new = dot(r, z);
      const double beta = rz_new / rz;
      rz = rz_new;
      for (std::size_t i = 0; i < n; ++i) p[i] = z[i] + beta * p[i];
    }
    // The recurrence residual drifts from b − A x by rounding: judge by the true one, and
    // restart from x when it is still too large.
    true_residual(a, b, x, r);
    st.rel_residual = std::sqrt(dot(r, r)) / bnorm;
    if (st.rel_residual > rel_tol) ++st.restarts;
  }
  return st;
}

ImplicitDiffusion::ImplicitDiffusion(const DiffusionOperator& op, const DiffusionSetup& setup,
                                     double chi, double cm, double dt, DiffusionScheme scheme,
                                     const Field<double>& phi, double rel_tol)
    : op_(op) {
  if (op.backend() != Backend::reference || !op.layout().box)
    throw Error("reference implicit diffusion: needs the reference operator on the box");
  if (scheme == DiffusionScheme::forward_euler)
    throw Error("reference implicit diffusion: forward Euler is not an implicit scheme");
  if (!(chi > 0.0) || !(cm > 0.0) || !(dt > 0.0) || !std::isfinite(chi * cm * dt))
    throw Error(fmt::format("reference implicit diffusion: chi = {}, Cm = {}, dt = {} must all "
                            "be finite and > 0", chi, cm, dt));
  const Grid& g = setup.grid;
  const Mask* mask = setup.mask.empty() ? nullptr : &setup.mask;
  if (g.size() != op.grid().size())
    throw Error("reference implicit diffusion: the set-up and the operator have other grids");
  a_ = dt / (chi * cm);
  theta_ = scheme == DiffusionScheme::backward_euler ? 1.0 : 0.5;
  tol_ = std::clamp(rel_tol, kTightestRelTol, kLoosestRelTol);

  // w_n = φ_n on tissue, 1 off tissue (and everywhere without a phase field).
  w_ = Field<double>(g.size(), 1.0);
  if (!phi.empty()) {
    if (phi.size() != g.size())
      throw Error(fmt::format("reference implicit diffusion: phase field has {} values, the "
                              "grid {} cells", phi.size(), g.size()));
    for (std::size_t n = 0; n < g.size(); ++n) {
      if (!is_tissue(mask, n)) continue;
      if (!(phi[n] > 0.0) || !std::isfinite(phi[n]))
        throw Error(fmt::format("reference implicit diffusion: phi = {} at tissue cell {}; it "
                                "must be finite and > 0", phi[n], n));
      w_[n] = phi[n];
    }
  }

  // Jacobi: diag(A)_n = w_n − θ·a·L_nn, L_nn summed link by link exactly as the reference
  // kernel scatters (a face w·(v_m − v_n) puts −w on both ends' diagonals; an edge
  // e·(v_s − v_p) − e·(v_r − v_q) puts −e on p, s and +e on q, r). The preconditioner changes
  // how fast CG gets there, never where: the stopping test is the true residual. The
  // fourth-order stencil has constant isotropic σ on a box, so its diagonal is constant up to
  // the wall corrections and plain CG (M = I) converges as fast.
  inv_diag_ = Field<double>(g.size(), 1.0);
  if (setup.order == StencilOrder::second) {
    Field<double> lnn(g.size(), 0.0);
    kernels::for_each_link(
        g, setup.sigma, mask, setup.sigma.has_off_diagonal(),
        [&](std::size_t n, std::size_t m, int, double w) {
          lnn[n] -= w;
          lnn[m] -= w;
        },
        [&](std::size_t p, std::size_t q, std::size_t r, std::size_t s, int, double e) {
          lnn[p] -= e;
          lnn[s] -= e;
          lnn[q] += e;
          lnn[r] += e;
        });
    for (std::size_t n = 0; n < g.size(); ++n) {
      const double d = w_[n] - theta_ * a_ * lnn[n];
      if (!(d > 0.0))
        throw Error(fmt::format("reference implicit diffusion: diagonal {:.3g} <= 0 at cell {}: "
                                "the system is not positive definite", d, n));
      inv_diag_[n] = 1.0 / d;
    }
  }
}

void ImplicitDiffusion::apply_shifted(const Field<double>& x, Field<double>& y, double c) const {
  // y = c·L x, then y = w∘x − y
  op_.apply(x, y, c, 0.0);
  for (std::size_t n = 0; n < x.size(); ++n) y[n] = w_[n] * x[n] - y[n];
}

void ImplicitDiffusion::step(Field<double>& v) {
  if (v.size() != w_.size())
    throw Error(fmt::format("reference implicit diffusion: V has {} values, the grid {}",
                            v.size(), w_.size()));
  // b = Φ V (backward Euler) or (Φ + a/2·L) V (Crank-Nicolson): w∘V − (θ−1)·a·L V
  Field<double> b(v.size());
  if (theta_ == 1.0)
    for (std::size_t n = 0; n < v.size(); ++n) b[n] = w_[n] * v[n];
  else
    apply_shifted(v, b, (theta_ - 1.0) * a_);
  // (Φ − θ·a·L) V⁺ = b, starting from V
  const MatVec a = [&](const Field<double>& x, Field<double>& y) { apply_shifted(x, y, theta_ * a_); };
  // Far more iterations than these systems need (tens to a few hundred): a stall is a bug.
  constexpr int kMaxIter = 20000;
  last_ = naive_cg(a, inv_diag_, b, v, tol_, kMaxIter);
}

}  // namespace hw::tissue::reference
