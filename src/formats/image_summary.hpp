// What is in a geometry image, for a person: sizes, spacing, origin, bounding box, and per
// label value its voxel count and extent — so a user finds the apex or the LV endocardium
// of a heart without reading the NRRD with numpy (`heartwave geometry inspect`), and the
// same per-value extents for `heartwave run --check`'s summary of a case's geometry.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "formats/nrrd.hpp"

namespace hw::io {

// The voxels holding one value: how many, and the index box they span (inclusive).
struct ValueExtent {
  long long value = 0;
  std::size_t count = 0;
  std::array<int, 3> lo{0, 0, 0}, hi{0, 0, 0};
};

// Per distinct value of value_at(i) over a sizes[0]×sizes[1]×sizes[2] grid (x fastest),
// ascending by value; values for which keep(v) is false are skipped. Stops collecting new
// values beyond max_values (too_many set): a float image is not a label map.
std::vector<ValueExtent> value_extents(const std::array<int, 3>& sizes,
                                       const std::function<long long(std::size_t)>& value_at,
                                       const std::function<bool(long long)>& keep, std::size_t max_values,
                                       bool* too_many);

struct ImageSummary {
  std::string source;
  std::array<int, 3> sizes{1, 1, 1};
  std::array<double, 3> spacing{1, 1, 1}, origin{0, 0, 0};
  int components = 1;
  ScalarType type = ScalarType::u8;
  double min = 0, max = 0;
  // Integer scalar images with at most 256 distinct values: every value (0 included).
  std::vector<ValueExtent> labels;
  bool label_map = false;
  std::size_t nonzero = 0;        // voxels with a value > 0 (the tissue of a 0/1 mask)
  std::size_t above_half = 0;     // voxels with value/full scale > 0.5 (a phase field's tissue)
};

ImageSummary summarize_image(const ImageVolume& img);

// Lines for humans: the header, the bounding box in mm (voxel centres, from the origin, and
// the outer faces), and a table of labels with counts and extents in voxels and mm.
std::vector<std::string> describe_image(const ImageSummary& s);

// The centre of voxel `index` on `axis` in mm: origin + index·spacing (NRRD and VTK put
// the origin at the centre of voxel 0).
double voxel_centre_mm(const ImageSummary& s, int axis, int index);

}  // namespace hw::io
