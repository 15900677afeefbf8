// Time stepping of pure diffusion, χ·Cm ∂V/∂t = L V (no reaction): the diffusion half of
// the monodomain splitting, and testable on its own.
//
// Schemes, with a = dt/(χ·Cm):
//   forward Euler:   V⁺ = V + a·L V                      (stable iff a·λ_max(−L) ≤ 2)
//   backward Euler:  (I − a·L) V⁺ = V                    (θ = 1)
//   Crank-Nicolson:  (I − a/2·L) V⁺ = (I + a/2·L) V      (θ = ½)
// The implicit systems are SPD (L symmetric, ≤ 0) and solved by Jacobi-preconditioned CG.
//
// Units: χ in mm⁻¹, Cm in µF/mm², dt in ms, σ in mS/mm (docs/tissue-numerics.md).
#pragma once

#include "core/error.hpp"
#include "tissue/cg.hpp"
#include "tissue/diffusion.hpp"

namespace hw::tissue {

enum class DiffusionScheme { forward_euler, backward_euler, crank_nicolson };

// Largest dt (ms) for which forward Euler is stable for this operator: 2·χ·Cm / bound,
// bound = DiffusionOperator::spectral_bound() ≥ λ_max(−L). +infinity when L = 0.
double explicit_dt_limit(const DiffusionOperator& op, double chi, double cm);

// Throws hw::InputError at loc when dt > explicit_dt_limit(...), with a message naming both
// numbers and the remedies (smaller dt or an implicit scheme). Also rejects dt ≤ 0, χ ≤ 0,
// Cm ≤ 0.
void check_explicit_dt(const DiffusionOperator& op, double chi, double cm, double dt,
                       const SourceLoc& loc = {});

template <class Real>
class DiffusionStepper {
 public:
  // Validates the numbers (and, for forward Euler, the stability limit) up front. With float
  // fields the implicit schemes need cg.rel_tol >= 1e-6 (hw::Error otherwise).
  DiffusionStepper(const DiffusionOperator& op, double chi, double cm, double dt,
                   DiffusionScheme scheme, CgOptions cg = {});

  // Advances v by one dt in place.
  void step(Field<Real>& v);
  // CG statistics of the last implicit step.
  const CgResult& last_solve() const { return last_; }

 private:
  // y = (I − θ·a·L) x, the operator CG sees.
  struct Shifted {
    const DiffusionOperator* op;
    Real coef;  // −θ·a
    void apply(const Field<Real>& x, Field<Real>& y) const { op->apply(x, y, coef, Real(1)); }
  };

  const DiffusionOperator& op_;
  double a_;
  DiffusionScheme scheme_;
  CgOptions cg_;
  Field<Real> work_, rhs_;
  std::unique_ptr<JacobiPreconditioner<Real>> jacobi_;
  CgResult last_;
};

extern template class DiffusionStepper<double>;
extern template class DiffusionStepper<float>;

}  // namespace hw::tissue
