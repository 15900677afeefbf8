// A live run: a Simulation stepping on its backend while pages watch it and steer it
// (docs/live.md). It owns the simulation, the view's sinks (the frame, the probes, the
// activation map, the pseudo-ECG) and the action log, and applies each control at a step
// boundary: the one thread that steps is the one that changes the run.
//
// Why the log and the replay live here: an interactive run is the case plus a schedule of
// controls at steps. LiveRun applies a control the same way whether it came from a page or
// from a log line, so `heartwave run CASE --replay LOG` (replay() below) steps the same
// steps with the same changes at the same boundaries and ends with the same V, bit for bit.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "live/controls.hpp"
#include "live/hub.hpp"
#include "live/view.hpp"
#include "tissue/case.hpp"
#include "tissue/simulation.hpp"

namespace hw::tissue {
class FrameSink;
class ProbeSink;
class ActivationSink;
}  // namespace hw::tissue
namespace hw::io {
class PseudoEcg;
}

namespace hw::live {

struct LiveOptions {
  tissue::SimulationOptions sim;
  std::string log_path;      // the action log (JSON lines); empty: none
  std::string case_label;    // what the log's first line names (the case file)
  double fps = 30;           // frames per wall second at most, while someone watches
  bool start_paused = false;
  // The state to start from (Simulation::save_state: step, states, V, the stimuli added);
  // empty: the case's initial state. Python's Simulation.live() passes its own.
  std::vector<std::uint8_t> start_state;
};

// The numbers a page may change, as they stand (Parameter::name → value).
using Settings = std::map<std::string, double>;

class LiveRun {
 public:
  // Builds the simulation of case c (InputError as Simulation's); hub null: headless (the
  // replay and the tests), no frames made.
  LiveRun(const tissue::TissueCase& c, const LiveOptions& o, Hub* hub = nullptr);
  ~LiveRun();
  LiveRun(const LiveRun&) = delete;
  LiveRun& operator=(const LiveRun&) = delete;

  // One control as a page sends it (live/controls.hpp), applied now, at the current step
  // boundary, and logged; the refusal's message when it is refused ("" when applied).
  std::string submit(const std::string& text);
  // Steps until step `n` (headless; no frames), stopping early on a NaN (returns false).
  bool run_to_step(long n);
  // The live loop: steps, applies the hub's controls, makes frames for the watchers, until
  // `stop` says so (Ctrl-C) . Ends the log.
  void serve(const std::function<bool()>& stop);
  // Writes the log's last line (the step reached); called by serve and by the replay.
  void end_log();

  const tissue::Simulation& simulation() const { return *sim_; }
  // Where serve()'s wall time went (bench_live prints it): stepping calls, the steps they
  // ran and their seconds; frames made and their seconds.
  struct Profile {
    long step_calls = 0, steps = 0, frames = 0;
    double step_s = 0, frame_s = 0;
  };
  const Profile& profile() const { return profile_; }
  const ControlSpace& space() const { return space_; }
  bool paused() const { return paused_; }
  // The page's first message: grid, layout, controls, fields, probes, electrodes.
  std::string hello_json() const;
  // The status message (time, rates, new probe and ECG samples since the last one).
  std::string status_json();
  // A frame of the current field now (also headless: the tests read it).
  std::string make_frame(bool with_activation);
  // The view's samples now (tests: the frame's values without the encoding).
  std::vector<float> frame_values() const;
  const ViewLayout& layout() const { return layout_; }
  // The last probe's reply (tests).
  const std::string& last_reply() const { return last_reply_; }

 private:
  struct Saved;
  void build(const Settings& s);  // a new simulation for settings s, taking the old one's state
  void attach_sinks(const std::vector<float>* act);
  void apply(const Control& c);
  void log_line(const std::string& json);
  void sample_probes();
  // One pseudo-ECG sample into the plot; its cost in seconds.
  double sample_ecg();
  void publish(bool frame_now);
  std::string refuse(const std::string& text, const std::string& why, const std::string& id);

  tissue::TissueCase base_;
  LiveOptions opt_;
  Hub* hub_;
  Settings settings_;
  std::unique_ptr<tissue::Simulation> sim_;
  ControlSpace space_;
  ViewLayout layout_;
  std::string variable_ = "V";
  std::array<int, 3> centre_{-1, -1, -1};
  std::shared_ptr<tissue::FrameSink> frame_;
  std::shared_ptr<tissue::ProbeSink> probes_;
  std::shared_ptr<tissue::ActivationSink> act_;
  std::unique_ptr<io::PseudoEcg> ecg_;
  std::vector<std::string> probe_names_, electrode_names_;
  std::vector<std::vector<double>> probe_samples_, ecg_samples_;  // [t, values...] since the last status
  double next_probe_t_ = 0;
  std::map<std::string, std::unique_ptr<Saved>> saves_;
  std::ofstream log_;
  bool paused_ = false;
  long single_steps_ = 0;
  double speed_ = 0;  // simulated ms per wall second; 0: as fast as it goes
  float lo_ = 0, hi_ = 0;  // the colour bar's range so far
  bool have_range_ = false;
  std::string failure_;
  // Rates for the status: steps and simulated time over the last wall second or so.
  std::chrono::steady_clock::time_point rate_wall_;
  long rate_steps_ = 0;
  double steps_per_s_ = 0, realtime_ = 0;
  std::uint64_t frames_ = 0;
  double frame_cost_ = 0;  // seconds per frame, smoothed
  Profile profile_;
  std::chrono::steady_clock::time_point next_ecg_{};
  std::string last_reply_;
};

// Reads an action log and replays it on case c: the same controls at the same steps, then on
// to the log's last step. Returns the run at that step (its V is the live run's); InputError
// at the log's line for a line that does not parse.
std::unique_ptr<LiveRun> replay(const tissue::TissueCase& c, const LiveOptions& o, const std::string& log_path,
                                std::size_t* applied = nullptr);

}  // namespace hw::live
