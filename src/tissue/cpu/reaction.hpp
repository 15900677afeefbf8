// The cpu engine's reaction: each part's states, stepped a block of cells at a time by its
// CellKernel, with the stimuli on and the NaN check (tissue/cpu/engine.cpp runs it inside
// its passes over rows of the grid).
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kernels/stimulus_k.hpp"
#include "mesh/row_layout.hpp"
#include "runtime/cell_kernel.hpp"
#include "tissue/cpu/stimulus_field.hpp"
#include "tissue/engine.hpp"

namespace hw::tissue::cpu {

// Cells per reaction block: the CellKernel steps a block at a time, either in place
// (whole-grid parts, Batch::v) or gathered into a scratch batch that stays in L1/L2 and is
// written back once checked.
constexpr std::size_t kBlock = 512;

// The first cell (grid index) of a pass whose V went non-finite, and its variable.
struct Failure {
  std::atomic<bool> any{false};
  std::size_t cell = std::numeric_limits<std::size_t>::max();
  std::string variable;
};

template <class Real>
struct PartState {
  std::vector<Real> y;  // (ns − 1)·n: every state but V, state-major
  std::vector<Real> p;  // np (uniform) or np·n (per cell)
  std::vector<std::uint32_t> at;  // storage index of each cell (compressed layout only)
  // The kernel steps y and the next V field in place (Batch::v): the part is the whole
  // grid, V is in mV, parameters are shared and the kernel supports it.
  bool in_place = false;
};

// State k's slot among the states but V.
inline std::size_t slot(const Part& p, int k) { return std::size_t(k < p.kv ? k : k - 1); }

template <class Real>
class Reaction {
 public:
  // A thread's scratch batch (parts not stepped in place gather into it).
  struct Scratch {
    std::vector<Real> y, p;
  };

  Reaction(const SimSetup& s, const RowLayout& layout) : s_(s) {
    parts_.resize(s.parts.size());
    for (std::size_t q = 0; q < s.parts.size(); ++q) {
      const Part& p = s.parts[q];
      PartState<Real>& st = parts_[q];
      st.y.assign(std::size_t(p.ns - 1) * p.n, Real(0));
      if (p.per_cell)
        st.p.assign(p.pcell.begin(), p.pcell.end());
      else
        st.p.assign(p.params.begin(), p.params.end());
      st.in_place = p.identity && layout.box && p.v2mV == 1 && !p.per_cell && p.kernel->external_voltage(p.kv);
      // Storage index of each cell, where it differs from the grid index.
      if (!p.identity && !layout.box) {
        st.at.resize(p.n);
        for (std::size_t i = 0; i < p.n; ++i) st.at[i] = std::uint32_t(layout.index(p.cells[i]));
      }
      if (!st.in_place) {
        scratch_states_ = std::max(scratch_states_, std::size_t(p.ns));
        scratch_params_ = std::max(scratch_params_, std::size_t(p.np));
      }
    }
  }

  std::vector<PartState<Real>>& parts() { return parts_; }
  const std::vector<PartState<Real>>& parts() const { return parts_; }
  Scratch scratch() const {
    return {std::vector<Real>(scratch_states_ * kBlock), std::vector<Real>(scratch_params_ * kBlock)};
  }
  // Before the passes of step n, whose reactions each span h ms: the stimuli on then.
  void begin_step(long n, double h) { stim_on_ = stim_.prepare(s_, n, h); }

