// Matrix-free preconditioned conjugate gradient (seed 003: the matrix enters only through
// products, so the stencil is never stored as a matrix).
//
// Why a template: the same solver runs on the tissue operator I − θ·dt/(χCm)·L (or its
// phase-field form Φ − θ·dt/(χCm)·L_{φσ}, diffusion_stepper.hpp), on the Dirichlet Poisson
// problem of seed 003 in the tests, and later on device fields. It needs
//   Op:      void apply(const Field<Real>& x, Field<Real>& y) const;   // y = A x, A SPD
//   Precond: void apply(const Field<Real>& r, Field<Real>& z) const;   // z = M⁻¹ r, M SPD
// Reductions accumulate in double whatever Real is.
//
// Stopping test: ‖b − A x‖₂ ≤ rel_tol·‖b‖₂ (with x₀ = 0 this is the relative residual
// ‖r_k‖/‖r_0‖ of seed 003), checked on the recurrence residual every iteration.
#pragma once

#include <cmath>
#include <cstddef>

#include "kernels/diffusion_k.hpp"
#include "parallel/team.hpp"
#include "mesh/grid.hpp"

namespace hw::tissue {

struct CgOptions {
  double rel_tol = 1e-10;
  int max_iter = 1000;
};

struct CgResult {
  int iterations = 0;
  double rel_residual = 0.0;  // ‖r‖/‖b‖ at exit (recurrence residual)
  bool converged = false;
};

namespace cg_detail {

// Reductions in fixed ranges (parallel/team.hpp: the same bits on any team size).
inline constexpr std::ptrdiff_t kSumChunk = 4096;

template <class Real>
double dot(const Field<Real>& a, const Field<Real>& b) {
  const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(a.size());
  const Real* x = a.data();
  const Real* y = b.data();
  return par::ordered_sum(n, kSumChunk, n >= kernels::kMinParallelCells, [&](std::ptrdiff_t lo, std::ptrdiff_t hi) {
    double s = 0.0;
    for (std::ptrdiff_t i = lo; i < hi; ++i) s += double(x[i]) * double(y[i]);
    return s;
  });
}

}  // namespace cg_detail

struct IdentityPreconditioner {
  template <class Real>
  void apply(const Field<Real>& r, Field<Real>& z) const {
    z = r;
  }
};

// z = r / diag(A); diag must be positive where used.
template <class Real>
class JacobiPreconditioner {
 public:
  explicit JacobiPreconditioner(const Field<double>& diag_a) : inv_(diag_a.size()) {
    for (std::size_t i = 0; i < inv_.size(); ++i) inv_[i] = Real(1.0 / diag_a[i]);
  }
  void apply(const Field<Real>& r, Field<Real>& z) const {
    const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(r.size());
    if (z.size() != r.size()) z.resize(r.size());
    const Real* rp = r.data();
    const Real* ip = inv_.data();
    Real* zp = z.data();
#pragma omp parallel for schedule(static) num_threads(par::team()) if (n >= kernels::kMinParallelCells)
    for (std::ptrdiff_t i = 0; i < n; ++i) zp[i] = ip[i] * rp[i];
  }

 private:
  Field<Real> inv_;
};

// Solves A x = b; x holds the initial guess on entry and the solution on exit.
template <class Real, class Op, class Precond>
CgResult cg_solve(const Op& a, const Field<Real>& b, Field<Real>& x, const Precond& m,
                  const CgOptions& opt) {
  const std::size_t n = b.size();
  const std::ptrdiff_t sn = static_cast<std::ptrdiff_t>(n);
  CgResult res;
  if (x.size() != n) x.resize(n);
  const double bnorm = std::sqrt(cg_detail::dot(b, b));
  if (bnorm == 0.0) {
    x.fill(Real(0));
    res.converged = true;
    return res;
  }
  Field<Real> r(n), z(n), p(n), q(n);
  a.apply(x, q);
  {
    const Real* bp = b.data();
    const Real* qp = q.data();
    Real* rp = r.data();
#pragma omp parallel for schedule(static) num_threads(par::team()) if (sn >= kernels::kMinParallelCells)
    for (std::ptrdiff_t i = 0; i < sn; ++i) rp[i] = bp[i] - qp[i];
  }
  double rnorm = std::sqrt(cg_detail::dot(r, r));
  res.rel_residual = rnorm / bnorm;
  if (res.rel_residual <= opt.rel_tol) {
    res.converged = true;
    return res;
  }
  m.apply(r, z);
  p = z;
  double rz = cg_detail::dot(r, z);
  for (int it = 1; it <= opt.max_iter; ++it) {
    a.apply(p, q);
    const double pq = cg_detail::dot(p, q);
    if (!(pq > 0.0)) {  // A not SPD (or breakdown): stop and report
      res.iterations = it;
      return res;
    }
    const Real alpha = Real(rz / pq);
    Real* xp = x.data();
    Real* rp = r.data();
    const Real* pp = p.data();
    const Real* qp = q.data();
    const double rr = par::ordered_sum(sn, cg_detail::kSumChunk, sn >= kernels::kMinParallelCells,
                                       [&](std::ptrdiff_t lo, std::ptrdiff_t hi) {
                                         double s = 0.0;
                                         for (std::ptrdiff_t i = lo; i < hi; ++i) {
                                           xp[i] += alpha * pp[i];
                                           rp[i] -= alpha * qp[i];
                                           s += double(rp[i]) * double(rp[i]);
                                         }
                                         return s;
                                       });
    res.iterations = it;
    res.rel_residual = std::sqrt(rr) / bnorm;
    if (res.rel_residual <= opt.rel_tol) {
      res.converged = true;
      return res;
    }
    m.apply(r, z);
    const double rz_new = cg_detail::dot(r, z);
    const Real beta = Real(rz_new / rz);
    rz = rz_new;
    Real* pw = p.data();
    const Real* zp = z.data();
#pragma omp parallel for schedule(static) num_threads(par::team()) if (sn >= kernels::kMinParallelCells)
    for (std::ptrdiff_t i = 0; i < sn; ++i) pw[i] = zp[i] + beta * pw[i];
  }
  return res;
}

}  // namespace hw::tissue
