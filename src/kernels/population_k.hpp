// One cell of a population through one launch of the GPU population kernel
// (cell/population_gpu.cpp): the body every GPU thread runs, and the arguments it reads.
//
// Why a header the host compiles too: the order in which the cpu runner
// (cell/population.cpp, run_chunk) sets the stimulus, computes the model time and feeds the
// biomarker tracker is what makes GPU and cpu biomarkers equal; the unit tests run this body
// on the host with a cpu kernel as the model and compare it with run_population bit for bit
// (tests/unit/test_population_gpu_plan.cpp), which is the part of the GPU path a machine
// without a GPU can check. NVRTC compiles it as it is (no standard headers here).
//
// Storage: state k of cell c at y[k·n + c], one BeatState per cell, and parameter k at
// p[M::slot(k)·n + c] for the parameters that vary between cells (slot −1: compiled into the
// kernel as a constant, no row; the stimulus switch's row is not read either: the launch
// says whether the stimulus is on).
#pragma once

#include "kernels/beat_k.hpp"

#if defined(__CUDACC__)
#define HW_POP_FN __device__ __forceinline__
#define HW_POP_UNROLL _Pragma("unroll")
#else
#define HW_POP_FN inline
#define HW_POP_UNROLL
#endif

namespace hw::kernels {

// What one launch does, the same for every cell: `steps` steps from step `first`, with the
// stimulus switch (the model's on-parameter) held at `stim_on` throughout.
struct PopulationLaunch {
  long long first;
  int steps;
  int stim_on;
  // Before the last beat (track == 0) the cpu advances from a stimulus edge `interval` in
  // one multi-step call, whose step s has model time Real(interval·dt) + s·dt; the launches
  // that split such an interval keep that formula so the times are the cpu's to the bit.
  long long interval;
  // The last beat (track != 0): as the cpu, step by step at model time Real(n·dt), each
  // V and Ca after the step into the cell's tracker at t = (n+1)·dt_ms; `begin` starts
  // the tracker first (beat number `beat`) from the state at step `first`.
  int track, begin, beat;
};

template <class Real>
struct PopulationArgs {
  unsigned long long n;  // cells in this batch
  Real* y;
  const Real* p;
  BeatState* track;  // one per cell
  PopulationLaunch l;
  double dt_model;  // the step in model time units
  double dt_ms;     // the step in ms
  double to_mv;     // model voltage units to mV
};

// M: the model (static constexpr ns, np, nc; kv = voltage state, kc = calcium state or −1,
// kon = stimulus switch parameter or −1; slot(k) = row of parameter k in p or −1;
// constants(p, c); step(t, dt, y, p, c)).
// Track: whether this is a launch of the last beat (l.track); a template argument so the
// launches before it, most of a long run, are compiled without the tracker's registers.
template <class Real, class M, bool Track>
HW_POP_FN void population_cell(const PopulationArgs<Real>& a, unsigned long long c) {
  const PopulationLaunch& l = a.l;
  Real y[M::ns], p[M::np > 0 ? M::np : 1], k[M::nc > 0 ? M::nc : 1];
  // Every index is a constant after unrolling, so the arrays can stay in registers.
  HW_POP_UNROLL
  for (int q = 0; q < M::np; ++q)
    p[q] = q == M::kon ? Real(l.stim_on) : M::slot(q) >= 0 ? a.p[M::slot(q) * a.n + c] : Real(0);
  // As the cpu: the constants once per call, after the switch is set (they may use it).
  M::constants(p, k);
  HW_POP_UNROLL
  for (int q = 0; q < M::ns; ++q) y[q] = a.y[q * a.n + c];
  const Real dt = Real(a.dt_model);
  if constexpr (!Track) {
    const Real t0 = Real(double(l.interval) * a.dt_model);
    const int s0 = int(l.first - l.interval);
    for (int s = 0; s < l.steps; ++s) M::step(t0 + Real(s0 + s) * dt, dt, y, p, k);
  } else {
    const int kc = M::kc >= 0 ? M::kc : 0;  // an index the dead branch below may name
    BeatState b = a.track[c];
    if (l.begin)
      beat_begin(b, l.beat, double(l.first) * a.dt_ms, double(y[M::kv]) * a.to_mv,
                 M::kc >= 0 ? double(y[kc]) : beat_nan());
    for (int s = 0; s < l.steps; ++s) {
      const long long n = l.first + s;
      M::step(Real(double(n) * a.dt_model), dt, y, p, k);
      beat_sample(b, double(n + 1) * a.dt_ms, double(y[M::kv]) * a.to_mv,
                  M::kc >= 0 ? double(y[kc]) : beat_nan());
    }
    a.track[c] = b;
  }
  HW_POP_UNROLL
  for (int q = 0; q < M::ns; ++q) a.y[q * a.n + c] = y[q];
}

// The launch's kernel body for every cell: tracked or not, as the launch says.
template <class Real, class M>
HW_POP_FN void population_cell(const PopulationArgs<Real>& a, unsigned long long c) {
  if (a.l.track)
    population_cell<Real, M, true>(a, c);
  else
    population_cell<Real, M, false>(a, c);
}

}  // namespace hw::kernels
