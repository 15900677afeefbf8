// One (j,k) row of the second-order diffusion update, for the fused monodomain step.
//
// Why rows: the cpu monodomain step fuses diffusion and reaction in one pass over memory
// (docs/tissue.md). A thread takes a row, computes V + α·L V for its nx cells into a small
// buffer that stays in cache, and immediately runs the cell model on the tissue cells of
// that row. The whole-field kernels in diffusion.cpp cannot be called on one row, so these
// are their row bodies, same formulas (kernels/diffusion_k.hpp weights, LinkCoeffs layout),
// so fused and unfused agree to rounding (tested against the reference operator).
#pragma once

#include <array>

#include "kernels/diffusion_kernels.hpp"
#include "mesh/grid.hpp"

namespace hw::kernels::cpu {

// out_row[i] = α·(L v)(i,j,k) + β·v(i,j,k), i = 0..nx−1; σ uniform and diagonal, no mask,
// w[a] = σ_aa/h_a² (0 on inactive axes).
template <class Real>
void diffusion2_uniform_row(const tissue::Grid& g, const std::array<double, 3>& w, int j, int k,
                            const Real* v, Real* out_row, Real alpha, Real beta);

// The same with the precomputed link coefficients (masks, variable σ, fibres), v and cf
// in layout's storage, for the cells lo ≤ i < hi of the row only (out_row[i] elsewhere is
// not written). lo..hi must lie within the row's tissue range (layout.tlo/thi), where the
// layout guarantees every stencil neighbour is stored; the fused step passes that range,
// so work follows the tissue in low-fill geometries.
template <class Real, class Coef>
void diffusion2_links_row(const tissue::Grid& g, const tissue::RowLayout& layout,
                          const LinkCoeffs<Coef>& cf, int j, int k, const Real* v, Real* out_row,
                          Real alpha, Real beta, int lo, int hi);

}  // namespace hw::kernels::cpu
