// Implicit diffusion on the GPU: the kernels of a matrix-free, Jacobi-preconditioned
// conjugate gradient for (Φ − θ·a·L) V⁺ = rhs (tissue/diffusion_stepper.hpp has the schemes;
// tissue/pcg.hpp the algorithm, which tissue/cuda/implicit.hpp runs on these kernels with
// the loop on the device). Text for NVRTC, like monodomain.cuh.
//
// Vectors live in the row layout's storage. Stored cells that are not tissue hold zeros in
// every CG vector (and V = 0: nothing ever writes them), so the element-wise kernels run
// over the whole storage and the operator only over tissue cells. Reductions accumulate in
// double, whatever Real is, as the cpu CG does.
//
// Why the scalars stay on the device (CgScalars): a host round trip per reduction (two per
// iteration) cost more than the iteration's memory traffic on a 3 M-cell slab. An iteration
// is apply → sum → update → sum → direction; each reads the sums the previous launches
// completed, so every thread computes the same α, β and stopping test from them, and once
// a solve has stopped (sc->done) the iterations the host queued past it return at once.
// Each reducing launch is followed by hw_cg_sum, which adds its blocks' sums in block order
// (block_sum.cuh): a run repeats itself bit for bit.
#pragma once

#include "kernels/cuda/block_sum.cuh"
#include "kernels/cuda/cg_args.hpp"
#include "kernels/cuda/monodomain.cuh"

