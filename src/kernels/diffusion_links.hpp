// Enumerates the links of the second-order diffusion operator (see diffusion_k.hpp).
//
// Why a template walker: the reference backend applies the operator by visiting every
// link once (an obvious scatter), and the cpu backend's coefficient arrays are filled by
// the same visit. Boundaries and the mask are decided here and only here:
//   * a face link exists if both cells are in the grid (wrapping on periodic axes) and
//     both are tissue — so no-flux walls and tissue/non-tissue faces carry zero flux;
//   * an edge exists only if all four of its cells exist and are tissue.
#pragma once

#include <cstddef>

#include "kernels/diffusion_k.hpp"
#include "mesh/conductivity.hpp"
#include "mesh/grid.hpp"

namespace hw::kernels {

// The three edge families: (a, b) axis pairs, in the order xy, xz, yz.
inline constexpr int kEdgeAxes[3][2] = {{0, 1}, {0, 2}, {1, 2}};

// face(n, m, axis, w): link n → n + e_axis (m, wrapped), weight w > 0 or 0.
// edge(p, q, r, s, family, e): the edge whose lower corner cell is p; q = p+e_a,
//   r = p+e_b, s = p+e_a+e_b.
// Links with zero weight are still visited (backends that store arrays want every slot).
template <class FaceFn, class EdgeFn>
void for_each_link(const tissue::Grid& g, const tissue::Conductivity& sigma,
                   const tissue::Mask* mask, bool with_edges, FaceFn&& face, EdgeFn&& edge) {
  for (int k = 0; k < g.nz(); ++k)
    for (int j = 0; j < g.ny(); ++j)
      for (int i = 0; i < g.nx(); ++i) {
        const int c[3] = {i, j, k};
        const std::size_t n = g.index(i, j, k);
        const bool tn = tissue::is_tissue(mask, n);
        for (int a = 0; a < 3; ++a) {
          if (!g.active(a)) continue;
          const int ma = g.neighbour(a, c[a], 1);
          if (ma < 0) continue;
          int cm[3] = {i, j, k};
          cm[a] = ma;
          const std::size_t m = g.index(cm[0], cm[1], cm[2]);
          const double w = (tn && tissue::is_tissue(mask, m))
                               ? face_weight(sigma.get(a, n), sigma.get(a, m), g.h[a])
                               : 0.0;
          face(n, m, a, w);
        }
        if (!with_edges) continue;
        for (int f = 0; f < 3; ++f) {
          const int a = kEdgeAxes[f][0], b = kEdgeAxes[f][1];
          if (!g.active(a) || !g.active(b)) continue;
          const int ia = g.neighbour(a, c[a], 1), ib = g.neighbour(b, c[b], 1);
          if (ia < 0 || ib < 0) continue;
          int cq[3] = {i, j, k}, cr[3] = {i, j, k}, cs[3] = {i, j, k};
          cq[a] = ia;
          cr[b] = ib;
          cs[a] = ia;
          cs[b] = ib;
          const std::size_t q = g.index(cq[0], cq[1], cq[2]);
          const std::size_t r = g.index(cr[0], cr[1], cr[2]);
          const std::size_t s = g.index(cs[0], cs[1], cs[2]);
          const int comp = tissue::tensor_comp(a, b);
          const bool all = tn && tissue::is_tissue(mask, q) && tissue::is_tissue(mask, r) &&
                           tissue::is_tissue(mask, s);
          const double e = all ? edge_weight(sigma.get(comp, n), sigma.get(comp, q),
                                             sigma.get(comp, r), sigma.get(comp, s), g.h[a],
                                             g.h[b])
                               : 0.0;
          edge(n, q, r, s, f, e);
        }
      }
}

}  // namespace hw::kernels
