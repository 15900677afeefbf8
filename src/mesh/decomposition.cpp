#include "mesh/decomposition.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/error.hpp"

namespace hw::tissue {

int Decomposition::owner(std::size_t n, int nx) const {
  const std::size_t r = n / std::size_t(nx);
  for (int q = 0; q < ranks(); ++q)
    if (r < slabs[std::size_t(q)].row_end) return q;
  return ranks() - 1;
}

std::string Decomposition::describe() const {
  std::string sizes;
  for (const Slab& s : slabs)
    sizes += fmt::format("{}{}", sizes.empty() ? "" : ", ", (s.row_end - s.row_begin) / rows_per_plane);
  std::string cells;
  for (const Slab& s : slabs) cells += fmt::format("{}{}", cells.empty() ? "" : ", ", s.tissue);
  return fmt::format("{} slabs along {} of {} planes ({} tissue cells; ghost width {})", ranks(),
                     axis == 2 ? "z" : "y", sizes, cells, ghost_rows / rows_per_plane);
}

Decomposition decompose(const Grid& g, const Mask& mask, int ranks, int ghost_planes) {
  if (ranks < 1) throw Error(fmt::format("decomposition: {} ranks; at least 1", ranks));
  Decomposition d;
  d.axis = g.nz() > 1 ? 2 : 1;
  const std::size_t nx = std::size_t(g.nx());
  const std::size_t planes = std::size_t(d.axis == 2 ? g.nz() : g.ny());
  d.rows_per_plane = d.axis == 2 ? std::size_t(g.ny()) : 1;
  d.periodic = g.bc[std::size_t(d.axis)] == Boundary::periodic;
  const std::size_t width = std::size_t(std::max(1, ghost_planes));
  d.ghost_rows = width * d.rows_per_plane;
  if (ranks > 1 && g.ny() == 1 && g.nz() == 1)
    throw Error(fmt::format("cannot split a cable ({}) over {} ranks: slabs cut across y or z; run it on one rank",
                            g.str(), ranks));
  if (std::size_t(ranks) * width > planes)
    throw Error(fmt::format(
        "cannot split the grid into {} slabs: it has {} planes along {} and each slab needs at least {} "
        "(the stencil's reach); run with at most {} ranks",
        ranks, planes, d.axis == 2 ? "z" : "y", width, std::max<std::size_t>(1, planes / width)));
  // Tissue cells per plane, then the cuts where the running count crosses k/N of the total.
  const std::size_t plane_cells = nx * d.rows_per_plane;
  std::vector<std::size_t> tissue(planes, plane_cells);
  if (!mask.empty()) {
    if (mask.size() != g.size()) throw Error("decomposition: the mask's size differs from the grid's");
    for (std::size_t p = 0; p < planes; ++p)
      tissue[p] = std::size_t(std::count_if(mask.data() + p * plane_cells, mask.data() + (p + 1) * plane_cells,
                                            [](std::uint8_t m) { return m != 0; }));
  }
  std::vector<std::size_t> before(planes + 1, 0);  // tissue in planes [0, p)
  for (std::size_t p = 0; p < planes; ++p) before[p + 1] = before[p] + tissue[p];
  const double total = double(before[planes]);
  std::vector<std::size_t> cut(std::size_t(ranks) + 1, 0);
  cut[std::size_t(ranks)] = planes;
  for (int k = 1; k < ranks; ++k) {
    const double want = total * k / ranks;
    // The plane boundary whose count is nearest the share, kept at least `width` planes from
    // the cut before and leaving `width` planes for each slab after.
    std::size_t best = cut[std::size_t(k - 1)] + width;
    const std::size_t last = planes - width * std::size_t(ranks - k);
    for (std::size_t p = best; p <= last; ++p)
      if (std::abs(double(before[p]) - want) < std::abs(double(before[best]) - want)) best = p;
    cut[std::size_t(k)] = best;
  }
  for (int k = 0; k < ranks; ++k) {
    Slab s;
    s.row_begin = cut[std::size_t(k)] * d.rows_per_plane;
    s.row_end = cut[std::size_t(k) + 1] * d.rows_per_plane;
    s.tissue = before[cut[std::size_t(k) + 1]] - before[cut[std::size_t(k)]];
    d.slabs.push_back(s);
  }
  return d;
}

}  // namespace hw::tissue
