// The glyph table and the text drawing; see font.hpp.
#include "outputs/font.hpp"

namespace hw::io {
namespace {

#include "outputs/font_glyphs.inc"

int hex(char c) { return c <= '9' ? c - '0' : c - 'a' + 10; }

// Coverage (0 … 1) of pixel (x, y) of the glyph for c.
double coverage(unsigned char c, int x, int y) {
  if (c < 32 || c > 126) c = '?';
  const char* p = glyph_hex[c - 32] + 2 * (y * glyph_w + x);
  return (hex(p[0]) * 16 + hex(p[1])) / 255.0;
}

// The string as single-byte glyphs: UTF-8 µ and × become u and x, other multi-byte
// characters one '?'.
std::string ascii(const std::string& s) {
  std::string o;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = s[i];
    if (c < 0x80) {
      o += char(c);
      continue;
    }
    const std::string two = s.substr(i, 2);
    o += two == "\xC2\xB5" || two == "\xCE\xBC" ? 'u' : two == "\xC3\x97" ? 'x' : '?';
    while (i + 1 < s.size() && (static_cast<unsigned char>(s[i + 1]) & 0xC0) == 0x80) ++i;
  }
  return o;
}

}  // namespace

int text_width(const std::string& s) { return int(ascii(s).size()) * glyph_w; }
int text_height() { return glyph_h; }

void draw_text(Image& img, int x, int y, const std::string& s, Rgb colour) {
  for (char ch : ascii(s)) {
    for (int r = 0; r < glyph_h; ++r)
      for (int q = 0; q < glyph_w; ++q) img.blend(x + q, y + r, colour, coverage(ch, q, r));
    x += glyph_w;
  }
}

void draw_text_up(Image& img, int x, int y, const std::string& s, Rgb colour) {
  const std::string a = ascii(s);
  const int len = int(a.size()) * glyph_w;
  // Glyph pixel (q, r) at offset along the text u = k·w + q goes to (x + r, y + len − 1 − u).
  for (std::size_t k = 0; k < a.size(); ++k)
    for (int r = 0; r < glyph_h; ++r)
      for (int q = 0; q < glyph_w; ++q)
        img.blend(x + r, y + len - 1 - (int(k) * glyph_w + q), colour, coverage(a[k], q, r));
}

}  // namespace hw::io
