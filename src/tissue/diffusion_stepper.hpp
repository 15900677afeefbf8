// Time stepping of pure diffusion, χ·Cm ∂V/∂t = L V (no reaction): the diffusion half of
// the monodomain splitting, and testable on its own.
//
// Schemes, with a = dt/(χ·Cm):
//   forward Euler:   V⁺ = V + a·L V                      (stable iff a·λ_max(−L) ≤ 2)
//   backward Euler:  (I − a·L) V⁺ = V                    (θ = 1)
//   Crank-Nicolson:  (I − a/2·L) V⁺ = (I + a/2·L) V      (θ = ½)
// The implicit systems are SPD (L symmetric, ≤ 0) and solved by Jacobi-preconditioned CG.
//
// With a phase field (Fenton et al. 2005; docs/tissue.md) the equation is φ χCm ∂V/∂t =
// L_{φσ} V, L built from φσ, and the steppers take Φ = diag(w), w_n = φ_n on tissue cells
// and w_n = 1 off tissue (where L has zero rows and columns):
//   forward Euler:   V⁺ = V + a·(L V)/w
//   backward Euler:  (Φ − a·L) V⁺ = Φ V
//   Crank-Nicolson:  (Φ − a/2·L) V⁺ = (Φ + a/2·L) V
// Multiplying by Φ rather than dividing by φ keeps the matrix symmetric (positive definite
// for φ > 0), so the same CG solves it; Σ w_n V_n is what these steps conserve. Off-tissue
// rows are the identity, so those cells keep their value and couple to nothing.
//
// Units: χ in mm⁻¹, Cm in µF/mm², dt in ms, σ in mS/mm (docs/tissue-numerics.md).
#pragma once

#include <string>
#include <vector>

#include "core/error.hpp"
#include "tissue/cg.hpp"
#include "tissue/diffusion.hpp"

namespace hw::tissue {

class Split;  // tissue/split.hpp

// Largest dt (ms) for which forward Euler is stable for this operator: 2·χ·Cm / bound,
// bound = DiffusionOperator::spectral_bound() ≥ λ_max(−L). +infinity when L = 0.
double explicit_dt_limit(const DiffusionOperator& op, double chi, double cm);

// The one wording of a dt above the explicit limit (both numbers and the remedies): the
// set-up's check of a case (tissue/reaction.cpp) and the stepper's own guard say the same.
std::string unstable_dt_message(double dt, double limit);

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
  // phi: empty (Φ = I), or φ per grid cell in grid order, whatever the layout (> 0 exactly
  // on the operator's tissue cells, 0 elsewhere, as PhaseFieldDiffusion::phi); hw::Error
  // when it disagrees with the mask. The forward-Euler limit checked here is then the bulk
  // one of L: a caller with a phase field checks the limit of Φ⁻¹L itself
  // (phase_field_rate_bound).
  DiffusionStepper(const DiffusionOperator& op, double chi, double cm, double dt,
                   DiffusionScheme scheme, CgOptions cg = {}, const Field<double>& phi = {});

  // Advances v (in op.layout() storage) by one dt in place.
  void step(Field<Real>& v);
  // A split run (tissue/split.hpp): the implicit solve then works on this rank's rows only,
  // exchanging the halo rows of what the stencil reads, and v holds the new values on those
  // rows only. Every sum of the CG is taken row by row and the rows' sums are added in row
  // order after every rank has them all, split or not, so N ranks follow one rank's
  // iterations bit for bit (docs/parallel.md).
  void share(Split* split) { split_ = split; }
  // CG statistics of the last implicit step.
  const CgResult& last_solve() const { return last_; }
  // Mean CG iterations per implicit step so far (0 before the first).
  double mean_iterations() const { return solves_ > 0 ? double(iterations_) / double(solves_) : 0.0; }

 private:
  class RowCg;  // the CG's operations over this rank's rows (diffusion_stepper.cpp)
  // y = c·L x + Φ x on this rank's rows (Φ = I when w_ is empty); x's halo exchanged first.
  void apply_weighted(Field<Real>& x, Field<Real>& y, Real c);
  void exchange(Field<Real>& v);
  std::size_t row_begin() const;
  std::size_t row_end() const;

  const DiffusionOperator& op_;
  double a_;
  DiffusionScheme scheme_;
  CgOptions cg_;
  Field<Real> work_, rhs_;
  Field<Real> w_, inv_w_;  // Φ's diagonal (implicit) or its inverse (explicit); empty: Φ = I
  Field<Real> inv_diag_;   // Jacobi: 1 / diag(Φ − θ·a·L)
  std::vector<std::size_t> bounds_;  // row r in storage [bounds_[r], bounds_[r + 1]) (padding with row 0)
  Split* split_ = nullptr;
  CgResult last_;
  long solves_ = 0, iterations_ = 0;
};

extern template class DiffusionStepper<double>;
extern template class DiffusionStepper<float>;

}  // namespace hw::tissue
