// Pure-diffusion steppers; see diffusion_stepper.hpp for the schemes.
#include "tissue/diffusion_stepper.hpp"

#include <cmath>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "parallel/team.hpp"
#include "tissue/split.hpp"

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
    inv_diag_.resize(n);
    for (std::size_t i = 0; i < n; ++i) inv_diag_[i] = Real(1.0 / (w[i] - theta * a_ * op.diagonal()[i]));
  }
  bounds_.resize(layout.rows() + 1);
  for (std::size_t r = 1; r < layout.rows(); ++r) bounds_[r] = layout.first(r);
  bounds_[layout.rows()] = n;
}

template <class Real>
std::size_t DiffusionStepper<Real>::row_begin() const {
  return split_ && split_->active() ? split_->row_begin() : 0;
}

template <class Real>
std::size_t DiffusionStepper<Real>::row_end() const {
  return split_ && split_->active() ? split_->row_end() : bounds_.size() - 1;
}

template <class Real>
void DiffusionStepper<Real>::exchange(Field<Real>& v) {
  if (!split_ || !split_->active()) return;
  split_->start_halo(v.data(), op_.layout());
  split_->finish_halo();
}

// The operations of pcg() (pcg.hpp) over this rank's rows [r0, r1) of the layout: vector
// updates cell by cell, the operator on those rows after the halo of what it reads, and
// every sum row by row, the rows' sums gathered from every rank and added in row order.
// A sum so taken does not depend on the rank count nor on the team size.
template <class Real>
class DiffusionStepper<Real>::RowCg {
 public:
  RowCg(DiffusionStepper& s, Real coef, const Field<Real>& b, Field<Real>& x)
      : s_(s), coef_(coef), b_(b), x_(x), r0_(s.row_begin()), r1_(s.row_end()), lo_(s.bounds_[r0_]),
        hi_(s.bounds_[r1_]), r_(b.size()), z_(b.size()), p_(b.size()), q_(b.size()),
        sums_(2 * (s.bounds_.size() - 1), 0.0) {}

  double rhs_norm2() {
    const Real* b = b_.data();
    return sum<1>([&](std::size_t i, double* a) { a[0] += double(b[i]) * double(b[i]); })[0];
  }
  void zero_solution() { cells([&](std::size_t i) { x_[i] = Real(0); }); }
  double residual() {
    apply(x_, q_);
    return sum<1>([&](std::size_t i, double* a) {
      r_[i] = b_[i] - q_[i];
      a[0] += double(r_[i]) * double(r_[i]);
    })[0];
  }
  double start() {
    const Real* inv = s_.inv_diag_.data();
    return sum<1>([&](std::size_t i, double* a) {
      z_[i] = inv[i] * r_[i];
      p_[i] = z_[i];
      a[0] += double(r_[i]) * double(z_[i]);
    })[0];
  }
  double apply_direction() {
    apply(p_, q_);
    return sum<1>([&](std::size_t i, double* a) { a[0] += double(p_[i]) * double(q_[i]); })[0];
  }
  std::array<double, 2> update(double alpha_d) {
    const Real alpha = Real(alpha_d);
    const Real* inv = s_.inv_diag_.data();
    return sum<2>([&](std::size_t i, double* a) {
      x_[i] += alpha * p_[i];
      r_[i] -= alpha * q_[i];
      z_[i] = inv[i] * r_[i];
      a[0] += double(r_[i]) * double(r_[i]);
      a[1] += double(r_[i]) * double(z_[i]);
    });
  }
  void direction(double beta_d) {
    const Real beta = Real(beta_d);
    cells([&](std::size_t i) { p_[i] = z_[i] + beta * p_[i]; });
  }

