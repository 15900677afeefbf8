// Sums over a launch that land in one double per quantity: the CG's dot products
// (diffusion_cg.cuh, in block order) and the pseudo-ECG's integrals (ecg.cuh). Text for NVRTC.
#pragma once

namespace hw::cuda {

// Adds x to *out over the warp: shuffles, then one atomic per warp. Every lane of the warp
// must call it (threads past the end pass 0).
__device__ __forceinline__ void block_sum(double x, double* out) {
  for (int o = 16; o > 0; o >>= 1) x += __shfl_down_sync(0xffffffffu, x, o);
  if ((threadIdx.x & 31) == 0 && x != 0.0) atomicAdd(out, x);
}

// The sums over the block of x[q] (q < N), in thread 0's x: shuffles, then the warps' sums
// through shared memory; the same tree every time for a block shape. Every thread of the
// block must call it; blocks are whole warps of at most 1024 threads.
template <int N>
__device__ __forceinline__ void block_tree_sum(double (&x)[N]) {
  __shared__ double warp_sums[N][32];
  const unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const unsigned warps = (blockDim.x * blockDim.y * blockDim.z + 31) / 32;
  for (int q = 0; q < N; ++q) {
    double u = x[q];
    for (int o = 16; o > 0; o >>= 1) u += __shfl_down_sync(0xffffffffu, u, o);
    if ((t & 31) == 0) warp_sums[q][t >> 5] = u;
  }
  __syncthreads();
  if (t < 32)
    for (int q = 0; q < N; ++q) {
      double u = t < warps ? warp_sums[q][t] : 0.0;
      for (int o = 16; o > 0; o >>= 1) u += __shfl_down_sync(0xffffffffu, u, o);
      x[q] = u;
    }
}

// Sums of a launch that a run repeats bit for bit: each block writes its sums (block_partials)
// to partials[q·capacity + block], and a launch of one block after it (sum_partials) adds
// them in block order. Atomics to one double add in the order the blocks finish, which
// changes from run to run. Why a second launch rather than the last block to finish adding
// them (a ticket, as in the CUDA samples): that made every block wait for its atomic's
// answer before it could leave the SM, which cost the CG's stencil 25 µs a launch on the
// N-version slab's 14 k blocks (Nsight Compute, H200); a launch costs a few µs.
template <int N>
__device__ __forceinline__ void block_partials(double (&x)[N], double* partials, unsigned long long capacity) {
  block_tree_sum<N>(x);
  if ((threadIdx.x | threadIdx.y | threadIdx.z) == 0) {
    const unsigned long long b =
        blockIdx.x + (unsigned long long)gridDim.x * (blockIdx.y + (unsigned long long)gridDim.y * blockIdx.z);
    for (int q = 0; q < N; ++q) partials[q * capacity + b] = x[q];
  }
}

// *out[q] = the sum of partials[q·capacity + b] over b < blocks, by one block: thread t adds
// blocks [t·per, (t + 1)·per) in order, 16 loads in flight at a time, then block_tree_sum.
template <int N>
__device__ __forceinline__ void sum_partials(const double* partials, unsigned long long capacity,
                                             unsigned long long blocks, double* const (&out)[N]) {
  constexpr int kBatch = 16;
  const unsigned t = threadIdx.x;
  const unsigned long long per = (blocks + blockDim.x - 1) / blockDim.x;
  const unsigned long long lo = t * per, hi = lo + per < blocks ? lo + per : blocks;
  double v[N];
  for (int q = 0; q < N; ++q) {
    v[q] = 0.0;
    const double* p = partials + q * capacity;
    for (unsigned long long i = lo; i < hi; i += kBatch) {
      double got[kBatch];
#pragma unroll
      for (int k = 0; k < kBatch; ++k) got[k] = i + k < hi ? p[i + k] : 0.0;
#pragma unroll
      for (int k = 0; k < kBatch; ++k) v[q] += got[k];
    }
  }
  block_tree_sum<N>(v);
  if (t == 0)
    for (int q = 0; q < N; ++q) *out[q] = v[q];
}

}  // namespace hw::cuda
