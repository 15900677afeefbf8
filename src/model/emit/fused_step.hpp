// The single-stage steps (fe, rl1, grl1) printed state by state.
//
// Why: runtime/integrators.hpp's step_once evaluates rhs_jac for every state into f[] and
// J[], then updates every state. Printed models inline both, so at the updates every f_i and
// J_i is live beside every old y_i and every algebraic still to be read: three values a
// state at least. A large model in double needs more than the 255 registers a GPU thread
// can have and spills to local memory (O'Hara-Rudy 2011's population kernel: 1,440 B of
// stack; Grandi 2010's: 568 B). Printed state by state — the algebraics a state's f_i and
// J_i read, where first needed; then f_i, J_i and at once the state's new value — each f_i
// and J_i dies at its update, and a gate's own rates die with it. A linear block (Markov
// chain) is factored and solved where its last entry is known, not after every state.
//
// Guarantees: the expressions are rhs_jac's, printed by the same printer, and the updates
// are integrators.hpp's (its expm1_over and finite_or_zero). Only the order of independent
// statements differs from step_once's, and every statement reads the old state (the new
// values go to y at the end), so the result is step_once's up to the compiler's choice of
// where to fuse a multiply and an add. The interpreter (the reference engine) keeps
// step_once's loops: tests compare the two (GeneratedModel, StiffSet, Models/CudaCell).
#pragma once

#include <string>

#include "model/emit/printer_common.hpp"

namespace hw::model {

// The members kFusedSteps, fe_fused, rl1_fused and grl1_fused of the integrators' model
// concept, each (Real t, Real dt, Real* y, const Real* p, const Real* c) const. `qualifier`
// precedes each function ("__device__ __forceinline__ " or "[[gnu::always_inline]] "),
// `indent` each line.
std::string print_fused_steps(const Model& m, const CodeLayout& l, const TargetProfile& prof,
                              const VarNamer& names, const std::string& qualifier,
                              const std::string& indent);

}  // namespace hw::model
