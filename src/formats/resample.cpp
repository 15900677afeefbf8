// See resample.hpp.
#include "formats/resample.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/error.hpp"

namespace hw::io {

ImageVolume resample(const ImageVolume& in, const std::array<double, 3>& spacing, Resampling how,
                     std::size_t max_voxels) {
  ImageVolume out;
  out.components = in.components;
  out.source = in.source;
  double voxels = 1;
  for (int a = 0; a < 3; ++a) {
    const double extent = in.sizes[a] * in.spacing[a];
    out.sizes[a] = std::max(1, static_cast<int>(std::lround(extent / spacing[a])));
    out.spacing[a] = spacing[a];
    // The corner of voxel 0 stays where it was.
    out.origin[a] = in.origin[a] - 0.5 * in.spacing[a] + 0.5 * spacing[a];
    voxels *= out.sizes[a];
  }
  if (voxels > double(max_voxels))
    throw Error(fmt::format("resampling '{}' to {}×{}×{} mm gives {}×{}×{} voxels, more than the {} a grid may have; "
                            "choose a larger spacing", in.source, spacing[0], spacing[1], spacing[2],
                            out.sizes[0], out.sizes[1], out.sizes[2], max_voxels));
  const std::size_t n = out.voxels(), nc = std::size_t(in.components);
  std::vector<double> v(n * nc);
  // Per axis: for each output index, the two source indices and the weight of the second.
  struct Tap {
    int i0, i1;
    double w;
  };
  std::array<std::vector<Tap>, 3> taps;
  for (int a = 0; a < 3; ++a) {
    taps[a].resize(std::size_t(out.sizes[a]));
    const int last = in.sizes[a] - 1;
    for (int i = 0; i < out.sizes[a]; ++i) {
      const double u = std::clamp((i + 0.5) * spacing[a] / in.spacing[a] - 0.5, 0.0, double(last));
      const int i0 = std::min(static_cast<int>(std::floor(u)), last);
      const int i1 = std::min(i0 + 1, last);
      taps[a][std::size_t(i)] = how == Resampling::nearest
                                    ? Tap{static_cast<int>(std::lround(u)), static_cast<int>(std::lround(u)), 0.0}
                                    : Tap{i0, i1, u - i0};
    }
  }
  const std::size_t sx = 1, sy = std::size_t(in.sizes[0]), sz = sy * std::size_t(in.sizes[1]);
  std::size_t o = 0;
  for (int k = 0; k < out.sizes[2]; ++k)
    for (int j = 0; j < out.sizes[1]; ++j)
      for (int i = 0; i < out.sizes[0]; ++i, ++o) {
        const Tap& tx = taps[0][std::size_t(i)];
        const Tap& ty = taps[1][std::size_t(j)];
        const Tap& tz = taps[2][std::size_t(k)];
        for (std::size_t c = 0; c < nc; ++c) {
          auto at = [&](int x, int y, int z) {
            return in.value(std::size_t(x) * sx + std::size_t(y) * sy + std::size_t(z) * sz, int(c));
          };
          double r;
          if (how == Resampling::nearest) {
            r = at(tx.i0, ty.i0, tz.i0);
          } else {
            auto lerp = [](double a, double b, double w) { return w == 0 ? a : a + w * (b - a); };
            const double c00 = lerp(at(tx.i0, ty.i0, tz.i0), at(tx.i1, ty.i0, tz.i0), tx.w);
            const double c10 = lerp(at(tx.i0, ty.i1, tz.i0), at(tx.i1, ty.i1, tz.i0), tx.w);
            const double c01 = lerp(at(tx.i0, ty.i0, tz.i1), at(tx.i1, ty.i0, tz.i1), tx.w);
            const double c11 = lerp(at(tx.i0, ty.i1, tz.i1), at(tx.i1, ty.i1, tz.i1), tx.w);
            r = lerp(lerp(c00, c10, ty.w), lerp(c01, c11, ty.w), tz.w);
          }
          v[o * nc + c] = r;
        }
      }
  out.set_values(how == Resampling::nearest ? in.type : ScalarType::f32, v);
  return out;
}

}  // namespace hw::io