  // The block of cnt cells from compact cell i0 of part q: V* from vd (the diffused values,
  // indexed like storage from `base`) plus the stimuli, the model over h from t, V checked
  // finite, then the states and V (into vout) committed.
  void react(std::size_t q, std::size_t i0, std::size_t cnt, const Real* vd, std::size_t base,
             Real* vout, double h, double t, Scratch& sc, Failure& fail) {
    const Part& p = s_.parts[q];
    PartState<Real>& st = parts_[q];
    if (st.in_place) return react_in_place(q, i0, cnt, vd, base, vout, h, t, fail);
    const std::size_t n = p.n, B = kBlock;
    Real* y = sc.y.data();
    Real* yv = y + std::size_t(p.kv) * B;
    const Real to_model = Real(1.0 / p.v2mV), to_mv = Real(p.v2mV);
    const std::uint32_t* at = st.at.empty() ? p.cells.data() : st.at.data();  // storage index
    // Gather: V from the diffused row (mV → model units), the other states from the part.
    // A part that is the whole grid has contiguous cells: plain loops that vectorise.
    if (p.identity) {
      const Real* vrow = vd + (i0 - base);
      for (std::size_t c = 0; c < cnt; ++c) yv[c] = vrow[c] * to_model;
    } else {
      for (std::size_t c = 0; c < cnt; ++c) yv[c] = vd[at[i0 + c] - base] * to_model;
    }
    for (int k = 0; k < p.ns; ++k) {
      if (k == p.kv) continue;
      const Real* src = st.y.data() + slot(p, k) * n + i0;
      std::copy(src, src + cnt, y + std::size_t(k) * B);
    }
    if (stim_on_) {
      const Real* f = stim_.part(q) + i0;
      for (std::size_t c = 0; c < cnt; ++c) yv[c] = kernels::add_stimulus(yv[c], f, c);
    }
    const Real* par = st.p.data();
    if (p.per_cell) {
      for (int k = 0; k < p.np; ++k)
        std::copy(st.p.data() + std::size_t(k) * n + i0, st.p.data() + std::size_t(k) * n + i0 + cnt,
                  sc.p.data() + std::size_t(k) * B);
      par = sc.p.data();
    }
    cell::Batch<Real> batch{cnt, B, y, par, p.per_cell};
    const int sub = s_.time.ode_substeps;
    p.kernel->step(s_.integrator, Real(t / p.t2ms), Real(h / sub / p.t2ms), sub, batch);
    // Check before committing: a block with a non-finite V keeps its previous states.
    // |V| <= max is false for NaN and ±inf; a count, not a branch, so the loop vectorises.
    std::size_t bad = 0;
    for (std::size_t c = 0; c < cnt; ++c)
      bad += !(std::abs(yv[c]) <= std::numeric_limits<Real>::max());
    if (bad) {
      for (std::size_t c = 0; c < cnt; ++c) {
        if (std::isfinite(yv[c])) continue;
        record_failure(fail, p.grid_index(i0 + c), failing_variable(p, [&](int k) { return y[std::size_t(k) * B + c]; }));
        break;
      }
      return;
    }
    for (int k = 0; k < p.ns; ++k) {
      if (k == p.kv) continue;
      const Real* src = y + std::size_t(k) * B;
      std::copy(src, src + cnt, st.y.data() + slot(p, k) * n + i0);
    }
    if (p.identity) {
      Real* out = vout + i0;
      for (std::size_t c = 0; c < cnt; ++c) out[c] = yv[c] * to_mv;
    } else {
      for (std::size_t c = 0; c < cnt; ++c) vout[at[i0 + c]] = yv[c] * to_mv;
    }
  }


 private:
  // react() for an in_place part: V* goes straight into the next V field (a copy only when
  // it is not there already), the stimulus is added there, and the kernel steps that V and
  // the part's own state arrays where they lie. A block with a non-finite V is not swapped
  // in (V_next never becomes current on failure), but its other states have advanced.
  void react_in_place(std::size_t q, std::size_t i0, std::size_t cnt, const Real* vd,
                      std::size_t base, Real* vout, double h, double t, Failure& fail) {
    const Part& p = s_.parts[q];
    PartState<Real>& st = parts_[q];
    Real* v = vout + i0;  // whole-grid part: compact index = grid index
    const Real* vs = vd + (i0 - base);
    if (vs != v) std::copy(vs, vs + cnt, v);
    if (stim_on_) {
      const Real* f = stim_.part(q) + i0;
      for (std::size_t c = 0; c < cnt; ++c) v[c] = kernels::add_stimulus(v[c], f, c);
    }
    cell::Batch<Real> batch{cnt, p.n, st.y.data() + i0, st.p.data(), false, v, p.kv};
    const int sub = s_.time.ode_substeps;
    p.kernel->step(s_.integrator, Real(t / p.t2ms), Real(h / sub / p.t2ms), sub, batch);
    std::size_t bad = 0;
    for (std::size_t c = 0; c < cnt; ++c) bad += !(std::abs(v[c]) <= std::numeric_limits<Real>::max());
    if (!bad) return;
    for (std::size_t c = 0; c < cnt; ++c) {
      if (std::isfinite(v[c])) continue;
      record_failure(fail, i0 + c,
                     failing_variable(p, [&](int k) { return st.y[slot(p, k) * p.n + i0 + c]; }));
      return;
    }
  }

  static void record_failure(Failure& fail, std::size_t cell, const std::string& var) {
#pragma omp critical(hw_tissue_failure)
    {
      if (cell < fail.cell) {
        fail.cell = cell;
        fail.variable = var;
      }
      fail.any = true;
    }
  }

  const SimSetup& s_;
  std::vector<PartState<Real>> parts_;
  std::size_t scratch_states_ = 0, scratch_params_ = 0;  // per cell of a scratch block
  StimulusField<Real> stim_;
  bool stim_on_ = false;
};

}  // namespace hw::tissue::cpu
