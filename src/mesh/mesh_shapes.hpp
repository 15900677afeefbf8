// An ellipsoidal left ventricle as a tetrahedral mesh with rule-based fibres and
// endo/M/epi tags: a mesh whose fibres and layers are known exactly, for tests, examples
// and `heartwave mesh ellipsoid`.
//
// Why built here rather than read: round trips through every writer and reader, and the
// voxeliser's fibres, need a reference that no file format shares.
#pragma once

#include "formats/unstructured_mesh.hpp"

namespace hw::tissue {

struct EllipsoidLvSpec {
  double inner[3] = {6, 6, 16};     // cavity semi-axes, mm (x, y, long axis z)
  double outer[3] = {10, 10, 20};   // epicardium semi-axes, mm
  double apex_hole_deg = 15;        // the polar cap left open at the apex (no pole singularity)
  int layers = 3, rings = 8, sectors = 16;  // elements through the wall, apex→base, around
  double helix_endo = 60, helix_epi = -60;   // fibre helix angle, degrees, linear in the wall
};

// Truncated at the base plane z = 0, apex towards −z, coordinates in mm. The structured
// (wall, ring, sector) hexahedra are split into 6 tetrahedra each (Kuhn), so the mesh is
// conforming; tags 1 (endo third), 2 (M), 3 (epi third) by the element centre's wall depth;
// fibres per element and per point: f = cos α ĉ + sin α l̂ (ĉ circumferential, l̂ towards
// the base along the wall), α from helix_endo to helix_epi through the wall.
io::UnstructuredMesh ellipsoid_lv_mesh(const EllipsoidLvSpec& s = {});

// The rule above at wall depth t (0 endo … 1 epi), polar angle θ and azimuth φ (radians).
std::array<double, 3> ellipsoid_lv_fibre(const EllipsoidLvSpec& s, double t, double theta, double phi);

}  // namespace hw::tissue
