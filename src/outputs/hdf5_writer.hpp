// Fields over time in one HDF5 file with an XDMF index: the format for large runs.
//
// Why: one .vti per step is fine for small grids, but 256³ × hundreds of steps wants one
// file, chunked and optionally compressed, readable by h5py/MATLAB. The .xdmf beside it
// describes the series as a temporal collection of 3DCoRectMesh grids (cell-centred
// attributes), so ParaView (Xdmf3 reader) or VisIt open it with no plugin.
//
// Layout of NAME.h5:
//   /mask                      uint8 [nz][ny][nx] (1 = tissue), when a mask is given
//   /fields/<var>/<NNNNNN>     float32 [nz][ny][nx], attribute "time" (ms); x fastest
//   /time                      float64 [steps], the times written so far
//   attributes origin, spacing float64 [3] on /: x, y, z in mm (the grid's corner, as the .xdmf)
// Datasets are chunked by whole x-y planes (≤ ~1 MB per chunk) and deflate-compressed when
// compression > 0 and the library has zlib. After every step the file is flushed and the
// .xdmf rewritten atomically, so both can be read while the run goes on. A restarted run
// reopens the file (Continue), drops the steps written after its checkpoint and goes on
// appending, so one file holds the whole run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "outputs/vtk_writer.hpp"  // NamedField
#include "mesh/grid.hpp"

namespace hw::io {

class Hdf5SeriesWriter {
 public:
  // Creates (truncates) h5_path and writes the .xdmf beside it (same stem). compression:
  // 0 = none, 1..9 = deflate level. Throws hw::Error if the file cannot be created.
  Hdf5SeriesWriter(std::string h5_path, tissue::Grid grid, const tissue::Mask* mask = nullptr,
                   int compression = 0);
  // Reopens a series this class wrote to go on with it: keeps its first `keep` steps,
  // deletes the later ones (written after a checkpoint), rewrites /time and the .xdmf.
  // Throws hw::Error if the file cannot be opened, is not such a series, belongs to another
  // grid or holds fewer than keep steps.
  struct Continue {
    int keep = 0;
  };
  Hdf5SeriesWriter(std::string h5_path, tissue::Grid grid, Continue c, int compression = 0);
  ~Hdf5SeriesWriter();
  Hdf5SeriesWriter(const Hdf5SeriesWriter&) = delete;
  Hdf5SeriesWriter& operator=(const Hdf5SeriesWriter&) = delete;

  // Writes every field as /fields/<name>/<step>; the set of names must be the same at every
  // step (in any order). Throws hw::Error on a size mismatch or an HDF5 failure.
  void write(double time_ms, const std::vector<NamedField>& fields);

  const std::string& h5_path() const { return h5_path_; }
  const std::string& xdmf_path() const { return xdmf_path_; }
  int steps() const { return static_cast<int>(times_.size()); }
  // Dataset name of a step ("000012"), as used under /fields/<var>/.
  static std::string step_name(int step);

 private:
  void resume(int keep);  // the work of the Continue constructor
  void write_time();     // /time from times_, then flush
  void write_xdmf() const;
  std::string h5_path_, xdmf_path_;
  tissue::Grid grid_;
  int compression_;
  std::int64_t file_ = -1;  // hid_t
  std::vector<double> times_;
  std::vector<std::string> names_;
};

}  // namespace hw::io
