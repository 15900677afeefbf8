// Probe traces: a variable's time course at named points, as CSV.
//
// Why nearest cell rather than interpolation: the value at a cell centre is what the solver
// computed; interpolating across a wavefront would invent upstrokes that no cell had. A
// probe on a non-tissue cell moves to the nearest tissue cell (reported by cell_of()).
//
// File: header `t_ms,<probe>_<units>` when only V is traced (`t_ms,apex_mV`); with more
// variables each column is `<probe>.<variable>_<units>` (V first: `apex.V_mV,apex.Ca_i_mM`).
// The units are the model's (tissue/variable_units.hpp), "dimensionless" for pure numbers:
// a name per column keeps the file one header line for pandas and numpy.
#pragma once

#include <array>
#include <cstdio>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "mesh/grid.hpp"

namespace hw::io {

struct ProbePoint {
  std::string name;
  std::array<double, 3> position{0, 0, 0};  // mm
};

// Index of the cell nearest to `position` (mm). Throws hw::InputError at `loc` naming the
// probe if the point lies outside the grid (more than half a cell beyond a face) or there is
// no tissue at all; a non-tissue cell is replaced by the nearest tissue cell.
std::size_t nearest_tissue_cell(const tissue::Grid& g, const tissue::Mask* mask,
                                const std::array<double, 3>& position, const std::string& what,
                                const SourceLoc& loc = {});

// A CSV of columns sampled together: `t_ms` then one column per name. Rows are flushed so the
// file can be plotted while the run goes on. Also used for the pseudo-ECG.
//
// The writer keeps the text it wrote (text()), which a checkpoint stores; a restarted run
// passes it back as `resume_text` and the file starts with exactly those bytes, so the
// trace of an interrupted run equals the trace of an uninterrupted one.
class CsvTraceWriter {
 public:
  // resume_text: empty (a new file: the header) or an earlier text() of a writer with the
  // same columns (hw::Error if its first line is not this header).
  CsvTraceWriter(const std::string& path, const std::vector<std::string>& columns,
                 const std::string& resume_text = "");
  ~CsvTraceWriter();
  CsvTraceWriter(const CsvTraceWriter&) = delete;
  CsvTraceWriter& operator=(const CsvTraceWriter&) = delete;
  void row(double t, const std::vector<double>& values);
  const std::string& path() const { return path_; }
  const std::string& text() const { return text_; }

 private:
  void append(const std::string& s);
  std::string path_;
  std::size_t columns_;
  std::string text_;
  std::FILE* f_ = nullptr;
};

class ProbeWriter {
 public:
  // variables: names of the traced variables, "V" first when traced. Throws hw::InputError
  // (at loc) for a probe outside the grid or a duplicated probe name.
  // resume_text: see CsvTraceWriter. units: one per variable, written after the column's
  // name ("_mV"); none (or an empty one): no suffix.
  ProbeWriter(const std::string& path, const tissue::Grid& g, const tissue::Mask* mask,
              std::vector<ProbePoint> probes, std::vector<std::string> variables = {"V"},
              const SourceLoc& loc = {}, const std::string& resume_text = "",
              const std::vector<std::string>& units = {});
  // value(v, n): variable v (the order of `variables`) at grid cell n. A callback rather
  // than whole fields: on the GPU a probe reads its cells, not a copy of every field.
  void sample(double t, const std::function<double(std::size_t, std::size_t)>& value);
  // The same from the values in row order: for each variable, each probe (reads()).
  void sample(double t, const std::vector<double>& row);
  // What each column after t reads: (variable name, grid cell), in row order (a sink of
  // probes is attached with these: tissue::Simulation::attach_probes).
  std::vector<std::pair<std::string, std::size_t>> reads() const;
  std::size_t cell_of(std::size_t probe) const { return cells_[probe]; }
  const std::string& path() const { return csv_.path(); }
  const std::string& text() const { return csv_.text(); }

 private:
  static std::vector<std::string> columns(const std::vector<ProbePoint>& p,
                                          const std::vector<std::string>& vars,
                                          const std::vector<std::string>& units);
  std::vector<ProbePoint> probes_;
  std::vector<std::string> vars_;
  std::vector<std::size_t> cells_;
  CsvTraceWriter csv_;
};

}  // namespace hw::io
