// The C++ back end: one translation unit per model, for the CPU.
//
// Why: interpreting the IR costs a dispatch per node; printing the model as straight-line
// C++ lets the compiler inline it into the integrators of runtime/integrators.hpp and
// vectorise the loop over cells of a structure-of-arrays batch (DESIGN.md §3).
//
// What the printed unit holds (everything in an anonymous namespace except the factory):
//   - template <class Real> struct Model: the cell model concept of runtime/integrators.hpp
//     (constexpr sizes, is_gate, constants() = once-per-cell algebraics, rhs() and
//     rhs_jac() as straight-line code, algebraics());
//   - a batch loop per integrator with `#pragma omp simd` over cells and the model inlined;
//   - a CellKernel subclass and `extern "C" hw::cell::CellKernel* <prefix>_make_kernel()`.
// It needs only the header-only runtime/integrators.hpp and runtime/cell_kernel.hpp, so a
// shared library built from it links against nothing of heartwave.
#pragma once

#include <cstdint>
#include <string>

#include "model/ir/model.hpp"

namespace hw::model {

struct CppOptions {
  std::string symbol_prefix = "hw_model";  // sanitised; names the extern "C" factory
  bool standalone_kernel_factory = true;   // print the CellKernel subclass and factory
  // Which integrators (bit i: hw::cell::Integrator(i)) and precisions the kernel is built
  // for; the others throw hw::Error when asked for. A run-time compile of a large model
  // for every integrator in both precisions takes minutes, one or two of them seconds.
  std::uint32_t integrators = ~0u;
  bool single_precision = true, double_precision = true;
  // Lookup tables of functions of V, made from this very model (their nodes are its
  // pool's): model/passes/tabulate.hpp. nullptr prints the exact maths.
  const struct Tabulation* tables = nullptr;
  // In float, the approximations of the GPU's fast intrinsics (cell_maths.hpp, "fast").
  bool fast_intrinsics = false;
  // The single-stage steps printed state by state (fused_step.hpp), as the GPU's populations
  // use them. Off by default: on the CPU they ran slower (tt06-3d, one thread, vectorised over
  // cells: 5-11 %; a Grandi 2010 cell with GRL1: 14 %). The tests turn it on to check the
  // printed steps against the interpreter without a GPU (test_fused_step.cpp).
  bool fused_steps = false;
  bool all() const { return integrators == ~0u && single_precision && double_precision; }
};

// Throws hw::Error when the model is not analysed (see printer_common.hpp).
std::string print_cpp(const Model& m, const CppOptions& opt = {});

// The name of the factory print_cpp defines for these options.
std::string cpp_factory_symbol(const CppOptions& opt);

}  // namespace hw::model
