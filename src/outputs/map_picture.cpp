// Map pictures: one panel or three orthogonal slices; see map_picture.hpp.
#include "outputs/map_picture.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/error.hpp"
#include "outputs/font.hpp"
#include "outputs/picture_parts.hpp"

namespace hw::io {
namespace {

constexpr int margin = 12, panel_gap = 24;
constexpr const char* axis_name[3] = {"x", "y", "z"};

MmAxes axes_of(const tissue::Grid& g, const MapPanel& p) {
  const auto [u, v] = plane_axes(p.axis);
  return {g.origin[u], g.origin[u] + g.n[u] * g.h[u], g.origin[v], g.origin[v] + g.n[v] * g.h[v],
          std::string(axis_name[u]) + " (mm)", std::string(axis_name[v]) + " (mm)"};
}

std::string caption_of(const tissue::Grid& g, const MapPanel& p) {
  return fmt::format("{} = {:.4g} mm", axis_name[p.axis], g.origin[p.axis] + g.centre(p.axis, p.layer));
}

}  // namespace

std::array<int, 3> earliest_cell(const tissue::Grid& g, const tissue::Field<float>& f, const tissue::Mask* mask) {
  std::array<int, 3> best{g.n[0] / 2, g.n[1] / 2, g.n[2] / 2};
  float lo = INFINITY;
  for (int k = 0; k < g.n[2]; ++k)
    for (int j = 0; j < g.n[1]; ++j)
      for (int i = 0; i < g.n[0]; ++i) {
        const std::size_t c = g.index(i, j, k);
        if (tissue::is_tissue(mask, c) && std::isfinite(f[c]) && f[c] < lo) lo = f[c], best = {i, j, k};
      }
  return best;
}

MapLayout map_layout(const tissue::Grid& g, const tissue::Field<float>& f, const tissue::Mask* mask,
                     const MapPictureOptions& opt) {
  MapLayout L;
  L.through = earliest_cell(g, f, mask);
  const bool three_d = g.n[2] > 1;
  std::vector<int> normals = three_d ? std::vector<int>{2, 1, 0} : std::vector<int>{2};
  // One scale for every panel: pixels per cell ∝ its size in mm, the largest panel's longest
  // side about panel_size (at least a pixel per cell).
  const double hmin = std::min({g.h[0], g.h[1], g.h[2]});
  double longest = 0;
  for (int a = 0; a < 3; ++a)
    if (g.n[a] > 1 || !three_d) longest = std::max(longest, g.n[a] * g.h[a] / hmin);
  const double base = std::max(1.0, std::floor(opt.panel_size / std::max(longest, 1.0)));
  std::array<int, 3> cell_px{};
  for (int a = 0; a < 3; ++a) cell_px[a] = std::max(1, int(std::lround(base * g.h[a] / hmin)));
  L.px_per_mm = cell_px[0] / g.h[0];
  const int top = margin + text_height() + 8 + text_height() + 4;  // title, then the panels' captions
  int x = margin, bottom = 0;
  for (int normal : normals) {
    MapPanel p;
    p.axis = normal;
    p.layer = L.through[normal];
    const auto [u, v] = plane_axes(normal);
    p.nu = g.n[u];
    p.nv = g.n[v];
    p.cell_w = cell_px[u];
    p.cell_h = cell_px[v];
    x += axes_of(g, p).left_margin();
    p.x0 = x;
    p.y0 = top;
    x += p.nu * p.cell_w + panel_gap;
    bottom = std::max(bottom, p.y0 + p.nv * p.cell_h + MmAxes::bottom_margin());
    L.panels.push_back(p);
  }
  L.bar_x0 = x;
  L.bar_y0 = top;
  L.bar_h = std::max(120, L.panels.front().nv * L.panels.front().cell_h);
  const ColourBar bar{opt.vmin, opt.vmax, opt.label, 16, L.bar_h};
  L.scale_x0 = L.panels.front().x0;
  L.scale_y0 = std::max(bottom, L.bar_y0 + L.bar_h + text_height()) + 6;
  const ScaleBar scale{L.px_per_mm, std::max(20, L.panels.front().nu * L.panels.front().cell_w / 4)};
  L.width = std::max({L.bar_x0 + bar.width(), L.scale_x0 + scale.width(), margin + text_width(opt.title)}) + margin;
  L.height = L.scale_y0 + ScaleBar::height() + margin;
  return L;
}

Image render_map_picture(const tissue::Grid& g, const tissue::Field<float>& f, const tissue::Mask* mask,
                         const MapPictureOptions& opt) {
  if (f.size() != g.size())
    throw Error(fmt::format("map picture: field has {} values, the grid {} cells", f.size(), g.size()));
  const MapLayout L = map_layout(g, f, mask, opt);
  Image img(L.width, L.height);
  draw_text(img, margin, margin, opt.title);
  for (const MapPanel& p : L.panels) {
    const SliceView view{&g, &f, mask, p.axis, p.layer, opt.vmin, opt.vmax, p.cell_w, p.cell_h};
    draw_slice(img, p.x0, p.y0, view);
    draw_mm_axes(img, p.x0, p.y0, view.width(), view.height(), axes_of(g, p));
    if (L.panels.size() > 1) draw_text(img, p.x0, p.y0 - text_height() - 4, caption_of(g, p));
  }
  draw_colour_bar(img, L.bar_x0, L.bar_y0, ColourBar{opt.vmin, opt.vmax, opt.label, 16, L.bar_h});
  const MapPanel& first = L.panels.front();
  draw_scale_bar(img, L.scale_x0, L.scale_y0, ScaleBar{L.px_per_mm, std::max(20, first.nu * first.cell_w / 4)});
  return img;
}

}  // namespace hw::io
