// Grid validation: bad sizes are caught here, before any allocation or kernel sees them.
#include "mesh/grid.hpp"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "core/error.hpp"

namespace hw::tissue {

void Grid::validate() const {
  static const char* names[] = {"x", "y", "z"};
  for (int a = 0; a < 3; ++a) {
    if (n[a] < 1) throw Error(fmt::format("grid: n{} = {} must be >= 1", names[a], n[a]));
    if (!(h[a] > 0.0) || !std::isfinite(h[a]))
      throw Error(fmt::format("grid: d{} = {} mm must be a finite number > 0", names[a], h[a]));
  }
  const double cells = double(n[0]) * double(n[1]) * double(n[2]);
  if (cells > double(std::numeric_limits<std::ptrdiff_t>::max() / 16))
    throw Error(fmt::format("grid: {} cells cannot be indexed", cells));
}

std::string Grid::str() const {
  auto b = [](Boundary x) { return x == Boundary::periodic ? "periodic" : "no-flux"; };
  return fmt::format("{}x{}x{} cells of {}x{}x{} mm, bc x={} y={} z={}", n[0], n[1], n[2], h[0],
                     h[1], h[2], b(bc[0]), b(bc[1]), b(bc[2]));
}

}  // namespace hw::tissue
