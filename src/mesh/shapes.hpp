// Analytic tissue shapes on a case grid (ellipsoid shell, slab with a cylindrical hole),
// and the surface labels shared with labelled image files.
//
// Why analytic shapes: they give irregular no-flux boundaries whose volume and surfaces
// are known exactly, so masks, phase fields and rule-based fibres can be tested against
// closed-form answers before they meet a real heart.
#pragma once

#include <array>
#include <cstdint>

#include "mesh/grid.hpp"

namespace hw::tissue {

// Label values, the same as the UCSD rabbit volumes in shared/geometry: myocardium
// voxels touching (6-adjacent) the outside carry the surface they belong to.
inline constexpr std::int16_t label_outside = 0;
inline constexpr std::int16_t label_myocardium = 1;
inline constexpr std::int16_t label_epi = 2;
inline constexpr std::int16_t label_lv_endo = 3;
inline constexpr std::int16_t label_rv_endo = 4;

struct ShapeVolume {
  Mask mask;                    // 1 = tissue
  Field<std::int16_t> labels;   // label_* values above
};

// Tissue between two concentric axis-aligned ellipsoids: cells whose centre x satisfies
// Σ((x−c)/r_out)² ≤ 1 and Σ((x−c)/r_in)² > 1 (mm, domain from 0). Tissue cells with a
// face neighbour (or the grid wall) outside the outer ellipsoid are label_epi, those with
// a face neighbour inside the inner one label_lv_endo, the rest label_myocardium
// (a cell touching both is epi). Any inner radius 0 gives a solid ellipsoid (no endo).
ShapeVolume ellipsoid_shell(const Grid& g, std::array<double, 3> centre,
                            std::array<double, 3> radii_outer, std::array<double, 3> radii_inner);

// The whole grid minus a cylinder along z of radius r through `centre` (x, y used): a
// slab with a hole, the classic anchor for a re-entry. Cells on the hole's surface are
// label_lv_endo (an "inner" surface), the rest label_myocardium.
ShapeVolume slab_with_hole(const Grid& g, std::array<double, 3> centre, double hole_radius);

// Labels tissue cells 6-adjacent to a non-tissue cell as `surface` (others as
// label_myocardium); grid walls count as outside when walls_are_outside. For masks with no
// surface information.
Field<std::int16_t> label_surface(const Grid& g, const Mask& m, std::int16_t surface,
                                  bool walls_are_outside);

}  // namespace hw::tissue
