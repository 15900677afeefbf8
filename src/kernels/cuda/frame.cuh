// The live view's frame kernel: one thread per sample of one source array (V, or one state
// of a part) gathers it into the frame (kernels/frame_k.hpp). Launched once per source.
#pragma once

#include "kernels/frame_k.hpp"

namespace hw::cuda {

template <class Real>
__device__ __forceinline__ void gather_frame(const Real* src, const unsigned int* from, const unsigned int* to,
                                             unsigned long long count, float* frame) {
  const unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (i < count) kernels::gather_sample(src, from, to, i, frame);
}

}  // namespace hw::cuda
