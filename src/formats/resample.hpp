// An image on another voxel size over the same extent: how a heart given at one resolution
// is run at another (geometry.spacing), e.g. the 128³ pig phase field at the 0.25 mm of the
// heart it was made from.
#pragma once

#include <array>

#include "formats/nrrd.hpp"

namespace hw::io {

enum class Resampling {
  trilinear,  // phase fields, fibre vectors: each component interpolated, stored as f32
  nearest,    // masks and labels: the value of the nearest voxel, in the image's own type
};

// The image on voxels of `spacing` mm: round(n·h/spacing) voxels per axis (at least 1), the
// extent and the origin's corner kept, voxel centres mapped back to the source's and
// clamped to its outermost centres. Throws hw::Error when the result exceeds max_voxels.
ImageVolume resample(const ImageVolume& in, const std::array<double, 3>& spacing, Resampling how,
                     std::size_t max_voxels);

}  // namespace hw::io
