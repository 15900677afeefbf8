// Backend selection and the per-operator data every backend shares (diagonal, bound).
#include "tissue/diffusion.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "kernels/diffusion_k.hpp"
#include "kernels/diffusion_kernels.hpp"
#include "kernels/diffusion_links.hpp"

namespace hw::tissue {

const char* backend_name(Backend b) {
  switch (b) {
    case Backend::reference: return "reference";
    case Backend::cpu: return "cpu";
    case Backend::cuda: return "cuda";
  }
  return "?";
}

double fourth_order_sigma(const Grid& g, const Conductivity& sigma, const Mask& mask) {
  const auto& u = sigma.uniform_value();
  if (!sigma.uniform() || sigma.has_off_diagonal() || u[0] != u[1] || u[1] != u[2])
    throw Error("diffusion: the fourth-order stencil needs a constant isotropic sigma");
  if (!mask.empty())
    throw Error("diffusion: the fourth-order stencil works on box domains only (no mask)");
  for (int a = 0; a < 3; ++a)
    if (g.active(a) && g.n[a] < 2)
      throw Error("diffusion: the fourth-order stencil needs >= 2 cells per active axis");
  return u[0];
}

DiffusionOperator::DiffusionOperator(DiffusionSetup s, Backend b)
    : setup_(std::move(s)), backend_(b) {
  const Grid& g = setup_.grid;
  g.validate();
  setup_.sigma.validate(g);
  if (!setup_.mask.empty() && setup_.mask.size() != g.size())
    throw Error(fmt::format("diffusion: mask has {} values, the grid {} cells",
                            setup_.mask.size(), g.size()));
  if (setup_.layout.base.empty()) setup_.layout = box_layout(g, setup_.mask);
  const RowLayout& L = setup_.layout;
  if (L.rows() != std::size_t(g.ny()) * g.nz() || L.nx != g.nx())
    throw Error("diffusion: the row layout belongs to another grid");
  for (std::size_t n = 0; n < g.size(); ++n)
    if (is_tissue(mask(), n) && !L.holds(n))
      throw Error(fmt::format("diffusion: the row layout does not store tissue cell {}", n));
  diag_ = Field<double>(L.size(), 0.0);
  if (setup_.order == StencilOrder::fourth) {
    if (!L.box) throw Error("diffusion: the fourth-order stencil works on the box layout only");
    const double sigma = fourth_order_sigma(setup_.grid, setup_.sigma, setup_.mask);
    // Row of −L: 30/12 on the diagonal, 16/12 + 16/12 + 1/12 + 1/12 off it, per axis.
    // Mirroring folds ghosts onto real cells but keeps the row's absolute sum ≤ this.
    double d = 0.0, b2 = 0.0;
    for (int a = 0; a < 3; ++a)
      if (g.active(a)) {
        d += sigma * 30.0 / (12.0 * g.h[a] * g.h[a]);
        b2 += sigma * 64.0 / (12.0 * g.h[a] * g.h[a]);
      }
    // Near a mirror wall (or on a short periodic axis) a ghost can be the cell itself.
    for (std::size_t n = 0; n < g.size(); ++n) diag_[n] = -d;
    for (int a = 0; a < 3; ++a) {
      if (!g.active(a)) continue;
      const bool per = g.bc[a] == Boundary::periodic;
      const int offs[4] = {-2, -1, 1, 2};
      const double wts[4] = {-1.0, 16.0, 16.0, -1.0};
      for (std::size_t n = 0; n < g.size(); ++n) {
        const int i = int((n / g.stride(a)) % static_cast<std::size_t>(g.n[a]));
        double extra = 0.0;
        for (int q = 0; q < 4; ++q)
          if (kernels::mirror_or_wrap(i + offs[q], g.n[a], per) == i) extra += wts[q];
        diag_[n] += sigma * extra / (12.0 * g.h[a] * g.h[a]);
      }
    }
    bound_ = b2;
    return;
  }
  // Second order: accumulate the diagonal and the Gershgorin row sums link by link. Only
  // links between tissue cells carry weight, and the layout stores every tissue cell.
  std::vector<double> absoff(L.size(), 0.0);
  kernels::for_each_link(
      g, setup_.sigma, mask(), setup_.sigma.has_off_diagonal(),
      [&](std::size_t n, std::size_t m, int, double w) {
        if (w == 0.0) return;
        const std::size_t sn = L.index(n), sm = L.index(m);
        diag_[sn] -= w;
        diag_[sm] -= w;
        absoff[sn] += std::fabs(w);
        absoff[sm] += std::fabs(w);
      },
      [&](std::size_t p, std::size_t q, std::size_t r, std::size_t s, int, double e) {
        if (e == 0.0) return;
        const std::size_t sp = L.index(p), sq = L.index(q), sr = L.index(r), ss = L.index(s);
        diag_[sp] -= e;
        diag_[ss] -= e;
        diag_[sq] += e;
        diag_[sr] += e;
        for (std::size_t c : {sp, sq, sr, ss}) absoff[c] += std::fabs(e);
      });
  for (std::size_t n = 0; n < L.size(); ++n)
    bound_ = std::max(bound_, std::fabs(diag_[n]) + absoff[n]);
}

void DiffusionOperator::apply(const Field<double>& v, Field<double>& out, double alpha,
                              double beta) const {
  if (v.size() != layout().size())
    throw Error(fmt::format("diffusion: input field has {} values, the layout {}", v.size(),
                            layout().size()));
  if (&v == &out) throw Error("diffusion: apply() cannot work in place");
  if (out.size() != v.size()) out.resize(v.size());
  do_apply(v.data(), out.data(), alpha, beta);
}

void DiffusionOperator::apply(const Field<float>& v, Field<float>& out, float alpha,
                              float beta) const {
  if (v.size() != layout().size())
    throw Error(fmt::format("diffusion: input field has {} values, the layout {}", v.size(),
                            layout().size()));
  if (&v == &out) throw Error("diffusion: apply() cannot work in place");
  if (out.size() != v.size()) out.resize(v.size());
  do_apply(v.data(), out.data(), alpha, beta);
}

void DiffusionOperator::apply_rows(const Field<double>& v, Field<double>& out, double alpha, double beta,
                                   std::size_t r0, std::size_t r1) const {
  if (v.size() != layout().size() || out.size() != v.size() || &v == &out)
    throw Error("diffusion: apply_rows() needs two distinct fields of the layout's size");
  do_apply_rows(v.data(), out.data(), alpha, beta, r0, r1);
}

void DiffusionOperator::apply_rows(const Field<float>& v, Field<float>& out, float alpha, float beta,
                                   std::size_t r0, std::size_t r1) const {
  if (v.size() != layout().size() || out.size() != v.size() || &v == &out)
    throw Error("diffusion: apply_rows() needs two distinct fields of the layout's size");
  do_apply_rows(v.data(), out.data(), alpha, beta, r0, r1);
}

namespace {

// The oracle: plain double loops straight from σ and the mask.
class ReferenceDiffusion final : public DiffusionOperator {
 public:
  explicit ReferenceDiffusion(DiffusionSetup s) : DiffusionOperator(std::move(s), Backend::reference) {
    if (!layout().box)
      throw Error("diffusion: the reference backend works on the box layout only");
  }

