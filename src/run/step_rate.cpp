#include "run/step_rate.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace hw::run {

void StepRate::observe(double t_ms, double wall_s, bool warming) {
  t_ = t_ms;
  wall_ = wall_s;
  // The first step, and every step while the engine warms up, moves the reference: what
  // came before (compilation, trials of slower block shapes) is not the run's speed.
  if (!have_ref_ || warming) {
    ref_t_ = t_ms;
    ref_wall_ = wall_s;
    have_ref_ = true;
  }
}

double StepRate::rate() const {
  const double dw = wall_ - ref_wall_;
  return have_ref_ && dw > 0 && t_ > ref_t_ ? (t_ - ref_t_) / dw : 0.0;
}

double StepRate::seconds_left() const {
  const double r = rate();
  return r > 0 ? std::max(0.0, t_end_ - t_) / r : std::numeric_limits<double>::quiet_NaN();
}

double StepRate::expected_total() const { return wall_ + seconds_left(); }

}  // namespace hw::run
