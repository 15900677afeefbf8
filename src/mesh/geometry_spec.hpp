// What a case says about where the tissue is and which way its fibres run: the part of a
// case (tissue/case.hpp) that the mesh floor reads to build a Geometry.
//
// Why a floor of its own: the geometry is built from these specs alone, so the readers of
// images and shapes below the tissue engines need not know about models, stimuli or
// outputs; TissueCase extends MeshSpec with the rest.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "mesh/grid.hpp"

namespace hw::tissue {

// Where the tissue is and which way the fibres run.
struct GeometrySpec {
  enum class Kind { box, mask_file, phase_field_file, ellipsoid_shell, slab_with_hole, mesh };
  Kind kind = Kind::box;
  std::string path;          // NRRD or VTK image (.vti / legacy .vtk), or a mesh (kind mesh)
  double threshold = 0.5;    // phase field / mask: tissue where value > threshold
  std::array<double, 3> centre{0, 0, 0}, radii_outer{0, 0, 0}, radii_inner{0, 0, 0};
  double hole_radius = 0;    // slab_with_hole: cylinder along z through the centre
  bool phase_field = false;  // no-flux boundaries by the phase-field method (Fenton 2005)
  // mask / phase field: resample the image to this voxel size (mm per axis, same extent),
  // trilinear in the stored value (labels: nearest voxel); 0 = the image's own grid.
  // mesh: the voxel size (required, from `spacing`), the mesh's length unit ("um", "mm",
  // "cm", "m"; empty = the format's: µm for openCARP, mm otherwise) and the element tag →
  // region label map (empty: each tag is its label; label 0 leaves those elements out).
  std::array<double, 3> spacing{0, 0, 0};
  std::string units;
  std::map<std::int32_t, std::int32_t> tags;
  SourceLoc loc;
};

struct FibreSpec {
  enum class Kind { none, uniform, rotating, file, rule_based, mesh };  // mesh: the mesh file's own fibres
  Kind kind = Kind::none;
  std::array<double, 3> direction{1, 0, 0};  // uniform
  double angle_from = 60, angle_to = -60;    // rotating / rule_based: degrees, endo → epi
  int axis = 2;                              // rotating: the transmural axis
  // rule_based: the long axis (either sign; unset = the principal axis of the tissue) and,
  // when not empty, the helix angles evenly from endo to epi (else angle_from, angle_to).
  std::optional<std::array<double, 3>> long_axis;
  std::vector<double> angles;
  std::string path;                          // file: a 3-component vector image
  SourceLoc loc;
};

// The mesh part of a case: the box grid (sizes and spacing, mm) and the specs above, with
// the case file they came from (relative paths and messages).
struct MeshSpec {
  std::string source_file;  // for messages and relative paths
  Grid grid;
  GeometrySpec geometry;
  FibreSpec fibres;
  // Build the ventricular coordinates (transmural, apex-base) even without rule-based
  // fibres: regions, gradients or outputs of the case use them.
  bool coordinates = false;
};

}  // namespace hw::tissue