 protected:
  void do_apply(const double* v, double* out, double alpha, double beta) const override {
    if (setup_.order == StencilOrder::fourth)
      kernels::reference::diffusion4_apply(grid(), setup_.sigma.uniform_value()[0], v, out, alpha,
                                           beta);
    else
      kernels::reference::diffusion2_apply(grid(), setup_.sigma, mask(), v, out, alpha, beta);
  }
  // Float fields go through double: the oracle never computes in float.
  void do_apply(const float* v, float* out, float alpha, float beta) const override {
    std::vector<double> vd(v, v + grid().size()), od(grid().size());
    do_apply(vd.data(), od.data(), alpha, beta);
    for (std::size_t n = 0; n < od.size(); ++n) out[n] = static_cast<float>(od[n]);
  }
};

class CpuDiffusion final : public DiffusionOperator {
 public:
  explicit CpuDiffusion(DiffusionSetup s) : DiffusionOperator(std::move(s), Backend::cpu) {
    const auto& u = setup_.sigma.uniform_value();
    if (setup_.order == StencilOrder::second) {
      uniform_ = setup_.sigma.uniform_diagonal(mask() == nullptr, false);  // φ is in φσ here
      if (uniform_) {
        for (int a = 0; a < 3; ++a)
          w_[a] = grid().active(a) ? u[a] / (grid().h[a] * grid().h[a]) : 0.0;
      } else {
        links_ = kernels::build_link_coeffs<double>(grid(), setup_.sigma, mask(), layout());
        // The coefficients are all this backend needs: a per-voxel σ would keep
        // 48 bytes per box cell alive for nothing.
        setup_.sigma = Conductivity{};
      }
    }
  }

