// A sparse index of the bricks (B×B×B blocks of cells) that contain tissue: the layout the
// cpu and GPU backends use to skip empty space (seed 001 §1.5, "blockDS").
//
// Why: the shared hearts fill only ~22–27% of their boxes; storing and stepping whole
// boxes wastes 3–4× memory and work. Active bricks get compact ids 0…count−1 in x-fastest
// brick order, each with its tissue count and its 6 face neighbours
// [x−, x+, y−, y+, z−, z+] (compact id, brick_empty for an empty neighbour brick,
// brick_wall at a no-flux domain wall; periodic axes wrap). Bricks at the upper grid edge
// may be partial (fewer than B cells per axis).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "tissue/grid.hpp"

namespace hw::tissue {

inline constexpr std::int32_t brick_empty = -1;
inline constexpr std::int32_t brick_wall = -2;

struct BrickIndex {
  int brick = 8;                              // cells per brick edge
  std::array<int, 3> nb{0, 0, 0};             // bricks per axis (ceil(n/brick))
  std::vector<std::int32_t> id_of;            // per brick (x fastest): compact id or brick_empty
  std::vector<std::array<int, 3>> origin;     // per active brick: first cell (i, j, k)
  std::vector<std::int32_t> tissue_count;     // per active brick: tissue cells in it
  std::vector<std::array<std::int32_t, 6>> neighbours;  // per active brick
  std::size_t tissue_cells = 0;
  std::size_t box_cells = 0;

  std::size_t active() const { return origin.size(); }
  // Cells stored when every active brick is stored whole (brick³ each).
  std::size_t stored_cells() const { return active() * std::size_t(brick) * brick * brick; }
  double tissue_fraction() const { return box_cells ? double(tissue_cells) / box_cells : 0.0; }
  // Stored cells over the box: the share of the box the sparse layout processes.
  double brick_fraction() const { return box_cells ? double(stored_cells()) / box_cells : 0.0; }
};

// Builds the index; an empty mask means all tissue. Throws hw::Error if brick < 1 or the
// mask size differs from the grid.
BrickIndex build_brick_index(const Grid& g, const Mask& mask, int brick = 8);

}  // namespace hw::tissue
