// The live view's frame (tissue/sinks.hpp, FrameSink): a downsampled picture of one field
// gathered where the field lives, so a frame moves a few thousand floats to the host
// instead of the whole field. Sample i of a source array goes to slot to[i] of the frame.
// No standard headers, so NVRTC compiles it as it is.
#pragma once

#include "kernels/diffusion_k.hpp"  // HW_HD

namespace hw::kernels {

// frame[to[i]] = src[from[i]] (the field in the engine's precision, the frame in float).
template <class Real>
HW_HD inline void gather_sample(const Real* src, const unsigned int* from, const unsigned int* to, unsigned long long i,
                                float* frame) {
  frame[to[i]] = float(src[from[i]]);
}

}  // namespace hw::kernels
