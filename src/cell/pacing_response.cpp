// See pacing_response.hpp.
#include "cell/pacing_response.hpp"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

namespace hw::cell {

int PacingResponse::total() const { return std::accumulate(upstrokes.begin(), upstrokes.end(), 0); }

bool PacingResponse::follows() const { return total() == stimuli; }

std::string PacingResponse::warning(double bcl_ms) const {
  if (follows() || stimuli == 0) return "";
  std::string per;
  for (std::size_t i = 0; i < upstrokes.size(); ++i) per += fmt::format("{}{}", i ? ", " : "", upstrokes[i]);
  const std::string seen = fmt::format("the cell does not follow the pacing: {} upstrokes in the last {} beats "
                                       "(per beat: {}) for {} stimuli at BCL {} ms",
                                       total(), stimuli, per, stimuli, bcl_ms);
  if (total() > stimuli)
    return seen + "; it fires on its own (self-oscillating, or a pacemaker faster than the BCL): "
                  "pace faster, or check the model's resting state";
  return seen + "; stimuli fail to capture (block, such as 2:1 at a short BCL, or a stimulus too weak "
                "or short): try a longer --bcl or a larger --stim-amplitude";
}

void UpstrokeCounter::begin_beat() {
  beats_.emplace_back();
  if (beats_.size() > std::size_t(kWindow)) beats_.pop_front();
  in_bin_ = 0;
}

void UpstrokeCounter::sample(double v) {
  if (!any_) lo_ = hi_ = v;
  any_ = true;
  lo_ = std::min(lo_, v);
  hi_ = std::max(hi_, v);
  if (beats_.empty()) return;
  auto& bins = beats_.back();
  const float f = float(v);
  if (in_bin_ == 0 || bins.empty()) {
    bins.push_back({f, f, f, f});
  } else {
    Bin& b = bins.back();
    b.last = f;
    b.min = std::min(b.min, f);
    b.max = std::max(b.max, f);
  }
  if (++in_bin_ == per_bin_) in_bin_ = 0;
}

PacingResponse UpstrokeCounter::result() const {
  PacingResponse r;
  r.stimuli = int(beats_.size());
  const double range = hi_ - lo_;
  const double up = lo_ + 0.5 * range, rearm = lo_ + 0.25 * range;
  // Armed at the window's start when V begins it low (an action potential still going on
  // from before the window is not counted again).
  bool armed = !beats_.empty() && !beats_.front().empty() && beats_.front().front().first < up;
  for (const auto& bins : beats_) {
    int n = 0;
    auto fire = [&](const Bin& b) {
      if (armed && b.max > up) {
        ++n;
        armed = false;
      }
    };
    for (const Bin& b : bins) {
      // A bin short enough to be monotone: rising, its low comes before its high.
      const bool rising = b.last >= b.first;
      if (!rising) fire(b);
      if (b.min < rearm) armed = true;
      if (rising) fire(b);
    }
    r.upstrokes.push_back(n);
  }
  if (!(range > 0)) r.upstrokes.assign(beats_.size(), 1);  // a flat line: nothing to judge
  return r;
}

}  // namespace hw::cell
