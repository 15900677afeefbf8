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

#include "tissue/conductivity.hpp"
#include "tissue/grid.hpp"

namespace hw::kernels {

// The second-order operator as coefficient arrays (cpu backend; later copied to a device).
// face[a][n]: weight of the link n → n+e_a (0 where absent). edge[f][n]: the edge
// coefficient e of family f (xy, xz, yz) whose lower corner cell is n (0 where absent).
// Arrays of inactive axes / families, or edges when σ is diagonal, are empty.
struct LinkCoeffs {
  std::array<std::vector<double>, 3> face;
  std::array<std::vector<double>, 3> edge;
  std::vector<double> zero_row;  // nx zeros: stands in for rows outside the grid
};

LinkCoeffs build_link_coeffs(const tissue::Grid& g, const tissue::Conductivity& sigma,
                             const tissue::Mask* mask);

namespace reference {
void diffusion2_apply(const tissue::Grid& g, const tissue::Conductivity& sigma,
                      const tissue::Mask* mask, const double* v, double* out, double alpha,
                      double beta);
void diffusion4_apply(const tissue::Grid& g, double sigma, const double* v, double* out,
                      double alpha, double beta);
}  // namespace reference

namespace cpu {
// σ uniform and diagonal (w[a] = σ_aa/h_a², 0 on inactive axes), no mask.
template <class Real>
void diffusion2_uniform_apply(const tissue::Grid& g, std::array<double, 3> w, const Real* v,
                              Real* out, Real alpha, Real beta);
template <class Real>
void diffusion2_links_apply(const tissue::Grid& g, const LinkCoeffs& c, const Real* v, Real* out,
                            Real alpha, Real beta);
template <class Real>
void diffusion4_apply(const tissue::Grid& g, double sigma, const Real* v, Real* out, Real alpha,
                      Real beta);
}  // namespace cpu

}  // namespace hw::kernels
