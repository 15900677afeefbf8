// The arrays both VTK mesh readers (.vtu, legacy .vtk) produce, and the one function that
// turns them into an UnstructuredMesh: cell types, tags and fibres found by array name.
//
// Why shared: the two file layouts differ, the meaning of their arrays does not; one place
// decides which arrays are tags and fibres and what a point-data tag means for an element.
#pragma once

#include <string>
#include <vector>

#include "core/error.hpp"
#include "formats/unstructured_mesh.hpp"

namespace hw::io {

struct VtkArray {
  std::string name;
  int components = 1;
  std::vector<double> values;
};

struct VtkCells {
  VtkArray points, connectivity, offsets, types;  // offsets: the end of each cell
  std::vector<VtkArray> cell_data, point_data;
};

// Tetrahedra (10, and the corners of quadratic ones, 24) and triangles (5) are kept;
// vertices and lines (1–4) skipped; any other cell type is an InputError at `loc`. Tags:
// a 1-component array named tag(s), elemtag, region, material, label(s), cellentityids,
// gmsh:physical or medit:ref (cell data; or point data, an element taking the tag most of
// its nodes have). Fibres: an array of ≥ 3 components whose name starts with fib (fibre,
// fiber, fibres, …) or is "lon" (the first 3 components).
UnstructuredMesh mesh_from_vtk_arrays(const VtkCells& c, const SourceLoc& loc);

// Refuses, before allocating, an array a corrupt count would make larger than half the
// machine's memory: an InputError at `loc` naming `what`.
void check_allocation(std::size_t bytes, const std::string& what, const SourceLoc& loc);

}  // namespace hw::io
