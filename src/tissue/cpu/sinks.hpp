// The cpu engine's sinks (tissue/sinks.hpp): the activation/APD90 maps follow V inside the
// step, over the tissue cells in the step's team, by the update the GPU kernel runs
// (kernels/activation_k.hpp), so the run loop needs no copy of the whole grid's V per step.
// Snapshots, probes and the ECG take the host forms (V is at hand).
#pragma once

#include <algorithm>
#include <memory>
#include <vector>

#include "core/error.hpp"
#include "kernels/activation_k.hpp"
#include "kernels/diffusion_k.hpp"
#include "mesh/row_layout.hpp"
#include "tissue/sinks.hpp"

namespace hw::tissue::cpu {

// The maps over the tissue cells, k-th at storage index at_[k] of V.
template <class Real>
class ActivationMapsSink final : public ActivationSink {
 public:
  ActivationMapsSink(const Grid& g, const Mask& mask, const RowLayout& layout, const ActivationMaps& m)
      : grid_(g), mask_(mask), given_(m) {
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
  // f(k, n) for the k-th tissue cell, grid index n.
  template <class F>
  void for_tissue(F&& f) const {
    for (std::size_t n = 0, k = 0; n < grid_.size(); ++n)
      if (is_tissue(&mask_, n)) f(k++, n);
  }

  const Grid& grid_;
  const Mask& mask_;
  ActivationMaps given_;  // as handed over (grid-sized)
  std::vector<std::uint32_t> at_;
  std::vector<float> act_, apd_, v_rest_, v_peak_;
};

template <class Real>
class Sinks final : public SinkHost {
 public:
  Sinks(const Engine& e, const Grid& g, const Mask& mask, const RowLayout& layout)
      : SinkHost(e, g.size()), grid_(g), mask_(mask), layout_(layout) {}

  std::shared_ptr<ActivationSink> activation(const ActivationMaps& m) override {
    auto sink = std::make_shared<ActivationMapsSink<Real>>(grid_, mask_, layout_, m);
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

  std::size_t bytes() const override {
    std::size_t b = 0;
    for (const auto& w : maps_)
      if (auto m = w.lock()) b += m->bytes();
    return b;
  }

 private:
  const Grid& grid_;
  const Mask& mask_;
  const RowLayout& layout_;
  std::vector<std::weak_ptr<ActivationMapsSink<Real>>> maps_;
};

}  // namespace hw::tissue::cpu
