// See pacing.hpp for the protocol.
#include "cell/pacing.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace hw::cell {

StimulusTrain StimulusTrain::periodic(double bcl_ms, int beats, double duration_ms,
                                      double start_ms) {
  if (!(bcl_ms > 0) || !std::isfinite(bcl_ms))
    throw InputError(SourceLoc{}, fmt::format("--bcl must be a positive number of ms, got {}", bcl_ms));
  if (beats < 1)
    throw InputError(SourceLoc{}, fmt::format("--beats must be at least 1, got {}", beats));
  if (!(duration_ms > 0) || duration_ms >= bcl_ms)
    throw InputError(SourceLoc{}, fmt::format("--stim-duration must be > 0 and < the BCL "
                                              "({} ms), got {}", bcl_ms, duration_ms));
  if (!(start_ms >= 0))
    throw InputError(SourceLoc{}, fmt::format("--stim-start must be >= 0, got {}", start_ms));
  StimulusTrain t;
  for (int k = 0; k < beats; ++k) t.onsets_ms.push_back(start_ms + k * bcl_ms);
  t.duration_ms = duration_ms;
  t.end_ms = start_ms + beats * bcl_ms;
  return t;
}

StepSchedule::StepSchedule(const StimulusTrain& train, double dt_ms) {
  if (!(dt_ms > 0) || !std::isfinite(dt_ms))
    throw InputError(SourceLoc{}, fmt::format("--dt must be a positive number of ms, got {}", dt_ms));
  const double steps = train.end_ms / dt_ms;
  if (steps > 1e11)
    throw InputError(SourceLoc{}, fmt::format("{} ms at dt {} ms is too many steps", train.end_ms, dt_ms));
  total_ = std::llround(steps);
  width_ = std::max<long>(1, std::llround(train.duration_ms / dt_ms));
  for (double t : train.onsets_ms) onsets_.push_back(std::llround(t / dt_ms));
}

bool StepSchedule::on(long step) const {
  // The last onset at or before `step`.
  auto it = std::upper_bound(onsets_.begin(), onsets_.end(), step);
  if (it == onsets_.begin()) return false;
  return step < *(it - 1) + width_;
}

std::vector<long> StepSchedule::edges() const {
  std::vector<long> e{0, total_};
  for (long o : onsets_) {
    e.push_back(o);
    e.push_back(o + width_);
  }
  std::sort(e.begin(), e.end());
  e.erase(std::unique(e.begin(), e.end()), e.end());
  while (!e.empty() && e.back() > total_) e.pop_back();
  if (e.back() != total_) e.push_back(total_);
  return e;
}

}  // namespace hw::cell
