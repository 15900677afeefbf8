// The stimuli on the GPU (tissue/stimuli.hpp, kernels/stimulus_k.hpp): each stimulus's cell
// lists per part in device memory, and per part the field of what the stimuli on add to V
// over a pass, laid by the stimulus kernel (one launch per stimulus on, in order) when the
// set on changes. The step kernel adds the field where a.stim_on: no cap on the number of
// stimuli, and one added while a run goes on is uploaded at the next batch.
#pragma once

#include <cstdint>
#include <vector>

#include "device/device.hpp"
#include "tissue/reaction.hpp"

namespace hw::tissue::cuda {

template <class Real>
class DeviceStimuli {
 public:
  explicit DeviceStimuli(gpu::Device& dev) : dev_(dev) {}

  // Uploads the lists of the stimuli added since the last call. Synchronous copies: call it
  // where no kernel is queued (the engine does at the start of a batch, after the failure
  // flag's read has waited for every kernel before).
  void upload_new(const SimSetup& s) {
    if (seen_ == s.stimuli.version()) return;
    const auto& list = s.stimuli.list();
    // A checkpoint's load may have replaced some (keep_first, then add): by id, not count.
    cells_.resize(list.size());
    ids_.resize(list.size(), 0);
    for (std::size_t st = 0; st < list.size(); ++st) {
      if (ids_[st] == list[st].id) continue;
      cells_[st].clear();
      for (const auto& c : list[st].cells)
        cells_[st].push_back(c.empty() ? gpu::DeviceBuffer() : gpu::DeviceBuffer::from(dev_, c, "a stimulus's cells"));
      ids_[st] = list[st].id;
    }
    if (field_.empty() && !list.empty())
      for (const Part& p : s.parts) field_.emplace_back(dev_, p.n * sizeof(Real), "the stimulus field");
    seen_ = s.stimuli.version();
    laid_.clear();  // the set may read the same, the stimuli under it not
  }

  // Before the passes of step n, each of h ms: lays the field of the stimuli on, on the
  // compute stream, unless it holds them already; false when none is on.
  bool prepare(void* lay, const SimSetup& s, long n, double h) {
    s.stimuli.active(n, active_);
    if (active_.empty()) return false;
    if (active_ == laid_ && h == h_) return true;
    const gpu::Stream& on = dev_.compute();
    for (std::size_t q = 0; q < s.parts.size(); ++q) {
      field_[q].fill_zero();
      for (int st : active_) {
        const ResolvedStimulus& r = s.stimuli.list()[std::size_t(st)];
        unsigned long long count = r.cells[q].size();
        if (!count) continue;
        gpu::DevicePtr f = field_[q].ptr(), c = cells_[std::size_t(st)][q].ptr();
        Real dv = Real(h * r.rate[q]);
        void* args[] = {&f, &c, &count, &dv};
        gpu::launch(on, lay, {unsigned((count + 255) / 256), 1, 1}, {256, 1, 1}, args);
      }
    }
    laid_ = active_;
    h_ = h;
    return true;
  }

  const gpu::DeviceBuffer& field(std::size_t q) const { return field_[q]; }
  std::size_t bytes() const {
    std::size_t b = 0;
    for (const auto& f : field_) b += f.bytes();
    for (const auto& per : cells_)
      for (const auto& c : per) b += c.bytes();
    return b;
  }

 private:
  gpu::Device& dev_;
  std::vector<std::vector<gpu::DeviceBuffer>> cells_;  // [stimulus][part]
  std::vector<std::uint64_t> ids_;                     // the stimulus each holds
  std::vector<gpu::DeviceBuffer> field_;               // per part
  std::vector<int> active_, laid_;
  double h_ = 0;
  std::uint64_t seen_ = ~std::uint64_t(0);
};

}  // namespace hw::tissue::cuda
