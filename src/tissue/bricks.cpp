// Sparse brick index; see bricks.hpp.
#include "tissue/bricks.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace hw::tissue {

BrickIndex build_brick_index(const Grid& g, const Mask& mask, int brick) {
  if (brick < 1) throw Error(fmt::format("brick index: brick size {} must be >= 1", brick));
  if (!mask.empty() && mask.size() != g.size())
    throw Error("brick index: mask size does not match the grid");
  BrickIndex b;
  b.brick = brick;
  for (int a = 0; a < 3; ++a) b.nb[a] = (g.n[a] + brick - 1) / brick;
  const std::size_t nbricks = std::size_t(b.nb[0]) * b.nb[1] * b.nb[2];
  std::vector<std::int32_t> count(nbricks, 0);
  for (int k = 0; k < g.nz(); ++k)
    for (int j = 0; j < g.ny(); ++j) {
      const std::size_t row = (std::size_t(k / brick) * b.nb[1] + j / brick) * b.nb[0];
      for (int i = 0; i < g.nx(); ++i)
        if (is_tissue(&mask, g.index(i, j, k))) ++count[row + i / brick];
    }
  b.id_of.assign(nbricks, brick_empty);
  for (int bk = 0; bk < b.nb[2]; ++bk)
    for (int bj = 0; bj < b.nb[1]; ++bj)
      for (int bi = 0; bi < b.nb[0]; ++bi) {
        const std::size_t n = (std::size_t(bk) * b.nb[1] + bj) * b.nb[0] + bi;
        if (count[n] == 0) continue;
        b.id_of[n] = static_cast<std::int32_t>(b.origin.size());
        b.origin.push_back({bi * brick, bj * brick, bk * brick});
        b.tissue_count.push_back(count[n]);
        b.tissue_cells += std::size_t(count[n]);
      }
  b.box_cells = g.size();
  b.neighbours.resize(b.active());
  for (std::size_t id = 0; id < b.active(); ++id) {
    const std::array<int, 3> c{b.origin[id][0] / brick, b.origin[id][1] / brick, b.origin[id][2] / brick};
    for (int a = 0; a < 3; ++a)
      for (int s = 0; s < 2; ++s) {
        std::array<int, 3> q = c;
        q[a] += s ? 1 : -1;
        std::int32_t v;
        if (q[a] < 0 || q[a] >= b.nb[a]) {
          if (g.bc[a] == Boundary::periodic && g.n[a] % brick == 0) {
            q[a] = (q[a] + b.nb[a]) % b.nb[a];
            v = b.id_of[(std::size_t(q[2]) * b.nb[1] + q[1]) * b.nb[0] + q[0]];
          } else {
            // A periodic axis not divisible by the brick wraps inside a partial brick; the
            // backend must treat it cell by cell, so it is reported as a wall here.
            v = brick_wall;
          }
        } else {
          v = b.id_of[(std::size_t(q[2]) * b.nb[1] + q[1]) * b.nb[0] + q[0]];
        }
        b.neighbours[id][2 * a + s] = v;
      }
  }
  return b;
}

}  // namespace hw::tissue
