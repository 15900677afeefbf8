// Everything a tissue run writes, driven from the case's OutputSpec: field series (VTK or
// HDF5), probe traces, pseudo-ECG, PNG frames and movie, and the activation/APD90/CV maps.
//
// Why one manager in the library: the run loop (`heartwave run`) should only say "a step
// happened", "save yourself into the checkpoint" and "the run is over"; which outputs are
// due when, how they are named, and what of them must survive a restart lives here, where
// it is tested without the CLI. It reads the simulation through its const interface only.
//
// Restart: save_state() returns the accumulators — the maps' per-cell state, the probe and
// ECG text written so far, the PNG numbering and colour range, the .pvd entries and the
// next due times. A manager built with those bytes continues the outputs so that an
// interrupted and restarted run writes the same maps, probes.csv, ecg.csv, .pvd and frames
// as an uninterrupted one. That needs the same outputs: when the [output] table (other
// than directory, movie and checkpoint_interval) differs from the checkpoint's, the traces
// and maps start afresh at the restart time, in files named *_from_<step> (notes() says so).
//
// Layout under spec.directory (docs/outputs.md):
//   fields.pvd + fields_NNNNNN.vti (N = t / field_interval)  or  fields.h5 + fields.xdmf
//   probes.csv + probes.png, ecg.csv + ecg.png, <var>_NNNNN.png (+ <var>.mp4), maps.vti,
//   maps_summary.csv, activation.png, last_good.vti (after a NaN); on a mesh geometry also
//   V_mesh.igb, maps_mesh.vtu, activation.dat, apd90.dat (outputs/mesh_outputs.hpp)
// An interval output is written at the first step whose time reaches the next multiple of
// the interval (to a millionth of dt); begin() writes t = the start time. Field and PNG frames
// are written on a thread of their own from a snapshot of that step (outputs/write_queue.hpp).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "outputs/hdf5_writer.hpp"
#include "outputs/maps.hpp"
#include "outputs/mesh_outputs.hpp"
#include "outputs/png_writer.hpp"
#include "outputs/probes.hpp"
#include "outputs/vtk_writer.hpp"
#include "outputs/write_queue.hpp"
#include "tissue/case.hpp"
#include "tissue/simulation.hpp"

namespace hw::io {

class OutputManager {
 public:
  // Checks the outputs against the simulation (variables exist, probes inside the grid;
  // InputError at c.output.loc) and opens the writers. resume_state: null for a new run,
  // else what save_state() returned when the checkpoint the simulation was loaded from was
  // written (hw::InputError if those bytes are damaged).
  OutputManager(const tissue::TissueCase& c, const tissue::Simulation& sim,
                const std::vector<unsigned char>* resume_state = nullptr);
  ~OutputManager();
  OutputManager(const OutputManager&) = delete;
  OutputManager& operator=(const OutputManager&) = delete;

  // Writes what is due at the start time (and the first sample of the maps). A resumed
  // manager has sampled that time before the checkpoint: begin() then does nothing.
  void begin();
  // Call after every step: feeds the maps and writes whatever interval has come due.
  void after_step();
  // The earliest time (ms) at which after_step() has something to do: the next output due,
  // or now (0) while the maps are fed from a copy of V every step. The steps before it may
  // run as one batch, with after_step() called only after the last.
  double next_due() const;
  // The accumulators, for a checkpoint taken now (after after_step()).
  std::vector<unsigned char> save_state() const;
  // After a NaN: the last good state as <directory>/last_good.vti. Returns its path.
  std::string write_last_good();
  // Writes the maps, their summary and the movie; returns lines for the log.
  std::vector<std::string> finish(bool make_movie = true);

  // Lines about how a restart continued the outputs (empty for a new run).
  const std::vector<std::string>& notes() const { return notes_; }
  const std::string& directory() const { return dir_; }
  // Conduction velocity estimate (m/s) after finish(); NaN if not requested or not available.
  double conduction_velocity() const { return cv_; }

 private:
  struct Schedule {
    double next_field = 0, next_png = 0, next_probe = 0, next_ecg = 0;
  };
  void open(bool continuing, const std::string* probes_text, const std::string* ecg_text);
  void open_hdf5(bool continuing);
  void sample(bool force_fields);
  void write_fields(long k);
  void write_frame(double t);
  std::pair<double, double> colour_range(const tissue::Field<float>& f) const;
  std::string vti_path(long k) const;
  std::vector<std::string> units_of(const std::vector<std::string>& variables) const;
  void write_trace_pictures(std::vector<std::string>& lines) const;

  const tissue::OutputSpec& o_;
  const tissue::Simulation& sim_;
  std::string dir_;
  const tissue::Mask* mask_ = nullptr;
  bool resumed_ = false;
  tissue::Field<float> v_;
  std::unique_ptr<PvdWriter> pvd_;
  // The field frames written so far (time, file: the frame's .vti or the .h5 that holds
  // it), saved with the outputs' state so a restart continues the series.
  std::vector<std::pair<double, std::string>> frames_;
  std::unique_ptr<Hdf5SeriesWriter> h5_;
  // Field series and PNG frames are written here (pvd_, h5_, png_ and png_range_ are the
  // queue's from then on): a snapshot taken at the step, read and written while the run
  // steps on. Flushed before anything reads what it wrote: save_state(),
  // write_last_good(), finish().
  std::unique_ptr<WriteQueue> writer_;
  std::unique_ptr<ProbeWriter> probes_;
  std::shared_ptr<tissue::ProbeSink> probe_sink_;  // attached at the first sample
  std::unique_ptr<ActivationTracker> act_;
  std::unique_ptr<MeshOutputs> mesh_out_;  // geometry kind mesh with output.mesh: results on its nodes
  std::unique_ptr<PseudoEcg> ecg_;
  std::unique_ptr<CsvTraceWriter> ecg_csv_;
  std::unique_ptr<PngSeriesWriter> png_;
  std::optional<std::pair<double, double>> png_range_;
  SliceSpec slice_;
  Schedule due_;
  std::vector<std::string> notes_;
  double cv_;
};

}  // namespace hw::io
