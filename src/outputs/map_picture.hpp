// A map of a run as one picture with axes in mm, a scale bar and a colour bar: the
// activation map's activation.png, in 2D the whole sheet, in 3D three orthogonal slices.
//
// Why slices through the earliest-activated cell: that is where the wave starts, so all
// three planes show the spread from it (through the middle when nothing activated). The
// axes are in the geometry's own coordinates (the grid's origin added), so a point read
// off the picture is found at the same coordinates in ParaView over the source image.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "mesh/grid.hpp"
#include "outputs/image.hpp"

namespace hw::io {

struct MapPictureOptions {
  std::string title;                 // top-left
  std::string label = "activation time (ms)";  // above the colour bar
  double vmin = 0, vmax = 1;         // colour range
  int panel_size = 360;              // the longest side of the largest panel reaches about this
};

// Where the picture's panels lie (for tests): one in 2D (the x-y sheet), three in 3D
// (normal z, y, x: the x-y, x-z and y-z planes through `through`).
struct MapPanel {
  int axis = 2, layer = 0;      // the plane's normal and its cell index
  int x0 = 0, y0 = 0;           // top-left of the cells
  int cell_w = 1, cell_h = 1;   // pixels per cell across and up
  int nu = 1, nv = 1;           // cells across and up
};
struct MapLayout {
  std::array<int, 3> through{0, 0, 0};  // the cell the 3D slices pass through
  std::vector<MapPanel> panels;
  int bar_x0 = 0, bar_y0 = 0, bar_h = 0;
  int scale_x0 = 0, scale_y0 = 0;
  double px_per_mm = 1;
  int width = 0, height = 0;
};

// The cell of the smallest finite value on tissue (the earliest activation); the middle of
// the grid when there is none.
std::array<int, 3> earliest_cell(const tissue::Grid& g, const tissue::Field<float>& f, const tissue::Mask* mask);

MapLayout map_layout(const tissue::Grid& g, const tissue::Field<float>& f, const tissue::Mask* mask,
                     const MapPictureOptions& opt = {});
// Throws hw::Error when the field is not the grid's size.
Image render_map_picture(const tissue::Grid& g, const tissue::Field<float>& f, const tissue::Mask* mask,
                         const MapPictureOptions& opt = {});

}  // namespace hw::io
