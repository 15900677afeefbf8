// Compressed-row storage layout; see row_layout.hpp.
#include "mesh/row_layout.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.hpp"

namespace hw::tissue {

namespace {

// Tissue x range [tlo, thi) of every row (tlo = nx, thi = 0 where there is none).
void tissue_ranges(const Grid& g, const Mask& mask, RowLayout& L) {
  const std::size_t rows = std::size_t(g.ny()) * g.nz();
  const auto nx = std::uint32_t(g.nx());
  if (!mask.empty() && mask.size() != g.size())
    throw Error(fmt::format("row layout: the mask has {} values, the grid {} cells", mask.size(),
                            g.size()));
  L.tlo.assign(rows, mask.empty() ? 0 : nx);
  L.thi.assign(rows, mask.empty() ? nx : 0);
  if (mask.empty()) return;
  for (std::size_t r = 0; r < rows; ++r) {
    const std::uint8_t* m = mask.data() + r * nx;
    std::uint32_t a = 0, b = nx;
    while (a < nx && !m[a]) ++a;
    while (b > a && !m[b - 1]) --b;
    if (a < b) {
      L.tlo[r] = a;
      L.thi[r] = b;
    }
  }
}

}  // namespace

RowLayout box_layout(const Grid& g, const Mask& mask) {
  RowLayout L;
  L.nx = g.nx();
  tissue_ranges(g, mask, L);
  const std::size_t rows = L.tlo.size();
  L.base.resize(rows);
  for (std::size_t r = 0; r < rows; ++r) L.base[r] = r * std::size_t(g.nx());
  L.lo.assign(rows, 0);
  L.hi.assign(rows, std::uint32_t(g.nx()));
  L.stored = g.size();
  return L;
}

RowLayout row_layout(const Grid& g, const Mask& mask) {
  if (mask.empty()) return box_layout(g);
  RowLayout L;
  L.nx = g.nx();
  tissue_ranges(g, mask, L);
  const int nx = g.nx(), ny = g.ny(), nz = g.nz();
  const std::size_t rows = L.tlo.size();
  L.lo.assign(rows, std::uint32_t(nx));
  L.hi.assign(rows, 0);
  const bool perx = g.bc[0] == Boundary::periodic;
  // Every tissue row widens its x range by one (a periodic row that touches an end needs
  // the whole row: its stencil wraps) and lends it to itself and its 8 neighbour rows.
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j) {
      const std::size_t r = std::size_t(j) + std::size_t(ny) * k;
      if (L.tlo[r] >= L.thi[r]) continue;
      std::uint32_t a = L.tlo[r] > 0 ? L.tlo[r] - 1 : 0;
      std::uint32_t b = std::min<std::uint32_t>(L.thi[r] + 1, std::uint32_t(nx));
      if (perx && (L.tlo[r] == 0 || L.thi[r] == std::uint32_t(nx))) {
        a = 0;
        b = std::uint32_t(nx);
      }
      for (int dk = -1; dk <= 1; ++dk)
        for (int dj = -1; dj <= 1; ++dj) {
          const int jj = dj ? g.neighbour(1, j, dj) : j, kk = dk ? g.neighbour(2, k, dk) : k;
          if (jj < 0 || kk < 0) continue;
          const std::size_t q = std::size_t(jj) + std::size_t(ny) * kk;
          L.lo[q] = std::min(L.lo[q], a);
          L.hi[q] = std::max(L.hi[q], b);
        }
    }
  bool whole = true;
  for (std::size_t r = 0; r < rows && whole; ++r) whole = L.lo[r] == 0 && L.hi[r] == std::uint32_t(nx);
  if (whole) return box_layout(g, mask);
  L.box = false;
  L.pad = std::size_t(nx);
  L.base.resize(rows);
  std::size_t at = L.pad;
  for (std::size_t r = 0; r < rows; ++r) {
    if (L.lo[r] >= L.hi[r]) L.lo[r] = L.hi[r] = 0;  // an empty row: base[r] is never used
    L.base[r] = at - L.lo[r];
    at += L.hi[r] - L.lo[r];
  }
  L.stored = at;
  return L;
}

}  // namespace hw::tissue
