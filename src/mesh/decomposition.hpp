// One grid cut into slabs, one per rank of a split run (docs/parallel.md).
//
// Why slabs of whole rows: the cpu engine stores V by rows (mesh/row_layout.hpp), one row
// after another, so a slab of whole rows is one contiguous range of every field (and of each
// part's cells), its faces are contiguous too (a halo message is one memcpy-able range), and
// a rank steps its rows with the same code as one rank steps all. The cut runs across the
// slowest active axis (z on a 3D grid, y on a 2D one); the cut planes are placed where the
// running count of tissue cells crosses k/N of the total, so each rank gets as much tissue
// (work) as the others, not as many planes. A 2D/3D split (pencils, bricks) would make the
// faces strided; it can come behind the same Slab interface.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "mesh/grid.hpp"

namespace hw::tissue {

// A rank's rows [row_begin, row_end) (rows r = j + ny·k), and so its grid cells
// [row_begin·nx, row_end·nx).
struct Slab {
  std::size_t row_begin = 0, row_end = 0;
  std::size_t tissue = 0;  // tissue cells in the slab
};

struct Decomposition {
  int axis = 2;                    // the axis cut across: 2 (z) or 1 (y)
  std::size_t rows_per_plane = 1;  // rows in one plane across that axis (ny for z, 1 for y)
  std::size_t ghost_rows = 0;      // rows of a neighbour a slab's stencil reads, each side
  bool periodic = false;           // the axis wraps: the first and last slabs are neighbours
  std::vector<Slab> slabs;         // per rank, in order along the axis

  int ranks() const { return int(slabs.size()); }
  // The rank before and after rank r along the axis (−1: none, at a no-flux end).
  int previous(int r) const { return r > 0 ? r - 1 : periodic && ranks() > 1 ? ranks() - 1 : -1; }
  int next(int r) const { return r + 1 < ranks() ? r + 1 : periodic && ranks() > 1 ? 0 : -1; }
  // The rank whose slab holds grid cell n.
  int owner(std::size_t n, int nx) const;
  // "3 slabs along z of 12, 11, 13 planes (ghost width 1)"
  std::string describe() const;
};

// Cuts g (tissue where mask says; empty = all) into `ranks` slabs along its slowest active
// axis, balanced by tissue cells, each at least `ghost_planes` planes thick (the stencil's
// reach: 1 for the second-order stencil, 2 for the fourth). hw::Error when the grid has too
// few planes for that many slabs, or is a cable (one active axis, x, which rows do not cut).
Decomposition decompose(const Grid& g, const Mask& mask, int ranks, int ghost_planes);

}  // namespace hw::tissue
