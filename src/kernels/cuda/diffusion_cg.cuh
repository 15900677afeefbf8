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
// completed, so every thread computes the same α, β and stopping test from them. Each
// reducing launch is followed by hw_cg_sum, which adds its blocks' sums in block order
// (block_sum.cuh): a run repeats itself bit for bit. (Every block of the next kernel adding the
// partials itself, two launches fewer an iteration, was tried: the same time in a CUDA graph
// on the N-version slab and within the noise with the host queuing, docs/benchmarks.md.)
//
// Who stops the loop: inside a CUDA graph the iterations are the body of a loop on the
// device, which hw_cg_direction (or the first hw_cg_sum) ends with cudaGraphSetConditional;
// with no graph the host queues iterations in chunks and those queued past the end return
// at once (sc->done). Either way the kernels are the same and compute the same bits.
#pragma once

#include "kernels/cuda/block_sum.cuh"
#include "kernels/cuda/cg_args.hpp"
#include "kernels/cuda/monodomain.cuh"

namespace hw::cuda {

#if defined(__CUDACC_RTC__)
// The device runtime's builtin (cuda_device_runtime_api.h), which NVRTC does not declare.
extern "C" __device__ __cudart_builtin__ void cudaGraphSetConditional(unsigned long long handle, unsigned int value);
#endif

// The one thread of a launch that writes its scalars (blocks may be 3D, as the stencil's are).
__device__ __forceinline__ bool first_thread() {
  return (blockIdx.x | blockIdx.y | blockIdx.z | threadIdx.x | threadIdx.y | threadIdx.z) == 0;
}

// Inside a graph's loop, whether it runs the iterations again (one thread calls it).
template <class Real>
__device__ __forceinline__ void loop_again(const CgArgs<Real>& g, bool again) {
  if (g.loop) cudaGraphSetConditional(g.loop, again ? 1u : 0u);
}

// Columns (the box all tissue, σ uniform, second order: Columns<V>::on below): a thread walks
// up a column of layers [k0, k1) of the box, gridDim.z columns deep, keeping each field's
// values below, at and above its layer in registers, so a layer's z neighbours are no loads
// and each value is loaded once per column instead of three times. Why: the one-cell-per-
// thread stencil of the CG ran at 0.85 of the copy roof's bytes on the N-version slab
// (apply 31.7 µs for 27 MB, H100); the element-wise kernels beside it ran at the roof. The
// sums are laplacian()'s, with the same neighbours in the same order: the same bits.
template <class V>
struct Columns {
  static constexpr bool on = V::box && !V::cells && !V::links && !V::fourth;
};

template <class Real, class V>
struct ZColumn {
  Real below, here, above;
  // Cell g at layer k.
  __device__ __forceinline__ void load(const Real* f, unsigned g, unsigned k) {
    constexpr int sz = int(V::nx * V::ny);
    here = f[g];
    below = f[g + prev_offset<V::periodic_z>(k, V::nz, sz)];
    above = f[g + next_offset<V::periodic_z>(k, V::nz, sz)];
  }
  // One layer up from cell g at layer k (k + 1 < nz).
  __device__ __forceinline__ void up(const Real* f, unsigned g, unsigned k) {
    constexpr int sz = int(V::nx * V::ny);
    below = here;
    here = above;
    above = f[g + unsigned(sz) + next_offset<V::periodic_z>(k + 1, V::nz, sz)];
  }
  // (L f) at cell g = (i, j, layer), x and y neighbours from memory: laplacian()'s box sum.
  __device__ __forceinline__ Real laplacian(const PartArgs<Real>& a, const Real* f, unsigned i, unsigned j,
                                            unsigned g) const {
    constexpr unsigned nx = V::nx, ny = V::ny;
    const Real* c = f + g;
    return kernels::uniform_laplacian(a.w[0], a.w[1], a.w[2], here, next_value<V::periodic_x>(c, i, nx, 1, here),
                                      prev_value<V::periodic_x>(c, i, nx, 1, here),
                                      next_value<V::periodic_y>(c, j, ny, int(nx), here),
                                      prev_value<V::periodic_y>(c, j, ny, int(nx), here), above, below);
  }
};

// This thread's column: (i, j) and layers [k0, k1) (empty past the box).
template <class V>
__device__ __forceinline__ bool column(unsigned& i, unsigned& j, unsigned& k0, unsigned& k1) {
  i = blockIdx.x * blockDim.x + threadIdx.x;
  j = blockIdx.y * blockDim.y + threadIdx.y;
  const unsigned depth = (V::nz + gridDim.z - 1) / gridDim.z;
  k0 = blockIdx.z * depth;
  k1 = min(k0 + depth, V::nz);
  return i < V::nx && j < V::ny && k0 < k1;
}

// A solve's first launch: the rhs b = Φ V + (1 − θ)·a·L V (backward Euler θ = 1,
// Crank-Nicolson ½) from V (g.v), whose norm it sums; the first guess of the increment,
// d₀ = c1·prev + c2·prev2; and the first residual r = b − A (V + d₀) = a·L V − A d₀ in the same
// pass (the backends' pcg() forms b − A x₀; the two agree to rounding); z = M⁻¹ r, p = z. Partial
// sums of bb, rr_start, rz. Why one kernel: the rhs, A x₀, the residual and the preconditioned
// start were four passes over memory a step. After a failed step it does nothing (and
// hw_cg_sum stops the solve).
// One cell of cg_begin: x = V, lx = L V, lp and lp2 = L prev and L prev2 (read only where
// c1, c2 are not zero); adds to sums.
template <class Real>
__device__ __forceinline__ void begin_cell(const CgArgs<Real>& g, unsigned s, Real x, Real lx, Real lp, Real lp2,
                                           double (&sums)[3]) {
  const Real w = g.w ? g.w[s] : Real(1);
  const Real b = w * x + g.rhs_coef * lx;
  Real d = 0, ld = 0;  // d₀ and L d₀
  if (g.c1 != Real(0)) {
    d = g.c1 * g.prev[s];
    ld = g.c1 * lp;
  }
  if (g.c2 != Real(0)) {
    d += g.c2 * g.prev2[s];
    ld += g.c2 * lp2;
  }
  const Real r = g.a * lx - (w * d + g.coef * ld);
  const Real z = g.inv_diag[s] * r;
  g.d[s] = d;
  g.r[s] = r;
  g.z[s] = z;
  g.p[s] = z;
  sums[0] += double(b) * double(b);
  sums[1] += double(r) * double(r);
  sums[2] += double(r) * double(z);
}

template <class Real, class V>
__device__ __forceinline__ void cg_begin(const PartArgs<Real>& a, const CgArgs<Real>& g) {
  if (*a.fail != ~0ull) return;
  double sums[3] = {0, 0, 0};  // b·b, r·r, r·z
  if constexpr (Columns<V>::on) {
    unsigned i, j, k0, k1;
    if (column<V>(i, j, k0, k1)) {
      constexpr unsigned sz = V::nx * V::ny;
      unsigned s = i + V::nx * (j + V::ny * k0);
      ZColumn<Real, V> v, p, p2;
      v.load(g.v, s, k0);
      if (g.c1 != Real(0)) p.load(g.prev, s, k0);
      if (g.c2 != Real(0)) p2.load(g.prev2, s, k0);
      for (unsigned k = k0;;) {
        const Real lp = g.c1 != Real(0) ? p.laplacian(a, g.prev, i, j, s) : Real(0);
        const Real lp2 = g.c2 != Real(0) ? p2.laplacian(a, g.prev2, i, j, s) : Real(0);
        begin_cell(g, s, v.here, v.laplacian(a, g.v, i, j, s), lp, lp2, sums);
        if (++k >= k1) break;
        v.up(g.v, s, k - 1);
        if (g.c1 != Real(0)) p.up(g.prev, s, k - 1);
        if (g.c2 != Real(0)) p2.up(g.prev2, s, k - 1);
        s += sz;
      }
    }
    block_partials<3>(sums, g.partials, g.capacity);
    return;
  }
  unsigned c, i, j, k;
  if (locate<Real, V>(a, c, i, j, k)) {
    const unsigned s0 = row_base<Real, V>(a, int(j), int(k));
    const unsigned s = s0 + i;
    const Real lp = g.c1 != Real(0) ? laplacian<Real, V>(a, g.prev, i, j, k, s0) : Real(0);
    const Real lp2 = g.c2 != Real(0) ? laplacian<Real, V>(a, g.prev2, i, j, k, s0) : Real(0);
    begin_cell(g, s, g.v[s], laplacian<Real, V>(a, g.v, i, j, k, s0), lp, lp2, sums);
  }
  block_partials<3>(sums, g.partials, g.capacity);
}

// An iteration's q = A p = coef·L p + w∘p (coef = −θ·a) on tissue cells; p·q's partial
// sums (hw_cg_sum makes pq of them).
template <class Real, class V>
__device__ __forceinline__ void cg_apply(const PartArgs<Real>& a, const CgArgs<Real>& g) {
  if (g.sc->done) return;
  double xy[1] = {0};
  if constexpr (Columns<V>::on) {
    unsigned i, j, k0, k1;
    if (column<V>(i, j, k0, k1)) {
      constexpr unsigned sz = V::nx * V::ny;
      unsigned s = i + V::nx * (j + V::ny * k0);
      ZColumn<Real, V> p;
      p.load(g.p, s, k0);
      for (unsigned k = k0;;) {
        const Real y = g.coef * p.laplacian(a, g.p, i, j, s) + (g.w ? g.w[s] : Real(1)) * p.here;
        g.q[s] = y;
        xy[0] += double(p.here) * double(y);
        if (++k >= k1) break;
        p.up(g.p, s, k - 1);
        s += sz;
      }
    }
    block_partials<1>(xy, g.partials, g.capacity);
    return;
  }
  unsigned c, i, j, k;
  const bool inside = locate<Real, V>(a, c, i, j, k);
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

// The element-wise kernels stride over the storage with a grid of a few blocks per SM
// (tissue/cuda/implicit.hpp), so that each block's partial sum covers many cells.
#define HW_CG_FOR_EACH(s, n) \
  for (unsigned long long s = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; s < (n); \
       s += (unsigned long long)gridDim.x * blockDim.x)

// α = rz_old / pq (p·A p ≤ 0: breakdown, stop); d += α p; r −= α q; z = M⁻¹ r; partial sums
// of rr = r·r and rz_new = r·z.
template <class Real>
__device__ __forceinline__ void cg_update(const CgArgs<Real>& g) {
  CgScalars& sc = *g.sc;
  if (sc.done) return;
  const double pq = sc.pq;
  if (first_thread()) ++sc.iterations;
  if (!(pq > 0.0)) {  // A not SPD (or breakdown): stop, and the host reports it
    if (first_thread()) sc.done = 2;  // rr_last is the residual before this iteration
    return;
  }
  const Real alpha = Real(sc.rz_old / pq);
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

// Converged (rr ≤ tol2·bb): done. Else β = rz_new / rz_old; p = z + β p. The last kernel of
// an iteration: in a graph it says whether the loop goes on (block 0 sees what every block
// sees: done changes in this kernel only by its own first thread).
template <class Real>
__device__ __forceinline__ void cg_direction(const CgArgs<Real>& g) {
  CgScalars& sc = *g.sc;
  if (sc.done) {
    if (first_thread()) loop_again(g, false);
    return;
  }
  if (sc.rr <= g.tol2 * sc.bb) {
    if (first_thread()) {
      sc.done = 1;
      sc.rr_last = sc.rr;
      loop_again(g, false);
    }
    return;
  }
  if (first_thread()) {
    sc.rr_last = sc.rr;
    if (sc.iterations >= g.max_iter) loop_again(g, false);
  }
  const Real beta = Real(sc.rz_new / sc.rz_old);
  HW_CG_FOR_EACH(s, g.n) g.p[s] = g.z[s] + beta * g.p[s];
}

// A solve's last launch, after the loop: V⁺ = V + d over the storage (zeros stay zeros; b = 0
// has V⁺ = 0). Counts the solve and its iterations in the record. A solve that did not
// converge writes no V⁺: it leaves its numbers in the record and kCgFailed in the failure
// flag, so the passes after it do nothing and the host reports it after the batch of steps,
// as a cell that went non-finite. Stopped (a step before failed): nothing.
template <class Real>
__device__ __forceinline__ void cg_finish(const CgArgs<Real>& g) {
  const CgScalars& sc = *g.sc;
  if (sc.done == 3) return;
  const bool failed = sc.done != 1;
  if (first_thread()) {
    CgRecord& rec = *g.record;
    ++rec.solves;
    rec.iterations += (unsigned long long)sc.iterations;
    if (failed) {
      rec.failed_step = g.when->step;
      rec.failed_done = sc.done;
      rec.failed_iterations = sc.iterations;
      rec.failed_rel_residual = sc.bb > 0 ? sqrt(sc.rr_last / sc.bb) : 0.0;
      atomicMin(g.fail, kCgFailed);
      atomicMin(g.fail + 1, g.when->step);
    }
  }
  if (failed) return;
  if (sc.zero_rhs) {
    HW_CG_FOR_EACH(s, g.n) g.xv[s] = Real(0);
  } else {
    HW_CG_FOR_EACH(s, g.n) g.xv[s] = g.v[s] + g.d[s];
  }
}

// The sums of the launch before (g.sum: 0 cg_begin's ‖b‖², ‖r‖², r·z; 1 cg_apply's p·A p;
// 2 cg_update's ‖r‖², r·z), over its g.blocks blocks in block order; one block.
// After cg_begin it starts the solve's scalars afresh and makes pcg()'s tests before the loop
// (b = 0: V⁺ = 0; the first guess already within tolerance): one block, so every kernel after
// it sees the same decision. After cg_apply it moves rz_new to rz_old.
template <class Real>
__device__ __forceinline__ void cg_sum(const CgArgs<Real>& g) {
  CgScalars& sc = *g.sc;
  if (g.sum == 0) {
    if (*g.fail != ~0ull) {  // cg_begin did nothing: a step before failed
      if (threadIdx.x == 0) {
        sc.done = 3;
        sc.iterations = 0;
        loop_again(g, false);
      }
      return;
    }
    double* const out[3] = {&sc.bb, &sc.rr_start, &sc.rz_new};
    sum_partials<3>(g.partials, g.capacity, g.blocks, out);
    if (threadIdx.x == 0) {  // the thread that wrote the sums
      sc.iterations = 0;
      sc.pq = sc.rr = sc.rz_old = 0;
      sc.zero_rhs = sc.bb == 0.0;
      sc.done = sc.bb == 0.0 || sc.rr_start <= g.tol2 * sc.bb ? 1 : 0;
      sc.rr_last = sc.bb == 0.0 ? 0.0 : sc.rr_start;
      loop_again(g, sc.done == 0);
    }
    return;
  }
  if (sc.done) return;  // the launch before returned at once: no partials
  if (g.sum == 1) {
    double* const out[1] = {&sc.pq};
    sum_partials<1>(g.partials, g.capacity, g.blocks, out);
    if (threadIdx.x == 0) sc.rz_old = sc.rz_new;
  } else {
    double* const out[2] = {&sc.rr, &sc.rz_new};
    sum_partials<2>(g.partials, g.capacity, g.blocks, out);
  }
}

}  // namespace hw::cuda
