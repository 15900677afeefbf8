// The arguments of the CG kernels (kernels/cuda/diffusion_cg.cuh), passed by value: plain
// C++ that the host (tissue/cuda/implicit.hpp) and NVRTC read the same way.
#pragma once

#include "kernels/cuda/part_args.hpp"

namespace hw::cuda {

// The scalars of one solve, kept on the device so that an iteration needs no host round
// trip: each kernel reads the reductions the one before it finished and stores its own.
// hw_cg_sum after the first kernel sets them all afresh. r·z of the iterate (rz_old) and of
// the next (rz_new) are both needed by the direction; hw_cg_sum after the stencil moves the
// new one to the old (one block: no thread of it reads them), so no kernel needs to know
// the iteration's parity, and a graph's loop body is the same kernels every time.
struct CgScalars {
  double bb;         // ‖b‖²
  double rr_start;   // ‖b − A x₀‖²
  double rz_old;     // r·z of the iterate
  double rz_new;     // r·z after the update
  double pq;         // p·A p
  double rr;         // ‖r‖² after the update
  double rr_last;    // ‖r‖² when the solve stopped (for the report)
  int done;          // 0 running; 1 converged; 2 breakdown (p·A p ≤ 0); 3 stopped: a step before failed
  int zero_rhs;      // b = 0: V⁺ = 0
  int iterations;
};

// What the solves leave for the host to read when it likes (kept across solves): their
// count and iterations, and the first one that did not converge (failed_step ~0: none),
// reported after the batch of steps it was in (a graph's loop has no host to tell).
struct CgRecord {
  unsigned long long solves;
  unsigned long long iterations;
  unsigned long long failed_step;
  int failed_done;  // its CgScalars::done: 0 out of iterations, 2 breakdown
  int failed_iterations;
  double failed_rel_residual;
};

// The failure code a solve that did not converge leaves in the engine's
// failure flag (PartArgs::fail): no cell (the low 9 bits, a state's number + 1 for a cell
// that went non-finite, are 0). The passes after it then do nothing, as after a NaN.
constexpr unsigned long long kCgFailed = ~0ull << 9;

// The system is (Φ − θ·a·L) x = (Φ + (1 − θ)·a·L) V with a = dt/(χ·Cm): backward Euler θ = 1,
// Crank-Nicolson θ = ½.
template <class Real>
struct CgArgs {
  Real coef;             // −θ·a: A p = coef·L p + w∘p
  Real rhs_coef;         // (1 − θ)·a
  Real a;
  const Real* w;         // Φ's diagonal on tissue (phase field), or null (Φ = I)
  unsigned long long n;  // stored cells (element-wise kernels)
  // The unknown is the increment d = V⁺ − V (A d = b − A V), from a first guess predicted
  // from the last solves' increments: d₀ = c1·prev + c2·prev2 (c1 = c2 = 0: d₀ = 0).
  const Real* v;         // V, which the rhs is made from (read only)
  Real* d;               // the increment solved for
  const Real* prev;      // the last solve's increment
  const Real* prev2;     // the one before it
  Real c1, c2;
  Real* xv;              // V⁺ = V + d (written by the last launch, hw_cg_finish)
  Real* r;
  Real* z;
  Real* p;
  Real* q;
  const Real* inv_diag;  // 1 / diag(Φ − θ·a·L)
  CgScalars* sc;
  double* partials;      // the blocks' partial sums (block_partials), 3 × capacity
  unsigned long long capacity;
  unsigned long long blocks;  // hw_cg_sum: the blocks of the launch before it
  int sum;                    // hw_cg_sum: whose sums it adds (0 begin, 1 apply, 2 update)
  double tol2;           // rel_tol²: converged when ‖r‖² ≤ tol2·‖b‖²
  int max_iter;
  // Inside a graph: the handle of the loop over the iterations (KernelGraph::begin_loop),
  // which hw_cg_direction sets to 0 when the solve stops; 0 where the host queues the
  // iterations and reads the scalars itself.
  unsigned long long loop;
  unsigned long long* fail;    // the engine's failure flag and its step (PartArgs::fail)
  const PassTime<Real>* when;  // the step's time: its number for a failure
  CgRecord* record;
};

}  // namespace hw::cuda
