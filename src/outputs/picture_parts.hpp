// The pieces the pictures of a run are made of: the colormap, tick values, a slice of a
// field drawn cell by cell, a colour bar, a mm scale bar and axes ticked in mm.
//
// Why shared: field snapshots (png_writer), map pictures (map_picture) and trace plots
// (trace_plot) must agree on colours, ticks and lettering, so a modeller reads them alike.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "mesh/grid.hpp"
#include "outputs/image.hpp"

namespace hw::io {

// viridis at t ∈ [0, 1] (clamped; NaN → 0).
Rgb viridis(double t);

inline constexpr Rgb ink{0, 0, 0};
inline constexpr Rgb non_tissue_grey{190, 190, 190};
inline constexpr Rgb nan_grey{90, 90, 90};

// Tick values in [lo, hi] at a "nice" step (1, 2 or 5 × 10^k), the one giving closest to
// `target` ticks.
std::vector<double> nice_ticks(double lo, double hi, int target = 6);
// A tick's label: up to four significant digits, no trailing zeros.
std::string tick_label(double v);

// The in-plane axes (u across, v up) of a slice normal to `axis`.
std::array<int, 2> plane_axes(int axis);

// One plane of a field, each cell a cell_w × cell_h block, v growing upwards; non-tissue
// cells light grey, NaN dark grey, values on viridis over [vmin, vmax].
struct SliceView {
  const tissue::Grid* grid = nullptr;
  const tissue::Field<float>* field = nullptr;
  const tissue::Mask* mask = nullptr;
  int axis = 2;   // the normal
  int layer = 0;  // the cell index along the normal
  double vmin = 0, vmax = 1;
  int cell_w = 1, cell_h = 1;
  int width() const;
  int height() const;
};
void draw_slice(Image& img, int x0, int y0, const SliceView& s);

// A vertical colour bar bar_h pixels tall: vmax at the top, tick labels on the right and
// `label` above it (drawn from y0 − label_gap()).
struct ColourBar {
  double vmin = 0, vmax = 1;
  std::string label;
  int bar_w = 16, bar_h = 120;
  int width() const;  // bar, ticks and labels, or the label if wider
  static int label_gap();
};
void draw_colour_bar(Image& img, int x0, int y0, const ColourBar& b);

// A horizontal bar of a round length in mm (1, 2 or 5 × 10^k) no longer than max_px, with
// its length written beside it ("5 mm"). px_per_mm: the picture's scale across.
struct ScaleBar {
  double px_per_mm = 1;
  int max_px = 100;
  double mm() const;      // the bar's length in mm
  int length_px() const;  // … in pixels
  int width() const;      // bar and label
  static int height();
};
void draw_scale_bar(Image& img, int x0, int y0, const ScaleBar& s);

// Ticks in mm along the bottom (u) and the left (v) of a panel whose pixels span
// [u0, u1] × [v0, v1] mm (v up), with the axes' names ("x (mm)"). The ticks and labels go
// outside the panel: left_margin() to its left, bottom_margin() below it.
struct MmAxes {
  double u0 = 0, u1 = 1, v0 = 0, v1 = 1;
  std::string u_name, v_name;
  int left_margin() const;
  static int bottom_margin();
};
void draw_mm_axes(Image& img, int x0, int y0, int w, int h, const MmAxes& a);

}  // namespace hw::io
