// Where a cell lies in the ventricles: through the wall (transmural, 0 at endo, 1 at epi)
// and along the long axis (apex-base, 0 at the apex, 1 at the base), and the long axis
// itself, given by the case or found from the tissue's shape.
//
// Why: transmural layers (endo/M/epi cells, G_Ks gradients) and apical or basal regions
// are how a modeller places heterogeneity in a heart; in a slab they are boxes, in a heart
// they need coordinates that follow the wall. The transmural coordinate is the one the
// rule-based fibres are made from (fibres_rule_based.hpp), so layers and fibres agree.
// docs/geometry.md says how these relate to the universal ventricular coordinates (UVC).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mesh/conductivity.hpp"
#include "mesh/grid.hpp"

namespace hw::tissue {

// The long axis of the ventricles as a unit vector pointing from the apex to the base.
struct LongAxis {
  std::array<double, 3> dir{0, 0, 1};  // unit, apex → base
  double apex = 0, base = 0;           // the tissue's extreme projections on dir (mm, from the grid corner)
  bool given = false;                  // the case named the axis; else found, as below
  std::string found_from;              // found: how ("principal axis of the LV endocardium")
  std::string apex_from;               // what decided which end is the apex (labels or shape)
  std::string describe() const;        // one line for the run's description
};

// The axis `given` (any non-zero vector; nullopt = find it: the principal axis, the
// direction of largest variance, of the centres of the LV endocardial cells (endo_labels[0])
// when there are any, else of all tissue cells), oriented apex → base.
// The apex is the end farther from the endocardial labels (the cavities reach the base,
// not the apex) when there are any, else the end with the smaller tissue cross-section.
// Throws hw::Error when there is no tissue or `given` is zero.
// `base_towards`, when given, decides instead: the base is the end the vector points to
// (surfaces found from the shape know which end of the cavities is open: cavities.hpp).
LongAxis find_long_axis(const Grid& g, const Mask& mask, const Field<std::int16_t>& labels,
                        std::array<std::int16_t, 2> endo_labels,
                        std::optional<std::array<double, 3>> given,
                        std::optional<std::array<double, 3>> base_towards = std::nullopt,
                        const std::string& base_reason = {});

// Per tissue cell, the position along the axis: (x·dir − apex)/(base − apex) ∈ [0, 1];
// 0 off the tissue.
Field<float> apex_base_coordinate(const Grid& g, const Mask& mask, const LongAxis& axis);

// Helix angle (degrees) at transmural coordinate e ∈ [0, 1]: piecewise linear through
// `angles` placed evenly from endo (e = 0, the first) to epi (e = 1, the last). One value
// is a constant angle.
double helix_angle(const std::vector<double>& angles, double e);

}  // namespace hw::tissue
