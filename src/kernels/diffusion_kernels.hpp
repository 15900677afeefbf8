// Diffusion kernels, declared once per backend (Ginkgo style: core code calls these through
// tissue::DiffusionOperator and never sees a backend).
//
// All kernels compute out = α·(L v) + β·v, where L v ≈ ∇·(σ∇v) (mS/mm · mV/mm² = µA/mm³).
// out must not alias v. The reference kernels are plain double loops: the oracle. The cpu
// kernels use OpenMP over (j,k) rows and a branch-free, vectorisable x loop in the interior.
#pragma once

#include <array>
#include <cstddef>
#include <vector>

#include "mesh/conductivity.hpp"
#include "mesh/grid.hpp"
#include "mesh/row_layout.hpp"

namespace hw::kernels {

// The second-order operator as coefficient arrays (cpu backend; later copied to a device),
// stored in a RowLayout like the fields they act on: at s = layout.index(n),
// face[a][s]: weight of the link n → n+e_a (0 where absent); edge[f][s]: the edge
// coefficient e of family f (xy, xz, yz) whose lower corner cell is n (0 where absent).
// Arrays of inactive axes / families, or edges when σ is diagonal, are empty. Coef is the
// run's precision in the fused cpu step (float coefficients halve their memory and
// traffic), double in the whole-field operator.
template <class Coef>
struct LinkCoeffs {
  std::array<std::vector<Coef>, 3> face;
  std::array<std::vector<Coef>, 3> edge;
  std::vector<Coef> zero_row;  // nx zeros: stands in for rows outside the grid
};

template <class Coef>
LinkCoeffs<Coef> build_link_coeffs(const tissue::Grid& g, const tissue::Conductivity& sigma,
                                   const tissue::Mask* mask, const tissue::RowLayout& layout);

namespace reference {
void diffusion2_apply(const tissue::Grid& g, const tissue::Conductivity& sigma,
                      const tissue::Mask* mask, const double* v, double* out, double alpha,
                      double beta);
void diffusion4_apply(const tissue::Grid& g, double sigma, const double* v, double* out,
                      double alpha, double beta);
}  // namespace reference

namespace cpu {
// Each writes out on the (j, k) rows r0 ≤ r = j + k·ny < r1 only (a split run's slab: the
// rows around it must hold their values in v); r1 = SIZE_MAX: every row.
inline constexpr std::size_t kAllRows = ~std::size_t(0);
// σ uniform and diagonal (w[a] = σ_aa/h_a², 0 on inactive axes), no mask.
template <class Real>
void diffusion2_uniform_apply(const tissue::Grid& g, std::array<double, 3> w, const Real* v,
                              Real* out, Real alpha, Real beta, std::size_t r0 = 0, std::size_t r1 = kAllRows);
// v, out and c in layout's storage; stored cells off tissue get out = β·v (the leading
// padding with row 0).
template <class Real, class Coef>
void diffusion2_links_apply(const tissue::Grid& g, const tissue::RowLayout& layout,
                            const LinkCoeffs<Coef>& c, const Real* v, Real* out, Real alpha,
                            Real beta, std::size_t r0 = 0, std::size_t r1 = kAllRows);
template <class Real>
void diffusion4_apply(const tissue::Grid& g, double sigma, const Real* v, Real* out, Real alpha,
                      Real beta, std::size_t r0 = 0, std::size_t r1 = kAllRows);
}  // namespace cpu

}  // namespace hw::kernels
