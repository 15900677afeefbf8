// What the live view shows of a grid: one downsampled panel for a sheet (nz = 1), three
// orthogonal slices and a coarse volume (the page renders the heart's surface from it, to
// rotate and zoom) for a 3D case, each a list of grid cells (tissue/sinks.hpp's frame
// gathers them where the field lives), and the binary frame the page draws.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "mesh/grid.hpp"

namespace hw::live {

// One picture: cells (i, j, k) with axis u = i0 + stride·x and v = j0 + stride·y along the
// panel's two axes, the third fixed at `index`.
// The volume panel: cells (x, y, z)·stride (block centres) for x < width, y < height, z < depth.
struct Panel {
  std::string name;        // "xy", "xz", "yz", "volume"
  int u_axis = 0, v_axis = 1, normal = 2;
  int index = 0;           // the cell along `normal`
  int stride = 1;          // cells per pixel along u and v (and along z for the volume)
  int width = 1, height = 1;  // pixels
  int depth = 1;           // the volume's layers; 1 for a slice
  bool volume = false;
};

struct ViewLayout {
  std::vector<Panel> panels;
  std::vector<std::size_t> cells;  // the panels' grid cells, panel after panel, row by row
};

// The samples at most per frame (a few hundred KB of float32, kept under 300 KB), and of
// them the volume's at most (a 3D case: 28³ cells of a cube, about every fourth of a heart's).
constexpr std::size_t kMaxSamples = 72000;
constexpr std::size_t kMaxVolumeSamples = 24000;

// The layout of grid g: a sheet's one panel, or a box's three slices through the cell at
// `centre` (i, j, k; −1: the middle) with `main_axis` the slice drawn largest.
ViewLayout make_layout(const tissue::Grid& g, std::array<int, 3> centre = {-1, -1, -1});

// The layout as JSON (the page's hello): each panel's axes, fixed cell, stride and size.
std::string layout_json(const ViewLayout& l);

// A frame message: "HWF1", the header's length (u32, little-endian), the header (JSON:
// t, step, variable, unit, colour range), padding to 4 bytes, then the values as float32,
// then, when act is not empty, the activation times (float32, same layout).
std::string encode_frame(const std::string& header_json, const std::vector<float>& values, const std::vector<float>& act);

}  // namespace hw::live
