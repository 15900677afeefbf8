// Internal to the single-cell runners: turns the state at each step into trace rows and
// per-beat biomarkers, so the fixed-step loop and CVODE report through one code path.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "cell/pacing_response.hpp"
#include "cell/single_cell.hpp"
#include "cell/steady_state.hpp"

namespace hw::cell::detail {

class Recorder {
 public:
  Recorder(const CellKernel& k, const CellSetup& s, const StepSchedule& sched,
           const TraceOptions& opt, double dt_ms, SingleCellResult& out, const PacingControl& control = {})
      : k_(k), s_(s), sched_(sched), opt_(opt), dt_ms_(dt_ms), out_(out), steady_(control.steady_tolerance),
        upstrokes_(std::lround(0.1 / dt_ms)) {
    every_ = std::max<long>(1, std::lround(opt.interval_ms / dt_ms));
    if (opt_.record) {
      // t (ms) and V (mV) come first whatever the model's units; a state that is itself
      // called t or V (in the model's units) gets a suffix so no two columns share a name.
      out_.trace.columns = {"t", "V"};
      for (const auto& n : s.state_names)
        out_.trace.columns.push_back(n == "t" || n == "V" ? n + "_state" : n);
      if (opt_.algebraics) {
        for (const auto& n : s.algebraic_names) out_.trace.columns.push_back(n);
        c_.resize(std::max(1, k.n_constants()));
        alg_.resize(std::max(1, k.n_algebraics()));
      }
    }
  }

  // The parameters changed (stimulus switch): constants for algebraic output are stale.
  void params_changed() { c_valid_ = false; }

  // State (model units, double) at step n, before step n runs; p = parameters of step n.
  void observe(long n, const double* y, const double* p) {
    const double t = n * dt_ms_;
    const double v = y[s_.voltage] * s_.voltage_to_mV;
    if (!std::isfinite(v))
      throw Error(fmt::format("the simulation diverged at t = {} ms (V is not finite); try "
                              "a smaller --dt or --integrator cvode",
                              t));
    const double ca = s_.calcium >= 0 ? y[s_.calcium] : std::nan("");
    const auto& on = sched_.onset_steps();
    const bool onset = next_onset_ < on.size() && n == on[next_onset_];
    // Beat boundaries (each onset, and the run's end): the steady-state test's phase.
    if (onset || n == sched_.total_steps())
      stop_ = steady_.boundary(y, s_.state_names.size()) && n != sched_.total_steps();
    upstrokes_.sample(v);
    if (onset) {
      if (tracker_.active()) {
        tracker_.sample(t, v, ca);
        out_.beats.push_back(tracker_.finish());
      }
      if (!stop_) {
        tracker_.begin(static_cast<int>(++next_onset_), t, v, ca);
        upstrokes_.begin_beat();
        upstrokes_.sample(v);
      }
    } else {
      tracker_.sample(t, v, ca);
    }
    if (opt_.record && n % every_ == 0) {
      auto& d = out_.trace.data;
      d.push_back(t);
      d.push_back(v);
      d.insert(d.end(), y, y + s_.state_names.size());
      if (opt_.algebraics) {
        if (!c_valid_) {
          k_.constants(p, c_.data());
          c_valid_ = true;
        }
        k_.algebraics(n * dt_ms_ / s_.time_to_ms, y, p, c_.data(), alg_.data());
        d.insert(d.end(), alg_.begin(), alg_.begin() + s_.algebraic_names.size());
      }
    }
  }

  // The steady state was reached at the beat boundary just observed: the run stops there.
  bool stopped() const { return stop_; }

  void finish() {
    if (tracker_.active() && !stop_) out_.beats.push_back(tracker_.finish());
    out_.beat_changes = steady_.changes();
    out_.steady_beat = steady_.steady_beat();
    if (s_.stim_on >= 0) out_.response = upstrokes_.result();  // paced by Heartwave, not the model
  }

 private:
  const CellKernel& k_;
  const CellSetup& s_;
  const StepSchedule& sched_;
  const TraceOptions& opt_;
  double dt_ms_;
  SingleCellResult& out_;
  long every_ = 1;
  std::size_t next_onset_ = 0;
  BeatTracker tracker_;
  SteadyStateTest steady_;
  UpstrokeCounter upstrokes_;
  bool stop_ = false;
  std::vector<double> c_, alg_;
  bool c_valid_ = false;
};

}  // namespace hw::cell::detail
