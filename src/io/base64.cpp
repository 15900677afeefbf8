// Base64 encode/decode; see base64.hpp.
#include "io/base64.hpp"

#include <array>

#include "core/error.hpp"

namespace hw::io {
namespace {
constexpr char alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
}

void base64_encode(const void* data, std::size_t size, std::string& out) {
  const auto* p = static_cast<const unsigned char*>(data);
  out.reserve(out.size() + base64_block_length(size));
  std::size_t i = 0;
  // Three bytes b0 b1 b2 → four 6-bit digits.
  for (; i + 3 <= size; i += 3) {
    const unsigned v = (unsigned(p[i]) << 16) | (unsigned(p[i + 1]) << 8) | p[i + 2];
    out += alphabet[(v >> 18) & 63];
    out += alphabet[(v >> 12) & 63];
    out += alphabet[(v >> 6) & 63];
    out += alphabet[v & 63];
  }
  if (const std::size_t rest = size - i; rest > 0) {
    unsigned v = unsigned(p[i]) << 16;
    if (rest == 2) v |= unsigned(p[i + 1]) << 8;
    out += alphabet[(v >> 18) & 63];
    out += alphabet[(v >> 12) & 63];
    out += rest == 2 ? alphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
}

std::vector<unsigned char> base64_decode(std::string_view text) {
  std::array<int, 256> value{};
  value.fill(-1);
  for (int k = 0; k < 64; ++k) value[static_cast<unsigned char>(alphabet[k])] = k;
  std::vector<unsigned char> out;
  out.reserve(text.size() / 4 * 3);
  unsigned acc = 0;
  int bits = 0;
  for (char c : text) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (c == '=') break;
    const int d = value[static_cast<unsigned char>(c)];
    if (d < 0) throw Error(std::string("base64: invalid character '") + c + "'");
    acc = (acc << 6) | unsigned(d);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<unsigned char>((acc >> bits) & 0xFF));
    }
  }
  return out;
}

}  // namespace hw::io
