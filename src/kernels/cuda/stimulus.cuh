// The stimulus kernel: one thread per cell of a stimulus's list lays its increment into the
// part's stimulus field (kernels/stimulus_k.hpp). Launched once per stimulus on, in order,
// when the set of stimuli on changes: no two threads of a launch touch one cell, and
// overlapping stimuli add in the order the cpu engine adds them.
#pragma once

#include "kernels/stimulus_k.hpp"

namespace hw::cuda {

template <class Real>
__device__ __forceinline__ void lay_stimulus(Real* field, const unsigned int* cells, unsigned long long count, Real dv) {
  const unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (i < count) kernels::lay_stimulus(field, cells, i, dv);
}

}  // namespace hw::cuda
