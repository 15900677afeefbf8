// Sums over a launch that land in one double per quantity: the CG's dot products
// (diffusion_cg.cuh) and the pseudo-ECG's integrals (ecg.cuh). Text for NVRTC.
#pragma once

namespace hw::cuda {

// Adds x to *out over the warp: shuffles, then one atomic per warp. Every lane of the warp
// must call it (threads past the end pass 0).
__device__ __forceinline__ void block_sum(double x, double* out) {
  for (int o = 16; o > 0; o >>= 1) x += __shfl_down_sync(0xffffffffu, x, o);
  if ((threadIdx.x & 31) == 0 && x != 0.0) atomicAdd(out, x);
}

// Adds x[q] to *out[q] (q < N) over the whole block: shuffles, the warps' sums through
// shared memory, then one atomic per block and quantity. Why not block_sum: atomics to one
// address serialise in L2, and one per warp over a 3 M-cell field (100 k of them) cost more
// than the pass over memory itself (the CG on a 3.36 M-cell slab ran 6x under its memory
// roof). Every thread of the block must call it; blocks are whole warps.
template <int N>
__device__ __forceinline__ void block_reduce(double (&x)[N], double* const (&out)[N]) {
  __shared__ double warp_sums[N][32];
  const unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const unsigned warps = (blockDim.x * blockDim.y * blockDim.z + 31) / 32;
  for (int q = 0; q < N; ++q) {
    double v = x[q];
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if ((t & 31) == 0) warp_sums[q][t >> 5] = v;
  }
  __syncthreads();
  if (t < 32) {
    for (int q = 0; q < N; ++q) {
      double v = t < warps ? warp_sums[q][t] : 0.0;
      for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
      if (t == 0 && v != 0.0) atomicAdd(out[q], v);
    }
  }
}

}  // namespace hw::cuda
