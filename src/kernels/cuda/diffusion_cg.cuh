// Implicit diffusion on the GPU: the kernels of a matrix-free, Jacobi-preconditioned
// conjugate gradient for (Φ − θ·a·L) V⁺ = rhs (tissue/diffusion_stepper.hpp has the schemes;
// tissue/pcg.hpp the algorithm, which tissue/cuda/implicit.hpp runs on these kernels step by
// step). Text for NVRTC, like monodomain.cuh.
//
// Vectors live in the row layout's storage. Stored cells that are not tissue hold zeros in
// every CG vector (and V = 0: nothing ever writes them), so the element-wise kernels run
// over the whole storage and the operator only over tissue cells. Reductions accumulate in
// double, whatever Real is, as the cpu CG does.
#pragma once

#include "kernels/cuda/block_sum.cuh"
#include "kernels/cuda/cg_args.hpp"
#include "kernels/cuda/monodomain.cuh"

namespace hw::cuda {

// y = coef·L x + w∘x on tissue cells; sums[0] += x·y, sums[1] += y·y.
template <class Real, class V>
__device__ __forceinline__ void cg_apply(const PartArgs<Real>& a, const CgArgs<Real>& g) {
  unsigned c, i, j, k;
  double xy = 0, yy = 0;
  if (locate<Real, V>(a, c, i, j, k)) {
    const unsigned s0 = row_base<Real, V>(a, int(j), int(k));
    const Real x = g.x[s0 + i];
    const Real lx = laplacian<Real, V>(a, g.x, i, j, k, s0);
    const Real y = g.coef * lx + (g.w ? g.w[s0 + i] : Real(1)) * x;
    g.y[s0 + i] = y;
    xy = double(x) * double(y);
    yy = double(y) * double(y);
  }
  block_sum(xy, g.sums);
  block_sum(yy, g.sums + 1);
}

__device__ __forceinline__ bool element(unsigned long long n, unsigned long long& s) {
  s = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
  return s < n;
}

// r = b − q; sums[0] += r·r.
template <class Real>
__device__ __forceinline__ void cg_residual(const CgArgs<Real>& g) {
  unsigned long long s;
  double rr = 0;
  if (element(g.n, s)) {
    const Real r = g.b[s] - g.q[s];
    g.r[s] = r;
    rr = double(r) * double(r);
  }
  block_sum(rr, g.sums);
}

// z = M⁻¹ r; p = z; sums[0] += r·z.
template <class Real>
__device__ __forceinline__ void cg_start(const CgArgs<Real>& g) {
  unsigned long long s;
  double rz = 0;
  if (element(g.n, s)) {
    const Real z = g.inv_diag[s] * g.r[s];
    g.z[s] = z;
    g.p[s] = z;
    rz = double(g.r[s]) * double(z);
  }
  block_sum(rz, g.sums);
}

// x += α p; r −= α q; sums[0] += r·r; z = M⁻¹ r; sums[1] += r·z.
template <class Real>
__device__ __forceinline__ void cg_update(const CgArgs<Real>& g) {
  unsigned long long s;
  double rr = 0, rz = 0;
  if (element(g.n, s)) {
    g.xv[s] += g.alpha * g.p[s];
    const Real r = g.r[s] - g.alpha * g.q[s];
    g.r[s] = r;
    const Real z = g.inv_diag[s] * r;
    g.z[s] = z;
    rr = double(r) * double(r);
    rz = double(r) * double(z);
  }
  block_sum(rr, g.sums);
  block_sum(rz, g.sums + 1);
}

// p = z + β p.
template <class Real>
__device__ __forceinline__ void cg_direction(const CgArgs<Real>& g) {
  unsigned long long s;
  if (element(g.n, s)) g.p[s] = g.z[s] + g.beta * g.p[s];
}

// Backward Euler's right-hand side: y = w∘x (w null: x) on every stored cell; sums[0] += y·y.
template <class Real>
__device__ __forceinline__ void cg_weighted_copy(const CgArgs<Real>& g) {
  unsigned long long s;
  double yy = 0;
  if (element(g.n, s)) {
    const Real y = g.w ? g.w[s] * g.x[s] : g.x[s];
    g.y[s] = y;
    yy = double(y) * double(y);
  }
  block_sum(yy, g.sums);
}

}  // namespace hw::cuda
