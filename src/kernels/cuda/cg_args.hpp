// The arguments of the CG kernels (kernels/cuda/diffusion_cg.cuh), passed by value: plain
// C++ that the host (tissue/cuda/implicit.hpp) and NVRTC read the same way.
#pragma once

namespace hw::cuda {

// The scalars of one solve, kept on the device so that an iteration needs no host round
// trip: each kernel reads the reductions the one before it finished and stores its own.
// Reductions that an iteration reads and the next one writes alternate between two slots
// (slot = iteration parity).
struct CgScalars {
  double bb;         // ‖b‖²
  double rr_start;   // ‖b − A x₀‖²
  double rz[2];      // r·z of the iterate (rz[slot]) and of the next (rz[1 − slot])
  double pq[2];      // p·A p
  double rr[2];      // ‖r‖² after the update
  double rr_last;    // ‖r‖² when the solve stopped (for the report)
  int done;          // 0 running; 1 converged; 2 breakdown (p·A p ≤ 0)
  int iterations;
};

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
  int slot;              // the iteration's parity
  int first;             // the first iteration (it makes the tests before the loop)
};

}  // namespace hw::cuda
