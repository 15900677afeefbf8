// Flush-to-zero and denormals-are-zero for the calling thread, for the life of the guard.
//
// Why: ahead of a wave front, diffusion spreads exponentially small values of V and of the
// states into resting tissue; in float they reach the subnormal range (< 1.2e-38), where
// every x86 operation on them takes a microcode assist about a hundred times slower than
// normal. The cpu backend's Karma 3D benchmark ran 2.7× slower for that alone
// (docs/benchmarks.md). Values that small mean nothing for a membrane potential, a gate or
// a concentration, so the cpu engine treats them as zero (as GPUs do for float by default).
// The reference backend keeps IEEE behaviour: it is the oracle. The previous mode is
// restored on exit, so OpenMP's pooled threads leave the step as they entered it.
#pragma once

#if defined(__x86_64__) || defined(__SSE__)
#include <xmmintrin.h>
#endif

namespace hw::kernels::cpu {

class FlushDenormals {
 public:
  explicit FlushDenormals(bool on) {
#if defined(__x86_64__) || defined(__SSE__)
    if (!on) return;
    saved_ = _mm_getcsr();
    active_ = true;
    _mm_setcsr(saved_ | kFtz | kDaz);
#else
    (void)on;
#endif
  }
  ~FlushDenormals() {
#if defined(__x86_64__) || defined(__SSE__)
    if (active_) _mm_setcsr(saved_);
#endif
  }
  FlushDenormals(const FlushDenormals&) = delete;
  FlushDenormals& operator=(const FlushDenormals&) = delete;

 private:
  static constexpr unsigned kFtz = 0x8000;  // MXCSR bit 15: results that would be subnormal are 0
  static constexpr unsigned kDaz = 0x0040;  // MXCSR bit 6: subnormal inputs read as 0
  unsigned saved_ = 0;
  bool active_ = false;
};

}  // namespace hw::kernels::cpu
