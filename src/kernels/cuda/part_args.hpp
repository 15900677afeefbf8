// The arguments of the fused monodomain kernel (kernels/cuda/monodomain.cuh), one struct
// passed by value: the host fills it (tissue/cuda/engine.cpp) and the device reads it, so
// this header is plain C++ that both the host compiler and NVRTC read the same way.
#pragma once

namespace hw::cuda {

// Set in a failure's step word (PartArgs::fail_step) by a several-steps pass
// (kernels/cuda/steps_per_pass.cuh): kSeveralSteps always (the step is the pass's first, and
// the failure somewhere in its K steps), kStatesAside when its input states, the state to
// keep, are in the second buffer (tissue/cuda/engine.cpp copies them back).
constexpr unsigned long long kSeveralSteps = 1ull << 61;
constexpr unsigned long long kStatesAside = 1ull << 62;

// When a pass runs: its step n, its start t in model units, and the step's start in ms.
template <class Real>
struct PassTime {
  double t_prev_ms;
  unsigned long long step;
  Real t;
};

template <class Real>
struct PartArgs {
  const Real* vin;
  Real* vout;
  // The row layout (the grid's size and which walls are periodic are compiled in: the
  // kernel's V).
  const unsigned int* base;  // per row; null: the box (base[r] = r·nx)
  // Diffusion: links (coefficient arrays in the layout, a zero row for empty families), or
  // uniform weights when links are null.
  int diffuse, links;
  const Real* face[3];
  const Real* edge[3];
  const Real* zero_row;
  Real w[3];
  const Real* inv_phi;  // phase field: 1/φ in the layout; null without one
  Real alpha;           // dt/(χ Cm)
  // The part.
  unsigned long long n;
  const unsigned int* cells;  // grid index of each cell; null: the part is the whole grid
  // The cells this launch steps (a split run's slab, or its boundary or interior rows):
  // y from j0 to j1 (exclusive) and z from k0 (blockIdx.z counts from there) for a part
  // that is the whole grid; list entries c0 to c1 (exclusive) otherwise. The whole grid:
  // 0, ny, 0 and 0, ~0.
  unsigned int j0, j1, k0, c0, c1;
  Real* y;
  // Several steps per pass (kernels/cuda/steps_per_pass.cuh): the states are written here,
  // not over y; states_aside: y is the second buffer (kStatesAside in a failure's step).
  Real* y_out;
  int states_aside;
  const Real* p;
  int per_cell;
  // Stimuli (kernels/stimulus_k.hpp): when stim_on, stim[c] is what the stimuli on add to
  // cell c's V over this pass (model units), laid by hw_stimulus.
  const Real* stim;
  int stim_on;
  // The sub-step in model units, and their number (the voltage unit is compiled in).
  Real hs;
  int substeps;
  Real max_finite;
  // The first failing cell: (grid index << 9) | (state + 1), atomicMin; ~0 when none. A
  // kernel that finds it set does nothing, so steps queued after a failure change nothing.
  unsigned long long* fail;
  unsigned long long* fail_step;  // the step that failed (atomicMin)
  // When the pass runs, clock[slot]: in device memory, not in the arguments, because a
  // pass may be a node of a CUDA graph, whose arguments are fixed when it is built; the
  // host writes the clock before the launches that read it. (Read unconditionally: a
  // choice between the arguments and the clock cost TT06 16 more registers.)
  const PassTime<Real>* clock;
  unsigned int slot;
  double dt_ms;
  // Activation/APD90 maps (kernels/activation_k.hpp), grid-indexed; act null: not tracked. Set on
  // the last pass of a step only; vstart is V at the step's start (layout storage).
  float* act;
  float* apd;
  float* v_rest;
  float* v_peak;
  const Real* vstart;
  float thr;
  int with_apd;
  // The tower layout's x-halo slots (monodomain.cuh, part_step_window): halo_in holds vin's
  // when halo_valid, else the kernel reads them from vin; halo_out receives vout's.
  const Real* halo_in;
  Real* halo_out;
  int halo_valid;
};

}  // namespace hw::cuda
