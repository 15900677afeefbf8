#include "live/view.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

namespace hw::live {

namespace {

// The stride that keeps a w × h panel within `budget` samples.
int stride_for(int w, int h, std::size_t budget) {
  int s = 1;
  while (std::size_t((w + s - 1) / s) * std::size_t((h + s - 1) / s) > budget) ++s;
  return s;
}

Panel panel(const tissue::Grid& g, const char* name, int u, int v, int normal, int index, std::size_t budget) {
  Panel p;
  p.name = name;
  p.u_axis = u;
  p.v_axis = v;
  p.normal = normal;
  p.index = index;
  p.stride = stride_for(g.n[std::size_t(u)], g.n[std::size_t(v)], budget);
  p.width = (g.n[std::size_t(u)] + p.stride - 1) / p.stride;
  p.height = (g.n[std::size_t(v)] + p.stride - 1) / p.stride;
  return p;
}

}  // namespace

ViewLayout make_layout(const tissue::Grid& g, std::array<int, 3> centre) {
  for (int d = 0; d < 3; ++d) {
    int& c = centre[std::size_t(d)];
    if (c < 0 || c >= g.n[std::size_t(d)]) c = g.n[std::size_t(d)] / 2;
  }
  ViewLayout l;
  if (g.n[2] == 1) {
    l.panels.push_back(panel(g, "xy", 0, 1, 2, 0, kMaxSamples));
  } else {
    const std::size_t each = (kMaxSamples - kMaxVolumeSamples) / 3;
    l.panels.push_back(panel(g, "xy", 0, 1, 2, centre[2], each));
    l.panels.push_back(panel(g, "xz", 0, 2, 1, centre[1], each));
    l.panels.push_back(panel(g, "yz", 1, 2, 0, centre[0], each));
  }
  for (const Panel& p : l.panels)
    for (int y = 0; y < p.height; ++y)
      for (int x = 0; x < p.width; ++x) {
        std::array<int, 3> ijk{0, 0, 0};
        ijk[std::size_t(p.normal)] = p.index;
        // The centre cell of each stride × stride block.
        ijk[std::size_t(p.u_axis)] = std::min(x * p.stride + p.stride / 2, g.n[std::size_t(p.u_axis)] - 1);
        ijk[std::size_t(p.v_axis)] = std::min(y * p.stride + p.stride / 2, g.n[std::size_t(p.v_axis)] - 1);
        l.cells.push_back(g.index(ijk[0], ijk[1], ijk[2]));
      }
  if (g.n[2] > 1) {
    // The volume: the block centres of stride³ blocks, x fastest.
    Panel v;
    v.name = "volume";
    v.volume = true;
    const auto count = [&](int s) {
      std::size_t c = 1;
      for (int d = 0; d < 3; ++d) c *= std::size_t((g.n[std::size_t(d)] + s - 1) / s);
      return c;
    };
    while (count(v.stride) > kMaxVolumeSamples) ++v.stride;
    v.width = (g.n[0] + v.stride - 1) / v.stride;
    v.height = (g.n[1] + v.stride - 1) / v.stride;
    v.depth = (g.n[2] + v.stride - 1) / v.stride;
    const auto at = [&](int x, int d) { return std::min(x * v.stride + v.stride / 2, g.n[std::size_t(d)] - 1); };
    for (int z = 0; z < v.depth; ++z)
      for (int y = 0; y < v.height; ++y)
        for (int x = 0; x < v.width; ++x) l.cells.push_back(g.index(at(x, 0), at(y, 1), at(z, 2)));
    l.panels.push_back(v);
  }
  return l;
}

std::string layout_json(const ViewLayout& l) {
  std::string s = "[";
  for (std::size_t q = 0; q < l.panels.size(); ++q) {
    const Panel& p = l.panels[q];
    s += fmt::format("{}{{\"name\":\"{}\",\"u\":{},\"v\":{},\"normal\":{},\"index\":{},\"stride\":{},\"width\":{},"
                     "\"height\":{},\"depth\":{},\"volume\":{}}}",
                     q ? "," : "", p.name, p.u_axis, p.v_axis, p.normal, p.index, p.stride, p.width, p.height, p.depth,
                     p.volume ? "true" : "false");
  }
  return s + "]";
}

std::string encode_frame(const std::string& header, const std::vector<float>& values, const std::vector<float>& act) {
  const std::size_t pad = (4 - (8 + header.size()) % 4) % 4;
  std::string out;
  out.reserve(8 + header.size() + pad + 4 * (values.size() + act.size()));
  out += "HWF1";
  const std::uint32_t n = std::uint32_t(header.size() + pad);
  for (int b = 0; b < 4; ++b) out += char((n >> (8 * b)) & 0xff);
  out += header;
  out.append(pad, ' ');  // JSON allows trailing spaces
  const std::size_t at = out.size();
  out.resize(at + 4 * (values.size() + act.size()));
  std::memcpy(out.data() + at, values.data(), 4 * values.size());
  if (!act.empty()) std::memcpy(out.data() + at + 4 * values.size(), act.data(), 4 * act.size());
  return out;
}

}  // namespace hw::live