 private:
  // y = (Φ − θ·a·L) v on these rows.
  void apply(Field<Real>& v, Field<Real>& y) {
    s_.exchange(v);
    const bool w = !s_.w_.empty();
    s_.op_.apply_rows(v, y, coef_, w ? Real(0) : Real(1), r0_, r1_);
    if (w) {
      const Real* wp = s_.w_.data();
      cells([&](std::size_t i) { y[i] += wp[i] * v[i]; });
    }
  }
  template <class F>
  void cells(F f) {
    const std::ptrdiff_t lo = std::ptrdiff_t(lo_), hi = std::ptrdiff_t(hi_);
#pragma omp parallel for schedule(static) num_threads(par::team()) if (hi - lo >= kernels::kMinParallelCells)
    for (std::ptrdiff_t i = lo; i < hi; ++i) f(std::size_t(i));
  }
  // K sums of f over the cells, each taken per row, then over the rows in order.
  template <int K, class F>
  std::array<double, K> sum(F f) {
    const std::vector<std::size_t>& bd = s_.bounds_;
    const long a = long(r0_), b = long(r1_);
#pragma omp parallel for schedule(static) num_threads(par::team()) if (hi_ - lo_ >= std::size_t(kernels::kMinParallelCells))
    for (long r = a; r < b; ++r) {
      double acc[K] = {};
      for (std::size_t i = bd[std::size_t(r)]; i < bd[std::size_t(r) + 1]; ++i) f(i, acc);
      for (int k = 0; k < K; ++k) sums_[std::size_t(r) * K + std::size_t(k)] = acc[k];
    }
    if (s_.split_ && s_.split_->active()) s_.split_->gather_row_values(sums_.data(), K);
    std::array<double, K> total{};
    const std::size_t rows = bd.size() - 1;
    for (std::size_t r = 0; r < rows; ++r)
      for (int k = 0; k < K; ++k) total[std::size_t(k)] += sums_[r * K + std::size_t(k)];
    return total;
  }

  DiffusionStepper& s_;
  Real coef_;
  const Field<Real>& b_;
  Field<Real>& x_;
  std::size_t r0_, r1_, lo_, hi_;
  Field<Real> r_, z_, p_, q_;
  std::vector<double> sums_;
};

template <class Real>
void DiffusionStepper<Real>::apply_weighted(Field<Real>& x, Field<Real>& y, Real c) {
  exchange(x);
  if (y.size() != x.size()) y.resize(x.size());
  op_.apply_rows(x, y, c, w_.empty() ? Real(1) : Real(0), row_begin(), row_end());
  if (w_.empty()) return;
  // y = c·L x + Φ x
  const std::ptrdiff_t lo = std::ptrdiff_t(bounds_[row_begin()]), hi = std::ptrdiff_t(bounds_[row_end()]);
  const Real* xp = x.data();
  const Real* wp = w_.data();
  Real* yp = y.data();
#pragma omp parallel for schedule(static) num_threads(par::team()) if (hi - lo >= kernels::kMinParallelCells)
  for (std::ptrdiff_t i = lo; i < hi; ++i) yp[i] += wp[i] * xp[i];
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
    case DiffusionScheme::backward_euler: {
      // (Φ − a·L) V⁺ = Φ V, starting from V
      rhs_ = v;
      if (w)
        for (std::size_t i = 0; i < v.size(); ++i) rhs_[i] *= w_[i];
      RowCg ops(*this, Real(-a_), rhs_, v);
      last_ = pcg(ops, cg_);
      break;
    }
    case DiffusionScheme::crank_nicolson: {
      // (Φ − a/2·L) V⁺ = (Φ + a/2·L) V
      apply_weighted(v, rhs_, Real(0.5 * a_));
      RowCg ops(*this, Real(-0.5 * a_), rhs_, v);
      last_ = pcg(ops, cg_);
      break;
    }
  }
  ++solves_;
  iterations_ += last_.iterations;
  require_converged(last_, cg_);
}

template class DiffusionStepper<double>;
template class DiffusionStepper<float>;

}  // namespace hw::tissue
