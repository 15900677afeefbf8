// Unstructured meshes onto the voxel grid and back: which voxels a tetrahedral mesh (or a
// closed triangle surface) covers, their tags and fibres, and the weights that carry a
// voxel field back to the mesh's nodes.
//
// Why these methods:
//  * tetrahedra: each tet is rasterised over the voxel centres of its bounding box with a
//    barycentric point-in-tet test (a spatial grid by construction: a tet only visits the
//    voxels near it). A centre on a shared face goes to the tet that holds it most deeply
//    (largest smallest barycentric coordinate), so ties are decided the same way on any
//    machine. A centre strictly inside two tets is an overlap (a self-intersecting mesh)
//    and an error naming both. No closed surface is needed.
//  * surfaces only (TetGen .face, a .vtu of triangles): ray parity along x, y and z with a
//    majority vote. Each column's rays are nudged off the voxel centres by an irrational
//    fraction of a voxel, so a ray never runs through an edge or vertex exactly; a column
//    with an odd number of crossings (a hole in a real, not perfectly closed surface)
//    abstains for that axis, and the other two axes decide. Cost: one pass over the
//    triangles per axis plus a sort per column.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "formats/unstructured_mesh.hpp"
#include "mesh/conductivity.hpp"
#include "mesh/grid.hpp"

namespace hw::tissue {

// The grid at `spacing` (mm) that covers the mesh's bounds (mm) with `pad` voxels to spare
// on every side; its origin is the mesh-coordinate corner of cell 0.
Grid grid_around(const io::UnstructuredMesh& m, const std::array<double, 3>& spacing, int pad = 1);

struct MeshVoxels {
  Mask mask;                           // 1 = tissue
  Field<std::int16_t> labels;          // element tags mapped to labels; empty when the mesh has none
  std::optional<FibreField> fibres;    // when asked and the mesh has fibres
  std::size_t tissue = 0;              // tissue voxels
  std::size_t abstained_columns = 0;   // surfaces: rays with an odd number of crossings
};

struct VoxeliseOptions {
  // Element tag → region label (0: not tissue, e.g. a bath). Empty: each tag is its own
  // label; not empty: a tag it leaves out is an error.
  std::map<std::int32_t, std::int32_t> tag_labels;
  bool fibres = false;
};

// The mesh (coordinates in mm) on grid g, whose origin places it in the mesh's coordinates.
// Throws hw::InputError at the mesh's source for overlapping tets, fibres that vanish in
// tissue, or a tag the map leaves out.
MeshVoxels voxelise(const io::UnstructuredMesh& m, const Grid& g, const VoxeliseOptions& o = {});

// Carries a voxel field to the mesh nodes: per node, trilinear weights over the tissue
// voxels among the 8 centres around it (renormalised), or else the nearest tissue voxel
// within two voxels; nodes with neither get NaN.
class NodeSampler {
 public:
  NodeSampler(const Grid& g, const Mask& mask, const std::vector<std::array<double, 3>>& points_mm);
  std::size_t nodes() const { return first_.size() - 1; }
  std::size_t unreached() const { return unreached_; }
  // field: one value per grid cell; non-finite values are left out of a node's average.
  std::vector<double> sample(const double* field) const;
  std::vector<double> sample(const float* field) const;

 private:
  template <class T>
  std::vector<double> sample_any(const T* field) const;
  std::vector<std::size_t> first_;  // CSR: node n's voxels are [first_[n], first_[n+1])
  std::vector<std::size_t> voxel_;
  std::vector<double> weight_;
  std::size_t unreached_ = 0;
};

}  // namespace hw::tissue
