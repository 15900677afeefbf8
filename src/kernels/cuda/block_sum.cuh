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

}  // namespace hw::cuda
