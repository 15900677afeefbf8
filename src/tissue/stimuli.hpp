// The tissue stimuli of a run: when each is on (on the grid of PDE steps), where (its cells
// in each part) and how much, in one compact description every engine reads, to which a
// running simulation may add (Simulation::add_stimulus: the live view's click).
//
// Why a schedule of steps rather than times: as in single-cell pacing (cell/pacing.hpp),
// pulse edges fall on step boundaries, so every backend and precision sees the same
// pulses and a run's result does not depend on rounding of t. Step n (from n·dt to
// (n+1)·dt) is stimulated iff on_k ≤ n < on_k + w for some pulse k < count, with
// on_k = round((start + k·period)/dt) and w = max(1, round(duration/dt)).
//
// Why cell lists and not a mask per cell: a mask caps the number of stimuli at its bits
// (the GPU engine's held 32), and a stimulus added while a run goes on would mean touching
// every cell. The fast engines lay the active stimuli's increments into a field per part
// when the set of active stimuli changes (kernels/stimulus_k.hpp), and add that field to V
// before the model's step; the reference adds them cell by cell from these lists itself.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

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
  // The last step it is on (a step count; LONG_MAX for a train without end is not possible:
  // count is finite).
  long last() const { return std::lround(start_ + double(count_ - 1) * std::max(period_, 0.0)) + width_ - 1; }

 private:
  bool in(long k, long n) const {
    const long on = std::lround(start_ + k * period_);
    return n >= on && n < on + width_;
  }
  double start_, period_;
  long count_, width_;
};

// One stimulus resolved on the set-up.
struct ResolvedStimulus {
  Stimulus given;  // as the case (or the caller of add_stimulus) gave it
  StimulusSchedule when;
  // Per part: the stimulated cells (compact indices, ascending) and dV/dt while on in the
  // part's model units per ms, amplitude/(χ Cm)/v2mV.
  std::vector<std::vector<std::uint32_t>> cells;
  std::vector<double> rate;
  std::uint64_t id = 0;  // unique in its set (StimulusSet::add numbers them)
};

// The run's stimuli, in the order given (the case's, then those added while running).
class StimulusSet {
 public:
  const std::vector<ResolvedStimulus>& list() const { return list_; }
  std::size_t size() const { return list_.size(); }
  bool empty() const { return list_.empty(); }
  // Counts the additions, so an engine that laid out its own copy knows it is stale.
  std::uint64_t version() const { return version_; }
  void add(ResolvedStimulus s) {
    s.id = ++version_;
    list_.push_back(std::move(s));
  }
  // Drops every stimulus after the first n (a checkpoint's own added ones replace them).
  void keep_first(std::size_t n) {
    if (n >= list_.size()) return;
    list_.erase(list_.begin() + std::ptrdiff_t(n), list_.end());
    ++version_;
  }
  // The stimuli on in step n, in order.
  void active(long n, std::vector<int>& out) const {
    out.clear();
    for (std::size_t q = 0; q < list_.size(); ++q)
      if (list_[q].when.on(n)) out.push_back(int(q));
  }
  bool any_on(long n) const {
    for (const ResolvedStimulus& s : list_)
      if (s.when.on(n)) return true;
    return false;
  }

 private:
  std::vector<ResolvedStimulus> list_;
  std::uint64_t version_ = 0;
};

}  // namespace hw::tissue
