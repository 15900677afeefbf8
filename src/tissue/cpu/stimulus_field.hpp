// The stimuli on in a step as one value per cell of each part (kernels/stimulus_k.hpp), laid
// again only when the set of active stimuli changes or one is added.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/stimulus_k.hpp"
#include "tissue/reaction.hpp"

namespace hw::tissue::cpu {

template <class Real>
class StimulusField {
 public:
  // For step n with reaction passes of h ms: lays the field if needed; false when no
  // stimulus is on (the field is then not to be read).
  bool prepare(const SimSetup& s, long n, double h) {
    s.stimuli.active(n, active_);
    if (active_.empty()) return false;
    if (active_ == laid_ && version_ == s.stimuli.version() && h == h_) return true;
    field_.resize(s.parts.size());
    for (std::size_t q = 0; q < s.parts.size(); ++q) {
      field_[q].assign(s.parts[q].n, Real(0));
      for (int st : active_) {
        const ResolvedStimulus& r = s.stimuli.list()[std::size_t(st)];
        const std::vector<std::uint32_t>& cells = r.cells[q];
        const Real dv = Real(h * r.rate[q]);
        for (std::size_t i = 0; i < cells.size(); ++i) kernels::lay_stimulus(field_[q].data(), cells.data(), i, dv);
      }
    }
    laid_ = active_;
    version_ = s.stimuli.version();
    h_ = h;
    return true;
  }
  // Part q's field over its compact cells.
  const Real* part(std::size_t q) const { return field_[q].data(); }

 private:
  std::vector<int> active_, laid_;
  std::uint64_t version_ = 0;
  double h_ = 0;
  std::vector<std::vector<Real>> field_;
};

}  // namespace hw::tissue::cpu
