// Pure-diffusion steppers; see diffusion_stepper.hpp for the schemes.
#include "tissue/diffusion_stepper.hpp"

#include <cmath>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "parallel/team.hpp"

namespace hw::tissue {

double explicit_dt_limit(const DiffusionOperator& op, double chi, double cm) {
  const double b = op.spectral_bound();
  if (!(b > 0.0)) return std::numeric_limits<double>::infinity();
  return 2.0 * chi * cm / b;
}

void check_explicit_dt(const DiffusionOperator& op, double chi, double cm, double dt,
                       const SourceLoc& loc) {
  if (!(chi > 0.0) || !std::isfinite(chi))
    throw InputError(loc, fmt::format("chi = {} /mm must be > 0", chi));
  if (!(cm > 0.0) || !std::isfinite(cm))
    throw InputError(loc, fmt::format("Cm = {} uF/mm^2 must be > 0", cm));
  if (!(dt > 0.0) || !std::isfinite(dt))
    throw InputError(loc, fmt::format("dt = {} ms must be > 0", dt));
  const double lim = explicit_dt_limit(op, chi, cm);
  if (dt > lim) throw InputError(loc, unstable_dt_message(dt, lim));
}

std::string unstable_dt_message(double dt, double limit) {
  return fmt::format("time.dt = {} ms is above the stability limit of explicit diffusion, dt ≤ {:.4g} ms "
                     "(dt_max = 2·chi·Cm/lambda_max = {:.6g} ms for this grid and conductivity): use "
                     "a smaller time.dt or an implicit scheme, time.diffusion = \"crank-nicolson\" or "
                     "\"backward-euler\"",
                     dt, limit, limit);
}

template <class Real>
DiffusionStepper<Real>::DiffusionStepper(const DiffusionOperator& op, double chi, double cm,
                                         double dt, DiffusionScheme scheme, CgOptions cg,
                                         const Field<double>& phi)
    : op_(op), a_(0.0), scheme_(scheme), cg_(cg) {
  if (scheme == DiffusionScheme::forward_euler) {
    check_explicit_dt(op, chi, cm, dt);
  } else {
    if (!(chi > 0.0) || !(cm > 0.0) || !(dt > 0.0) || !std::isfinite(chi * cm * dt))
      throw InputError(SourceLoc{}, fmt::format("diffusion: chi = {}, Cm = {}, dt = {} must all "
                                                "be finite and > 0", chi, cm, dt));
  }
  // CG in float stalls near 1e-7 relative residual; a tighter request would never converge.
  if (scheme != DiffusionScheme::forward_euler && sizeof(Real) == sizeof(float) &&
      cg.rel_tol < 1e-6)
    throw Error(fmt::format("diffusion: CG rel_tol = {:.3g} is below what float fields can "
                            "reach; use rel_tol >= 1e-6 or double fields", cg.rel_tol));
  a_ = dt / (chi * cm);
  const RowLayout& layout = op.layout();
  const std::size_t n = layout.size();
  work_.resize(n);
  rhs_.resize(n);
  // w_n = φ_n on tissue, 1 off tissue (identity rows there; L_nn = 0 too), in the
  // operator's storage.
  Field<double> w(n, 1.0);
  if (!phi.empty()) {
    if (phi.size() != op.grid().size())
      throw Error(fmt::format("diffusion: phase field has {} values, the grid {} cells",
                              phi.size(), op.grid().size()));
    for (std::size_t c = 0; c < phi.size(); ++c) {
      if (!is_tissue(op.mask(), c)) continue;
      if (!(phi[c] > 0.0) || !std::isfinite(phi[c]))
        throw Error(fmt::format("diffusion: phase field phi = {} at tissue cell {}; it must be "
                                "finite and > 0 wherever the operator has tissue",
                                phi[c], c));
      w[layout.index(c)] = phi[c];
    }
    if (scheme == DiffusionScheme::forward_euler) {
      inv_w_.resize(n);
      for (std::size_t i = 0; i < n; ++i) inv_w_[i] = Real(1.0 / w[i]);
    } else {
      w_.resize(n);
      for (std::size_t i = 0; i < n; ++i) w_[i] = Real(w[i]);
    }
  }
  if (scheme != DiffusionScheme::forward_euler) {
    // diag(Φ − θ·a·L) = w_n − θ·a·L_nn ≥ w_n > 0.
    const double theta = scheme == DiffusionScheme::backward_euler ? 1.0 : 0.5;
    Field<double> d(n);
    for (std::size_t i = 0; i < n; ++i) d[i] = w[i] - theta * a_ * op.diagonal()[i];
    jacobi_ = std::make_unique<JacobiPreconditioner<Real>>(d);
  }
}

template <class Real>
void DiffusionStepper<Real>::Shifted::apply(const Field<Real>& x, Field<Real>& y) const {
  if (!w) {
    op->apply(x, y, coef, Real(1));
    return;
  }
  // y = coef·L x + Φ x
  op->apply(x, y, coef, Real(0));
  const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(x.size());
  const Real* xp = x.data();
  const Real* wp = w->data();
  Real* yp = y.data();
#pragma omp parallel for schedule(static) num_threads(par::team()) if (n >= kernels::kMinParallelCells)
  for (std::ptrdiff_t i = 0; i < n; ++i) yp[i] += wp[i] * xp[i];
}

template <class Real>
void DiffusionStepper<Real>::apply_weighted(const Field<Real>& x, Field<Real>& y, Real c) const {
  Shifted{&op_, c, w_.empty() ? nullptr : &w_}.apply(x, y);
}

template <class Real>
void DiffusionStepper<Real>::step(Field<Real>& v) {
  const Field<Real>* w = w_.empty() ? nullptr : &w_;
  switch (scheme_) {
    case DiffusionScheme::forward_euler:
      if (inv_w_.empty()) {
        // V⁺ = V + a·L V
        op_.apply(v, work_, Real(a_), Real(1));
      } else {
        // V⁺ = V + a·(L V)/w
        op_.apply(v, work_, Real(a_), Real(0));
        const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(v.size());
        const Real* iw = inv_w_.data();
        const Real* vp = v.data();
        Real* op = work_.data();
#pragma omp parallel for schedule(static) num_threads(par::team()) if (n >= kernels::kMinParallelCells)
        for (std::ptrdiff_t i = 0; i < n; ++i) op[i] = vp[i] + op[i] * iw[i];
      }
      std::swap(v.vec(), work_.vec());
      return;
    case DiffusionScheme::backward_euler:
      // (Φ − a·L) V⁺ = Φ V, starting from V
      rhs_ = v;
      if (w)
        for (std::size_t i = 0; i < v.size(); ++i) rhs_[i] *= w_[i];
      last_ = cg_solve(Shifted{&op_, Real(-a_), w}, rhs_, v, *jacobi_, cg_);
      break;
    case DiffusionScheme::crank_nicolson:
      // (Φ − a/2·L) V⁺ = (Φ + a/2·L) V
      apply_weighted(v, rhs_, Real(0.5 * a_));
      last_ = cg_solve(Shifted{&op_, Real(-0.5 * a_), w}, rhs_, v, *jacobi_, cg_);
      break;
  }
  ++solves_;
  iterations_ += last_.iterations;
  require_converged(last_, cg_);
}

template class DiffusionStepper<double>;
template class DiffusionStepper<float>;

}  // namespace hw::tissue
