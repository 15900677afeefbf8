// An RGB raster and the drawing every picture of a run shares: pixels, filled boxes, lines
// with a width, and blending (the anti-aliased text of outputs/font.hpp).
//
// Why our own: the pictures are a handful of axes, lines and labels; a drawing library would
// be a dependency for that. Coordinates are pixels, x right, y down, (0, 0) the top-left.
#pragma once

#include <cstdint>
#include <vector>

namespace hw::io {

struct Rgb {
  std::uint8_t r = 0, g = 0, b = 0;
  bool operator==(const Rgb&) const = default;
};

struct Image {
  int width = 0, height = 0;
  std::vector<std::uint8_t> rgb;  // row-major, top row first, 3 bytes per pixel
  Image() = default;
  Image(int w, int h, Rgb fill = {255, 255, 255});
  Rgb at(int x, int y) const;  // black outside the image
  void set(int x, int y, Rgb c);  // ignored outside the image
  // c over the pixel with coverage alpha (0 … 1).
  void blend(int x, int y, Rgb c, double alpha);
  // The box [x0, x1) × [y0, y1), clipped.
  void fill(int x0, int y0, int x1, int y1, Rgb c);
  // Copies src with its top-left at (x, y), clipped.
  void paste(const Image& src, int x, int y);
};

// A line from (x0, y0) to (x1, y1), `width` pixels wide, anti-aliased (each pixel covered
// by the distance to the segment).
void draw_line(Image& img, double x0, double y0, double x1, double y1, Rgb c, double width = 1.5);

// A light colour between c and white (legends, grid lines): t = 0 is c, 1 is white.
Rgb lighten(Rgb c, double t);

}  // namespace hw::io
