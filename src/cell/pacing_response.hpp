// Does a paced cell follow its pacing? Counts the upstrokes in the last beats of a run and
// compares them with the stimuli there: more upstrokes than stimuli means the cell fires
// on its own (self-oscillating, or pacemaking faster than the BCL); fewer means stimuli
// that did not capture (2:1 block, a stimulus too weak, a cell still refractory).
//
// Upstroke: V rises above the midpoint of the run's whole range [V_min, V_max], having been
// below V_min + 25 % of the range since the last upstroke (the hysteresis ignores the
// small wiggles of a plateau). Why the run's range: it needs no threshold in mV, so it
// works for dimensionless models as well; a full action potential reaches the top of it,
// a subthreshold response to the stimulus stays well below its middle. A cell that never
// fires in the whole run has no action potential to set the range and is not flagged (its
// v_peak and APDs say so).
//
// Memory stays small whatever the run's length: each beat of the window keeps V's minimum
// and maximum in bins of 0.1 ms (upstrokes last a millisecond or more and are never lost
// in a bin), and only the last kWindow beats are kept.
#pragma once

#include <deque>
#include <string>
#include <vector>

namespace hw::cell {

struct PacingResponse {
  int stimuli = 0;                // beats in the window checked (one stimulus each)
  std::vector<int> upstrokes;     // per beat of the window
  int total() const;
  bool follows() const;           // one upstroke per stimulus in the window
  // "" when it follows; else one sentence saying what was seen and what it suggests.
  std::string warning(double bcl_ms) const;
};

class UpstrokeCounter {
 public:
  static constexpr int kWindow = 4;  // beats checked at the end of a run
  explicit UpstrokeCounter(long steps_per_bin) : per_bin_(steps_per_bin < 1 ? 1 : steps_per_bin) {}
  void begin_beat();           // at each stimulus onset
  void sample(double v);       // every step (or CVODE sample); ignored before the first beat
  PacingResponse result() const;

 private:
  long per_bin_;
  long in_bin_ = 0;
  double lo_ = 0, hi_ = 0;  // the run's range
  bool any_ = false;
  struct Bin {
    float first, last, min, max;
  };
  std::deque<std::vector<Bin>> beats_;  // per beat, its bins in order
};

}  // namespace hw::cell
