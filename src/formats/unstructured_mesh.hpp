// Unstructured heart meshes as modellers exchange them: tetrahedra (or a closed triangle
// surface) with element tags and fibres, read from TetGen/Chaste (.node/.ele/.face),
// openCARP (.pts/.elem/.lon) and VTK (.vtu XML, legacy .vtk UNSTRUCTURED_GRID), into one
// in-memory type that the mesh floor voxelises (mesh/voxelise.hpp).
//
// Why readers of our own: each format is a short text (or base64/raw) layout; Debian's VTK
// 9 would pull 143 packages into CI for two of them, and TetGen/openCARP have no library
// reader at all (docs/geometry.md, "Unstructured meshes"). Every problem of a file is an
// hw::InputError naming file:line (or the XML element's line) and what to do; counts in a
// header are checked against the bytes that follow before anything is allocated.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace hw::io {

enum class MeshFormat : std::uint8_t { tetgen, opencarp, vtu, legacy_vtk };
const char* mesh_format_name(MeshFormat f);

struct UnstructuredMesh {
  std::string source;                       // the file read (for messages)
  MeshFormat format = MeshFormat::vtu;
  // The length unit of `points` as stored: "um" (openCARP), "mm", "cm" or "m".
  std::string units = "mm";
  std::vector<std::array<double, 3>> points;
  std::vector<std::array<std::int32_t, 4>> tets;       // 0-based point indices
  std::vector<std::array<std::int32_t, 3>> triangles;  // surface (boundary faces)
  std::vector<std::int32_t> tet_tags, triangle_tags;   // one per element, or empty
  // Fibre directions, one per tet or one per point (either may be empty). Not normalised.
  std::vector<std::array<double, 3>> tet_fibres, point_fibres;

  bool has_volume() const { return !tets.empty(); }
};

// Millimetres per unit: "um"/"µm" 1e-3, "mm" 1, "cm" 10, "m" 1000; 0 when unknown.
double mm_per_unit(const std::string& units);
// Multiplies every coordinate by `factor` and sets units to "mm".
void scale_to_mm(UnstructuredMesh& m, double factor);

// By name: X.node/X.ele/X.face (TetGen: nodes, and tets from X.ele when it exists, else the
// surface from X.face), X.pts/X.elem/X.lon (openCARP; the base name X alone works too),
// .vtu, .vtk. The result is checked with check_mesh().
UnstructuredMesh read_mesh(const std::string& path);
UnstructuredMesh read_tetgen(const std::string& path);
UnstructuredMesh read_opencarp(const std::string& path);
UnstructuredMesh read_vtu(const std::string& path);
UnstructuredMesh read_legacy_vtk_mesh(const std::string& path);
// True when `path` names a mesh read_mesh() accepts: by extension, and for .vtk by its
// DATASET line (UNSTRUCTURED_GRID; STRUCTURED_POINTS is an image).
bool is_mesh_file(const std::string& path);

// What the readers guarantee, checked once for all formats: finite coordinates, element
// indices in range, no repeated node in an element, no flat tetrahedron, every tet with the
// orientation of the majority (an inverted element names itself), no face shared by more
// than two tets and no edge by more than two surface triangles (non-manifold), and fibre
// and tag arrays with one entry per element or point. Throws hw::InputError at m.source.
void check_mesh(const UnstructuredMesh& m);

// Facts for `heartwave mesh inspect` and the run's check.
struct MeshSummary {
  std::size_t points = 0, tets = 0, triangles = 0;
  std::array<double, 3> lo{0, 0, 0}, hi{0, 0, 0};  // bounds, in the mesh's units
  std::vector<std::pair<std::int32_t, std::size_t>> tags;  // tag → elements (tets, else triangles)
  std::size_t fibre_elements = 0, fibre_points = 0;        // non-zero fibre vectors
  std::size_t open_edges = 0;                              // surface edges with one triangle
  double volume = 0;                                       // of the tets, or enclosed by the surface
};
MeshSummary summarize_mesh(const UnstructuredMesh& m);

// Writers (ASCII text for TetGen and openCARP; the .vtu is binary base64 inline, the legacy
// .vtk ASCII or BINARY). Each writes tags and fibres when the mesh has them, plus the extra
// per-point arrays given (name, values with `components` per point). Throws hw::Error on I/O.
struct PointArray {
  std::string name;
  int components = 1;
  std::vector<double> values;  // points × components
};
void write_vtu(const std::string& path, const UnstructuredMesh& m, const std::vector<PointArray>& extra = {});
void write_legacy_vtk_mesh(const std::string& path, const UnstructuredMesh& m, bool binary = false,
                           const std::vector<PointArray>& extra = {});
// base: writes base.pts, base.elem, and base.lon when there are tet fibres.
void write_opencarp(const std::string& base, const UnstructuredMesh& m);
// base: writes base.node and base.ele (tets, with the tag as attribute) or base.face.
void write_tetgen(const std::string& base, const UnstructuredMesh& m);

// openCARP's results: .igb (a 1024-byte text header, then float32 frames of `nodes`
// values, little-endian) and .dat (one value per line, per node).
struct IgbHeader {
  std::size_t nodes = 0, frames = 0;
  double dt = 1;           // ms between frames
  double t0 = 0;           // ms of the first frame
  std::string unit = "mV";
};
std::string igb_header_text(const IgbHeader& h);  // exactly 1024 bytes
void write_dat(const std::string& path, const std::vector<double>& values);
// The 1024-byte header of an .igb (nodes, frames, org_t, inc_t, unit). InputError at path
// when it is short, or a field holds no number.
IgbHeader read_igb_header(const std::string& path);
// Reads an .igb back (header and float32 data), for tests.
IgbHeader read_igb(const std::string& path, std::vector<float>& data);

}  // namespace hw::io
