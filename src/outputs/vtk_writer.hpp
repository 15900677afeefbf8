// Fields over time as VTK XML image data (.vti) plus a .pvd collection: ParaView and VisIt
// open the series with no plugin.
//
// Why this format: one file per output step, self-describing (origin and spacing in mm),
// cell data on an ImageData whose cells are exactly the grid's cells (cell (i,j,k) covers
// [i·dx,(i+1)·dx] × … from the grid's origin: the geometry's, so the output overlays the
// image it came from). Arrays are binary inline base64 (header_type UInt64; the
// byte-count header and the data are two separately padded base64 blocks, as VTK writes
// them), so each .vti is well-formed XML any XML parser reads. The .pvd is rewritten
// atomically after every step, so it can be opened while the run goes on.
#pragma once

#include <string>
#include <vector>

#include "mesh/grid.hpp"

namespace hw::io {

// A float field to write, by name. Not owning.
struct NamedField {
  std::string name;
  const tissue::Field<float>* data = nullptr;
  int components = 1;  // values per cell, interleaved (3: a vector, e.g. the fibres)
};

// Writes one .vti with every field as CellData (Float32) and, when mask is non-null and
// non-empty, a UInt8 array "tissue" (1 = tissue). Throws hw::Error on a size mismatch or
// an I/O failure. Written atomically (not fsync-ed).
void write_vti(const std::string& path, const tissue::Grid& grid,
               const std::vector<NamedField>& fields, const tissue::Mask* mask = nullptr);

// The .pvd time-series index. Each add() appends (time, file) and rewrites the .pvd
// atomically; files are stored relative to the .pvd's folder.
class PvdWriter {
 public:
  explicit PvdWriter(std::string pvd_path);
  void add(double time_ms, const std::string& vti_path);
  const std::string& path() const { return path_; }
  std::size_t size() const { return entries_.size(); }

 private:
  void rewrite() const;
  std::string path_;
  std::vector<std::pair<double, std::string>> entries_;
};

}  // namespace hw::io
