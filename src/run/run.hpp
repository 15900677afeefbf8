// A run of a tissue case: the loop behind `heartwave run`, as a library object that the
// CLI, `bench` and later the Python bindings and the multi-GPU driver call.
//
// Why here and not in the CLI: what a run promises — nothing allocated before the case is
// known to fit, outputs and checkpoints at their cadence, a checkpoint on SIGINT/SIGTERM
// from which --restart continues bit-identically, the last good state kept on a NaN — is
// behaviour of the library, not of one front end. The front end only presents: it prints
// the plan and the notes, draws progress from the callback and reports the Result.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tissue/reaction.hpp"
#include "tissue/simulation.hpp"

namespace hw::run {

// What a case needs before anything is allocated, and where it will run.
struct Plan {
  tissue::MemoryEstimate memory;
  std::size_t host_available = 0;  // bytes (MemAvailable); 0 when unknown
  tissue::Backend backend = tissue::Backend::cpu;
  std::string backend_note;       // what was chosen and why (choose_backend)
  std::size_t gpu_free = 0, gpu_total = 0;  // cuda only
  double stable_dt = 0;           // explicit diffusion's dt limit, ms; 0 when not applicable
  // The case's set-up as far as the plan took it (geometry, models, σ, the dt check): Run
  // goes on from it rather than setting the case up again. Taken by the first Run.
  std::shared_ptr<tissue::SimSetup> setup;
  // Device memory the run takes: its fields and the output snapshots in flight.
  std::size_t gpu_need() const { return memory.run + memory.snapshots; }
  // The lines `heartwave run` prints about it.
  std::vector<std::string> describe() const;
};

// The plan for case c on `backend` (auto, reference, cpu, cuda) and, for cuda, GPU
// `device`: the case's set-up begun (tissue/reaction.hpp), its memory estimated before
// anything box-sized beyond the geometry is made. InputError when the case does not fit in
// the host's or the GPU's memory, or dt is above the explicit limit.
// The GPU this rank runs on: `device` (--device) on one rank; split, one GPU per rank of a
// host, counted from `device` by the rank's place on its host.
int split_device(int device);
// MemAvailable of /proc/meminfo in bytes; 0 where unknown.
std::size_t available_memory_bytes();
Plan plan(const tissue::TissueCase& c, const std::string& backend, int device = 0);
// The same from a set-up already prepared (tissue::prepare_setup), as `run --check` has.
Plan plan(std::shared_ptr<tissue::SimSetup> prepared, const std::string& backend, int device = 0);

// What a checkpoint must match: the case text and every --set but the end time and the
// outputs, which a continuation may change.
std::uint64_t case_identity(const std::string& case_text, const std::vector<std::string>& sets);

struct Options {
  tissue::SimulationOptions sim;
  std::string restart;         // a checkpoint to continue from; empty: a new run
  std::uint64_t identity = 0;  // case_identity of the case (checked against the restart)
  // Plan::setup of this case, to go on from (empty: the case is set up from the start).
  std::shared_ptr<tissue::SimSetup> setup;
  // Who the run is, for the output folder's manifest (outputs/run_manifest.hpp) and the
  // checkpoints' origin, from which --restart alone continues it: the case file (absolute
  // path; empty for the built-in case), the fnv1a64 of its text, and every --set.
  std::string case_path;
  std::uint64_t case_text_hash = 0;
  std::vector<std::string> overrides;
  // Clear the output folder's earlier outputs (run/output_folder.hpp) before writing; the
  // caller checked the folder (check_output_folder) and the user asked (--overwrite).
  bool overwrite = false;
};

struct Result {
  enum class Outcome { finished, stopped, failed } outcome = Outcome::finished;
  double t_ms = 0;                   // where the run stands
  std::string checkpoint;            // written in every outcome
  std::vector<std::string> summary;  // finished: one line per output written
  int signal = 0;                    // stopped: SIGINT or SIGTERM
  // failed: the step that blew up, the cell, the variable, the engine's message, and the
  // field file of the last good state.
  double failed_at_ms = 0;
  std::array<int, 3> cell{};
  std::string variable, message, last_good;
};

class Run {
 public:
  // Builds the simulation (models loaded and checked), loads the restart, and opens the
  // outputs; InputError for anything wrong with them.
  Run(const tissue::TissueCase& c, const Options& o);
  ~Run();
  Run(const Run&) = delete;
  Run& operator=(const Run&) = delete;

  const tissue::Simulation& simulation() const;
  // Lines about how a restart continued (empty for a new run).
  std::vector<std::string> notes() const;
  const std::string& checkpoint_path() const;
  // The run's id (run.json's run_id): new, or the checkpoint's on a restart of a run.
  const std::string& run_id() const;
  // The earlier outputs that `overwrite` removed (names in the output folder).
  const std::vector<std::string>& cleared() const;

  // Steps to t_end_ms (the case's t_end when negative) with the outputs and checkpoints at
  // their cadence; after every step `progress` gets the time. Stops early, with a
  // checkpoint, on SIGINT/SIGTERM, and on a non-finite value (also keeping the last good
  // state). Finished, it writes the outputs' final files (maps, movie) when `finish`.
  Result advance(double t_end_ms = -1, const std::function<void(double)>& progress = {}, bool finish = true);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hw::run
