// Pixels, boxes and anti-aliased lines; see image.hpp.
#include "outputs/image.hpp"

#include <algorithm>
#include <cmath>

namespace hw::io {

Image::Image(int w, int h, Rgb fill) : width(w), height(h), rgb(std::size_t(w) * h * 3) {
  for (std::size_t p = 0; p < rgb.size(); p += 3) {
    rgb[p] = fill.r;
    rgb[p + 1] = fill.g;
    rgb[p + 2] = fill.b;
  }
}

Rgb Image::at(int x, int y) const {
  if (x < 0 || y < 0 || x >= width || y >= height) return {};
  const std::size_t p = (std::size_t(y) * width + x) * 3;
  return {rgb[p], rgb[p + 1], rgb[p + 2]};
}

void Image::set(int x, int y, Rgb c) {
  if (x < 0 || y < 0 || x >= width || y >= height) return;
  const std::size_t p = (std::size_t(y) * width + x) * 3;
  rgb[p] = c.r;
  rgb[p + 1] = c.g;
  rgb[p + 2] = c.b;
}

void Image::blend(int x, int y, Rgb c, double alpha) {
  if (x < 0 || y < 0 || x >= width || y >= height || !(alpha > 0)) return;
  alpha = std::min(alpha, 1.0);
  const std::size_t p = (std::size_t(y) * width + x) * 3;
  auto mix = [alpha](std::uint8_t under, std::uint8_t over) {
    return static_cast<std::uint8_t>(std::lround(under + (over - under) * alpha));
  };
  rgb[p] = mix(rgb[p], c.r);
  rgb[p + 1] = mix(rgb[p + 1], c.g);
  rgb[p + 2] = mix(rgb[p + 2], c.b);
}

void Image::fill(int x0, int y0, int x1, int y1, Rgb c) {
  for (int y = std::max(0, y0); y < std::min(height, y1); ++y)
    for (int x = std::max(0, x0); x < std::min(width, x1); ++x) set(x, y, c);
}

void Image::paste(const Image& src, int x, int y) {
  for (int r = 0; r < src.height; ++r)
    for (int q = 0; q < src.width; ++q) set(x + q, y + r, src.at(q, r));
}

void draw_line(Image& img, double x0, double y0, double x1, double y1, Rgb c, double width) {
  const double half = width / 2;
  const int xa = int(std::floor(std::min(x0, x1) - half - 1)), xb = int(std::ceil(std::max(x0, x1) + half + 1));
  const int ya = int(std::floor(std::min(y0, y1) - half - 1)), yb = int(std::ceil(std::max(y0, y1) + half + 1));
  const double dx = x1 - x0, dy = y1 - y0, len2 = dx * dx + dy * dy;
  for (int y = std::max(0, ya); y <= std::min(img.height - 1, yb); ++y)
    for (int x = std::max(0, xa); x <= std::min(img.width - 1, xb); ++x) {
      // Pixel centre's distance to the segment; coverage falls off over one pixel.
      const double px = x + 0.5, py = y + 0.5;
      double t = len2 > 0 ? ((px - x0) * dx + (py - y0) * dy) / len2 : 0;
      t = std::clamp(t, 0.0, 1.0);
      const double ex = px - (x0 + t * dx), ey = py - (y0 + t * dy);
      const double d = std::sqrt(ex * ex + ey * ey);
      const double cover = std::clamp(half + 0.5 - d, 0.0, 1.0);
      if (cover > 0) img.blend(x, y, c, cover);
    }
}

Rgb lighten(Rgb c, double t) {
  auto f = [t](int v) { return static_cast<std::uint8_t>(std::lround(v + (255 - v) * t)); };
  return {f(c.r), f(c.g), f(c.b)};
}

}  // namespace hw::io
