// Line plots of traces; see trace_plot.hpp.
#include "outputs/trace_plot.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <sstream>

#include <fmt/format.h>

#include "core/error.hpp"
#include "outputs/font.hpp"
#include "outputs/picture_parts.hpp"

namespace hw::io {
namespace {

constexpr int margin = 12, tick_len = 4, legend_swatch = 18;
constexpr Rgb grid_grey{225, 225, 225};

// The range of a panel's finite values, widened by 5 % (a flat trace gets ±1).
std::pair<double, double> value_range(const TracePanel& p) {
  double lo = INFINITY, hi = -INFINITY;
  for (const auto& tr : p.traces)
    for (double v : tr.y)
      if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  if (!std::isfinite(lo)) return {0, 1};
  if (hi - lo < 1e-12 * std::max(1.0, std::abs(hi))) return {lo - 1, hi + 1};
  const double pad = 0.05 * (hi - lo);
  return {lo - pad, hi + pad};
}

int y_tick_width(const TracePanel& p) {
  const auto [lo, hi] = value_range(p);
  int w = 0;
  for (double t : nice_ticks(lo, hi, 5)) w = std::max(w, text_width(tick_label(t)));
  return w;
}

int legend_width(const TracePanel& p) {
  int w = 0;
  for (const auto& tr : p.traces) w = std::max(w, text_width(tr.name));
  return legend_swatch + 6 + w;
}

}  // namespace

Rgb trace_colour(std::size_t i) {
  static constexpr std::array<Rgb, 10> tableau{{{31, 119, 180}, {255, 127, 14}, {44, 160, 44}, {214, 39, 40},
                                                {148, 103, 189}, {140, 86, 75}, {227, 119, 194}, {127, 127, 127},
                                                {188, 189, 34}, {23, 190, 207}}};
  return tableau[i % tableau.size()];
}

std::vector<PanelFrame> trace_plot_frames(const TracePlot& p) {
  if (p.panels.empty()) throw Error("trace plot: no panel");
  for (const auto& panel : p.panels)
    for (const auto& tr : panel.traces)
      if (tr.y.size() != p.t.size())
        throw Error(fmt::format("trace plot: trace '{}' has {} values for {} times", tr.name, tr.y.size(), p.t.size()));
  int left = 0, legend = 0;
  for (const auto& panel : p.panels) {
    left = std::max(left, text_height() + 6 + y_tick_width(panel) + tick_len + 2);
    legend = std::max(legend, legend_width(panel));
  }
  const double t0 = p.t.empty() ? 0 : p.t.front(), t1 = p.t.empty() ? 1 : p.t.back();
  const int top = margin + (p.title.empty() ? 0 : text_height() + 8);
  const int panel_gap = tick_len + 2 + text_height() + 14;  // the time ticks' labels under each panel
  std::vector<PanelFrame> frames;
  for (std::size_t i = 0; i < p.panels.size(); ++i) {
    PanelFrame f;
    f.x0 = margin + left;
    f.y0 = top + int(i) * (p.panel_height + panel_gap);
    f.w = std::max(50, p.width - f.x0 - legend - 3 * margin);
    f.h = p.panel_height;
    f.t0 = t0;
    f.t1 = t1 > t0 ? t1 : t0 + 1;
    std::tie(f.v0, f.v1) = value_range(p.panels[i]);
    frames.push_back(f);
  }
  return frames;
}

Image render_trace_plot(const TracePlot& p) {
  const std::vector<PanelFrame> frames = trace_plot_frames(p);
  const PanelFrame& last = frames.back();
  const int height = last.y0 + last.h + tick_len + 2 + 2 * text_height() + 4 + margin;
  Image img(p.width, height);
  if (!p.title.empty()) draw_text(img, margin, margin, p.title);
  for (std::size_t i = 0; i < p.panels.size(); ++i) {
    const TracePanel& panel = p.panels[i];
    const PanelFrame& f = frames[i];
    // Grid lines and ticks first, so the traces lie over them.
    for (double t : nice_ticks(f.t0, f.t1, 8)) {
      const int x = int(std::lround(f.px(t)));
      img.fill(x, f.y0, x + 1, f.y0 + f.h, grid_grey);
      img.fill(x, f.y0 + f.h, x + 1, f.y0 + f.h + tick_len, ink);
      const std::string s = tick_label(t);
      draw_text(img, x - text_width(s) / 2, f.y0 + f.h + tick_len + 2, s);
    }
    int tick_w = 0;
    for (double v : nice_ticks(f.v0, f.v1, 5)) {
      const int y = int(std::lround(f.py(v)));
      img.fill(f.x0, y, f.x0 + f.w, y + 1, grid_grey);
      img.fill(f.x0 - tick_len, y, f.x0, y + 1, ink);
      const std::string s = tick_label(v);
      tick_w = std::max(tick_w, text_width(s));
      draw_text(img, f.x0 - tick_len - 2 - text_width(s), y - text_height() / 2, s);
    }
    draw_text_up(img, f.x0 - tick_len - 6 - tick_w - text_height(), f.y0 + (f.h - text_width(panel.y_label)) / 2,
                 panel.y_label);
    for (std::size_t k = 0; k < panel.traces.size(); ++k) {
      const auto& y = panel.traces[k].y;
      const Rgb c = trace_colour(k);
      for (std::size_t n = 0; n + 1 < y.size(); ++n)
        if (std::isfinite(y[n]) && std::isfinite(y[n + 1]))
          draw_line(img, f.px(p.t[n]), f.py(y[n]), f.px(p.t[n + 1]), f.py(y[n + 1]), c, 1.6);
      if (y.size() == 1 && std::isfinite(y[0]))
        img.fill(int(f.px(p.t[0])) - 2, int(f.py(y[0])) - 2, int(f.px(p.t[0])) + 3, int(f.py(y[0])) + 3, c);
      // Legend: a swatch and the name, right of the panel.
      const int lx = f.x0 + f.w + 2 * margin, ly = f.y0 + int(k) * (text_height() + 4);
      img.fill(lx, ly + text_height() / 2 - 1, lx + legend_swatch, ly + text_height() / 2 + 2, c);
      draw_text(img, lx + legend_swatch + 6, ly, panel.traces[k].name);
    }
    // Frame over everything.
    img.fill(f.x0 - 1, f.y0 - 1, f.x0 + f.w + 1, f.y0, ink);
    img.fill(f.x0 - 1, f.y0 + f.h, f.x0 + f.w + 1, f.y0 + f.h + 1, ink);
    img.fill(f.x0 - 1, f.y0, f.x0, f.y0 + f.h, ink);
    img.fill(f.x0 + f.w, f.y0, f.x0 + f.w + 1, f.y0 + f.h, ink);
  }
  draw_text(img, last.x0 + (last.w - text_width(p.x_label)) / 2, last.y0 + last.h + tick_len + 2 + text_height() + 4,
            p.x_label);
  return img;
}

void parse_trace_csv(const std::string& text, std::vector<std::string>& names, std::vector<double>& t,
                     std::vector<std::vector<double>>& columns) {
  std::istringstream in(text);
  std::string line;
  names.clear();
  t.clear();
  columns.clear();
  if (!std::getline(in, line)) return;
  std::vector<std::string> header;
  {
    std::istringstream h(line);
    std::string cell;
    while (std::getline(h, cell, ',')) header.push_back(cell);
  }
  names.assign(header.begin() + std::min<std::size_t>(1, header.size()), header.end());
  columns.assign(names.size(), {});
  for (int row = 2; std::getline(in, line); ++row) {
    if (line.empty()) continue;
    std::istringstream r(line);
    std::string cell;
    std::vector<double> v;
    while (std::getline(r, cell, ',')) {
      char* end = nullptr;
      const double x = std::strtod(cell.c_str(), &end);
      if (end == cell.c_str() || *end != '\0') throw Error(fmt::format("trace CSV row {}: '{}' is not a number", row, cell));
      v.push_back(x);
    }
    if (v.size() != header.size())
      throw Error(fmt::format("trace CSV row {}: {} values for {} columns", row, v.size(), header.size()));
    t.push_back(v[0]);
    for (std::size_t c = 0; c < names.size(); ++c) columns[c].push_back(v[c + 1]);
  }
}

}  // namespace hw::io
