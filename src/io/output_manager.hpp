// Everything a tissue run writes, driven from the case's OutputSpec: field series (VTK or
// HDF5), probe traces, pseudo-ECG, PNG frames and movie, activation/APD90/CV maps, and
// periodic checkpoints.
//
// Why one manager: the run loop (CLI) should only say "a step happened" and "the run is
// over"; which outputs are due at which time, and how they are named on disk, lives here.
// It reads the simulation through its const interface only, so the writers below stay
// independent of the stepper (each of them takes a Grid + Field<float> + time).
//
// Layout under spec.directory (docs/outputs.md):
//   fields.pvd + fields_NNNNNN.vti   or  fields.h5 + fields.xdmf
//   probes.csv, ecg.csv, png/<var>_NNNNN.png (+ png/<var>.mp4), maps.vti, maps.csv,
//   activation.png
// An interval is "due" at the first step whose time reaches the next multiple of it (to a
// thousandth of dt); t = 0 (or the restart time) is written by begin().
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "io/hdf5_writer.hpp"
#include "io/maps.hpp"
#include "io/png_writer.hpp"
#include "io/probes.hpp"
#include "io/vtk_writer.hpp"
#include "tissue/case.hpp"
#include "tissue/simulation.hpp"

namespace hw::io {

class OutputManager {
 public:
  // Checks the spec against the simulation (variables exist, probes inside the grid) and
  // creates the folder and writers. InputError at spec.loc naming the bad entry.
  OutputManager(const tissue::Simulation& sim, const tissue::OutputSpec& spec);
  ~OutputManager();

  // Writes what is due at the current time (call once before stepping).
  void begin();
  // Call after every step: samples the maps and writes whatever interval has come due.
  void after_step();
  // Writes the maps, their CSV summary and the movie; returns human-readable lines about
  // what was written (for the log), including "movie: skipped …" when ffmpeg is absent.
  std::vector<std::string> finish();

  // Periodic checkpoints (spec.checkpoint_interval > 0): true once per interval.
  bool checkpoint_due();
  // Frames sim.save_state() with the case hash, time and step; atomic and durable.
  void write_checkpoint(const std::string& path, std::uint64_t case_hash) const;

  const std::string& directory() const { return dir_; }
  // Conduction velocity estimate after finish() (NaN if not requested or not available).
  double conduction_velocity() const { return cv_; }

 private:
  struct Due {
    double interval = 0, next = 0;
    bool check(double t, double tol);  // true and advances when t reached next
  };
  void sample_fields(double t);
  const tissue::Field<float>& var(const std::string& name);

  const tissue::Simulation& sim_;
  tissue::OutputSpec spec_;
  std::string dir_;
  const tissue::Mask* mask_;
  std::vector<std::pair<std::string, tissue::Field<float>>> cache_;  // per step, by name
  std::unique_ptr<VtkSeriesWriter> vtk_;
  std::unique_ptr<Hdf5SeriesWriter> h5_;
  std::unique_ptr<ProbeWriter> probes_;
  std::unique_ptr<tissue::DiffusionOperator> ecg_op_;
  std::unique_ptr<PseudoEcg> ecg_;
  std::unique_ptr<CsvTraceWriter> ecg_csv_;
  std::unique_ptr<PngSeriesWriter> png_;
  std::unique_ptr<ActivationTracker> tracker_;
  Due fields_due_, probe_due_, png_due_, ckpt_due_;
  double cv_ = std::numeric_limits<double>::quiet_NaN();
};

}  // namespace hw::io
