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

// Stores the launch's sum of x[q] (over every thread of every block) in *out[q] (q < N), in
// an order that does not depend on which block ends first, so a run repeats itself bit for
// bit (atomics to one double add in the order the blocks finish). Each block writes its sum
// to partials[q·capacity + block]; the last block to finish (a ticket, the CUDA samples'
// threadFenceReduction) adds them in block order with a fixed tree and stores the totals.
// The result depends on the launch's shape only. Every thread of the block must call it,
// last in its kernel; blocks are whole warps and at most `capacity`; *ticket is 0 before
// the launch, and again after it.
template <int N>
__device__ __forceinline__ void block_reduce_ordered(double (&x)[N], double* const (&out)[N], double* partials,
                                                     unsigned long long capacity, unsigned* ticket) {
  __shared__ double warp_sums[N][32];
  __shared__ bool last;
  const unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const unsigned threads = blockDim.x * blockDim.y * blockDim.z;
  const unsigned warps = (threads + 31) / 32;
  const unsigned long long b = blockIdx.x + (unsigned long long)gridDim.x * (blockIdx.y + (unsigned long long)gridDim.y * blockIdx.z);
  const unsigned long long blocks = (unsigned long long)gridDim.x * gridDim.y * gridDim.z;
  // The sum over the block of v (one per thread), in thread 0; the same tree every time.
  auto sum_block = [&](double (&v)[N]) {
    for (int q = 0; q < N; ++q) {
      double u = v[q];
      for (int o = 16; o > 0; o >>= 1) u += __shfl_down_sync(0xffffffffu, u, o);
      if ((t & 31) == 0) warp_sums[q][t >> 5] = u;
    }
    __syncthreads();
    if (t < 32)
      for (int q = 0; q < N; ++q) {
        double u = t < warps ? warp_sums[q][t] : 0.0;
        for (int o = 16; o > 0; o >>= 1) u += __shfl_down_sync(0xffffffffu, u, o);
        v[q] = u;
      }
    __syncthreads();  // warp_sums may be written again
  };
  sum_block(x);
  if (t == 0) {
    for (int q = 0; q < N; ++q) partials[q * capacity + b] = x[q];
    __threadfence();  // the partials are visible before the ticket says so
    last = atomicAdd(ticket, 1u) == blocks - 1;
  }
  __syncthreads();
  if (last) {
    // Thread t adds the partials of blocks [t·per, (t + 1)·per) in order, 16 loads in flight
    // at a time: this block's sum is on the launch's critical path, and one dependent load
    // per partial (55 on the N-version slab's 14 k blocks) cost 12 µs a launch.
    constexpr int kBatch = 16;
    const unsigned long long per = (blocks + threads - 1) / threads;
    const unsigned long long lo = t * per, hi = lo + per < blocks ? lo + per : blocks;
    double v[N];
    for (int q = 0; q < N; ++q) {
      v[q] = 0.0;
      const double* p = partials + q * capacity;
      for (unsigned long long i = lo; i < hi; i += kBatch) {
        double got[kBatch];
#pragma unroll
        for (int k = 0; k < kBatch; ++k) got[k] = i + k < hi ? __ldcg(p + i + k) : 0.0;
#pragma unroll
        for (int k = 0; k < kBatch; ++k) v[q] += got[k];
      }
    }
    sum_block(v);
    if (t == 0) {
      for (int q = 0; q < N; ++q) *out[q] = v[q];
      *ticket = 0;
    }
  }
}

}  // namespace hw::cuda
