// Text in the pictures: printable ASCII in DejaVu Sans Mono, anti-aliased, one size, drawn
// from a table made once by tools/make_font.py (no font library or font file at run time).
//
// Why monospace: widths are known without measuring glyphs, so labels line up in legends
// and tick columns. Characters outside ' '..'~' are drawn as '?'; "µ" and "×" are mapped
// to 'u' and 'x' so unit labels read sensibly.
#pragma once

#include <string>

#include "outputs/image.hpp"

namespace hw::io {

// Size of the text in pixels (one line).
int text_width(const std::string& s);
int text_height();

// Draws s with its top-left at (x, y).
void draw_text(Image& img, int x, int y, const std::string& s, Rgb colour = {0, 0, 0});
// Draws s turned a quarter to the left (reading upwards), its bounding box's top-left at
// (x, y): a y-axis label. The box is text_height() wide and text_width(s) tall.
void draw_text_up(Image& img, int x, int y, const std::string& s, Rgb colour = {0, 0, 0});

}  // namespace hw::io
