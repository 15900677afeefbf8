// Where each cell's value lives in a field array: compressed rows.
//
// Why rows, not bricks: the shared hearts fill 22–27 % of their boxes, and a layout that
// stores only the space around the tissue makes memory and work follow the tissue
// (DESIGN.md; seed 001's blockDS does this with 8³ bricks). Storing each (j,k) row over the
// x range the stencil can touch stores less than 8³ bricks on the shared hearts measured
// (pig 39.4 % of the box against 44.6 %, rabbits 31.7 % and 33.5 % against 37.2 % and
// 42.3 %; docs/geometry.md), keeps x contiguous (the cpu loops vectorise, a GPU warp reads
// one run) and needs no halo copies: neighbours are rows, found through one table.
//
// Each row r = j + ny·k stores one run of cells [lo, hi): the cells within one x step of
// the tissue of r or of any of the 8 rows around it (j±1, k±1, wrapped on periodic axes).
// So the second-order stencil (faces and edges) of any tissue cell reads stored cells
// only, and a stored cell that is not tissue meets zero link weights. Rows are stored one
// after another; the cell (i, r) is at base[r] + i. A box (no mask, or every row stored
// whole) is the identity layout, base[r] = r·nx; otherwise nx leading cells of padding keep
// every base[r] ≥ 0, so row pointers never point before the array.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "mesh/grid.hpp"

namespace hw::tissue {

struct RowLayout {
  int nx = 1;
  std::vector<std::size_t> base;      // per row: storage index of cell x = 0 of the row
  std::vector<std::uint32_t> lo, hi;  // per row: stored x range (lo == hi: nothing stored)
  std::vector<std::uint32_t> tlo, thi;  // per row: tissue x range (tlo == thi: no tissue)
  std::size_t pad = 0;                // leading cells that belong to no row
  std::size_t stored = 0;             // array length: pad + Σ (hi − lo)
  bool box = true;                    // identity layout: storage index = grid index

  std::size_t rows() const { return base.size(); }
  std::size_t size() const { return stored; }
  // Storage index of grid cell n; meaningful only where holds(n).
  std::size_t index(std::size_t n) const { return base[n / std::size_t(nx)] + n % std::size_t(nx); }
  bool holds(std::size_t n) const {
    const std::size_t r = n / std::size_t(nx), i = n % std::size_t(nx);
    return i >= lo[r] && i < hi[r];
  }
  // Storage index of the first stored cell of row r (rows are stored in order, so a run of
  // rows r0..r1−1 is the contiguous range [first(r0), first(r1))).
  std::size_t first(std::size_t r) const { return r < rows() ? base[r] + lo[r] : stored; }
};

// The identity layout of g, with tissue ranges from mask (empty = all tissue).
RowLayout box_layout(const Grid& g, const Mask& mask = {});
// Compressed rows around the tissue of mask; the box layout when mask is empty or every
// row would be stored whole. hw::Error if the mask size differs from the grid.
RowLayout row_layout(const Grid& g, const Mask& mask);

}  // namespace hw::tissue
