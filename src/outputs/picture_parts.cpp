// Colormap, ticks, slices, colour and scale bars, mm axes; see picture_parts.hpp.
#include "outputs/picture_parts.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "outputs/font.hpp"

namespace hw::io {
namespace {

// viridis (van der Walt & Smith, 2015; CC0) sampled at t = 0, 1/8, …, 1: the nine
// control points published as its 9-colour palette.
constexpr std::array<Rgb, 9> viridis_stops{{{0x44, 0x01, 0x54},
                                            {0x47, 0x2D, 0x7B},
                                            {0x3B, 0x52, 0x8B},
                                            {0x2C, 0x72, 0x8E},
                                            {0x21, 0x90, 0x8C},
                                            {0x27, 0xAD, 0x81},
                                            {0x5D, 0xC8, 0x63},
                                            {0xAA, 0xDC, 0x32},
                                            {0xFD, 0xE7, 0x25}}};

constexpr int tick_len = 4;

// 1, 2 or 5 × 10^k at most x (x > 0).
double round_down_125(double x) {
  const double mag = std::pow(10.0, std::floor(std::log10(x)));
  for (double m : {5.0, 2.0, 1.0})
    if (m * mag <= x * (1 + 1e-12)) return m * mag;
  return mag;
}

}  // namespace

Rgb viridis(double t) {
  if (!(t > 0)) t = 0;  // also NaN
  if (t > 1) t = 1;
  const double x = t * 8;
  const int i = std::min(7, static_cast<int>(x));
  const double f = x - i;
  const Rgb a = viridis_stops[i], b = viridis_stops[i + 1];
  auto mix = [f](int p, int q) { return static_cast<std::uint8_t>(std::lround(p + (q - p) * f)); };
  return {mix(a.r, b.r), mix(a.g, b.g), mix(a.b, b.b)};
}

std::vector<double> nice_ticks(double lo, double hi, int target) {
  std::vector<double> t;
  const double span = hi - lo;
  if (!(span > 0) || !std::isfinite(span)) return {lo};
  const double mag = std::pow(10.0, std::floor(std::log10(span / target)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (std::abs(span / (m * mag) - target) < std::abs(span / step - target)) step = m * mag;
  for (double v = std::ceil(lo / step - 1e-9) * step; v <= hi + 1e-9 * span; v += step)
    t.push_back(std::abs(v) < 1e-9 * step ? 0.0 : v);
  return t;
}

std::string tick_label(double v) { return fmt::format("{:.4g}", v); }

std::array<int, 2> plane_axes(int axis) {
  return axis == 2 ? std::array<int, 2>{0, 1} : axis == 1 ? std::array<int, 2>{0, 2} : std::array<int, 2>{1, 2};
}

int SliceView::width() const { return grid->n[plane_axes(axis)[0]] * cell_w; }
int SliceView::height() const { return grid->n[plane_axes(axis)[1]] * cell_h; }

void draw_slice(Image& img, int x0, int y0, const SliceView& s) {
  const tissue::Grid& g = *s.grid;
  const auto [u, v] = plane_axes(s.axis);
  const int nu = g.n[u], nv = g.n[v];
  const double span = s.vmax - s.vmin;
  for (int b = 0; b < nv; ++b)
    for (int a = 0; a < nu; ++a) {
      std::array<int, 3> ijk{};
      ijk[u] = a;
      ijk[v] = b;
      ijk[s.axis] = s.layer;
      const std::size_t c = g.index(ijk[0], ijk[1], ijk[2]);
      const float x = (*s.field)[c];
      const Rgb col = !tissue::is_tissue(s.mask, c) ? non_tissue_grey
                      : std::isnan(x)               ? nan_grey
                                                    : viridis(span > 0 ? (x - s.vmin) / span : 0.5);
      const int px = x0 + a * s.cell_w, py = y0 + (nv - 1 - b) * s.cell_h;
      img.fill(px, py, px + s.cell_w, py + s.cell_h, col);
    }
}

int ColourBar::label_gap() { return text_height() + 4; }

int ColourBar::width() const {
  int w = 0;
  for (double t : nice_ticks(vmin, vmax)) w = std::max(w, text_width(tick_label(t)));
  return std::max(bar_w + tick_len + 2 + w, text_width(label));
}

void draw_colour_bar(Image& img, int x0, int y0, const ColourBar& b) {
  for (int y = 0; y < b.bar_h; ++y) img.fill(x0, y0 + y, x0 + b.bar_w, y0 + y + 1, viridis(1.0 - (y + 0.5) / b.bar_h));
  draw_text(img, x0, y0 - ColourBar::label_gap(), b.label);
  const double span = b.vmax - b.vmin;
  for (double t : nice_ticks(b.vmin, b.vmax)) {
    const int y = y0 + int(std::lround((span > 0 ? 1.0 - (t - b.vmin) / span : 0.5) * (b.bar_h - 1)));
    img.fill(x0 + b.bar_w, y, x0 + b.bar_w + tick_len, y + 1, ink);
    draw_text(img, x0 + b.bar_w + tick_len + 2, y - text_height() / 2, tick_label(t));
  }
}

double ScaleBar::mm() const { return round_down_125(std::max(1, max_px) / px_per_mm); }
int ScaleBar::length_px() const { return std::max(1, int(std::lround(mm() * px_per_mm))); }
int ScaleBar::width() const { return length_px() + 6 + text_width(tick_label(mm()) + " mm"); }
int ScaleBar::height() { return text_height(); }

void draw_scale_bar(Image& img, int x0, int y0, const ScaleBar& s) {
  const int mid = y0 + text_height() / 2;
  img.fill(x0, mid - 2, x0 + s.length_px(), mid + 2, ink);
  img.fill(x0, mid - 5, x0 + 1, mid + 5, ink);  // end stops
  img.fill(x0 + s.length_px() - 1, mid - 5, x0 + s.length_px(), mid + 5, ink);
  draw_text(img, x0 + s.length_px() + 6, y0, tick_label(s.mm()) + " mm");
}

int MmAxes::left_margin() const {
  int w = 0;
  for (double t : nice_ticks(v0, v1, 4)) w = std::max(w, text_width(tick_label(t)));
  return text_height() + 4 + w + tick_len + 2;
}
int MmAxes::bottom_margin() { return tick_len + 2 + 2 * text_height() + 2; }

void draw_mm_axes(Image& img, int x0, int y0, int w, int h, const MmAxes& a) {
  // Frame.
  img.fill(x0 - 1, y0 - 1, x0 + w + 1, y0, ink);
  img.fill(x0 - 1, y0 + h, x0 + w + 1, y0 + h + 1, ink);
  img.fill(x0 - 1, y0, x0, y0 + h, ink);
  img.fill(x0 + w, y0, x0 + w + 1, y0 + h, ink);
  for (double t : nice_ticks(a.u0, a.u1, 4)) {
    const int x = x0 + int(std::lround((t - a.u0) / (a.u1 - a.u0) * w));
    img.fill(x, y0 + h, x + 1, y0 + h + tick_len, ink);
    const std::string s = tick_label(t);
    draw_text(img, x - text_width(s) / 2, y0 + h + tick_len + 2, s);
  }
  draw_text(img, x0 + (w - text_width(a.u_name)) / 2, y0 + h + tick_len + 2 + text_height() + 2, a.u_name);
  for (double t : nice_ticks(a.v0, a.v1, 4)) {
    const int y = y0 + h - int(std::lround((t - a.v0) / (a.v1 - a.v0) * h));
    img.fill(x0 - tick_len, y, x0, y + 1, ink);
    const std::string s = tick_label(t);
    draw_text(img, x0 - tick_len - 2 - text_width(s), y - text_height() / 2, s);
  }
  draw_text_up(img, x0 - a.left_margin(), y0 + (h - text_width(a.v_name)) / 2, a.v_name);
}

}  // namespace hw::io
