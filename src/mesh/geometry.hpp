// The tissue geometry of a case: which voxels are tissue, their phase field, surface
// labels and fibre directions, built from a case's geometry and fibre specs (MeshSpec).
//
// Why one entry point: the stepper should not care whether the tissue came from a box, an
// analytic shape or a NRRD/VTK image, nor how fibres were made; build_geometry() turns
// the case's declarative specs into fields on one Grid, and every error in them becomes an
// hw::InputError pointing at the case file's [geometry] or [fibres] table.
#pragma once

#include <cstdint>
#include <optional>

#include <memory>

#include "formats/unstructured_mesh.hpp"
#include "mesh/conductivity.hpp"
#include "mesh/geometry_spec.hpp"
#include "mesh/grid.hpp"
#include "mesh/ventricular_coordinates.hpp"

namespace hw::tissue {

struct Geometry {
  Grid grid;                     // from the case (box/shapes) or from the image header (files): sizes and spacing in mm
  Mask mask;                     // 1 = tissue; empty = all tissue
  Field<float> phase;            // phase field φ (0..1) when geometry.phase_field, else empty
  Field<std::int16_t> labels;    // surface/region labels when the file has them (e.g. UCSD rabbit: epi/LV/RV), else empty
  std::optional<FibreField> fibres;  // per voxel, when c.fibres.kind != none
  // Transmural (0 endo … 1 epi) and apex-base (0 apex … 1 base) coordinates of the tissue
  // cells (0 elsewhere), with the long axis they used: built for rule-based fibres and when
  // MeshSpec::coordinates asks; empty otherwise.
  Field<float> transmural, apex_base;
  std::optional<LongAxis> long_axis;
  // How the endo and epi labels were found when the file had none (cavities.hpp), else empty.
  std::string surfaces_note;
  // kind mesh: the mesh as read (coordinates in mm, in the frame of grid.origin), so the
  // outputs can sample the run's fields back onto its nodes; null for other kinds.
  std::shared_ptr<const io::UnstructuredMesh> mesh;
  std::string mesh_note;  // "41,812 triangles (surface) of cm, …": how it was voxelised
};

// Throws hw::InputError at c.geometry.loc / c.fibres.loc with what is wrong (missing file,
// unknown format, threshold leaving no tissue, sizes too large, coordinates asked of a
// geometry without endo and epi labels).
Geometry build_geometry(const MeshSpec& c);

}  // namespace hw::tissue