namespace hw::cuda {

// The one thread of a launch that writes its scalars (blocks may be 3D, as the stencil's are).
__device__ __forceinline__ bool first_thread() {
  return (blockIdx.x | blockIdx.y | blockIdx.z | threadIdx.x | threadIdx.y | threadIdx.z) == 0;
}

// An iteration's q = A p = coef·L p + w∘p (coef = −θ·a) on tissue cells; p·q's partial
// sums (hw_cg_sum makes pq[slot] of them). The first iteration's also makes pcg()'s tests before the loop.
template <class Real, class V>
__device__ __forceinline__ void cg_apply(const PartArgs<Real>& a, const CgArgs<Real>& g) {
  unsigned c, i, j, k;
  const bool inside = locate<Real, V>(a, c, i, j, k);
  CgScalars& sc = *g.sc;
  if (sc.done) return;
  if (g.first && (sc.bb == 0.0 || sc.rr_start <= g.tol2 * sc.bb)) {
    // pcg()'s tests before the loop: b = 0 has x = 0 (d = −V); the first guess may already
    // be within tolerance.
    if (sc.bb == 0.0 && inside) {
      const unsigned s = row_base<Real, V>(a, int(j), int(k)) + i;
      g.d[s] = -g.v[s];
    }
    if (first_thread()) sc.done = 1, sc.rr_last = sc.bb == 0.0 ? 0.0 : sc.rr_start;
    return;
  }
  // rr_last holds the last residual the loop has seen, so a breakdown reports it: here r₀.
  if (g.first && first_thread()) sc.rr_last = sc.rr_start;
  double xy[1] = {0};
  if (inside) {
    const unsigned s0 = row_base<Real, V>(a, int(j), int(k));
    const Real x = g.p[s0 + i];
    const Real lx = laplacian<Real, V>(a, g.p, i, j, k, s0);
    const Real y = g.coef * lx + (g.w ? g.w[s0 + i] : Real(1)) * x;
    g.q[s0 + i] = y;
    xy[0] = double(x) * double(y);
  }
  block_partials<1>(xy, g.partials, g.capacity);
}

// A solve's first launch: the rhs b = Φ V + (1 − θ)·a·L V (backward Euler θ = 1,
// Crank-Nicolson ½) from V (g.v), whose norm it sums; the first guess of the increment,
// d₀ = c1·prev + c2·prev2; and the first residual r = b − A (V + d₀) = a·L V − A d₀ in the same
// pass (the backends' pcg() forms b − A x₀; the two agree to rounding); z = M⁻¹ r, p = z. Partial
// sums of bb, rr_start, rz[0]. Why one kernel: the rhs, A x₀, the residual and the preconditioned
// start were four passes over memory a step.
template <class Real, class V>
__device__ __forceinline__ void cg_begin(const PartArgs<Real>& a, const CgArgs<Real>& g) {
  unsigned c, i, j, k;
  double sums[3] = {0, 0, 0};  // b·b, r·r, r·z
  if (locate<Real, V>(a, c, i, j, k)) {
    const unsigned s0 = row_base<Real, V>(a, int(j), int(k));
    const unsigned s = s0 + i;
    const Real x = g.v[s];
    const Real lx = laplacian<Real, V>(a, g.v, i, j, k, s0);
    const Real w = g.w ? g.w[s] : Real(1);
    const Real b = w * x + g.rhs_coef * lx;
    Real d = 0, ld = 0;  // d₀ and L d₀
    if (g.c1 != Real(0)) {
      d = g.c1 * g.prev[s];
      ld = g.c1 * laplacian<Real, V>(a, g.prev, i, j, k, s0);
    }
    if (g.c2 != Real(0)) {
      d += g.c2 * g.prev2[s];
      ld += g.c2 * laplacian<Real, V>(a, g.prev2, i, j, k, s0);
    }
    const Real r = g.a * lx - (w * d + g.coef * ld);
    const Real z = g.inv_diag[s] * r;
    g.d[s] = d;
    g.r[s] = r;
    g.z[s] = z;
    g.p[s] = z;
    sums[0] = double(b) * double(b);
    sums[1] = double(r) * double(r);
    sums[2] = double(r) * double(z);
  }
  block_partials<3>(sums, g.partials, g.capacity);
}

// The element-wise kernels stride over the storage with a grid of a few blocks per SM
// (tissue/cuda/implicit.hpp), so that each block's partial sum covers many cells.
#define HW_CG_FOR_EACH(s, n) \
  for (unsigned long long s = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; s < (n); \
       s += (unsigned long long)gridDim.x * blockDim.x)

// α = rz[slot] / pq[slot] (p·A p ≤ 0: breakdown, stop); d += α p; r −= α q; z = M⁻¹ r;
// partial sums of rr[slot] = r·r and rz[1 − slot] = r·z.
template <class Real>
__device__ __forceinline__ void cg_update(const CgArgs<Real>& g) {
  CgScalars& sc = *g.sc;
  if (sc.done) return;
  const double pq = sc.pq[g.slot];
  if (first_thread()) ++sc.iterations;
  if (!(pq > 0.0)) {  // A not SPD (or breakdown): stop, and the host reports it
    if (first_thread()) sc.done = 2;  // rr_last is the residual before this iteration
    return;
  }
  const Real alpha = Real(sc.rz[g.slot] / pq);
  double sums[2] = {0, 0};  // r·r, r·z
  HW_CG_FOR_EACH(s, g.n) {
    g.d[s] += alpha * g.p[s];
    const Real r = g.r[s] - alpha * g.q[s];
    g.r[s] = r;
    const Real z = g.inv_diag[s] * r;
    g.z[s] = z;
    sums[0] += double(r) * double(r);
    sums[1] += double(r) * double(z);
  }
  block_partials<2>(sums, g.partials, g.capacity);
}

// Converged (rr[slot] ≤ tol2·bb): done. Else β = rz[1 − slot] / rz[slot]; p = z + β p.
template <class Real>
__device__ __forceinline__ void cg_direction(const CgArgs<Real>& g) {
  CgScalars& sc = *g.sc;
  if (sc.done) return;
  const int next = 1 - g.slot;
  if (sc.rr[g.slot] <= g.tol2 * sc.bb) {
    if (first_thread()) sc.done = 1, sc.rr_last = sc.rr[g.slot];
    return;
  }
  if (first_thread()) sc.rr_last = sc.rr[g.slot];
  const Real beta = Real(sc.rz[next] / sc.rz[g.slot]);
  HW_CG_FOR_EACH(s, g.n) g.p[s] = g.z[s] + beta * g.p[s];
}

// A solve's last launch, after the loop: V⁺ = V + d over the storage (zeros stay zeros).
template <class Real>
__device__ __forceinline__ void cg_finish(const CgArgs<Real>& g) {
  HW_CG_FOR_EACH(s, g.n) g.xv[s] = g.v[s] + g.d[s];
}

// The sums of the launch before (g.sum: 0 cg_begin's ‖b‖², ‖r‖², r·z; 1 cg_apply's p·A p;
// 2 cg_update's ‖r‖², r·z), over its g.blocks blocks in block order; one block.
template <class Real>
__device__ __forceinline__ void cg_sum(const CgArgs<Real>& g) {
  CgScalars& sc = *g.sc;
  if (sc.done) return;  // the launch before returned at once: no partials
  if (g.sum == 0) {
    double* const out[3] = {&sc.bb, &sc.rr_start, &sc.rz[0]};
    sum_partials<3>(g.partials, g.capacity, g.blocks, out);
  } else if (g.sum == 1) {
    double* const out[1] = {&sc.pq[g.slot]};
    sum_partials<1>(g.partials, g.capacity, g.blocks, out);
  } else {
    double* const out[2] = {&sc.rr[g.slot], &sc.rz[1 - g.slot]};
    sum_partials<2>(g.partials, g.capacity, g.blocks, out);
  }
}

}  // namespace hw::cuda
