// The preconditioned conjugate gradient of implicit diffusion, written once: the algorithm
// over a handful of operations that each backend provides, fused as it likes (the host's
// Field loops in cg.hpp, the CUDA engine's kernels in tissue/cuda/implicit.hpp).
//
// Why the operations are these: a GPU wants every vector update to return the reductions
// that come after it from the same pass over memory (an update returns ‖r‖² and r·z with z
// already preconditioned), so the algorithm asks for exactly those; the host does the same
// arithmetic in the same order, so both follow one iteration sequence and stop by one test.
//
// Stopping test: ‖b − A x‖₂ ≤ rel_tol·‖b‖₂ (with x₀ = 0 this is the relative residual
// ‖r_k‖/‖r_0‖ of seed 003), checked on the recurrence residual every iteration.
//
// Ops:
//   double rhs_norm2();                     // ‖b‖² (a backend may build b here)
//   void zero_solution();                   // x = 0 (b = 0)
//   double residual();                      // r = b − A x;                 returns ‖r‖²
//   double start();                         // z = M⁻¹ r, p = z;            returns r·z
//   double apply_direction();               // q = A p;                     returns p·q
//   std::array<double, 2> update(double α); // x += α p, r −= α q, z = M⁻¹ r; returns ‖r‖², r·z
//   void direction(double β);               // p = z + β p
// α and β reach the backend in double; it rounds them to its precision once.
#pragma once

#include <array>
#include <cmath>

namespace hw::tissue {

struct CgOptions {
  double rel_tol = 1e-10;
  int max_iter = 1000;
};

struct CgResult {
  int iterations = 0;
  double rel_residual = 0.0;  // ‖r‖/‖b‖ at exit (recurrence residual)
  bool converged = false;
};

// The CG options of a run: its tolerance, raised to 1e-6 in float (CG in float stalls near
// 1e-7 relative residual; a tighter request would never converge), and its iteration cap.
CgOptions cg_options(double rel_tol, bool f32, int max_iter);

// hw::Error "CG did not converge" with the iterations and the residual, unless converged.
void require_converged(const CgResult& r, const CgOptions& opt);

template <class Ops>
CgResult pcg(Ops& ops, const CgOptions& opt) {
  CgResult res;
  const double bnorm = std::sqrt(ops.rhs_norm2());
  if (bnorm == 0.0) {
    ops.zero_solution();
    res.converged = true;
    return res;
  }
  res.rel_residual = std::sqrt(ops.residual()) / bnorm;
  if (res.rel_residual <= opt.rel_tol) {
    res.converged = true;
    return res;
  }
  double rz = ops.start();
  for (int it = 1; it <= opt.max_iter; ++it) {
    const double pq = ops.apply_direction();
    res.iterations = it;
    if (!(pq > 0.0)) return res;  // A not SPD (or breakdown): stop and report
    const auto [rr, rz_new] = ops.update(rz / pq);
    res.rel_residual = std::sqrt(rr) / bnorm;
    if (res.rel_residual <= opt.rel_tol) {
      res.converged = true;
      return res;
    }
    ops.direction(rz_new / rz);
    rz = rz_new;
  }
  return res;
}

}  // namespace hw::tissue
