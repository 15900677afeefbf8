// The cpu engine's sinks (tissue/sinks.hpp): the activation/APD90 maps follow V inside the
// step, over the tissue cells in the step's team, by the update the GPU kernel runs
// (kernels/activation_k.hpp), so the run loop needs no copy of the whole grid's V per step.
// Snapshots, probes and the ECG take the host forms (V is at hand). In a split run
// (tissue/split.hpp) each rank follows the maps of its own slab and a read gathers them;
// probes are read by the rank that owns their cell.
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <vector>

#include "core/error.hpp"
#include "kernels/activation_k.hpp"
#include "kernels/diffusion_k.hpp"
#include "mesh/row_layout.hpp"
#include "tissue/split.hpp"
#include "tissue/sinks.hpp"

namespace hw::tissue::cpu {

// The maps over the tissue cells, k-th at storage index at_[k] of V.
template <class Real>
class ActivationMapsSink final : public ActivationSink {
 public:
  ActivationMapsSink(const Grid& g, const Mask& mask, const RowLayout& layout, const ActivationMaps& m,
                     const Split& split)
      : grid_(g), mask_(mask), given_(m), split_(split) {
    if (m.act.size() != g.size() ||
        (m.with_apd && (m.apd.size() != g.size() || m.v_rest.size() != g.size() || m.v_peak.size() != g.size())))
      throw Error("activation maps: arrays of the wrong size for this grid");
    for_tissue([&](std::size_t, std::size_t n) { at_.push_back(std::uint32_t(layout.index(n))); });
    const std::size_t T = at_.size();
    act_.assign(T, 0);
    apd_.assign(m.with_apd ? T : 0, 0);
    v_rest_.assign(apd_.size(), 0);
    v_peak_.assign(apd_.size(), 0);
    for_tissue([&](std::size_t k, std::size_t n) {
      act_[k] = m.act[n];
      if (m.with_apd) {
        apd_[k] = m.apd[n];
        v_rest_[k] = m.v_rest[n];
        v_peak_[k] = m.v_peak[n];
      }
    });
  }

  void read(ActivationMaps& m) const override {
    m = given_;  // the cells off the tissue as they were handed over
    for_tissue([&](std::size_t k, std::size_t n) {
      m.act[n] = act_[k];
      if (m.with_apd) {
        m.apd[n] = apd_[k];
        m.v_rest[n] = v_rest_[k];
        m.v_peak[n] = v_peak_[k];
      }
    });
    split_.gather_grid(m.act.data());
    if (m.with_apd) {
      split_.gather_grid(m.apd.data());
      split_.gather_grid(m.v_rest.data());
      split_.gather_grid(m.v_peak.data());
    }
  }

  // The step from t (V in a) to t + dt (V in b), both in the row layout, with `team` threads.
  void after_step(const Real* a, const Real* b, double t, double dt, int team) {
    const long T = long(at_.size());
    const float thr = given_.threshold;
    const std::uint32_t* at = at_.data();
    float* act = act_.data();
    if (!given_.with_apd) {
#pragma omp parallel for schedule(static) num_threads(team) if (T >= long(kernels::kMinParallelCells))
      for (long k = 0; k < T; ++k) {
        if (act[k] == act[k]) continue;
        float none = 0;
        io::activation_update(float(a[at[k]]), float(b[at[k]]), thr, t, dt, false, act[k], none, none, none);
      }
      return;
    }
    float *apd = apd_.data(), *vr = v_rest_.data(), *vp = v_peak_.data();
#pragma omp parallel for schedule(static) num_threads(team) if (T >= long(kernels::kMinParallelCells))
    for (long k = 0; k < T; ++k) {
      if (act[k] == act[k] && apd[k] == apd[k]) continue;
      io::activation_update(float(a[at[k]]), float(b[at[k]]), thr, t, dt, true, act[k], apd[k], vr[k], vp[k]);
    }
  }

  std::size_t bytes() const {
    return at_.size() * 4 + (act_.size() + 3 * apd_.size() + given_.act.size() + 3 * given_.apd.size()) * sizeof(float);
  }

 private:
  // f(k, n) for the k-th tissue cell of this rank's slab, grid index n.
  template <class F>
  void for_tissue(F&& f) const {
    for (std::size_t n = split_.cell_begin(), k = 0; n < split_.cell_end(); ++n)
      if (is_tissue(&mask_, n)) f(k++, n);
  }

  const Grid& grid_;
  const Mask& mask_;
  ActivationMaps given_;  // as handed over (grid-sized)
  const Split& split_;
  std::vector<std::uint32_t> at_;
  std::vector<float> act_, apd_, v_rest_, v_peak_;
};

template <class Real>
class Sinks final : public SinkHost {
 public:
  // local: a probe's value as this rank holds it (its own cells are current).
  Sinks(const Engine& e, const Grid& g, const Mask& mask, const RowLayout& layout, const std::vector<Part>& parts,
        const Split& split, std::function<double(const ProbeRead&)> local)
      : SinkHost(e, g.size()), grid_(g), mask_(mask), layout_(layout), parts_(parts), split_(split),
        local_(std::move(local)) {}

  std::shared_ptr<ActivationSink> activation(const ActivationMaps& m) override {
    auto sink = std::make_shared<ActivationMapsSink<Real>>(grid_, mask_, layout_, m, split_);
    maps_.push_back(sink);
    return sink;
  }

  // Feeds the maps still held by someone (those dropped are forgotten).
  void after_step(const Real* a, const Real* b, double t, double dt, int team) {
    std::erase_if(maps_, [](const auto& w) { return w.expired(); });
    for (const auto& w : maps_)
      if (auto m = w.lock()) m->after_step(a, b, t, dt, team);
  }
  bool feeding() const { return !maps_.empty(); }

  // Split: each probe read by the rank that owns its cell, the values summed across the ranks
  // (the others add 0), one reduction for all of them.
  std::shared_ptr<ProbeSink> probes(const std::vector<ProbeRead>& reads) override {
    if (!split_.active()) return SinkHost::probes(reads);
    return std::make_shared<OwnedProbes>(*this, reads);
  }

  std::size_t bytes() const override {
    std::size_t b = 0;
    for (const auto& w : maps_)
      if (auto m = w.lock()) b += m->bytes();
    return b;
  }

 private:
  const Grid& grid_;
  const Mask& mask_;
  class OwnedProbes final : public ProbeSink {
   public:
    OwnedProbes(const Sinks& host, std::vector<ProbeRead> reads) : host_(host), reads_(std::move(reads)) {
      for (const ProbeRead& r : reads_) mine_.push_back(host_.split_.owns_value(r.field.part, r.cell, host_.parts_));
    }
    void read(std::vector<double>& out) const override {
      // −0 is the sum's identity for every value, −0 and NaN included: the sum is the owner's bits.
      out.assign(reads_.size(), -0.0);
      for (std::size_t i = 0; i < reads_.size(); ++i)
        if (mine_[i]) out[i] = host_.local_(reads_[i]);
      host_.split_.from_owners(out);
    }

   private:
    const Sinks& host_;
    std::vector<ProbeRead> reads_;
    std::vector<bool> mine_;
  };

  const RowLayout& layout_;
  const std::vector<Part>& parts_;
  const Split& split_;
  std::function<double(const ProbeRead&)> local_;
  std::vector<std::weak_ptr<ActivationMapsSink<Real>>> maps_;
};

}  // namespace hw::tissue::cpu
