// The IR interpreter: the oracle every generated backend is tested against.
//
// Why: printed C++ and CUDA are fast but only as right as the printers; this evaluates
// the analysed Model directly, with the same operation semantics as the passes
// (model/passes/eval.hpp), so a disagreement points at a printer.
//
// How: the Model is compiled once into three straight-line register programs (one slot
// per distinct DAG node): constants (the once_per_cell algebraics), rhs (every-step
// algebraics then derivatives) and rhs_jac (rhs plus the Jacobian diagonals). Evaluation
// is templated on Real, so the float path really computes in float. step() is
// hw::cell::step_batch over the same integrator templates as the generated code.
#pragma once

#include <memory>

#include "runtime/cell_kernel.hpp"
#include "model/ir/model.hpp"

namespace hw::model {

// `analysed` must have been through run_pipeline (dependency order, classification and
// m.analysis filled); throws hw::Error otherwise. The kernel keeps its own copy of what it
// needs, so the Model may be destroyed afterwards.
std::unique_ptr<hw::cell::CellKernel> make_interpreter(const Model& analysed);

// The value of one expression at one point (double). alg may be null: algebraics are then
// computed on demand from their definitions.
double evaluate(const Model& m, ExprId e, double t, const double* y, const double* p,
                const double* alg = nullptr);

}  // namespace hw::model
