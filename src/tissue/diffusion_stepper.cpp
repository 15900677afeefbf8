// Pure-diffusion steppers; see diffusion_stepper.hpp for the schemes.
#include "tissue/diffusion_stepper.hpp"

#include <cmath>
#include <limits>
#include <utility>

#include <fmt/format.h>

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
  if (dt > lim)
    throw InputError(
        loc, fmt::format("dt = {} ms exceeds the explicit diffusion stability limit "
                         "dt_max = {:.6g} ms (2*chi*Cm/lambda_max, lambda_max <= {:.6g} /mm^2 "
                         "*mS/mm, chi = {} /mm, Cm = {} uF/mm^2); use dt <= {:.6g} ms or an "
                         "implicit diffusion scheme",
                         dt, lim, op.spectral_bound(), chi, cm, lim));
}

template <class Real>
DiffusionStepper<Real>::DiffusionStepper(const DiffusionOperator& op, double chi, double cm,
                                         double dt, DiffusionScheme scheme, CgOptions cg)
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
  const std::size_t n = op.grid().size();
  work_.resize(n);
  rhs_.resize(n);
  if (scheme != DiffusionScheme::forward_euler) {
    // diag(I − θ·a·L) = 1 − θ·a·L_nn ≥ 1.
    const double theta = scheme == DiffusionScheme::backward_euler ? 1.0 : 0.5;
    Field<double> d(n);
    for (std::size_t i = 0; i < n; ++i) d[i] = 1.0 - theta * a_ * op.diagonal()[i];
    jacobi_ = std::make_unique<JacobiPreconditioner<Real>>(d);
  }
}

template <class Real>
void DiffusionStepper<Real>::step(Field<Real>& v) {
  switch (scheme_) {
    case DiffusionScheme::forward_euler:
      // V⁺ = V + a·L V
      op_.apply(v, work_, Real(a_), Real(1));
      std::swap(v.vec(), work_.vec());
      return;
    case DiffusionScheme::backward_euler:
      // (I − a·L) V⁺ = V, starting from V
      rhs_ = v;
      last_ = cg_solve(Shifted{&op_, Real(-a_)}, rhs_, v, *jacobi_, cg_);
      break;
    case DiffusionScheme::crank_nicolson:
      // (I − a/2·L) V⁺ = (I + a/2·L) V
      op_.apply(v, rhs_, Real(0.5 * a_), Real(1));
      last_ = cg_solve(Shifted{&op_, Real(-0.5 * a_)}, rhs_, v, *jacobi_, cg_);
      break;
  }
  if (!last_.converged)
    throw Error(fmt::format("diffusion: CG did not converge in {} iterations (relative "
                            "residual {:.3g} > {:.3g})",
                            last_.iterations, last_.rel_residual, cg_.rel_tol));
}

template class DiffusionStepper<double>;
template class DiffusionStepper<float>;

}  // namespace hw::tissue
