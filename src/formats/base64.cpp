// Base64 encode/decode; see base64.hpp.
#include "formats/base64.hpp"

#include <array>
#include <cstddef>

#include "core/error.hpp"
#include "parallel/team.hpp"

namespace hw::io {
namespace {
constexpr char alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
// Below this many triples (about 1.5 MB) one thread encodes: starting a team costs more.
constexpr std::ptrdiff_t kParallelTriples = 1 << 19;
}

void base64_encode(const void* data, std::size_t size, std::string& out) {
  const auto* p = static_cast<const unsigned char*>(data);
  const std::size_t at = out.size();
  out.resize(at + base64_block_length(size));
  char* o = out.data() + at;
  // Three bytes b0 b1 b2 → four 6-bit digits. Each triple has its own place in the output,
  // so a large array (a 256³ float field is 64 MB) is encoded on every core of the team.
  const auto triples = std::ptrdiff_t(size / 3);
#pragma omp parallel for schedule(static) num_threads(par::team()) if (triples >= kParallelTriples)
  for (std::ptrdiff_t t = 0; t < triples; ++t) {
    const unsigned char* b = p + 3 * t;
    const unsigned v = (unsigned(b[0]) << 16) | (unsigned(b[1]) << 8) | b[2];
    char* d = o + 4 * t;
    d[0] = alphabet[(v >> 18) & 63];
    d[1] = alphabet[(v >> 12) & 63];
    d[2] = alphabet[(v >> 6) & 63];
    d[3] = alphabet[v & 63];
  }
  const std::size_t i = 3 * std::size_t(triples);
  if (const std::size_t rest = size - i; rest > 0) {
    unsigned v = unsigned(p[i]) << 16;
    if (rest == 2) v |= unsigned(p[i + 1]) << 8;
    char* d = o + 4 * std::size_t(triples);
    d[0] = alphabet[(v >> 18) & 63];
    d[1] = alphabet[(v >> 12) & 63];
    d[2] = rest == 2 ? alphabet[(v >> 6) & 63] : '=';
    d[3] = '=';
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
