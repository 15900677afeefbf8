// The arguments of the CG kernels (kernels/cuda/diffusion_cg.cuh), passed by value: plain
// C++ that the host (tissue/cuda/engine.cpp) and NVRTC read the same way.
#pragma once

namespace hw::cuda {

template <class Real>
struct CgArgs {
  const Real* x;         // apply: y = coef·L x + w∘x (w null: x)
  Real* y;
  Real coef;
  const Real* w;         // Φ's diagonal on tissue (phase field), or null
  unsigned long long n;  // stored cells (element-wise kernels)
  Real* xv;              // the solution
  Real* r;
  Real* z;
  Real* p;
  const Real* q;
  const Real* b;
  const Real* inv_diag;  // 1 / diag(Φ − θ·a·L)
  Real alpha, beta;
  double* sums;          // the reductions of the kernel (zeroed by the host before it)
};

}  // namespace hw::cuda
