// See image_summary.hpp.
#include "formats/image_summary.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include <fmt/format.h>

namespace hw::io {

std::vector<ValueExtent> value_extents(const std::array<int, 3>& sizes,
                                       const std::function<long long(std::size_t)>& value_at,
                                       const std::function<bool(long long)>& keep, std::size_t max_values,
                                       bool* too_many) {
  std::map<long long, ValueExtent> by_value;
  if (too_many) *too_many = false;
  std::size_t n = 0;
  for (int k = 0; k < sizes[2]; ++k)
    for (int j = 0; j < sizes[1]; ++j)
      for (int i = 0; i < sizes[0]; ++i, ++n) {
        const long long v = value_at(n);
        if (keep && !keep(v)) continue;
        auto it = by_value.find(v);
        if (it == by_value.end()) {
          if (by_value.size() >= max_values) {
            if (too_many) *too_many = true;
            continue;
          }
          it = by_value.emplace(v, ValueExtent{v, 0, {i, j, k}, {i, j, k}}).first;
        }
        ValueExtent& e = it->second;
        ++e.count;
        const std::array<int, 3> at{i, j, k};
        for (int a = 0; a < 3; ++a) e.lo[a] = std::min(e.lo[a], at[a]), e.hi[a] = std::max(e.hi[a], at[a]);
      }
  std::vector<ValueExtent> out;
  for (auto& [v, e] : by_value) out.push_back(e);
  return out;
}

namespace {

// The value that means 1 in an integer image (uint8: 255), as the geometry reads a phase
// field; 1 for float images.
double full_scale(ScalarType t) {
  switch (t) {
    case ScalarType::u8: return 255;
    case ScalarType::i8: return 127;
    case ScalarType::u16: return 65535;
    case ScalarType::i16: return 32767;
    case ScalarType::u32: return 4294967295.0;
    case ScalarType::i32: return 2147483647.0;
    default: return 1;
  }
}

}  // namespace

ImageSummary summarize_image(const ImageVolume& img) {
  ImageSummary s;
  s.source = img.source;
  s.sizes = img.sizes;
  s.spacing = img.spacing;
  s.origin = img.origin;
  s.components = img.components;
  s.type = img.type;
  s.min = std::numeric_limits<double>::infinity();
  s.max = -s.min;
  const std::size_t n = img.voxels();
  // Integer images scale to 0…1 by their full scale (uint8: /255), as the readers of a phase
  // field do; float images are taken as stored.
  const double full = full_scale(img.type);
  for (std::size_t i = 0; i < n; ++i) {
    double v = 0;
    for (int c = 0; c < img.components; ++c) v += img.value(i, c) * img.value(i, c);
    v = img.components == 1 ? img.value(i) : std::sqrt(v);
    s.min = std::min(s.min, v), s.max = std::max(s.max, v);
    if (v > 0) ++s.nonzero;
    if (v / full > 0.5) ++s.above_half;
  }
  if (n == 0) s.min = s.max = 0;
  if (img.components == 1 && is_integer(img.type)) {
    bool too_many = false;
    s.labels = value_extents(
        img.sizes, [&](std::size_t i) { return static_cast<long long>(img.value(i)); }, {}, 256, &too_many);
    s.label_map = !too_many;
    if (too_many) s.labels.clear();
  }
  return s;
}

double voxel_centre_mm(const ImageSummary& s, int axis, int index) { return s.origin[axis] + index * s.spacing[axis]; }

std::vector<std::string> describe_image(const ImageSummary& s) {
  std::vector<std::string> l;
  const auto& n = s.sizes;
  const std::size_t voxels = std::size_t(n[0]) * n[1] * n[2];
  l.push_back(fmt::format("image     {}", s.source));
  l.push_back(fmt::format("  dims    {} × {} × {} = {} voxels, {}{}", n[0], n[1], n[2], voxels, scalar_name(s.type),
                          s.components == 1 ? "" : fmt::format(", {} components (a vector image)", s.components)));
  l.push_back(fmt::format("  spacing {:g} × {:g} × {:g} mm", s.spacing[0], s.spacing[1], s.spacing[2]));
  l.push_back(fmt::format("  origin  ({:g}, {:g}, {:g}) mm (the centre of voxel 0)", s.origin[0], s.origin[1], s.origin[2]));
  const auto box = [&](const std::array<int, 3>& lo, const std::array<int, 3>& hi) {
    return fmt::format("x {:g}…{:g}, y {:g}…{:g}, z {:g}…{:g} mm", voxel_centre_mm(s, 0, lo[0]), voxel_centre_mm(s, 0, hi[0]),
                       voxel_centre_mm(s, 1, lo[1]), voxel_centre_mm(s, 1, hi[1]), voxel_centre_mm(s, 2, lo[2]),
                       voxel_centre_mm(s, 2, hi[2]));
  };
  l.push_back(fmt::format("  bounds  {} (voxel centres); the outer faces lie half a voxel beyond",
                          box({0, 0, 0}, {n[0] - 1, n[1] - 1, n[2] - 1})));
  l.push_back(fmt::format("  extent  {:g} × {:g} × {:g} mm; as a case grid (from the corner, origin not used): "
                          "voxel i is at (i + 0.5)·spacing",
                          n[0] * s.spacing[0], n[1] * s.spacing[1], n[2] * s.spacing[2]));
  l.push_back(fmt::format("  values  {:g} … {:g}; {} voxels > 0 (a mask's tissue), {} above half of full scale "
                          "(a phase field's tissue at threshold 0.5)",
                          s.min, s.max, s.nonzero, s.above_half));
  if (!s.label_map) {
    if (s.components == 1 && is_integer(s.type)) l.push_back("  labels  more than 256 distinct values: not a label map");
    return l;
  }
  std::size_t tissue = 0;
  for (const auto& e : s.labels)
    if (e.value != 0) tissue += e.count;
  l.push_back(fmt::format("  tissue  {} voxels of a label ≠ 0 ({:.1f}% of the image)", tissue,
                          voxels ? 100.0 * double(tissue) / double(voxels) : 0.0));
  // Per label: its index box, then its extent where a case file would name it (mm from
  // the grid corner, cell faces: what a box region's lo/hi take) and in the image's frame.
  l.push_back("  label      voxels  index box (i, j, k)");
  for (const auto& e : s.labels) {
    l.push_back(fmt::format("  {:>5} {:>11}  [{}..{}, {}..{}, {}..{}]", e.value, e.count, e.lo[0], e.hi[0], e.lo[1],
                            e.hi[1], e.lo[2], e.hi[2]));
    l.push_back(fmt::format("                     case  x {:g}…{:g}, y {:g}…{:g}, z {:g}…{:g} mm (faces, from the grid corner)",
                            e.lo[0] * s.spacing[0], (e.hi[0] + 1) * s.spacing[0], e.lo[1] * s.spacing[1],
                            (e.hi[1] + 1) * s.spacing[1], e.lo[2] * s.spacing[2], (e.hi[2] + 1) * s.spacing[2]));
    l.push_back("                     image " + box(e.lo, e.hi) + " (voxel centres)");
  }
  return l;
}

}  // namespace hw::io
