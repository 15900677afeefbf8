// Fibre fields made by rule: rotation through a slab wall along any axis, and rule-based
// ventricular fibres from labelled endocardial and epicardial surfaces; plus the exact
// Euclidean distance transform they (and the phase field) are built on.
//
// Why rules: none of the shared hearts has measured fibres, yet anisotropy is most of what
// makes ventricular propagation ventricular. The rule (docs/geometry.md) is the common
// "transmural helix angle" model (Streeter 1969; the Bayer et al. 2012 LDRB idea, with
// distances instead of Laplace solutions):
//   e = d_endo / (d_endo + d_epi)           transmural coordinate, 0 at endo, 1 at epi
//   n = ∇e / |∇e|                           transmural direction
//   c = (n × a) / |n × a|                   circumferential direction, a = the long axis
//   α(e) = α_endo + (α_epi − α_endo)·e      helix angle
//   f = cos α · c + sin α · (n × c)         fibre; sheet normal s = n
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "mesh/conductivity.hpp"
#include "mesh/grid.hpp"

namespace hw::tissue {

// Exact Euclidean distance (mm, anisotropic spacing) from each cell centre to the nearest
// centre of a cell with seed[n] != 0, by the separable lower-envelope algorithm
// (Felzenszwalb & Huttenlocher 2012), O(cells). Ignores periodicity. +∞ where there is no
// seed at all.
Field<double> distance_transform(const Grid& g, const Field<std::uint8_t>& seed);

// Fibres perpendicular to `axis`, at angle (degrees) from the next axis (x→y, y→z, z→x
// cyclically: for axis z, from +x towards +y) varying linearly with the cell centre along
// `axis` from angle_lo (first cell) to angle_hi (last cell). Axis 2 equals
// FibreField::rotating_through_z.
FibreField rotating_fibres(const Grid& g, int axis, double angle_lo_deg, double angle_hi_deg);

struct TransmuralField {
  Field<double> e;                       // 0 at endo … 1 at epi, tissue cells only (else 0)
  std::array<Field<double>, 3> normal;   // unit ∇e on tissue cells (else 0)
};

// e and ∇e on the tissue of `mask` from the cells labelled endo (any of endo_labels) and
// epi. Throws hw::Error when either surface is missing.
TransmuralField transmural_coordinate(const Grid& g, const Mask& mask,
                                      const Field<std::int16_t>& labels, std::int16_t epi_label,
                                      std::array<std::int16_t, 2> endo_labels);

// The rule above on every tissue cell (non-tissue cells get the zero vector); the long
// axis is axis `long_axis` (0, 1, 2). The sheet normal is n. Where n is parallel to the
// long axis (the apex) c falls back to the direction of the first other axis projected
// perpendicular to n.
FibreField rule_based_fibres(const Grid& g, const Mask& mask, const TransmuralField& t,
                             double angle_endo_deg, double angle_epi_deg, int long_axis = 2);

// The same rule with any long axis (a non-zero vector; its sign does not matter, a fibre
// is a line) and a helix angle profile through the wall: α(e) piecewise linear through
// `angles_deg` placed evenly from endo (e = 0) to epi (e = 1) (helix_angle in
// ventricular_coordinates.hpp), e.g. {60, -60} or {60, 20, -20, -60}. At the apex, where n
// ∥ a, c is the grid axis least aligned with a, projected ⟂ n.
FibreField rule_based_fibres(const Grid& g, const Mask& mask, const TransmuralField& t,
                             const std::vector<double>& angles_deg, std::array<double, 3> long_axis);

}  // namespace hw::tissue
