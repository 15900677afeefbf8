// Matrix-free preconditioned conjugate gradient on host fields (seed 003: the matrix enters
// only through products, so the stencil is never stored as a matrix): the host's operations
// for the algorithm written once in pcg.hpp.
//
// Why a template: the same solver runs on the tissue operator I − θ·dt/(χCm)·L (or its
// phase-field form Φ − θ·dt/(χCm)·L_{φσ}, diffusion_stepper.hpp) and on the Dirichlet
// Poisson problem of seed 003 in the tests. It needs
//   Op:      void apply(const Field<Real>& x, Field<Real>& y) const;   // y = A x, A SPD
//   Precond: void apply(const Field<Real>& r, Field<Real>& z) const;   // z = M⁻¹ r, M SPD
// Reductions accumulate in double whatever Real is, in fixed ranges (the same bits on any
// team size).
#pragma once

#include <cmath>
#include <cstddef>

#include "kernels/diffusion_k.hpp"
#include "parallel/team.hpp"
#include "mesh/grid.hpp"
#include "tissue/pcg.hpp"

namespace hw::tissue {

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

namespace cg_detail {

// The host's operations of pcg() over fields of n values.
template <class Real, class Op, class Precond>
class HostCgOps {
 public:
  HostCgOps(const Op& a, const Field<Real>& b, Field<Real>& x, const Precond& m)
      : a_(a), b_(b), x_(x), m_(m), n_(std::ptrdiff_t(b.size())), r_(b.size()), z_(b.size()), p_(b.size()),
        q_(b.size()) {
    if (x.size() != b.size()) x.resize(b.size());
  }

  double rhs_norm2() const { return dot(b_, b_); }
  void zero_solution() { x_.fill(Real(0)); }
  double residual() {
    a_.apply(x_, q_);
    const Real* bp = b_.data();
    const Real* qp = q_.data();
    Real* rp = r_.data();
#pragma omp parallel for schedule(static) num_threads(par::team()) if (n_ >= kernels::kMinParallelCells)
    for (std::ptrdiff_t i = 0; i < n_; ++i) rp[i] = bp[i] - qp[i];
    return dot(r_, r_);
  }
  double start() {
    m_.apply(r_, z_);
    p_ = z_;
    return dot(r_, z_);
  }
  double apply_direction() {
    a_.apply(p_, q_);
    return dot(p_, q_);
  }
  std::array<double, 2> update(double alpha_d) {
    const Real alpha = Real(alpha_d);
    Real* xp = x_.data();
    Real* rp = r_.data();
    const Real* pp = p_.data();
    const Real* qp = q_.data();
    const double rr = par::ordered_sum(n_, kSumChunk, n_ >= kernels::kMinParallelCells,
                                       [&](std::ptrdiff_t lo, std::ptrdiff_t hi) {
                                         double s = 0.0;
                                         for (std::ptrdiff_t i = lo; i < hi; ++i) {
                                           xp[i] += alpha * pp[i];
                                           rp[i] -= alpha * qp[i];
                                           s += double(rp[i]) * double(rp[i]);
                                         }
                                         return s;
                                       });
    m_.apply(r_, z_);
    return {rr, dot(r_, z_)};
  }
  void direction(double beta_d) {
    const Real beta = Real(beta_d);
    Real* pw = p_.data();
    const Real* zp = z_.data();
#pragma omp parallel for schedule(static) num_threads(par::team()) if (n_ >= kernels::kMinParallelCells)
    for (std::ptrdiff_t i = 0; i < n_; ++i) pw[i] = zp[i] + beta * pw[i];
  }

 private:
  const Op& a_;
  const Field<Real>& b_;
  Field<Real>& x_;
  const Precond& m_;
  std::ptrdiff_t n_;
  Field<Real> r_, z_, p_, q_;
};

}  // namespace cg_detail

// Solves A x = b; x holds the initial guess on entry and the solution on exit.
template <class Real, class Op, class Precond>
CgResult cg_solve(const Op& a, const Field<Real>& b, Field<Real>& x, const Precond& m,
                  const CgOptions& opt) {
  cg_detail::HostCgOps<Real, Op, Precond> ops(a, b, x, m);
  return pcg(ops, opt);
}

}  // namespace hw::tissue
