// The speed of a run as it goes, for its progress bar and its one-line wall-time estimate.
//
// Why not simply simulated time over wall time since the start: the first step of a GPU run
// may carry a kernel compilation (tens of seconds without a cache) and its first steps the
// block-shape tuner's trials, so `bench niederer --backend cuda` once printed "expected
// wall time: about 30:18:07" for a run that took 5 s. The rate here is measured from a
// reference point that moves with the run until its engine has warmed up (the first step
// done, the tuner settled), and the estimate is given once a second of steady stepping has
// passed. The expected total is the wall time so far plus what is left at that rate.
#pragma once

namespace hw::run {

class StepRate {
 public:
  static constexpr double kSettle = 1.0;  // s of steady stepping before the estimate

  // t0: simulated ms at the start; t_end: where the run stops.
  StepRate(double t0, double t_end) : t_end_(t_end), ref_t_(t0), t_(t0) {}

  // After a step: simulated t_ms at wall_s seconds since the run started; warming: the
  // engine has not settled yet (its compilation or tuning may be in this step).
  void observe(double t_ms, double wall_s, bool warming);

  // Simulated ms per wall second since the reference (0 before any steady stepping).
  double rate() const;
  // Whether a second of steady stepping has passed, so that the estimate can be trusted.
  bool settled() const { return have_ref_ && wall_ - ref_wall_ >= kSettle && t_ > ref_t_; }
  // Wall seconds to the end from now, and the whole run's (elapsed + left); NaN before any
  // steady stepping.
  double seconds_left() const;
  double expected_total() const;
  // Wall seconds of steady stepping behind rate().
  double measured_over() const { return have_ref_ ? wall_ - ref_wall_ : 0.0; }

 private:
  double t_end_;
  double ref_t_, ref_wall_ = 0;
  double t_, wall_ = 0;
  bool have_ref_ = false;
};

}  // namespace hw::run
