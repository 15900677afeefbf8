// The reference engine's own implicit diffusion: the oracle for the fast engines' CG.
//
// Why a second solver: the cpu and CUDA engines solve the implicit systems with
// tissue/cg.hpp through tissue/diffusion_stepper.* (and kernels/cuda/diffusion_cg.cuh). Had
// the reference used the same stepper, a bug there would pass every comparison. This one
// shares none of that code: it is a textbook Jacobi-preconditioned conjugate gradient in
// double with plain serial loops (no OpenMP, no ordered reductions, no fused updates, no
// float path), over the reference backend's operator (kernels/reference: one scatter over
// every link of kernels/diffusion_links.hpp's walker), and it stops on the TRUE residual
// ‖b − A x‖, recomputed from the operator, not on the recurrence residual CG carries.
//
// The systems, with a = dt/(χ·Cm) and Φ = diag(w), w_n = φ_n on tissue and 1 elsewhere
// (Φ = I without a phase field; the maths of diffusion_stepper.hpp, written again here):
//   backward Euler:  (Φ − a·L) V⁺ = Φ V
//   Crank-Nicolson:  (Φ − a/2·L) V⁺ = (Φ + a/2·L) V
// Both are symmetric positive definite (L symmetric, ≤ 0; w > 0). Off-tissue rows of L are
// zero, so those rows are the identity and off-tissue cells keep their value.
#pragma once

#include <functional>

#include "mesh/grid.hpp"
#include "tissue/diffusion.hpp"

namespace hw::tissue::reference {

// The reference never solves more loosely than this, whatever the case's cg_tolerance.
inline constexpr double kLoosestRelTol = 1e-12;
// Nor asks for less than this: about where the true residual of these systems in double
// stops falling (a few ulps of ‖b‖ per entry).
inline constexpr double kTightestRelTol = 1e-14;

struct NaiveCgStats {
  int iterations = 0;        // CG iterations, all restarts together
  int restarts = 0;          // times the recurrence residual was replaced by the true one
  double rel_residual = 0;   // true ‖b − A x‖₂ / ‖b‖₂ at exit
};

// Solves A x = b, A symmetric positive definite, given by its product y = A x, by conjugate
// gradient preconditioned with inv_diag (z_n = inv_diag_n·r_n; ones for plain CG). x is the
// initial guess on entry. Returns when the true relative residual ‖b − A x‖₂/‖b‖₂ ≤ rel_tol:
// each time the recurrence residual reaches rel_tol the true one is computed, and CG restarts
// from x if it is still above. Throws hw::Error after max_iter iterations (or 50 restarts:
// a residual stuck on rounding) or on a
// non-positive curvature pᵀA p (A not SPD).
using MatVec = std::function<void(const Field<double>& x, Field<double>& y)>;
NaiveCgStats naive_cg(const MatVec& a, const Field<double>& inv_diag, const Field<double>& b,
                      Field<double>& x, double rel_tol, int max_iter);

// One implicit diffusion step on the box, in double, for the reference engine.
class ImplicitDiffusion {
 public:
  // op: the reference backend's operator on the box layout of setup (hw::Error otherwise).
  // setup: the same grid, σ, mask and order (for the Jacobi diagonal). phi: empty, or φ per
  // grid cell (> 0 on tissue, hw::Error otherwise). rel_tol: clamped to
  // [kTightestRelTol, kLoosestRelTol].
  ImplicitDiffusion(const DiffusionOperator& op, const DiffusionSetup& setup, double chi,
                    double cm, double dt, DiffusionScheme scheme, const Field<double>& phi,
                    double rel_tol);

  // V ← V⁺ of the scheme, in place.
  void step(Field<double>& v);
  const NaiveCgStats& last_solve() const { return last_; }
  double rel_tol() const { return tol_; }

 private:
  // y = w∘x − c·L x
  void apply_shifted(const Field<double>& x, Field<double>& y, double c) const;

  const DiffusionOperator& op_;
  double a_ = 0, theta_ = 1, tol_ = kLoosestRelTol;
  Field<double> w_;         // Φ's diagonal (1 everywhere without a phase field)
  Field<double> inv_diag_;  // 1/(w_n − θ·a·L_nn) for the second-order stencil, else 1
  NaiveCgStats last_;
};

}  // namespace hw::tissue::reference
