// The CUDA back end: device functions for one model, compiled at run time by NVRTC.
//
// Why: on the GPU a tissue kernel calls the cell step inline so a cell's state stays in
// registers for the whole step (seed 000 Opt 2a); so the printer emits
// `__device__ __forceinline__` functions, with the integrators unrolled per state (gates
// known at print time), not a kernel per model. A tiny `extern "C" __global__` demo kernel
// steps N independent cells (SoA) so that compiling the source exercises the whole path.
//
// Printed functions, all prefixed with function_prefix (sanitised), real = float|double:
//   <prefix>_constants(const real* p, real* c)
//   <prefix>_rhs(real t, const real* y, const real* p, const real* c, real* dydt)
//   <prefix>_rhs_jac(real t, const real* y, const real* p, const real* c, real* dydt, real* jdiag)
//   <prefix>_step_{fe,rk2,rk4,rl1,rl2,sbe}(real t, real dt, real* y, const real* p, const real* c)
//   <prefix>_step(int method, ...)   method = static_cast<int>(hw::cell::Integrator)
//   extern "C" __global__ <prefix>_demo_step(int n, int steps, int method, real t, real dt,
//                                            real* y /*SoA, n per state*/, const real* p)
// plus constexpr ints <prefix>_n_states, _n_params, _n_constants. The steps call
// runtime/integrators.hpp's step_cell, the very header the cpu kernels use: NVRTC compiles
// it from the copy embedded in heartwave (device/embedded.hpp), so there is no second copy
// of the integrators.
#pragma once

#include <string>

#include "model/ir/model.hpp"

namespace hw::model {

struct CudaOptions {
  bool use_float = true;
  std::string function_prefix = "hw_model";
  bool fast_intrinsics = false;  // float only: __expf, __logf, ... (less accurate)
  // __forceinline__ on every device function (what a tissue kernel wants). Off, they are
  // __noinline__: each is compiled once instead of once per call site, which is what a
  // compile-only check needs (O'Hara-Rudy inlined into all six steps takes NVRTC minutes).
  bool force_inline = true;
  // The demo kernel at the end (extern "C" <prefix>_demo_step). A tissue kernel leaves it
  // out: it calls every integrator, so with force_inline it multiplies the compile time.
  bool demo_kernel = true;
  // Lookup tables of functions of V, made from this very model (their nodes are its
  // pool's): model/passes/tabulate.hpp. nullptr prints the exact maths.
  const struct Tabulation* tables = nullptr;
  // The single-stage steps (fe, rl1, grl1) printed state by state (fused_step.hpp): fewer
  // values live at once, so fewer registers and spills. Measured on an H200 (populations of
  // 10^5 cells, GRL1, docs/benchmarks.md): Iyer 2004 double 2.9x faster, float 1.37x;
  // O'Hara-Rudy double 1.24x; Grandi 2010 double 1.06x; none slower. A tissue kernel keeps it
  // in double only (tissue_kernel_printer.cpp): in float it ran 0.6-4.5 % slower there.
  bool fused_steps = true;
};

// Throws hw::Error when the model is not analysed (see printer_common.hpp).
std::string print_cuda(const Model& m, const CudaOptions& opt = {});

}  // namespace hw::model