 protected:
  template <class Real>
  void run(const Real* v, Real* out, Real alpha, Real beta, std::size_t r0 = 0,
           std::size_t r1 = kernels::cpu::kAllRows) const {
    if (setup_.order == StencilOrder::fourth)
      kernels::cpu::diffusion4_apply(grid(), setup_.sigma.uniform_value()[0], v, out, alpha, beta, r0, r1);
    else if (uniform_)
      kernels::cpu::diffusion2_uniform_apply(grid(), w_, v, out, alpha, beta, r0, r1);
    else
      kernels::cpu::diffusion2_links_apply(grid(), layout(), links_, v, out, alpha, beta, r0, r1);
  }
  void do_apply(const double* v, double* out, double alpha, double beta) const override {
    run(v, out, alpha, beta);
  }
  void do_apply(const float* v, float* out, float alpha, float beta) const override {
    run(v, out, alpha, beta);
  }
  void do_apply_rows(const double* v, double* out, double alpha, double beta, std::size_t r0,
                     std::size_t r1) const override {
    run(v, out, alpha, beta, r0, r1);
  }
  void do_apply_rows(const float* v, float* out, float alpha, float beta, std::size_t r0,
                     std::size_t r1) const override {
    run(v, out, alpha, beta, r0, r1);
  }

 private:
  bool uniform_ = false;
  std::array<double, 3> w_{0, 0, 0};
  kernels::LinkCoeffs<double> links_;
};

}  // namespace

std::unique_ptr<DiffusionOperator> make_diffusion_operator(DiffusionSetup setup, Backend b) {
  switch (b) {
    case Backend::reference: return std::make_unique<ReferenceDiffusion>(std::move(setup));
    case Backend::cpu: return std::make_unique<CpuDiffusion>(std::move(setup));
    case Backend::cuda:
      throw Error("diffusion: there is no stand-alone CUDA diffusion operator; the CUDA engine applies the "
                  "stencil in its own kernels (tissue/cuda/)");
  }
  throw Error("diffusion: unknown backend");
}

std::vector<double> phase_inverse(const Field<double>& phi, const Mask& mask, const RowLayout& layout) {
  std::vector<double> inv(layout.size(), 0.0);
  for (std::size_t n = 0; n < phi.size(); ++n)
    if (phi[n] > 0 && is_tissue(&mask, n)) inv[layout.index(n)] = 1.0 / phi[n];
  return inv;
}

std::vector<double> phase_weights(const Field<double>& phi, const Mask& mask, const RowLayout& layout) {
  std::vector<double> w(layout.size(), 1.0);
  for (std::size_t n = 0; n < phi.size(); ++n)
    if (is_tissue(&mask, n)) w[layout.index(n)] = phi[n];
  return w;
}

}  // namespace hw::tissue
