// Endocardial and epicardial surfaces found from the shape of a heart that has none
// labelled: a tissue mask (a phase field's φ > threshold, a plain mask image) gives the
// labels the rule-based fibres and the ventricular coordinates need.
//
// Why slices: the cavities of a ventricular mesh are open at the base (the valve planes are
// cut away), so a 3D flood fill from the box walls runs into them and finds no cavity. In a
// slice across the long axis below the base, a cavity is a hole ringed by tissue. The
// slices are taken across each grid axis in turn; the axis whose slices enclose the most
// non-tissue cells is the one across the ventricles. The holes are joined in 3D into
// connected cavities; the two largest (a second one only when it is at least a tenth of
// the first) are the ventricles: the left one is the cavity whose wall is thicker (the
// median distance from its endocardial cells to the outside), the other the right. The
// base is the end of the LV cavity that opens to the outside; the apex the end tissue caps.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "mesh/grid.hpp"

namespace hw::tissue {

struct FoundSurfaces {
  // label_* of shapes.hpp on every cell: tissue cells 6-adjacent to a cavity are
  // label_lv_endo / label_rv_endo, those 6-adjacent to other non-tissue cells (or to the
  // grid's wall) label_epi, other tissue label_myocardium; non-tissue label_outside.
  Field<std::int16_t> labels;
  int slice_axis = 2;                        // the axis the slices were taken across
  std::size_t cavity_cells[2] = {0, 0};      // LV, RV (0: no second cavity)
  double wall_mm[2] = {0, 0};                // median wall thickness around each, mm
  std::size_t endo_cells[2] = {0, 0}, epi_cells = 0;
  // The base: the end of the slice axis (+1 or −1) where the LV cavity opens to the outside
  // (its end slice's cells look onto non-tissue beyond), not capped by tissue as at the apex.
  int base_side = +1;
  std::size_t open_cells[2] = {0, 0};        // end-slice cavity cells looking out: low, high end
  std::array<double, 3> base_towards() const;  // unit vector along the slice axis
  // The LV cavity's centre line, apex → base: a least-squares line through the centroids
  // of its slices (weighted by their cells). An oval cavity biases the principal axis of
  // its cells (the pig's by 25°); the line through the centroids follows the cavity.
  std::array<double, 3> centre_line{0, 0, 1};
  std::string base_reason() const;             // how the base was told from the apex
  std::string describe() const;              // one line for the run's description
};

// Throws hw::Error when no slice encloses a cavity (the mask is not a ventricle: use a
// labelled mask or fibres of another kind).
FoundSurfaces find_surfaces(const Grid& g, const Mask& mask);

}  // namespace hw::tissue
