// When a tissue stimulus is on, on the grid of PDE steps.
//
// Why a schedule of steps rather than times: as in single-cell pacing (cell/pacing.hpp),
// pulse edges fall on step boundaries, so every backend and precision sees the same
// pulses and a run's result does not depend on rounding of t. Step n (from n·dt to
// (n+1)·dt) is stimulated iff on_k ≤ n < on_k + w for some pulse k < count, with
// on_k = round((start + k·period)/dt) and w = max(1, round(duration/dt)).
#pragma once

#include <cmath>

#include "tissue/case.hpp"

namespace hw::tissue {

class StimulusSchedule {
 public:
  StimulusSchedule(const Stimulus& s, double dt)
      : start_(s.start / dt), period_(s.period / dt), count_(s.period > 0 ? s.count : 1),
        width_(std::max(1L, std::lround(s.duration / dt))) {}

  bool on(long n) const {
    if (period_ <= 0) return in(0, n);
    // The pulse that starts at or just before n, and its neighbour (rounding of onsets).
    const long k = static_cast<long>(std::floor((n - start_) / period_));
    for (long q = k - 1; q <= k + 1; ++q)
      if (q >= 0 && q < count_ && in(q, n)) return true;
    return false;
  }

 private:
  bool in(long k, long n) const {
    const long on = std::lround(start_ + k * period_);
    return n >= on && n < on + width_;
  }
  double start_, period_;
  long count_, width_;
};

}  // namespace hw::tissue
